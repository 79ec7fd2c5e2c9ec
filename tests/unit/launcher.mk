# tests/unit/launcher.mk - unit tests (included by Makefile.am).
#   check_loop:  common/loop.c (timers, fd readiness, removal, stop, wake-up)
#   check_fdio:  common/fdio.c (full read/write, flags, errors)
#   check_child: common/child.c (exec errors reported, fds passed, signals reset, groups)
#   check_log:   common/log.c (levels, sinks, truncation)
#   check_args:  launcher/args.c (mpiexec options, MPMD segments, errors)
#   check_iofwd: launcher/iofwd.c (whole-line output assembly, tags)
#   check_hosts: launcher/hosts.c (-hosts, host files, rank placement), conn.c frames
#   check_jobctl: launcher/jobctl.c and env.c (exit rule, signal self-pipe, job-end rules,
#                 rank environment)
#   check_stream: common/stream.c (the framed stream of treenet and mpiexec's proxies:
#                 partial frames, size limits, queue bound, partial writes, EOF mid-frame)
check_PROGRAMS += check_loop check_fdio check_log check_args check_iofwd check_hosts \
	check_jobctl check_stream check_child
TESTS += check_loop check_fdio check_log check_args check_iofwd check_hosts check_jobctl \
	check_stream check_child

check_loop_SOURCES = check_loop.c
check_loop_LDADD = $(top_builddir)/common/libloomcommon.la $(CHECK_LIBS)

check_fdio_SOURCES = check_fdio.c
check_fdio_LDADD = $(top_builddir)/common/libloomcommon.la $(CHECK_LIBS)

check_child_SOURCES = check_child.c
check_child_LDADD = $(top_builddir)/common/libloomcommon.la $(CHECK_LIBS)

check_log_SOURCES = check_log.c
check_log_LDADD = $(top_builddir)/common/libloomcommon.la $(CHECK_LIBS)

check_args_SOURCES = check_args.c
check_args_LDADD = $(top_builddir)/launcher/libmpx.la $(top_builddir)/common/libloomcommon.la \
	$(CHECK_LIBS)

check_iofwd_SOURCES = check_iofwd.c
check_iofwd_LDADD = $(top_builddir)/launcher/libmpx.la $(CHECK_LIBS)

check_hosts_SOURCES = check_hosts.c
check_hosts_LDADD = $(top_builddir)/launcher/libmpx.la \
	$(top_builddir)/common/libloomcommon.la $(CHECK_LIBS)

check_jobctl_SOURCES = check_jobctl.c
check_jobctl_LDADD = $(top_builddir)/launcher/libmpx.la \
	$(top_builddir)/common/libloomcommon.la $(CHECK_LIBS)

check_stream_SOURCES = check_stream.c
check_stream_LDADD = $(top_builddir)/common/libloomcommon.la $(CHECK_LIBS)
