# ch13-cost.gp - what a page fault costs on each chapter's kernel, over
# the same fault on a kernel without a controller: the kit in a child
# container (bars) and 8 levels down (a red mark, from chapter 12 on;
# vectors, not points: the PDF's SVG renderer cannot draw points), 6.1's
# memcg in a child container (a line), and chapter 13's goal (a dashed
# line).  The numbers are in ch13-cost.dat (that file says how they were
# measured); the two below come from the same runs of the cost lab:
none = 3464.0	# make cost CH=13 FLAVOR=none, "root"
memcg = 4454.0	# make cost CH=13 FLAVOR=memcg, "container"
#
# book/book.mk renders it with gnuplot to build/book/diagrams/ch13-cost.svg
# (the output file is set on gnuplot's command line).
set terminal svg size 640,360 font "DejaVu Sans,11" background rgb "white"
set style fill solid 0.85 border rgb "#4a4a4a"
set boxwidth 0.6
set xlabel "chapter"
set ylabel "instructions per fault / no controller"
set xrange [1.5:13.5]
set xtics 2,1,13 nomirror
set yrange [0.9:1.5]
set ytics 0.1
set grid ytics lc rgb "#dddddd"
set key top left samplen 1.5
plot "diagrams/ch13-cost.dat" using 1:($2 / none) with boxes lc rgb "#1f5f9f" title "the kit, child container", \
     "" using ($1 - 0.3):($1 >= 12 ? $3 / none : 1/0):(0.6):(0) with vectors nohead lw 3 lc rgb "#b03030" title "the kit, 8 levels down", \
     memcg / none with lines lw 2 lc rgb "#4f8f3a" title "6.1's memcg", \
     1.10 with lines lw 1.5 dt 2 lc rgb "#4a4a4a" title "chapter 13's goal"
