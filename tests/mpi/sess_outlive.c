/*
 * sess_outlive.c - MPI-4 sessions after MPI_Init: a session started in the world
 *   model whose communicator is still used after MPI_Finalize (the engine stays up
 *   until the process exits), with a thread level the world model did not ask for
 *   reported as what was given.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

/* mpitest.h's ending needs MPI_COMM_WORLD after the test: its own here */
static int test_failures;
#define TEST_ASSERT(c)                                                                 \
    do {                                                                               \
        if (!(c)) {                                                                    \
            printf("FAIL: line %d: %s\n", __LINE__, #c);                               \
            test_failures++;                                                           \
        }                                                                              \
    } while (0)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Session s;
    TEST_ASSERT(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s) == MPI_SUCCESS);
    MPI_Group g;
    TEST_ASSERT(MPI_Group_from_session_pset(s, "mpi://WORLD", &g) == MPI_SUCCESS);
    MPI_Comm c = MPI_COMM_NULL;
    TEST_ASSERT(MPI_Comm_create_from_group(g, "outlive", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                           &c) == MPI_SUCCESS);
    MPI_Group_free(&g);
    MPI_Info used;
    char v[64];
    int flag = 0;
    MPI_Session_get_info(s, &used);
    MPI_Info_get(used, "thread_level", sizeof(v) - 1, v, &flag);
    TEST_ASSERT(flag && strcmp(v, "MPI_THREAD_SINGLE") == 0);
    MPI_Info_free(&used);
    MPI_Finalize();
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin)
        test_failures++;
    /* the session's communicator after MPI_Finalize */
    int sum = 0, errs = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c);
    if (sum != size * (size - 1) / 2)
        test_failures++;
    MPI_Reduce(&test_failures, &errs, 1, MPI_INT, MPI_SUM, 0, c);
    MPI_Comm_free(&c);
    MPI_Session_finalize(&s);
    if (rank == 0) {
        if (errs)
            printf("Found %d errors\n", errs);
        else
            printf("No Errors\n");
    }
    return errs ? 1 : 0;
}
