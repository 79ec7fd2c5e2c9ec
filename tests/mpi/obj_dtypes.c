/*
 * obj_dtypes.c - the optional named datatypes of MPI-3.1 and the Fortran 90 types:
 *   - sizes and extents of every named type (C, C++, Fortran, sized Fortran kinds);
 *   - reductions on them where the standard allows the operation (sum, prod, max,
 *     logical and, MINLOC pairs), checked against the values computed here;
 *   - MPI_Type_create_f90_real/complex/integer: kind chosen by precision and range,
 *     the same handle for the same arguments, envelope MPI_COMBINER_F90_*, contents,
 *     not freeable, usable in communication; MPI_Type_match_size;
 *   - indexed/hindexed/struct types whose leading blocks have zero length: commit,
 *     bounds, and a send/receive between ranks.
 */
#include <complex.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "mpitest.h"

static int rank, size;
typedef __int128 i128;
typedef __float128 f128;
typedef _Complex _Float128 c128;
typedef float complex fc;
typedef double complex dc;
typedef long double complex ldc;

static void check_size(MPI_Datatype t, int want, int line)
{
    int s = -1;
    MPI_Aint lb = -1, ext = -1;
    MPI_Type_size(t, &s);
    MPI_Type_get_extent(t, &lb, &ext);
    TEST_ASSERT_MSG(s == want && lb == 0 && ext == want, "line %d: size %d extent %ld, want %d",
                    line, s, (long)ext, want);
}
#define SIZE_IS(t, n) check_size(t, n, __LINE__)

/* sum over ranks of (rank + 1) for every element type T */
#define SUM_TEST(T, dt)                                                                  \
    do {                                                                                 \
        T va[3], vb[3];                                                                  \
        for (int i = 0; i < 3; i++)                                                      \
            va[i] = (T)(rank + 1 + i);                                                   \
        memset(vb, 0, sizeof(vb));                                                       \
        int rc_ = MPI_Allreduce(va, vb, 3, dt, MPI_SUM, MPI_COMM_WORLD);                 \
        TEST_ASSERT_MSG(rc_ == MPI_SUCCESS, "%s: rc %d", #dt, rc_);                      \
        for (int i = 0; i < 3; i++)                                                      \
            TEST_ASSERT_MSG(vb[i] == (T)(size * (size + 1) / 2 + size * i), "%s[%d]",    \
                            #dt, i);                                                     \
    } while (0)

#define MAX_TEST(T, dt)                                                                  \
    do {                                                                                 \
        T va = (T)(rank * 3), vb = 0;                                                    \
        int rc_ = MPI_Allreduce(&va, &vb, 1, dt, MPI_MAX, MPI_COMM_WORLD);               \
        TEST_ASSERT_MSG(rc_ == MPI_SUCCESS && vb == (T)((size - 1) * 3), "%s max", #dt); \
    } while (0)

static int tdel_runs;
static int type_delete(MPI_Datatype t, int keyval, void *val, void *extra)
{
    (void)val;
    (void)extra;
    tdel_runs++;
    MPI_Type_delete_attr(t, keyval); /* nested delete of itself: no recursion */
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* sizes */
    SIZE_IS(MPI_C_BOOL, sizeof(bool));
    SIZE_IS(MPI_CXX_BOOL, 1);
    SIZE_IS(MPI_C_COMPLEX, sizeof(float complex));
    SIZE_IS(MPI_C_FLOAT_COMPLEX, sizeof(float complex));
    SIZE_IS(MPI_C_DOUBLE_COMPLEX, sizeof(double complex));
    SIZE_IS(MPI_C_LONG_DOUBLE_COMPLEX, sizeof(long double complex));
    SIZE_IS(MPI_CXX_FLOAT_COMPLEX, sizeof(float complex));
    SIZE_IS(MPI_CXX_DOUBLE_COMPLEX, sizeof(double complex));
    SIZE_IS(MPI_CXX_LONG_DOUBLE_COMPLEX, sizeof(long double complex));
    SIZE_IS(MPI_AINT, sizeof(MPI_Aint));
    SIZE_IS(MPI_OFFSET, sizeof(MPI_Offset));
    SIZE_IS(MPI_COUNT, sizeof(MPI_Count));
    SIZE_IS(MPI_INTEGER, 4);
    SIZE_IS(MPI_REAL, 4);
    SIZE_IS(MPI_DOUBLE_PRECISION, 8);
    SIZE_IS(MPI_COMPLEX, 8);
    SIZE_IS(MPI_DOUBLE_COMPLEX, 16);
    SIZE_IS(MPI_LOGICAL, 4);
    SIZE_IS(MPI_CHARACTER, 1);
    SIZE_IS(MPI_REAL4, 4);
    SIZE_IS(MPI_REAL8, 8);
    SIZE_IS(MPI_REAL16, 16);
    SIZE_IS(MPI_INTEGER1, 1);
    SIZE_IS(MPI_INTEGER2, 2);
    SIZE_IS(MPI_INTEGER4, 4);
    SIZE_IS(MPI_INTEGER8, 8);
    SIZE_IS(MPI_INTEGER16, 16);
    SIZE_IS(MPI_COMPLEX8, 8);
    SIZE_IS(MPI_COMPLEX16, 16);
    SIZE_IS(MPI_COMPLEX32, 32);
    int s;
    MPI_Type_size(MPI_2INTEGER, &s);
    TEST_ASSERT(s == 8);
    MPI_Type_size(MPI_2REAL, &s);
    TEST_ASSERT(s == 8);
    MPI_Type_size(MPI_2DOUBLE_PRECISION, &s);
    TEST_ASSERT(s == 16);
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_Type_get_name(MPI_INTEGER8, name, &len);
    TEST_ASSERT(!strcmp(name, "MPI_INTEGER8"));
    MPI_Type_get_name(MPI_CXX_DOUBLE_COMPLEX, name, &len);
    TEST_ASSERT(!strcmp(name, "MPI_CXX_DOUBLE_COMPLEX"));

    /* reductions */
    SUM_TEST(int8_t, MPI_INTEGER1);
    SUM_TEST(int16_t, MPI_INTEGER2);
    SUM_TEST(int32_t, MPI_INTEGER4);
    SUM_TEST(int64_t, MPI_INTEGER8);
    SUM_TEST(i128, MPI_INTEGER16);
    SUM_TEST(int32_t, MPI_INTEGER);
    SUM_TEST(float, MPI_REAL4);
    SUM_TEST(double, MPI_REAL8);
    SUM_TEST(f128, MPI_REAL16);
    SUM_TEST(float, MPI_REAL);
    SUM_TEST(double, MPI_DOUBLE_PRECISION);
    SUM_TEST(MPI_Aint, MPI_AINT);
    SUM_TEST(MPI_Offset, MPI_OFFSET);
    SUM_TEST(MPI_Count, MPI_COUNT);
    SUM_TEST(fc, MPI_COMPLEX8);
    SUM_TEST(dc, MPI_COMPLEX16);
    SUM_TEST(c128, MPI_COMPLEX32);
    SUM_TEST(fc, MPI_CXX_FLOAT_COMPLEX);
    SUM_TEST(dc, MPI_CXX_DOUBLE_COMPLEX);
    SUM_TEST(ldc, MPI_CXX_LONG_DOUBLE_COMPLEX);
    SUM_TEST(fc, MPI_COMPLEX);
    SUM_TEST(dc, MPI_DOUBLE_COMPLEX);
    MAX_TEST(int8_t, MPI_INTEGER1);
    MAX_TEST(i128, MPI_INTEGER16);
    MAX_TEST(double, MPI_REAL8);
    MAX_TEST(f128, MPI_REAL16);
    { /* complex product: every rank contributes i */
        double complex a = I, b = 0;
        MPI_Allreduce(&a, &b, 1, MPI_COMPLEX16, MPI_PROD, MPI_COMM_WORLD);
        double complex want = 1;
        for (int r = 0; r < size; r++)
            want *= I;
        TEST_ASSERT(b == want);
    }
    { /* logical and/or on the boolean types */
        bool a = rank != 0, b = true, c = false;
        MPI_Allreduce(&a, &b, 1, MPI_C_BOOL, MPI_LAND, MPI_COMM_WORLD);
        MPI_Allreduce(&a, &c, 1, MPI_CXX_BOOL, MPI_LOR, MPI_COMM_WORLD);
        TEST_ASSERT(!b && c == (size > 1));
        int la = 1, lb = 0;
        MPI_Allreduce(&la, &lb, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD);
        TEST_ASSERT(lb == 1);
    }
    { /* MINLOC on a Fortran pair */
        int a[2] = {10 - rank, rank}, b[2] = {0, 0};
        MPI_Allreduce(a, b, 1, MPI_2INTEGER, MPI_MINLOC, MPI_COMM_WORLD);
        TEST_ASSERT(b[0] == 10 - (size - 1) && b[1] == size - 1);
    }
    /* Fortran 90 parameterized types */
    MPI_Datatype r1, r2, r3, c1, i1, i2, t;
    TEST_ASSERT(MPI_Type_create_f90_real(6, MPI_UNDEFINED, &r1) == MPI_SUCCESS);
    TEST_ASSERT(MPI_Type_create_f90_real(15, 300, &r2) == MPI_SUCCESS);
    TEST_ASSERT(MPI_Type_create_f90_real(MPI_UNDEFINED, 1000, &r3) == MPI_SUCCESS);
    TEST_ASSERT(MPI_Type_create_f90_complex(10, MPI_UNDEFINED, &c1) == MPI_SUCCESS);
    TEST_ASSERT(MPI_Type_create_f90_integer(9, &i1) == MPI_SUCCESS);
    TEST_ASSERT(MPI_Type_create_f90_integer(10, &i2) == MPI_SUCCESS);
    MPI_Type_size(r1, &s);
    TEST_ASSERT(s == 4);
    MPI_Type_size(r2, &s);
    TEST_ASSERT(s == 8);
    MPI_Type_size(r3, &s);
    TEST_ASSERT(s == 16);
    MPI_Type_size(c1, &s);
    TEST_ASSERT(s == 16);
    MPI_Type_size(i1, &s);
    TEST_ASSERT(s == 4);
    MPI_Type_size(i2, &s);
    TEST_ASSERT(s == 8);
    TEST_ASSERT(MPI_Type_create_f90_real(15, 300, &t) == MPI_SUCCESS && t == r2);
    TEST_ASSERT(MPI_Type_create_f90_real(40, MPI_UNDEFINED, &t) != MPI_SUCCESS);
    TEST_ASSERT(MPI_Type_create_f90_integer(40, &t) != MPI_SUCCESS);
    int ni, na, nd, comb, ints[2];
    MPI_Type_get_envelope(r2, &ni, &na, &nd, &comb);
    TEST_ASSERT(comb == MPI_COMBINER_F90_REAL && ni == 2 && na == 0 && nd == 0);
    MPI_Type_get_contents(r2, 2, 0, 0, ints, NULL, NULL);
    TEST_ASSERT(ints[0] == 15 && ints[1] == 300);
    MPI_Type_get_envelope(i1, &ni, &na, &nd, &comb);
    TEST_ASSERT(comb == MPI_COMBINER_F90_INTEGER && ni == 1);
    MPI_Type_get_contents(i1, 1, 0, 0, ints, NULL, NULL);
    TEST_ASSERT(ints[0] == 9);
    MPI_Type_get_envelope(c1, &ni, &na, &nd, &comb);
    TEST_ASSERT(comb == MPI_COMBINER_F90_COMPLEX && ni == 2);
    t = r2;
    TEST_ASSERT(MPI_Type_free(&t) != MPI_SUCCESS);
    SUM_TEST(double, r2);
    SUM_TEST(int64_t, i2);
    /* match_size answers with C types where C has one (as MPICH), else the kind */
    TEST_ASSERT(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &t) == MPI_SUCCESS &&
                t == MPI_DOUBLE);
    TEST_ASSERT(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 16, &t) == MPI_SUCCESS &&
                t == MPI_INTEGER16);
    TEST_ASSERT(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 16, &t) == MPI_SUCCESS &&
                t == MPI_C_DOUBLE_COMPLEX);
    TEST_ASSERT(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 3, &t) != MPI_SUCCESS);

    { /* external32: big-endian, complex halves swapped one by one, quad round trip */
        unsigned char ext[64];
        MPI_Aint pos = 0, esz;
        int32_t i4 = 0x01020304;
        fc c8 = 1.0f + 2.0f * I;
        f128 q = 3.25, q2 = 0;
        MPI_Pack_external("external32", &i4, 1, MPI_INTEGER4, ext, sizeof(ext), &pos);
        TEST_ASSERT(pos == 4 && ext[0] == 1 && ext[3] == 4);
        MPI_Pack_external("external32", &c8, 1, MPI_COMPLEX8, ext, sizeof(ext), &pos);
        TEST_ASSERT(pos == 12 && ext[4] == 0x3f && ext[5] == 0x80 && ext[8] == 0x40);
        MPI_Pack_external("external32", &q, 1, MPI_REAL16, ext, sizeof(ext), &pos);
        TEST_ASSERT(pos == 28 && ext[12] == 0x40 && ext[13] == 0x00 && ext[14] == 0xa0);
        MPI_Pack_external_size("external32", 1, MPI_COMPLEX32, &esz);
        TEST_ASSERT(esz == 32);
        pos = 12;
        MPI_Unpack_external("external32", ext, sizeof(ext), &pos, &q2, 1, MPI_REAL16);
        TEST_ASSERT(q2 == q && pos == 28);
    }

    { /* type attributes: a delete callback deleting its own attribute */
        MPI_Datatype tt;
        int tk;
        MPI_Type_contiguous(2, MPI_INT, &tt);
        MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, type_delete, &tk, NULL);
        MPI_Type_set_attr(tt, tk, (void *)1L);
        MPI_Type_free_keyval(&tk);
        MPI_Type_free(&tt);
        TEST_ASSERT_MSG(tdel_runs == 1, "%d runs", tdel_runs);
    }

    /* leading zero-length blocks */
    int bl[4] = {0, 0, 2, 3}, d[4] = {0, 1, 4, 8};
    MPI_Datatype ix, hx, st;
    TEST_ASSERT(MPI_Type_indexed(4, bl, d, MPI_INT, &ix) == MPI_SUCCESS);
    TEST_ASSERT(MPI_Type_commit(&ix) == MPI_SUCCESS);
    MPI_Aint lb, ext;
    MPI_Type_size(ix, &s);
    MPI_Type_get_extent(ix, &lb, &ext);
    TEST_ASSERT_MSG(s == 20 && lb == 16 && ext == 28, "size %d lb %ld extent %ld", s,
                    (long)lb, (long)ext);
    MPI_Aint hd[3] = {0, 64, 8};
    int hbl[3] = {0, 0, 2};
    TEST_ASSERT(MPI_Type_create_hindexed(3, hbl, hd, MPI_DOUBLE, &hx) == MPI_SUCCESS);
    TEST_ASSERT(MPI_Type_commit(&hx) == MPI_SUCCESS);
    MPI_Datatype sty[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT};
    MPI_Aint sd[3] = {0, 8, 16};
    int sbl[3] = {0, 0, 1};
    TEST_ASSERT(MPI_Type_create_struct(3, sbl, sd, sty, &st) == MPI_SUCCESS);
    TEST_ASSERT(MPI_Type_commit(&st) == MPI_SUCCESS);
    MPI_Type_size(st, &s);
    TEST_ASSERT(s == 4);
    int sbuf[16], rbuf[16];
    for (int i = 0; i < 16; i++) {
        sbuf[i] = 100 * rank + i;
        rbuf[i] = -1;
    }
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    MPI_Status stt;
    MPI_Sendrecv(sbuf, 1, ix, to, 1, rbuf, 1, ix, from, 1, MPI_COMM_WORLD, &stt);
    int cnt;
    MPI_Get_count(&stt, ix, &cnt);
    TEST_ASSERT(cnt == 1);
    for (int i = 0; i < 16; i++) {
        int in = (i >= 4 && i < 6) || (i >= 8 && i < 11);
        TEST_ASSERT_MSG(rbuf[i] == (in ? 100 * from + i : -1), "rbuf[%d] = %d", i, rbuf[i]);
    }
    MPI_Type_free(&ix);
    MPI_Type_free(&hx);
    MPI_Type_free(&st);
    return test_finish();
}
