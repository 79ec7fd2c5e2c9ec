/*
 * p2p_coop.c - large messages between ranks of one node, where sender and receiver
 *   share the copy (mpi/shm/lmt.c): sizes around the chunk edges checked byte by byte,
 *   a receive buffer that must stay untouched once its receive completed (no late write
 *   by the helper), both directions at once, a window of outstanding sends, an
 *   unexpected large message, a derived send type (packed copy) and a derived receive
 *   type (receiver copies alone), a truncated receive, and with 3 or more ranks several
 *   senders into MPI_ANY_SOURCE receives.  Run with LOOM_MPI_DEBUG=1 so that the
 *   testlist can check (grep=) that copies were shared; LOOM_MPI_COOP_FAULT=1 covers a
 *   helper that gives its chunk back.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int errs, wrank;

/* ASSERT_TRUE(condition that must hold, message...): a failure is printed and counted;
 * any failure keeps rank 0 from printing "No Errors", which runtests requires. */
#define ASSERT_TRUE(cond, ...)                                                           \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            if (errs++ < 10) {                                                           \
                printf("[%d] %s:%d: ", wrank, __FILE__, __LINE__);                       \
                printf(__VA_ARGS__);                                                     \
                putchar('\n');                                                           \
            }                                                                            \
        }                                                                                \
    } while (0)

static unsigned char pat(size_t i, int salt)
{
    return (unsigned char)((i * 167u) ^ (i >> 13) ^ (unsigned)(salt * 29));
}

static void fill(unsigned char *b, size_t n, int salt)
{
    for (size_t i = 0; i < n; i++)
        b[i] = pat(i, salt);
}

/* index of the first byte of b[0..n) that differs from the pattern, or n */
static size_t first_bad(const unsigned char *b, size_t n, int salt)
{
    size_t i = 0;
    while (i < n && b[i] == pat(i, salt))
        i++;
    return i;
}

static void check(const unsigned char *b, size_t n, int salt, const char *what, size_t sz)
{
    size_t i = first_bad(b, n, salt);
    ASSERT_TRUE(i == n, "%s (%zu bytes): byte %zu is %u, expected %u", what, sz, i,
                i < n ? b[i] : 0, i < n ? pat(i, salt) : 0);
}

static void check_const(const unsigned char *b, size_t n, unsigned char v,
                        const char *what)
{
    size_t i = 0;
    while (i < n && b[i] == v)
        i++;
    ASSERT_TRUE(i == n,
                "%s: byte %zu is %u, expected %u (written after the receive completed?)",
                what, i, i < n ? b[i] : 0, v);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    wrank = rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const size_t big = 9u << 20;
    unsigned char *a = malloc(big), *b = malloc(big);
    if (!a || !b)
        MPI_Abort(MPI_COMM_WORLD, 2);

    MPI_Comm pair; /* ranks 0 and 1: their barriers leave the others out */
    MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &pair);
    if (rank < 2 && size >= 2) {
        int peer = 1 - rank;
        /* 1. sizes around the chunk edges, both ways, blocking */
        static const size_t sizes[] = {
            131072,         131073,  300001, 1u << 20, (1u << 20) + 4097,
            (5u << 20) - 3, 9u << 20};
        for (int dir = 0; dir < 2; dir++)
            for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
                size_t n = sizes[k];
                int salt = (int)k + 10 * dir;
                if (rank == dir) {
                    fill(a, n, salt);
                    MPI_Send(a, (int)n, MPI_BYTE, peer, (int)k, MPI_COMM_WORLD);
                    MPI_Barrier(pair);
                } else {
                    MPI_Status st;
                    int cnt = -1;
                    memset(b, 0, n);
                    MPI_Recv(b, (int)n, MPI_BYTE, peer, (int)k, MPI_COMM_WORLD, &st);
                    MPI_Get_count(&st, MPI_BYTE, &cnt);
                    ASSERT_TRUE((size_t)cnt == n, "size %zu: count %d", n, cnt);
                    check(b, n, salt, "blocking", n);
                    /* the buffer is ours again: nothing may write into it any more */
                    memset(b, 0xEE, n);
                    MPI_Barrier(pair);
                    check_const(b, n, 0xEE, "after completion");
                }
            }

        /* 2. both directions at once, 3 MiB + 5 */
        {
            size_t n = (3u << 20) + 5;
            fill(a, n, 40 + rank);
            memset(b, 0, n);
            MPI_Request rq[2];
            MPI_Irecv(b, (int)n, MPI_BYTE, peer, 7, MPI_COMM_WORLD, &rq[0]);
            MPI_Isend(a, (int)n, MPI_BYTE, peer, 7, MPI_COMM_WORLD, &rq[1]);
            MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
            check(b, n, 40 + peer, "exchange", n);
        }

        /* 3. a window of 8 outstanding sends of 512 KiB + 1 */
        {
            enum { W = 8 };
            size_t n = (512u << 10) + 1;
            MPI_Request rq[W];
            for (int i = 0; i < W; i++) {
                if (rank == 0) {
                    fill(a + (size_t)i * n, n, 50 + i);
                    MPI_Isend(a + (size_t)i * n, (int)n, MPI_BYTE, 1, 8, MPI_COMM_WORLD,
                              &rq[i]);
                } else {
                    memset(b + (size_t)i * n, 0, n);
                    MPI_Irecv(b + (size_t)i * n, (int)n, MPI_BYTE, 0, 8, MPI_COMM_WORLD,
                              &rq[i]);
                }
            }
            MPI_Waitall(W, rq, MPI_STATUSES_IGNORE);
            if (rank == 1)
                for (int i = 0; i < W; i++)
                    check(b + (size_t)i * n, n, 50 + i, "window", n);
        }

        /* 4. unexpected: the RTS waits until the receive is posted */
        {
            size_t n = 2u << 20;
            MPI_Request rq = MPI_REQUEST_NULL;
            if (rank == 0) {
                fill(a, n, 60);
                MPI_Isend(a, (int)n, MPI_BYTE, 1, 9, MPI_COMM_WORLD, &rq);
                MPI_Barrier(pair);
                MPI_Wait(&rq, MPI_STATUS_IGNORE);
            } else {
                MPI_Barrier(pair);
                memset(b, 0, n);
                MPI_Recv(b, (int)n, MPI_BYTE, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                check(b, n, 60, "unexpected", n);
            }
        }

        /* 5. derived send type (every other int of 2 x 256 Ki ints): sent from a packed
         *    copy; 6. derived receive type: the receiver copies alone */
        {
            MPI_Datatype vec;
            int cnt = 256 << 10;
            MPI_Type_vector(cnt, 1, 2, MPI_INT, &vec);
            MPI_Type_commit(&vec);
            int *ia = (int *)a, *ib = (int *)b;
            if (rank == 0) {
                for (int i = 0; i < 2 * cnt; i++)
                    ia[i] = i;
                MPI_Send(ia, 1, vec, 1, 10, MPI_COMM_WORLD);
                MPI_Send(ia, cnt, MPI_INT, 1, 11, MPI_COMM_WORLD);
            } else {
                memset(ib, 0xff, (size_t)cnt * 2 * sizeof(int));
                MPI_Recv(ib, cnt, MPI_INT, 0, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                int i = 0;
                while (i < cnt && ib[i] == 2 * i)
                    i++;
                ASSERT_TRUE(i == cnt, "vector send: int %d is %d, expected %d", i,
                            i < cnt ? ib[i] : 0, 2 * i);
                memset(ib, 0xff, (size_t)cnt * 2 * sizeof(int));
                MPI_Recv(ib, 1, vec, 0, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                i = 0;
                while (i < cnt && ib[2 * i] == i && ib[2 * i + 1] == -1)
                    i++;
                ASSERT_TRUE(i == cnt,
                            "vector receive: ints %d,%d are %d,%d, expected %d,-1", 2 * i,
                            2 * i + 1, i < cnt ? ib[2 * i] : 0,
                            i < cnt ? ib[2 * i + 1] : 0, i);
            }
            MPI_Type_free(&vec);
        }

        /* 7. truncated: 2 MiB into a 1 MiB + 3 buffer */
        {
            size_t n = 2u << 20, have = (1u << 20) + 3;
            if (rank == 0) {
                fill(a, n, 70);
                MPI_Send(a, (int)n, MPI_BYTE, 1, 12, MPI_COMM_WORLD);
            } else {
                MPI_Status st;
                memset(b, 0, n);
                int rc = MPI_Recv(b, (int)have, MPI_BYTE, 0, 12, MPI_COMM_WORLD, &st);
                int cls = -1;
                MPI_Error_class(rc, &cls);
                ASSERT_TRUE(
                    cls == MPI_ERR_TRUNCATE,
                    "truncated receive: error class %d, expected MPI_ERR_TRUNCATE", cls);
                check(b, have, 70, "truncated", have);
                check_const(b + have, n - have, 0, "beyond the truncated buffer");
            }
        }
    }
    if (pair != MPI_COMM_NULL)
        MPI_Comm_free(&pair);
    MPI_Barrier(MPI_COMM_WORLD);

    /* 8. every other rank sends 1 MiB + its rank to rank 0 (MPI_ANY_SOURCE) */
    if (size >= 3) {
        size_t n = (1u << 20) + 7;
        if (rank == 0) {
            unsigned char *c = malloc(n + (size_t)size);
            if (!c)
                MPI_Abort(MPI_COMM_WORLD, 2);
            for (int i = 1; i < size; i++) {
                MPI_Status st;
                int cnt = -1;
                MPI_Recv(c, (int)(n + (size_t)size), MPI_BYTE, MPI_ANY_SOURCE, 13,
                         MPI_COMM_WORLD, &st);
                MPI_Get_count(&st, MPI_BYTE, &cnt);
                ASSERT_TRUE((size_t)cnt == n + (size_t)st.MPI_SOURCE,
                            "any source: count %d from rank %d", cnt, st.MPI_SOURCE);
                check(c, n + (size_t)st.MPI_SOURCE, 80 + st.MPI_SOURCE, "any source",
                      n + (size_t)st.MPI_SOURCE);
            }
            free(c);
        } else {
            fill(a, n + (size_t)rank, 80 + rank);
            MPI_Send(a, (int)(n + (size_t)rank), MPI_BYTE, 0, 13, MPI_COMM_WORLD);
        }
    }

    int all = 0;
    MPI_Reduce(&errs, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf("No Errors\n");
    free(a);
    free(b);
    MPI_Finalize();
    return all != 0;
}
