# tests/unit/clients.mk - unit tests (included by Makefile.am).
# The client libraries against a scripted fake server (clients_fake.c), the
# PMI_process_mapping parser, and the ABI comparison with Debian's Slurm
# libpmi2 (abi-libpmi2.sh, which needs the abi_* helper programs below).
CLIENTS_FAKE = clients_fake.c clients_fake.h

check_PROGRAMS += check_libpmi2 check_libpmi
TESTS += check_libpmi2 check_libpmi

check_libpmi2_SOURCES = check_libpmi2.c $(CLIENTS_FAKE)
check_libpmi2_LDADD = $(top_builddir)/libpmi2/libpmi2.la $(CHECK_LIBS) -lpthread

check_libpmi_SOURCES = check_libpmi.c $(CLIENTS_FAKE)
check_libpmi_LDADD = $(top_builddir)/libpmi2/libpmi.la \
	$(top_builddir)/libpmi2/libpmicli.la $(top_builddir)/common/libloomcommon.la \
	$(CHECK_LIBS) -lpthread

# The same wire tests run against Slurm's own libpmi2, to prove that the
# bytes they expect are Slurm's (behaviour we deliberately change is skipped).
if HAVE_SLURM_LIBPMI2
check_PROGRAMS += check_slurm_libpmi2
TESTS += check_slurm_libpmi2
check_slurm_libpmi2_SOURCES = check_libpmi2.c $(CLIENTS_FAKE)
check_slurm_libpmi2_CPPFLAGS = -DAGAINST_SLURM_LIB
check_slurm_libpmi2_LDADD = -lpmi2 $(CHECK_LIBS) -lpthread
endif

# ABI: the same source built against Slurm's header and ours prints every
# constant and struct layout; the script compares them and the symbol sets.
check_PROGRAMS += abi_pmi2_ours
abi_pmi2_ours_SOURCES = abi_pmi2.c
abi_pmi2_ours_LDADD = $(top_builddir)/libpmi2/libpmi2.la
if HAVE_SLURM_LIBPMI2
check_PROGRAMS += abi_pmi2_slurmhdr
abi_pmi2_slurmhdr_SOURCES = abi_pmi2.c
abi_pmi2_slurmhdr_CPPFLAGS = -DABI_SLURM_HEADER
abi_pmi2_slurmhdr_LDADD = $(top_builddir)/libpmi2/libpmi2.la
endif
TESTS += abi-libpmi2.sh
EXTRA_DIST += abi-libpmi2.sh
AM_TESTS_ENVIRONMENT += CLIENTS_LIBDIR='$(abs_top_builddir)/libpmi2/.libs'; \
	CLIENTS_INCDIR='$(abs_top_srcdir)/include'; CLIENTS_CC='$(CC)'; \
	export CLIENTS_LIBDIR CLIENTS_INCDIR CLIENTS_CC;

# Our clients against the real server core, one forked process per rank.
check_PROGRAMS += check_clients_core
TESTS += check_clients_core
check_clients_core_SOURCES = check_clients_core.c
check_clients_core_LDADD = $(top_builddir)/libpmi2/libpmi2.la \
	$(top_builddir)/libpmi2/libpmi.la $(top_builddir)/pmiserv/libpmiserv.la \
	$(top_builddir)/libpmi2/libpmicli.la $(top_builddir)/common/libloomcommon.la \
	$(CHECK_LIBS)
