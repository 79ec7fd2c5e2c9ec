/*
 * io_view.c - MPI-IO: a strided view (vector filetype) written collectively by every
 *   rank into one file, with collective buffering forced on (small cb_buffer_size, so
 *   many rounds; cb_nodes 1 and 2) and off, then read back and checked byte for byte:
 *   collectively through the same view, independently through the view (data
 *   sieving), by rank 0 with the default view, and by a smaller communicator (another
 *   process count) with a different decomposition.  Then the same in external32 from
 *   a noncontiguous memory type, with the bytes on disk checked to be big-endian.
 * File layout: block i (B ints) belongs to rank i % N; the file holds the ints
 *   0, 1, 2, ... in order, so any reader knows what every byte must be.
 * Files live in a private directory (mkdtemp) that rank 0 removes at the end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpitest.h"

#define B 256 /* ints per block (1 KiB) */
#define NB 32 /* blocks per rank */

static int rank, size;
static char dir[256];

static void setup_dir(void)
{
    if (rank == 0) {
        /* a directory every rank sees: LOOM_MPI_TEST_IODIR (the 4-node cluster test
         * points it at a shared one), else TMPDIR, else /tmp */
        const char *t = getenv("LOOM_MPI_TEST_IODIR");
        if (!t || !*t)
            t = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/loom-io-XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(dir))
            dir[0] = 0;
    }
    MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
}

static int check_ints(const int *v, size_t n, long long first, const char *what)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        if (v[i] != (int)(first + (long long)i)) {
            TEST_ASSERT_MSG(0, "%s: element %zu is %d, want %lld", what, i, v[i],
                            first + (long long)i);
            if (++bad > 3)
                break;
        }
    return bad;
}

static void one_pass(const char *path, const char *cbw, const char *cbsize, const char *cbnodes)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_cb_write", cbw);
    MPI_Info_set(info, "romio_cb_read", cbw);
    MPI_Info_set(info, "cb_buffer_size", cbsize);
    MPI_Info_set(info, "cb_nodes", cbnodes);
    MPI_Info_set(info, "striping_factor", "4");
    MPI_File fh;
    int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
    TEST_ASSERT_MSG(rc == MPI_SUCCESS, "open %s: %d", path, rc);
    if (rc)
        return;
    MPI_Datatype ft;
    MPI_Type_vector(NB, B, B * size, MPI_INT, &ft);
    MPI_Type_commit(&ft);
    rc = MPI_File_set_view(fh, (MPI_Offset)rank * B * 4, MPI_INT, ft, "native", info);
    TEST_ASSERT(rc == MPI_SUCCESS);
    int *buf = malloc(NB * B * sizeof(int)), *in = malloc(NB * B * sizeof(int));
    for (int b = 0; b < NB; b++)
        for (int e = 0; e < B; e++)
            buf[b * B + e] = (b * size + rank) * B + e;
    MPI_Status st;
    rc = MPI_File_write_all(fh, buf, NB * B, MPI_INT, &st);
    TEST_ASSERT_MSG(rc == MPI_SUCCESS, "write_all: %d", rc);
    int cnt = -1;
    MPI_Get_count(&st, MPI_INT, &cnt);
    TEST_ASSERT_MSG(cnt == NB * B, "write_all count %d", cnt);
    MPI_Offset pos;
    MPI_File_get_position(fh, &pos);
    TEST_ASSERT(pos == NB * B);

    /* collective read through the same view */
    memset(in, 0xff, NB * B * sizeof(int));
    MPI_File_seek(fh, 0, MPI_SEEK_SET);
    rc = MPI_File_read_all(fh, in, NB * B, MPI_INT, &st);
    TEST_ASSERT(rc == MPI_SUCCESS);
    TEST_ASSERT(memcmp(in, buf, NB * B * sizeof(int)) == 0);
    /* independent read through the view, two halves (data sieving) */
    memset(in, 0xff, NB * B * sizeof(int));
    rc = MPI_File_read_at(fh, 0, in, NB * B / 2, MPI_INT, &st);
    rc |= MPI_File_read_at(fh, NB * B / 2, in + NB * B / 2, NB * B / 2, MPI_INT, &st);
    TEST_ASSERT(rc == MPI_SUCCESS);
    TEST_ASSERT(memcmp(in, buf, NB * B * sizeof(int)) == 0);
    /* collective read across the last block: the vector's next tile starts one block
     * after the first tile's last block, so it exists for every rank but the last;
     * the last rank reads only what exists.  Others' bytes: sync-barrier-sync. */
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    MPI_File_seek(fh, NB * B - B / 2, MPI_SEEK_SET);
    memset(in, 0xff, B * sizeof(int));
    rc = MPI_File_read_all(fh, in, B, MPI_INT, &st);
    TEST_ASSERT(rc == MPI_SUCCESS);
    MPI_Get_count(&st, MPI_INT, &cnt);
    int last = rank == size - 1;
    TEST_ASSERT_MSG(cnt == (last ? B / 2 : B), "read across the end: count %d", cnt);
    TEST_ASSERT(memcmp(in, buf + NB * B - B / 2, B / 2 * sizeof(int)) == 0);
    if (!last)
        check_ints(in + B / 2, B / 2, (long long)((NB - 1) * size + 1 + rank) * B,
                   "next tile");
    MPI_File_get_position(fh, &pos);
    TEST_ASSERT(pos == NB * B + (last ? 0 : B / 2));
    /* get_info reports the hints set */
    MPI_Info used;
    char v[64];
    int flag = 0;
    MPI_File_get_info(fh, &used);
    MPI_Info_get(used, "cb_buffer_size", sizeof v - 1, v, &flag);
    TEST_ASSERT(flag && strcmp(v, cbsize) == 0);
    MPI_Info_get(used, "striping_factor", sizeof v - 1, v, &flag);
    TEST_ASSERT(flag && strcmp(v, "4") == 0);
    MPI_Info_free(&used);
    MPI_File_close(&fh);

    /* rank 0: the whole file with the default view */
    long long total = (long long)NB * B * size;
    if (rank == 0) {
        int *all = malloc(total * sizeof(int));
        MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
        MPI_Offset fsz;
        MPI_File_get_size(fh, &fsz);
        TEST_ASSERT_MSG(fsz == total * 4, "size %lld", (long long)fsz);
        rc = MPI_File_read_at(fh, 0, all, (int)total, MPI_INT, &st);
        TEST_ASSERT(rc == MPI_SUCCESS);
        MPI_Get_count(&st, MPI_INT, &cnt);
        TEST_ASSERT(cnt == total);
        check_ints(all, (size_t)total, 0, "whole file");
        MPI_File_close(&fh);
        free(all);
    }
    /* another process count: the lower half (at least 1 rank), contiguous chunks,
     * collectively, with a vector view of half blocks */
    MPI_Comm sub;
    int m = size > 1 ? size / 2 : 1;
    MPI_Comm_split(MPI_COMM_WORLD, rank < m ? 0 : MPI_UNDEFINED, rank, &sub);
    if (sub != MPI_COMM_NULL) {
        MPI_File_open(sub, path, MPI_MODE_RDONLY, info, &fh);
        long long per = total / m;
        int *part = malloc(per * sizeof(int));
        rc = MPI_File_read_at_all(fh, rank * per * 4, part, (int)per, MPI_INT, &st);
        TEST_ASSERT(rc == MPI_SUCCESS);
        check_ints(part, (size_t)per, rank * per, "chunk read by a smaller group");
        /* strided view of half blocks: rank r of m gets half-blocks r, r+m, ... */
        MPI_Datatype hv;
        long long nh = total / (B / 2) / m;
        MPI_Type_vector((int)nh, B / 2, B / 2 * m, MPI_INT, &hv);
        MPI_Type_commit(&hv);
        MPI_File_set_view(fh, (MPI_Offset)rank * (B / 2) * 4, MPI_INT, hv, "native",
                          MPI_INFO_NULL);
        memset(part, 0xff, per * sizeof(int));
        rc = MPI_File_read_all(fh, part, (int)(nh * (B / 2)), MPI_INT, &st);
        TEST_ASSERT(rc == MPI_SUCCESS);
        for (long long h = 0; h < nh; h++)
            if (check_ints(part + h * (B / 2), B / 2, (h * m + rank) * (B / 2), "half blocks"))
                break;
        MPI_Type_free(&hv);
        free(part);
        MPI_File_close(&fh);
        MPI_Comm_free(&sub);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        MPI_File_delete(path, MPI_INFO_NULL);
    MPI_Type_free(&ft);
    MPI_Info_free(&info);
    free(buf);
    free(in);
}

/* external32 through two-phase I/O, from and to a noncontiguous memory type (every
 * other int of a buffer): the file holds big-endian ints 0, 1, 2, ... */
static void ext32_collective(const char *path)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_cb_write", "enable");
    MPI_Info_set(info, "romio_cb_read", "enable");
    MPI_Info_set(info, "cb_buffer_size", "8192");
    MPI_File fh;
    int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
    TEST_ASSERT(rc == MPI_SUCCESS);
    if (rc)
        return;
    MPI_Datatype ft, mt;
    MPI_Type_vector(NB, B, B * size, MPI_INT, &ft);
    MPI_Type_commit(&ft);
    MPI_Type_vector(NB * B, 1, 2, MPI_INT, &mt);
    MPI_Type_commit(&mt);
    TEST_ASSERT(MPI_File_set_view(fh, (MPI_Offset)rank * B * 4, MPI_INT, ft, "external32",
                                  info) == MPI_SUCCESS);
    int *buf = malloc(2 * NB * B * sizeof(int)), *in = malloc(2 * NB * B * sizeof(int));
    for (int b = 0; b < NB; b++)
        for (int e = 0; e < B; e++) {
            buf[2 * (b * B + e)] = (b * size + rank) * B + e;
            buf[2 * (b * B + e) + 1] = -1;
        }
    MPI_Status st;
    TEST_ASSERT(MPI_File_write_all(fh, buf, 1, mt, &st) == MPI_SUCCESS);
    for (int i = 0; i < 2 * NB * B; i++)
        in[i] = -1;
    MPI_File_seek(fh, 0, MPI_SEEK_SET);
    TEST_ASSERT(MPI_File_read_all(fh, in, 1, mt, &st) == MPI_SUCCESS);
    TEST_ASSERT(memcmp(in, buf, 2 * NB * B * sizeof(int)) == 0);
    MPI_File_close(&fh);
    if (rank == 0) { /* the bytes on disk: big-endian */
        unsigned char raw[16];
        MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY | MPI_MODE_DELETE_ON_CLOSE,
                      MPI_INFO_NULL, &fh);
        long long last = (long long)NB * B * size - 4;
        MPI_File_read_at(fh, last * 4, raw, 16, MPI_BYTE, &st);
        for (int k = 0; k < 4; k++) {
            long long v = last + k;
            TEST_ASSERT(raw[4 * k] == (unsigned char)(v >> 24) &&
                        raw[4 * k + 1] == (unsigned char)(v >> 16) &&
                        raw[4 * k + 2] == (unsigned char)(v >> 8) &&
                        raw[4 * k + 3] == (unsigned char)v);
        }
        MPI_File_close(&fh);
    }
    MPI_Type_free(&ft);
    MPI_Type_free(&mt);
    MPI_Info_free(&info);
    free(buf);
    free(in);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    setup_dir();
    TEST_ASSERT(dir[0]);
    if (dir[0]) {
        char path[300];
        snprintf(path, sizeof path, "%s/view.dat", dir);
        one_pass(path, "enable", "65536", "1");
        one_pass(path, "enable", "4096", "2");
        one_pass(path, "disable", "65536", "1");
        snprintf(path, sizeof path, "ufs:%s/view2.dat", dir);
        one_pass(path, "automatic", "16777216", size > 2 ? "3" : "1");
        snprintf(path, sizeof path, "%s/ext32.dat", dir);
        ext32_collective(path);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            TEST_ASSERT(rmdir(dir) == 0);
    }
    return test_finish();
}
