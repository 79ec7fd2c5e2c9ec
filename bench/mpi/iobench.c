/*
 * iobench.c - collective write and read bandwidth of MPI-IO (plain MPI-IO, built by each
 *   MPI's own mpicc; bench/mpi/io.sh runs it).
 *
 * Usage: iobench KIND FILE TOTAL_MIB BLOCK [HINT=VALUE ...]
 *   KIND array:   a 2-D N x N array of doubles (N*N*8 <= TOTAL_MIB MiB, N a multiple of
 *                 the process grid), row-major in the file, block-distributed over a
 *                 MPI_Dims_create grid of the P ranks: each rank's filetype is its
 *                 MPI_Type_create_subarray block (one piece of N/Pc doubles per row).
 *   KIND slab:    the same array cut into P row slabs: one contiguous piece per rank.
 *   KIND strided: many small interleaved records: rank r of P owns blocks r, r+P, r+2P,
 *                 ... of BLOCK bytes (a filetype of one block resized to P blocks,
 *                 displacement r blocks).
 *   The hints go into the MPI_Info of both opens.  BLOCK is ignored by array and slab.
 * Method (the file is new; rank 0 removes an old one first):
 *   write: barrier, t0, MPI_File_write_all of everything, barrier, t1, MPI_File_sync,
 *          barrier, t2.  "write" = t1-t0 (the data reached the page cache), "write+sync"
 *          = t2-t0 (the data reached the disk; what `dd conv=fdatasync` measures).
 *   read (reopened read-only): barrier, MPI_File_read_all of everything, barrier, timed:
 *          first "warm" (the pages are still cached from the write), then "cold" after
 *          rank 0 dropped the file's clean pages with posix_fadvise(POSIX_FADV_DONTNEED)
 *          (what `dd iflag=nocache` does; no root needed, nothing else is evicted).
 *   Every read is checked against the pattern written (a wrong byte exits 1).
 * Output (rank 0, one line):
 *   "iobench KIND P BYTES BLOCK write_s writesync_s readwarm_s readcold_s"
 */
#define _POSIX_C_SOURCE 200112L
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, size;

static void die(const char *what)
{
    fprintf(stderr, "iobench: rank %d: %s failed\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* value of element / byte number i of the file */
static void fill(int kind, char *buf, long long n, long long nblk, int block, long long N,
                 int dims[2], int coords[2])
{
    if (kind == 's') {
        for (long long b = 0; b < nblk; b++)
            memset(buf + b * block, (int)((b * size + rank) % 251), (size_t)block);
        return;
    }
    double *d = (double *)buf;
    long long rows = N / dims[0], cols = N / dims[1];
    for (long long i = 0; i < rows; i++)
        for (long long j = 0; j < cols; j++)
            d[i * cols + j] = (double)((coords[0] * rows + i) * N + coords[1] * cols + j);
    (void)n;
}

static int check(int kind, const char *buf, const char *want, long long n)
{
    (void)kind;
    return memcmp(buf, want, (size_t)n) != 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 5 || (strcmp(argv[1], "array") && strcmp(argv[1], "slab") &&
                     strcmp(argv[1], "strided"))) {
        if (rank == 0)
            fprintf(stderr, "usage: iobench array|slab|strided FILE TOTAL_MIB BLOCK "
                            "[HINT=VALUE ...]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int kind = argv[1][1] == 'r' ? 'a' : argv[1][0] == 's' && argv[1][1] == 'l' ? 'l' : 's';
    const char *path = argv[2];
    long long want = atoll(argv[3]) << 20;
    int block = atoi(argv[4]);
    MPI_Info info;
    MPI_Info_create(&info);
    for (int i = 5; i < argc; i++) {
        char k[256], *eq = strchr(argv[i], '=');
        if (!eq || eq - argv[i] >= (int)sizeof k)
            continue;
        memcpy(k, argv[i], (size_t)(eq - argv[i]));
        k[eq - argv[i]] = 0;
        MPI_Info_set(info, k, eq + 1);
    }
    int dims[2] = {0, 0}, coords[2] = {0, 0};
    long long N = 0, total, mine, nblk = 0;
    MPI_Datatype ft, et;
    MPI_Offset disp = 0;
    if (kind == 's') {
        if (block <= 0)
            die("BLOCK > 0");
        nblk = want / block / size;
        mine = nblk * block;
        total = mine * size;
        MPI_Datatype blk;
        MPI_Type_contiguous(block, MPI_BYTE, &blk);
        MPI_Type_create_resized(blk, 0, (MPI_Aint)block * size, &ft);
        MPI_Type_free(&blk);
        disp = (MPI_Offset)rank * block;
        et = MPI_BYTE;
    } else {
        if (kind == 'a') {
            MPI_Dims_create(size, 2, dims);
        } else {
            dims[0] = size;
            dims[1] = 1;
        }
        coords[0] = rank / dims[1];
        coords[1] = rank % dims[1];
        long long unit = (long long)dims[0] * dims[1]; /* N divisible by both dims */
        N = 1;
        while ((N + 1) * (N + 1) * 8 <= want)
            N++;
        N -= N % unit;
        int gs[2] = {(int)N, (int)N}, ls[2] = {(int)(N / dims[0]), (int)(N / dims[1])};
        int st[2] = {coords[0] * ls[0], coords[1] * ls[1]};
        MPI_Type_create_subarray(2, gs, ls, st, MPI_ORDER_C, MPI_DOUBLE, &ft);
        mine = (long long)ls[0] * ls[1] * 8;
        total = N * N * 8;
        et = MPI_DOUBLE;
    }
    MPI_Type_commit(&ft);
    char *buf = malloc((size_t)mine), *in = malloc((size_t)mine);
    if (!buf || !in)
        die("malloc");
    fill(kind, buf, mine, nblk, block, N, dims, coords);
    int count = (int)(mine / (kind == 's' ? 1 : 8));

    if (rank == 0)
        unlink(path);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File fh;
    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh))
        die("MPI_File_open (write)");
    MPI_File_set_view(fh, disp, et, ft, "native", info);
    MPI_Status st;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (MPI_File_write_all(fh, buf, count, et, &st))
        die("MPI_File_write_all");
    MPI_Barrier(MPI_COMM_WORLD);
    double t1 = MPI_Wtime();
    if (MPI_File_sync(fh))
        die("MPI_File_sync");
    MPI_Barrier(MPI_COMM_WORLD);
    double t2 = MPI_Wtime();
    MPI_File_close(&fh);

    double tr[2];
    int bad = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1 && rank == 0) { /* cold: drop the file's (clean) cached pages */
            int fd = open(path, O_RDONLY);
            if (fd >= 0) {
                posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
                close(fd);
            }
        }
        memset(in, 0xee, (size_t)mine);
        if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, info, &fh))
            die("MPI_File_open (read)");
        MPI_File_set_view(fh, disp, et, ft, "native", info);
        MPI_Barrier(MPI_COMM_WORLD);
        double r0 = MPI_Wtime();
        if (MPI_File_read_all(fh, in, count, et, &st))
            die("MPI_File_read_all");
        MPI_Barrier(MPI_COMM_WORLD);
        tr[pass] = MPI_Wtime() - r0;
        MPI_File_close(&fh);
        if (check(kind, in, buf, mine)) {
            fprintf(stderr, "iobench: rank %d: %s read pass %d returned wrong data\n", rank,
                    argv[1], pass);
            bad = 1;
        }
    }
    int anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("iobench %s %d %lld %d %.5f %.5f %.5f %.5f\n", argv[1], size, total,
               kind == 's' ? block : 0, t1 - t0, t2 - t0, tr[0], tr[1]);
    MPI_Type_free(&ft);
    MPI_Info_free(&info);
    free(buf);
    free(in);
    MPI_Finalize();
    return anybad;
}
