# tests/unit/pmixsrv.mk - unit tests of the PMIx server's configuration (included by
# Makefile.am).  pmixjob.c has no libpmix inside: it is built here against the
# test's own pmixsrv_create, in every build, with or without libpmix.
check_PROGRAMS += check_pmixjob
TESTS += check_pmixjob
check_pmixjob_SOURCES = check_pmixjob.c $(top_srcdir)/pmixsrv/pmixjob.c
check_pmixjob_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/pmixsrv
check_pmixjob_LDADD = $(top_builddir)/pmiserv/libpmiserv.la \
	$(top_builddir)/common/libloomcommon.la $(CHECK_LIBS)
