/*
 * p2p_window.c - many large nonblocking messages outstanding in both directions at once:
 *   every rank pairs with its partner (rank ^ 1; a lone last rank sits out), posts a
 *   window of W receives and W sends of N bytes each way, then Waitall, for a few
 *   windows and two sizes (rendezvous: 128 KiB and 1 MiB), and checks every byte.
 *   Both ranks' rendezvous handshakes (RTS, CTS or CMA, RDATA, FIN) interleave.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

static unsigned char pattern(int from, int win, int i, size_t k)
{
    return (unsigned char)(from * 131 + win * 71 + i * 29 + (int)(k % 251));
}

/* peers[0..np-1]: the ranks this rank exchanges with (each sends to each) */
static void run(const int *peers, int np, int rank, size_t n, int w, int windows)
{
    size_t m = (size_t)w * (size_t)np;
    unsigned char *sb = malloc(n * m), *rb = malloc(n * m);
    MPI_Request *rq = malloc(sizeof(*rq) * 2 * m);
    TEST_ASSERT(sb && rb && rq);
    if (!sb || !rb || !rq)
        return;
    for (int win = 0; win < windows; win++) {
        for (size_t j = 0; j < m; j++)
            for (size_t k = 0; k < n; k++)
                sb[j * n + k] = pattern(rank, win, (int)(j % (size_t)w), k);
        memset(rb, 0xee, n * m);
        for (size_t j = 0; j < m; j++)
            MPI_Irecv(rb + j * n, (int)n, MPI_BYTE, peers[j / (size_t)w],
                      (int)(j % (size_t)w), MPI_COMM_WORLD, &rq[j]);
        for (size_t j = 0; j < m; j++)
            MPI_Isend(sb + j * n, (int)n, MPI_BYTE, peers[j / (size_t)w],
                      (int)(j % (size_t)w), MPI_COMM_WORLD, &rq[m + j]);
        MPI_Waitall((int)(2 * m), rq, MPI_STATUSES_IGNORE);
        int bad = 0;
        for (size_t j = 0; j < m && !bad; j++)
            for (size_t k = 0; k < n; k++)
                if (rb[j * n + k] != pattern(peers[j / (size_t)w], win, (int)(j % (size_t)w), k)) {
                    TEST_ASSERT_MSG(0, "n %zu window %d message %zu byte %zu: %d", n, win, j,
                                    k, rb[j * n + k]);
                    bad = 1;
                    break;
                }
    }
    free(sb);
    free(rb);
    free(rq);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int peer = rank ^ 1;
    if (peer < size) {
        run(&peer, 1, rank, 128 * 1024, 64, 3);
        run(&peer, 1, rank, 1024 * 1024, 16, 2);
        run(&peer, 1, rank, 200 * 1000 + 7, 32, 2);
    }
    /* everybody with everybody at once */
    int others[64], no = 0;
    for (int p = 0; p < size && no < 64; p++)
        if (p != rank)
            others[no++] = p;
    run(others, no, rank, 128 * 1024, 64 / (no ? no : 1), 2);
    return test_finish();
}
