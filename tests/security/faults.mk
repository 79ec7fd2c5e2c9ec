# tests/security/faults.mk - (fragment of tests/security/Makefile.am; see there)
# Fault injection: an LD_PRELOAD shim (faults_preload.so: the Nth allocation fails,
# short or EAGAIN writes and reads, EMFILE from accept, munged's socket redirected) and
# sweeps through the PMI server core's host (mpiexec), libpmi2 and treenet; each run must
# end with success or a clear error, never a crash or a hang.  Helpers in faults_lib.sh.
check_LTLIBRARIES = faults_preload.la
faults_preload_la_SOURCES = faults_preload.c
faults_preload_la_CFLAGS = $(WARN_CFLAGS)
faults_preload_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
faults_preload_la_LIBADD =
check_PROGRAMS += faults_run faults_treenet
faults_run_SOURCES = faults_run.c
faults_run_LDADD =
faults_treenet_SOURCES = faults_treenet.c
faults_treenet_LDADD = $(top_builddir)/treenet/libtreenet.la \
	$(top_builddir)/common/libloomcommon.la $(MUNGE_LIBS) -lpthread
TESTS += t-faults-alloc-server.sh t-faults-alloc-treenet.sh t-faults-io.sh t-faults-munge.sh
EXTRA_DIST += faults_lib.sh t-faults-alloc-server.sh t-faults-alloc-treenet.sh \
	t-faults-io.sh t-faults-munge.sh
