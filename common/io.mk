# common/io.mk - event loop, fd and logging helpers (owned by the launcher area), included by Makefile.am.
