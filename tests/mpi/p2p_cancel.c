/*
 * p2p_cancel.c - MPI_Cancel and MPI_Status_set_cancelled.
 *   Receives: a pending receive (named source, ANY_SOURCE, persistent) is cancelled:
 *   the request completes, Test_cancelled is true, a later message goes to the next
 *   receive.  Sends from rank 0 to rank 1 that rank 1 has not matched (it waits for a
 *   notice in MPI_Recv meanwhile) are cancelled, whatever their size and mode:
 *   eager, rendezvous, Issend, Ibsend, a started Send_init, and to oneself; rank 1
 *   then probes that none of them arrives.  A send that a receive already matched is
 *   not cancelled and its data arrives.  Needs 2 ranks or more (others only join).
 */
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

#define BIG (1 << 20)

static int cancelled(MPI_Status *s)
{
    int f = -1;
    MPI_Test_cancelled(s, &f);
    return f;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm comm = MPI_COMM_WORLD;
    MPI_Request r;
    MPI_Status s;
    char *big = malloc(BIG);
    memset(big, 7, BIG);

    /* Status_set_cancelled */
    memset(&s, 0, sizeof(s));
    MPI_Status_set_cancelled(&s, 1);
    TEST_ASSERT(cancelled(&s) == 1);
    MPI_Status_set_cancelled(&s, 0);
    TEST_ASSERT(cancelled(&s) == 0);

    MPI_Comm pair; /* ranks 0 and 1; its barrier's messages never match on comm */
    MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &pair);
    if (size >= 2 && rank < 2) {
        int peer = 1 - rank;
        int v = -1;
        /* receives */
        MPI_Irecv(&v, 1, MPI_INT, peer, 50, comm, &r);
        MPI_Cancel(&r);
        MPI_Wait(&r, &s);
        TEST_ASSERT(r == MPI_REQUEST_NULL && cancelled(&s) == 1);
        MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &r);
        MPI_Cancel(&r);
        int flag = 0;
        while (!flag)
            MPI_Test(&r, &flag, &s);
        TEST_ASSERT(cancelled(&s) == 1);
        MPI_Recv_init(&v, 1, MPI_INT, peer, 51, comm, &r);
        MPI_Start(&r);
        MPI_Cancel(&r);
        MPI_Wait(&r, &s);
        TEST_ASSERT(cancelled(&s) == 1);
        /* the peer's tag-51 send below must not reach the receives cancelled above (a
         * peer running ahead sent it before this rank posted them, and they matched) */
        MPI_Barrier(pair);
        /* the persistent request is inactive again and can be started for real */
        MPI_Start(&r);
        MPI_Send(&rank, 1, MPI_INT, peer, 51, comm);
        MPI_Wait(&r, &s);
        TEST_ASSERT(cancelled(&s) == 0 && v == peer);
        MPI_Request_free(&r);
    }
    if (pair != MPI_COMM_NULL)
        MPI_Comm_free(&pair);

    if (size >= 2 && rank == 0) {
        int one = 1;
        int bsize = 2 * (BIG + MPI_BSEND_OVERHEAD);
        char *bbuf = malloc((size_t)bsize);
        MPI_Buffer_attach(bbuf, bsize);
        /* tag 10+k: each of these is sent and cancelled before rank 1 may receive it */
        for (int k = 0; k < 8; k++) {
            int n = k % 2 ? BIG : 1;
            switch (k / 2) {
            case 0: MPI_Isend(big, n, MPI_CHAR, 1, 10 + k, comm, &r); break;
            case 1: MPI_Issend(big, n, MPI_CHAR, 1, 10 + k, comm, &r); break;
            case 2: MPI_Ibsend(big, n, MPI_CHAR, 1, 10 + k, comm, &r); break;
            default:
                MPI_Send_init(big, n, MPI_CHAR, 1, 10 + k, comm, &r);
                MPI_Start(&r);
                break;
            }
            MPI_Cancel(&r);
            MPI_Wait(&r, &s);
            TEST_ASSERT_MSG(cancelled(&s) == 1, "send %d (%d bytes) not cancelled", k, n);
            if (k / 2 == 3)
                MPI_Request_free(&r);
        }
        /* to myself */
        MPI_Isend(&one, 1, MPI_INT, 0, 30, comm, &r);
        MPI_Cancel(&r);
        MPI_Wait(&r, &s);
        TEST_ASSERT(cancelled(&s) == 1);
        int flag = 1;
        MPI_Iprobe(0, 30, comm, &flag, &s);
        TEST_ASSERT(flag == 0);
        MPI_Send(&one, 1, MPI_INT, 1, 99, comm); /* notice: probe now */
        /* matched before the cancel: not cancelled, delivered */
        MPI_Recv(&one, 1, MPI_INT, 1, 98, comm, &s); /* rank 1 posted its receives */
        MPI_Isend(big, BIG, MPI_CHAR, 1, 40, comm, &r);
        MPI_Request r2;
        MPI_Isend(&one, 1, MPI_INT, 1, 41, comm, &r2);
        MPI_Recv(&one, 1, MPI_INT, 1, 97, comm, &s); /* rank 1 has both */
        MPI_Cancel(&r);
        MPI_Cancel(&r2);
        MPI_Wait(&r, &s);
        TEST_ASSERT(cancelled(&s) == 0);
        MPI_Wait(&r2, &s);
        TEST_ASSERT(cancelled(&s) == 0);
        void *p;
        MPI_Buffer_detach(&p, &bsize);
        free(bbuf);
    } else if (size >= 2 && rank == 1) {
        int x;
        MPI_Recv(&x, 1, MPI_INT, 0, 99, comm, &s);
        for (int t = 10; t < 18; t++) {
            int flag = 1;
            MPI_Iprobe(0, t, comm, &flag, &s);
            TEST_ASSERT_MSG(flag == 0, "cancelled message with tag %d arrived", t);
        }
        char *in = malloc(BIG);
        memset(in, 0, BIG);
        MPI_Request rr[2];
        int y = 0;
        MPI_Irecv(in, BIG, MPI_CHAR, 0, 40, comm, &rr[0]);
        MPI_Irecv(&y, 1, MPI_INT, 0, 41, comm, &rr[1]);
        MPI_Send(&x, 1, MPI_INT, 0, 98, comm);
        MPI_Waitall(2, rr, MPI_STATUSES_IGNORE);
        MPI_Send(&x, 1, MPI_INT, 0, 97, comm);
        TEST_ASSERT(y == 1 && in[0] == 7 && in[BIG - 1] == 7);
        free(in);
    }
    MPI_Barrier(comm);
    if (size >= 2 && rank == 1) {
        for (int t = 10; t < 18; t++) {
            int flag = 1;
            MPI_Iprobe(0, t, comm, &flag, &s);
            TEST_ASSERT_MSG(flag == 0, "cancelled message with tag %d arrived late", t);
        }
    }
    free(big);
    return test_finish();
}
