# tests/security/hosts.mk - (fragment of tests/security/Makefile.am; see there)
# The hosts of the PMI server core (mpiexec; the plugin's agent in slurmstepd)
# against a task that floods requests and never reads, and their logs.
check_PROGRAMS += hosts_flood
hosts_flood_SOURCES = hosts_flood.c
TESTS += t-hosts-flood.sh
EXTRA_DIST += t-hosts-flood.sh
TESTS += t-hosts-logesc.sh
EXTRA_DIST += t-hosts-logesc.sh
# under a private one-node Slurm cluster (skips without root, Slurm or the plugin)
TESTS += t-hosts-slurm.sh
EXTRA_DIST += t-hosts-slurm.sh
TESTS += t-hosts-proxyout.sh
EXTRA_DIST += t-hosts-proxyout.sh
