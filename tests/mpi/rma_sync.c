/*
 * rma_sync.c - passive and generalized active target synchronization: exclusive and
 *   shared locks (mutual exclusion checked with a read-modify-write that a lost
 *   update would show), lock_all with flush/flush_local/flush_all, a target that
 *   computes inside MPI calls only (passive progress while it waits in a barrier),
 *   PSCW (post/start/complete/wait and Win_test) with subgroups, request-based
 *   operations (Rput/Rget/Raccumulate/Rget_accumulate), Win_sync.
 */
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

#define ROUNDS 20

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    int *mem;
    MPI_Win win;
    MPI_Win_allocate(64 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    memset(mem, 0, 64 * sizeof(int));
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- exclusive locks: get, +1, put under the lock; a lost update shows ---- */
    for (int r = 0; r < ROUNDS; r++) {
        int v;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Get(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
        MPI_Win_flush(0, win);
        v++;
        MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        TEST_ASSERT_MSG(mem[0] == ROUNDS * size, "counter %d, want %d", mem[0], ROUNDS * size);
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- shared locks + accumulate, flush_local, flush ---- */
    int one = 1, got = -1;
    MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
    MPI_Accumulate(&one, 1, MPI_INT, right, 1, 1, MPI_INT, MPI_SUM, win);
    MPI_Win_flush_local(right, win);
    MPI_Win_flush(right, win);
    MPI_Get(&got, 1, MPI_INT, right, 1, 1, MPI_INT, win);
    MPI_Win_unlock(right, win);
    TEST_ASSERT_MSG(got >= 1, "got %d", got);
    MPI_Barrier(MPI_COMM_WORLD);
    TEST_ASSERT(mem[1] == 1);

    /* ---- lock_all: everybody writes its rank into slot 2+rank of every rank ---- */
    MPI_Win_lock_all(0, win);
    for (int t = 0; t < size && 2 + rank < 64; t++)
        MPI_Put(&rank, 1, MPI_INT, t, 2 + rank, 1, MPI_INT, win);
    MPI_Win_flush_all(win);
    MPI_Win_flush_local_all(win);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(win);
    for (int s = 0; s < size && 2 + s < 64; s++)
        TEST_ASSERT_MSG(mem[2 + s] == s, "slot %d holds %d", 2 + s, mem[2 + s]);
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- passive progress: rank 0 sits in a barrier while the others lock it ---- */
    if (rank != 0) {
        int v = 100 + rank;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Put(&v, 1, MPI_INT, 0, 40, 1, MPI_INT, win);
        MPI_Win_unlock(0, win);
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        MPI_Get(&got, 1, MPI_INT, 0, 40, 1, MPI_INT, win);
        MPI_Win_unlock(0, win);
        TEST_ASSERT(got >= 101 && got < 100 + size);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- request-based operations inside lock_all ---- */
    int vals[4] = {rank, rank + 1, rank + 2, rank + 3}, back[4] = {0}, res[4] = {0};
    MPI_Request rq[4];
    MPI_Win_lock_all(0, win);
    MPI_Rput(vals, 4, MPI_INT, right, 48, 4, MPI_INT, win, &rq[0]);
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    MPI_Win_flush(right, win);
    MPI_Rget(back, 4, MPI_INT, right, 48, 4, MPI_INT, win, &rq[1]);
    MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
    for (int i = 0; i < 4; i++)
        TEST_ASSERT(back[i] == rank + i);
    MPI_Raccumulate(vals, 4, MPI_INT, right, 48, 4, MPI_INT, MPI_SUM, win, &rq[2]);
    MPI_Rget_accumulate(vals, 4, MPI_INT, res, 4, MPI_INT, right, 48, 4, MPI_INT, MPI_SUM, win,
                        &rq[3]);
    MPI_Waitall(2, &rq[2], MPI_STATUSES_IGNORE);
    for (int i = 0; i < 4; i++)
        TEST_ASSERT_MSG(res[i] == 2 * (rank + i), "res[%d]=%d", i, res[i]);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < 4; i++)
        TEST_ASSERT(mem[48 + i] == 3 * (left + i));
    MPI_Win_free(&win);

    /* ---- PSCW: even ranks expose to the odd rank after them; odd ranks access ---- */
    int *pm;
    MPI_Win_allocate(8 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &pm, &win);
    memset(pm, 0, 8 * sizeof(int));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Group world, g;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    for (int round = 0; round < 3; round++) {
        if (rank % 2 == 0 && rank + 1 < size) {
            int peer = rank + 1;
            MPI_Group_incl(world, 1, &peer, &g);
            MPI_Win_post(g, 0, win);
            if (round == 1) {
                int flag = 0;
                while (!flag)
                    MPI_Win_test(win, &flag);
            } else {
                MPI_Win_wait(win);
            }
            TEST_ASSERT_MSG(pm[round] == peer * 10 + round, "round %d pm %d", round, pm[round]);
            MPI_Group_free(&g);
        } else if (rank % 2 == 1) {
            int peer = rank - 1, v = rank * 10 + round;
            MPI_Group_incl(world, 1, &peer, &g);
            MPI_Win_start(g, 0, win);
            MPI_Put(&v, 1, MPI_INT, peer, round, 1, MPI_INT, win);
            MPI_Win_complete(win);
            MPI_Group_free(&g);
        }
    }
    /* all-to-one: every rank accesses rank 0, which exposes to everybody */
    if (rank == 0) {
        int zero = 0;
        MPI_Group_incl(world, 1, &zero, &g);
        MPI_Win_post(world, 0, win);
        MPI_Win_start(g, 0, win);
        MPI_Group_free(&g);
        MPI_Accumulate(&one, 1, MPI_INT, 0, 7, 1, MPI_INT, MPI_SUM, win);
        MPI_Win_complete(win);
        MPI_Win_wait(win);
        TEST_ASSERT_MSG(pm[7] == size, "pm[7]=%d", pm[7]);
    } else {
        int zero = 0;
        MPI_Group_incl(world, 1, &zero, &g);
        MPI_Win_start(g, 0, win);
        MPI_Accumulate(&one, 1, MPI_INT, 0, 7, 1, MPI_INT, MPI_SUM, win);
        MPI_Win_complete(win);
        MPI_Group_free(&g);
    }
    MPI_Group_free(&world);
    MPI_Win_free(&win);
    return test_finish();
}
