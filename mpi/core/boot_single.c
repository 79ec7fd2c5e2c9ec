/*
 * boot_single.c - boot.c's interface for a process with no process manager
 * (boot_pmi.h): rank 0 of 1, its own puts kept in a small table so that its gets of
 * them work as in a job.
 *
 * Owns: the singleton's key table (at most SINGLE_MAX keys; libmpi puts about five).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boot_pmi.h"

#define SINGLE_MAX 64

static struct {
    char *key, *val;
} kv[SINGLE_MAX];
static int nkv;

static int single_init(struct xm_pmi_job *job, char *why, size_t len)
{
    (void)why;
    (void)len;
    memset(job, 0, sizeof(*job));
    job->size = job->universe = 1;
    job->appnum = -1;
    snprintf(job->jobid, sizeof(job->jobid), "singleton-%ld", (long)getpid());
    return 0;
}

static int single_node_map(int size, int *node_of)
{
    for (int r = 0; r < size; r++)
        node_of[r] = 0;
    return 0;
}

static int single_put(const char *key, const char *val)
{
    for (int i = 0; i < nkv; i++)
        if (strcmp(kv[i].key, key) == 0) {
            char *v = strdup(val);
            if (!v)
                return -ENOMEM;
            free(kv[i].val);
            kv[i].val = v;
            return 0;
        }
    if (nkv == SINGLE_MAX)
        return -ENOSPC;
    kv[nkv].key = strdup(key);
    kv[nkv].val = strdup(val);
    if (!kv[nkv].key || !kv[nkv].val) {
        free(kv[nkv].key);
        free(kv[nkv].val);
        return -ENOMEM;
    }
    nkv++;
    return 0;
}

static int single_fence(void)
{
    return 0;
}

static int single_get(int rank, const char *key, char *buf, int len)
{
    for (int i = 0; rank == 0 && i < nkv; i++)
        if (strcmp(kv[i].key, key) == 0) {
            if ((int)strlen(kv[i].val) >= len)
                return -ENOENT;
            strcpy(buf, kv[i].val);
            return 0;
        }
    return -ENOENT;
}

static int single_finalize(void)
{
    for (int i = 0; i < nkv; i++) {
        free(kv[i].key);
        free(kv[i].val);
    }
    nkv = 0;
    return 0;
}

static __attribute__((noreturn)) void single_abort(int code, const char *msg)
{
    (void)msg; /* the caller printed it */
    _exit(code ? code : 1);
}

const struct xm_pmi xm_pmi_single = {
    .name = "none (singleton)",
    .init = single_init,
    .node_map = single_node_map,
    .put = single_put,
    .fence = single_fence,
    .get = single_get,
    .finalize = single_finalize,
    .abort = single_abort,
};
