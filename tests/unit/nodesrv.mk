# tests/unit/nodesrv.mk - unit tests of the node server (included by Makefile.am).
check_PROGRAMS += check_nodesrv
TESTS += check_nodesrv
check_nodesrv_SOURCES = check_nodesrv.c
check_nodesrv_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/nodesrv
check_nodesrv_LDADD = $(top_builddir)/nodesrv/libnodesrv.la \
	$(top_builddir)/pmiserv/libpmiserv.la $(top_builddir)/common/libloomcommon.la \
	$(CHECK_LIBS)
