#include <mpi.h>
#include <stdio.h>
int main(int c, char **v) { int r; MPI_Init(&c, &v); MPI_Comm_rank(MPI_COMM_WORLD, &r); if (!r) printf("No Errors\n"); MPI_Finalize(); return 0; }
