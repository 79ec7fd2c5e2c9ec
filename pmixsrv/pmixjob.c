/* pmixjob.c - the PMIx server's job, namespace, node and rank configuration
 * made from a host's plain description of its node (struct pmixsrv_job,
 * contract in pmixsrv.h): the one place both hosts, the Slurm plugin's agent
 * and mpiexec's node, start the server through.
 *
 * Notes:
 *   - Everything the two hosts share is decided here: the namespace
 *     "loom.<jobid>", the directory prefix BASE/loom-pmix.<jobid>.<nodeid>
 *     (mpiexec's stale-directory sweep parses that name), the
 *     PMI_process_mapping handed over as PMIX_ANL_MAP, the node names.
 *   - A host that does not know the other nodes' names (an mpiexec proxy)
 *     gives none: they become "node<k>", this node is `host`; locality comes
 *     from PMIX_LOCAL_PEERS, which is exact either way.
 *   - No libpmix header here: the unit test builds this file against a
 *     pmixsrv_create of its own that records the configuration.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pmixsrv.h"

#define NODE_NAME_MAX 32 /* "node<k>" */
#define HOST_MAX 256

struct pmixsrv *pmixsrv_start(const struct pmixsrv_job *job, struct psrv *srv,
                              const struct pmixsrv_ops *ops, void *arg)
{
    const struct psrv_config *c = job ? job->core : NULL;
    char nspace[128], tmpdir[1024], map[1100], host[HOST_MAX] = "";
    char **names = NULL, *block = NULL;
    struct pmixsrv *px = NULL;
    int n;

    if (!c || !c->jobid || !c->rank_node || c->nnodes < 1 || c->nodeid < 0 ||
        c->nodeid >= c->nnodes || !job->tmp_base || !*job->tmp_base) {
        errno = EINVAL;
        return NULL;
    }
    n = snprintf(nspace, sizeof(nspace), "loom.%s", c->jobid);
    if (n < 0 || (size_t)n >= sizeof(nspace)) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    n = snprintf(tmpdir, sizeof(tmpdir), "%s/loom-pmix.%s.%d", job->tmp_base, c->jobid,
                 c->nodeid);
    if (n < 0 || (size_t)n >= sizeof(tmpdir)) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    if (!job->node_names) {
        const char *me = job->host;
        if (!me || !*me) {
            gethostname(host, sizeof(host) - 1);
            me = host;
        }
        names = calloc((size_t)c->nnodes, sizeof(*names));
        block = calloc((size_t)c->nnodes, NODE_NAME_MAX);
        if (!names || !block) {
            free(names);
            free(block);
            errno = ENOMEM;
            return NULL;
        }
        for (int k = 0; k < c->nnodes; k++) {
            names[k] = block + (size_t)k * NODE_NAME_MAX;
            snprintf(names[k], NODE_NAME_MAX, "node%d", k);
        }
        names[c->nodeid] = (char *)me;
    }
    struct pmixsrv_config pc = {
        .nspace = nspace,
        .jobid = c->jobid,
        .size = c->size,
        .nnodes = c->nnodes,
        .nodeid = c->nodeid,
        .local_count = c->local_count,
        .local_ranks = c->local_ranks,
        .rank_node = c->rank_node,
        .rank_appnum = c->rank_appnum,
        .node_names = names ? (const char *const *)names : job->node_names,
        .universe_size = c->universe_size,
        .node_cpus = job->node_cpus,
        .uid = job->uid,
        .gid = job->gid,
        .tmpdir = tmpdir,
        .base_owner = job->base_owner,
        /* too long a mapping: the clients compute locality without it */
        .anl_map = psrv_process_mapping(c->rank_node, c->size, map, sizeof(map)) >= 0
                       ? map
                       : NULL,
        .log_level = c->log_level,
    };
    px = pmixsrv_create(&pc, srv, ops, arg);
    int e = errno;
    free(names);
    free(block);
    errno = e;
    return px;
}
