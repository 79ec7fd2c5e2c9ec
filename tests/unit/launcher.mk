# tests/unit/launcher.mk - unit tests of this area (included by Makefile.am).
#   check_loop:  common/loop.c (timers, fd readiness, removal, stop, wake-up)
#   check_args:  launcher/args.c (mpiexec options, MPMD segments, errors)
#   check_iofwd: launcher/iofwd.c (whole-line output assembly, tags)
check_PROGRAMS += check_loop check_args check_iofwd
TESTS += check_loop check_args check_iofwd

check_loop_SOURCES = check_loop.c
check_loop_LDADD = $(top_builddir)/common/libloomcommon.la $(CHECK_LIBS)

check_args_SOURCES = check_args.c
check_args_LDADD = $(top_builddir)/launcher/libmpx.la $(CHECK_LIBS)

check_iofwd_SOURCES = check_iofwd.c
check_iofwd_LDADD = $(top_builddir)/launcher/libmpx.la $(CHECK_LIBS)
