/*
 * util.c - the helpers every layer of libmpi may call (declared in xm.h): the fatal
 *          error exit, the LOOM_MPI_* tunables read from the environment, and an errno
 *          turned into an MPI error class.
 *
 * Owns: xm_die(), xm_env_int(), xm_errno_to_class().  They live here, below api/, so
 * that core/, coll/, dt/, shm/ and tcp/ never call up into api/ (tests/unit/layers.sh
 * checks that with nm).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "boot.h"
#include "xm.h"

void xm_die(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fprintf(stderr, "loom-mpi: rank %d: %s\n", xm_g.rank, msg);
    if (xm_g.initialized)
        xm_boot_abort(1, msg);
    _exit(1);
}

int xm_env_int(const char *name, int dflt)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return dflt;
    char *end;
    long v = strtol(s, &end, 0);
    return (*end || v < 0 || v > 1 << 30) ? dflt : (int)v;
}

int xm_errno_to_class(int e)
{
    switch (-e) {
    case 0:
        return MPI_SUCCESS;
    case ENOMEM:
        return MPI_ERR_NO_MEM;
    case EMSGSIZE:
        return MPI_ERR_TRUNCATE;
    case EINVAL:
        return MPI_ERR_ARG;
    case ENOSYS:
        return MPI_ERR_UNSUPPORTED_OPERATION;
    default:
        return MPI_ERR_OTHER;
    }
}
