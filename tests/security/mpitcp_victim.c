/*
 * mpitcp_victim.c - a Loom MPI job that keeps exchanging checked messages while an
 *                   intruder (mpitcp_intruder.c) attacks rank 0's TCP listener.
 *
 * Contract: run with >= 2 ranks, LOOM_MPI_NETMOD=tcp.  For MPITCP_SECONDS (default 6)
 *   rank 1 sends rank 0 messages of 8 B, 4 KiB, 64 KiB and 1 MiB (eager, zero-copy
 *   eager and rendezvous over TCP) whose every byte is a function of (sequence number,
 *   offset); rank 0 receives them with MPI_ANY_SOURCE, so a message from anyone else
 *   would be matched too, checks source, tag, length and every byte, and answers with
 *   the sequence number.  Ranks >= 2 stay silent (no connection to rank 0) until the
 *   end, then each sends rank 0 a "done" message: a new connection that must get
 *   through whatever the intruder left at rank 0's listener.  Rank 0 also receives
 *   ANY_SOURCE on the intruder's favourite tags at the end (MPI_Iprobe): nothing may be
 *   there.  Rank 0 writes its pid to $MPITCP_PIDFILE (if set) once MPI_Init returned,
 *   and prints "No Errors" when every check held; any failed check prints "FAIL: ..."
 *   and exits 1.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TAG_DATA 7
#define TAG_ACK 8
#define TAG_DONE 9
#define MAXLEN (1 << 20)

static unsigned char byte_at(unsigned seq, size_t off)
{
    return (unsigned char)(seq * 131u + off * 7u + (off >> 8) + 1u);
}

static int fails;

#define FAIL(...)                                                                        \
    do {                                                                                 \
        printf("FAIL: " __VA_ARGS__);                                                    \
        printf("\n");                                                                    \
        fflush(stdout);                                                                  \
        fails++;                                                                         \
    } while (0)

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *ss = getenv("MPITCP_SECONDS");
    double secs = ss ? atof(ss) : 6.0;
    static const int lens[] = {8, 4096, 65536, MAXLEN};
    unsigned char *buf = malloc(MAXLEN + 16);
    if (!buf || size < 2) {
        printf("FAIL: needs 2 ranks and memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rank == 0) {
        const char *pf = getenv("MPITCP_PIDFILE");
        if (pf) {
            char tmp[4096];
            snprintf(tmp, sizeof(tmp), "%s.tmp", pf);
            FILE *f = fopen(tmp, "w");
            if (f) {
                fprintf(f, "%ld\n", (long)getpid());
                fclose(f);
                rename(tmp, pf);
            }
        }
    }
    /* ranks 0 and 1: the checked exchange; rank 1 decides when it ends (len 0) */
    unsigned seq = 0, nmsg = 0;
    double t0 = MPI_Wtime();
    if (rank == 1) {
        for (;; seq++) {
            int last = MPI_Wtime() - t0 > secs;
            int len = last ? 0 : lens[seq % 4];
            for (int i = 0; i < len; i++)
                buf[i] = byte_at(seq, (size_t)i);
            MPI_Send(buf, len, MPI_UNSIGNED_CHAR, 0, TAG_DATA, MPI_COMM_WORLD);
            unsigned got = ~0u;
            MPI_Recv(&got, 1, MPI_UNSIGNED, 0, TAG_ACK, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            if (got != seq)
                FAIL("rank 1: ack %u for message %u", got, seq);
            if (last)
                break;
        }
    } else if (rank == 0) {
        for (;; seq++) {
            MPI_Status st;
            memset(buf, 0, 16);
            MPI_Recv(buf, MAXLEN + 16, MPI_UNSIGNED_CHAR, MPI_ANY_SOURCE, TAG_DATA,
                     MPI_COMM_WORLD, &st);
            int n = -1;
            MPI_Get_count(&st, MPI_UNSIGNED_CHAR, &n);
            if (st.MPI_SOURCE != 1) {
                FAIL("rank 0: message %u came from rank %d (%d bytes): forged", seq,
                     st.MPI_SOURCE, n);
                continue;
            }
            int want = lens[seq % 4];
            if (n != 0 && n != want)
                FAIL("rank 0: message %u has %d bytes, expected %d", seq, n, want);
            for (int i = 0; i < n && i < want; i++)
                if (buf[i] != byte_at(seq, (size_t)i)) {
                    FAIL("rank 0: message %u byte %d is %u, expected %u", seq, i, buf[i],
                         byte_at(seq, (size_t)i));
                    break;
                }
            MPI_Send(&seq, 1, MPI_UNSIGNED, 1, TAG_ACK, MPI_COMM_WORLD);
            nmsg++;
            if (n == 0)
                break;
        }
        for (int r = 2; r < size; r++) {
            int v = -1;
            MPI_Status st;
            MPI_Recv(&v, 1, MPI_INT, r, TAG_DONE, MPI_COMM_WORLD, &st);
            if (v != r * 1000 + 1)
                FAIL("rank 0: done message of rank %d says %d", r, v);
        }
        int flag = 0;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        if (flag)
            FAIL("rank 0: an unexpected message from rank %d tag %d is waiting",
                 st.MPI_SOURCE, st.MPI_TAG);
    } else {
        /* silent until rank 1 is done: sleep outside MPI, then a new connection */
        while (MPI_Wtime() - t0 < secs + 0.5)
            usleep(50000);
        int v = rank * 1000 + 1;
        MPI_Send(&v, 1, MPI_INT, 0, TAG_DONE, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0 && !fails)
        printf("mpitcp_victim: %u messages checked\nNo Errors\n", nmsg);
    free(buf);
    MPI_Finalize();
    return fails ? 1 : 0;
}
