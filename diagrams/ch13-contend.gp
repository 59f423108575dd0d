# ch13-contend.gp - page faults on 1, 2 and 4 vCPUs at once, in real
# time (make contend CH=13): per fault, over the same loop on the kernel
# without a controller, the median of the runs with the lowest and
# highest as a bar beside it; the kit and 6.1's memcg, with every vCPU in one
# container and with each in a sibling container of its own.  The
# numbers are in ch13-contend.dat (that file says how they were
# measured); the columns: cpus, then median, lowest and highest for
# kit/one, kit/siblings, memcg/one, memcg/siblings, then none's ns.
#
# book/book.mk renders it with gnuplot to build/book/diagrams/ch13-contend.svg
# (the output file is set on gnuplot's command line).
set terminal svg size 640,360 font "DejaVu Sans,11" background rgb "white"
set xlabel "vCPUs faulting at once"
set ylabel "time per fault / no controller"
set xrange [0.5:4.5]
set xtics ("1" 1, "2" 2, "4" 4) nomirror
set yrange [0.2:2.8]
set ytics 0.2
set grid ytics lc rgb "#dddddd"
set key top left samplen 1.5 maxrows 2 font ",10"
# The spread as vectors and the medians as lines, with no point marks:
# the PDF's SVG renderer cannot draw gnuplot's points (see ch13-cost.gp).
plot "diagrams/ch13-contend.dat" using 1:2 with lines lw 2 lc rgb "#1f5f9f" title "the kit, one container", \
     "" using ($1 - 0.12):3:(0):($4 - $3) with vectors nohead lw 2 lc rgb "#1f5f9f" notitle, \
     "" using 1:5 with lines lw 2 dt 2 lc rgb "#1f5f9f" title "the kit, siblings", \
     "" using ($1 - 0.04):6:(0):($7 - $6) with vectors nohead lw 2 dt 2 lc rgb "#1f5f9f" notitle, \
     "" using 1:8 with lines lw 2 lc rgb "#4f8f3a" title "6.1's memcg, one container", \
     "" using ($1 + 0.04):9:(0):($10 - $9) with vectors nohead lw 2 lc rgb "#4f8f3a" notitle, \
     "" using 1:11 with lines lw 2 dt 2 lc rgb "#4f8f3a" title "6.1's memcg, siblings", \
     "" using ($1 + 0.12):12:(0):($13 - $12) with vectors nohead lw 2 dt 2 lc rgb "#4f8f3a" notitle
