# tests/unit/wire.mk - unit tests of the common/ codec and its CPU helpers (included by Makefile.am).
check_PROGRAMS += check_pmi_wire check_pack check_ktree check_cpus check_mac
TESTS += check_pmi_wire check_pack check_ktree check_cpus check_mac

check_pmi_wire_SOURCES = check_pmi_wire.c
check_pmi_wire_CPPFLAGS = $(AM_CPPFLAGS) -DWIRE_FIXTURES='"$(srcdir)/fixtures"'
check_pmi_wire_LDADD = $(top_builddir)/common/libloomcommon.la $(CHECK_LIBS)
check_pack_SOURCES = check_pack.c
check_pack_LDADD = $(top_builddir)/common/libloomcommon.la $(CHECK_LIBS)
check_ktree_SOURCES = check_ktree.c
check_ktree_LDADD = $(top_builddir)/common/libloomcommon.la $(CHECK_LIBS)
check_cpus_SOURCES = check_cpus.c
check_cpus_LDADD = $(top_builddir)/common/libloomcommon.la $(CHECK_LIBS)
EXTRA_DIST += fixtures
check_mac_SOURCES = check_mac.c
check_mac_LDADD = $(top_builddir)/common/libloomcommon.la $(CHECK_LIBS)
