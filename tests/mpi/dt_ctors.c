/*
 * dt_ctors.c - every datatype constructor through the MPI API against hand-computed
 *   sizes and bounds, the pair types' MPI sizes, envelope/contents, names, dup,
 *   Pack/Unpack round trips (several types into one buffer), Pack_size, truncation
 *   errors, Get_elements / Get_count / Status_set_elements, Type_match_size.
 *   Every rank runs the same checks; errors are summed on rank 0.
 */
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

static int errs, rank;

#define CHECK(c)                                                                         \
    do {                                                                                 \
        if (!(c)) {                                                                      \
            errs++;                                                                      \
            if (errs < 10)                                                               \
                printf("rank %d line %d: %s\n", rank, __LINE__, #c);                     \
        }                                                                                \
    } while (0)

static void bounds(MPI_Datatype t, int size, MPI_Aint lb, MPI_Aint ext, MPI_Aint tlb,
                   MPI_Aint text, int line)
{
    int s;
    MPI_Aint a, b, c, d;
    MPI_Type_size(t, &s);
    MPI_Type_get_extent(t, &a, &b);
    MPI_Type_get_true_extent(t, &c, &d);
    if (s != size || a != lb || b != ext || c != tlb || d != text) {
        errs++;
        printf("rank %d line %d: size %d lb %ld extent %ld true %ld/%ld, want %d %ld %ld "
               "%ld/%ld\n",
               rank, line, s, (long)a, (long)b, (long)c, (long)d, size, (long)lb,
               (long)ext, (long)tlb, (long)text);
    }
}
#define BOUNDS(t, s, lb, ext, tlb, text) bounds(t, s, lb, ext, tlb, text, __LINE__)

static int ndeleted, ncopied;
static int del_fn(MPI_Datatype t, int kv, void *val, void *extra)
{
    (void)t, (void)kv, (void)val;
    ndeleted += *(int *)extra;
    return MPI_SUCCESS;
}
static int copy_fn(MPI_Datatype t, int kv, void *extra, void *in, void *out, int *flag)
{
    (void)t, (void)kv, (void)extra;
    ncopied++;
    *(void **)out = (char *)in + 1;
    *flag = 1;
    return MPI_SUCCESS;
}

struct gappy {
    char c;
    double d;
    int i;
};

int main(int argc, char **argv)
{
    int size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(size >= 1);

    /* predefined, including the pair types: MPI sizes, C struct extents */
    BOUNDS(MPI_INT, 4, 0, 4, 0, 4);
    BOUNDS(MPI_DOUBLE_INT, 12, 0, 16, 0, 12);
    BOUNDS(MPI_LONG_INT, (int)(sizeof(long) + sizeof(int)), 0, 16, 0, 12);
    BOUNDS(MPI_SHORT_INT, 6, 0, 8, 0, 8);
    BOUNDS(MPI_FLOAT_INT, 8, 0, 8, 0, 8);
    BOUNDS(MPI_2INT, 8, 0, 8, 0, 8);
    struct {
        long double a;
        int b;
    } ldi;
    BOUNDS(MPI_LONG_DOUBLE_INT, (int)(sizeof(long double) + sizeof(int)), 0,
           (MPI_Aint)sizeof(ldi), 0, (MPI_Aint)(sizeof(long double) + sizeof(int)));
    char name[MPI_MAX_OBJECT_NAME];
    int len, ni, na, nd, comb;
    MPI_Type_get_name(MPI_DOUBLE_INT, name, &len);
    CHECK(strcmp(name, "MPI_DOUBLE_INT") == 0 && len == 14);
    MPI_Type_get_envelope(MPI_INT, &ni, &na, &nd, &comb);
    CHECK(comb == MPI_COMBINER_NAMED && ni == 0 && na == 0 && nd == 0);

    /* contiguous */
    MPI_Datatype ct, vt, hv, ix, hx, ib, hb, st, rs, dp, nest;
    MPI_Type_contiguous(5, MPI_INT, &ct);
    BOUNDS(ct, 20, 0, 20, 0, 20);
    /* vector, negative stride */
    MPI_Type_vector(3, 2, 4, MPI_INT, &vt);
    BOUNDS(vt, 24, 0, 40, 0, 40);
    MPI_Datatype vneg;
    MPI_Type_vector(3, 1, -2, MPI_INT, &vneg);
    BOUNDS(vneg, 12, -16, 20, -16, 20);
    /* hvector of doubles, stride in bytes */
    MPI_Type_create_hvector(4, 1, 24, MPI_DOUBLE, &hv);
    BOUNDS(hv, 32, 0, 80, 0, 80);
    /* indexed / hindexed */
    int bl[3] = {2, 1, 3}, di[3] = {4, 0, 10};
    MPI_Aint hd[3] = {16, 0, 40};
    MPI_Type_indexed(3, bl, di, MPI_INT, &ix);
    BOUNDS(ix, 24, 0, 52, 0, 52);
    MPI_Type_create_hindexed(3, bl, hd, MPI_INT, &hx);
    BOUNDS(hx, 24, 0, 52, 0, 52);
    /* indexed_block / hindexed_block with a negative displacement */
    int dib[3] = {3, -1, 6};
    MPI_Aint hdb[2] = {-8, 8};
    MPI_Type_create_indexed_block(3, 2, dib, MPI_INT, &ib);
    BOUNDS(ib, 24, -4, 36, -4, 36);
    MPI_Type_create_hindexed_block(2, 3, hdb, MPI_SHORT, &hb);
    BOUNDS(hb, 12, -8, 22, -8, 22);
    /* struct with gaps: extent padded like the C struct */
    int sbl[3] = {1, 1, 1};
    MPI_Aint sd[3] = {offsetof(struct gappy, c), offsetof(struct gappy, d),
                      offsetof(struct gappy, i)};
    MPI_Datatype sty[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT};
    MPI_Type_create_struct(3, sbl, sd, sty, &st);
    BOUNDS(st, 13, 0, (MPI_Aint)sizeof(struct gappy), 0, 20);
    /* resized, dup, nested */
    MPI_Type_create_resized(MPI_INT, -4, 16, &rs);
    BOUNDS(rs, 4, -4, 16, 0, 4);
    MPI_Aint lb, ub;
    MPI_Type_lb(rs, &lb);
    MPI_Type_ub(rs, &ub);
    CHECK(lb == -4 && ub == 12);
    MPI_Type_dup(vt, &dp);
    BOUNDS(dp, 24, 0, 40, 0, 40);
    MPI_Type_vector(2, 1, 2, vt, &nest); /* copies of vt at 0 and 80 bytes */
    BOUNDS(nest, 48, 0, 120, 0, 120);
    MPI_Count csz, clb, cext;
    MPI_Type_size_x(nest, &csz);
    MPI_Type_get_extent_x(nest, &clb, &cext);
    CHECK(csz == 48 && clb == 0 && cext == 120);

    /* envelope / contents */
    MPI_Type_get_envelope(ix, &ni, &na, &nd, &comb);
    CHECK(comb == MPI_COMBINER_INDEXED && ni == 7 && na == 0 && nd == 1);
    int ints[8];
    MPI_Aint aints[4];
    MPI_Datatype types[4];
    MPI_Type_get_contents(ix, 8, 4, 4, ints, aints, types);
    CHECK(ints[0] == 3 && ints[1] == 2 && ints[3] == 3 && ints[4] == 4 && ints[6] == 10);
    CHECK(types[0] == MPI_INT);
    MPI_Type_get_envelope(st, &ni, &na, &nd, &comb);
    CHECK(comb == MPI_COMBINER_STRUCT && ni == 4 && na == 3 && nd == 3);
    MPI_Type_get_envelope(rs, &ni, &na, &nd, &comb);
    CHECK(comb == MPI_COMBINER_RESIZED && ni == 0 && na == 2 && nd == 1);
    MPI_Type_get_contents(rs, 0, 2, 1, ints, aints, types);
    CHECK(aints[0] == -4 && aints[1] == 16 && types[0] == MPI_INT);
    MPI_Type_get_envelope(dp, &ni, &na, &nd, &comb);
    CHECK(comb == MPI_COMBINER_DUP && nd == 1);
    MPI_Type_get_contents(nest, 3, 0, 1, ints, aints, types);
    CHECK(ints[0] == 2 && ints[1] == 1 && ints[2] == 2);
    /* the returned derived handle is a new reference: usable after vt is freed */
    MPI_Datatype vt_copy = types[0];
    CHECK(MPI_Type_get_contents(MPI_INT, 1, 1, 1, ints, aints, types) == MPI_ERR_ARG);

    /* names */
    MPI_Type_set_name(st, "gappy");
    MPI_Type_get_name(st, name, &len);
    CHECK(strcmp(name, "gappy") == 0 && len == 5);
    /* a duplicate starts without a name (as MPICH's typesname tests check) */
    MPI_Datatype st_dup;
    MPI_Type_dup(st, &st_dup);
    len = -1;
    MPI_Type_get_name(st_dup, name, &len);
    CHECK(name[0] == 0 && len == 0);
    MPI_Type_free(&st_dup);

    /* Pack / Unpack: a column of a 6x6 matrix, then an array of gappy structs */
    int m[36], col[6], back[36];
    for (int i = 0; i < 36; i++)
        m[i] = 100 + i;
    MPI_Datatype colt;
    MPI_Type_vector(6, 1, 6, MPI_INT, &colt);
    MPI_Type_commit(&colt);
    MPI_Type_commit(&st);
    struct gappy g[4], g2[4];
    memset(g2, 0, sizeof(g2));
    for (int i = 0; i < 4; i++) {
        g[i].c = (char)('a' + i);
        g[i].d = 0.5 * i;
        g[i].i = -i;
    }
    int psz, psz2;
    MPI_Pack_size(1, colt, MPI_COMM_WORLD, &psz);
    MPI_Pack_size(4, st, MPI_COMM_WORLD, &psz2);
    CHECK(psz == 24 && psz2 == 52);
    char pbuf[128];
    int pos = 0;
    CHECK(MPI_Pack(m + 2, 1, colt, pbuf, sizeof(pbuf), &pos, MPI_COMM_WORLD) ==
          MPI_SUCCESS);
    CHECK(pos == 24);
    CHECK(MPI_Pack(g, 4, st, pbuf, sizeof(pbuf), &pos, MPI_COMM_WORLD) == MPI_SUCCESS);
    CHECK(pos == 76);
    memcpy(col, pbuf, sizeof(col));
    for (int i = 0; i < 6; i++)
        CHECK(col[i] == 102 + 6 * i);
    CHECK(pbuf[24] == 'a' && pbuf[24 + 13] == 'b'); /* no padding between elements */
    memset(back, 0, sizeof(back));
    pos = 0;
    CHECK(MPI_Unpack(pbuf, 76, &pos, back + 2, 1, colt, MPI_COMM_WORLD) == MPI_SUCCESS);
    CHECK(MPI_Unpack(pbuf, 76, &pos, g2, 4, st, MPI_COMM_WORLD) == MPI_SUCCESS);
    CHECK(pos == 76);
    for (int i = 0; i < 36; i++)
        CHECK(back[i] == (i % 6 == 2 ? m[i] : 0));
    for (int i = 0; i < 4; i++)
        CHECK(g2[i].c == g[i].c && g2[i].d == g[i].d && g2[i].i == g[i].i);
    /* truncation both ways */
    pos = 60;
    CHECK(MPI_Pack(m, 1, colt, pbuf, 80, &pos, MPI_COMM_WORLD) == MPI_ERR_TRUNCATE);
    pos = 60;
    CHECK(MPI_Unpack(pbuf, 76, &pos, back, 1, colt, MPI_COMM_WORLD) == MPI_ERR_TRUNCATE);
    /* pair type round trip: no padding on the packed side */
    struct {
        double d;
        int i;
    } dpair[3] = {{1.0, 1}, {2.0, 2}, {3.0, 3}}, dback[3];
    pos = 0;
    MPI_Pack(dpair, 3, MPI_DOUBLE_INT, pbuf, sizeof(pbuf), &pos, MPI_COMM_WORLD);
    CHECK(pos == 36);
    double d1;
    int i1;
    memcpy(&d1, pbuf + 12, 8);
    memcpy(&i1, pbuf + 20, 4);
    CHECK(d1 == 2.0 && i1 == 2);
    pos = 0;
    MPI_Unpack(pbuf, 36, &pos, dback, 3, MPI_DOUBLE_INT, MPI_COMM_WORLD);
    CHECK(dback[2].d == 3.0 && dback[2].i == 3);

    /* Get_count / Get_elements / Status_set_elements through a self message */
    int five[5] = {1, 2, 3, 4, 5}, r5[6];
    MPI_Datatype bad;
    MPI_Datatype two;
    MPI_Type_contiguous(2, MPI_INT, &two);
    MPI_Type_commit(&two);
    MPI_Status status;
    MPI_Sendrecv(five, 5, MPI_INT, rank, 7, r5, 3, two, rank, 7, MPI_COMM_WORLD, &status);
    int cnt, el;
    MPI_Get_count(&status, two, &cnt);
    MPI_Get_elements(&status, two, &el);
    CHECK(cnt == MPI_UNDEFINED && el == 5);
    CHECK(r5[4] == 5);
    MPI_Get_elements(&status, st, &el); /* 20 bytes = 1 gappy (13) + char + ... 7 left */
    CHECK(el == MPI_UNDEFINED);
    MPI_Status_set_elements(&status, st, 4);
    MPI_Get_elements(&status, st, &el);
    MPI_Get_count(&status, MPI_BYTE, &cnt);
    CHECK(el == 4 && cnt == 14);
    MPI_Count elx;
    MPI_Get_elements_x(&status, MPI_CHAR, &elx);
    CHECK(elx == 14);

    /* subarray: rows 1..2, columns 2..4 of a 4 x 5 int matrix, packed */
    MPI_Datatype sa;
    int sizes[2] = {4, 5}, subs[2] = {2, 3}, starts[2] = {1, 2};
    MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &sa);
    MPI_Type_commit(&sa);
    BOUNDS(sa, 24, 0, 80, 28, 32);
    MPI_Type_get_envelope(sa, &ni, &na, &nd, &comb);
    CHECK(comb == MPI_COMBINER_SUBARRAY && ni == 8 && na == 0 && nd == 1);
    pos = 0;
    MPI_Pack(m, 1, sa, pbuf, sizeof(pbuf), &pos, MPI_COMM_WORLD);
    CHECK(pos == 24);
    int sav[6];
    memcpy(sav, pbuf, sizeof(sav));
    CHECK(sav[0] == 107 && sav[2] == 109 && sav[3] == 112 && sav[5] == 114);
    CHECK(MPI_Type_create_subarray(2, sizes, subs, starts, 7, MPI_INT, &bad) ==
          MPI_ERR_ARG);
    MPI_Type_free(&sa);

    /* attributes: set/get/delete, DUP_FN and a copy callback on Type_dup, delete
     * callbacks on Type_free, a keyval freed while still in use */
    int one = 1, kv1, kv2, flag;
    static char vals[4];
    void *got;
    MPI_Type_create_keyval(MPI_TYPE_DUP_FN, del_fn, &kv1, &one);
    MPI_Type_create_keyval(copy_fn, del_fn, &kv2, &one);
    MPI_Datatype at, at2;
    MPI_Type_contiguous(2, MPI_INT, &at);
    MPI_Type_get_attr(at, kv1, &got, &flag);
    CHECK(flag == 0);
    MPI_Type_set_attr(at, kv1, &vals[0]);
    MPI_Type_set_attr(at, kv2, &vals[1]);
    MPI_Type_set_attr(at, kv1, &vals[2]); /* replaces: deletes the old value */
    CHECK(ndeleted == 1);
    MPI_Type_get_attr(at, kv1, &got, &flag);
    CHECK(flag == 1 && got == &vals[2]);
    MPI_Type_dup(at, &at2);
    CHECK(ncopied == 1);
    MPI_Type_get_attr(at2, kv1, &got, &flag);
    CHECK(flag == 1 && got == &vals[2]);
    MPI_Type_get_attr(at2, kv2, &got, &flag);
    CHECK(flag == 1 && got == &vals[2]);
    MPI_Type_free_keyval(&kv2);
    CHECK(kv2 == MPI_KEYVAL_INVALID);
    MPI_Type_delete_attr(at, kv1);
    CHECK(ndeleted == 2);
    MPI_Type_get_attr(at, kv1, &got, &flag);
    CHECK(flag == 0);
    MPI_Type_free(&at); /* kv2's attribute: one delete */
    CHECK(ndeleted == 3);
    MPI_Type_free(&at2); /* two attributes */
    CHECK(ndeleted == 5);
    CHECK(MPI_Type_delete_attr(MPI_INT, kv1) == MPI_ERR_KEYVAL);
    MPI_Type_set_attr(MPI_INT, kv1, &vals[3]); /* predefined types take attributes too */
    MPI_Type_get_attr(MPI_INT, kv1, &got, &flag);
    CHECK(flag == 1 && got == &vals[3]);
    MPI_Type_delete_attr(MPI_INT, kv1);
    MPI_Type_free_keyval(&kv1);

    /* external32: big-endian, MPI_LONG as 4 bytes, structs without padding */
    {
        unsigned char xb[64];
        MPI_Aint xp = 0, xs;
        int xi = 0x01020304;
        long xl = -2, xl2 = 0;
        double xd = 1.0;
        MPI_Pack_external("external32", &xi, 1, MPI_INT, xb, sizeof(xb), &xp);
        MPI_Pack_external("external32", &xl, 1, MPI_LONG, xb, sizeof(xb), &xp);
        MPI_Pack_external("external32", &xd, 1, MPI_DOUBLE, xb, sizeof(xb), &xp);
        CHECK(xp == 16);
        CHECK(xb[0] == 1 && xb[1] == 2 && xb[2] == 3 && xb[3] == 4);
        CHECK(xb[4] == 0xff && xb[5] == 0xff && xb[6] == 0xff && xb[7] == 0xfe);
        CHECK(xb[8] == 0x3f && xb[9] == 0xf0 && xb[10] == 0 && xb[15] == 0);
        xp = 4;
        MPI_Unpack_external("external32", xb, 16, &xp, &xl2, 1, MPI_LONG);
        CHECK(xl2 == -2 && xp == 8);
        MPI_Pack_external_size("external32", 2, st, &xs);
        CHECK(xs == 26);
        MPI_Pack_external_size("external32", 3, MPI_SHORT_INT, &xs);
        CHECK(xs == 18);
        struct gappy gx[2] = {{'x', -0.5, 7}, {'y', 2.0, -9}}, gy[2];
        memset(gy, 0, sizeof(gy));
        xp = 0;
        MPI_Pack_external("external32", gx, 2, st, xb, sizeof(xb), &xp);
        CHECK(xp == 26 && xb[0] == 'x' && xb[13] == 'y' && xb[12] == 7);
        xp = 0;
        MPI_Unpack_external("external32", xb, 26, &xp, gy, 2, st);
        CHECK(gy[1].c == 'y' && gy[1].d == 2.0 && gy[1].i == -9 && gy[0].d == -0.5);
        xp = 0;
        CHECK(MPI_Pack_external("external32", gx, 2, st, xb, 20, &xp) ==
              MPI_ERR_TRUNCATE);
        CHECK(MPI_Pack_external("native", gx, 1, st, xb, 64, &xp) ==
              MPI_ERR_UNSUPPORTED_DATAREP);
        long double ld = 1;
        CHECK(MPI_Pack_external("external32", &ld, 1, MPI_LONG_DOUBLE, xb, 64, &xp) ==
              MPI_ERR_CONVERSION);
    }

    /* darray: 4 x 6 ints over a 2 x 2 grid (BLOCK rows, CYCLIC(2) columns): the four
     * pieces partition the array */
    {
        int gs[2] = {4, 6}, dis[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
            da[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, ps[2] = {2, 2}, tot = 0,
            seen[24] = {0};
        int arr[24], out[24];
        for (int i = 0; i < 24; i++)
            arr[i] = i;
        for (int r = 0; r < 4; r++) {
            MPI_Datatype dt;
            int sz, p2 = 0;
            MPI_Type_create_darray(4, r, 2, gs, dis, da, ps, MPI_ORDER_C, MPI_INT, &dt);
            MPI_Type_commit(&dt);
            MPI_Type_size(dt, &sz);
            MPI_Type_get_extent(dt, &lb, &ub);
            CHECK(lb == 0 && ub == 96);
            tot += sz;
            MPI_Pack(arr, 1, dt, out, sizeof(out), &p2, MPI_COMM_WORLD);
            for (int k = 0; k < sz / 4; k++)
                seen[out[k]]++;
            MPI_Type_get_envelope(dt, &ni, &na, &nd, &comb);
            CHECK(comb == MPI_COMBINER_DARRAY && ni == 12 && nd == 1);
            MPI_Type_free(&dt);
        }
        CHECK(tot == 96);
        for (int i = 0; i < 24; i++)
            CHECK(seen[i] == 1);
    }

    /* Type_match_size */
    MPI_Datatype mt;
    MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &mt);
    CHECK(mt == MPI_DOUBLE);
    MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, &mt);
    CHECK(mt == MPI_INT32_T);
    CHECK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 3, &mt) == MPI_ERR_ARG);

    /* errors */
    CHECK(MPI_Type_contiguous(-1, MPI_INT, &bad) == MPI_ERR_COUNT);
    CHECK(MPI_Type_vector(1, 1, 1, MPI_DATATYPE_NULL, &bad) == MPI_ERR_TYPE);
    MPI_Datatype pre = MPI_INT;
    CHECK(MPI_Type_free(&pre) == MPI_ERR_TYPE);
    MPI_Datatype unc;
    MPI_Type_contiguous(2, MPI_INT, &unc);
    CHECK(MPI_Send(five, 1, unc, rank, 0, MPI_COMM_WORLD) ==
          MPI_ERR_TYPE); /* uncommitted */

    /* free in an order that keeps dependants alive */
    MPI_Type_free(&vt);
    CHECK(vt == MPI_DATATYPE_NULL);
    BOUNDS(nest, 48, 0, 120, 0, 120);
    BOUNDS(vt_copy, 24, 0, 40, 0, 40);
    MPI_Type_free(&vt_copy);
    MPI_Datatype all[] = {ct, vneg, hv, ix, hx, ib, hb, st, rs, dp, nest, colt, two, unc};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        CHECK(MPI_Type_free(&all[i]) == MPI_SUCCESS);

    int tot = 0;
    MPI_Allreduce(&errs, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (tot)
            printf("Found %d errors\n", tot);
        else
            printf("No Errors\n");
    }
    MPI_Finalize();
    return 0;
}
