# plot.gp - latency and bandwidth against size from report.py's TSV files.
# Usage: gnuplot -e "base='tcp'; paths='loopback netns'" plot.gp  (in the results dir)
set terminal pngcairo size 1200,900 font ",10"
set output base.".png"
set logscale x 2
set xtics ("1" 1, "8" 8, "1K" 1024, "64K" 65536, "256K" 262144, "1M" 1048576, "4M" 4194304)
set key top left
set grid
if (!exists("paths")) paths = "loopback netns"
np = words(paths)
set multiplot layout np,2 title "TCP: Loom vs MPICH vs Open MPI vs polling floor"
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
}
unset multiplot
