/*
 * comm_basic.c - communicators: split ordering by (colour, key, parent rank),
 *   MPI_UNDEFINED colour, dup isolation (same tag/source on two communicators never
 *   matches across), compare results, split_type(SHARED), create from a group, names,
 *   attributes with copy/delete callbacks run on dup/free/delete/replace, MPI_COMM_DUP_FN
 *   and MPI_COMM_NULL_COPY_FN, predefined attributes, many dup/free cycles (context ids
 *   are returned), collectives on derived communicators.
 * Rank 0 prints "No Errors" when every rank found none.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int errs, me, p;
#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        if (!(cond) && errs++ < 10) {                                        \
            fprintf(stderr, "[%d] line %d: ", me, __LINE__);                 \
            fprintf(stderr, __VA_ARGS__);                                    \
            fputc('\n', stderr);                                             \
        }                                                                    \
    } while (0)

static int copies, deletes, eh_calls, eh_code;
static MPI_Comm eh_comm;

static void my_eh(MPI_Comm *c, int *code, ...)
{
    eh_calls++;
    eh_code = *code;
    eh_comm = *c;
}

static int copy_cb(MPI_Comm c, int kv, void *extra, void *in, void *out, int *flag)
{
    (void)c;
    (void)kv;
    CHECK(extra == &copies, "copy extra_state");
    copies++;
    *(void **)out = (void *)((char *)in + 1); /* the copy's value is in + 1 */
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_cb(MPI_Comm c, int kv, void *val, void *extra)
{
    (void)c;
    (void)kv;
    (void)val;
    CHECK(extra == &copies, "delete extra_state");
    deletes++;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &p);

    /* split: colour me % 3, key decreasing with rank -> reverse order in each colour */
    MPI_Comm sc;
    MPI_Comm_split(MPI_COMM_WORLD, me % 3, p - me, &sc);
    int sr, ss, n = 0, myidx = 0;
    MPI_Comm_rank(sc, &sr);
    MPI_Comm_size(sc, &ss);
    for (int r = 0; r < p; r++)
        if (r % 3 == me % 3) {
            n++;
            if (r > me)
                myidx++;
        }
    CHECK(ss == n && sr == myidx, "split size %d rank %d (want %d %d)", ss, sr, n, myidx);
    /* the members' world ranks, gathered on the split comm, must be in that order */
    int *wr = malloc(ss * sizeof(int));
    MPI_Allgather(&me, 1, MPI_INT, wr, 1, MPI_INT, sc);
    for (int i = 1; i < ss; i++)
        CHECK(wr[i] < wr[i - 1] && wr[i] % 3 == me % 3, "split order");
    free(wr);
    /* equal keys: parent rank order */
    MPI_Comm eq;
    MPI_Comm_split(MPI_COMM_WORLD, 0, 7, &eq);
    int er, cmp;
    MPI_Comm_rank(eq, &er);
    CHECK(er == me, "equal keys keep parent order");
    MPI_Comm_compare(eq, MPI_COMM_WORLD, &cmp);
    CHECK(cmp == MPI_CONGRUENT, "compare congruent %d", cmp);
    MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &cmp);
    CHECK(cmp == MPI_IDENT, "compare ident");
    if (p > 1) {
        MPI_Comm rev;
        MPI_Comm_split(MPI_COMM_WORLD, 0, -me, &rev);
        MPI_Comm_compare(rev, MPI_COMM_WORLD, &cmp);
        CHECK(cmp == MPI_SIMILAR, "compare similar %d", cmp);
        MPI_Comm_compare(rev, MPI_COMM_SELF, &cmp);
        CHECK(cmp == MPI_UNEQUAL, "compare unequal %d", cmp);
        MPI_Comm_free(&rev);
    }
    /* UNDEFINED colour gives COMM_NULL */
    MPI_Comm un;
    MPI_Comm_split(MPI_COMM_WORLD, me == 0 ? MPI_UNDEFINED : 1, 0, &un);
    CHECK((me == 0) == (un == MPI_COMM_NULL), "undefined colour");
    if (un != MPI_COMM_NULL)
        MPI_Comm_free(&un);

    /* dup isolation: same source and tag on two communicators */
    MPI_Comm d;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    if (p > 1) {
        if (me == 0) {
            int x = 1, y = 2;
            MPI_Send(&x, 1, MPI_INT, 1, 9, MPI_COMM_WORLD);
            MPI_Send(&y, 1, MPI_INT, 1, 9, d);
        } else if (me == 1) {
            int x = 0, y = 0;
            MPI_Recv(&y, 1, MPI_INT, 0, 9, d, MPI_STATUS_IGNORE); /* posted first */
            MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            CHECK(x == 1 && y == 2, "dup isolation x=%d y=%d", x, y);
        }
        int flag;
        MPI_Barrier(d);
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, d, &flag, MPI_STATUS_IGNORE);
        CHECK(!flag, "stray message on dup");
    }
    MPI_Comm_compare(d, MPI_COMM_WORLD, &cmp);
    CHECK(cmp == MPI_CONGRUENT, "dup congruent");

    /* names */
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_Comm_get_name(MPI_COMM_WORLD, name, &len);
    CHECK(!strcmp(name, "MPI_COMM_WORLD"), "world name '%s'", name);
    MPI_Comm_set_name(d, "my dup");
    MPI_Comm_get_name(d, name, &len);
    CHECK(!strcmp(name, "my dup") && len == 6, "set/get name");

    /* attributes */
    int kv, kvd, kvn, flag;
    void *v;
    MPI_Comm_create_keyval(copy_cb, delete_cb, &kv, &copies);
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &kvd, NULL);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &kvn, NULL);
    static char base[8];
    MPI_Comm_set_attr(d, kv, base);
    MPI_Comm_set_attr(d, kvd, base + 3);
    MPI_Comm_set_attr(d, kvn, base + 5);
    MPI_Comm_get_attr(d, kv, &v, &flag);
    CHECK(flag && v == base, "get attr");
    MPI_Comm d2;
    MPI_Comm_dup(d, &d2);
    CHECK(copies == 1, "copy callback count %d", copies);
    MPI_Comm_get_attr(d2, kv, &v, &flag);
    CHECK(flag && v == base + 1, "copied value");
    MPI_Comm_get_attr(d2, kvd, &v, &flag);
    CHECK(flag && v == base + 3, "DUP_FN value");
    MPI_Comm_get_attr(d2, kvn, &v, &flag);
    CHECK(!flag, "NULL_COPY_FN must not copy");
    MPI_Comm_set_attr(d2, kv, base + 2); /* replace: deletes the old value */
    CHECK(deletes == 1, "delete on replace %d", deletes);
    MPI_Comm_free(&d2);
    CHECK(deletes == 2 && d2 == MPI_COMM_NULL, "delete on free %d", deletes);
    MPI_Comm_free_keyval(&kv); /* still attached to d: callbacks must still run */
    CHECK(kv == MPI_KEYVAL_INVALID, "keyval invalidated");
    MPI_Comm_delete_attr(d, kvd);
    MPI_Comm_get_attr(d, kvd, &v, &flag);
    CHECK(!flag, "deleted attr");
    MPI_Comm_free(&d);
    CHECK(deletes == 3, "delete after keyval free %d", deletes);
    MPI_Comm_free_keyval(&kvd);
    MPI_Comm_free_keyval(&kvn);
    int *ub;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    CHECK(flag && *ub >= 32767, "TAG_UB");

    /* user error handler on a dup: called with the comm and the error code */
    {
        MPI_Errhandler eh, got;
        MPI_Comm ec2;
        MPI_Comm_dup(MPI_COMM_WORLD, &ec2);
        MPI_Comm_create_errhandler(my_eh, &eh);
        MPI_Comm_set_errhandler(ec2, eh);
        MPI_Comm_get_errhandler(ec2, &got);
        CHECK(got == eh, "get_errhandler");
        int x = 0, rc = MPI_Send(&x, 1, MPI_INT, p + 5, 0, ec2), cls = -1;
        MPI_Error_class(rc, &cls);
        CHECK(eh_calls == 1 && eh_comm == ec2 && cls == MPI_ERR_RANK && eh_code == rc,
              "user errhandler calls=%d cls=%d", eh_calls, cls);
        MPI_Comm_call_errhandler(ec2, MPI_ERR_OTHER);
        CHECK(eh_calls == 2 && eh_code == MPI_ERR_OTHER, "call_errhandler");
        MPI_Errhandler_free(&eh);
        CHECK(eh == MPI_ERRHANDLER_NULL, "errhandler free");
        MPI_Comm_free(&ec2);
    }

    /* info objects */
    {
        MPI_Info in, in2;
        char val[64], key[MPI_MAX_INFO_KEY + 1];
        int nk, fl, vl;
        MPI_Info_create(&in);
        MPI_Info_set(in, "a", "one");
        MPI_Info_set(in, "b", "two");
        MPI_Info_set(in, "a", "uno"); /* replace keeps order */
        MPI_Info_get_nkeys(in, &nk);
        MPI_Info_get_nthkey(in, 0, key);
        MPI_Info_get(in, "a", sizeof(val) - 1, val, &fl);
        CHECK(nk == 2 && !strcmp(key, "a") && fl && !strcmp(val, "uno"), "info set/get");
        MPI_Info_get_valuelen(in, "b", &vl, &fl);
        CHECK(fl && vl == 3, "info valuelen");
        MPI_Info_dup(in, &in2);
        MPI_Info_delete(in, "a");
        MPI_Info_get(in, "a", sizeof(val) - 1, val, &fl);
        CHECK(!fl, "info delete");
        MPI_Info_get(in2, "a", 2, val, &fl);
        CHECK(fl && !strcmp(val, "un"), "info dup + truncated get '%s'", val);
        MPI_Info_free(&in);
        MPI_Info_free(&in2);
        CHECK(in == MPI_INFO_NULL, "info free");
    }

    /* split_type shared: the ranks of my node, i.e. those with my processor name
     * (LOOM_MPI_FAKE_NODES cuts a machine into smaller pretend nodes: at most that) */
    MPI_Comm sh;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &sh);
    int shs;
    MPI_Comm_size(sh, &shs);
    {
        char nm[MPI_MAX_PROCESSOR_NAME] = {0}, *all = malloc((size_t)p * sizeof(nm));
        int nl, same = 0, same_in_sh = 0;
        MPI_Get_processor_name(nm, &nl);
        MPI_Allgather(nm, (int)sizeof(nm), MPI_CHAR, all, (int)sizeof(nm), MPI_CHAR,
                      MPI_COMM_WORLD);
        for (int i = 0; i < p; i++)
            same += !strcmp(all + (size_t)i * sizeof(nm), nm);
        if (getenv("LOOM_MPI_FAKE_NODES"))
            CHECK(shs >= 1 && shs <= same, "split_type shared size %d (node has %d)", shs,
                  same);
        else
            CHECK(shs == same, "split_type shared size %d, %d ranks on my node", shs, same);
        /* and every member of it is on my node */
        MPI_Allgather(nm, (int)sizeof(nm), MPI_CHAR, all, (int)sizeof(nm), MPI_CHAR, sh);
        for (int i = 0; i < shs; i++)
            same_in_sh += !strcmp(all + (size_t)i * sizeof(nm), nm);
        CHECK(same_in_sh == shs, "split_type shared: %d of %d members on another node",
              shs - same_in_sh, shs);
        free(all);
    }
    MPI_Comm_free(&sh);

    /* create from a group: the even ranks, in reverse order */
    MPI_Group wg, eg;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int ne = (p + 1) / 2, *ev = malloc(ne * sizeof(int));
    for (int i = 0; i < ne; i++)
        ev[i] = 2 * (ne - 1 - i);
    MPI_Group_incl(wg, ne, ev, &eg);
    MPI_Comm ec;
    MPI_Comm_create(MPI_COMM_WORLD, eg, &ec);
    if (me % 2 == 0) {
        int r, sum;
        MPI_Comm_rank(ec, &r);
        CHECK(r == ne - 1 - me / 2, "create rank %d", r);
        MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, ec);
        CHECK(sum == ne * (ne - 1), "allreduce on created comm %d", sum);
        MPI_Comm_free(&ec);
    } else {
        CHECK(ec == MPI_COMM_NULL, "create: non-member gets COMM_NULL");
    }
    /* create_group: only the members call it */
    if (me % 2 == 0) {
        MPI_Comm cg;
        MPI_Comm_create_group(MPI_COMM_WORLD, eg, 77, &cg);
        int r, sum;
        MPI_Comm_rank(cg, &r);
        CHECK(r == ne - 1 - me / 2, "create_group rank %d", r);
        MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, cg);
        CHECK(sum == ne * (ne - 1), "allreduce on create_group comm %d", sum);
        MPI_Comm_free(&cg);
    }
    free(ev);
    MPI_Group_free(&eg);
    MPI_Group_free(&wg);

    /* many dup/free cycles must not run out of context ids (2048 per process);
     * alternating parents.  Fewer at large p to keep the 64-rank run short. */
    int cycles = p <= 16 ? 3000 : 200;
    for (int i = 0; i < cycles; i++) {
        MPI_Comm t;
        MPI_Comm_dup(i % 2 ? sc : MPI_COMM_WORLD, &t);
        MPI_Comm_free(&t);
    }
    MPI_Comm_free(&sc);
    MPI_Comm_free(&eq);

    int tot;
    MPI_Allreduce(&errs, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0 && tot == 0)
        printf("No Errors\n");
    MPI_Finalize();
    return tot != 0;
}
