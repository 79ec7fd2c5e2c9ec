/*
 * cxx_io.cc - MPI-IO from C++ through the C bindings (mpi.h under -pedantic -Werror):
 *   what MPICH's cxx/io tests check with the removed MPI:: classes, done with the calls
 *   a C++ program has today.  Each rank writes its block by explicit offset, by
 *   individual pointer, nonblocking, through the shared pointer, in ordered mode and
 *   with a split collective, each into its own file region, and reads it all back;
 *   amode, atomicity, view and byte offset, info hints, type extent, the position of
 *   the shared pointer, and a file error handler written in C++ (extern "C") that
 *   sees the error code of a write on a read-only file.  Files in LOOM_MPI_TEST_IODIR,
 *   else TMPDIR, else /tmp; rank 0 prints "No Errors".
 */
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

static int failures;
static int rank, size;

static void check(bool ok, const char *what)
{
    if (!ok) {
        std::fprintf(stderr, "rank %d: FAIL: %s\n", rank, what);
        failures++;
    }
}

static int handler_calls, handler_class;

extern "C" void on_file_error(MPI_File *, int *code, ...)
{
    handler_calls++;
    MPI_Error_class(*code, &handler_class);
}

static const int N = 64; /* ints per rank and access kind */

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    char dir[256] = "";
    if (rank == 0) {
        const char *t = std::getenv("LOOM_MPI_TEST_IODIR");
        if (!t || !*t)
            t = std::getenv("TMPDIR");
        std::snprintf(dir, sizeof dir, "%s/loom-cxxio-XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(dir))
            dir[0] = 0;
    }
    MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    check(dir[0] != 0, "mkdtemp");
    const std::string path = std::string(dir) + "/data";

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", "4096");
    MPI_File fh;
    int rc = MPI_File_open(MPI_COMM_WORLD, path.c_str(), MPI_MODE_CREATE | MPI_MODE_RDWR, info,
                           &fh);
    MPI_Info_free(&info);
    check(rc == MPI_SUCCESS, "open");
    int amode = 0;
    MPI_File_get_amode(fh, &amode);
    check(amode == (MPI_MODE_CREATE | MPI_MODE_RDWR), "get_amode");
    int flag = 1;
    MPI_File_get_atomicity(fh, &flag);
    check(flag == 0, "atomicity off by default");
    MPI_File_set_atomicity(fh, 1);
    MPI_File_get_atomicity(fh, &flag);
    check(flag == 1, "set_atomicity");
    MPI_File_set_atomicity(fh, 0);

    /* six regions of size*N ints: region k holds value k*100000 + rank*N + i */
    std::vector<int> buf(N);
    auto fill = [&](int k) {
        for (int i = 0; i < N; i++)
            buf[static_cast<size_t>(i)] = k * 100000 + rank * N + i;
    };
    const MPI_Offset region = static_cast<MPI_Offset>(size) * N * 4;
    const MPI_Offset mine = static_cast<MPI_Offset>(rank) * N * 4;
    MPI_Status st;
    int cnt = 0;

    fill(0); /* explicit offset */
    MPI_File_write_at(fh, 0 * region + mine, buf.data(), N, MPI_INT, &st);
    MPI_Get_count(&st, MPI_INT, &cnt);
    check(cnt == N, "write_at count");
    fill(1); /* individual pointer */
    MPI_File_seek(fh, 1 * region + mine, MPI_SEEK_SET);
    MPI_File_write(fh, buf.data(), N, MPI_INT, &st);
    MPI_Offset pos = -1;
    MPI_File_get_position(fh, &pos);
    check(pos == 1 * region + mine + N * 4, "get_position after write");
    fill(2); /* nonblocking */
    MPI_Request req;
    MPI_File_iwrite_at(fh, 2 * region + mine, buf.data(), N, MPI_INT, &req);
    MPI_Wait(&req, &st);
    /* shared pointer, in ordered mode: rank order */
    MPI_File_seek_shared(fh, 3 * region, MPI_SEEK_SET);
    fill(3);
    MPI_File_write_ordered(fh, buf.data(), N, MPI_INT, &st);
    MPI_File_get_position_shared(fh, &pos);
    check(pos == 4 * region, "shared pointer after write_ordered");
    fill(4); /* split collective */
    MPI_File_write_at_all_begin(fh, 4 * region + mine, buf.data(), N, MPI_INT);
    MPI_File_write_at_all_end(fh, buf.data(), &st);
    MPI_Get_count(&st, MPI_INT, &cnt);
    check(cnt == N, "write_at_all_end count");
    /* a strided view: rank r's ints of region 5 at every size-th place */
    MPI_Datatype vec, ft;
    MPI_Type_vector(N, 1, size, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, region, &ft);
    MPI_Type_commit(&ft);
    MPI_Type_free(&vec);
    MPI_File_set_view(fh, 5 * region + rank * 4, MPI_INT, ft, "native", MPI_INFO_NULL);
    MPI_Offset byte = -1;
    MPI_File_get_byte_offset(fh, 1, &byte);
    check(byte == 5 * region + rank * 4 + size * 4, "get_byte_offset through the view");
    MPI_Aint ext = 0;
    MPI_File_get_type_extent(fh, ft, &ext);
    check(ext == region, "get_type_extent");
    fill(5);
    MPI_File_write_all(fh, buf.data(), N, MPI_INT, &st);
    MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    MPI_Type_free(&ft);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);

    /* read back all six regions */
    MPI_Offset fsize = 0;
    MPI_File_get_size(fh, &fsize);
    check(fsize == 6 * region, "file size");
    std::vector<int> all(static_cast<size_t>(6 * size * N));
    MPI_File_read_at_all(fh, 0, all.data(), static_cast<int>(all.size()), MPI_INT, &st);
    for (int k = 0; k < 6; k++)
        for (int r = 0; r < size; r++)
            for (int i = 0; i < N; i++) {
                int p = r * N + i; /* int of the region */
                size_t at = static_cast<size_t>(k * size * N + p);
                int want = k * 100000 + p;
                if (k == 5) /* strided: int j*size + q holds rank q's j-th int */
                    want = k * 100000 + (p % size) * N + p / size;
                if (all[at] != want) {
                    char m[96];
                    std::snprintf(m, sizeof m, "region %d int %zu: %d, want %d", k, at,
                                  all[at], want);
                    check(false, m);
                    k = 6;
                    r = size;
                    break;
                }
            }
    MPI_File_close(&fh);

    /* a C++ error handler on a read-only file */
    MPI_Errhandler eh;
    MPI_File_create_errhandler(on_file_error, &eh);
    rc = MPI_File_open(MPI_COMM_WORLD, path.c_str(), MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    check(rc == MPI_SUCCESS, "open read-only");
    MPI_File_set_errhandler(fh, eh);
    MPI_Errhandler_free(&eh);
    rc = MPI_File_write_at(fh, 0, buf.data(), 1, MPI_INT, &st);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    check(cls == MPI_ERR_READ_ONLY && handler_calls == 1 && handler_class == MPI_ERR_READ_ONLY,
          "error handler sees MPI_ERR_READ_ONLY");
    MPI_File_close(&fh);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_File_delete(path.c_str(), MPI_INFO_NULL);
        rmdir(dir);
    }

    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && total == 0)
        std::printf("No Errors\n");
    MPI_Finalize();
    return total != 0;
}
