/*
 * largecount.c - the MPI-4.0 large-count bindings (MPI_X_c): point-to-point, v and w
 * collectives with MPI_Count/MPI_Aint arrays (blocking, nonblocking, neighbor), type
 * constructors, pack positions, extents, Op_create_c, and the limits: a count above
 * INT_MAX where Loom cannot take it is MPI_ERR_COUNT through the error handler.
 * With LOOM_TEST_BIG=1, a message of INT_MAX + 9 bytes (2 GiB: about 4.3 GB of memory
 * on two ranks) goes through Send_c/Recv_c and Bcast_c.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

static void sum_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
    (void)dt;
    for (MPI_Count i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

static void big(int rank, int size)
{
    MPI_Count n = (MPI_Count)INT_MAX + 9;
    char *buf = malloc((size_t)n);
    TEST_ASSERT(buf != NULL);
    if (!buf)
        return;
    if (rank == 0)
        for (MPI_Count i = 0; i < n; i += 4096)
            buf[i] = (char)(i / 4096);
    if (rank == 0) {
        buf[n - 1] = 42;
        TEST_ASSERT(MPI_Send_c(buf, n, MPI_CHAR, 1, 3, MPI_COMM_WORLD) == MPI_SUCCESS);
    } else if (rank == 1) {
        MPI_Status st;
        MPI_Count got = 0;
        memset(buf, 0, (size_t)n);
        TEST_ASSERT(MPI_Recv_c(buf, n, MPI_CHAR, 0, 3, MPI_COMM_WORLD, &st) == MPI_SUCCESS);
        MPI_Get_count_c(&st, MPI_CHAR, &got);
        TEST_ASSERT_MSG(got == n, "got %lld", (long long)got);
        int bad = 0;
        for (MPI_Count i = 0; i < n - 1; i += 4096)
            bad += buf[i] != (char)(i / 4096);
        TEST_ASSERT(bad == 0);
        TEST_ASSERT(buf[n - 1] == 42);
    }
    (void)size;
    free(buf);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* point-to-point and Get_count_c */
    {
        int v[5] = {rank, 1, 2, 3, 4}, w[5] = {0};
        int to = (rank + 1) % size, from = (rank + size - 1) % size;
        MPI_Status st;
        MPI_Count n = -1;
        MPI_Request rq;
        TEST_ASSERT(MPI_Irecv_c(w, 5, MPI_INT, from, 1, MPI_COMM_WORLD, &rq) == MPI_SUCCESS);
        TEST_ASSERT(MPI_Send_c(v, 5, MPI_INT, to, 1, MPI_COMM_WORLD) == MPI_SUCCESS);
        MPI_Wait(&rq, &st);
        TEST_ASSERT(w[0] == from && w[4] == 4);
        MPI_Get_count_c(&st, MPI_INT, &n);
        TEST_ASSERT(n == 5);
        MPI_Get_elements_c(&st, MPI_SHORT, &n);
        TEST_ASSERT(n == (MPI_Count)(5 * sizeof(int) / sizeof(short)));
    }

    /* Allgatherv_c and Gatherv_c: MPI_Count counts, MPI_Aint displacements */
    {
        MPI_Count *counts = malloc(sizeof(MPI_Count) * (size_t)size);
        MPI_Aint *displs = malloc(sizeof(MPI_Aint) * (size_t)size);
        MPI_Count total = 0;
        for (int i = 0; i < size; i++) {
            counts[i] = i + 1;
            displs[i] = (MPI_Aint)total;
            total += i + 1;
        }
        int *mine = malloc(sizeof(int) * (size_t)(rank + 1));
        int *all = malloc(sizeof(int) * (size_t)total);
        for (int i = 0; i <= rank; i++)
            mine[i] = rank * 100 + i;
        TEST_ASSERT(MPI_Allgatherv_c(mine, rank + 1, MPI_INT, all, counts, displs, MPI_INT,
                                     MPI_COMM_WORLD) == MPI_SUCCESS);
        int bad = 0;
        for (int r = 0; r < size; r++)
            for (int i = 0; i <= r; i++)
                bad += all[displs[r] + i] != r * 100 + i;
        TEST_ASSERT(bad == 0);
        memset(all, 0, sizeof(int) * (size_t)total);
        /* the counts are not read where they are not significant */
        int root = 1 % size;
        TEST_ASSERT(MPI_Gatherv_c(mine, rank + 1, MPI_INT, all, rank == root ? counts : NULL,
                                  rank == root ? displs : NULL, MPI_INT, root,
                                  MPI_COMM_WORLD) == MPI_SUCCESS);
        if (rank == root)
            TEST_ASSERT(all[displs[size - 1] + size - 1] == (size - 1) * 100 + size - 1);
        free(mine);
        free(all);
        free(counts);
        free(displs);
    }

    /* Ialltoallv_c: the converted arrays are gone when the call returns */
    {
        MPI_Count *sc = malloc(sizeof(MPI_Count) * (size_t)size), *rc = malloc(sizeof(MPI_Count) * (size_t)size);
        MPI_Aint *sd = malloc(sizeof(MPI_Aint) * (size_t)size), *rd = malloc(sizeof(MPI_Aint) * (size_t)size);
        int *s = malloc(sizeof(int) * 2 * (size_t)size), *r = malloc(sizeof(int) * 2 * (size_t)size);
        for (int i = 0; i < size; i++) {
            sc[i] = rc[i] = 2;
            sd[i] = rd[i] = 2 * i;
            s[2 * i] = rank * 1000 + i;
            s[2 * i + 1] = -rank;
        }
        MPI_Request rq;
        TEST_ASSERT(MPI_Ialltoallv_c(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, MPI_COMM_WORLD,
                                     &rq) == MPI_SUCCESS);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        int bad = 0;
        for (int i = 0; i < size; i++)
            bad += r[2 * i] != i * 1000 + rank || r[2 * i + 1] != -i;
        TEST_ASSERT(bad == 0);
        free(sc), free(rc), free(sd), free(rd), free(s), free(r);
    }

    /* Neighbor_alltoallv_c on a periodic ring: counts from the topology's degrees */
    {
        MPI_Comm ring;
        int dims[1] = {size}, periods[1] = {1};
        MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
        MPI_Count c[2] = {1, 1};
        MPI_Aint d[2] = {0, 1};
        int s[2] = {rank, rank}, r[2] = {-1, -1};
        TEST_ASSERT(MPI_Neighbor_alltoallv_c(s, c, d, MPI_INT, r, c, d, MPI_INT, ring) ==
                    MPI_SUCCESS);
        TEST_ASSERT(r[0] == (rank + size - 1) % size && r[1] == (rank + 1) % size);
        MPI_Comm_free(&ring);
    }

    /* types, extents, pack positions */
    {
        MPI_Datatype t;
        MPI_Count bl[2] = {2, 1}, disp[2] = {0, 16};
        MPI_Datatype ts[2] = {MPI_INT, MPI_DOUBLE};
        TEST_ASSERT(MPI_Type_create_struct_c(2, bl, disp, ts, &t) == MPI_SUCCESS);
        MPI_Type_commit(&t);
        MPI_Count sz = 0, lb = -1, ext = 0;
        MPI_Type_size_c(t, &sz);
        MPI_Type_get_extent_c(t, &lb, &ext);
        TEST_ASSERT(sz == 2 * (MPI_Count)sizeof(int) + (MPI_Count)sizeof(double));
        TEST_ASSERT(lb == 0 && ext == 24);
        MPI_Count ni = -1, na = -1, nl = -1, nd = -1;
        int comb = 0;
        MPI_Type_get_envelope_c(t, &ni, &na, &nl, &nd, &comb);
        TEST_ASSERT(comb == MPI_COMBINER_STRUCT && ni == 3 && na == 2 && nl == 0 && nd == 2);
        struct {
            int a, b, pad[2];
            double c;
        } in = {7, 8, {0, 0}, 9.5}, out = {0, 0, {0, 0}, 0};
        char packed[64];
        MPI_Count pos = 0;
        TEST_ASSERT(MPI_Pack_c(&in, 1, t, packed, sizeof(packed), &pos, MPI_COMM_WORLD) ==
                    MPI_SUCCESS);
        TEST_ASSERT(pos == sz);
        pos = 0;
        MPI_Unpack_c(packed, sizeof(packed), &pos, &out, 1, t, MPI_COMM_WORLD);
        TEST_ASSERT(out.a == 7 && out.b == 8 && out.c == 9.5 && pos == sz);
        MPI_Type_free(&t);

        MPI_Datatype v;
        TEST_ASSERT(MPI_Type_vector_c(3, 2, 4, MPI_INT, &v) == MPI_SUCCESS);
        MPI_Type_size_c(v, &sz);
        TEST_ASSERT(sz == 6 * (MPI_Count)sizeof(int));
        MPI_Type_free(&v);
    }

    /* Op_create_c: the user function sees an MPI_Count length */
    {
        MPI_Op op;
        int v[3] = {rank, 1, 2}, out[3];
        TEST_ASSERT(MPI_Op_create_c(sum_c, 1, &op) == MPI_SUCCESS);
        TEST_ASSERT(MPI_Allreduce_c(v, out, 3, MPI_INT, op, MPI_COMM_WORLD) == MPI_SUCCESS);
        TEST_ASSERT_MSG(out[0] == size * (size - 1) / 2 && out[1] == size && out[2] == 2 * size,
                        "out=%d %d %d", out[0], out[1], out[2]);
        MPI_Op_free(&op);
    }

    /* counts above INT_MAX that Loom does not take: MPI_ERR_COUNT, nothing else */
    {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_Datatype v = MPI_DATATYPE_NULL;
        int rc = MPI_Type_vector_c((MPI_Count)INT_MAX + 1, 1, 1, MPI_INT, &v);
        int cls = -1;
        MPI_Error_class(rc, &cls);
        TEST_ASSERT_MSG(cls == MPI_ERR_COUNT, "class %d", cls);
        MPI_Count c[1] = {(MPI_Count)INT_MAX + 1};
        MPI_Aint d[1] = {0};
        int x = 0;
        MPI_Request rq = MPI_REQUEST_NULL;
        if (size == 1) {
            rc = MPI_Iallgatherv_c(&x, 1, MPI_INT, &x, c, d, MPI_INT, MPI_COMM_WORLD, &rq);
            MPI_Error_class(rc, &cls);
            TEST_ASSERT_MSG(cls == MPI_ERR_COUNT, "class %d", cls);
        }
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    }

    const char *b = getenv("LOOM_TEST_BIG");
    if (b && *b == '1' && size >= 2)
        big(rank, size);
    return test_finish();
}
