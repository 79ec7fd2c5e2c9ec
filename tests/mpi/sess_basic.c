/*
 * sess_basic.c - MPI-4 sessions before the world model: two sessions at once, the
 *   process sets and their info, a group from "mpi://WORLD", communicators from it
 *   with two string tags whose messages must not mix, "mpi://SELF", a bad process set
 *   name (MPI_ERR_ARG), a user error handler on a session, c2f/f2c, finalizing every
 *   session and starting a new one, and then MPI_Init (the world model) in the same
 *   process.
 */
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

static int eh_calls, eh_code;
static MPI_Session eh_session;

static void sess_eh(MPI_Session *s, int *code, ...)
{
    eh_calls++;
    eh_code = *code;
    eh_session = *s;
}

/* messages sent on a first and b second arrive on the right communicator although
 * the receiver takes b first */
static void no_mixing(MPI_Comm a, MPI_Comm b, int rank, int size)
{
    int peer = (rank + 1) % size, from = (rank + size - 1) % size;
    int va = 1000 + rank, vb = 2000 + rank, ra = -1, rb = -1;
    MPI_Request rq[2];
    MPI_Isend(&va, 1, MPI_INT, peer, 7, a, &rq[0]);
    MPI_Isend(&vb, 1, MPI_INT, peer, 7, b, &rq[1]);
    MPI_Recv(&rb, 1, MPI_INT, from, 7, b, MPI_STATUS_IGNORE);
    MPI_Recv(&ra, 1, MPI_INT, from, 7, a, MPI_STATUS_IGNORE);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    TEST_ASSERT_MSG(ra == 1000 + from, "got %d", ra);
    TEST_ASSERT_MSG(rb == 2000 + from, "got %d", rb);
}

static MPI_Comm world_comm(MPI_Session s, const char *tag)
{
    MPI_Group g = MPI_GROUP_NULL;
    MPI_Comm c = MPI_COMM_NULL;
    TEST_ASSERT(MPI_Group_from_session_pset(s, "mpi://WORLD", &g) == MPI_SUCCESS);
    TEST_ASSERT(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c) ==
                MPI_SUCCESS);
    MPI_Group_free(&g);
    return c;
}

int main(int argc, char **argv)
{
    int flag = 1;
    MPI_Initialized(&flag);
    TEST_ASSERT(flag == 0);

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "thread_level", "MPI_THREAD_SERIALIZED");
    MPI_Session s1 = MPI_SESSION_NULL, s2 = MPI_SESSION_NULL;
    TEST_ASSERT(MPI_Session_init(info, MPI_ERRORS_RETURN, &s1) == MPI_SUCCESS);
    TEST_ASSERT(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2) == MPI_SUCCESS);
    MPI_Info_free(&info);
    TEST_ASSERT(s1 != MPI_SESSION_NULL && s2 != MPI_SESSION_NULL && s1 != s2);
    MPI_Initialized(&flag);
    TEST_ASSERT(flag == 0); /* sessions are not the world model */

    /* the thread level asked for is what the session reports */
    MPI_Info used;
    char v[MPI_MAX_INFO_VAL];
    TEST_ASSERT(MPI_Session_get_info(s1, &used) == MPI_SUCCESS);
    MPI_Info_get(used, "thread_level", sizeof(v) - 1, v, &flag);
    TEST_ASSERT_MSG(flag && strcmp(v, "MPI_THREAD_SERIALIZED") == 0, "%s", flag ? v : "-");
    MPI_Info_free(&used);

    /* process sets */
    int n = 0, len, got_world = 0, got_self = 0;
    TEST_ASSERT(MPI_Session_get_num_psets(s1, MPI_INFO_NULL, &n) == MPI_SUCCESS);
    TEST_ASSERT(n >= 2);
    for (int i = 0; i < n; i++) {
        char name[MPI_MAX_PSET_NAME_LEN];
        len = 0;
        MPI_Session_get_nth_pset(s1, MPI_INFO_NULL, i, &len, NULL);
        TEST_ASSERT(len > 1 && len <= MPI_MAX_PSET_NAME_LEN);
        MPI_Session_get_nth_pset(s1, MPI_INFO_NULL, i, &len, name);
        TEST_ASSERT((int)strlen(name) + 1 == len);
        got_world += strcmp(name, "mpi://WORLD") == 0;
        got_self += strcmp(name, "mpi://SELF") == 0;
    }
    TEST_ASSERT(got_world == 1 && got_self == 1);

    int size = 0, rank = -1;
    MPI_Group wg, sg;
    TEST_ASSERT(MPI_Group_from_session_pset(s1, "mpi://WORLD", &wg) == MPI_SUCCESS);
    MPI_Group_size(wg, &size);
    MPI_Group_rank(wg, &rank);
    TEST_ASSERT(size >= 1 && rank >= 0 && rank < size);
    MPI_Info pinfo;
    TEST_ASSERT(MPI_Session_get_pset_info(s1, "mpi://WORLD", &pinfo) == MPI_SUCCESS);
    MPI_Info_get(pinfo, "mpi_size", sizeof(v) - 1, v, &flag);
    TEST_ASSERT(flag && atoi(v) == size);
    MPI_Info_free(&pinfo);
    TEST_ASSERT(MPI_Session_get_pset_info(s2, "mpi://self", &pinfo) == MPI_SUCCESS);
    MPI_Info_get(pinfo, "mpi_size", sizeof(v) - 1, v, &flag);
    TEST_ASSERT(flag && atoi(v) == 1);
    MPI_Info_free(&pinfo);

    /* a bad process set name: MPI_ERR_ARG through the session's handler */
    MPI_Group bad = MPI_GROUP_NULL;
    int rc = MPI_Group_from_session_pset(s1, "mpi://NOWHERE", &bad);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    TEST_ASSERT_MSG(cls == MPI_ERR_ARG, "class %d", cls);
    TEST_ASSERT(bad == MPI_GROUP_NULL);

    /* two communicators from the same group in two sessions, different tags */
    MPI_Comm a = MPI_COMM_NULL, b = MPI_COMM_NULL;
    TEST_ASSERT(MPI_Comm_create_from_group(wg, "org.loom.test.a", MPI_INFO_NULL,
                                           MPI_ERRORS_RETURN, &a) == MPI_SUCCESS);
    MPI_Group_free(&wg);
    b = world_comm(s2, "org.loom.test.b");
    int ra = -1, sb = -1;
    MPI_Comm_rank(a, &ra);
    MPI_Comm_size(b, &sb);
    TEST_ASSERT(ra == rank && sb == size);
    MPI_Errhandler e;
    MPI_Comm_get_errhandler(a, &e);
    TEST_ASSERT(e == MPI_ERRORS_RETURN);
    no_mixing(a, b, rank, size);
    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, b);
    TEST_ASSERT(sum == size * (size - 1) / 2);

    /* mpi://SELF: a communicator of one, a message to myself */
    TEST_ASSERT(MPI_Group_from_session_pset(s2, "mpi://SELF", &sg) == MPI_SUCCESS);
    MPI_Comm self = MPI_COMM_NULL;
    TEST_ASSERT(MPI_Comm_create_from_group(sg, "self", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                           &self) == MPI_SUCCESS);
    MPI_Group_free(&sg);
    int x = 42 + rank, y = 0;
    MPI_Sendrecv(&x, 1, MPI_INT, 0, 1, &y, 1, MPI_INT, 0, 1, self, MPI_STATUS_IGNORE);
    TEST_ASSERT(y == 42 + rank);

    /* a user error handler on a session */
    MPI_Errhandler eh, got = MPI_ERRHANDLER_NULL;
    TEST_ASSERT(MPI_Session_create_errhandler(sess_eh, &eh) == MPI_SUCCESS);
    TEST_ASSERT(MPI_Session_set_errhandler(s2, eh) == MPI_SUCCESS);
    MPI_Session_get_errhandler(s2, &got);
    TEST_ASSERT(got == eh);
    MPI_Session_call_errhandler(s2, MPI_ERR_OTHER);
    TEST_ASSERT(eh_calls == 1 && eh_code == MPI_ERR_OTHER && eh_session == s2);
    MPI_Group_from_session_pset(s2, "bogus", &bad);
    TEST_ASSERT(eh_calls == 2 && eh_code == MPI_ERR_ARG && eh_session == s2);
    MPI_Session_set_errhandler(s2, MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&eh);

    /* Fortran handles */
    MPI_Fint f = MPI_Session_c2f(s1);
    TEST_ASSERT(MPI_Session_f2c(f) == s1);

    MPI_Comm_free(&self);
    MPI_Comm_free(&a);
    MPI_Comm_free(&b);
    TEST_ASSERT(MPI_Session_finalize(&s1) == MPI_SUCCESS && s1 == MPI_SESSION_NULL);
    TEST_ASSERT(MPI_Session_finalize(&s2) == MPI_SUCCESS && s2 == MPI_SESSION_NULL);

    /* again, after every session ended, with a tag used before */
    MPI_Session s3;
    TEST_ASSERT(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s3) == MPI_SUCCESS);
    a = world_comm(s3, "org.loom.test.a");
    sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, a);
    TEST_ASSERT(sum == size * (size - 1) / 2);
    MPI_Comm_free(&a);
    MPI_Session_finalize(&s3);

    /* and now the world model in the same process */
    TEST_ASSERT(MPI_Init(&argc, &argv) == MPI_SUCCESS);
    MPI_Initialized(&flag);
    TEST_ASSERT(flag == 1);
    int wr = -1, ws = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &wr);
    MPI_Comm_size(MPI_COMM_WORLD, &ws);
    TEST_ASSERT(wr == rank && ws == size);
    sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    TEST_ASSERT(sum == size * (size - 1) / 2);
    return test_finish();
}
