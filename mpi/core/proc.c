/*
 * proc.c - the process table (contract in proc.h): world ranks first, then processes
 *          of other jobs added from their cards; grows every registered per-peer
 *          array with it.
 *
 * Lookup of another job's process is linear in the ids added so far: connections add
 * a group at a time and are rare next to messages, which never look here (they carry
 * the id).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proc.h"

#define HOOKS_MAX 8

int xm_nprocs;
static int cap, world;
static char world_job[XM_DYN_JOBID];
static struct xm_proc *tab; /* entries of ids >= world (tab[id - world]) */
static xm_proc_grow_fn hooks[HOOKS_MAX];
static int nhooks;

int xm_proc_init(const char *jobid, int world_size)
{
    if (world_size < 1 || world_size > XM_PROC_MAX)
        return -EINVAL;
    world = cap = xm_nprocs = world_size;
    size_t jl = strnlen(jobid, sizeof(world_job) - 1);
    memcpy(world_job, jobid, jl);
    world_job[jl] = 0;
    tab = NULL;
    nhooks = 0;
    return 0;
}

void xm_proc_finalize(void)
{
    free(tab);
    tab = NULL;
    xm_nprocs = cap = world = 0;
    nhooks = 0;
}

int xm_proc_capacity(void)
{
    return cap;
}

int xm_proc_on_grow(xm_proc_grow_fn fn)
{
    if (nhooks == HOOKS_MAX)
        return -ENOSPC;
    hooks[nhooks++] = fn;
    return 0;
}

const struct xm_proc *xm_proc_get(int id)
{
    static struct xm_proc w; /* a world rank's entry, made on demand */
    if (id < 0 || id >= xm_nprocs)
        return NULL;
    if (id >= world)
        return &tab[id - world];
    memset(&w, 0, sizeof(w));
    memcpy(w.jobid, world_job, sizeof(w.jobid));
    w.rank = id;
    return &w;
}

int xm_proc_find(const char *jobid, int rank)
{
    if (!jobid || rank < 0)
        return -1;
    if (strcmp(jobid, world_job) == 0)
        return rank < world ? rank : -1;
    for (int i = 0; i < xm_nprocs - world; i++)
        if (tab[i].rank == rank && strcmp(tab[i].jobid, jobid) == 0)
            return world + i;
    return -1;
}

int xm_proc_add(const struct xm_dyn_card *c)
{
    size_t jl = strnlen(c->jobid, sizeof(c->jobid));
    if (jl == 0 || jl == sizeof(c->jobid) || c->rank < 0 || c->addrs.naddr < 1 ||
        c->addrs.naddr > XM_DYN_ADDRS)
        return -EINVAL;
    int id = xm_proc_find(c->jobid, c->rank);
    if (id >= 0)
        return id;
    if (strcmp(c->jobid, world_job) == 0)
        return -EINVAL; /* a rank my own job does not have */
    if (xm_nprocs >= XM_PROC_MAX)
        return -ENOSPC;
    if (xm_nprocs == cap) {
        int ncap = cap < XM_PROC_MAX / 2 ? 2 * cap : XM_PROC_MAX;
        if (ncap - world < 16)
            ncap = world + 16;
        if (ncap > XM_PROC_MAX)
            ncap = XM_PROC_MAX;
        struct xm_proc *nt = realloc(tab, (size_t)(ncap - world) * sizeof(*nt));
        if (!nt)
            return -ENOMEM;
        tab = nt;
        /* hooks that grew keep their larger arrays if a later one fails: growing is
         * idempotent, the next attempt starts from the same cap */
        for (int h = 0; h < nhooks; h++)
            if (hooks[h](cap, ncap) < 0)
                return -ENOMEM;
        cap = ncap;
    }
    struct xm_proc *p = &tab[xm_nprocs - world];
    memset(p, 0, sizeof(*p));
    memcpy(p->jobid, c->jobid, jl);
    p->rank = c->rank;
    p->addrs = c->addrs;
    return xm_nprocs++;
}

int xm_proc_set_secret(int id, const uint8_t secret[XM_DYN_SECRET], int port_tag)
{
    if (id < world || id >= xm_nprocs)
        return -EINVAL;
    struct xm_proc *p = &tab[id - world];
    if (!p->has_secret) {
        memcpy(p->secret, secret, XM_DYN_SECRET);
        p->has_secret = 1;
        p->port_tag = port_tag;
    }
    return 0;
}

int xm_proc_cmp(int a, int b)
{
    const struct xm_proc *pa = xm_proc_get(a);
    char ja[XM_DYN_JOBID];
    int ra = pa ? pa->rank : -1;
    memcpy(ja, pa ? pa->jobid : "", pa ? sizeof(ja) : 1);
    const struct xm_proc *pb = xm_proc_get(b); /* may reuse the world entry's storage */
    int c = strcmp(ja, pb ? pb->jobid : "");
    if (c)
        return c;
    int rb = pb ? pb->rank : -1;
    return ra < rb ? -1 : ra > rb;
}

/* ---- this process's ports (few: Open_port's table bounds them) ---- */
#define PORT_SECRETS 1024
static struct {
    int tag;
    uint8_t secret[XM_DYN_SECRET];
} port_sec[PORT_SECRETS];

int xm_proc_port_add(int tag, const uint8_t secret[XM_DYN_SECRET])
{
    for (int i = 0; i < PORT_SECRETS; i++)
        if (!port_sec[i].tag) {
            port_sec[i].tag = tag;
            memcpy(port_sec[i].secret, secret, XM_DYN_SECRET);
            return 0;
        }
    return -ENOSPC;
}

void xm_proc_port_del(int tag)
{
    for (int i = 0; i < PORT_SECRETS; i++)
        if (port_sec[i].tag == tag && tag) {
            memset(&port_sec[i], 0, sizeof(port_sec[i]));
            return;
        }
}

int xm_proc_port_secret(int tag, uint8_t out[XM_DYN_SECRET])
{
    for (int i = 0; tag && i < PORT_SECRETS; i++)
        if (port_sec[i].tag == tag) {
            memcpy(out, port_sec[i].secret, XM_DYN_SECRET);
            return 0;
        }
    return -ENOENT;
}
