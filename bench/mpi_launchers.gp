# bench/mpi_launchers.gp - plot the results of bench/mpi_launchers.sh.
# Usage: gnuplot -e "name='bench/results/mpi-launchers'; panels='1 4'" bench/mpi_launchers.gp
# Reads NAME.hello.VARIANT.NODES.dat (columns: N, median, min, max, runs, status; NaN
# where a variant failed or was not run) and writes NAME.png: one panel per node count
# in panels (default "1 4"), launch to exit of the five variants and the two plugins'
# floors (srun of /bin/true), medians with min-max error bars, log-scaled N.
if (!exists("name")) name = 'bench/results/mpi-launchers'
if (!exists("panels")) panels = '1 4'
set terminal pngcairo size (words(panels) > 1 ? 1400 : 760),520 font ",10"
set output name.'.png'
set multiplot layout 1,words(panels) title "Loom's MPI under each launcher path: launch to exit (medians, min-max bars)"
set logscale x 2
set xtics (2, 4, 8, 16, 32, 64)
set xrange [1.6:85]
set grid
set key top left
set xlabel "ranks (N)"
set ylabel "seconds"
set logscale y
set yrange [*:*]
set datafile missing "NaN"

do for [nodes in panels] {
    set title nodes." node".(nodes eq "1" ? "" : "s")
    plot name.'.hello.loom-pmix.'.nodes.'.dat' using ($1*0.94):2:3:4 with yerrorlines title "a: Loom MPI, --mpi=pmix" lw 2, \
         name.'.hello.loom-loom.'.nodes.'.dat' using ($1*0.97):2:3:4 with yerrorlines title "b: Loom MPI, --mpi=loom (PMI-2)" lw 2, \
         name.'.hello.ompi-pmix.'.nodes.'.dat' using ($1*1.00):2:3:4 with yerrorlines title "c: Open MPI, --mpi=pmix" lw 2, \
         name.'.hello.loom-pmix-direct.'.nodes.'.dat' using ($1*1.03):2:3:4 with yerrorlines title "d: a, LOOM\\_MPI\\_PMIX\\_COLLECT=0" lw 1 dt 2, \
         name.'.hello.loom-loom-pmix.'.nodes.'.dat' using ($1*1.06):2:3:4 with yerrorlines title "e: b, LOOM\\_MPI\\_PMI=pmix" lw 1 dt 2, \
         name.'.hello.floor-pmix.'.nodes.'.dat' using ($1*0.91):2:3:4 with yerrorlines title "floor: /bin/true, --mpi=pmix" lw 1 dt 3 lc rgb "gray40", \
         name.'.hello.floor-loom.'.nodes.'.dat' using ($1*1.09):2:3:4 with yerrorlines title "floor: /bin/true, --mpi=loom" lw 1 dt 3 lc rgb "gray70"
}
unset multiplot
