/*
 * sess_threads.c - concurrent MPI_Comm_create_from_group calls with different string
 *   tags over the same group, one per thread, each thread in a session of its own
 *   (MPI_THREAD_MULTIPLE), started in a different order on odd and even ranks: every
 *   communicator must reach exactly its own thread's peers (a reduction and a ring
 *   message carry the thread's number).  Then the world model in the same process.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mpitest.h"

#define NT 3
static atomic_int terrs;
static int rank_w;

#define T_CHECK(c)                                                                     \
    do {                                                                               \
        if (!(c)) {                                                                    \
            printf("rank %d: FAIL: line %d: %s\n", rank_w, __LINE__, #c);             \
            fflush(stdout);                                                            \
            atomic_fetch_add(&terrs, 1);                                               \
        }                                                                              \
    } while (0)

static void *run(void *p)
{
    int t = (int)(long)p;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "thread_level", "MPI_THREAD_MULTIPLE");
    MPI_Session s;
    T_CHECK(MPI_Session_init(info, MPI_ERRORS_RETURN, &s) == MPI_SUCCESS);
    MPI_Info_free(&info);
    MPI_Group g;
    T_CHECK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g) == MPI_SUCCESS);
    char tag[32];
    snprintf(tag, sizeof(tag), "loom.sess_threads.%d", t);
    MPI_Comm c = MPI_COMM_NULL;
    T_CHECK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c) ==
            MPI_SUCCESS);
    MPI_Group_free(&g);
    int rank, size;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    for (int it = 0; it < 5; it++) {
        int mine = 100 * t + rank, sum = 0;
        MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, c);
        T_CHECK(sum == 100 * t * size + size * (size - 1) / 2);
        int out = t, in = -1;
        MPI_Sendrecv(&out, 1, MPI_INT, (rank + 1) % size, it, &in, 1, MPI_INT,
                     (rank + size - 1) % size, it, c, MPI_STATUS_IGNORE);
        T_CHECK(in == t);
    }
    MPI_Comm_free(&c);
    T_CHECK(MPI_Session_finalize(&s) == MPI_SUCCESS);
    return NULL;
}

int main(int argc, char **argv)
{
    /* the world rank, for messages only: from a session of our own, MULTIPLE so the
     * threads' own MPI_Session_init calls may run at once */
    MPI_Session s0;
    MPI_Group g0;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "thread_level", "MPI_THREAD_MULTIPLE");
    MPI_Session_init(info, MPI_ERRORS_RETURN, &s0);
    MPI_Info_free(&info);
    MPI_Group_from_session_pset(s0, "mpi://WORLD", &g0);
    MPI_Group_rank(g0, &rank_w);
    MPI_Group_free(&g0);
    pthread_t th[NT];
    for (int i = 0; i < NT; i++) {
        int t = rank_w % 2 ? NT - 1 - i : i; /* odd ranks start them in reverse */
        pthread_create(&th[t], NULL, run, (void *)(long)t);
        if (rank_w % 2)
            usleep(2000);
    }
    for (int i = 0; i < NT; i++)
        pthread_join(th[i], NULL);
    MPI_Session_finalize(&s0);
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    TEST_ASSERT(provided == MPI_THREAD_MULTIPLE);
    test_failures += atomic_load(&terrs);
    return test_finish();
}
