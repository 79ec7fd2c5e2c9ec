/*
 * obj_attr.c - attributes and keyvals (mpi/api/attr.c, mpi/core/attr.c):
 *   - MPI_Finalize runs the delete callbacks of MPI_COMM_SELF's attributes first,
 *     last-set first (MPI-3.1 §8.7.1), while MPI still works (the last callback sums
 *     every rank's findings with an Allreduce on MPI_COMM_WORLD, and rank 0 prints the
 *     verdict after MPI_Finalize returns);
 *   - a keyval freed while attributes use it stays alive: its delete callback still
 *     runs, once, at Comm_free and Comm_delete_attr;
 *   - copy callbacks at Comm_dup (DUP_FN, NULL_COPY_FN, a user one that declines);
 *   - replacing a value runs the delete callback on the old one;
 *   - the predefined attributes (TAG_UB, HOST, IO, WTIME_IS_GLOBAL, UNIVERSE_SIZE,
 *     APPNUM, LASTUSEDCODE) and their errors (set/delete of a predefined key).
 */
#include <stdio.h>
#include <stdlib.h>

#include "mpitest.h"

#define NSELF 4
static int order[NSELF], norder, self_errs, finalized_seen;
static int total_errs = -1;

static int self_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    int flag;
    (void)keyval;
    (void)extra;
    if (comm != MPI_COMM_SELF)
        self_errs++;
    MPI_Finalized(&flag);
    finalized_seen += flag;
    if (norder < NSELF)
        order[norder] = (int)(long)val;
    norder++;
    if ((int)(long)val == 0) { /* set first, so deleted last: sum everyone's result */
        for (int i = 0; i < NSELF; i++)
            if (order[i] != NSELF - 1 - i)
                self_errs++;
        if (norder != NSELF || finalized_seen)
            self_errs++;
        int mine = self_errs + test_failures;
        MPI_Allreduce(&mine, &total_errs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    }
    return MPI_SUCCESS;
}

static int deletes, copies;
static int count_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)val;
    (*(int *)extra)++;
    deletes++;
    return MPI_SUCCESS;
}

static int decline_copy(MPI_Comm comm, int keyval, void *extra, void *in, void *out,
                        int *flag)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    (void)in;
    (void)out;
    copies++;
    *flag = 0;
    return MPI_SUCCESS;
}

static int plus_one_copy(MPI_Comm comm, int keyval, void *extra, void *in, void *out,
                         int *flag)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    copies++;
    *(void **)out = (char *)in + 1;
    *flag = 1;
    return MPI_SUCCESS;
}

/* a delete callback that uses the attribute functions on its own communicator */
static int nested_kv, nested_other, nested_runs;
static int nested_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    void *v;
    int flag;
    (void)extra;
    nested_runs++;
    MPI_Comm_get_attr(comm, keyval, &v, &flag); /* still readable, or gone: no crash */
    if (flag && v != val)
        test_failures++;
    MPI_Comm_delete_attr(comm, keyval); /* nested delete of itself: no double free */
    if ((long)val == 1)
        MPI_Comm_set_attr(comm, nested_other, (void *)2L); /* set another one */
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    int rank, flag, kv, kv2, kv3, kv4, extra = 0;
    void *v;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    /* predefined attributes */
    int *ip;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ip, &flag);
    TEST_ASSERT(flag && *ip >= 32767);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &ip, &flag);
    TEST_ASSERT(flag);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &ip, &flag);
    TEST_ASSERT(flag);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &ip, &flag);
    TEST_ASSERT(flag && (*ip == 0 || *ip == 1));
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &ip, &flag);
    TEST_ASSERT(!flag || *ip >= 0);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &ip, &flag);
    TEST_ASSERT(!flag || *ip >= 1);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &ip, &flag);
    TEST_ASSERT_MSG(flag && *ip >= MPI_ERR_LASTCODE, "flag %d", flag);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    TEST_ASSERT(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, NULL) != MPI_SUCCESS);
    TEST_ASSERT(MPI_Comm_delete_attr(MPI_COMM_WORLD, MPI_TAG_UB) != MPI_SUCCESS);

    /* a keyval freed while in use: callbacks still run, once per attribute */
    MPI_Comm dup, dup2;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, count_delete, &kv, &extra);
    MPI_Comm_set_attr(dup, kv, (void *)42L);
    MPI_Comm_set_attr(MPI_COMM_WORLD, kv, (void *)43L);
    MPI_Comm_free_keyval(&kv);
    TEST_ASSERT(kv == MPI_KEYVAL_INVALID);
    MPI_Comm_dup(dup, &dup2); /* the freed keyval's DUP_FN still copies */
    MPI_Comm_free(&dup);
    TEST_ASSERT_MSG(extra == 1, "deletes %d", extra);
    MPI_Comm_free(&dup2);
    TEST_ASSERT_MSG(extra == 2, "deletes %d", extra);

    /* replacing a value deletes the old one; Comm_delete_attr deletes */
    int extra2 = 0;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete, &kv2, &extra2);
    MPI_Comm_set_attr(MPI_COMM_WORLD, kv2, (void *)1L);
    MPI_Comm_set_attr(MPI_COMM_WORLD, kv2, (void *)2L);
    TEST_ASSERT(extra2 == 1);
    MPI_Comm_get_attr(MPI_COMM_WORLD, kv2, &v, &flag);
    TEST_ASSERT(flag && v == (void *)2L);
    /* NULL_COPY_FN: not copied; a declining copy function: not copied; a copying one */
    MPI_Comm_create_keyval(decline_copy, MPI_COMM_NULL_DELETE_FN, &kv3, NULL);
    MPI_Comm_create_keyval(plus_one_copy, MPI_COMM_NULL_DELETE_FN, &kv4, NULL);
    MPI_Comm_set_attr(MPI_COMM_WORLD, kv3, (void *)10L);
    MPI_Comm_set_attr(MPI_COMM_WORLD, kv4, (void *)20L);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    TEST_ASSERT(copies == 2);
    MPI_Comm_get_attr(dup, kv2, &v, &flag);
    TEST_ASSERT(!flag);
    MPI_Comm_get_attr(dup, kv3, &v, &flag);
    TEST_ASSERT(!flag);
    MPI_Comm_get_attr(dup, kv4, &v, &flag);
    TEST_ASSERT(flag && v == (void *)21L);
    MPI_Comm_free(&dup);
    TEST_ASSERT(extra2 == 1);
    MPI_Comm_delete_attr(MPI_COMM_WORLD, kv2);
    TEST_ASSERT(extra2 == 2);
    MPI_Comm_get_attr(MPI_COMM_WORLD, kv2, &v, &flag);
    TEST_ASSERT(!flag);
    TEST_ASSERT(MPI_Comm_delete_attr(MPI_COMM_WORLD, kv2) != MPI_SUCCESS);
    MPI_Comm_free_keyval(&kv2);
    MPI_Comm_free_keyval(&kv3);
    MPI_Comm_free_keyval(&kv4);

    /* delete callbacks that get, delete and set attributes of their communicator */
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, nested_delete, &nested_kv, NULL);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, nested_delete, &nested_other, NULL);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_attr(dup, nested_kv, (void *)1L);
    MPI_Comm_set_attr(dup, nested_kv, (void *)3L); /* replace: the callback runs on 1 */
    TEST_ASSERT(nested_runs == 1);
    MPI_Comm_get_attr(dup, nested_kv, &v, &flag);
    TEST_ASSERT(flag && v == (void *)3L);
    MPI_Comm_get_attr(dup, nested_other, &v, &flag);
    TEST_ASSERT(flag && v == (void *)2L);
    MPI_Comm_free(&dup); /* deletes 3, then 2 */
    TEST_ASSERT_MSG(nested_runs == 3, "%d runs", nested_runs);
    MPI_Comm_free_keyval(&nested_kv);
    MPI_Comm_free_keyval(&nested_other);

    /* MPI_COMM_SELF: values 0..3 set in order, deleted 3..0 at MPI_Finalize; the keyvals
     * are freed at once (the attributes keep them) */
    for (long i = 0; i < NSELF; i++) {
        int k;
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &k, NULL);
        MPI_Comm_set_attr(MPI_COMM_SELF, k, (void *)i);
        MPI_Comm_free_keyval(&k);
    }
    (void)test_finish; /* the verdict is summed inside MPI_Finalize instead */
    MPI_Finalize();
    if (norder != NSELF)
        printf("rank %d: FAIL: %d COMM_SELF delete callbacks ran at MPI_Finalize, expected %d\n",
               rank, norder, NSELF);
    else if (self_errs)
        printf("rank %d: FAIL: COMM_SELF delete order %d %d %d %d, expected 3 2 1 0%s\n",
               rank, order[0], order[1], order[2], order[3],
               finalized_seen ? " (MPI_Finalized said 1 inside)" : "");
    if (rank == 0) {
        if (total_errs == 0)
            printf("No Errors\n");
        else
            printf("Found %d errors\n", total_errs);
    }
    return total_errs == 0 ? 0 : 1;
}
