// cxx_basic.cc - a C++ program on Loom MPI: mpi.h compiles as C++11/17/20 under
//   -Wall -Wextra -pedantic -Werror (mpi/Makefile.am builds it three times), links
//   (extern "C"), and works with std::vector buffers: allreduce (also in place),
//   sendrecv around a ring, bcast of a std::string's bytes, a user-defined op from a
//   C++ function; no exceptions.  Rank 0 prints "No Errors" (tests/mpi/runtests).
#include <mpi.h>

#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

namespace {

int failures;

void check(bool ok, const char *what, int rank)
{
    if (!ok) {
        ++failures;
        std::printf("rank %d: FAIL: %s\n", rank, what);
    }
}

extern "C" void absmax(void *in, void *inout, int *len, MPI_Datatype *)
{
    const int *a = static_cast<const int *>(in);
    int *b = static_cast<int *>(inout);
    for (int i = 0; i < *len; ++i) {
        int x = a[i] < 0 ? -a[i] : a[i], y = b[i] < 0 ? -b[i] : b[i];
        b[i] = x > y ? x : y;
    }
}

} // namespace

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    const int n = 1000;
    std::vector<double> v(n), sum(n);
    std::iota(v.begin(), v.end(), static_cast<double>(rank));
    MPI_Allreduce(v.data(), sum.data(), n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    bool ok = true;
    for (int i = 0; i < n; ++i)
        ok = ok && sum[i] == static_cast<double>(size) * i + size * (size - 1) / 2.0;
    check(ok, "allreduce of a std::vector<double>", rank);

    std::vector<long long> cnt(3, rank + 1);
    MPI_Allreduce(MPI_IN_PLACE, cnt.data(), static_cast<int>(cnt.size()), MPI_LONG_LONG,
                  MPI_MAX, MPI_COMM_WORLD);
    check(cnt[0] == size && cnt[2] == size, "allreduce in place", rank);

    std::vector<int> out(16, rank), in(16, -1);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Status st;
    MPI_Sendrecv(out.data(), 16, MPI_INT, right, 5, in.data(), 16, MPI_INT, left, 5,
                 MPI_COMM_WORLD, &st);
    check(in[0] == left && in[15] == left && st.MPI_SOURCE == left && st.MPI_TAG == 5,
          "sendrecv ring", rank);

    std::string s = rank == 0 ? "loom speaks C++" : std::string(15, ' ');
    MPI_Bcast(&s[0], static_cast<int>(s.size()), MPI_CHAR, 0, MPI_COMM_WORLD);
    check(s == "loom speaks C++", "bcast of a std::string", rank);

    MPI_Op op;
    MPI_Op_create(absmax, 1, &op);
    int x = rank % 2 ? -rank : rank, m = 0;
    MPI_Allreduce(&x, &m, 1, MPI_INT, op, MPI_COMM_WORLD);
    check(m == size - 1, "user op from C++", rank);
    MPI_Op_free(&op);

    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (total == 0)
            std::printf("No Errors\n");
        else
            std::printf("Found %d errors\n", total);
    }
    MPI_Finalize();
    return total != 0;
}
