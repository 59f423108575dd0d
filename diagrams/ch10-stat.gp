# ch10-stat.gp - what container a holds at each quiet point of lab 10:
# the five LRU lines of its memory.stat stacked, and its memory.usage as
# a red line across each bar, all in pages.  The numbers in ch10-stat.dat
# are the lab's own "# snap" lines from one run (that file says how to
# put your run's there).  The bars reach the red lines: after a drain,
# every page a container pays for is on exactly one of its LRU lines.
# (The usage is drawn with vectors, not points: the PDF's SVG renderer
# cannot draw gnuplot's point symbols.)
#
# book/book.mk renders it with gnuplot to build/book/diagrams/ch10-stat.svg
# (the output file is set on gnuplot's command line).
set terminal svg size 640,360 font "DejaVu Sans,11" background rgb "white"
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border rgb "#4a4a4a"
set boxwidth 0.7
set ylabel "pages charged to a"
set yrange [0:400]
set ytics 100
set grid ytics lc rgb "#dddddd"
set xtics rotate by -30 nomirror
set key outside top center horizontal maxrows 2 samplen 1.5 width 1
plot "diagrams/ch10-stat.dat" using 3:xtic(1) title "inactive\\_anon" lc rgb "#9ec3e6", \
     "" using 4 title "active\\_anon" lc rgb "#1f5f9f", \
     "" using 5 title "inactive\\_file" lc rgb "#c9e3b8", \
     "" using 6 title "active\\_file" lc rgb "#4f8f3a", \
     "" using 7 title "unevictable" lc rgb "#d9a441", \
     "" using ($0 - 0.42):2:(0.84):(0) with vectors nohead lw 3 lc rgb "#b03030" title "memory.usage"
