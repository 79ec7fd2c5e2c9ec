/*
 * io_access.c - MPI-IO data access beyond views: explicit offsets, individual file
 *   pointers (seek SET/CUR/END, get_position, get_byte_offset), the shared file
 *   pointer (write_shared, seek_shared, get_position_shared), ordered mode
 *   (write_ordered/read_ordered), nonblocking calls, split collectives, atomic mode
 *   (overlapping writes never mix), external32 (big-endian on disk, round trip),
 *   set_size/preallocate/get_size/sync, get_amode/get_group, c2f/f2c, APPEND and
 *   DELETE_ON_CLOSE.  Files live in a private directory (mkdtemp), removed at the end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpitest.h"

static int rank, size;
static char dir[256];

#define OK(call)                                                                         \
    do {                                                                                 \
        int rc_ = (call);                                                                \
        TEST_ASSERT_MSG(rc_ == MPI_SUCCESS, "%s returned %d", #call, rc_);               \
    } while (0)

static void path_of(char *p, size_t n, const char *name)
{
    snprintf(p, n, "%s/%s", dir, name);
}

static void explicit_and_individual(void)
{
    char p[300];
    path_of(p, sizeof p, "a.dat");
    MPI_File fh;
    MPI_Status st;
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    int v[4] = {rank, rank * 10, rank * 100, rank * 1000}, in[4];
    OK(MPI_File_write_at(fh, (MPI_Offset)rank * sizeof v, v, 4, MPI_INT, &st));
    int cnt;
    MPI_Get_count(&st, MPI_INT, &cnt);
    TEST_ASSERT(cnt == 4);
    MPI_Barrier(MPI_COMM_WORLD);
    int peer = (rank + 1) % size;
    OK(MPI_File_read_at(fh, (MPI_Offset)peer * sizeof v, in, 4, MPI_INT, &st));
    TEST_ASSERT(in[0] == peer && in[3] == peer * 1000);
    /* individual pointer: etype int view */
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    OK(MPI_File_seek(fh, (MPI_Offset)peer * 4, MPI_SEEK_SET));
    OK(MPI_File_read(fh, in, 2, MPI_INT, &st));
    TEST_ASSERT(in[0] == peer && in[1] == peer * 10);
    OK(MPI_File_seek(fh, 1, MPI_SEEK_CUR));
    OK(MPI_File_read(fh, in, 1, MPI_INT, &st));
    TEST_ASSERT(in[0] == peer * 1000);
    MPI_Offset pos, bo;
    OK(MPI_File_get_position(fh, &pos));
    TEST_ASSERT(pos == (MPI_Offset)peer * 4 + 4);
    OK(MPI_File_get_byte_offset(fh, pos, &bo));
    TEST_ASSERT(bo == pos * 4);
    OK(MPI_File_seek(fh, -1, MPI_SEEK_END));
    OK(MPI_File_read(fh, in, 1, MPI_INT, &st));
    TEST_ASSERT(in[0] == (size - 1) * 1000);
    /* reading at the end gives a count of 0 */
    OK(MPI_File_read(fh, in, 1, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &cnt);
    TEST_ASSERT(cnt == 0);
    /* a view with a hole: etype int, filetype = 1 int out of every 2 (resized) */
    MPI_Datatype r;
    MPI_Type_create_resized(MPI_INT, 0, 8, &r);
    MPI_Type_commit(&r);
    OK(MPI_File_set_view(fh, 4, MPI_INT, r, "native", MPI_INFO_NULL));
    OK(MPI_File_get_byte_offset(fh, 3, &bo));
    TEST_ASSERT(bo == 4 + 3 * 8);
    MPI_Offset d;
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING];
    OK(MPI_File_get_view(fh, &d, &et, &ft, rep));
    TEST_ASSERT(d == 4 && et == MPI_INT && strcmp(rep, "native") == 0);
    MPI_Type_free(&ft);
    MPI_Type_free(&r);
    /* amode, group, atomicity, c2f */
    int am;
    OK(MPI_File_get_amode(fh, &am));
    TEST_ASSERT(am == (MPI_MODE_CREATE | MPI_MODE_RDWR));
    MPI_Group g, wg;
    int res;
    OK(MPI_File_get_group(fh, &g));
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_compare(g, wg, &res);
    TEST_ASSERT(res == MPI_IDENT);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    TEST_ASSERT(MPI_File_f2c(MPI_File_c2f(fh)) == fh);
    TEST_ASSERT(MPI_File_c2f(MPI_FILE_NULL) == 0);
    /* sizes */
    OK(MPI_File_set_size(fh, 1000));
    MPI_Offset sz;
    OK(MPI_File_get_size(fh, &sz));
    TEST_ASSERT(sz == 1000);
    OK(MPI_File_preallocate(fh, 500)); /* never shrinks */
    OK(MPI_File_get_size(fh, &sz));
    TEST_ASSERT(sz == 1000);
    OK(MPI_File_sync(fh));
    OK(MPI_File_close(&fh));
    TEST_ASSERT(fh == MPI_FILE_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        OK(MPI_File_delete(p, MPI_INFO_NULL));
}

static void shared_and_ordered(void)
{
    char p[300];
    path_of(p, sizeof p, "s.dat");
    MPI_File fh;
    MPI_Status st;
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    int rec[2] = {rank, -rank};
    OK(MPI_File_write_shared(fh, rec, 2, MPI_INT, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Offset sp;
    OK(MPI_File_get_position_shared(fh, &sp));
    TEST_ASSERT_MSG(sp == 2 * size, "shared position %lld", (long long)sp);
    /* every rank's record is there exactly once, whole */
    int *all = malloc(2 * size * sizeof(int)), *seen = calloc(size, sizeof(int));
    OK(MPI_File_read_at(fh, 0, all, 2 * size, MPI_INT, &st));
    for (int i = 0; i < size; i++) {
        TEST_ASSERT(all[2 * i] >= 0 && all[2 * i] < size && all[2 * i + 1] == -all[2 * i]);
        if (all[2 * i] >= 0 && all[2 * i] < size)
            seen[all[2 * i]]++;
    }
    for (int i = 0; i < size; i++)
        TEST_ASSERT(seen[i] == 1);
    /* ordered: rank r writes r+1 ints after the lower ranks' */
    int n = rank + 1, *o = malloc(n * sizeof(int));
    for (int i = 0; i < n; i++)
        o[i] = 1000 + rank;
    OK(MPI_File_write_ordered(fh, o, n, MPI_INT, &st));
    MPI_Barrier(MPI_COMM_WORLD); /* others' bytes are visible after a barrier */
    int tot = size * (size + 1) / 2;
    OK(MPI_File_get_position_shared(fh, &sp));
    TEST_ASSERT(sp == 2 * size + tot);
    int *ord = malloc(tot * sizeof(int));
    OK(MPI_File_read_at_all(fh, 2 * size, ord, tot, MPI_INT, &st));
    for (int r = 0, k = 0; r < size; r++)
        for (int i = 0; i <= r; i++, k++)
            TEST_ASSERT_MSG(ord[k] == 1000 + r, "k=%d got %d", k, ord[k]);
    /* read it back in order through the shared pointer */
    OK(MPI_File_seek_shared(fh, 2 * size, MPI_SEEK_SET));
    memset(o, 0, n * sizeof(int));
    OK(MPI_File_read_ordered(fh, o, n, MPI_INT, &st));
    for (int i = 0; i < n; i++)
        TEST_ASSERT(o[i] == 1000 + rank);
    /* split collective ordered */
    OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_END));
    OK(MPI_File_write_ordered_begin(fh, rec, 2, MPI_INT));
    OK(MPI_File_write_ordered_end(fh, rec, &st));
    OK(MPI_File_get_position_shared(fh, &sp));
    TEST_ASSERT(sp == 4 * size + tot);
    OK(MPI_File_close(&fh));
    free(all);
    free(seen);
    free(o);
    free(ord);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        unlink(p);
}

static void nonblocking_and_split(void)
{
    char p[300];
    path_of(p, sizeof p, "n.dat");
    MPI_File fh;
    MPI_Status st;
    MPI_Request rq[2];
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                     MPI_INFO_NULL, &fh));
    double d[8], e[8];
    for (int i = 0; i < 8; i++)
        d[i] = rank + i / 8.0;
    OK(MPI_File_iwrite_at(fh, (MPI_Offset)rank * sizeof d, d, 8, MPI_DOUBLE, &rq[0]));
    OK(MPI_Wait(&rq[0], &st));
    int cnt;
    MPI_Get_count(&st, MPI_DOUBLE, &cnt);
    TEST_ASSERT(cnt == 8);
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_iread_at(fh, (MPI_Offset)rank * sizeof d, e, 4, MPI_DOUBLE, &rq[0]));
    OK(MPI_File_iread_at(fh, (MPI_Offset)rank * sizeof d + 32, e + 4, 4, MPI_DOUBLE, &rq[1]));
    OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    TEST_ASSERT(memcmp(d, e, sizeof d) == 0);
    /* collective nonblocking through the individual pointer */
    OK(MPI_File_set_view(fh, (MPI_Offset)rank * sizeof d, MPI_DOUBLE, MPI_DOUBLE, "native",
                         MPI_INFO_NULL));
    memset(e, 0, sizeof e);
    OK(MPI_File_iread_all(fh, e, 8, MPI_DOUBLE, &rq[0]));
    int flag = 0;
    while (!flag)
        MPI_Test(&rq[0], &flag, &st);
    TEST_ASSERT(memcmp(d, e, sizeof d) == 0);
    /* split collectives */
    for (int i = 0; i < 8; i++)
        d[i] = -d[i];
    OK(MPI_File_write_at_all_begin(fh, 0, d, 8, MPI_DOUBLE));
    OK(MPI_File_write_at_all_end(fh, d, &st));
    MPI_Get_count(&st, MPI_DOUBLE, &cnt);
    TEST_ASSERT(cnt == 8);
    OK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    OK(MPI_File_read_all_begin(fh, e, 8, MPI_DOUBLE));
    OK(MPI_File_read_all_end(fh, e, &st));
    TEST_ASSERT(memcmp(d, e, sizeof d) == 0);
    OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    TEST_ASSERT(access(p, F_OK) != 0); /* DELETE_ON_CLOSE */
}

static void atomic_mode(void)
{
    char p[300];
    path_of(p, sizeof p, "t.dat");
    MPI_File fh;
    MPI_Status st;
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    OK(MPI_File_set_atomicity(fh, 1));
    int flag = 0;
    OK(MPI_File_get_atomicity(fh, &flag));
    TEST_ASSERT(flag == 1);
    /* every rank writes the same 64 KiB region, noncontiguously from memory, many
     * times; readers in between must see one writer's bytes only */
    enum { N = 16384 };
    int *w = malloc(2 * N * sizeof(int)), *r = malloc(N * sizeof(int));
    MPI_Datatype every2;
    MPI_Type_vector(N, 1, 2, MPI_INT, &every2);
    MPI_Type_commit(&every2);
    for (int i = 0; i < 2 * N; i++)
        w[i] = rank;
    for (int it = 0; it < 4; it++) {
        OK(MPI_File_write_at(fh, 0, w, 1, every2, &st));
        OK(MPI_File_read_at(fh, 0, r, N, MPI_INT, &st));
        int cnt;
        MPI_Get_count(&st, MPI_INT, &cnt);
        TEST_ASSERT(cnt == N);
        int mixed = 0;
        for (int i = 1; i < N; i++)
            mixed |= r[i] != r[0];
        TEST_ASSERT_MSG(!mixed, "iteration %d: a read saw two writers' bytes", it);
    }
    OK(MPI_File_write_at_all(fh, 0, w, 1, every2, &st));
    OK(MPI_File_set_atomicity(fh, 0));
    MPI_Type_free(&every2);
    free(w);
    free(r);
    OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        unlink(p);
}

static void external32(void)
{
    char p[300];
    path_of(p, sizeof p, "x.dat");
    MPI_File fh;
    MPI_Status st;
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    struct {
        int i;
        double d;
        short s;
    } rec = {0x01020304 + rank, 1.5 + rank, 0x0a0b}, back;
    MPI_Datatype t, ts[3] = {MPI_INT, MPI_DOUBLE, MPI_SHORT};
    int bl[3] = {1, 1, 1};
    MPI_Aint disp[3] = {0, 8, 16};
    MPI_Type_create_struct(3, bl, disp, ts, &t);
    MPI_Type_commit(&t);
    OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL));
    OK(MPI_File_write_at_all(fh, (MPI_Offset)rank * 14, &rec, 1, t, &st));
    memset(&back, 0, sizeof back);
    OK(MPI_File_read_at_all(fh, (MPI_Offset)rank * 14, &back, 1, t, &st));
    TEST_ASSERT(back.i == rec.i && back.d == rec.d && back.s == rec.s);
    MPI_Aint ext;
    OK(MPI_File_get_type_extent(fh, MPI_INT, &ext));
    TEST_ASSERT(ext == 4);
    /* the bytes on disk are big-endian */
    OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    unsigned char raw[14];
    OK(MPI_File_read_at(fh, (MPI_Offset)rank * 14, raw, 14, MPI_BYTE, &st));
    TEST_ASSERT(raw[0] == 0x01 && raw[1] == 0x02 && raw[2] == 0x03 && raw[3] == 0x04 + rank);
    TEST_ASSERT(raw[12] == 0x0a && raw[13] == 0x0b);
    double dd = 1.5 + rank;
    unsigned char de[8];
    memcpy(de, &dd, 8);
    for (int i = 0; i < 8; i++)
        TEST_ASSERT(raw[4 + i] == de[7 - i]);
    MPI_Type_free(&t);
    OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        unlink(p);
}

static void append_mode(void)
{
    char p[300];
    path_of(p, sizeof p, "p.dat");
    MPI_File fh;
    MPI_Status st;
    if (rank == 0) {
        FILE *f = fopen(p, "w");
        fputs("0123456789", f);
        fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_WRONLY | MPI_MODE_APPEND, MPI_INFO_NULL, &fh));
    MPI_Offset pos;
    OK(MPI_File_get_position(fh, &pos));
    TEST_ASSERT(pos == 10);
    OK(MPI_File_get_position_shared(fh, &pos));
    TEST_ASSERT(pos == 10);
    char c = (char)('a' + rank % 26);
    OK(MPI_File_write_ordered(fh, &c, 1, MPI_CHAR, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Offset sz;
    OK(MPI_File_get_size(fh, &sz));
    TEST_ASSERT(sz == 10 + size);
    OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        unlink(p);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
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
    TEST_ASSERT(dir[0]);
    if (dir[0]) {
        explicit_and_individual();
        shared_and_ordered();
        nonblocking_and_split();
        atomic_mode();
        external32();
        append_mode();
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            TEST_ASSERT_MSG(rmdir(dir) == 0, "leftover files in %s", dir);
    }
    return test_finish();
}
