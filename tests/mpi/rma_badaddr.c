/*
 * rma_badaddr.c - the target checks what it is asked to touch: rank 1 puts into an
 *   address of rank 0's dynamic window where nothing is attached (only the target can
 *   know), and rank 0 must end the job with "protocol error in an RMA message from rank
 *   1: seg: not inside an attached region" instead of writing there.  The testlist
 *   expects the failure and that message (expect=fail grep=...).
 */
#include <stdio.h>
#include <stdlib.h>

#include "mpitest.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Win win;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    static int attached[16], victim[16];
    MPI_Win_attach(win, attached, sizeof(attached));
    MPI_Aint addr;
    MPI_Get_address(victim, &addr); /* same binary: rank 0's victim is at this address */
    MPI_Win_fence(0, win);
    if (rank == 1) {
        int v = 42;
        MPI_Put(&v, 1, MPI_INT, 0, addr, 1, MPI_INT, win);
    }
    MPI_Win_fence(0, win);
    /* not reached on rank 0 when the check works */
    TEST_ASSERT_MSG(victim[0] != 42, "rank 0 wrote outside its attached region");
    MPI_Win_detach(win, attached);
    MPI_Win_free(&win);
    return test_finish();
}
