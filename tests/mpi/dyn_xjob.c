/*
 * dyn_xjob.c - connect/accept between two jobs (two mpiexec runs) through a port name
 *   passed in a file: `dyn_xjob accept FILE` (job A: rank 0 opens a port and writes its
 *   name to FILE, everyone accepts) and `dyn_xjob connect FILE` (job B: waits for the
 *   file, everyone connects).  Both check the intercommunicator (remote size = the other
 *   job's world size, read from the other side), a message from every rank of A to a
 *   rank of B and one back, an intercommunicator broadcast each way, Intercomm_merge
 *   (A first), an allreduce on the merged communicator, a dup of the intercommunicator,
 *   a dup and a split of the merged one and a window over the dup (all carry the other
 *   job's traffic: core/xsec.c), allgather/bcast/reduce/allreduce/alltoall/barrier
 *   and nonblocking collectives on the merged communicator and its dup (jobs of
 *   different sizes on few cores: one is oversubscribed, the other not, and both
 *   must pick the same algorithms), then disconnect; A's rank 0 closes the port.
 *   Run by tests/mpi/dyn_xjob.sh; each job prints "No Errors".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpitest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 3 || (strcmp(argv[1], "accept") && strcmp(argv[1], "connect"))) {
        if (rank == 0)
            printf("usage: dyn_xjob accept|connect FILE\n");
        MPI_Finalize();
        return 2;
    }
    int acc = strcmp(argv[1], "accept") == 0;
    const char *file = argv[2];
    char port[MPI_MAX_PORT_NAME] = "";
    if (rank == 0 && acc) {
        TEST_ASSERT(MPI_Open_port(MPI_INFO_NULL, port) == MPI_SUCCESS);
        TEST_ASSERT_MSG(strncmp(port, "loom-port:2:", 12) == 0, "port \"%s\"", port);
        char tmp[4096];
        snprintf(tmp, sizeof(tmp), "%s.tmp", file);
        FILE *f = fopen(tmp, "w");
        TEST_ASSERT(f != NULL);
        if (f) {
            fprintf(f, "%s\n", port);
            fclose(f);
            TEST_ASSERT(rename(tmp, file) == 0);
        }
    } else if (rank == 0) {
        FILE *f = NULL;
        for (int i = 0; i < 600 && !f; i++) /* 30 s */
            if (!(f = fopen(file, "r")))
                usleep(50000);
        TEST_ASSERT_MSG(f != NULL, "no port name in %s", file);
        if (f) {
            if (!fgets(port, sizeof(port), f))
                port[0] = 0;
            port[strcspn(port, "\n")] = 0;
            fclose(f);
        }
    }
    MPI_Comm inter = MPI_COMM_NULL;
    int rc = acc ? MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter)
                 : MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter);
    TEST_ASSERT_MSG(rc == MPI_SUCCESS, "%s: %d", argv[1], rc);
    if (rc == MPI_SUCCESS) {
        int flag = 0, rs = -1, lsz = -1, theirs = -1;
        MPI_Comm_test_inter(inter, &flag);
        MPI_Comm_remote_size(inter, &rs);
        MPI_Comm_size(inter, &lsz);
        TEST_ASSERT(flag && lsz == size && rs >= 1);
        /* the other job's world size, from its root, by an intercommunicator bcast
         * each way (A's first) */
        int v = size;
        if (acc) {
            MPI_Bcast(&v, 1, MPI_INT, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter);
            MPI_Bcast(&theirs, 1, MPI_INT, 0, inter);
        } else {
            MPI_Bcast(&theirs, 1, MPI_INT, 0, inter);
            MPI_Bcast(&v, 1, MPI_INT, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter);
        }
        TEST_ASSERT_MSG(theirs == rs, "remote size %d, the other root says %d", rs, theirs);
        /* every rank of A sends to B's rank (r mod |B|), which answers */
        if (acc) {
            int dst = rank % rs, got = -1, out = 1000 + rank;
            MPI_Send(&out, 1, MPI_INT, dst, 5, inter);
            MPI_Recv(&got, 1, MPI_INT, dst, 6, inter, MPI_STATUS_IGNORE);
            TEST_ASSERT_MSG(got == 2000 + rank * 10 + dst, "answer %d", got);
        } else {
            for (int a = rank; a < rs; a += size) {
                int got = -1;
                MPI_Status st;
                MPI_Recv(&got, 1, MPI_INT, a, 5, inter, &st);
                TEST_ASSERT_MSG(got == 1000 + a && st.MPI_SOURCE == a, "from %d: %d", a, got);
                int out = 2000 + a * 10 + rank;
                MPI_Send(&out, 1, MPI_INT, a, 6, inter);
            }
        }
        /* a bigger message (rendezvous on TCP) from B's root to A's root */
        enum { BIG = 300000 };
        int *big = malloc(BIG * sizeof(int));
        if (big && rank == 0) {
            if (acc) {
                MPI_Recv(big, BIG, MPI_INT, 0, 7, inter, MPI_STATUS_IGNORE);
                int bad = 0;
                for (int i = 0; i < BIG; i++)
                    bad += big[i] != i * 3;
                TEST_ASSERT_MSG(bad == 0, "%d wrong elements", bad);
            } else {
                for (int i = 0; i < BIG; i++)
                    big[i] = i * 3;
                MPI_Send(big, BIG, MPI_INT, 0, 7, inter);
            }
        }
        free(big);
        MPI_Comm merged = MPI_COMM_NULL;
        TEST_ASSERT(MPI_Intercomm_merge(inter, !acc, &merged) == MPI_SUCCESS);
        int mr = -1, ms = -1, sum = -1;
        MPI_Comm_rank(merged, &mr);
        MPI_Comm_size(merged, &ms);
        TEST_ASSERT_MSG(ms == size + rs, "merged size %d", ms);
        TEST_ASSERT_MSG(mr == (acc ? rank : rs + rank), "merged rank %d", mr);
        MPI_Allreduce(&mr, &sum, 1, MPI_INT, MPI_SUM, merged);
        TEST_ASSERT_MSG(sum == ms * (ms - 1) / 2, "sum %d", sum);
        /* communicators derived from those spanning jobs, and a window over
         * one, carry the other job's traffic (core/xsec.c admits them); whichever job
         * makes each first sends on it before the other has it */
        MPI_Comm idup = MPI_COMM_NULL, mdup = MPI_COMM_NULL, half = MPI_COMM_NULL;
        TEST_ASSERT(MPI_Comm_dup(inter, &idup) == MPI_SUCCESS);
        if (acc) {
            int dst = rank % rs, got = -1, out = 3000 + rank;
            MPI_Send(&out, 1, MPI_INT, dst, 8, idup);
            MPI_Recv(&got, 1, MPI_INT, dst, 9, idup, MPI_STATUS_IGNORE);
            TEST_ASSERT_MSG(got == 4000 + rank, "idup answer %d", got);
        } else {
            for (int a = rank; a < rs; a += size) {
                int got = -1;
                MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 8, idup, MPI_STATUS_IGNORE);
                TEST_ASSERT_MSG(got >= 3000 && got < 3000 + rs, "idup got %d", got);
                int out = 4000 + (got - 3000);
                MPI_Send(&out, 1, MPI_INT, got - 3000, 9, idup);
            }
        }
        TEST_ASSERT(MPI_Comm_dup(merged, &mdup) == MPI_SUCCESS);
        TEST_ASSERT(MPI_Comm_split(mdup, mr % 2, mr, &half) == MPI_SUCCESS);
        int hr = -1, hs = -1, prev = -1;
        MPI_Comm_rank(half, &hr);
        MPI_Comm_size(half, &hs);
        MPI_Sendrecv(&mr, 1, MPI_INT, (hr + 1) % hs, 10, &prev, 1, MPI_INT, MPI_ANY_SOURCE,
                     10, half, MPI_STATUS_IGNORE);
        TEST_ASSERT_MSG(prev == mr % 2 + 2 * ((hr + hs - 1) % hs), "split ring got %d", prev);
        int hsum = -1;
        MPI_Allreduce(&mr, &hsum, 1, MPI_INT, MPI_SUM, half);
        TEST_ASSERT_MSG(hsum == hs * (mr % 2) + hs * (hs - 1), "split sum %d", hsum);
        int cell = -1;
        MPI_Win win;
        TEST_ASSERT(MPI_Win_create(&cell, sizeof(int), sizeof(int), MPI_INFO_NULL, mdup,
                                   &win) == MPI_SUCCESS);
        MPI_Win_fence(0, win);
        MPI_Put(&mr, 1, MPI_INT, (mr + 1) % ms, 0, 1, MPI_INT, win);
        MPI_Win_fence(0, win);
        TEST_ASSERT_MSG(cell == (mr + ms - 1) % ms, "window cell %d", cell);
        MPI_Win_free(&win);
        /* the collectives whose shape depends on oversubscription (which one job may
         * see and the other not): allgather, bcast, reduce, allreduce, alltoall,
         * barrier, nonblocking ones, on the merged communicator and its dup */
        MPI_Comm both[2] = {merged, mdup};
        for (int k = 0; k < 2; k++) {
            MPI_Comm m = both[k];
            int *all = malloc((size_t)ms * 2 * sizeof(int)), mine[2] = {mr, -mr};
            int *out = malloc((size_t)ms * sizeof(int)),
                *in = malloc((size_t)ms * sizeof(int));
            TEST_ASSERT(all && out && in);
            if (!all || !out || !in)
                break;
            MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, m);
            int bad = 0;
            for (int i = 0; i < ms; i++)
                bad += all[2 * i] != i || all[2 * i + 1] != -i;
            TEST_ASSERT_MSG(bad == 0, "allgather on %s: %d wrong", k ? "mdup" : "merged",
                            bad);
            int b = mr == ms - 1 ? 77 : -1;
            MPI_Bcast(&b, 1, MPI_INT, ms - 1, m);
            TEST_ASSERT_MSG(b == 77, "bcast %d", b);
            int rsum = -1;
            MPI_Reduce(&mr, &rsum, 1, MPI_INT, MPI_SUM, 1, m);
            if (mr == 1)
                TEST_ASSERT_MSG(rsum == ms * (ms - 1) / 2, "reduce %d", rsum);
            long big_in[64], big_out[64];
            for (int i = 0; i < 64; i++)
                big_in[i] = mr + i;
            MPI_Allreduce(big_in, big_out, 64, MPI_LONG, MPI_MAX, m);
            TEST_ASSERT_MSG(big_out[5] == ms - 1 + 5, "allreduce max %ld", big_out[5]);
            for (int i = 0; i < ms; i++)
                out[i] = 100 * mr + i;
            MPI_Alltoall(out, 1, MPI_INT, in, 1, MPI_INT, m);
            bad = 0;
            for (int i = 0; i < ms; i++)
                bad += in[i] != 100 * i + mr;
            TEST_ASSERT_MSG(bad == 0, "alltoall: %d wrong", bad);
            MPI_Barrier(m);
            MPI_Request rq[2];
            int nb = -1;
            MPI_Iallreduce(&mr, &nb, 1, MPI_INT, MPI_SUM, m, &rq[0]);
            MPI_Ibarrier(m, &rq[1]);
            MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
            TEST_ASSERT_MSG(nb == ms * (ms - 1) / 2, "iallreduce %d", nb);
            free(all);
            free(out);
            free(in);
        }
        MPI_Comm_free(&half);
        MPI_Comm_free(&mdup);
        MPI_Comm_free(&idup);
        MPI_Comm_free(&merged);
        TEST_ASSERT(MPI_Comm_disconnect(&inter) == MPI_SUCCESS);
        TEST_ASSERT(inter == MPI_COMM_NULL);
    }
    if (rank == 0 && acc)
        TEST_ASSERT(MPI_Close_port(port) == MPI_SUCCESS);
    return test_finish();
}
