/*
 * thr_shmcoll.c - MPI_THREAD_MULTIPLE: the shared-memory collectives' single-copy paths
 *   run at once by several threads of a rank, each on its own duplicate of
 *   MPI_COMM_WORLD, must never mix up their results.
 *   Per thread and iteration (sizes and contents differ per thread, rank and iteration):
 *   - Bcast of a strided (non-contiguous) type from a rotating root: the root packs
 *     its bytes before the readers copy them;
 *   - Allgather from a strided send type (packed before the others read it);
 *   - Reduce_scatter_block in place (my block of the result is kept aside until the
 *     last round) and Allreduce in place, MPI_SUM of ints;
 *   every received element checked, the strided types' gaps untouched.
 *   The testlist sets LOOM_MPI_COLL_SHM_AG_MIN=0 and LOOM_MPI_COLL_SHM_ONE_MAX=0 so the
 *   Allgather and Reduce_scatter take the single-copy paths at these sizes; over TCP or
 *   without process_vm_readv the same checks run on the other paths.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

#define NT 3
#define ITERS 60
#define GAP (-7)

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

/* element i of rank r's contribution in thread t, iteration it */
static int val(int r, int t, int it, int i)
{
    return (r + 1) * 1000 + t * 100000 + it * 7 + i % 97;
}

static void *run(void *arg)
{
    int t = (int)(long)arg;
    MPI_Comm c = tcomm[t];
    /* 80-104 KiB per block: above the single-copy thresholds (64 KiB) */
    int nmax = 20000 + NT * 3000 + 2 * 1000;
    int *a = malloc(sizeof(int) * 2 * (size_t)nmax);
    int *b = malloc(sizeof(int) * (size_t)nmax * (size_t)size);
    if (!a || !b) {
        CHECK(0, "out of memory");
        return NULL;
    }
    int bad = 0; /* report only the first wrong element per collective */
    for (int it = 0; it < ITERS; it++) {
        int n = 20000 + t * 3000 + (it % 3) * 1000;
        MPI_Datatype vec;
        MPI_Type_vector(n, 1, 2, MPI_INT, &vec);
        MPI_Type_commit(&vec);

        /* Bcast of a strided type */
        int root = (it + t) % size;
        for (int i = 0; i < n; i++) {
            a[2 * i] = rank == root ? val(root, t, it, i) : -1;
            a[2 * i + 1] = GAP;
        }
        MPI_Bcast(a, 1, vec, root, c);
        bad = 0;
        for (int i = 0; i < n && !bad; i++) {
            if (a[2 * i] != val(root, t, it, i) || a[2 * i + 1] != GAP) {
                CHECK(0, "thread %d it %d Bcast elem %d: %d (gap %d), expected %d", t, it,
                      i, a[2 * i], a[2 * i + 1], val(root, t, it, i));
                bad = 1;
            }
        }

        /* Allgather from a strided send type */
        for (int i = 0; i < n; i++) {
            a[2 * i] = val(rank, t, it, i);
            a[2 * i + 1] = GAP;
        }
        memset(b, 0xff, sizeof(int) * (size_t)n * (size_t)size);
        MPI_Allgather(a, 1, vec, b, n, MPI_INT, c);
        bad = 0;
        for (int r = 0; r < size && !bad; r++)
            for (int i = 0; i < n && !bad; i++)
                if (b[(size_t)r * n + i] != val(r, t, it, i)) {
                    CHECK(0,
                          "thread %d it %d Allgather block %d elem %d: %d, expected %d",
                          t, it, r, i, b[(size_t)r * n + i], val(r, t, it, i));
                    bad = 1;
                }
        MPI_Type_free(&vec);

        /* Reduce_scatter_block in place: n / size ints per rank */
        int m = n / size, tot = m * size;
        for (int i = 0; i < tot; i++)
            b[i] = val(rank, t, it, i);
        MPI_Reduce_scatter_block(MPI_IN_PLACE, b, m, MPI_INT, MPI_SUM, c);
        bad = 0;
        for (int i = 0; i < m && !bad; i++) {
            int want = 0, k = rank * m + i;
            for (int r = 0; r < size; r++)
                want += val(r, t, it, k);
            if (b[i] != want) {
                CHECK(0, "thread %d it %d Reduce_scatter_block elem %d: %d, expected %d",
                      t, it, i, b[i], want);
                bad = 1;
            }
        }

        /* Allreduce in place */
        for (int i = 0; i < n; i++)
            b[i] = val(rank, t, it, i);
        MPI_Allreduce(MPI_IN_PLACE, b, n, MPI_INT, MPI_SUM, c);
        bad = 0;
        for (int i = 0; i < n && !bad; i++) {
            int want = 0;
            for (int r = 0; r < size; r++)
                want += val(r, t, it, i);
            if (b[i] != want) {
                CHECK(0, "thread %d it %d Allreduce elem %d: %d, expected %d", t, it, i,
                      b[i], want);
                bad = 1;
            }
        }
    }
    free(a);
    free(b);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = -1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    TEST_ASSERT_MSG(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    if (provided == MPI_THREAD_MULTIPLE) {
        for (int t = 0; t < NT; t++)
            MPI_Comm_dup(MPI_COMM_WORLD, &tcomm[t]);
        pthread_t th[NT];
        for (int t = 0; t < NT; t++)
            pthread_create(&th[t], NULL, run, (void *)(long)t);
        for (int t = 0; t < NT; t++)
            pthread_join(th[t], NULL);
        for (int t = 0; t < NT; t++)
            MPI_Comm_free(&tcomm[t]);
    }
    test_failures += fails;
    return test_finish();
}
