/*
 * boot_launch.c - which process-manager interface to wire up through (see
 * boot_launch.h for the contract and the order).
 *
 * Notes:
 *   - Four tasks that each believe they are rank 0 of 1 compute the wrong thing four
 *     times and write the same files four times, so a process that sees it is one task
 *     of several and finds no server it can speak to refuses to start; a lone task (or
 *     LOOM_MPI_PMI=singleton) runs as a singleton.
 *   - SLURM_NTASKS alone is not a sign: a batch script of `sbatch -n 4` has it and may
 *     run a program directly.  srun gives every task SLURM_STEP_NUM_TASKS; SLURM_NTASKS
 *     counts only with SLURM_STEP_ID (or SLURM_STEPID) beside it.
 *   - The PMIx URI variables are those OpenPMIx 4's client reads (doc/mpi-launchers.md).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boot_launch.h"

static const char *const pmix_uri_vars[] = {
    "PMIX_SERVER_URI41", "PMIX_SERVER_URI4", "PMIX_SERVER_URI3",
    "PMIX_SERVER_URI21", "PMIX_SERVER_URI2", "PMIX_SERVER_URI",
};

const char *xm_launch_getenv(const char *name, void *ctx)
{
    (void)ctx;
    return getenv(name);
}

void xm_launch_escape(char *dst, size_t len, const char *s)
{
    size_t j = 0;
    if (len == 0)
        return;
    for (size_t i = 0; s && s[i] && j + 1 < len; i++) {
        if (i == 48) {
            for (int k = 0; k < 3 && j + 1 < len; k++)
                dst[j++] = '.';
            break;
        }
        unsigned char c = (unsigned char)s[i];
        dst[j++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    dst[j] = 0;
}

/* A strictly decimal value in 1..INT_MAX, else 0. */
static int env_count(xm_getenv_fn get, void *ctx, const char *name)
{
    const char *s = get(name, ctx);
    if (!s || *s < '0' || *s > '9')
        return 0;
    long v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return 0;
        v = v * 10 + (*s - '0');
        if (v > INT_MAX)
            return 0;
    }
    return (int)v;
}

/* `(NAME=value)`-style escaped copy of a variable, or "?" when unset. */
static void env_esc(xm_getenv_fn get, void *ctx, const char *name, char *dst, size_t len)
{
    const char *s = get(name, ctx);
    xm_launch_escape(dst, len, s ? s : "?");
}

static const char *pmix_uri(xm_getenv_fn get, void *ctx)
{
    for (size_t i = 0; i < sizeof(pmix_uri_vars) / sizeof(pmix_uri_vars[0]); i++) {
        const char *v = get(pmix_uri_vars[i], ctx);
        if (v && *v)
            return pmix_uri_vars[i];
    }
    return NULL;
}

static int have(xm_getenv_fn get, void *ctx, const char *name)
{
    const char *v = get(name, ctx);
    return v && *v;
}

static const char singleton_hint[] = "or set LOOM_MPI_PMI=singleton to run every task alone";

/* A multi-task launch with no server: the refusal message, 1; else 0. */
static int refuse_multi(xm_getenv_fn get, void *ctx, struct xm_launch *out)
{
    char a[64], b[64];
    int n = env_count(get, ctx, "SLURM_STEP_NUM_TASKS");
    const char *nvar = "SLURM_STEP_NUM_TASKS";
    if (n <= 1 && (have(get, ctx, "SLURM_STEP_ID") || have(get, ctx, "SLURM_STEPID"))) {
        n = env_count(get, ctx, "SLURM_NTASKS");
        nvar = "SLURM_NTASKS";
    }
    if (n > 1) {
        env_esc(get, ctx, "SLURM_PROCID", a, sizeof(a));
        const char *mt = get("SLURM_MPI_TYPE", ctx);
        xm_launch_escape(b, sizeof(b), mt ? mt : "");
        snprintf(out->why, sizeof(out->why),
                 "MPI_Init: task %s of a Slurm step of %d tasks (%s=%d%s%s) found no PMI "
                 "server to wire up with and would run alone as rank 0 of 1; launch it "
                 "with srun --mpi=loom (or --mpi=pmi2 or --mpi=pmix), %s",
                 a, n, nvar, n, mt ? ", SLURM_MPI_TYPE=" : "", mt ? b : "",
                 singleton_hint);
        return 1;
    }
    if ((n = env_count(get, ctx, "OMPI_COMM_WORLD_SIZE")) > 1) {
        env_esc(get, ctx, "OMPI_COMM_WORLD_RANK", a, sizeof(a));
        snprintf(out->why, sizeof(out->why),
                 "MPI_Init: process %s of %d started by Open MPI's mpirun "
                 "(OMPI_COMM_WORLD_SIZE=%d) found no PMIx server to wire up with (no "
                 "PMIX_SERVER_URI* in its environment) and would run alone as rank 0 of "
                 "1; start it with an mpirun that serves PMIx (Open MPI 2 or later, "
                 "prterun) or with srun --mpi=pmix, %s",
                 a, n, n, singleton_hint);
        return 1;
    }
    if ((n = env_count(get, ctx, "PMI_SIZE")) > 1) {
        env_esc(get, ctx, "PMI_RANK", a, sizeof(a));
        snprintf(out->why, sizeof(out->why),
                 "MPI_Init: process %s of %d of a PMI launch (PMI_SIZE=%d) has neither "
                 "PMI_FD nor PMI_PORT and would run alone as rank 0 of 1; start it with "
                 "mpiexec or srun --mpi=loom (or --mpi=pmi2), %s",
                 a, n, n, singleton_hint);
        return 1;
    }
    return 0;
}

void xm_launch_pmix_seen(xm_getenv_fn get, void *ctx, char *buf, size_t len)
{
    char ns[64], rk[64];
    const char *uri = pmix_uri(get, ctx);
    env_esc(get, ctx, "PMIX_NAMESPACE", ns, sizeof(ns));
    env_esc(get, ctx, "PMIX_RANK", rk, sizeof(rk));
    snprintf(buf, len, "PMIx launch (PMIX_NAMESPACE=%s, PMIX_RANK=%s, %s)", ns, rk,
             uri ? uri : "no PMIX_SERVER_URI*");
}

void xm_launch_detect(xm_getenv_fn get, void *ctx, struct xm_launch *out)
{
    const char *force = get("LOOM_MPI_PMI", ctx);
    int pmi2 = have(get, ctx, "PMI_FD") || have(get, ctx, "PMI_PORT");
    int pmix = have(get, ctx, "PMIX_NAMESPACE") || pmix_uri(get, ctx);

    memset(out, 0, sizeof(*out));
    if (force && *force && strcmp(force, "auto") != 0) {
        out->forced = 1;
        if (strcmp(force, "singleton") == 0) {
            out->kind = XM_LAUNCH_SINGLETON;
        } else if (strcmp(force, "pmi2") == 0) {
            out->kind = pmi2 ? XM_LAUNCH_PMI2 : XM_LAUNCH_REFUSE;
            if (!pmi2)
                snprintf(out->why, sizeof(out->why),
                         "MPI_Init: LOOM_MPI_PMI=pmi2 but neither PMI_FD nor PMI_PORT is "
                         "set: this process was not started by a PMI-2 launcher");
        } else if (strcmp(force, "pmix") == 0) {
            out->kind = pmix ? XM_LAUNCH_PMIX : XM_LAUNCH_REFUSE;
            if (pmix)
                xm_launch_pmix_seen(get, ctx, out->why, sizeof(out->why));
            else
                snprintf(out->why, sizeof(out->why),
                         "MPI_Init: LOOM_MPI_PMI=pmix but neither PMIX_NAMESPACE nor a "
                         "PMIX_SERVER_URI* variable is set: this process was not started "
                         "by a PMIx launcher");
        } else {
            char v[64];
            xm_launch_escape(v, sizeof(v), force);
            out->kind = XM_LAUNCH_REFUSE;
            snprintf(out->why, sizeof(out->why),
                     "MPI_Init: LOOM_MPI_PMI=%s: expected auto, pmi2, pmix or singleton", v);
        }
        return;
    }
    if (pmi2) {
        out->kind = XM_LAUNCH_PMI2;
    } else if (pmix) {
        out->kind = XM_LAUNCH_PMIX;
        xm_launch_pmix_seen(get, ctx, out->why, sizeof(out->why));
    } else if (refuse_multi(get, ctx, out)) {
        out->kind = XM_LAUNCH_REFUSE;
    } else {
        out->kind = XM_LAUNCH_SINGLETON;
    }
}
