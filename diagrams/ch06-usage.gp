# ch06-usage.gp - container a's usage while it reads a file eight times
# its limit (lab 6, first part), from the samples the lab prints on its
# "usage-series:" line.  The samples in ch06-usage.dat come from one run
# of make lab CH=6; to draw your own run's:
#
#   sed -n "s/^# usage-series: //p" build/logs/lab06-ch06/tap.log |
#       tr " " "\n" | grep . | cat -n >diagrams/ch06-usage.dat
#
# book/book.mk renders it with gnuplot to build/book/diagrams/ch06-usage.svg
# (the output file is set on gnuplot's command line).
set terminal svg size 640,300 font "DejaVu Sans,11" background rgb "white"
set xlabel "successive reads of a's memory.usage while a reads the file"
set ylabel "pages charged to a"
set yrange [0:320]
set ytics 64
set grid ytics lc rgb "#dddddd"
set key bottom right
plot "diagrams/ch06-usage.dat" using 1:2 with lines lw 2 lc rgb "#1f5f9f" \
	title "memory.usage of a (sampled)", \
     256 with lines dt 2 lw 2 lc rgb "#b03030" title "memory.limit of a (256)"
