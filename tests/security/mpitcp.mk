# tests/security/mpitcp.mk - (fragment of tests/security/Makefile.am; see there)
# libmpi's TCP netmod (mpi/tcp/, mpi/core/p2p.c) against a stranger on the network
# and against a rank of the job that breaks the protocol: t-mpitcp-intruder.sh runs
# mpitcp_victim (a checked message exchange) under attack by mpitcp_intruder.
check_PROGRAMS += mpitcp_victim mpitcp_intruder
mpitcp_victim_SOURCES = mpitcp_victim.c
mpitcp_victim_CPPFLAGS = -I$(top_srcdir)/mpi/include
mpitcp_victim_LDADD = $(top_builddir)/mpi/libmpi.la
mpitcp_victim_LDFLAGS = -no-install -Wl,-rpath,$(abs_top_builddir)/libpmi2/.libs
mpitcp_intruder_SOURCES = mpitcp_intruder.c
mpitcp_intruder_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/mpi/core
mpitcp_intruder_LDADD = $(top_builddir)/libpmi2/libpmi2.la
mpitcp_intruder_LDFLAGS = -no-install
TESTS += t-mpitcp-intruder.sh
EXTRA_DIST += t-mpitcp-intruder.sh
