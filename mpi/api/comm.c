/*
 * comm.c - communicators: queries, dup/split/split_type/create/free, compare, group,
 *          names; handle conversions.
 * Contract: every constructor is collective over the parent and allocates the context
 *   id with xm_ctx_alloc() (core/comm.c), also on ranks that end up with MPI_COMM_NULL,
 *   so that all ranks of the parent stay in step.
 * Intercommunicators (api/intercomm.c) take their own path at the top of Comm_dup,
 *   Comm_split, Comm_create, Comm_group and Comm_size; Comm_dup copies a topology.
 * Comm_idup(_with_info) is nonblocking for intra- and intercommunicators (core/idup.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../coll/coll.h"
#include "../core/comm.h"
#include "../core/hwsplit.h"
#include "../dt/dtype.h"
#include "intercomm.h"

XM_WEAK(MPI_Comm_dup)
XM_WEAK(MPI_Comm_dup_with_info)
XM_WEAK(MPI_Comm_idup)
XM_WEAK(MPI_Comm_create)
XM_WEAK(MPI_Comm_split)
XM_WEAK(MPI_Comm_create_group)
XM_WEAK(MPI_Comm_split_type)
XM_WEAK(MPI_Comm_free)
XM_WEAK(MPI_Comm_compare)
XM_WEAK(MPI_Comm_group)
XM_WEAK(MPI_Comm_set_name)
XM_WEAK(MPI_Comm_get_name)

XM_WEAK(MPI_Comm_rank)
XM_WEAK(MPI_Comm_size)
XM_WEAK(MPI_Comm_c2f)
XM_WEAK(MPI_Comm_f2c)
XM_WEAK(MPI_Type_c2f)
XM_WEAK(MPI_Type_f2c)
XM_WEAK(MPI_Request_c2f)
XM_WEAK(MPI_Request_f2c)
XM_WEAK(MPI_Op_c2f)
XM_WEAK(MPI_Op_f2c)
XM_WEAK(MPI_Group_c2f)
XM_WEAK(MPI_Group_f2c)

int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    struct xm_comm *c = xm_comm_get(comm);
    if (!c)
        return xm_err(NULL, MPI_ERR_COMM, "MPI_Comm_rank");
    *rank = c->rank;
    return MPI_SUCCESS;
}

int PMPI_Comm_size(MPI_Comm comm, int *size)
{
    struct xm_comm *c = xm_comm_get(comm);
    if (!c)
        return xm_err(NULL, MPI_ERR_COMM, "MPI_Comm_size");
    *size = c->inter ? c->local_size : c->size; /* intercomm: size is the remote group */
    return MPI_SUCCESS;
}

MPI_Fint PMPI_Comm_c2f(MPI_Comm h) { return h; }
MPI_Comm PMPI_Comm_f2c(MPI_Fint h) { return h; }
MPI_Fint PMPI_Type_c2f(MPI_Datatype h) { return h; }
MPI_Datatype PMPI_Type_f2c(MPI_Fint h) { return h; }
MPI_Fint PMPI_Request_c2f(MPI_Request h) { return h; }
MPI_Request PMPI_Request_f2c(MPI_Fint h) { return h; }
MPI_Fint PMPI_Op_c2f(MPI_Op h) { return h; }
MPI_Op PMPI_Op_f2c(MPI_Fint h) { return h; }
MPI_Fint PMPI_Group_c2f(MPI_Group h) { return h; }
MPI_Group PMPI_Group_f2c(MPI_Fint h) { return h; }

XM_WEAK(MPI_Get_address)
XM_WEAK(MPI_Address)
XM_WEAK(MPI_Aint_add)
XM_WEAK(MPI_Aint_diff)

int PMPI_Get_address(const void *location, MPI_Aint *address)
{
    *address = (MPI_Aint)location;
    return MPI_SUCCESS;
}

int PMPI_Address(void *location, MPI_Aint *address)
{
    *address = (MPI_Aint)location;
    return MPI_SUCCESS;
}

MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
    return base + disp;
}

MPI_Aint PMPI_Aint_diff(MPI_Aint a, MPI_Aint b)
{
    return a - b;
}

/* ---- constructors ------------------------------------------------------------------ */
#define GET(c, comm, fn)                       \
    struct xm_comm *c = xm_comm_get(comm);    \
    if (!c)                                    \
        return xm_err(NULL, MPI_ERR_COMM, fn)

static int fail(struct xm_comm *c, int rc, const char *fn)
{
    return xm_err(c, rc == -ENOSPC ? MPI_ERR_INTERN : xm_errno_to_class(rc), fn);
}

static int *world_map(struct xm_comm *c)
{
    int *w = malloc((size_t)(c->size ? c->size : 1) * sizeof(int));
    if (w)
        for (int i = 0; i < c->size; i++)
            w[i] = xm_comm_world_rank(c, i);
    return w;
}

static int dup(struct xm_comm *c, MPI_Comm *newcomm, const char *fn)
{
    if (c->inter)
        return xm_intercomm_dup(c, newcomm, fn);
    uint32_t ctx;
    int rc = xm_ctx_alloc(c, &ctx);
    if (rc < 0)
        return fail(c, rc, fn);
    int *w = world_map(c);
    struct xm_comm *n = w ? xm_comm_new(c->size, w, ctx, c) : NULL;
    if (!n) {
        xm_ctx_release(ctx);
        return xm_err(c, MPI_ERR_NO_MEM, fn);
    }
    rc = xm_attr_copy_all(c, n);
    if (rc == MPI_SUCCESS && c->topo && !(n->topo = xm_topo_dup(c->topo)))
        rc = MPI_ERR_NO_MEM;
    if (rc != MPI_SUCCESS) {
        xm_attr_delete_all(n);
        xm_comm_release(n);
        return xm_err(c, rc, fn);
    }
    *newcomm = n->handle;
    return MPI_SUCCESS;
}

int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    GET(c, comm, "MPI_Comm_dup");
    return dup(c, newcomm, "MPI_Comm_dup");
}

int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    (void)info;
    GET(c, comm, "MPI_Comm_dup_with_info");
    return dup(c, newcomm, "MPI_Comm_dup_with_info");
}

/* Nonblocking: the context id is agreed on by rounds the engine progresses
 * (core/idup.c); *newcomm is written when the request completes. */
static int idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *req, const char *fn)
{
    GET(c, comm, fn);
    if (!newcomm || !req)
        return xm_err(c, MPI_ERR_ARG, fn);
    struct xm_req *r;
    int rc = xm_comm_idup(c, newcomm, &r);
    if (rc < 0)
        return xm_err(c, MPI_ERR_NO_MEM, fn);
    *req = r->handle;
    return MPI_SUCCESS;
}

int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *req)
{
    return idup(comm, newcomm, req, "MPI_Comm_idup");
}

XM_WEAK(MPI_Comm_idup_with_info)
int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm,
                             MPI_Request *req)
{
    (void)info; /* no hints are acted on (as MPI_Comm_dup_with_info) */
    return idup(comm, newcomm, req, "MPI_Comm_idup_with_info");
}

int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    GET(c, comm, "MPI_Comm_create");
    struct xm_group *g = xm_group_get(group);
    if (!g)
        return xm_err(c, MPI_ERR_GROUP, "MPI_Comm_create");
    if (c->inter)
        return xm_intercomm_create_sub(c, g, newcomm, "MPI_Comm_create");
    uint32_t ctx;
    int rc = xm_ctx_alloc(c, &ctx);
    if (rc < 0)
        return fail(c, rc, "MPI_Comm_create");
    if (g->rank == MPI_UNDEFINED) {
        xm_ctx_release(ctx);
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    int *w = malloc((size_t)g->size * sizeof(int));
    if (w)
        memcpy(w, g->w, (size_t)g->size * sizeof(int));
    struct xm_comm *n = w ? xm_comm_new(g->size, w, ctx, c) : NULL;
    if (!n) {
        xm_ctx_release(ctx);
        return xm_err(c, MPI_ERR_NO_MEM, "MPI_Comm_create");
    }
    *newcomm = n->handle;
    return MPI_SUCCESS;
}

/* Collective over the group only: the context id is agreed on by an allreduce among the
 * members, run on a temporary communicator over the reserved context
 * XM_CTX_CREATE_GROUP whose collective tag is derived from the user's tag (so
 * concurrent calls by overlapping groups must use different tags, as the standard
 * requires). */
int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    GET(c, comm, "MPI_Comm_create_group");
    if (c->inter)
        return xm_err(c, MPI_ERR_COMM, "MPI_Comm_create_group");
    struct xm_group *g = xm_group_get(group);
    if (!g)
        return xm_err(c, MPI_ERR_GROUP, "MPI_Comm_create_group");
    if (tag < 0)
        return xm_err(c, MPI_ERR_TAG, "MPI_Comm_create_group");
    if (g->rank == MPI_UNDEFINED) {
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    struct xm_comm tmp = {.handle = MPI_COMM_NULL, .refs = 1, .ctx = XM_CTX_CREATE_GROUP,
                          .rank = g->rank, .size = g->size, .w = g->w, .errh = c->errh,
                          .coll_seq = (uint32_t)tag};
    uint32_t ctx;
    int rc = xm_ctx_alloc(&tmp, &ctx);
    if (rc < 0)
        return fail(c, rc, "MPI_Comm_create_group");
    int *w = malloc((size_t)g->size * sizeof(int));
    if (w)
        memcpy(w, g->w, (size_t)g->size * sizeof(int));
    struct xm_comm *n = w ? xm_comm_new(g->size, w, ctx, c) : NULL;
    if (!n) {
        xm_ctx_release(ctx);
        return xm_err(c, MPI_ERR_NO_MEM, "MPI_Comm_create_group");
    }
    *newcomm = n->handle;
    return MPI_SUCCESS;
}

struct ck {
    int color, key, rank;
};

static int cmp_ck(const void *a, const void *b)
{
    const struct ck *x = a, *y = b;
    if (x->key != y->key)
        return (x->key > y->key) - (x->key < y->key);
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static int split(struct xm_comm *c, int color, int key, MPI_Comm *newcomm, const char *fn)
{
    if (color < 0 && color != MPI_UNDEFINED)
        return xm_err(c, MPI_ERR_ARG, fn);
    int p = c->size, mine[2] = {color, key};
    int *all = malloc(2 * (size_t)p * sizeof(int));
    struct ck *sel = malloc((size_t)p * sizeof(*sel));
    if (!all || !sel) {
        free(all);
        free(sel);
        return xm_err(c, MPI_ERR_NO_MEM, fn);
    }
    int rc = xm_icoll_allgather(mine, 2, MPI_INT, all, 2, MPI_INT, c, NULL);
    uint32_t ctx = 0;
    if (rc == 0)
        rc = xm_ctx_alloc(c, &ctx);
    if (rc < 0) {
        free(all);
        free(sel);
        return fail(c, rc, fn);
    }
    *newcomm = MPI_COMM_NULL;
    if (color == MPI_UNDEFINED) {
        xm_ctx_release(ctx);
        free(all);
        free(sel);
        return MPI_SUCCESS;
    }
    int n = 0;
    for (int i = 0; i < p; i++)
        if (all[2 * i] == color)
            sel[n++] = (struct ck){color, all[2 * i + 1], i};
    qsort(sel, (size_t)n, sizeof(*sel), cmp_ck); /* stable by parent rank through .rank */
    int *w = malloc((size_t)n * sizeof(int));
    if (w)
        for (int i = 0; i < n; i++)
            w[i] = xm_comm_world_rank(c, sel[i].rank);
    free(all);
    free(sel);
    struct xm_comm *nc = w ? xm_comm_new(n, w, ctx, c) : NULL;
    if (!nc) {
        xm_ctx_release(ctx);
        return xm_err(c, MPI_ERR_NO_MEM, fn);
    }
    *newcomm = nc->handle;
    return MPI_SUCCESS;
}

int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    GET(c, comm, "MPI_Comm_split");
    if (c->inter)
        return xm_intercomm_split(c, color, key, newcomm, "MPI_Comm_split");
    return split(c, color, key, newcomm, "MPI_Comm_split");
}

/* MPI-4.0 HW_UNGUIDED: the first level of xm_hw_levels (largest first) at which every
 * member runs on one instance and no instance holds every member; my colour there, or
 * MPI_UNDEFINED (no such level).  *level = its index or -1.  Collective over c. */
static int unguided_color(struct xm_comm *c, int *level, int *rc)
{
    int mine[XM_HW_LEVELS], p = c->size, color = MPI_UNDEFINED;
    for (int l = 0; l < XM_HW_LEVELS; l++)
        mine[l] = xm_hw_color(xm_hw_levels[l]);
    int *all = malloc((size_t)p * XM_HW_LEVELS * sizeof(int));
    *level = -1;
    *rc = all ? xm_icoll_allgather(mine, XM_HW_LEVELS, MPI_INT, all, XM_HW_LEVELS, MPI_INT,
                                   c, NULL)
              : -ENOMEM;
    for (int l = 0; *rc == 0 && l < XM_HW_LEVELS && *level < 0; l++) {
        int ok = 1, split_somewhere = 0;
        for (int i = 0; i < p && ok; i++) {
            int x = all[(size_t)i * XM_HW_LEVELS + l];
            ok = x != MPI_UNDEFINED;
            split_somewhere |= x != all[l];
        }
        if (ok && split_somewhere) {
            *level = l;
            color = mine[l];
        }
    }
    free(all);
    return color;
}

int PMPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    const char *fn = "MPI_Comm_split_type";
    GET(c, comm, fn);
    if (c->inter) /* intracommunicators only here */
        return xm_err(c, MPI_ERR_COMM, fn);
    if (!newcomm)
        return xm_err(c, MPI_ERR_ARG, fn);
    int color, level = -1;
    if (type == MPI_UNDEFINED) {
        color = MPI_UNDEFINED;
    } else if (type == MPI_COMM_TYPE_SHARED) {
        color = xm_g.node_of ? xm_g.node_of[xm_g.rank] : 0;
        /* members of several jobs: node numbers are per job; the lowest comm rank of
         * my job on my node names the group (the same at its other members) */
        for (int r = 0; c->xjob && r < c->size; r++) {
            int id = xm_comm_world_rank(c, r);
            if (id < xm_g.size && (!xm_g.node_of || xm_g.node_of[id] == color)) {
                color = r;
                break;
            }
        }
    } else if (type == MPI_COMM_TYPE_HW_GUIDED) {
        /* the resource type named by the info key; no info, no key or a type this
         * process cannot place itself in: MPI_COMM_NULL here (MPI-4.0 7.4.2) */
        char v[MPI_MAX_INFO_VAL + 1];
        int flag = 0;
        if (info != MPI_INFO_NULL &&
            PMPI_Info_get(info, "mpi_hw_resource_type", MPI_MAX_INFO_VAL, v, &flag) !=
                MPI_SUCCESS)
            return xm_err(c, MPI_ERR_INFO, fn);
        color = flag ? xm_hw_color(v) : MPI_UNDEFINED;
    } else if (type == MPI_COMM_TYPE_HW_UNGUIDED) {
        int rc;
        color = unguided_color(c, &level, &rc);
        if (rc < 0)
            return fail(c, rc, fn);
    } else {
        return xm_err(c, MPI_ERR_ARG, fn);
    }
    int err = split(c, color, key, newcomm, fn);
    /* HW_UNGUIDED says which resource it split by (MPI-4.0: in the info argument) */
    if (err == MPI_SUCCESS && level >= 0 && *newcomm != MPI_COMM_NULL &&
        info != MPI_INFO_NULL &&
        PMPI_Info_set(info, "mpi_hw_resource_type", xm_hw_levels[level]) != MPI_SUCCESS)
        return xm_err(c, MPI_ERR_INFO, fn);
    return err;
}

int PMPI_Comm_free(MPI_Comm *comm)
{
    struct xm_comm *c = xm_comm_get(*comm);
    if (!c || *comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
        return xm_err(c, MPI_ERR_COMM, "MPI_Comm_free");
    int rc = xm_attr_delete_all(c);
    if (rc != MPI_SUCCESS)
        return xm_err(c, rc, "MPI_Comm_free");
    xm_comm_unref(c); /* pending nonblocking collectives hold references */
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* IDENT / CONGRUENT (same ranks, same order) / SIMILAR (same set) / UNEQUAL for two
 * rank maps; shared with the group code. */
int xm_map_compare(int n1, const int *w1, int n2, const int *w2)
{
    if (n1 != n2)
        return MPI_UNEQUAL;
    if (!memcmp(w1, w2, (size_t)n1 * sizeof(int)))
        return MPI_CONGRUENT;
    int *a = malloc(2 * (size_t)(n1 ? n1 : 1) * sizeof(int)), res = MPI_UNEQUAL;
    if (!a)
        return MPI_UNEQUAL;
    memcpy(a, w1, (size_t)n1 * sizeof(int));
    memcpy(a + n1, w2, (size_t)n1 * sizeof(int));
    qsort(a, (size_t)n1, sizeof(int), cmp_int);
    qsort(a + n1, (size_t)n1, sizeof(int), cmp_int);
    if (!memcmp(a, a + n1, (size_t)n1 * sizeof(int)))
        res = MPI_SIMILAR;
    free(a);
    return res;
}

int PMPI_Comm_compare(MPI_Comm c1, MPI_Comm c2, int *result)
{
    struct xm_comm *a = xm_comm_get(c1), *b = xm_comm_get(c2);
    if (!a || !b)
        return xm_err(NULL, MPI_ERR_COMM, "MPI_Comm_compare");
    if (a == b) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    if (a->inter || b->inter) { /* both groups compare; CONGRUENT < SIMILAR < UNEQUAL */
        int l = a->inter && b->inter
                    ? xm_map_compare(a->local_size, a->local_w, b->local_size, b->local_w)
                    : MPI_UNEQUAL;
        int r = l == MPI_UNEQUAL ? l : xm_map_compare(a->size, a->w, b->size, b->w);
        *result = l > r ? l : r;
        return MPI_SUCCESS;
    }
    int *w1 = world_map(a), *w2 = world_map(b);
    if (!w1 || !w2) {
        free(w1);
        free(w2);
        return xm_err(a, MPI_ERR_NO_MEM, "MPI_Comm_compare");
    }
    *result = xm_map_compare(a->size, w1, b->size, w2);
    free(w1);
    free(w2);
    return MPI_SUCCESS;
}

int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    GET(c, comm, "MPI_Comm_group");
    if (c->inter)
        return xm_intercomm_group(c, 0, group, "MPI_Comm_group");
    int *w = world_map(c);
    struct xm_group *g = w ? xm_group_new(c->size, w) : NULL;
    if (!g)
        return xm_err(c, MPI_ERR_NO_MEM, "MPI_Comm_group");
    *group = g->handle;
    return MPI_SUCCESS;
}

int PMPI_Comm_set_name(MPI_Comm comm, const char *name)
{
    GET(c, comm, "MPI_Comm_set_name");
    if (!name)
        return xm_err(c, MPI_ERR_ARG, "MPI_Comm_set_name");
    snprintf(c->name, sizeof(c->name), "%s", name);
    return MPI_SUCCESS;
}

int PMPI_Comm_get_name(MPI_Comm comm, char *name, int *resultlen)
{
    GET(c, comm, "MPI_Comm_get_name");
    *resultlen = snprintf(name, MPI_MAX_OBJECT_NAME, "%s", c->name);
    return MPI_SUCCESS;
}
