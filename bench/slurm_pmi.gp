# bench/slurm_pmi.gp - plot the results of bench/slurm_pmi.sh.
# Usage: gnuplot -e "name='bench/results/slurm_pmi'; rel='26.05.3'" bench/slurm_pmi.gp
# (rel, optional: the Slurm release, named in the title)
# Reads NAME.METRIC.VARIANT.NODES.dat (columns: N, median, min, max, runs, status; NaN
# where a variant failed or was not run) and writes NAME.png: four panels (fence at
# rank 0, fence of the last rank in, launch to exit, MPI hello), medians with min-max
# error bars, log-scaled N.
if (!exists("name")) name = 'bench/results/slurm_pmi'
set terminal pngcairo size 2000,500 font ",10"
set output name.'.png'
if (!exists("rel")) rel = ''
set multiplot layout 1,4 title "srun --mpi=loom vs Slurm".(rel eq '' ? '' : ' '.rel)."'s --mpi=pmi2 (medians, min-max bars)"
set logscale x 2
set grid
set key top left
set xlabel "ranks (N)"
set datafile missing "NaN"

set title "PMI2\\_KVS\\_Fence median (Slurm libpmi2, 1 KiB, get all)"
set ylabel "milliseconds"
set logscale y
plot name.'.fence.loom.1.dat' using ($1*0.96):2:3:4 with yerrorlines title "loom, 1 node" lw 2, \
     name.'.fence.pmi2.1.dat' using ($1*0.98):2:3:4 with yerrorlines title "pmi2, 1 node" lw 2, \
     name.'.fence.loom.4.dat' using ($1*1.02):2:3:4 with yerrorlines title "loom, 4 nodes" lw 2 dt 2, \
     name.'.fence.pmi2.4.dat' using ($1*1.04):2:3:4 with yerrorlines title "pmi2, 4 nodes" lw 2 dt 2

set title "fence, last rank in (the server's latency)"
plot name.'.fencelast.loom.1.dat' using ($1*0.96):2:3:4 with yerrorlines title "loom, 1 node" lw 2, \
     name.'.fencelast.pmi2.1.dat' using ($1*0.98):2:3:4 with yerrorlines title "pmi2, 1 node" lw 2, \
     name.'.fencelast.loom.4.dat' using ($1*1.02):2:3:4 with yerrorlines title "loom, 4 nodes" lw 2 dt 2, \
     name.'.fencelast.pmi2.4.dat' using ($1*1.04):2:3:4 with yerrorlines title "pmi2, 4 nodes" lw 2 dt 2
unset logscale y

set title "launch to exit: pmi2\\_kvstest\\_slurm -r 1"
set ylabel "seconds"
set yrange [0:*]
plot name.'.launch.floor.1.dat' using ($1*0.94):2:3:4 with yerrorlines title "floor (none, /bin/true), 1 node" lw 2, \
     name.'.launch.loom.1.dat' using ($1*0.96):2:3:4 with yerrorlines title "loom, 1 node" lw 2, \
     name.'.launch.pmi2.1.dat' using ($1*0.98):2:3:4 with yerrorlines title "pmi2, 1 node" lw 2, \
     name.'.launch.floor.4.dat' using ($1*1.02):2:3:4 with yerrorlines title "floor, 4 nodes" lw 2 dt 2, \
     name.'.launch.loom.4.dat' using ($1*1.04):2:3:4 with yerrorlines title "loom, 4 nodes" lw 2 dt 2, \
     name.'.launch.pmi2.4.dat' using ($1*1.06):2:3:4 with yerrorlines title "pmi2, 4 nodes" lw 2 dt 2

set title "launch to exit: MPI hello, 4 nodes"
plot name.'.hello.mpich-loom.4.dat' using ($1*0.97):2:3:4 with yerrorlines title "MPICH, loom" lw 2, \
     name.'.hello.mpich-pmi2.4.dat' using ($1*1.00):2:3:4 with yerrorlines title "MPICH, pmi2" lw 2, \
     name.'.hello.ompi-pmix.4.dat' using ($1*1.03):2:3:4 with yerrorlines title "Open MPI, pmix" lw 2
unset multiplot
