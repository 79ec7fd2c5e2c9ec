/*
 * io_errors.c - MPI-IO error classes and file error handlers: a missing file without
 *   MPI_MODE_CREATE (MPI_ERR_NO_SUCH_FILE, on every rank), bad amodes (MPI_ERR_AMODE),
 *   CREATE|EXCL on an existing file (MPI_ERR_FILE_EXISTS), writing a read-only file
 *   (MPI_ERR_READ_ONLY), reading a write-only one (MPI_ERR_ACCESS), explicit offsets on
 *   a sequential file (MPI_ERR_UNSUPPORTED_OPERATION), an unknown data representation,
 *   MPI_FILE_NULL (MPI_ERR_FILE), filetypes going below 0, backwards or over themselves
 *   (MPI_ERR_IO, as ROMIO), MPI_File_delete of a missing file; the default file
 *   handler is MPI_ERRORS_RETURN, user handlers made by MPI_File_create_errhandler run
 *   with the error code, and MPI_File_call_errhandler reaches them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpitest.h"

static int rank, size;
static char dir[256];
static int handler_calls, handler_code;
static MPI_File handler_file;

static void my_handler(MPI_File *fh, int *code, ...)
{
    handler_calls++;
    handler_code = *code;
    handler_file = *fh;
}

static int cls(int rc)
{
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}

#define EXPECT(call, want)                                                               \
    do {                                                                                 \
        int rc_ = (call);                                                                \
        TEST_ASSERT_MSG(cls(rc_) == (want), "%s gave class %d, want %s (%d)", #call,      \
                        cls(rc_), #want, want);                                          \
    } while (0)

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
    char missing[300], p[300];
    snprintf(missing, sizeof missing, "%s/missing.dat", dir);
    snprintf(p, sizeof p, "%s/e.dat", dir);
    MPI_File fh = MPI_FILE_NULL;
    MPI_Status st;
    int x = 7;

    MPI_Errhandler eh;
    MPI_File_get_errhandler(MPI_FILE_NULL, &eh);
    TEST_ASSERT(eh == MPI_ERRORS_RETURN);

    EXPECT(MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
           MPI_ERR_NO_SUCH_FILE);
    TEST_ASSERT(fh == MPI_FILE_NULL);
    EXPECT(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL,
                         &fh), MPI_ERR_AMODE);
    EXPECT(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDWR | MPI_MODE_WRONLY | MPI_MODE_CREATE,
                         MPI_INFO_NULL, &fh), MPI_ERR_AMODE);
    EXPECT(MPI_File_open(MPI_COMM_WORLD, p, 0, MPI_INFO_NULL, &fh), MPI_ERR_AMODE);
    EXPECT(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL, MPI_INFO_NULL,
                         &fh), MPI_ERR_AMODE);
    /* a bad amode on one rank only fails everywhere */
    EXPECT(MPI_File_open(MPI_COMM_WORLD, p,
                         rank == size - 1 ? MPI_MODE_RDONLY | MPI_MODE_EXCL
                                          : MPI_MODE_RDWR | MPI_MODE_CREATE,
                         MPI_INFO_NULL, &fh), MPI_ERR_AMODE);
    TEST_ASSERT(fh == MPI_FILE_NULL);

    /* create, then CREATE|EXCL again */
    TEST_ASSERT(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY,
                              MPI_INFO_NULL, &fh) == MPI_SUCCESS);
    MPI_File_write_at(fh, rank * 4, &x, 1, MPI_INT, &st);
    EXPECT(MPI_File_read_at(fh, 0, &x, 1, MPI_INT, &st), MPI_ERR_ACCESS);
    EXPECT(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "big-endian-ish", MPI_INFO_NULL),
           MPI_ERR_UNSUPPORTED_DATAREP);
    /* filetypes whose type map goes below 0, backwards, or (file open for writing)
     * over itself: MPI_ERR_IO, the class ROMIO gives (MPI-3.1 §13.3 forbids them; the
     * datatype itself is valid, so not MPI_ERR_TYPE) */
    {
        int bl[2] = {1, 1}, bl3[2] = {3, 1}, neg[2] = {-2, 2}, back[2] = {3, 0},
            ovl[2] = {0, 1};
        const int *dl[3] = {neg, back, ovl}, *bll[3] = {bl, bl, bl3};
        for (int k = 0; k < 3; k++) {
            MPI_Datatype ft;
            MPI_Type_indexed(2, bll[k], dl[k], MPI_INT, &ft);
            MPI_Type_commit(&ft);
            EXPECT(MPI_File_set_view(fh, 0, MPI_INT, ft, "native", MPI_INFO_NULL), MPI_ERR_IO);
            MPI_Type_free(&ft);
        }
    }
    EXPECT(MPI_File_write_at(fh, -4, &x, 1, MPI_INT, &st), MPI_ERR_ARG);
    EXPECT(MPI_File_write_at(fh, 0, &x, -1, MPI_INT, &st), MPI_ERR_COUNT);
    EXPECT(MPI_File_write_at(fh, 0, &x, 1, MPI_DATATYPE_NULL, &st), MPI_ERR_TYPE);
    EXPECT(MPI_File_seek(fh, -1, MPI_SEEK_SET), MPI_ERR_ARG);
    MPI_File_close(&fh);
    EXPECT(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR,
                         MPI_INFO_NULL, &fh), MPI_ERR_FILE_EXISTS);

    /* read-only file: writes refused; a user handler sees the code */
    TEST_ASSERT(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh) ==
                MPI_SUCCESS);
    EXPECT(MPI_File_write_at(fh, 0, &x, 1, MPI_INT, &st), MPI_ERR_READ_ONLY);
    EXPECT(MPI_File_write_shared(fh, &x, 1, MPI_INT, &st), MPI_ERR_READ_ONLY);
    EXPECT(MPI_File_set_size(fh, 0), MPI_ERR_READ_ONLY);
    MPI_Errhandler mine;
    TEST_ASSERT(MPI_File_create_errhandler(my_handler, &mine) == MPI_SUCCESS);
    TEST_ASSERT(MPI_File_set_errhandler(fh, mine) == MPI_SUCCESS);
    MPI_File_get_errhandler(fh, &eh);
    TEST_ASSERT(eh == mine);
    EXPECT(MPI_File_write_at(fh, 0, &x, 1, MPI_INT, &st), MPI_ERR_READ_ONLY);
    TEST_ASSERT(handler_calls == 1 && cls(handler_code) == MPI_ERR_READ_ONLY &&
                handler_file == fh);
    MPI_File_call_errhandler(fh, MPI_ERR_IO);
    TEST_ASSERT(handler_calls == 2 && handler_code == MPI_ERR_IO);
    /* a communicator's handler is not a file handler */
    MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
    MPI_File_close(&fh);

    /* sequential files: only the shared pointer */
    TEST_ASSERT(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL,
                              MPI_INFO_NULL, &fh) == MPI_SUCCESS);
    EXPECT(MPI_File_write_at(fh, 0, &x, 1, MPI_INT, &st), MPI_ERR_UNSUPPORTED_OPERATION);
    EXPECT(MPI_File_seek(fh, 0, MPI_SEEK_SET), MPI_ERR_UNSUPPORTED_OPERATION);
    TEST_ASSERT(MPI_File_write_shared(fh, &x, 1, MPI_INT, &st) == MPI_SUCCESS);
    MPI_File_close(&fh);

    /* MPI_FILE_NULL, and its handler as the default of new files */
    EXPECT(MPI_File_get_size(MPI_FILE_NULL, &(MPI_Offset){0}), MPI_ERR_FILE);
    TEST_ASSERT(MPI_File_set_errhandler(MPI_FILE_NULL, mine) == MPI_SUCCESS);
    handler_calls = 0;
    EXPECT(MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
           MPI_ERR_NO_SUCH_FILE);
    TEST_ASSERT(handler_calls == 1 && handler_file == MPI_FILE_NULL);
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        EXPECT(MPI_File_delete(missing, MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE);
        TEST_ASSERT(MPI_File_delete(p, MPI_INFO_NULL) == MPI_SUCCESS);
        TEST_ASSERT(rmdir(dir) == 0);
    }
    return test_finish();
}
