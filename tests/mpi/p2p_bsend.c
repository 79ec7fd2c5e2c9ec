/*
 * p2p_bsend.c - buffered mode: Bsend/Ibsend/Bsend_init through an attached buffer
 *   (the user's data may be overwritten at once), reuse of the buffer after detach,
 *   MPI_ERR_BUFFER when it is too small (MPI_ERRORS_RETURN); Rsend to a posted receive;
 *   Sendrecv_replace around a ring.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define NB 20
#define LEN 500

int main(int argc, char **argv)
{
    int rank, size, errs = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int bsize = NB * (LEN * (int)sizeof(int) + MPI_BSEND_OVERHEAD) + 64;
    char *bbuf = malloc((size_t)bsize);
    int data[LEN], in[LEN];
    MPI_Buffer_attach(bbuf, bsize);
    for (int m = 0; m < NB; m++) {
        for (int i = 0; i < LEN; i++)
            data[i] = rank * 1000 + m + i;
        if (m % 3 == 0) {
            MPI_Request r;
            MPI_Ibsend(data, LEN, MPI_INT, right, m, MPI_COMM_WORLD, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else if (m % 3 == 1) {
            MPI_Bsend(data, LEN, MPI_INT, right, m, MPI_COMM_WORLD);
        } else {
            MPI_Request r;
            MPI_Bsend_init(data, LEN, MPI_INT, right, m, MPI_COMM_WORLD, &r);
            MPI_Start(&r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            MPI_Request_free(&r);
        }
        for (int i = 0; i < LEN; i++)
            data[i] = -1; /* buffered: overwriting the user buffer is allowed */
    }
    for (int m = NB - 1; m >= 0; m--) { /* receive in reverse tag order */
        MPI_Recv(in, LEN, MPI_INT, left, m, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < LEN; i++)
            if (in[i] != left * 1000 + m + i) {
                printf("rank %d: bsend message %d element %d = %d\n", rank, m, i, in[i]);
                errs++;
                break;
            }
    }
    void *back;
    int bs;
    MPI_Buffer_detach(&back, &bs);
    if (back != bbuf || bs != bsize)
        errs++;

    /* too small a buffer: MPI_ERR_BUFFER, nothing sent */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Buffer_attach(bbuf, 100);
    int rc = MPI_Bsend(data, LEN, MPI_INT, right, 99, MPI_COMM_WORLD), cls = -1;
    MPI_Error_class(rc, &cls);
    if (cls != MPI_ERR_BUFFER) {
        printf("rank %d: Bsend into a small buffer gave class %d\n", rank, cls);
        errs++;
    }
    MPI_Buffer_detach(&back, &bs);
    free(bbuf);

    /* Rsend: the receive is posted before the barrier */
    int v = -1, me = rank;
    MPI_Request r;
    MPI_Irecv(&v, 1, MPI_INT, left, 30, MPI_COMM_WORLD, &r);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Rsend(&me, 1, MPI_INT, right, 30, MPI_COMM_WORLD);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    if (v != left)
        errs++;

    /* Sendrecv_replace: shift a vector one step around the ring, size times */
    int vec[LEN];
    for (int i = 0; i < LEN; i++)
        vec[i] = rank + i;
    for (int k = 0; k < size; k++)
        MPI_Sendrecv_replace(vec, LEN, MPI_INT, right, 40, left, 40, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE);
    for (int i = 0; i < LEN; i++)
        if (vec[i] != rank + i) {
            errs++;
            break;
        }

    int all = 0;
    MPI_Reduce(&errs, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (all)
            printf("Found %d errors\n", all);
        else
            printf("No Errors\n");
    }
    MPI_Finalize();
    return 0;
}
