/*
 * p2p_large.c - large messages (rendezvous): a >= 64 MiB message both ways checked byte by
 *   byte, an unexpected large message (sent before the receive is posted), a large
 *   vector-typed receive, a large truncated receive with MPI_ERRORS_RETURN, and a large
 *   Issend that must not complete before the receive is posted.  Run with
 *   LOOM_SHM_LMT=cma and =copy to cover both transfer paths.  Ranks >= 2 only join the
 *   final barrier.  Size: LOOM_P2P_LARGE_MIB (default 64).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char pat(size_t i, int salt)
{
    return (unsigned char)((i * 131u) ^ (i >> 11) ^ (unsigned)salt);
}

static int check(const unsigned char *b, size_t n, int salt, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != pat(i, salt)) {
            printf("%s: byte %zu is %u, expected %u\n", what, i, b[i], pat(i, salt));
            return 1;
        }
    return 0;
}

int main(int argc, char **argv)
{
    int rank, size, errs = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *e = getenv("LOOM_P2P_LARGE_MIB");
    size_t n = (size_t)(e ? atoi(e) : 64) << 20;
    if (size >= 2 && rank < 2) {
        int peer = 1 - rank;
        unsigned char *a = malloc(n), *b = malloc(n);
        if (!a || !b) {
            printf("no memory\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        /* 1. both directions, receive posted first */
        for (size_t i = 0; i < n; i++)
            a[i] = pat(i, rank);
        memset(b, 0, n);
        MPI_Request rq[2];
        MPI_Status st;
        MPI_Irecv(b, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &rq[0]);
        MPI_Isend(a, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &rq[1]);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        errs += check(b, n, peer, "exchange");

        /* 2. unexpected: rank 0 sends a large then a small message; rank 1 receives the
         * small one first (other tag), so the large one's RTS waits in the matcher */
        int small = 7, got = 0, cnt = -1;
        if (rank == 0) {
            MPI_Isend(a, (int)n, MPI_BYTE, 1, 2, MPI_COMM_WORLD, &rq[0]);
            MPI_Isend(&small, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, &rq[1]);
            MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        } else {
            /* the small one can be received first (different tag) */
            MPI_Recv(&got, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            int flag = 0;
            while (!flag)
                MPI_Iprobe(0, 2, MPI_COMM_WORLD, &flag, &st);
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            if (got != 7 || cnt != (int)n) {
                printf("unexpected: got %d count %d\n", got, cnt);
                errs++;
            }
            memset(b, 0, n);
            MPI_Recv(b, (int)n, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &st);
            errs += check(b, n, 0, "unexpected");
        }

        /* 3. derived receive type: every other int of a 2n buffer */
        if (rank == 0) {
            MPI_Send(a, (int)(n / 4), MPI_INT, 1, 4, MPI_COMM_WORLD);
        } else {
            int *v = calloc(n / 2, sizeof(int));
            MPI_Datatype vt;
            MPI_Type_vector((int)(n / 4), 1, 2, MPI_INT, &vt);
            MPI_Type_commit(&vt);
            MPI_Recv(v, 1, vt, 0, 4, MPI_COMM_WORLD, &st);
            int *ref = (int *)a; /* rank 1's a holds pattern salt 1; rebuild salt 0 */
            for (size_t i = 0; i < n; i++)
                a[i] = pat(i, 0);
            for (size_t i = 0; i < n / 4; i++)
                if (v[2 * i] != ref[i] || v[2 * i + 1] != 0) {
                    printf("vector: element %zu wrong\n", i);
                    errs++;
                    break;
                }
            for (size_t i = 0; i < n; i++)
                a[i] = pat(i, 1);
            MPI_Type_free(&vt);
            free(v);
        }

        /* 4. truncation of a large message */
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        if (rank == 0) {
            MPI_Send(a, (int)n, MPI_BYTE, 1, 5, MPI_COMM_WORLD);
        } else {
            memset(b, 0, n);
            int rc = MPI_Recv(b, (int)(n / 2), MPI_BYTE, 0, 5, MPI_COMM_WORLD, &st);
            int cls = -1;
            MPI_Error_class(rc, &cls);
            if (cls != MPI_ERR_TRUNCATE || b[n / 2] != 0) {
                printf("truncation: class %d\n", cls);
                errs++;
            }
            errs += check(b, n / 2, 0, "truncated");
        }

        /* 5. a large Issend completes only once the receive is posted */
        if (rank == 0) {
            int flag = 0;
            MPI_Issend(a, (int)n, MPI_BYTE, 1, 6, MPI_COMM_WORLD, &rq[0]);
            for (int i = 0; i < 200 && !flag; i++)
                MPI_Test(&rq[0], &flag, MPI_STATUS_IGNORE);
            if (flag) {
                printf("large Issend completed before the receive was posted\n");
                errs++;
            }
            MPI_Send(&small, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
            if (!flag)
                MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&got, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Recv(b, (int)n, MPI_BYTE, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            errs += check(b, n, 0, "issend");
        }
        free(a);
        free(b);
    }
    int all = 0;
    MPI_Reduce(&errs, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (all)
            printf("Found %d errors\n", all);
        else
            printf("No Errors\n");
    }
    MPI_Finalize();
    return 0;
}
