# bench/pmix.gp - plot the results of bench/pmix.sh.
# Usage: gnuplot -e "name='bench/results/pmix'; rel='26.05.3'" bench/pmix.gp
# (rel, optional: the Slurm release, named in the title)
# Reads NAME.METRIC.VARIANT.NODES.dat (columns: N, median, min, max, runs, status; NaN
# where a variant failed) and writes NAME.png: two panels (Open MPI hello launch to exit,
# PMIx fence with data), medians with min-max error bars, log-scaled N.
if (!exists("name")) name = 'bench/results/pmix'
set terminal pngcairo size 1200,500 font ",10"
set output name.'.png'
if (!exists("rel")) rel = ''
set multiplot layout 1,2 title "srun --mpi=loom (PMIx server mode) vs Slurm".(rel eq '' ? '' : ' '.rel)."'s --mpi=pmix (medians, min-max bars)"
set logscale x 2
set grid
set key top left
set xlabel "ranks (N)"
set datafile missing "NaN"

set title "launch to exit: Open MPI 4.1.4 hello"
set ylabel "seconds"
set yrange [0:*]
plot name.'.hello.loom.1.dat' using ($1*0.96):2:3:4 with yerrorlines title "loom, 1 node" lw 2, \
     name.'.hello.pmix.1.dat' using ($1*0.98):2:3:4 with yerrorlines title "pmix, 1 node" lw 2, \
     name.'.hello.loom.4.dat' using ($1*1.02):2:3:4 with yerrorlines title "loom, 4 nodes" lw 2 dt 2, \
     name.'.hello.pmix.4.dat' using ($1*1.04):2:3:4 with yerrorlines title "pmix, 4 nodes" lw 2 dt 2, \
     name.'.hello.pmix-yield.1.dat' using ($1*1.00):2:3:4 with yerrorlines title "pmix + yield by hand, 1 node" lw 1 dt 3, \
     name.'.hello.pmix-yield.4.dat' using ($1*1.06):2:3:4 with yerrorlines title "pmix + yield by hand, 4 nodes" lw 1 dt 4

set title "PMIx\\_Fence with data (1 KiB per rank), rank 0 median"
set ylabel "milliseconds"
set logscale y
set yrange [*:*]
plot name.'.fence.loom.1.dat' using ($1*0.96):2:3:4 with yerrorlines title "loom, 1 node" lw 2, \
     name.'.fence.pmix.1.dat' using ($1*0.98):2:3:4 with yerrorlines title "pmix, 1 node" lw 2, \
     name.'.fence.loom.4.dat' using ($1*1.02):2:3:4 with yerrorlines title "loom, 4 nodes" lw 2 dt 2, \
     name.'.fence.pmix.4.dat' using ($1*1.04):2:3:4 with yerrorlines title "pmix, 4 nodes" lw 2 dt 2
unset multiplot
