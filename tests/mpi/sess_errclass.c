/*
 * sess_errclass.c - the MPI-4.0 error class MPI_ERR_SESSION: every session call given
 *   an invalid session handle (MPI_SESSION_NULL, a finalized session's handle) returns
 *   it through the default error handler (MPI_COMM_WORLD's, set to MPI_ERRORS_RETURN
 *   here); it is a predefined class (its own class, a string, below
 *   MPI_ERR_LASTCODE, a user class added later differs from it).  A valid session's
 *   errors keep their classes (a bad process set name: MPI_ERR_ARG).
 */
#include <string.h>

#include "mpitest.h"

static void expect_session(int rc, const char *what)
{
    int cls = -1;
    MPI_Error_class(rc, &cls);
    TEST_ASSERT_MSG(cls == MPI_ERR_SESSION, "%s: class %d", what, cls);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int cls = -1, len = 0, n = -1;
    char s[MPI_MAX_ERROR_STRING];
    TEST_ASSERT(MPI_Error_class(MPI_ERR_SESSION, &cls) == MPI_SUCCESS &&
                cls == MPI_ERR_SESSION);
    TEST_ASSERT(MPI_Error_string(MPI_ERR_SESSION, s, &len) == MPI_SUCCESS && len > 0);
    TEST_ASSERT(MPI_ERR_SESSION <= MPI_ERR_LASTCODE);
    int mine = -1;
    TEST_ASSERT(MPI_Add_error_class(&mine) == MPI_SUCCESS && mine != MPI_ERR_SESSION);

    MPI_Session gone = MPI_SESSION_NULL;
    TEST_ASSERT(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &gone) == MPI_SUCCESS);
    MPI_Session kept = gone;
    TEST_ASSERT(MPI_Session_finalize(&gone) == MPI_SUCCESS);
    MPI_Session bad[2] = {MPI_SESSION_NULL, kept};
    for (int i = 0; i < 2; i++) {
        MPI_Session h = bad[i];
        MPI_Info info = MPI_INFO_NULL;
        MPI_Group g = MPI_GROUP_NULL;
        MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
        char name[64];
        int nlen = sizeof(name);
        expect_session(MPI_Session_get_num_psets(h, MPI_INFO_NULL, &n), "get_num_psets");
        expect_session(MPI_Session_get_nth_pset(h, MPI_INFO_NULL, 0, &nlen, name),
                       "get_nth_pset");
        expect_session(MPI_Session_get_info(h, &info), "get_info");
        expect_session(MPI_Session_get_pset_info(h, "mpi://WORLD", &info),
                       "get_pset_info");
        expect_session(MPI_Group_from_session_pset(h, "mpi://WORLD", &g),
                       "group_from_session_pset");
        expect_session(MPI_Session_set_errhandler(h, MPI_ERRORS_RETURN),
                       "set_errhandler");
        expect_session(MPI_Session_get_errhandler(h, &eh), "get_errhandler");
        expect_session(MPI_Session_call_errhandler(h, MPI_ERR_OTHER), "call_errhandler");
        MPI_Session f = h;
        expect_session(MPI_Session_finalize(&f), "finalize");
    }

    /* a valid session's own errors keep their classes */
    MPI_Session ok = MPI_SESSION_NULL;
    TEST_ASSERT(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &ok) == MPI_SUCCESS);
    MPI_Group g = MPI_GROUP_NULL;
    int rc = MPI_Group_from_session_pset(ok, "mpi://nowhere", &g);
    MPI_Error_class(rc, &cls);
    TEST_ASSERT_MSG(cls == MPI_ERR_ARG, "bad pset name: class %d", cls);
    TEST_ASSERT(MPI_Session_finalize(&ok) == MPI_SUCCESS);
    return test_finish();
}
