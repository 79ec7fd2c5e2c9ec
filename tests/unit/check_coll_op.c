/*
 * check_coll_op.c - reduction operators of mpi/coll/op.c against values computed by
 *   hand: every predefined op on every type class it applies to (integers: arithmetic,
 *   logical, bitwise; floating: arithmetic; complex: SUM/PROD; pair types: MINLOC/
 *   MAXLOC with the lowest index winning ties), the refusals (bitwise on floating,
 *   MAX on complex, REPLACE/NO_OP), user ops (Op_create/free, commutativity flag) and
 *   predefined ops on a contiguous derived type.
 */
#include <check.h>
#include <complex.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "coll.h"
#include "dtype.h"

#define APPLY(op, in, io, n, dt) ck_assert_int_eq(xm_op_apply_any(op, in, io, n, dt), 0)

START_TEST(integers)
{
    static const MPI_Datatype i32[] = {MPI_INT, MPI_INT32_T};
    for (size_t k = 0; k < 2; k++) {
        int32_t a[4] = {1, -2, 0, 7}, b[4] = {3, 5, 0, -1}, c[4];
        memcpy(c, b, sizeof(c));
        APPLY(MPI_SUM, a, c, 4, i32[k]);
        ck_assert(c[0] == 4 && c[1] == 3 && c[2] == 0 && c[3] == 6);
        memcpy(c, b, sizeof(c));
        APPLY(MPI_PROD, a, c, 4, i32[k]);
        ck_assert(c[0] == 3 && c[1] == -10 && c[2] == 0 && c[3] == -7);
        memcpy(c, b, sizeof(c));
        APPLY(MPI_MAX, a, c, 4, i32[k]);
        ck_assert(c[0] == 3 && c[1] == 5 && c[3] == 7);
        memcpy(c, b, sizeof(c));
        APPLY(MPI_MIN, a, c, 4, i32[k]);
        ck_assert(c[0] == 1 && c[1] == -2 && c[3] == -1);
        memcpy(c, b, sizeof(c));
        APPLY(MPI_LAND, a, c, 4, i32[k]);
        ck_assert(c[0] == 1 && c[1] == 1 && c[2] == 0 && c[3] == 1);
        memcpy(c, b, sizeof(c));
        APPLY(MPI_LXOR, a, c, 4, i32[k]);
        ck_assert(c[0] == 0 && c[1] == 0 && c[2] == 0 && c[3] == 0);
        memcpy(c, b, sizeof(c));
        APPLY(MPI_LOR, a, c, 4, i32[k]);
        ck_assert(c[0] == 1 && c[2] == 0);
        memcpy(c, b, sizeof(c));
        APPLY(MPI_BAND, a, c, 4, i32[k]);
        ck_assert(c[0] == (1 & 3) && c[1] == (-2 & 5) && c[3] == (7 & -1));
        memcpy(c, b, sizeof(c));
        APPLY(MPI_BOR, a, c, 4, i32[k]);
        ck_assert(c[0] == (1 | 3) && c[1] == (-2 | 5));
        memcpy(c, b, sizeof(c));
        APPLY(MPI_BXOR, a, c, 4, i32[k]);
        ck_assert(c[0] == (1 ^ 3) && c[3] == (7 ^ -1));
    }
    /* unsigned: MAX compares unsigned, sums wrap */
    uint8_t ua[2] = {200, 1}, ub[2] = {100, 255};
    APPLY(MPI_MAX, ua, ub, 2, MPI_UNSIGNED_CHAR);
    ck_assert(ub[0] == 200 && ub[1] == 255);
    uint64_t la = UINT64_MAX, lb = 2;
    APPLY(MPI_SUM, &la, &lb, 1, MPI_UINT64_T);
    ck_assert(lb == 1);
    int16_t sa = -300, sb = 200;
    APPLY(MPI_MIN, &sa, &sb, 1, MPI_SHORT);
    ck_assert(sb == -300);
    long long xa = 1LL << 40, xb = 3;
    APPLY(MPI_PROD, &xa, &xb, 1, MPI_LONG_LONG);
    ck_assert(xb == 3LL << 40);
}
END_TEST

START_TEST(floating)
{
    double a[3] = {1.5, -2, 4}, b[3] = {2, 8, -4};
    APPLY(MPI_PROD, a, b, 3, MPI_DOUBLE);
    ck_assert(b[0] == 3 && b[1] == -16 && b[2] == -16);
    float fa = 2.5f, fb = -1;
    APPLY(MPI_MAX, &fa, &fb, 1, MPI_FLOAT);
    ck_assert(fb == 2.5f);
    long double da = 1, db = 2;
    APPLY(MPI_SUM, &da, &db, 1, MPI_LONG_DOUBLE);
    ck_assert(db == 3);
    /* bitwise ops are not defined on floating types */
    ck_assert_int_eq(xm_op_apply_any(MPI_BAND, a, b, 3, MPI_DOUBLE), -EINVAL);
    ck_assert_int_eq(xm_op_apply_any(MPI_REPLACE, a, b, 3, MPI_DOUBLE), -EINVAL);
    ck_assert_int_eq(xm_op_apply_any(MPI_NO_OP, a, b, 3, MPI_DOUBLE), -EINVAL);
}
END_TEST

START_TEST(complex_types)
{
    double complex a = 1 + 2 * I, b = 3 - 1 * I;
    APPLY(MPI_PROD, &a, &b, 1, MPI_C_DOUBLE_COMPLEX);
    ck_assert(creal(b) == 5 && cimag(b) == 5); /* (1+2i)(3-i) = 3 - i + 6i + 2 */
    float complex fa = 1 + 1 * I, fb = 2;
    APPLY(MPI_SUM, &fa, &fb, 1, MPI_C_FLOAT_COMPLEX);
    ck_assert(crealf(fb) == 3 && cimagf(fb) == 1);
    ck_assert_int_eq(xm_op_apply_any(MPI_MAX, &a, &b, 1, MPI_C_DOUBLE_COMPLEX), -EINVAL);
}
END_TEST

START_TEST(minloc_maxloc)
{
    struct { double v; int i; } a[3] = {{1, 5}, {2, 1}, {-1, 9}}, b[3] = {{1, 3}, {1, 0}, {4, 2}};
    APPLY(MPI_MINLOC, a, b, 3, MPI_DOUBLE_INT);
    ck_assert(b[0].v == 1 && b[0].i == 3); /* tie: lower index */
    ck_assert(b[1].v == 1 && b[1].i == 0);
    ck_assert(b[2].v == -1 && b[2].i == 9);
    struct { int v, i; } c[2] = {{7, 4}, {7, 2}}, d[2] = {{7, 3}, {6, 0}};
    APPLY(MPI_MAXLOC, c, d, 2, MPI_2INT);
    ck_assert(d[0].v == 7 && d[0].i == 3);
    ck_assert(d[1].v == 7 && d[1].i == 2);
    struct { float v; int i; } e = {1, 1}, f = {0.5f, 2};
    APPLY(MPI_MAXLOC, &e, &f, 1, MPI_FLOAT_INT);
    ck_assert(f.v == 1 && f.i == 1);
    struct { short v; int i; } g = {-3, 8}, h = {-2, 1};
    APPLY(MPI_MINLOC, &g, &h, 1, MPI_SHORT_INT);
    ck_assert(h.v == -3 && h.i == 8);
    struct { long v; int i; } l = {5, 0}, m = {5, 1};
    APPLY(MPI_MINLOC, &l, &m, 1, MPI_LONG_INT);
    ck_assert(m.i == 0);
    /* MINLOC on a plain type is not defined */
    int x = 1, y = 2;
    ck_assert_int_eq(xm_op_apply_any(MPI_MINLOC, &x, &y, 1, MPI_INT), -EINVAL);
}
END_TEST

static int calls;
static void concat(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int *a = in, *b = inout;
    calls++;
    ck_assert_int_eq(*dt, MPI_INT);
    for (int k = 0; k < *len; k++)
        b[k] = a[k] * 10 + b[k];
}

START_TEST(user_ops)
{
    MPI_Op op, op2;
    ck_assert_int_eq(xm_op_create(concat, 0, &op), 0);
    ck_assert_int_eq(xm_op_create(concat, 1, &op2), 0);
    ck_assert(op != op2 && xm_op_valid(op) && xm_op_valid(op2));
    ck_assert_int_eq(xm_op_commutative(op), 0);
    ck_assert_int_eq(xm_op_commutative(op2), 1);
    ck_assert_int_eq(xm_op_commutative(MPI_SUM), 1);
    int a[2] = {1, 2}, b[2] = {3, 4};
    APPLY(op, a, b, 2, MPI_INT);
    ck_assert(calls == 1 && b[0] == 13 && b[1] == 24); /* in is the left operand */
    ck_assert_int_eq(xm_op_free(&op), 0);
    ck_assert_int_eq(op, MPI_OP_NULL);
    ck_assert_int_eq(xm_op_free(&op), -EINVAL);
    MPI_Op stale = op2;
    ck_assert_int_eq(xm_op_free(&op2), 0);
    ck_assert(!xm_op_valid(stale));
    ck_assert(xm_op_create(NULL, 1, &op) == -EINVAL);
}
END_TEST

START_TEST(derived_contiguous)
{
    struct xm_dtype *t = NULL;
    int three = 3;
    MPI_Datatype old = MPI_INT;
    ck_assert_int_eq(xm_dt_create(MPI_COMBINER_CONTIGUOUS, 1, &three, 0, NULL, 1, &old, &t),
                     0);
    int a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {10, 20, 30, 40, 50, 60};
    APPLY(MPI_SUM, a, b, 2, t->handle);
    for (int k = 0; k < 6; k++)
        ck_assert_int_eq(b[k], 11 * (k + 1));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("coll_op");
    TCase *tc = tcase_create("ops");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, integers);
    tcase_add_test(tc, floating);
    tcase_add_test(tc, complex_types);
    tcase_add_test(tc, minloc_maxloc);
    tcase_add_test(tc, user_ops);
    tcase_add_test(tc, derived_contiguous);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
