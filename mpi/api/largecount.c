/*
 * largecount.c - the MPI-4.0 large-count bindings (MPI_X_c) written by hand, and the
 * helpers the generated ones (largecount_gen.c, by gen_largecount.py) use.
 *
 * Contract: every MPI_X_c does what MPI_X does with MPI_Count counts and MPI_Aint
 *   displacements.  Counts that fit in an int go to the int form unchanged.  Above
 *   INT_MAX:
 *     - a (buffer, count, datatype) argument becomes count 1 of a type of `count`
 *       elements (point-to-point, one-sided, I/O, pack, the fixed-size collectives);
 *     - blocking reductions on one buffer (Allreduce_c, Reduce_c, Reduce_local_c) run
 *       in pieces of XM_LC_CHUNK elements (every predefined and user op is
 *       elementwise, so the pieces give the same result);
 *     - anything else (count arrays of v/w collectives, type constructor arguments,
 *       nonblocking and persistent reductions) is MPI_ERR_COUNT.
 *   Results that do not fit in an int come from the _x forms (Get_count_c,
 *   Get_elements_c, Type_size_c, the extents).  Types built by the _c constructors
 *   are the int forms' types: Type_get_envelope_c reports no large counts.
 *   User functions of Op_create_c get an MPI_Count length (coll/op.c).
 *
 * Notes:
 *   - MPI_Count and MPI_Aint are both 64-bit here; the generated code passes arrays
 *     of one for the other (asserted below).
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "largecount.h"
#include "../coll/coll.h"

_Static_assert(sizeof(MPI_Count) == sizeof(MPI_Aint), "MPI_Count and MPI_Aint differ");

#define XM_LC_CHUNK (1 << 30) /* elements per piece of a chunked reduction */

int lc_int(MPI_Count v, int *out)
{
    if (v > INT_MAX || v < INT_MIN)
        return MPI_ERR_COUNT;
    *out = (int)v;
    return MPI_SUCCESS;
}

int lc_ints(const MPI_Count *v, int n, int **out)
{
    static int none[1];
    *out = NULL;
    if (!v)
        return MPI_SUCCESS;
    if (n <= 0) {
        *out = none; /* not read; keeps a non-NULL argument non-NULL */
        return MPI_SUCCESS;
    }
    int *a = malloc((size_t)n * sizeof(int));
    if (!a)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < n; i++)
        if (lc_int(v[i], &a[i]) != MPI_SUCCESS) {
            free(a);
            return MPI_ERR_COUNT;
        }
    *out = a;
    return MPI_SUCCESS;
}

int lc_count_or_type(MPI_Count count, MPI_Datatype t, int *out, MPI_Datatype *big)
{
    *big = MPI_DATATYPE_NULL;
    if (count <= INT_MAX)
        return lc_int(count, out);
    MPI_Aint lb, ext;
    MPI_Datatype chunk, body, tail = MPI_DATATYPE_NULL, all;
    int rc = PMPI_Type_get_extent(t, &lb, &ext);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Count q = count / XM_LC_CHUNK, r = count % XM_LC_CHUNK;
    if (q > INT_MAX || (ext && count > (MPI_Count)(LLONG_MAX / (ext < 0 ? -ext : ext))))
        return MPI_ERR_COUNT;
    if ((rc = PMPI_Type_contiguous(XM_LC_CHUNK, t, &chunk)) != MPI_SUCCESS)
        return rc;
    rc = PMPI_Type_contiguous((int)q, chunk, &body);
    PMPI_Type_free(&chunk);
    if (rc != MPI_SUCCESS)
        return rc;
    if (r) {
        if ((rc = PMPI_Type_contiguous((int)r, t, &tail)) != MPI_SUCCESS) {
            PMPI_Type_free(&body);
            return rc;
        }
        int bl[2] = {1, 1};
        MPI_Aint disp[2] = {0, (MPI_Aint)(q * XM_LC_CHUNK) * ext};
        MPI_Datatype ts[2] = {body, tail};
        MPI_Datatype s;
        rc = PMPI_Type_create_struct(2, bl, disp, ts, &s);
        PMPI_Type_free(&tail);
        PMPI_Type_free(&body);
        if (rc != MPI_SUCCESS)
            return rc;
        body = s;
    }
    /* exactly count extents long, so that block i of a gather/scatter starts where the
     * int form's would */
    rc = PMPI_Type_create_resized(body, lb, (MPI_Aint)count * ext, &all);
    PMPI_Type_free(&body);
    if (rc != MPI_SUCCESS)
        return rc;
    if ((rc = PMPI_Type_commit(&all)) != MPI_SUCCESS) {
        PMPI_Type_free(&all);
        return rc;
    }
    *big = all;
    *out = 1;
    return MPI_SUCCESS;
}

int lc_group_n(MPI_Comm comm)
{
    struct xm_comm *c = xm_comm_get(comm);
    return c ? c->size : 0; /* an intercommunicator's size is its remote group's */
}

int lc_local_n(MPI_Comm comm)
{
    struct xm_comm *c = xm_comm_get(comm);
    return !c ? 0 : c->inter ? c->local_size : c->size;
}

int lc_root_n(MPI_Comm comm, int root)
{
    struct xm_comm *c = xm_comm_get(comm);
    if (!c)
        return 0;
    if (c->inter)
        return root == MPI_ROOT ? c->size : 0;
    return c->rank == root ? c->size : 0;
}

int lc_degree(MPI_Comm comm, int out)
{
    struct xm_comm *c = xm_comm_get(comm);
    if (!c || !c->topo)
        return 0;
    return out ? c->topo->outdeg : c->topo->indeg;
}

int lc_fail(MPI_Comm comm, int rc, const char *fn)
{
    return xm_err(comm == MPI_COMM_NULL ? NULL : xm_comm_get(comm), rc, fn);
}

/* ---- results wider than an int: the _x forms ------------------------------------- */

XM_WEAK(MPI_Get_elements_c)
int PMPI_Get_elements_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    return PMPI_Get_elements_x(status, datatype, count);
}

XM_WEAK(MPI_Get_count_c)
int PMPI_Get_count_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    MPI_Count bytes, size;
    int rc = PMPI_Type_size_x(datatype, &size);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Get_elements_x(status, MPI_BYTE, &bytes);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!count)
        return lc_fail(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Get_count_c");
    /* as MPI_Get_count: a zero-size type counts 0; a partial element is undefined */
    *count = size == 0 ? 0 : bytes % size ? MPI_UNDEFINED : bytes / size;
    return MPI_SUCCESS;
}

XM_WEAK(MPI_Type_size_c)
int PMPI_Type_size_c(MPI_Datatype datatype, MPI_Count *size)
{
    return PMPI_Type_size_x(datatype, size);
}

XM_WEAK(MPI_Type_get_extent_c)
int PMPI_Type_get_extent_c(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    return PMPI_Type_get_extent_x(datatype, lb, extent);
}

XM_WEAK(MPI_Type_get_true_extent_c)
int PMPI_Type_get_true_extent_c(MPI_Datatype datatype, MPI_Count *true_lb,
                                MPI_Count *true_extent)
{
    return PMPI_Type_get_true_extent_x(datatype, true_lb, true_extent);
}

/* ---- envelope and contents: the _c constructors make the int forms' types ---------- */

XM_WEAK(MPI_Type_get_envelope_c)
int PMPI_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count *num_integers,
                             MPI_Count *num_addresses, MPI_Count *num_large_counts,
                             MPI_Count *num_datatypes, int *combiner)
{
    int ni, na, nd;
    int rc = PMPI_Type_get_envelope(datatype, &ni, &na, &nd, combiner);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!num_integers || !num_addresses || !num_large_counts || !num_datatypes)
        return lc_fail(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Type_get_envelope_c");
    *num_integers = ni;
    *num_addresses = na;
    *num_large_counts = 0;
    *num_datatypes = nd;
    return MPI_SUCCESS;
}

XM_WEAK(MPI_Type_get_contents_c)
int PMPI_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers,
                             MPI_Count max_addresses, MPI_Count max_large_counts,
                             MPI_Count max_datatypes, int array_of_integers[],
                             MPI_Aint array_of_addresses[], MPI_Count array_of_large_counts[],
                             MPI_Datatype array_of_datatypes[])
{
    int mi, ma, md;
    (void)max_large_counts;
    (void)array_of_large_counts;
    if (lc_int(max_integers, &mi) || lc_int(max_addresses, &ma) || lc_int(max_datatypes, &md))
        return lc_fail(MPI_COMM_NULL, MPI_ERR_COUNT, "MPI_Type_get_contents_c");
    return PMPI_Type_get_contents(datatype, mi, ma, md, array_of_integers, array_of_addresses,
                                  array_of_datatypes);
}

/* ---- user ops with an MPI_Count length ---------------------------------------------- */

XM_WEAK(MPI_Op_create_c)
int PMPI_Op_create_c(MPI_User_function_c *user_fn, int commute, MPI_Op *op)
{
    if (!user_fn || !op)
        return lc_fail(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Op_create_c");
    int rc = xm_op_create_c(user_fn, commute, op);
    return rc == 0 ? MPI_SUCCESS
                   : lc_fail(MPI_COMM_NULL, rc == -ENOMEM ? MPI_ERR_NO_MEM : MPI_ERR_ARG,
                             "MPI_Op_create_c");
}

/* ---- blocking reductions above INT_MAX elements: in pieces ------------------------- */

static const void *at(const void *p, MPI_Count off, MPI_Aint ext)
{
    if (!p || p == MPI_IN_PLACE)
        return p;
    return (const char *)p + off * ext;
}

XM_WEAK(MPI_Allreduce_c)
int PMPI_Allreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    if (count <= INT_MAX)
        return PMPI_Allreduce(sendbuf, recvbuf, (int)count, datatype, op, comm);
    MPI_Aint lb, ext;
    int rc = PMPI_Type_get_extent(datatype, &lb, &ext);
    for (MPI_Count off = 0; rc == MPI_SUCCESS && off < count; off += XM_LC_CHUNK) {
        int n = (int)(count - off < XM_LC_CHUNK ? count - off : XM_LC_CHUNK);
        rc = PMPI_Allreduce(at(sendbuf, off, ext), (void *)at(recvbuf, off, ext), n, datatype,
                            op, comm);
    }
    return rc;
}

XM_WEAK(MPI_Reduce_c)
int PMPI_Reduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                  MPI_Op op, int root, MPI_Comm comm)
{
    if (count <= INT_MAX)
        return PMPI_Reduce(sendbuf, recvbuf, (int)count, datatype, op, root, comm);
    MPI_Aint lb, ext;
    int rc = PMPI_Type_get_extent(datatype, &lb, &ext);
    for (MPI_Count off = 0; rc == MPI_SUCCESS && off < count; off += XM_LC_CHUNK) {
        int n = (int)(count - off < XM_LC_CHUNK ? count - off : XM_LC_CHUNK);
        rc = PMPI_Reduce(at(sendbuf, off, ext), (void *)at(recvbuf, off, ext), n, datatype, op,
                         root, comm);
    }
    return rc;
}

XM_WEAK(MPI_Reduce_local_c)
int PMPI_Reduce_local_c(const void *inbuf, void *inoutbuf, MPI_Count count,
                        MPI_Datatype datatype, MPI_Op op)
{
    if (count <= INT_MAX)
        return PMPI_Reduce_local(inbuf, inoutbuf, (int)count, datatype, op);
    MPI_Aint lb, ext;
    int rc = PMPI_Type_get_extent(datatype, &lb, &ext);
    for (MPI_Count off = 0; rc == MPI_SUCCESS && off < count; off += XM_LC_CHUNK) {
        int n = (int)(count - off < XM_LC_CHUNK ? count - off : XM_LC_CHUNK);
        rc = PMPI_Reduce_local(at(inbuf, off, ext), (void *)at(inoutbuf, off, ext), n,
                               datatype, op);
    }
    return rc;
}
