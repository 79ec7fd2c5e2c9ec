/*
 * obj_handles.c - handle conversion, generalized requests, Info_get_string, versions:
 *   - MPI_*_c2f / _f2c round trips for every handle kind, MPI_Status_c2f/f2c
 *     (MPI_F_SOURCE/TAG/ERROR index the Fortran status);
 *   - MPI_Grequest_start/complete: query_fn's status (source, tag, count, cancelled)
 *     reaches Wait, Test, Waitall (mixed with real receives) and Request_get_status;
 *     free_fn runs exactly once, also after Request_free of a request not yet complete;
 *     cancel_fn gets the completion state; query_fn's error is Wait's error;
 *   - MPI_Info_get_string (length in and out, cut values);
 *   - MPI_Get_version and MPI_Get_library_version.
 */
#include <stdio.h>
#include <string.h>

#include "mpitest.h"

struct gstate {
    int queries, frees, cancels, cancel_complete, err;
};

static int g_query(void *extra, MPI_Status *st)
{
    struct gstate *g = extra;
    g->queries++;
    st->MPI_SOURCE = 5;
    st->MPI_TAG = 77;
    MPI_Status_set_elements(st, MPI_INT, 3);
    MPI_Status_set_cancelled(st, g->cancels > 0);
    return g->err;
}

static int g_free(void *extra)
{
    ((struct gstate *)extra)->frees++;
    return MPI_SUCCESS;
}

static int g_cancel(void *extra, int complete)
{
    struct gstate *g = extra;
    g->cancels++;
    g->cancel_complete = complete;
    return MPI_SUCCESS;
}

static void user_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)in;
    (void)inout;
    (void)len;
    (void)dt;
}

int main(int argc, char **argv)
{
    int rank, size, flag, count;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* handle conversion */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Group grp;
    MPI_Comm_group(dup, &grp);
    MPI_Datatype vec;
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Op op;
    MPI_Op_create(user_op, 1, &op);
    TEST_ASSERT(MPI_Comm_f2c(MPI_Comm_c2f(dup)) == dup);
    TEST_ASSERT(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_WORLD)) == MPI_COMM_WORLD);
    TEST_ASSERT(MPI_Group_f2c(MPI_Group_c2f(grp)) == grp);
    TEST_ASSERT(MPI_Type_f2c(MPI_Type_c2f(vec)) == vec);
    TEST_ASSERT(MPI_Type_f2c(MPI_Type_c2f(MPI_DOUBLE)) == MPI_DOUBLE);
    TEST_ASSERT(MPI_Op_f2c(MPI_Op_c2f(op)) == op);
    TEST_ASSERT(MPI_Info_f2c(MPI_Info_c2f(info)) == info);
    TEST_ASSERT(MPI_Info_f2c(MPI_Info_c2f(MPI_INFO_NULL)) == MPI_INFO_NULL);
    TEST_ASSERT(MPI_Errhandler_f2c(MPI_Errhandler_c2f(MPI_ERRORS_ARE_FATAL)) ==
                MPI_ERRORS_ARE_FATAL);
    TEST_ASSERT(MPI_Win_f2c(MPI_Win_c2f(MPI_WIN_NULL)) == MPI_WIN_NULL);
    TEST_ASSERT(MPI_File_f2c(MPI_File_c2f(MPI_FILE_NULL)) == MPI_FILE_NULL);
    TEST_ASSERT(MPI_Message_f2c(MPI_Message_c2f(MPI_MESSAGE_NO_PROC)) == MPI_MESSAGE_NO_PROC);
    MPI_Request rq;
    MPI_Irecv(NULL, 0, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &rq);
    TEST_ASSERT(MPI_Request_f2c(MPI_Request_c2f(rq)) == rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    MPI_Op_free(&op);
    MPI_Type_free(&vec);
    MPI_Group_free(&grp);
    MPI_Comm_free(&dup);

    /* status conversion: a real one from a message */
    MPI_Status st, st2;
    MPI_Fint fst[MPI_F_STATUS_SIZE];
    int v = 7;
    MPI_Sendrecv(&v, 1, MPI_INT, rank, 9, &v, 1, MPI_INT, rank, 9, MPI_COMM_WORLD, &st);
    TEST_ASSERT(MPI_Status_c2f(&st, fst) == MPI_SUCCESS);
    TEST_ASSERT(fst[MPI_F_SOURCE] == rank && fst[MPI_F_TAG] == 9 &&
                fst[MPI_F_ERROR] == st.MPI_ERROR);
    memset(&st2, 0xff, sizeof(st2));
    TEST_ASSERT(MPI_Status_f2c(fst, &st2) == MPI_SUCCESS);
    MPI_Get_count(&st2, MPI_INT, &count);
    TEST_ASSERT(st2.MPI_SOURCE == rank && st2.MPI_TAG == 9 && count == 1);
    TEST_ASSERT(MPI_Status_c2f(MPI_STATUS_IGNORE, fst) == MPI_ERR_ARG);

    /* generalized requests: Wait */
    struct gstate g = {0};
    MPI_Request gr;
    TEST_ASSERT(MPI_Grequest_start(g_query, g_free, g_cancel, &g, &gr) == MPI_SUCCESS);
    MPI_Test(&gr, &flag, &st);
    TEST_ASSERT(!flag && gr != MPI_REQUEST_NULL && g.frees == 0);
    TEST_ASSERT(MPI_Grequest_complete(gr) == MPI_SUCCESS);
    TEST_ASSERT(MPI_Request_get_status(gr, &flag, &st) == MPI_SUCCESS && flag);
    TEST_ASSERT(st.MPI_SOURCE == 5 && st.MPI_TAG == 77 && g.frees == 0);
    memset(&st, 0, sizeof(st));
    TEST_ASSERT(MPI_Wait(&gr, &st) == MPI_SUCCESS);
    MPI_Get_count(&st, MPI_INT, &count);
    TEST_ASSERT_MSG(st.MPI_SOURCE == 5 && st.MPI_TAG == 77 && count == 3,
                    "source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, count);
    TEST_ASSERT(gr == MPI_REQUEST_NULL && g.frees == 1 && g.queries >= 1);

    /* Waitall over a generalized request and a real receive */
    struct gstate g2 = {0};
    MPI_Request rs[3];
    MPI_Status sts[3];
    int in = -1, out = rank;
    int peer = (rank + 1) % size, from = (rank + size - 1) % size;
    MPI_Irecv(&in, 1, MPI_INT, from, 3, MPI_COMM_WORLD, &rs[0]);
    MPI_Grequest_start(g_query, g_free, g_cancel, &g2, &rs[1]);
    MPI_Isend(&out, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, &rs[2]);
    MPI_Grequest_complete(rs[1]);
    TEST_ASSERT(MPI_Waitall(3, rs, sts) == MPI_SUCCESS);
    TEST_ASSERT(in == from && sts[0].MPI_SOURCE == from);
    TEST_ASSERT(sts[1].MPI_SOURCE == 5 && sts[1].MPI_TAG == 77 && g2.frees == 1);
    TEST_ASSERT(rs[1] == MPI_REQUEST_NULL);

    /* Cancel: cancel_fn learns whether it completed; query then says cancelled */
    struct gstate g3 = {0};
    MPI_Grequest_start(g_query, g_free, g_cancel, &g3, &gr);
    MPI_Cancel(&gr);
    TEST_ASSERT(g3.cancels == 1 && g3.cancel_complete == 0);
    MPI_Grequest_complete(gr);
    MPI_Wait(&gr, &st);
    MPI_Test_cancelled(&st, &flag);
    TEST_ASSERT(flag && g3.frees == 1);

    /* Request_free before completion: free_fn only once it completes */
    struct gstate g4 = {0};
    MPI_Request keep;
    MPI_Grequest_start(g_query, g_free, g_cancel, &g4, &gr);
    keep = gr;
    TEST_ASSERT(MPI_Request_free(&gr) == MPI_SUCCESS && gr == MPI_REQUEST_NULL);
    TEST_ASSERT(g4.frees == 0);
    TEST_ASSERT(MPI_Grequest_complete(keep) == MPI_SUCCESS);
    TEST_ASSERT(g4.frees == 1);

    /* query_fn's error comes back from Wait (and in the status) */
    struct gstate g5 = {0};
    g5.err = MPI_ERR_IO;
    MPI_Grequest_start(g_query, g_free, g_cancel, &g5, &gr);
    MPI_Grequest_complete(gr);
    TEST_ASSERT(MPI_Wait(&gr, &st) == MPI_ERR_IO && g5.frees == 1);
    TEST_ASSERT(MPI_Grequest_complete(MPI_REQUEST_NULL) == MPI_ERR_REQUEST);

    /* Info_get_string */
    char buf[8];
    int blen;
    MPI_Info_set(info, "key", "a long value");
    blen = 0;
    TEST_ASSERT(MPI_Info_get_string(info, "key", &blen, NULL, &flag) == MPI_SUCCESS);
    TEST_ASSERT(flag && blen == 13);
    blen = sizeof(buf);
    MPI_Info_get_string(info, "key", &blen, buf, &flag);
    TEST_ASSERT_MSG(flag && blen == 13 && !strcmp(buf, "a long "), "%d \"%s\"", blen, buf);
    blen = 5;
    MPI_Info_get_string(info, "nokey", &blen, buf, &flag);
    TEST_ASSERT(!flag && blen == 5);
    MPI_Info_free(&info);

    /* versions */
    int ver, sub;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_Get_version(&ver, &sub);
    TEST_ASSERT(ver == 3 && sub == 1 && ver == MPI_VERSION && sub == MPI_SUBVERSION);
    MPI_Get_library_version(lib, &blen);
    TEST_ASSERT(blen > 0 && blen == (int)strlen(lib) && blen < MPI_MAX_LIBRARY_VERSION_STRING);
    TEST_ASSERT(strstr(lib, "Loom") != NULL);
    return test_finish();
}
