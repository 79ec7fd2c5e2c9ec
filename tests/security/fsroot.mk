# tests/security/fsroot.mk - (fragment of tests/security/Makefile.am; see there)
# Files and directories that root (the stepd's plugin), mpiexec and libmpi
# create, against a hostile local user: common/safefs directly (the removal
# race included), pmixsrv's directory through the real server, libmpi's
# shared segment.  Run as root (skipped otherwise); the second uid is 65534.
check_PROGRAMS += fsroot_safefs
TESTS += fsroot_safefs
fsroot_safefs_SOURCES = fsroot_safefs.c
fsroot_safefs_LDADD = $(top_builddir)/common/libloomcommon.la
