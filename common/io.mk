# common/io.mk - event loop, fd and logging helpers, included by Makefile.am.
# flow.c: per-client output caps with backpressure, shared by mpiexec and the plugin's agent.
# net.c: numeric addresses and the TCP listener setup, shared by treenet and mpiexec.
# stream.c: the framed non-blocking stream of treenet's links and mpiexec's proxy connections.
# child.c: fork/exec of a child program (signals, fds, process group, exec errors), shared
# by mpiexec (ranks, srun, proxies' launchers, spawned jobs) and the plugin's spawn server.
libloomcommon_la_SOURCES += loop.c loop.h fdio.c fdio.h log.c log.h flow.c flow.h net.c net.h \
	stream.c stream.h child.c child.h
