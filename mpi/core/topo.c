/*
 * topo.c - the topology object of a communicator (struct xm_topo, core/xm.h): its
 *          storage, copy and release.  Communicator teardown (core/comm.c) and
 *          duplication (api/comm.c, core/idup.c) use these; the constructors and
 *          queries (MPI_Cart_*, MPI_Graph_*, MPI_Dist_graph_*) are in api/topo.c.
 * Contract: a topology owns each of its arrays; xm_topo_dup() copies them all (NULL
 *   for NULL or when memory runs out), xm_topo_free() releases them (NULL is a no-op).
 */
#include <stdlib.h>
#include <string.h>

#include "xm.h"

int *xm_ints_dup(const int *a, int n)
{
    int *b = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    if (b && n > 0)
        memcpy(b, a, (size_t)n * sizeof(int));
    return b;
}

void xm_topo_free(struct xm_topo *t)
{
    if (!t)
        return;
    free(t->dims);
    free(t->periods);
    free(t->index);
    free(t->edges);
    free(t->in);
    free(t->out);
    free(t->inw);
    free(t->outw);
    free(t);
}

struct xm_topo *xm_topo_dup(const struct xm_topo *t)
{
    if (!t)
        return NULL;
    struct xm_topo *n = calloc(1, sizeof(*n));
    if (!n)
        return NULL;
    *n = *t;
    n->dims = n->periods = n->index = n->edges = n->in = n->out = n->inw = n->outw = NULL;
    int ne = t->nnodes > 0 && t->index ? t->index[t->nnodes - 1] : 0, bad = 0;
#define DUP(f, k)                                                                        \
    if (t->f && !(n->f = xm_ints_dup(t->f, k)))                                          \
    bad = 1
    DUP(dims, t->ndims);
    DUP(periods, t->ndims);
    DUP(index, t->nnodes);
    DUP(edges, ne);
    DUP(in, t->indeg);
    DUP(out, t->outdeg);
    DUP(inw, t->indeg);
    DUP(outw, t->outdeg);
#undef DUP
    if (bad) {
        xm_topo_free(n);
        return NULL;
    }
    return n;
}
