/*
 * p2p_isendrecv.c - MPI-4 MPI_Isendrecv and MPI_Isendrecv_replace: a ring shift both
 *   ways at once (two requests outstanding), small and rendezvous-sized, a strided
 *   vector on the send side, completion by Test loops and Waitall; statuses (source,
 *   tag, count) and data checked; MPI_PROC_NULL partners; oneself.
 */
#include <stdlib.h>

#include "mpitest.h"

static void check(const int *b, int n, int from, int salt, const char *what)
{
    for (int i = 0; i < n; i++)
        if (b[i] != from * 100000 + salt + i) {
            TEST_ASSERT_MSG(0, "%s n %d from %d: element %d is %d", what, n, from, i, b[i]);
            return;
        }
}

static void ring(int rank, int size, int n)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int *a = malloc(sizeof(int) * 2 * (size_t)n), *b = malloc(sizeof(int) * (size_t)n);
    int *c = malloc(sizeof(int) * (size_t)n), *d = malloc(sizeof(int) * (size_t)n);
    MPI_Datatype vt;
    MPI_Type_vector(n, 1, 2, MPI_INT, &vt);
    MPI_Type_commit(&vt);
    for (int i = 0; i < n; i++) {
        a[2 * i] = rank * 100000 + 1 + i;
        a[2 * i + 1] = -9;
        c[i] = rank * 100000 + 2 + i;
        b[i] = d[i] = -1;
    }
    MPI_Request rq[2];
    MPI_Status st[2];
    /* to the right (strided send), from the left; and to the left, from the right */
    MPI_Isendrecv(a, 1, vt, right, 1, b, n, MPI_INT, left, 1, MPI_COMM_WORLD, &rq[0]);
    MPI_Isendrecv(c, n, MPI_INT, left, 2, d, n, MPI_INT, right, MPI_ANY_TAG,
                  MPI_COMM_WORLD, &rq[1]);
    MPI_Type_free(&vt);
    int flag = 0;
    while (!flag)
        MPI_Test(&rq[0], &flag, &st[0]);
    MPI_Waitall(1, &rq[1], &st[1]);
    int cnt = -1;
    MPI_Get_count(&st[0], MPI_INT, &cnt);
    TEST_ASSERT_MSG(st[0].MPI_SOURCE == left && st[0].MPI_TAG == 1 && cnt == n,
                    "n %d: source %d tag %d count %d", n, st[0].MPI_SOURCE, st[0].MPI_TAG, cnt);
    MPI_Get_count(&st[1], MPI_INT, &cnt);
    TEST_ASSERT_MSG(st[1].MPI_SOURCE == right && st[1].MPI_TAG == 2 && cnt == n,
                    "n %d: source %d tag %d count %d", n, st[1].MPI_SOURCE, st[1].MPI_TAG, cnt);
    check(b, n, left, 1, "Isendrecv right");
    check(d, n, right, 2, "Isendrecv left");

    /* replace: everybody's c goes one to the right */
    MPI_Request r;
    MPI_Status s;
    MPI_Isendrecv_replace(c, n, MPI_INT, right, 3, left, 3, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, &s);
    TEST_ASSERT(s.MPI_SOURCE == left && s.MPI_TAG == 3);
    check(c, n, left, 2, "Isendrecv_replace");
    free(a);
    free(b);
    free(c);
    free(d);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ring(rank, size, 10);
    ring(rank, size, 300000);
    /* PROC_NULL partners: completes at once, status names PROC_NULL */
    int x = 5, y = 6;
    MPI_Request r;
    MPI_Status s;
    MPI_Isendrecv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, &y, 1, MPI_INT, MPI_PROC_NULL, 0,
                  MPI_COMM_WORLD, &r);
    MPI_Wait(&r, &s);
    TEST_ASSERT(s.MPI_SOURCE == MPI_PROC_NULL && y == 6);
    /* oneself */
    MPI_Isendrecv(&x, 1, MPI_INT, rank, 4, &y, 1, MPI_INT, rank, 4, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, &s);
    TEST_ASSERT(s.MPI_SOURCE == rank && y == 5);
    x = 8;
    MPI_Isendrecv_replace(&x, 1, MPI_INT, 0, 5, MPI_ANY_SOURCE, 5, MPI_COMM_SELF, &r);
    MPI_Wait(&r, &s);
    TEST_ASSERT(s.MPI_SOURCE == 0 && x == 8);
    return test_finish();
}
