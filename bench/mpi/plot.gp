# bench/mpi/plot.gp - the figure of bench/mpi/run.sh: base_bench.png from base_{lat,bw,coll,hello}.tsv
# Usage (in the results directory): gnuplot -e "base='mpi'" plot.gp
# Columns of every .tsv: label loom mpich ompi ompi-yield ("?" = not measured);
# base_big.tsv: bytes, then Loom / best peer for each large collective at 8 ranks.
# big_only=1 (run.sh -j): only the large-collectives panel
if (!exists("base")) base = 'mpi'
if (!exists("big_only")) big_only = 0
set datafile missing "?"
set key top left
set grid
if (big_only) {
    set terminal pngcairo size 900,600 font ",10"
    set output base.'_bench.png'
    set title "Large collectives, 8 ranks on 2 cores: Loom / best peer (< 1: Loom faster)"
    set style data linespoints
    set logscale xy 2
    set xlabel "bytes (whole vector)"
    set ylabel "Loom time / best peer's time"
    set xtics ("4K" 4096, "16K" 16384, "64K" 65536, "256K" 262144, "1M" 1048576)
    plot base.'_big.tsv' u 1:2 lw 2 t 'Allreduce', '' u 1:3 lw 2 t 'Reduce_scatter_block' noenhanced, \
         '' u 1:4 lw 2 t 'Allgather', '' u 1:5 lw 2 t 'Reduce', '' u 1:6 lw 2 t 'Bcast', \
         1 w l lc rgb 'black' dt 2 t 'parity'
    exit
}
set terminal pngcairo size 1400,1500 font ",10"
set output base.'_bench.png'
set multiplot layout 3,2 title "Loom MPI vs MPICH 4.0.2 vs Open MPI 4.1.4, one node, 2 cores (medians)"

set title "Ping-pong latency, 2 ranks (0 B plotted at 1 B)"
set logscale xy
set xlabel "message size (bytes)"
set ylabel "µs (half round trip)"
plot base.'_lat.tsv' u 1:2 w lp lw 2 t 'Loom', '' u 1:3 w lp t 'MPICH', '' u 1:4 w lp t 'Open MPI'

set title "Streaming bandwidth, 2 ranks"
set logscale x
unset logscale y
set ylabel "MB/s"
set yrange [0:*]
plot base.'_bw.tsv' u 1:2 w lp lw 2 t 'Loom', '' u 1:3 w lp t 'MPICH', '' u 1:4 w lp t 'Open MPI'
set autoscale y

set title "Collectives (µs per call; /N = ranks, 8 and 64 oversubscribed)"
unset logscale
set logscale y
set xlabel ""
set ylabel "µs (log)"
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set xtics rotate by -30
plot base.'_coll.tsv' u 2:xtic(1) t 'Loom', '' u 3 t 'MPICH', '' u 4 t 'Open MPI', \
     '' u 5 t 'OMPI yield'

set title "Launch to exit of hello (init + allreduce + finalize)"
set ylabel "seconds"
unset logscale y
set yrange [0:*]
plot base.'_hello.tsv' u 2:xtic(1) t 'Loom', '' u 3 t 'MPICH', '' u 4 t 'Open MPI'

set title "Large collectives, 8 ranks on 2 cores: Loom / best peer (< 1: Loom faster)"
set style data linespoints
set xtics norotate
set logscale xy 2
set xlabel "bytes (whole vector)"
set ylabel "Loom time / best peer's time"
set xtics ("4K" 4096, "16K" 16384, "64K" 65536, "256K" 262144, "1M" 1048576)
set autoscale y
plot base.'_big.tsv' u 1:2 lw 2 t 'Allreduce', '' u 1:3 lw 2 t 'Reduce_scatter_block' noenhanced, \
     '' u 1:4 lw 2 t 'Allgather', '' u 1:5 lw 2 t 'Reduce', '' u 1:6 lw 2 t 'Bcast', \
     1 w l lc rgb 'black' dt 2 t 'parity'
unset multiplot
