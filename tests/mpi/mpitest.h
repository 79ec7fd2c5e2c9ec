/*
 * mpitest.h - the checks of the MPI test programs in tests/mpi/: an assertion that
 *   names the rank, the line and the failed condition, and the ending that
 *   tests/mpi/runtests looks for.
 *
 *   TEST_ASSERT(cond)               on failure print "rank R: FAIL: line L: cond" and
 *   TEST_ASSERT_MSG(cond, fmt, ...) count it ("... cond: <message>" with the _MSG form).
 *                                   The program goes on, so that every rank still
 *                                   reaches test_finish(); a rank prints its first
 *                                   TEST_MAX_PRINTS failures, and counts them all.
 *   return test_finish();           at the end of main, instead of MPI_Finalize (it
 *                                   calls it): sums the failures over MPI_COMM_WORLD,
 *                                   rank 0 prints "No Errors" or "Found N errors", and
 *                                   every rank returns 1 when any check failed.
 * Header-only (static), so a program needs nothing else; plain MPI, so it also builds
 * with MPICH's and Open MPI's mpicc.
 */
#ifndef LOOM_MPITEST_H
#define LOOM_MPITEST_H

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>

#define TEST_MAX_PRINTS 10

static int test_failures;

static void test_failed(int line, const char *cond, const char *fmt, ...)
{
    int rank = -1;
    if (++test_failures > TEST_MAX_PRINTS)
        return;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    printf("rank %d: FAIL: line %d: %s", rank, line, cond);
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        printf(": ");
        vprintf(fmt, ap);
        va_end(ap);
    }
    printf("\n");
    fflush(stdout);
}

#define TEST_ASSERT(cond)                                                                \
    do {                                                                                 \
        if (!(cond))                                                                     \
            test_failed(__LINE__, #cond, NULL);                                          \
    } while (0)

#define TEST_ASSERT_MSG(cond, ...)                                                       \
    do {                                                                                 \
        if (!(cond))                                                                     \
            test_failed(__LINE__, #cond, __VA_ARGS__);                                   \
    } while (0)

/* Collective over MPI_COMM_WORLD; finalizes MPI.  Returns main's exit status. */
static int test_finish(void)
{
    int rank, all = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Allreduce(&test_failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (all)
            printf("Found %d errors\n", all);
        else
            printf("No Errors\n");
        fflush(stdout);
    }
    MPI_Finalize();
    return all ? 1 : 0;
}

#endif
