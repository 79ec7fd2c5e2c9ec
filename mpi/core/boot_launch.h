/*
 * boot_launch.h - which process-manager interface to wire up through, read from what
 * the launcher left in the environment; and the refusal of a silent singleton.
 *
 * Owns: the decision between PMI-2, PMIx and a singleton, and every
 * message that names a launcher.  Pure: it reads variables through a callback and
 * writes no state, so the unit test and the fuzz target drive it with made-up
 * environments.
 *
 * Contract (mpi/README.md "Launchers" is the user's version):
 *   LOOM_MPI_PMI=pmi2|pmix|singleton forces a path; auto (the default, also unset or
 *   empty) picks, in this order:
 *     1. PMI_FD or PMI_PORT set                 -> PMI-2 (also PMI-1 servers that speak
 *        PMI-2's init: Loom, Slurm's pmi2, Hydra)
 *     2. PMIX_NAMESPACE or a PMIX_SERVER_URI*   -> PMIx
 *     3. a sign of a multi-task launch          -> refuse: SLURM_STEP_NUM_TASKS > 1 (or
 *        SLURM_NTASKS > 1 inside a step), OMPI_COMM_WORLD_SIZE > 1, PMI_SIZE > 1
 *     4. otherwise                              -> singleton (rank 0 of 1)
 *   For a refusal `why` holds the whole message (without the "loom-mpi: " prefix); for
 *   PMIx it holds the launch as seen (namespace and rank) for later failure messages.
 *   Values from the environment are quoted escaped and cut at 48 bytes.
 */
#ifndef XM_BOOT_LAUNCH_H
#define XM_BOOT_LAUNCH_H

#include <stddef.h>

enum xm_launch_kind { XM_LAUNCH_PMI2, XM_LAUNCH_PMIX, XM_LAUNCH_SINGLETON, XM_LAUNCH_REFUSE };

struct xm_launch {
    enum xm_launch_kind kind;
    int forced; /* chosen by LOOM_MPI_PMI, not detected */
    char why[640];
};

typedef const char *(*xm_getenv_fn)(const char *name, void *ctx);

/* Fills *out; never fails.  get(name, ctx) returns the value or NULL. */
void xm_launch_detect(xm_getenv_fn get, void *ctx, struct xm_launch *out);

/* "PMIx launch (PMIX_NAMESPACE=.., PMIX_RANK=.., <the URI variable>)", escaped: how
 * messages name a PMIx launch. */
void xm_launch_pmix_seen(xm_getenv_fn get, void *ctx, char *buf, size_t len);

/* The process environment, for xm_launch_detect(). */
const char *xm_launch_getenv(const char *name, void *ctx);

/* Copy at most 48 bytes of s into dst (size len), every byte outside printable
 * ASCII as '?', "..." when cut; dst is always terminated. */
void xm_launch_escape(char *dst, size_t len, const char *s);

#endif
