/*
 * p2p_order.c - non-overtaking across transfer paths: every rank > 0 sends rank 0 a
 *   stream of messages whose sizes cycle through fastbox, multi-cell eager and
 *   rendezvous sizes, all with one tag; rank 0 receives them with MPI_ANY_SOURCE and
 *   checks per-sender order and contents.  Then the same with a nonblocking burst
 *   (Isend of everything, Irecv posted late so most arrive unexpected), and a
 *   synchronous send that must not complete before its receive is posted.  Phase 2
 *   mixes them: every third message is a small blocking MPI_Send issued while the
 *   Isends before it are still parked (one too big for the fastbox finds no free cell
 *   with small cells, a small one queues behind it), so it must queue behind them
 *   although the fastbox is free.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "mpitest.h"

#define NMSG 30

static int msg_len(int phase, int i)
{
    static const int lens[5] = {1, 300, 5000, 20000, 70000}; /* ints */
    /* phase 2: an Isend too big for a fastbox, a small Isend, then a small MPI_Send
     * (i % 3 == 2) */
    static const int lens2[6] = {1500, 1, 1, 70000, 1, 1};
    return phase == 2 ? lens2[i % 6] : lens[i % 5];
}

static int check(const int *b, int n, int src, int i)
{
    for (int k = 0; k < n; k++)
        if (b[k] != src * 1000003 + i * 7 + k)
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int maxn = 70000;
    for (int phase = 0; phase < 3; phase++) {
        if (rank != 0) {
            int **bufs = malloc(NMSG * sizeof(int *));
            MPI_Request *rq = malloc(NMSG * sizeof(MPI_Request));
            for (int i = 0; i < NMSG; i++) {
                int n = msg_len(phase, i);
                bufs[i] = malloc(sizeof(int) * (size_t)n);
                for (int k = 0; k < n; k++)
                    bufs[i][k] = rank * 1000003 + i * 7 + k;
                rq[i] = MPI_REQUEST_NULL;
                if (phase == 0 || (phase == 2 && i % 3 == 2))
                    MPI_Send(bufs[i], n, MPI_INT, 0, 5 + phase, MPI_COMM_WORLD);
                else
                    MPI_Isend(bufs[i], n, MPI_INT, 0, 5 + phase, MPI_COMM_WORLD, &rq[i]);
            }
            /* rendezvous sends finish only once matched: release rank 0 first */
            if (phase == 1)
                MPI_Barrier(MPI_COMM_WORLD);
            MPI_Waitall(NMSG, rq, MPI_STATUSES_IGNORE);
            for (int i = 0; i < NMSG; i++)
                free(bufs[i]);
            free(bufs);
            free(rq);
        } else {
            int *next = calloc((size_t)size, sizeof(int));
            int *b = malloc(sizeof(int) * (size_t)maxn);
            if (phase == 1)
                MPI_Barrier(MPI_COMM_WORLD); /* let the senders run ahead */
            if (phase == 2)
                usleep(20000); /* let the senders' first Isends park */
            for (int m = 0; m < NMSG * (size - 1); m++) {
                MPI_Status st;
                int cnt = 0;
                MPI_Recv(b, maxn, MPI_INT, MPI_ANY_SOURCE, 5 + phase, MPI_COMM_WORLD,
                         &st);
                MPI_Get_count(&st, MPI_INT, &cnt);
                int s = st.MPI_SOURCE, i = next[s]++;
                TEST_ASSERT_MSG(cnt == msg_len(phase, i) && !check(b, cnt, s, i),
                                "phase %d: from %d message %d: count %d (want %d)", phase,
                                s, i, cnt, msg_len(phase, i));
            }
            free(next);
            free(b);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }

    /* Issend completes only after the match */
    if (size >= 2 && rank < 2) {
        int v = 42, w = 0, go = 1, flag = 0;
        if (rank == 0) {
            MPI_Request r;
            MPI_Issend(&v, 1, MPI_INT, 1, 8, MPI_COMM_WORLD, &r);
            for (int i = 0; i < 200 && !flag; i++)
                MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
            TEST_ASSERT_MSG(!flag, "Issend completed before the receive was posted");
            MPI_Send(&go, 1, MPI_INT, 1, 9, MPI_COMM_WORLD);
            if (!flag)
                MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&go, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Recv(&w, 1, MPI_INT, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            TEST_ASSERT(w == 42);
        }
    }
    return test_finish();
}
