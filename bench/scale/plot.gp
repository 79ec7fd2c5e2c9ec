# bench/scale/plot.gp - plot the emulated cluster's results (bench/scale/run.sh, medians
# written by bench/scale/model.py --dat).
# Usage: gnuplot -e "dat='bench/results/scale.dat'; out='bench/results/scale.png'" bench/scale/plot.gp
# Columns of the .dat: N width mode runs fence0_ms fence1k_ms cpu0_ms cpu1k_ms rss_kb
# hwm_kb busy1k_B startup_ms rdv_ms cpu_rdv_ms cpu_start_ms.  Three panels: the fence's
# wall time (the whole job's round on 2 shared cores), one node server's CPU per fence,
# one node server's memory; per tree width 2 (mpiexec) and 16 (the plugin), per KVS mode.
if (!exists("dat")) dat = 'bench/results/scale.dat'
if (!exists("out")) out = 'bench/results/scale.png'
set terminal pngcairo size 1500,480 font ",10"
set output out
set multiplot layout 1,3 title "Emulated cluster: N node servers x 4 ranks on one 2-core machine (medians)"
set logscale xy
set grid
set key top left
set xlabel "node servers (N)"
set datafile missing "NaN"
sel(w, m, col) = (column(2) == w && strcol(3) eq m) ? column(col) : 1/0

set title "fence, the job's round (wall, slowest node)"
set ylabel "milliseconds"
plot dat using 1:(sel(2, 'full', 5)) with linespoints lw 2 title "0 B, full, width 2", \
     dat using 1:(sel(16, 'full', 5)) with linespoints lw 2 title "0 B, full, width 16", \
     dat using 1:(sel(2, 'full', 6)) with linespoints lw 2 dt 2 title "1 KiB, full, width 2", \
     dat using 1:(sel(16, 'full', 6)) with linespoints lw 2 dt 2 title "1 KiB, full, width 16", \
     dat using 1:(sel(2, 'ondemand', 5)) with linespoints lw 2 dt 3 title "0 B, on demand, width 2", \
     dat using 1:(sel(2, 'ondemand', 6)) with linespoints lw 2 dt 4 title "1 KiB, on demand, width 2"

set title "CPU of one node server per fence (median node)"
set ylabel "milliseconds"
plot dat using 1:(sel(2, 'full', 7)) with linespoints lw 2 title "0 B, full, width 2", \
     dat using 1:(sel(16, 'full', 7)) with linespoints lw 2 title "0 B, full, width 16", \
     dat using 1:(sel(2, 'full', 8)) with linespoints lw 2 dt 2 title "1 KiB, full, width 2", \
     dat using 1:(sel(16, 'full', 8)) with linespoints lw 2 dt 2 title "1 KiB, full, width 16", \
     dat using 1:(sel(2, 'ondemand', 8)) with linespoints lw 2 dt 4 title "1 KiB, on demand, width 2"

# full mode ran the 1 KiB phase only where it fit in memory (column 6 not NaN)
big(w, m, col) = (valid(6) && column(2) == w && strcol(3) eq m) ? column(col) : 1/0
small(w, m, col) = (!valid(6) && column(2) == w && strcol(3) eq m) ? column(col) : 1/0
set title "memory of the largest node server (peak, VmHWM)"
set ylabel "KiB"
plot dat using 1:(big(2, 'full', 10)) with linespoints lw 2 title "full, 1 KiB rounds, width 2", \
     dat using 1:(big(16, 'full', 10)) with linespoints lw 2 title "full, 1 KiB rounds, width 16", \
     dat using 1:(small(2, 'full', 10)) with linespoints lw 2 dt 2 title "full, 0 B rounds only, width 2", \
     dat using 1:(small(16, 'full', 10)) with linespoints lw 2 dt 2 title "full, 0 B rounds only, width 16", \
     dat using 1:(sel(2, 'ondemand', 10)) with linespoints lw 2 dt 4 title "on demand, 1 KiB rounds, width 2"
unset multiplot
