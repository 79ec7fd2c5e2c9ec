# tests/security/fsroot.mk - (fragment of tests/security/Makefile.am; see there)
# Files and directories that root (the stepd's plugin), mpiexec and libmpi
# create, against a hostile local user: common/safefs directly (the removal
# race included), pmixsrv's directory through the real server, libmpi's
# shared segment, and the plugin's directory under real srun --uid=65534
# (t-fsroot-slurm.sh, a private cluster).  Run as root (skipped otherwise);
# the second uid is 65534.
check_PROGRAMS += fsroot_safefs
TESTS += fsroot_safefs
fsroot_safefs_SOURCES = fsroot_safefs.c
fsroot_safefs_LDADD = $(top_builddir)/common/libloomcommon.la
TESTS += t-fsroot-pmixsrv.sh t-fsroot-mpiexec.sh t-fsroot-shm.sh t-fsroot-slurm.sh
EXTRA_DIST += fsroot_lib.sh t-fsroot-pmixsrv.sh t-fsroot-mpiexec.sh t-fsroot-shm.sh \
	t-fsroot-slurm.sh fsroot_pmixsrv.c fsroot_fixrand.c
# libmpi's shared segment (t-fsroot-shm.sh builds fsroot_fixrand.so itself)
check_PROGRAMS += fsroot_mpi
fsroot_mpi_SOURCES = fsroot_mpi.c
fsroot_mpi_CPPFLAGS = -I$(top_srcdir)/mpi/include
fsroot_mpi_LDADD = $(top_builddir)/mpi/libmpi.la
fsroot_mpi_LDFLAGS = -no-install -Wl,-rpath,$(abs_top_builddir)/libpmi2/.libs
# the real pmixsrv + libpmix, started as root for another uid as the plugin does
if HAVE_PMIX
check_PROGRAMS += fsroot_pmixsrv
fsroot_pmixsrv_SOURCES = fsroot_pmixsrv.c
fsroot_pmixsrv_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/pmixsrv $(PMIX_CFLAGS)
fsroot_pmixsrv_LDADD = $(top_builddir)/pmixsrv/libpmixsrv.la \
	$(top_builddir)/pmiserv/libpmiserv.la $(top_builddir)/common/libloomcommon.la \
	$(PMIX_LIBS) $(HWLOC_LIBS) -lpthread
endif
