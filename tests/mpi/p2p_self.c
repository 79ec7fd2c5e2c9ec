/*
 * p2p_self.c - every send mode to oneself: Send, Ssend, Rsend, Bsend, Isend, Issend,
 *   Irsend, Ibsend (receive posted first; the nonblocking ones also before the
 *   receive), Sendrecv and Sendrecv_replace, with a contiguous type, a strided vector
 *   on the send side against a contiguous receive, and the other way round, at a small
 *   and a rendezvous-sized count; on MPI_COMM_WORLD and MPI_COMM_SELF.  Statuses
 *   (source, tag, count) and data are checked.
 */
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

enum { M_SEND, M_SSEND, M_RSEND, M_BSEND, M_ISEND, M_ISSEND, M_IRSEND, M_IBSEND, M_N };
static const char *mname[M_N] = {"Send",  "Ssend",  "Rsend",  "Bsend",
                                 "Isend", "Issend", "Irsend", "Ibsend"};

static int isend_mode(int m, void *b, int c, MPI_Datatype t, int d, int tag, MPI_Comm comm,
                      MPI_Request *r)
{
    switch (m) {
    case M_ISEND: return MPI_Isend(b, c, t, d, tag, comm, r);
    case M_ISSEND: return MPI_Issend(b, c, t, d, tag, comm, r);
    case M_IRSEND: return MPI_Irsend(b, c, t, d, tag, comm, r);
    default: return MPI_Ibsend(b, c, t, d, tag, comm, r);
    }
}

static int send_mode(int m, void *b, int c, MPI_Datatype t, int d, int tag, MPI_Comm comm)
{
    switch (m) {
    case M_SEND: return MPI_Send(b, c, t, d, tag, comm);
    case M_SSEND: return MPI_Ssend(b, c, t, d, tag, comm);
    case M_RSEND: return MPI_Rsend(b, c, t, d, tag, comm);
    default: return MPI_Bsend(b, c, t, d, tag, comm);
    }
}

/* n ints; vec: the side's type is a vector of n ints with stride 2 */
static void one(MPI_Comm comm, int m, int n, int svec, int rvec, int late_recv)
{
    int me;
    MPI_Comm_rank(comm, &me);
    MPI_Datatype vt, st = MPI_INT, rt = MPI_INT;
    MPI_Type_vector(n, 1, 2, MPI_INT, &vt);
    MPI_Type_commit(&vt);
    int scount = n, rcount = n;
    if (svec) {
        st = vt;
        scount = 1;
    }
    if (rvec) {
        rt = vt;
        rcount = 1;
    }
    int *sb = malloc(sizeof(int) * 2 * (size_t)n), *rb = malloc(sizeof(int) * 2 * (size_t)n);
    for (int i = 0; i < 2 * n; i++) {
        sb[i] = svec ? (i % 2 ? -5 : i / 2 * 3 + m) : i * 3 + m;
        rb[i] = -1;
    }
    int tag = 100 + m;
    MPI_Request rr = MPI_REQUEST_NULL, sr = MPI_REQUEST_NULL;
    MPI_Status st_r;
    int rc;
    if (m >= M_ISEND && late_recv) {
        rc = isend_mode(m, sb, scount, st, me, tag, comm, &sr);
        TEST_ASSERT_MSG(rc == MPI_SUCCESS, "%s: rc %d", mname[m], rc);
        rc = MPI_Recv(rb, rcount, rt, me, tag, comm, &st_r);
        TEST_ASSERT_MSG(rc == MPI_SUCCESS, "%s: recv rc %d", mname[m], rc);
        rc = MPI_Wait(&sr, MPI_STATUS_IGNORE);
        TEST_ASSERT_MSG(rc == MPI_SUCCESS, "%s: wait rc %d", mname[m], rc);
    } else {
        rc = MPI_Irecv(rb, rcount, rt, MPI_ANY_SOURCE, tag, comm, &rr);
        TEST_ASSERT(rc == MPI_SUCCESS);
        if (m >= M_ISEND) {
            rc = isend_mode(m, sb, scount, st, me, tag, comm, &sr);
            TEST_ASSERT_MSG(rc == MPI_SUCCESS, "%s: rc %d", mname[m], rc);
            MPI_Request both[2] = {sr, rr};
            MPI_Status sts[2];
            rc = MPI_Waitall(2, both, sts);
            st_r = sts[1];
        } else {
            rc = send_mode(m, sb, scount, st, me, tag, comm);
            TEST_ASSERT_MSG(rc == MPI_SUCCESS, "%s: rc %d", mname[m], rc);
            rc = MPI_Wait(&rr, &st_r);
        }
        TEST_ASSERT_MSG(rc == MPI_SUCCESS, "%s: wait rc %d", mname[m], rc);
    }
    int cnt = -1;
    MPI_Get_count(&st_r, MPI_INT, &cnt);
    TEST_ASSERT_MSG(st_r.MPI_SOURCE == me && st_r.MPI_TAG == tag && cnt == n,
                    "%s n %d: source %d tag %d count %d", mname[m], n, st_r.MPI_SOURCE,
                    st_r.MPI_TAG, cnt);
    int bad = 0;
    for (int i = 0; i < n && !bad; i++) {
        int got = rb[rvec ? 2 * i : i];
        if (got != i * 3 + m) {
            TEST_ASSERT_MSG(0, "%s n %d svec %d rvec %d late %d: element %d is %d", mname[m],
                            n, svec, rvec, late_recv, i, got);
            bad = 1;
        }
    }
    if (rvec)
        for (int i = 0; i < n && !bad; i++)
            if (rb[2 * i + 1] != -1) {
                TEST_ASSERT_MSG(0, "%s: gap %d written", mname[m], i);
                bad = 1;
            }
    /* the type must have survived the sends (each request holds it until it completes,
     * and lets it go exactly once) */
    int tsize = -1;
    rc = MPI_Type_size(vt, &tsize);
    TEST_ASSERT_MSG(rc == MPI_SUCCESS && tsize == n * (int)sizeof(int),
                    "%s: Type_size after the send: rc %d size %d", mname[m], rc, tsize);
    rc = MPI_Type_free(&vt);
    TEST_ASSERT_MSG(rc == MPI_SUCCESS, "%s: Type_free rc %d", mname[m], rc);
    free(sb);
    free(rb);
}

static void sendrecv(MPI_Comm comm, int n)
{
    int me;
    MPI_Comm_rank(comm, &me);
    MPI_Datatype vt;
    MPI_Type_vector(n, 1, 2, MPI_INT, &vt);
    MPI_Type_commit(&vt);
    int *a = malloc(sizeof(int) * 2 * (size_t)n), *b = malloc(sizeof(int) * 2 * (size_t)n);
    for (int i = 0; i < 2 * n; i++) {
        a[i] = i;
        b[i] = -1;
    }
    MPI_Status s;
    int rc = MPI_Sendrecv(a, 1, vt, me, 5, b, n, MPI_INT, me, 5, comm, &s);
    int cnt = -1;
    MPI_Get_count(&s, MPI_INT, &cnt);
    TEST_ASSERT_MSG(rc == MPI_SUCCESS && s.MPI_SOURCE == me && cnt == n,
                    "Sendrecv n %d: rc %d source %d count %d", n, rc, s.MPI_SOURCE, cnt);
    for (int i = 0; i < n; i++)
        if (b[i] != 2 * i) {
            TEST_ASSERT_MSG(0, "Sendrecv n %d element %d: %d", n, i, b[i]);
            break;
        }
    rc = MPI_Sendrecv_replace(a, 1, vt, me, 6, me, 6, comm, &s);
    TEST_ASSERT_MSG(rc == MPI_SUCCESS && s.MPI_SOURCE == me, "Sendrecv_replace rc %d", rc);
    for (int i = 0; i < 2 * n; i++)
        if (a[i] != i) {
            TEST_ASSERT_MSG(0, "Sendrecv_replace n %d element %d: %d", n, i, a[i]);
            break;
        }
    MPI_Type_free(&vt);
    free(a);
    free(b);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int bsize = 4 * (200000 * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
    void *bbuf = malloc((size_t)bsize);
    MPI_Buffer_attach(bbuf, bsize);
    MPI_Comm comms[2] = {MPI_COMM_WORLD, MPI_COMM_SELF};
    int sizes[3] = {0, 10, 100000};
    for (int c = 0; c < 2; c++)
        for (int m = 0; m < M_N; m++)
            for (int k = 0; k < 3; k++)
                for (int v = 0; v < 3; v++)
                    for (int late = 0; late < (m >= M_ISEND ? 2 : 1); late++)
                        one(comms[c], m, sizes[k], v == 1, v == 2, late);
    for (int c = 0; c < 2; c++)
        for (int k = 0; k < 3; k++)
            sendrecv(comms[c], sizes[k]);
    void *p;
    int sz;
    MPI_Buffer_detach(&p, &sz);
    free(bbuf);
    return test_finish();
}
