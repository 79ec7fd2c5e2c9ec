# common/io.mk - event loop, fd and logging helpers, included by Makefile.am.
# flow.c: per-client output caps with backpressure, shared by mpiexec and the plugin's agent.
libloomcommon_la_SOURCES += loop.c loop.h fdio.c fdio.h log.c log.h flow.c flow.h
