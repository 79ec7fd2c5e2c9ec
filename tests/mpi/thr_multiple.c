/*
 * thr_multiple.c - MPI_THREAD_MULTIPLE: several threads per rank calling MPI at once.
 *   - Init_thread grants MULTIPLE; Query_thread says so; Is_thread_main is true only
 *     in the thread that initialized.
 *   - p2p: NT threads per rank each exchange checked messages with every rank
 *     (itself included), small and rendezvous-sized, with tag = thread.
 *   - a thread blocked in MPI_Recv from itself gets the message another thread sends
 *     later (the sender must wake the sleeping receiver).
 *   - collectives at once on per-thread duplicates of COMM_WORLD.
 *   - concurrent MPI_Comm_dup on different communicators: every new communicator
 *     must be distinct (checked with same-tag traffic on all of them at once).
 *   - a generalized request completed by another thread while the main thread waits.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpitest.h"

#define NT 4
#define ITERS 20
#define BIG (80 * 1024)

static int rank, size;
static MPI_Comm tcomm[NT];
static pthread_mutex_t fail_mu = PTHREAD_MUTEX_INITIALIZER;
static int fails;

#define CHECK(c, ...)                                                                    \
    do {                                                                                 \
        if (!(c)) {                                                                      \
            pthread_mutex_lock(&fail_mu);                                                \
            if (fails++ < 10) {                                                          \
                printf("rank %d: FAIL: line %d: %s: ", rank, __LINE__, #c);              \
                printf(__VA_ARGS__);                                                     \
                printf("\n");                                                            \
                fflush(stdout);                                                          \
            }                                                                            \
            pthread_mutex_unlock(&fail_mu);                                              \
        }                                                                                \
    } while (0)

static void *p2p_thread(void *arg)
{
    int t = (int)(long)arg;
    int flag = -1;
    MPI_Is_thread_main(&flag);
    CHECK(flag == 0, "Is_thread_main in a thread: %d", flag);
    int *sb = malloc(BIG), *rb = malloc((size_t)size * BIG);
    MPI_Request *rq = malloc(sizeof(MPI_Request) * 2 * (size_t)size);
    for (int it = 0; it < ITERS; it++) {
        int n = (it % 4 == 3) ? BIG / (int)sizeof(int) : 1 + it;
        for (int i = 0; i < n; i++)
            sb[i] = rank * 1000000 + t * 10000 + it * 10 + (i & 7);
        for (int p = 0; p < size; p++)
            MPI_Irecv(rb + (size_t)p * (BIG / sizeof(int)), n, MPI_INT, p, t, MPI_COMM_WORLD,
                      &rq[p]);
        for (int p = 0; p < size; p++) {
            if (it & 1)
                MPI_Isend(sb, n, MPI_INT, p, t, MPI_COMM_WORLD, &rq[size + p]);
            else {
                MPI_Send(sb, n, MPI_INT, p, t, MPI_COMM_WORLD);
                rq[size + p] = MPI_REQUEST_NULL;
            }
        }
        MPI_Waitall(2 * size, rq, MPI_STATUSES_IGNORE);
        for (int p = 0; p < size; p++) {
            int *r = rb + (size_t)p * (BIG / sizeof(int));
            for (int i = 0; i < n; i += (n > 64 ? 61 : 1))
                CHECK(r[i] == p * 1000000 + t * 10000 + it * 10 + (i & 7),
                      "thread %d iter %d from %d [%d] = %d", t, it, p, i, r[i]);
        }
    }
    free(rq);
    free(rb);
    free(sb);
    return NULL;
}

static void *self_sender(void *arg)
{
    (void)arg;
    usleep(50000); /* the main thread is asleep in MPI_Recv by now */
    int v = 4242 + rank;
    MPI_Send(&v, 1, MPI_INT, rank, 77, MPI_COMM_WORLD);
    return NULL;
}

static void *coll_thread(void *arg)
{
    int t = (int)(long)arg;
    MPI_Comm c = tcomm[t];
    for (int it = 0; it < ITERS; it++) {
        int in = rank + t + it, out = -1;
        MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, c);
        CHECK(out == size * (size - 1) / 2 + size * (t + it), "allreduce t%d it%d: %d", t,
              it, out);
        int b = rank == it % size ? 100 * t + it : -1;
        MPI_Bcast(&b, 1, MPI_INT, it % size, c);
        CHECK(b == 100 * t + it, "bcast t%d it%d: %d", t, it, b);
        MPI_Barrier(c);
    }
    return NULL;
}

static MPI_Comm dupped[NT][3];

static void *dup_thread(void *arg)
{
    int t = (int)(long)arg;
    for (int k = 0; k < 3; k++) {
        MPI_Comm_dup(k ? dupped[t][k - 1] : tcomm[t], &dupped[t][k]);
        int r = -1;
        MPI_Comm_rank(dupped[t][k], &r);
        CHECK(r == rank, "dup t%d k%d rank %d", t, k, r);
    }
    /* the same tag on every new communicator at once: a shared id would cross them */
    for (int k = 0; k < 3; k++) {
        int v = t * 10 + k, got = -1;
        int to = (rank + 1) % size, from = (rank + size - 1) % size;
        MPI_Sendrecv(&v, 1, MPI_INT, to, 5, &got, 1, MPI_INT, from, 5, dupped[t][k],
                     MPI_STATUS_IGNORE);
        CHECK(got == t * 10 + k, "dup traffic t%d k%d got %d", t, k, got);
    }
    return NULL;
}

static int q_fn(void *extra, MPI_Status *st)
{
    (void)extra;
    MPI_Status_set_elements(st, MPI_BYTE, 0);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}

static int f_fn(void *extra)
{
    (void)extra;
    return MPI_SUCCESS;
}

static int c_fn(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

static void *greq_completer(void *arg)
{
    usleep(30000);
    MPI_Grequest_complete(*(MPI_Request *)arg);
    return NULL;
}

static void run(void *(*fn)(void *))
{
    pthread_t th[NT];
    for (int t = 0; t < NT; t++)
        pthread_create(&th[t], NULL, fn, (void *)(long)t);
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
}

int main(int argc, char **argv)
{
    int provided = -1, q = -1, flag = -1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    TEST_ASSERT_MSG(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_Query_thread(&q);
    TEST_ASSERT_MSG(q == MPI_THREAD_MULTIPLE, "Query_thread %d", q);
    MPI_Is_thread_main(&flag);
    TEST_ASSERT_MSG(flag == 1, "Is_thread_main in main: %d", flag);
    if (provided != MPI_THREAD_MULTIPLE)
        return test_finish();

    run(p2p_thread);

    /* blocked in Recv from self; another thread sends later */
    pthread_t th;
    pthread_create(&th, NULL, self_sender, NULL);
    int v = -1;
    MPI_Recv(&v, 1, MPI_INT, rank, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    pthread_join(th, NULL);
    TEST_ASSERT_MSG(v == 4242 + rank, "self recv got %d", v);

    for (int t = 0; t < NT; t++)
        MPI_Comm_dup(MPI_COMM_WORLD, &tcomm[t]);
    run(coll_thread);
    run(dup_thread);
    for (int t = 0; t < NT; t++)
        for (int k = 0; k < 3; k++)
            MPI_Comm_free(&dupped[t][k]);

    /* a generalized request completed by another thread */
    MPI_Request g;
    MPI_Grequest_start(q_fn, f_fn, c_fn, NULL, &g);
    pthread_create(&th, NULL, greq_completer, &g);
    MPI_Request gw = g;
    MPI_Wait(&gw, MPI_STATUS_IGNORE);
    pthread_join(th, NULL);
    TEST_ASSERT(gw == MPI_REQUEST_NULL);

    for (int t = 0; t < NT; t++)
        MPI_Comm_free(&tcomm[t]);
    TEST_ASSERT_MSG(fails == 0, "%d failures in threads", fails);
    return test_finish();
}
