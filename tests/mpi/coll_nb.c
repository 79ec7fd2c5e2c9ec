/*
 * coll_nb.c - nonblocking collectives: results against a serial reference, several
 *             I-collectives outstanding at once on one communicator (they must not
 *             match each other's messages), overlapped with point-to-point traffic on
 *             the same communicator, completed in reverse order with Wait and with
 *             Waitall; an Ibarrier that cannot complete before every rank arrived.
 * Caveat: a Test loop on an I-collective needs core/p2p.c's xm_progress() to call
 *   xm_coll_progress() (requested from area C); set LOOM_MPI_TEST_NB_TESTLOOP=1 to
 *   exercise it.
 * Rank 0 prints "No Errors" when every rank found none.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int errs, me, p;
#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        if (!(cond) && errs++ < 10) {                                        \
            fprintf(stderr, "[%d] line %d: ", me, __LINE__);                 \
            fprintf(stderr, __VA_ARGS__);                                    \
            fputc('\n', stderr);                                             \
        }                                                                    \
    } while (0)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    enum { N = 1000 };
    const char *tl = getenv("LOOM_MPI_TEST_NB_TESTLOOP");
    int testloop = tl && *tl == '1';
    int *a = malloc(N * sizeof(int)), *b = malloc(N * sizeof(int));
    int *g = malloc((size_t)N * p * sizeof(int)), *t = malloc((size_t)N * p * sizeof(int));
    int *t2 = malloc((size_t)N * p * sizeof(int));
    for (int iter = 0; iter < 20; iter++) {
        int root = iter % p, bc[N], sc = me + iter, ex = -1;
        for (int i = 0; i < N; i++) {
            a[i] = me * 3 + i + iter;
            bc[i] = me == root ? i * 7 + iter : -1;
        }
        for (int i = 0; i < N * p; i++)
            t[i] = me * 100000 + i;
        MPI_Request rq[8];
        MPI_Status sts[8];
        MPI_Iallreduce(a, b, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[0]);
        MPI_Ibcast(bc, N, MPI_INT, root, MPI_COMM_WORLD, &rq[1]);
        MPI_Iallgather(a, N, MPI_INT, g, N, MPI_INT, MPI_COMM_WORLD, &rq[2]);
        MPI_Ialltoall(t, N, MPI_INT, t2, N, MPI_INT, MPI_COMM_WORLD, &rq[3]);
        MPI_Iexscan(&sc, &ex, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[4]);
        /* p2p ring traffic on the same communicator while they are in flight */
        int tok = me * 1000 + iter, got = -1;
        MPI_Irecv(&got, 1, MPI_INT, (me - 1 + p) % p, 0, MPI_COMM_WORLD, &rq[5]);
        MPI_Isend(&tok, 1, MPI_INT, (me + 1) % p, 0, MPI_COMM_WORLD, &rq[6]);
        MPI_Ibarrier(MPI_COMM_WORLD, &rq[7]);
        if (iter % 3 == 2)
            MPI_Waitall(8, rq, sts);
        for (int k = 7; k >= 0; k--) {
            if (iter % 2 || !testloop) {
                MPI_Wait(&rq[k], MPI_STATUS_IGNORE);
            } else {
                int flag = 0;
                while (!flag)
                    MPI_Test(&rq[k], &flag, MPI_STATUS_IGNORE);
            }
        }
        CHECK(got == ((me - 1 + p) % p) * 1000 + iter, "ring token %d", got);
        for (int i = 0; i < N; i++) {
            long e = 0;
            for (int r = 0; r < p; r++)
                e += r * 3 + i + iter;
            CHECK(b[i] == e, "iallreduce i=%d %d!=%ld", i, b[i], e);
            CHECK(bc[i] == i * 7 + iter, "ibcast");
            for (int r = 0; r < p; r++) {
                CHECK(g[r * N + i] == r * 3 + i + iter, "iallgather");
                CHECK(t2[r * N + i] == r * 100000 + me * N + i, "ialltoall");
            }
        }
        int e = 0;
        for (int r = 0; r < me; r++)
            e += r + iter;
        if (me > 0)
            CHECK(ex == e, "iexscan %d != %d", ex, e);
    }
    /* Ibarrier: rank 0 arrives late; nobody's barrier may complete before */
    {
        int late = 0;
        MPI_Request r;
        if (me == 0) {
            for (int k = 1; k < p; k++) {
                int x;
                MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
            MPI_Ibarrier(MPI_COMM_WORLD, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else {
            MPI_Ibarrier(MPI_COMM_WORLD, &r);
            int flag;
            MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
            late = flag; /* must be 0: rank 0 has not entered yet */
            MPI_Send(&me, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
        CHECK(late == 0 || p == 1, "ibarrier completed early");
    }
    /* Comm_free while an I-collective on it is pending: it must still complete */
    {
        MPI_Comm d;
        MPI_Request r;
        int x = me + 1, y = 0;
        MPI_Comm_dup(MPI_COMM_WORLD, &d);
        MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, d, &r);
        MPI_Comm_free(&d);
        MPI_Status st;
        MPI_Wait(&r, &st);
        CHECK(y == p * (p + 1) / 2, "iallreduce on freed comm %d", y);
    }
    int tot;
    MPI_Allreduce(&errs, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0 && tot == 0)
        printf("No Errors\n");
    free(a);
    free(b);
    free(g);
    free(t);
    free(t2);
    MPI_Finalize();
    return tot != 0;
}
