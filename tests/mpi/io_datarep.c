/*
 * io_datarep.c - MPI_Register_datarep (MPI-3.1 13.5.3): a user data representation
 * ("xor-ints": every 4-byte item XORed with a key in the file) is used by
 * MPI_File_set_view, its write conversion runs on writes (the raw bytes in the file are
 * the converted ones), its read conversion on reads (count = typemap entries, also with
 * a noncontiguous memory type, and only for what was read at the end of the file);
 * MPI_CONVERSION_FN_NULL moves native bytes; a duplicate or predefined name is
 * MPI_ERR_DUP_DATAREP; an unknown name and a file extent that differs from the native
 * size are MPI_ERR_UNSUPPORTED_DATAREP; MPI_File_get_type_extent asks the extent
 * function; a conversion error comes back from the access; collective accesses convert
 * too.  Any number of processes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpitest.h"

#define KEY 0x5a5a5a5a
#define N 12

static int rank, size;
static char dir[256];

struct state {
    int reads, writes, items, extents, fail;
};

/* converts `count` ints (typemap entries of dt tiled from position) */
static int conv(void *userbuf, MPI_Datatype dt, int count, void *filebuf, int to_file,
                struct state *s, MPI_Offset position)
{
    /* the memory layout this test uses: MPI_INT, or a vector of ints stride 2 */
    MPI_Aint lb, extent;
    int tsize;
    MPI_Type_get_extent(dt, &lb, &extent);
    MPI_Type_size(dt, &tsize);
    int per = tsize / (int)sizeof(int);
    int *f = filebuf;
    s->items += count;
    if (s->fail)
        return MPI_ERR_CONVERSION;
    for (int i = 0; i < count; i++) {
        MPI_Offset k = position + i;
        char *base = (char *)userbuf + (k / per) * extent;
        int *u = (int *)base + (per == 1 ? 0 : 2 * (k % per));   /* vector: stride 2 */
        if (to_file)
            f[i] = *u ^ KEY;
        else
            *u = f[i] ^ KEY;
    }
    return MPI_SUCCESS;
}

static int rd(void *userbuf, MPI_Datatype dt, int count, void *filebuf, MPI_Offset pos,
              void *extra)
{
    struct state *s = extra;
    s->reads++;
    return conv(userbuf, dt, count, filebuf, 0, s, pos);
}

static int wr(void *userbuf, MPI_Datatype dt, int count, void *filebuf, MPI_Offset pos,
              void *extra)
{
    struct state *s = extra;
    s->writes++;
    return conv(userbuf, dt, count, filebuf, 1, s, pos);
}

static int ext(MPI_Datatype dt, MPI_Aint *extent, void *extra)
{
    struct state *s = extra;
    s->extents++;
    int sz;
    MPI_Type_size(dt, &sz);
    *extent = dt == MPI_DOUBLE ? 16 : sz;   /* doubles would be wider in the file */
    return MPI_SUCCESS;
}

static int cls(int rc)
{
    int c;
    MPI_Error_class(rc, &c);
    return c;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    static struct state st, nst;

    /* registration */
    TEST_ASSERT(MPI_Register_datarep("xor-ints", rd, wr, ext, &st) == MPI_SUCCESS);
    TEST_ASSERT(cls(MPI_Register_datarep("xor-ints", rd, wr, ext, &st)) == MPI_ERR_DUP_DATAREP);
    TEST_ASSERT(cls(MPI_Register_datarep("native", rd, wr, ext, &st)) == MPI_ERR_DUP_DATAREP);
    TEST_ASSERT(cls(MPI_Register_datarep("external32", NULL, NULL, ext, &st)) ==
                MPI_ERR_DUP_DATAREP);
    TEST_ASSERT(MPI_Register_datarep("null-conv", MPI_CONVERSION_FN_NULL,
                                     MPI_CONVERSION_FN_NULL, ext, &nst) == MPI_SUCCESS);
    TEST_ASSERT(cls(MPI_Register_datarep("", rd, wr, ext, &st)) == MPI_ERR_ARG);

    if (rank == 0) {
        const char *t = getenv("LOOM_MPI_TEST_IODIR");
        if (!t || !*t)
            t = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/loom-io-XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(dir))
            dir[0] = 0;
    }
    MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    TEST_ASSERT(dir[0]);
    char path[300];
    snprintf(path, sizeof path, "%s/datarep.dat", dir);
    MPI_File fh;
    TEST_ASSERT(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                              MPI_INFO_NULL, &fh) == MPI_SUCCESS);

    /* views: unknown name, a wider file extent, then xor-ints */
    TEST_ASSERT(cls(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "no-such-rep",
                                      MPI_INFO_NULL)) == MPI_ERR_UNSUPPORTED_DATAREP);
    TEST_ASSERT(cls(MPI_File_set_view(fh, 0, MPI_DOUBLE, MPI_DOUBLE, "xor-ints",
                                      MPI_INFO_NULL)) == MPI_ERR_UNSUPPORTED_DATAREP);
    TEST_ASSERT(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "xor-ints", MPI_INFO_NULL) ==
                MPI_SUCCESS);
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_Offset disp;
    MPI_Datatype et, ft;
    MPI_File_get_view(fh, &disp, &et, &ft, rep);
    TEST_ASSERT(!strcmp(rep, "xor-ints"));
    MPI_Aint fext = 0;
    int e0 = st.extents;
    TEST_ASSERT(MPI_File_get_type_extent(fh, MPI_DOUBLE, &fext) == MPI_SUCCESS && fext == 16);
    TEST_ASSERT(st.extents == e0 + 1);

    /* independent write of N ints at this rank's slot: one conversion of N items */
    int v[N], w[2 * N], back[N];
    for (int i = 0; i < N; i++)
        v[i] = rank * 1000 + i;
    st.writes = st.items = 0;
    MPI_Status s;
    TEST_ASSERT(MPI_File_write_at(fh, (MPI_Offset)rank * N, v, N, MPI_INT, &s) == MPI_SUCCESS);
    TEST_ASSERT(st.writes == 1 && st.items == N);
    int cnt = -1;
    MPI_Get_count(&s, MPI_INT, &cnt);
    TEST_ASSERT(cnt == N);

    /* a noncontiguous memory type (every other int), collectively, after the first */
    MPI_Datatype vec0, vec;
    MPI_Type_vector(N / 2, 1, 2, MPI_INT, &vec0);
    MPI_Type_create_resized(vec0, 0, N * (MPI_Aint)sizeof(int), &vec);
    MPI_Type_free(&vec0);
    MPI_Type_commit(&vec);
    for (int i = 0; i < 2 * N; i++)
        w[i] = i % 2 ? -1 : rank * 1000 + 500 + i / 2;
    st.items = 0;
    TEST_ASSERT(MPI_File_write_at_all(fh, (MPI_Offset)(size + rank) * N, w, 2, vec, &s) ==
                MPI_SUCCESS);
    TEST_ASSERT(st.items == N);
    MPI_Barrier(MPI_COMM_WORLD);

    /* the raw bytes are the converted ones */
    TEST_ASSERT(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL) ==
                MPI_SUCCESS);
    TEST_ASSERT(MPI_File_read_at(fh, (MPI_Offset)rank * N, back, N, MPI_INT, &s) ==
                MPI_SUCCESS);
    for (int i = 0; i < N; i++)
        TEST_ASSERT_MSG(back[i] == (v[i] ^ KEY), "raw int %d is %#x", i, back[i]);
    TEST_ASSERT(MPI_File_read_at(fh, (MPI_Offset)(size + rank) * N, back, N, MPI_INT, &s) ==
                MPI_SUCCESS);
    for (int i = 0; i < N; i++)
        TEST_ASSERT_MSG(back[i] == ((rank * 1000 + 500 + i) ^ KEY), "raw vector int %d", i);

    /* reading back through the representation, into the vector type too */
    TEST_ASSERT(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "xor-ints", MPI_INFO_NULL) ==
                MPI_SUCCESS);
    memset(back, 0, sizeof back);
    st.reads = st.items = 0;
    TEST_ASSERT(MPI_File_read_at_all(fh, (MPI_Offset)rank * N, back, N, MPI_INT, &s) ==
                MPI_SUCCESS);
    TEST_ASSERT(st.reads == 1 && st.items == N);
    for (int i = 0; i < N; i++)
        TEST_ASSERT_MSG(back[i] == v[i], "converted int %d is %d", i, back[i]);
    for (int i = 0; i < 2 * N; i++)
        w[i] = -7;
    TEST_ASSERT(MPI_File_read_at(fh, (MPI_Offset)(size + rank) * N, w, 2, vec, &s) ==
                MPI_SUCCESS);
    for (int i = 0; i < 2 * N; i++)
        TEST_ASSERT_MSG(w[i] == (i % 2 ? -7 : rank * 1000 + 500 + i / 2), "vector int %d", i);

    /* at the end of the file: only what was read is converted */
    MPI_Barrier(MPI_COMM_WORLD);
    st.items = 0;
    TEST_ASSERT(MPI_File_read_at(fh, (MPI_Offset)(2 * size - 1) * N + N / 2, back, N, MPI_INT,
                                 &s) == MPI_SUCCESS);
    MPI_Get_count(&s, MPI_INT, &cnt);
    TEST_ASSERT(cnt == N / 2 && st.items == N / 2);

    /* a conversion error comes back from the access */
    st.fail = 1;
    TEST_ASSERT(cls(MPI_File_write_at(fh, 0, v, 1, MPI_INT, &s)) == MPI_ERR_CONVERSION);
    TEST_ASSERT(cls(MPI_File_read_at(fh, 0, back, 1, MPI_INT, &s)) == MPI_ERR_CONVERSION);
    st.fail = 0;
    MPI_Barrier(MPI_COMM_WORLD);

    /* MPI_CONVERSION_FN_NULL: native bytes, the extent function still asked */
    TEST_ASSERT(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "null-conv", MPI_INFO_NULL) ==
                MPI_SUCCESS);
    TEST_ASSERT(nst.extents > 0);
    TEST_ASSERT(MPI_File_read_at(fh, (MPI_Offset)rank * N, back, N, MPI_INT, &s) ==
                MPI_SUCCESS);
    for (int i = 0; i < N; i++)
        TEST_ASSERT(back[i] == (v[i] ^ KEY));
    TEST_ASSERT(nst.reads == 0 && nst.writes == 0);

    MPI_Type_free(&vec);
    MPI_File_close(&fh);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0 && dir[0]) {
        unlink(path);
        TEST_ASSERT(rmdir(dir) == 0);
    }
    return test_finish();
}
