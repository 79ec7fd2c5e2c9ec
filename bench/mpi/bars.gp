# bench/mpi/bars.gp - clustered bar charts of the side-by-side MPI benches (lib.sh's
# bench_plot): one panel per table file, all in one PNG.
# Usage: gnuplot -e "out='X.png'; suptitle='...'; layout='2x2'; panels='a.tsv b.tsv'" bars.gp
# A panel file: comment lines "# title: ...", "# ylabel: ...", "# log: y" (optional),
# then a header row (quoted column names), then one row per cluster: label value...
# ("?" = not measured; labels without spaces: the first data row gives the column count).
if (!exists("layout")) layout = '1x1'
if (!exists("suptitle")) suptitle = ''
nr = int(word(system("echo ".layout." | tr x ' '"), 1))
nc = int(word(system("echo ".layout." | tr x ' '"), 2))
set terminal pngcairo size 700*nc,480*nr font ",10"
set output out
set termoption noenhanced
set datafile missing "?"
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set grid ytics
set key top left font ",9"
set offsets 0, 0, graph 0.3, 0   # room above the bars for the key
set xtics rotate by -25 font ",9"
set multiplot layout nr,nc title suptitle
do for [i=1:words(panels)] {
    f = word(panels, i)
    set title system("sed -n 's/^# title: //p' ".f)
    set ylabel system("sed -n 's/^# ylabel: //p' ".f)
    set autoscale y
    if (system("sed -n 's/^# log: //p' ".f) eq "y") {
        set logscale y
        # bars grow from the bottom of the axis: start it a decade under the smallest value
        ymin = real(system("awk '!/^#/ { for (i = 2; i <= NF; i++) if ($i + 0 > 0 && (m == 0 || $i + 0 < m)) m = $i + 0 } END { print m + 0 }' ".f))
        if (ymin > 0) { set yrange [10**(floor(log10(ymin)) - 1):*] }
    } else {
        unset logscale y
        set yrange [0:*]
    }
    ncol = int(system("awk '!/^#/ { n++ } n == 2 { print NF; exit }' ".f))
    plot for [c=2:ncol] f u c:xtic(1) t columnheader(c)
}
unset multiplot
