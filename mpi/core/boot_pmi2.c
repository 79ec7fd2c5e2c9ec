/*
 * boot_pmi2.c - boot.c's PMI-2 interface (boot_pmi.h): libpmi2's API, which is Loom's
 * libpmi2 (PMI_FD/PMI_PORT: Loom's plugin and mpiexec, Slurm's mpi/pmi2, Hydra) or,
 * with `configure --with-pmi=slurm`, Slurm's own.
 *
 * Owns: every PMI2_* call libmpi makes.
 * Notes:
 *   - The node map is the PMI_process_mapping job attribute, parsed by
 *     loom_pmap_parse() (common/pmap.c, compiled in as core/pmap.c); without it boot.c falls back to hostnames.
 *   - PMI2_KVS_Get reports a truncated value with a negative length: an error here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef LOOM_PMI_SLURM
#include <slurm/pmi2.h>
#else
#include "pmi2.h"
#endif

#include "boot.h"
#include "boot_pmi.h"
#include "../../common/pmap.h"

static char jobid[64];

static int pmi2_init(struct xm_pmi_job *job, char *why, size_t len)
{
    int spawned = 0, size = 0, rank = 0, appnum = 0;
    if (PMI2_Init(&spawned, &size, &rank, &appnum) != PMI2_SUCCESS) {
        snprintf(why, len, "PMI2_Init failed (the PMI server behind PMI_FD/PMI_PORT "
                           "refused or closed the connection)");
        return -EIO;
    }
    if (size < 1 || rank < 0 || rank >= size) {
        snprintf(why, len, "PMI2_Init gave rank %d of %d", rank, size);
        return -EPROTO;
    }
    job->rank = rank;
    job->size = size;
    job->appnum = appnum;
    job->spawned = spawned;
    job->universe = size;
    char us[32];
    int found = 0, u = 0;
    /* the process manager's universe size, where it gives one above the job */
    if (PMI2_Info_GetJobAttr("universeSize", us, sizeof(us), &found) == PMI2_SUCCESS &&
        found && sscanf(us, "%d", &u) == 1 && u > size)
        job->universe = u;
    if (PMI2_Job_GetId(job->jobid, sizeof(job->jobid)) != PMI2_SUCCESS)
        snprintf(job->jobid, sizeof(job->jobid), "nojob");
    job->jobid[sizeof(job->jobid) - 1] = 0;
    memcpy(jobid, job->jobid, sizeof(jobid));
    return 0;
}

static int pmi2_node_map(int size, int *node_of)
{
    char map[PMI2_MAX_VALLEN + 1];
    int found = 0;
    if (PMI2_Info_GetJobAttr("PMI_process_mapping", map, sizeof(map), &found) !=
            PMI2_SUCCESS ||
        !found)
        return -ENOENT;
    return loom_pmap_parse(map, size, node_of);
}

static int pmi2_put(const char *key, const char *val)
{
    return PMI2_KVS_Put(key, val) == PMI2_SUCCESS ? 0 : -EIO;
}

static int pmi2_fence(void)
{
    return PMI2_KVS_Fence() == PMI2_SUCCESS ? 0 : -EIO;
}

static int pmi2_get(int rank, const char *key, char *buf, int len)
{
    int got = 0;
    if (PMI2_KVS_Get(jobid, rank, key, buf, len, &got) != PMI2_SUCCESS || got < 0)
        return -ENOENT;
    return 0;
}

static int pmi2_finalize(void)
{
    return PMI2_Finalize() == PMI2_SUCCESS ? 0 : -EIO;
}

static __attribute__((noreturn)) void pmi2_abort(int code, const char *msg)
{
    PMI2_Abort(1, msg);
    _exit(code ? code : 1);
}

/* Name service (MPI_Publish_name &c.).  The PMI-2 answer does not say why a call
 * failed: a failed lookup or unpublish is taken as "no such name", a failed publish
 * as "taken". */
static int pmi2_publish(const char *service, const char *port)
{
    return PMI2_Nameserv_publish(service, NULL, port) == PMI2_SUCCESS ? 0 : -EEXIST;
}

static int pmi2_lookup(const char *service, char *port, int len)
{
    if (PMI2_Nameserv_lookup(service, NULL, port, len) != PMI2_SUCCESS)
        return -ENOENT;
    return strnlen(port, (size_t)len) < (size_t)len ? 0 : -EPROTO;
}

static int pmi2_unpublish(const char *service)
{
    return PMI2_Nameserv_unpublish(service, NULL) == PMI2_SUCCESS ? 0 : -ENOENT;
}

/* ---- MPI_Comm_spawn: PMI2_Job_Spawn with MPICH's preput key ---- */
static int pmi2_spawn(int count, char *const *cmds, char **const *argv,
                      const int *maxprocs, const struct xm_spawn_keys *keys,
                      const char *port, int *errors)
{
    int *argcs = calloc((size_t)count, sizeof(int)), *ninfo = calloc((size_t)count, sizeof(int));
    MPID_Info *info = calloc((size_t)count * 3, sizeof(MPID_Info));
    const MPID_Info **infov = calloc((size_t)count, sizeof(*infov));
    int rc = argcs && ninfo && info && infov ? 0 : -ENOMEM;
    for (int i = 0; rc == 0 && i < count; i++) {
        while (argv && argv[i] && argv[i][argcs[i]])
            argcs[i]++;
        const struct xm_spawn_keys *k = keys ? &keys[i] : NULL;
        const char *kv[3][2] = {{"wdir", k ? k->wdir : NULL},
                                {"host", k ? k->host : NULL},
                                {"hostfile", k ? k->hostfile : NULL}};
        infov[i] = &info[3 * i];
        for (int j = 0; j < 3; j++)
            if (kv[j][1]) {
                info[3 * i + ninfo[i]].key = (char *)kv[j][0];
                info[3 * i + ninfo[i]].value = (char *)kv[j][1];
                ninfo[i]++;
            }
    }
    MPID_Info pp = {.key = (char *)"PARENT_ROOT_PORT_NAME", .value = (char *)port};
    const MPID_Info *ppv[1] = {&pp};
    char newjob[64];
    if (rc == 0 && PMI2_Job_Spawn(count, (const char **)cmds, argcs, (const char ***)argv,
                                  maxprocs, ninfo, infov, 1, ppv, newjob, sizeof(newjob),
                                  errors) != PMI2_SUCCESS)
        rc = -EIO;
    free(argcs);
    free(ninfo);
    free(info);
    free(infov);
    return rc;
}

static int pmi2_parent_port(char *buf, int len)
{
    int got = 0;
    if (PMI2_KVS_Get(jobid, PMI2_ID_NULL, "PARENT_ROOT_PORT_NAME", buf, len, &got) !=
            PMI2_SUCCESS ||
        got <= 0 || got >= len)
        return -ENOENT;
    buf[got] = 0;
    return 0;
}

const struct xm_pmi xm_pmi_pmi2 = {
    .name = "PMI-2",
    .init = pmi2_init,
    .node_map = pmi2_node_map,
    .put = pmi2_put,
    .fence = pmi2_fence,
    .get = pmi2_get,
    .finalize = pmi2_finalize,
    .abort = pmi2_abort,
    .publish = pmi2_publish,
    .lookup = pmi2_lookup,
    .unpublish = pmi2_unpublish,
    .spawn = pmi2_spawn,
    .parent_port = pmi2_parent_port,
};
