/*
 * comm_idup_inter.c - MPI_Comm_idup must not wait for the other members, on an
 *   intracommunicator and on an intercommunicator: the group leaders first receive
 *   a synchronous send from every other member (who started their idup before
 *   sending), only then start theirs.  An idup that blocked until everyone had called
 *   it deadlocks here.  Then idups of an intercommunicator and of MPI_COMM_WORLD in
 *   flight at once, started in opposite orders by the two groups.  Every new
 *   communicator must work: an Allreduce (the other group's sum on an
 *   intercommunicator) and a message with the same tag on each.  Needs 4 ranks or more
 *   (a group of 2 or more on each side).
 */
#include <stdlib.h>

#include "mpitest.h"

static void check_inter(MPI_Comm ic, int salt)
{
    int flag = 0, lrank, lsize, rsize, sum = -1;
    MPI_Comm_test_inter(ic, &flag);
    TEST_ASSERT_MSG(flag, "salt %d: not an intercommunicator", salt);
    if (!flag)
        return;
    MPI_Comm_rank(ic, &lrank);
    MPI_Comm_size(ic, &lsize);
    MPI_Comm_remote_size(ic, &rsize);
    MPI_Allreduce(&lrank, &sum, 1, MPI_INT, MPI_SUM, ic);
    TEST_ASSERT_MSG(sum == rsize * (rsize - 1) / 2, "salt %d: remote sum %d (size %d)",
                    salt, sum, rsize);
    /* local rank i and remote rank i swap a message with the same tag as others */
    if (lrank < rsize) {
        int out = salt * 1000 + lrank, in = -1;
        MPI_Sendrecv(&out, 1, MPI_INT, lrank, 7, &in, 1, MPI_INT, lrank, 7, ic,
                     MPI_STATUS_IGNORE);
        TEST_ASSERT_MSG(in == salt * 1000 + lrank, "salt %d: got %d", salt, in);
    }
    (void)lsize;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 4) {
        if (rank == 0)
            printf("needs 4 ranks or more\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int buf[2];
    MPI_Request rq;

    /* 1. intracommunicator: rank 0 idups after everyone else's Ssend arrived */
    MPI_Comm dup = MPI_COMM_NULL;
    if (rank == 0) {
        for (int i = 1; i < size; i++) {
            MPI_Recv(buf, 2, MPI_INT, i, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            TEST_ASSERT(buf[0] == i && buf[1] == -i);
        }
        MPI_Comm_idup(MPI_COMM_WORLD, &dup, &rq);
    } else {
        MPI_Comm_idup(MPI_COMM_WORLD, &dup, &rq);
        buf[0] = rank;
        buf[1] = -rank;
        MPI_Ssend(buf, 2, MPI_INT, 0, 0, MPI_COMM_WORLD);
    }
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    int sum = -1;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, dup);
    TEST_ASSERT_MSG(sum == size * (size - 1) / 2, "sum %d", sum);
    MPI_Comm_free(&dup);

    /* 2. intercommunicator between even and odd ranks; the odd group makes one more
     * communicator first, so the two groups' free ids differ */
    MPI_Comm local, ic, stagger = MPI_COMM_NULL, nic = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, rank == 0 ? 1 : 0, 99, &ic);
    if (rank % 2)
        MPI_Comm_dup(local, &stagger);
    int lrank, lsize, rsize;
    MPI_Comm_rank(ic, &lrank);
    MPI_Comm_size(ic, &lsize);
    MPI_Comm_remote_size(ic, &rsize);
    if (lrank == 0) {
        for (int i = 1; i < rsize; i++) {
            MPI_Recv(buf, 2, MPI_INT, i, 0, ic, MPI_STATUS_IGNORE);
            TEST_ASSERT(buf[0] == i && buf[1] == -i);
        }
        MPI_Comm_idup(ic, &nic, &rq);
    } else {
        MPI_Comm_idup(ic, &nic, &rq);
        buf[0] = lrank;
        buf[1] = -lrank;
        MPI_Ssend(buf, 2, MPI_INT, 0, 0, ic);
    }
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    TEST_ASSERT(nic != MPI_COMM_NULL);
    if (nic != MPI_COMM_NULL) {
        int res = MPI_UNEQUAL;
        MPI_Comm_compare(ic, nic, &res);
        TEST_ASSERT_MSG(res == MPI_CONGRUENT, "compare gives %d", res);
        check_inter(nic, 1);
        MPI_Comm_free(&nic);
    }

    /* 3. idups of ic and of MPI_COMM_WORLD in flight together, opposite orders */
    MPI_Comm a = MPI_COMM_NULL, b = MPI_COMM_NULL;
    MPI_Request two[2];
    if (rank % 2) {
        MPI_Comm_idup(ic, &a, &two[0]);
        MPI_Comm_idup(MPI_COMM_WORLD, &b, &two[1]);
    } else {
        MPI_Comm_idup(MPI_COMM_WORLD, &b, &two[1]);
        MPI_Comm_idup(ic, &a, &two[0]);
    }
    MPI_Waitall(2, two, MPI_STATUSES_IGNORE);
    TEST_ASSERT(a != MPI_COMM_NULL && b != MPI_COMM_NULL);
    if (a != MPI_COMM_NULL && b != MPI_COMM_NULL) {
        /* the same tag on both new communicators and the old ones */
        int x = rank, y = -1, z = -1;
        int peer = rank ^ 1;
        if (peer < size) {
            MPI_Request r4[4];
            MPI_Irecv(&y, 1, MPI_INT, peer, 5, b, &r4[0]);
            MPI_Irecv(&z, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, &r4[1]);
            MPI_Isend(&x, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, &r4[2]);
            int x2 = x + 100;
            MPI_Isend(&x2, 1, MPI_INT, peer, 5, b, &r4[3]);
            MPI_Waitall(4, r4, MPI_STATUSES_IGNORE);
            TEST_ASSERT_MSG(z == peer && y == peer + 100, "got %d and %d", z, y);
        }
        MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, b);
        TEST_ASSERT_MSG(sum == size * (size - 1) / 2, "sum %d", sum);
        check_inter(a, 2);
        MPI_Comm_free(&a);
        MPI_Comm_free(&b);
    }
    if (stagger != MPI_COMM_NULL)
        MPI_Comm_free(&stagger);
    MPI_Comm_free(&ic);
    MPI_Comm_free(&local);
    return test_finish();
}
