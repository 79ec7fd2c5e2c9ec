# tests/unit/pmiserv.mk - unit tests of the server core (included by Makefile.am).
PMISERV_TEST_LIBS = $(top_builddir)/pmiserv/libpmiserv.la \
	$(top_builddir)/common/libloomcommon.la $(CHECK_LIBS)
check_PROGRAMS += check_proto_pmi1
TESTS += check_proto_pmi1

check_proto_pmi1_SOURCES = check_proto_pmi1.c fake_tree.c fake_tree.h
check_proto_pmi1_CPPFLAGS = $(AM_CPPFLAGS) -DWIRE_FIXTURES='"$(srcdir)/fixtures"'
check_proto_pmi1_LDADD = $(PMISERV_TEST_LIBS)
check_PROGRAMS += check_proto_pmi2
TESTS += check_proto_pmi2
check_proto_pmi2_SOURCES = check_proto_pmi2.c fake_tree.c fake_tree.h
check_proto_pmi2_CPPFLAGS = $(AM_CPPFLAGS) -DWIRE_FIXTURES='"$(srcdir)/fixtures"'
check_proto_pmi2_LDADD = $(PMISERV_TEST_LIBS)
check_PROGRAMS += check_fence
TESTS += check_fence
check_fence_SOURCES = check_fence.c fake_tree.c fake_tree.h
check_fence_LDADD = $(PMISERV_TEST_LIBS)
check_PROGRAMS += check_kvs
TESTS += check_kvs
check_kvs_SOURCES = check_kvs.c
check_kvs_LDADD = $(PMISERV_TEST_LIBS)
check_PROGRAMS += check_procmap
TESTS += check_procmap
check_procmap_SOURCES = check_procmap.c fake_tree.c fake_tree.h
check_procmap_LDADD = $(PMISERV_TEST_LIBS)
check_PROGRAMS += check_blob
TESTS += check_blob
check_blob_SOURCES = check_blob.c fake_tree.c fake_tree.h
check_blob_LDADD = $(PMISERV_TEST_LIBS)
check_PROGRAMS += check_quotas
TESTS += check_quotas
check_quotas_SOURCES = check_quotas.c fake_tree.c fake_tree.h
check_quotas_LDADD = $(PMISERV_TEST_LIBS)
check_PROGRAMS += check_kvsdemand
TESTS += check_kvsdemand
check_kvsdemand_SOURCES = check_kvsdemand.c fake_tree.c fake_tree.h
check_kvsdemand_LDADD = $(PMISERV_TEST_LIBS)
