# tests/security/net.mk - (fragment of tests/security/Makefile.am; see there)
# The network listeners of the node servers before and after authentication,
# and the credentials they hand out (issue 18 items 5, 6, 8; doc/treenet.md):
#   t-net-crowd.sh     1 000 idle connections on the rendezvous and on mpiexec's
#                      port (-hosts, -launcher fork): the real peers get in
#   t-net-creds.sh     a fake tree parent / rendezvous keeps the credentials it
#                      is handed: another uid cannot decode them, a replay on
#                      another connection is refused
#   t-net-fakempx.sh   a fake mpiexec listener gets no cookie and its job frame
#                      is never run by the proxy
#   t-net-rdvrefuse.sh a forged credential at mpiexec's tree rendezvous: refused,
#                      named on mpiexec's stderr, the job passes
#   t-net-slurm-crowd.sh  1 000 idle connections on every stepd tree port of a
#                      4-node private Slurm cluster: srun -N4 still passes
check_PROGRAMS += net_tool
net_tool_SOURCES = net_tool.c
net_tool_LDADD = $(top_builddir)/treenet/libtreenet.la \
	$(top_builddir)/common/libloomcommon.la $(MUNGE_LIBS) -lpthread
TESTS += t-net-crowd.sh t-net-creds.sh t-net-fakempx.sh t-net-slurm-crowd.sh
EXTRA_DIST += t-net-crowd.sh t-net-creds.sh t-net-fakempx.sh t-net-slurm-crowd.sh
TESTS += t-net-rdvrefuse.sh
EXTRA_DIST += t-net-rdvrefuse.sh
