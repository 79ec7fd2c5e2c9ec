/*
 * thr_mprobe.c - matched probes under MPI_THREAD_MULTIPLE: NT threads per rank each
 *   send ITERS messages to the next rank in a ring and take ITERS from the previous one
 *   with MPI_Improbe (even threads: polled, then MPI_Mrecv) or MPI_Mprobe (odd threads:
 *   then MPI_Imrecv + MPI_Wait), all at once.
 *   - per-thread tags, sizes cycling through one int, several packets (eager) and
 *     rendezvous: every element is checked, and the envelope of the probe and of the
 *     receive;
 *   - one tag shared by all threads: any thread may get any message, so each records
 *     what it got and, after the join, every (thread, iteration) sent must have been
 *     received exactly once;
 *   - handles as MPICH's threads/pt2pt/mt_improbe_* tests use them: a message handle
 *     not yet probed is MPI_MESSAGE_NULL and compares equal to MPI_REQUEST_NULL (as in
 *     MPICH; those tests count an error per MPI_Improbe otherwise), and the receive
 *     sets it back to MPI_MESSAGE_NULL.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

#define NT 4
#define ITERS 40
#define BIG (40 * 1024) /* ints: 160 KiB, rendezvous on every transport */

static int rank, size, right, left;
static pthread_mutex_t fail_mu = PTHREAD_MUTEX_INITIALIZER;
static int fails;
static int shared_tag; /* phase 2: one tag for every thread */
static int got[NT * ITERS]; /* phase 2: how often (sender thread, iteration) arrived */

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

static int len_of(int it)
{
    return it % 5 == 4 ? BIG : it % 5 == 2 ? 3000 : 1 + it % 3;
}

static int val(int src, int t, int it, int i)
{
    return src * 1000000 + t * 10000 + it * 10 + (i % 7);
}

/* Take one message from `left` with `tag` into rb (room for BIG ints); its length. */
static int take(int t, int tag, int *rb, MPI_Status *pst)
{
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Status st;
    CHECK(msg == (MPI_Message)MPI_REQUEST_NULL, "MESSAGE_NULL %#x REQUEST_NULL %#x",
          (unsigned)MPI_MESSAGE_NULL, (unsigned)MPI_REQUEST_NULL);
    if (t % 2 == 0) {
        int flag = 0;
        while (!flag)
            MPI_Improbe(left, tag, MPI_COMM_WORLD, &flag, &msg, &st);
    } else {
        MPI_Mprobe(left, tag, MPI_COMM_WORLD, &msg, &st);
    }
    CHECK(msg != MPI_MESSAGE_NULL, "probe gave no message");
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == tag, "probe envelope %d/%d",
          st.MPI_SOURCE, st.MPI_TAG);
    int n = -1;
    MPI_Get_count(&st, MPI_INT, &n);
    CHECK(n >= 1 && n <= BIG, "probe count %d", n);
    if (n < 1 || n > BIG)
        n = BIG;
    if (t % 2 == 0) {
        MPI_Mrecv(rb, n, MPI_INT, &msg, pst);
    } else {
        MPI_Request r;
        MPI_Imrecv(rb, n, MPI_INT, &msg, &r);
        MPI_Wait(&r, pst);
    }
    CHECK(msg == MPI_MESSAGE_NULL, "message handle after the receive %#x", (unsigned)msg);
    int m = -1;
    MPI_Get_count(pst, MPI_INT, &m);
    CHECK(m == n && pst->MPI_SOURCE == left && pst->MPI_TAG == tag,
          "receive: count %d (probe %d) envelope %d/%d", m, n, pst->MPI_SOURCE,
          pst->MPI_TAG);
    return n;
}

static void *worker(void *arg)
{
    int t = (int)(long)arg;
    int **sb = malloc(sizeof(int *) * ITERS);
    int *rb = malloc(sizeof(int) * BIG);
    MPI_Request rq[ITERS];
    int tag = shared_tag ? shared_tag : t;
    /* phase 2 sends one int whose value names (thread, iteration) */
    for (int it = 0; it < ITERS; it++) {
        int n = shared_tag ? 1 : len_of(it);
        sb[it] = malloc(sizeof(int) * (size_t)n);
        for (int i = 0; i < n; i++)
            sb[it][i] = shared_tag ? t * ITERS + it : val(rank, t, it, i);
        MPI_Isend(sb[it], n, MPI_INT, right, tag, MPI_COMM_WORLD, &rq[it]);
    }
    for (int it = 0; it < ITERS; it++) {
        memset(rb, 0xff, sizeof(int) * BIG);
        MPI_Status st;
        int n = take(t, tag, rb, &st);
        if (shared_tag) {
            CHECK(n == 1 && rb[0] >= 0 && rb[0] < NT * ITERS, "shared tag: %d ints, %d",
                  n, rb[0]);
            if (n == 1 && rb[0] >= 0 && rb[0] < NT * ITERS) {
                pthread_mutex_lock(&fail_mu);
                got[rb[0]]++;
                pthread_mutex_unlock(&fail_mu);
            }
            continue;
        }
        /* one tag per thread: messages arrive in the order sent */
        CHECK(n == len_of(it), "thread %d iteration %d: %d ints, sent %d", t, it, n,
              len_of(it));
        for (int i = 0; i < n && i < len_of(it); i++)
            if (rb[i] != val(left, t, it, i)) {
                CHECK(0, "thread %d iteration %d element %d: %d, sent %d", t, it, i,
                      rb[i], val(left, t, it, i));
                break;
            }
    }
    MPI_Waitall(ITERS, rq, MPI_STATUSES_IGNORE);
    for (int it = 0; it < ITERS; it++)
        free(sb[it]);
    free(sb);
    free(rb);
    return NULL;
}

static void run(void)
{
    pthread_t th[NT];
    for (int t = 0; t < NT; t++)
        pthread_create(&th[t], NULL, worker, (void *)(long)t);
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
}

int main(int argc, char **argv)
{
    int prov = -1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &prov);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    TEST_ASSERT_MSG(prov == MPI_THREAD_MULTIPLE, "provided %d", prov);
    if (prov == MPI_THREAD_MULTIPLE) {
        run();
        MPI_Barrier(MPI_COMM_WORLD);
        shared_tag = 100;
        run();
        for (int k = 0; k < NT * ITERS; k++)
            CHECK(got[k] == 1, "shared tag: thread %d iteration %d arrived %d times",
                  k / ITERS, k % ITERS, got[k]);
    }
    test_failures += fails;
    return test_finish();
}
