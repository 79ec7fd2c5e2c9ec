/*
 * boot.c - bootstrap: who am I, who is on my node, one fence (see boot.h for the
 * contract).
 *
 * Notes:
 *   - The process manager is reached through one of the interfaces of boot_pmi.h,
 *     picked by boot_launch.c from the launcher's environment: PMI-2 (boot_pmi2.c),
 *     PMIx (boot_pmix.c) or none (boot_single.c).  Everything above them (keys, the
 *     node view, machine counting) is written once here.
 *   - Keys are "xm-<key>-<rank>"; values at most XM_PMI_VALLEN bytes.
 *   - The node map comes from the interface (PMI_process_mapping, PMIx's node ids);
 *     when it has none every rank puts its hostname ("xm-host-<rank>") and after the
 *     fence reads all of them (O(size) gets per rank: a fallback only).
 *   - LOOM_MPI_FAKE_NODES=k (tests): every node is split into pretend nodes of k of its
 *     ranks, so one machine runs shm inside and the TCP netmod between pretend nodes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boot.h"
#include "boot_launch.h"
#include "boot_pmi.h"
#include "xm.h"

/* count_machine(): jobs of more nodes are taken as one node per machine */
#define MACH_MAX_NODES 64

static int need_host_fallback;
static const struct xm_pmi *pmi = &xm_pmi_single;
static int usable_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* This machine's boot id (the same in every network namespace and container of one
 * kernel), or a name no other rank has. */
static const char *machine_id(char *buf, size_t len)
{
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    int ok = f && fgets(buf, (int)len, f) && buf[0] != '\n';
    if (f)
        fclose(f);
    if (ok)
        buf[strcspn(buf, "\n")] = 0;
    else
        snprintf(buf, len, "rank-%d", xm_g.rank);
    return buf;
}

/* More ranks than CPUs: on my node (the union of its ranks' masks, once known), or
 * on my machine (the ranks of every node on it against its online CPUs). */
static void decide_oversubscribed(void)
{
    long on = sysconf(_SC_NPROCESSORS_ONLN);
    xm_g.oversubscribed =
        xm_g.nlocal > xm_g.node_cpus || (on > 0 && xm_g.machine_ranks > on);
}

/* The node's CPUs as far as this rank can tell alone: its affinity, or every online
 * CPU when it is bound narrower (a launcher's or Slurm's per-task binding, which
 * gives the other ranks CPUs of their own).  xm_boot_set_node_cpus() corrects it. */
static int node_cpus_guess(void)
{
    long on = sysconf(_SC_NPROCESSORS_ONLN);
    return on > xm_g.ncpus ? (int)on : xm_g.ncpus;
}

/* Node ids as the interface gave them (any values; PMIx's are its own) -> the
 * smallest rank of each node, which is below size as build_local_view() wants.
 * O(size * nodes). */
static int renumber_nodes(int size, int *node_of)
{
    int *ids = malloc((size_t)size * sizeof(int)), *first = malloc((size_t)size * sizeof(int));
    int n = 0;
    if (!ids || !first) {
        free(ids);
        free(first);
        return -ENOMEM;
    }
    for (int r = 0; r < size; r++) {
        int i = 0;
        while (i < n && ids[i] != node_of[r])
            i++;
        if (i == n) {
            ids[n] = node_of[r];
            first[n++] = r;
        }
        node_of[r] = first[i];
    }
    free(ids);
    free(first);
    return 0;
}

static int node_cap; /* entries of xm_g.node_of and xm_g.local_index */

int xm_boot_init(char *why, size_t len)
{
    struct xm_launch l;
    struct xm_pmi_job job;
    char err[512] = "";

    xm_launch_detect(xm_launch_getenv, NULL, &l);
    switch (l.kind) {
    case XM_LAUNCH_REFUSE:
        snprintf(why, len, "%s", l.why);
        return -EPERM;
    case XM_LAUNCH_PMI2:
        pmi = &xm_pmi_pmi2;
        break;
    case XM_LAUNCH_PMIX:
        pmi = &xm_pmi_pmix;
        break;
    case XM_LAUNCH_SINGLETON:
        pmi = &xm_pmi_single;
        break;
    }
    int rc = pmi->init(&job, err, sizeof(err));
    if (rc < 0) {
        if (l.kind == XM_LAUNCH_PMIX)
            snprintf(why, len,
                     "MPI_Init: %s, but PMIx is unusable: %s; start the program with a "
                     "launcher whose PMIx server it can reach (srun --mpi=pmix, Open MPI's "
                     "mpirun) or with srun --mpi=loom",
                     l.why, err);
        else
            snprintf(why, len, "MPI_Init: %s bootstrap failed: %s", pmi->name, err);
        return rc;
    }
    xm_g.rank = job.rank;
    xm_g.size = job.size;
    xm_g.appnum = job.appnum;
    xm_g.spawned = job.spawned;
    xm_g.universe = job.universe;
    /* MPI_UNIVERSE_SIZE: how many processes spawning may usefully reach in all;
     * LOOM_MPI_UNIVERSE_SIZE overrides the process manager's (at least the job size) */
    const char *ue = getenv("LOOM_MPI_UNIVERSE_SIZE"); /* (boot.c links alone in tests) */
    long usize = ue ? strtol(ue, NULL, 10) : 0;
    if (usize > 0 && usize <= (1L << 30))
        xm_g.universe = usize > job.size ? (int)usize : job.size;
    memcpy(xm_g.jobid, job.jobid, sizeof(xm_g.jobid));
    xm_g.jobid[sizeof(xm_g.jobid) - 1] = 0;
    if (gethostname(xm_g.host, sizeof(xm_g.host)) != 0)
        snprintf(xm_g.host, sizeof(xm_g.host), "localhost");
    xm_g.host[sizeof(xm_g.host) - 1] = 0;

    /* this process, for peers that read our memory with CMA: they take no pid from a
     * packet, only this one (p2p.c xm_peer_pid()) */
    if (job.size > 1) {
        char pid[24];
        snprintf(pid, sizeof(pid), "%ld", (long)getpid());
        if ((rc = xm_boot_put("pid", pid)) < 0) {
            snprintf(why, len, "MPI_Init: %s: putting this rank's pid failed", pmi->name);
            return rc;
        }
    }
    xm_g.node_of = calloc((size_t)job.size, sizeof(int));
    xm_g.local_index = calloc((size_t)job.size, sizeof(int));
    xm_g.local_ranks = calloc((size_t)job.size, sizeof(int));
    if (!xm_g.node_of || !xm_g.local_index || !xm_g.local_ranks) {
        snprintf(why, len, "MPI_Init: no memory for the node map of %d ranks", job.size);
        return -ENOMEM;
    }
    node_cap = job.size;
    if (pmi->node_map(job.size, xm_g.node_of) < 0 ||
        renumber_nodes(job.size, xm_g.node_of) < 0) {
        need_host_fallback = 1;
        if ((rc = xm_boot_put("host", xm_g.host)) < 0) {
            snprintf(why, len, "MPI_Init: %s: putting this rank's host name failed",
                     pmi->name);
            return rc;
        }
    }
    if (getenv("LOOM_MPI_DEBUG") && job.rank == 0)
        fprintf(stderr,
                "loom-mpi: rank 0 of %d: process manager interface %s, node map %s\n",
                job.size, pmi->name,
                need_host_fallback ? "from host names" : "from the process manager");
    return 0;
}

int xm_boot_proc_grow(int oldcap, int newcap)
{
    (void)oldcap;
    if (newcap <= node_cap)
        return 0;
    int *no = realloc(xm_g.node_of, (size_t)newcap * sizeof(int));
    if (!no)
        return -ENOMEM;
    xm_g.node_of = no;
    int *li = realloc(xm_g.local_index, (size_t)newcap * sizeof(int));
    if (!li)
        return -ENOMEM; /* node_of stays longer: harmless */
    xm_g.local_index = li;
    for (int id = node_cap; id < newcap; id++) {
        no[id] = id; /* world ranks' node numbers are below the world size */
        li[id] = -1;
    }
    node_cap = newcap;
    return 0;
}

static void build_local_view(void)
{
    /* testing switch: split every node into pretend nodes of k of its ranks (shm
     * inside, TCP between); a pretend node is named by its smallest rank */
    const char *fk =
        getenv("LOOM_MPI_FAKE_NODES"); /* not xm_env_int: boot.c links alone */
    int fake = fk ? atoi(fk) : 0;
    static int faked;
    if (fake > 0 && !faked) {
        int *idx = calloc((size_t)xm_g.size, sizeof(int)),
            *nid = idx ? calloc((size_t)xm_g.size, sizeof(int)) : NULL;
        if (nid) {
            for (int r = 0; r < xm_g.size; r++) {
                idx[r] = 0;
                nid[r] = r;
                for (int q = 0; q < r; q++)
                    if (xm_g.node_of[q] == xm_g.node_of[r])
                        idx[r]++;
                for (int q = 0; q < r; q++)
                    if (xm_g.node_of[q] == xm_g.node_of[r] &&
                        idx[q] / fake == idx[r] / fake) {
                        nid[r] = nid[q];
                        break;
                    }
            }
            memcpy(xm_g.node_of, nid, (size_t)xm_g.size * sizeof(int));
            faked = 1;
        }
        free(idx);
        free(nid);
    }
    int me = xm_g.node_of[xm_g.rank], n = 0;
    for (int r = 0; r < xm_g.size; r++) {
        xm_g.local_index[r] = -1;
        if (xm_g.node_of[r] == me) {
            if (r == xm_g.rank)
                xm_g.local_rank = n;
            xm_g.local_index[r] = n;
            xm_g.local_ranks[n++] = r;
        }
    }
    xm_g.nlocal = n;
    xm_g.ncpus = usable_cpus();
    xm_g.node_cpus = node_cpus_guess();
    xm_g.machine_ranks = n;
    decide_oversubscribed();
    /* node ids are below size (node indices, or a node's smallest rank) */
    int *per = calloc((size_t)xm_g.size, sizeof(int)), most = n;
    for (int r = 0; per && r < xm_g.size; r++) {
        int nd = xm_g.node_of[r];
        if (nd >= 0 && nd < xm_g.size && ++per[nd] > most)
            most = per[nd];
    }
    free(per);
    xm_g.any_oversubscribed = most > xm_g.node_cpus;
    /* every rank takes rank 0's answer (xm_boot_fence): CPU counts can differ
     * between nodes (Slurm's cgroups give a node the CPUs of its tasks) */
    static int told;
    if (xm_g.rank == 0 && !told)
        told = xm_boot_put("ovs", xm_g.any_oversubscribed ? "1" : "0") == 0;
    /* node leaders say which machine (kernel) they run on: nodes can share one
     * (network namespaces, several slurmd per host, LOOM_MPI_FAKE_NODES) */
    static int said;
    char id[64];
    if (xm_g.local_rank == 0 && n < xm_g.size && !said)
        said = xm_boot_put("mach", machine_id(id, sizeof(id))) == 0;
}

/* After the fence: ranks of other nodes on my machine (jobs of at most MACH_MAX_NODES
 * nodes: one get per node and rank) -> machine_ranks, oversubscribed. */
static void count_machine(void)
{
    int *per = xm_g.nlocal < xm_g.size ? calloc((size_t)xm_g.size, sizeof(int)) : NULL;
    int *lead = per ? malloc((size_t)xm_g.size * sizeof(int)) : NULL, nnodes = 0;
    char mine[64], v[64];
    if (!lead)
        goto out;
    for (int r = 0; r < xm_g.size; r++) {
        int nd = xm_g.node_of[r];
        if (nd < 0 || nd >= xm_g.size)
            goto out;
        if (per[nd]++ == 0)
            lead[nnodes++] = r;
    }
    if (nnodes > MACH_MAX_NODES)
        goto out;
    machine_id(mine, sizeof(mine));
    for (int i = 0; i < nnodes; i++) {
        int nd = xm_g.node_of[lead[i]];
        if (nd != xm_g.node_of[xm_g.rank] &&
            xm_boot_get(lead[i], "mach", v, sizeof(v)) == 0 && strcmp(v, mine) == 0)
            xm_g.machine_ranks += per[nd];
    }
    decide_oversubscribed();
out:
    free(per);
    free(lead);
}

int xm_boot_put(const char *key, const char *val)
{
    char k[64];
    snprintf(k, sizeof(k), "xm-%s-%d", key, xm_g.rank);
    return pmi->put(k, val);
}

int xm_boot_get(int rank, const char *key, char *buf, int len)
{
    char k[64];
    snprintf(k, sizeof(k), "xm-%s-%d", key, rank);
    return pmi->get(rank, k, buf, len);
}

int xm_boot_fence(void)
{
    static int fences;
    int rc = pmi->fence();
    if (rc < 0)
        return rc;
    /* the hostnames once: read again at the second fence they undid the pretend
     * nodes of LOOM_MPI_FAKE_NODES that the segment was made for */
    if (need_host_fallback && fences == 0) {
        /* node id = smallest rank with the same hostname */
        char(*hosts)[MPI_MAX_PROCESSOR_NAME] = calloc((size_t)xm_g.size, sizeof(*hosts));
        if (!hosts)
            return -ENOMEM;
        for (int r = 0; r < xm_g.size; r++) {
            if (xm_boot_get(r, "host", hosts[r], MPI_MAX_PROCESSOR_NAME) < 0) {
                free(hosts);
                return -EIO;
            }
            xm_g.node_of[r] = r;
            for (int q = 0; q < r; q++)
                if (strcmp(hosts[q], hosts[r]) == 0) {
                    xm_g.node_of[r] = xm_g.node_of[q];
                    break;
                }
        }
        free(hosts);
    }
    build_local_view();
    /* with the hostname fallback rank 0 put "ovs" after the first of two fences */
    char v[8];
    if (++fences == (need_host_fallback ? 2 : 1)) {
        /* rank 0's view or, if it is missing, the same constant everywhere: a rank
         * keeping its own guess could pick another collective algorithm */
        xm_g.any_oversubscribed = xm_boot_get(0, "ovs", v, sizeof(v)) == 0 && v[0] == '1';
        count_machine();
    }
    return 0;
}

void xm_boot_set_node_cpus(int n)
{
    if (n <= 0)
        return;
    xm_g.node_cpus = n;
    decide_oversubscribed();
}

/* The node map is needed before the fence (the local leader creates the segment
 * then); with the hostname fallback it is only known after, see shm.c. */
int xm_boot_have_map(void)
{
    if (!need_host_fallback)
        build_local_view();
    return !need_host_fallback;
}

int xm_boot_finalize(void)
{
    return pmi->finalize();
}

void xm_boot_abort(int code, const char *msg)
{
    pmi->abort(code, msg);
}

/* ---- name service (api/dynproc.c) ---- */
int xm_boot_publish(const char *service, const char *port)
{
    return pmi->publish ? pmi->publish(service, port) : -ENOSYS;
}

int xm_boot_lookup(const char *service, char *port, int len)
{
    return pmi->lookup ? pmi->lookup(service, port, len) : -ENOSYS;
}

int xm_boot_unpublish(const char *service)
{
    return pmi->unpublish ? pmi->unpublish(service) : -ENOSYS;
}

int xm_boot_spawn(int count, char *const *cmds, char **const *argv, const int *maxprocs,
                  const struct xm_spawn_keys *keys, const char *port, int *errors)
{
    return pmi->spawn ? pmi->spawn(count, cmds, argv, maxprocs, keys, port, errors)
                      : -ENOSYS;
}

int xm_boot_parent_port(char *buf, int len)
{
    return pmi->parent_port ? pmi->parent_port(buf, len) : -ENOSYS;
}
