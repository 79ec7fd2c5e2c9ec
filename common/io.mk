# common/io.mk - event loop, fd and logging helpers (owned by the launcher area), included by Makefile.am.
libloomcommon_la_SOURCES += loop.c loop.h fdio.c fdio.h log.c log.h
