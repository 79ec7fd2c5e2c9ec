# bench/plot.gp - plot the results of bench/pmi_launch.sh.
# Usage: gnuplot -e "name='bench/results/loom-vs-hydra'" bench/plot.gp
# Reads NAME.{launch,fence,hello}.dat (columns: N, loom median/min/max/status,
# hydra median/min/max/status; NaN where a launcher failed) and writes NAME.png:
# three panels, medians with min-max error bars, log-scaled N.
if (!exists("name")) name = 'bench/results/loom-vs-hydra'
set terminal pngcairo size 1500,480 font ",10"
set output name.'.png'
set multiplot layout 1,3 title "Loom mpiexec vs mpiexec.hydra (medians, min-max bars)"
set logscale x 2
set grid
set key top left
set xlabel "ranks (N)"
set datafile missing "NaN"
set yrange [0:*]

set title "launch to exit: PMI-2 client (Slurm libpmi2)"
set ylabel "seconds"
plot name.'.launch.dat' using ($1*0.97):2:3:4 with yerrorlines title "loom" lw 2, \
     ''                 using ($1*1.03):6:7:8 with yerrorlines title "hydra" lw 2

set title "PMI2\\_KVS\\_Fence median (1000-B values, get all)"
set ylabel "milliseconds"
plot name.'.fence.dat' using ($1*0.97):2:3:4 with yerrorlines title "loom" lw 2, \
     ''                using ($1*1.03):6:7:8 with yerrorlines title "hydra" lw 2

set title "launch to exit: Debian MPICH hello"
set ylabel "seconds"
plot name.'.hello.dat' using ($1*0.97):2:3:4 with yerrorlines title "loom" lw 2, \
     ''                using ($1*1.03):6:7:8 with yerrorlines title "hydra" lw 2
unset multiplot
