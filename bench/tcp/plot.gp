# plot.gp - latency and bandwidth against size from report.py's TSV files, and each MPI's
#           latency over the polling floor measured in the same job (pairlat).
# Usage: gnuplot -e "base='tcp'; paths='loopback netns'" plot.gp  (in the results dir)
set terminal pngcairo size 1650,900 font ",10"
set output base.".png"
set logscale x 2
set xtics ("1" 1, "8" 8, "1K" 1024, "64K" 65536, "256K" 262144, "1M" 1048576, "4M" 4194304)
set key top left
set grid
if (!exists("paths")) paths = "loopback netns"
np = words(paths)
set multiplot layout np,3 title "TCP: Loom vs MPICH vs Open MPI vs polling floor"
do for [path in paths] {
    f = base."_".path."_lat.tsv"
    set title path.": ping-pong latency (us, half round trip)"
    set logscale y
    set xlabel "bytes"
    plot f u ($1 > 0 ? $1 : 1):2 w lp t "floor", "" u ($1 > 0 ? $1 : 1):3 w lp t "Loom", \
         "" u ($1 > 0 ? $1 : 1):4 w lp t "MPICH", "" u ($1 > 0 ? $1 : 1):5 w lp t "Open MPI"
    unset logscale y
    f = base."_".path."_bw.tsv"
    set title path.": streaming bandwidth (MB/s)"
    plot f u 1:2 w lp t "floor", "" u 1:3 w lp t "Loom", "" u 1:4 w lp t "MPICH", \
         "" u 1:5 w lp t "Open MPI"
    f = base."_".path."_pair.tsv"
    set title path.": latency / polling floor in the same job (pairlat; 1 = floor)"
    unset logscale x
    set xtics autofreq
    set xlabel "message size"
    set style data histograms
    set style histogram clustered gap 1
    set style fill solid 0.7 border -1
    set yrange [0.9:1.7]
    set key top left horizontal
    if (system("test -s ".f." && echo y") eq "y") {
        plot f u 2:xtic(1) t "Loom", "" u 3 t "MPICH", "" u 4 t "Open MPI", \
             1.1 w l dt 2 lc rgb "black" t "floor + 10%"
    } else {
        set multiplot next
    }
    set style data points
    set yrange [*:*]
    set key top left vertical
    set logscale x 2
    set xtics ("1" 1, "8" 8, "1K" 1024, "64K" 65536, "256K" 262144, "1M" 1048576, "4M" 4194304)
}
unset multiplot
