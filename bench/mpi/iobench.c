/*
 * iobench.c - collective write of many small interleaved pieces (plain MPI-IO, built by
 *   each MPI's own mpicc; bench/mpi/io.sh runs it).
 *
 * Usage: iobench FILE TOTAL_MIB BLOCK_BYTES [HINT=VALUE ...]
 *   Rank r of P writes blocks r, r+P, r+2P, ... of BLOCK_BYTES each (a filetype of one
 *   block resized to P blocks, displacement r blocks) with one MPI_File_write_all of
 *   TOTAL_MIB/P MiB; the hints go into the MPI_Info of MPI_File_open.  Timed: a barrier,
 *   then write_all and a barrier (the file open and close are not in the time).  Rank 0
 *   then reads back a sample of blocks and checks them (a wrong byte exits 1).
 * Output (rank 0, one line): "iobench P TOTAL_MIB BLOCK seconds MiB/s".
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 4) {
        if (rank == 0)
            fprintf(stderr, "usage: iobench FILE TOTAL_MIB BLOCK [HINT=VALUE ...]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *path = argv[1];
    long long total = atoll(argv[2]) << 20;
    int block = atoi(argv[3]);
    long long nblk = total / block / size; /* blocks per rank */
    MPI_Info info;
    MPI_Info_create(&info);
    for (int i = 4; i < argc; i++) {
        char k[256], *eq = strchr(argv[i], '=');
        if (!eq || eq - argv[i] >= (int)sizeof k)
            continue;
        memcpy(k, argv[i], eq - argv[i]);
        k[eq - argv[i]] = 0;
        MPI_Info_set(info, k, eq + 1);
    }
    size_t mine = (size_t)nblk * block;
    unsigned char *buf = malloc(mine);
    for (long long b = 0; b < nblk; b++)
        memset(buf + b * block, (int)((b * size + rank) % 251), block);
    MPI_File fh;
    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh)) {
        fprintf(stderr, "iobench: cannot open %s\n", path);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Datatype blk, ft;
    MPI_Type_contiguous(block, MPI_BYTE, &blk);
    MPI_Type_create_resized(blk, 0, (MPI_Aint)block * size, &ft);
    MPI_Type_commit(&ft);
    MPI_File_set_view(fh, (MPI_Offset)rank * block, MPI_BYTE, ft, "native", info);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_Status st;
    int rc = MPI_File_write_all(fh, buf, (int)mine, MPI_BYTE, &st);
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime() - t0;
    MPI_File_close(&fh);
    int bad = rc != MPI_SUCCESS;
    if (rank == 0) {
        MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
        unsigned char *chk = malloc(block);
        long long all = total / block;
        for (long long i = 0; i < all && !bad; i += all / 97 + 1) {
            MPI_File_read_at(fh, i * block, chk, block, MPI_BYTE, &st);
            for (int j = 0; j < block; j++)
                if (chk[j] != (unsigned char)((i / size * size + i % size) % 251)) {
                    fprintf(stderr, "iobench: block %lld byte %d is %d\n", i, j, chk[j]);
                    bad = 1;
                    break;
                }
        }
        MPI_File_close(&fh);
        free(chk);
        printf("iobench %d %lld %d %.4f %.1f\n", size, total >> 20, block, t,
               (double)total / (1 << 20) / t);
    }
    MPI_Type_free(&ft);
    MPI_Type_free(&blk);
    MPI_Info_free(&info);
    free(buf);
    MPI_Finalize();
    return bad;
}
