/*
 * rma_attr.c - user attributes on windows: MPI_Win_create_keyval / set_attr / get_attr /
 *   delete_attr / free_keyval; delete callbacks run when an attribute is replaced,
 *   deleted, and at MPI_Win_free (last-set first); a keyval freed while in use keeps
 *   its callback; a communicator keyval on a window is MPI_ERR_KEYVAL.
 */
#include <stdint.h>
#include <stdlib.h>

#include "mpitest.h"

static int deleted[8], ndeleted;

static int del_fn(MPI_Win win, int keyval, void *val, void *extra)
{
    (void)win;
    (void)keyval;
    if (ndeleted < 8)
        deleted[ndeleted] = (int)(intptr_t)val;
    ndeleted++;
    *(int *)extra += 1;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int buf[4] = {0};
    MPI_Win win;
    MPI_Win_create(buf, sizeof(buf), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);

    int calls = 0, k1, k2, k3, flag = -1;
    void *v;
    TEST_ASSERT(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, del_fn, &k1, &calls) ==
                MPI_SUCCESS);
    TEST_ASSERT(MPI_Win_create_keyval(MPI_WIN_DUP_FN, del_fn, &k2, &calls) == MPI_SUCCESS);
    TEST_ASSERT(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &k3,
                                      NULL) == MPI_SUCCESS);
    TEST_ASSERT(k1 != k2 && k2 != k3);

    /* not set yet: flag 0 */
    TEST_ASSERT(MPI_Win_get_attr(win, k1, &v, &flag) == MPI_SUCCESS && flag == 0);
    TEST_ASSERT(MPI_Win_set_attr(win, k1, (void *)(intptr_t)11) == MPI_SUCCESS);
    TEST_ASSERT(MPI_Win_set_attr(win, k2, (void *)(intptr_t)22) == MPI_SUCCESS);
    TEST_ASSERT(MPI_Win_set_attr(win, k3, (void *)(intptr_t)33) == MPI_SUCCESS);
    TEST_ASSERT(MPI_Win_get_attr(win, k1, &v, &flag) == MPI_SUCCESS && flag == 1 &&
                (intptr_t)v == 11);
    TEST_ASSERT(MPI_Win_get_attr(win, k3, &v, &flag) == MPI_SUCCESS && flag == 1 &&
                (intptr_t)v == 33);
    /* the predefined keys still answer */
    TEST_ASSERT(MPI_Win_get_attr(win, MPI_WIN_BASE, &v, &flag) == MPI_SUCCESS && flag &&
                v == buf);

    /* replacing runs the delete callback on the old value */
    TEST_ASSERT(MPI_Win_set_attr(win, k1, (void *)(intptr_t)12) == MPI_SUCCESS);
    TEST_ASSERT(calls == 1 && deleted[0] == 11);
    TEST_ASSERT(MPI_Win_get_attr(win, k1, &v, &flag) == MPI_SUCCESS && flag == 1 &&
                (intptr_t)v == 12);

    /* delete: callback, then the attribute is gone; deleting again is an error */
    TEST_ASSERT(MPI_Win_delete_attr(win, k3) == MPI_SUCCESS);
    TEST_ASSERT(MPI_Win_get_attr(win, k3, &v, &flag) == MPI_SUCCESS && flag == 0);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    int rc = MPI_Win_delete_attr(win, k3), cls = -1;
    MPI_Error_class(rc, &cls);
    TEST_ASSERT_MSG(cls == MPI_ERR_KEYVAL, "class %d", cls);

    /* a communicator keyval is not a window keyval */
    int ck;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &ck, NULL);
    rc = MPI_Win_set_attr(win, ck, NULL);
    MPI_Error_class(rc, &cls);
    TEST_ASSERT_MSG(cls == MPI_ERR_KEYVAL, "class %d", cls);
    MPI_Comm_free_keyval(&ck);

    /* freeing a keyval in use: the attribute and its callback stay until Win_free */
    TEST_ASSERT(MPI_Win_free_keyval(&k1) == MPI_SUCCESS && k1 == MPI_KEYVAL_INVALID);
    TEST_ASSERT(MPI_Win_free_keyval(&k3) == MPI_SUCCESS);

    /* Win_free deletes the rest, last-set first: k2 (22) was set after k1 (12) */
    ndeleted = 0;
    calls = 0;
    TEST_ASSERT(MPI_Win_free(&win) == MPI_SUCCESS && win == MPI_WIN_NULL);
    TEST_ASSERT_MSG(calls == 2 && deleted[0] == 22 && deleted[1] == 12, "calls %d: %d %d",
                    calls, deleted[0], deleted[1]);
    TEST_ASSERT(MPI_Win_free_keyval(&k2) == MPI_SUCCESS);
    return test_finish();
}
