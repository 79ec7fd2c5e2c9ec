/*
 * thr_idup_order.c - MPI_Comm_idup from several threads on different parents when the
 *   ranks start the idups in different orders that depend on each other's completion.
 *   NT threads per rank, thread t on its own duplicate of MPI_COMM_WORLD (parents[t],
 *   made in order, so parents[0] has the lowest id).  Odd ranks start every idup at
 *   once; even ranks start the odd threads' idups first and the even threads' only
 *   after those completed.  So an odd rank has the idup of parents[0] in flight while
 *   the idups of parents[1], parents[3] must complete without it (the even ranks have
 *   not started it and will not before).  An id agreement that lets the lowest pending
 *   idup block the others (the order of keys being the same everywhere only for idups
 *   started everywhere) never completes here (MPICH's threads/comm/idup_deadlock).
 *   Every new communicator is checked (size, rank, a message round it), ITERS times.
 *   A watchdog ends the job with a message instead of hanging.
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "mpitest.h"

#define NT 4
#define ITERS 3
#define LIMIT_S 15

static int rank, size;
static MPI_Comm parents[NT];
static _Atomic int done_odd;  /* odd threads of this rank whose idup completed */
static _Atomic int finished;  /* the run is over: the watchdog stands down */
static _Atomic int errs;

static void *body(void *arg)
{
    int t = (int)(long)arg;
    if (rank % 2 == 0 && t % 2 == 0)
        while (done_odd < NT / 2)
            sched_yield(); /* no MPI call: a pure user-level dependency */
    MPI_Comm nc = MPI_COMM_NULL;
    MPI_Request req = MPI_REQUEST_NULL;
    int rc = MPI_Comm_idup(parents[t], &nc, &req);
    if (rc == MPI_SUCCESS)
        rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    if (t % 2 == 1)
        done_odd++;
    if (rc != MPI_SUCCESS || nc == MPI_COMM_NULL) {
        printf("rank %d thread %d: idup failed (rc %d)\n", rank, t, rc);
        errs++;
        return NULL;
    }
    int r = -1, s = -1;
    MPI_Comm_rank(nc, &r);
    MPI_Comm_size(nc, &s);
    if (r != rank || s != size) {
        printf("rank %d thread %d: new comm rank %d size %d\n", rank, t, r, s);
        errs++;
    }
    /* the new communicator carries traffic of its own: a ring shift */
    int out = rank * 100 + t, in = -1;
    MPI_Sendrecv(&out, 1, MPI_INT, (rank + 1) % size, t, &in, 1, MPI_INT,
                 (rank + size - 1) % size, t, nc, MPI_STATUS_IGNORE);
    if (in != ((rank + size - 1) % size) * 100 + t) {
        printf("rank %d thread %d: got %d\n", rank, t, in);
        errs++;
    }
    MPI_Comm_free(&nc);
    return NULL;
}

static void *watchdog(void *arg)
{
    (void)arg;
    for (int i = 0; i < LIMIT_S * 10 && !finished; i++)
        usleep(100000);
    if (!finished) {
        printf("rank %d: FAIL: idups still pending after %d s (deadlock)\n", rank, LIMIT_S);
        fflush(stdout);
        _exit(1);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    TEST_ASSERT_MSG(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    if (provided != MPI_THREAD_MULTIPLE)
        return test_finish();
    pthread_t wd;
    pthread_create(&wd, NULL, watchdog, NULL);
    for (int it = 0; it < ITERS; it++) {
        for (int t = 0; t < NT; t++)
            MPI_Comm_dup(MPI_COMM_WORLD, &parents[t]);
        done_odd = 0;
        pthread_t th[NT];
        for (int t = 0; t < NT; t++)
            pthread_create(&th[t], NULL, body, (void *)(long)t);
        for (int t = 0; t < NT; t++)
            pthread_join(th[t], NULL);
        for (int t = 0; t < NT; t++)
            MPI_Comm_free(&parents[t]);
    }
    finished = 1;
    pthread_join(wd, NULL);
    test_failures += errs; /* the threads count in errs: test_failed is not thread-safe */
    return test_finish();
}
