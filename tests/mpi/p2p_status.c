/*
 * p2p_status.c - the MPI_ERROR field of a status: single-completion calls (Recv,
 *   Wait, Test, Waitany, Testany, Probe, Iprobe, Mprobe, Improbe, Mrecv, Sendrecv,
 *   Request_get_status, and their MPI_PROC_NULL forms) leave it as the caller had it
 *   (MPI-3.1 3.2.5); Waitall sets it in every status.
 */
#include <string.h>

#include "mpitest.h"

#define MARK MPI_ERR_DIMS

static void mark(MPI_Status *s)
{
    memset(s, 0xab, sizeof(*s));
    s->MPI_ERROR = MARK;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, v = 7, w = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int peer = rank ^ 1;
    MPI_Status s;
    MPI_Request r;
    MPI_Message m;
    int flag, idx;

    if (peer < size) {
        for (int tag = 1; tag <= 7; tag++) {
            MPI_Isend(&v, 1, MPI_INT, peer, tag, MPI_COMM_WORLD, &r);
            mark(&s);
            switch (tag) {
            case 1:
                MPI_Recv(&w, 1, MPI_INT, peer, tag, MPI_COMM_WORLD, &s);
                break;
            case 2:
                MPI_Probe(peer, tag, MPI_COMM_WORLD, &s);
                TEST_ASSERT(s.MPI_ERROR == MARK && s.MPI_TAG == tag);
                MPI_Recv(&w, 1, MPI_INT, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                break;
            case 3:
                do
                    MPI_Iprobe(peer, tag, MPI_COMM_WORLD, &flag, &s);
                while (!flag);
                TEST_ASSERT(s.MPI_ERROR == MARK && s.MPI_TAG == tag);
                MPI_Recv(&w, 1, MPI_INT, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                break;
            case 4:
                MPI_Mprobe(peer, tag, MPI_COMM_WORLD, &m, &s);
                TEST_ASSERT(s.MPI_ERROR == MARK && s.MPI_TAG == tag);
                MPI_Mrecv(&w, 1, MPI_INT, &m, &s);
                break;
            case 5: {
                MPI_Request rr;
                MPI_Irecv(&w, 1, MPI_INT, peer, tag, MPI_COMM_WORLD, &rr);
                do
                    MPI_Test(&rr, &flag, &s);
                while (!flag);
                break;
            }
            case 6: {
                MPI_Request rr;
                MPI_Irecv(&w, 1, MPI_INT, peer, tag, MPI_COMM_WORLD, &rr);
                MPI_Waitany(1, &rr, &idx, &s);
                break;
            }
            case 7: {
                MPI_Request rr;
                MPI_Irecv(&w, 1, MPI_INT, peer, tag, MPI_COMM_WORLD, &rr);
                do
                    MPI_Request_get_status(rr, &flag, &s);
                while (!flag);
                TEST_ASSERT(s.MPI_ERROR == MARK);
                mark(&s);
                MPI_Wait(&rr, &s);
                break;
            }
            }
            TEST_ASSERT_MSG(s.MPI_ERROR == MARK && s.MPI_SOURCE == peer && s.MPI_TAG == tag,
                            "tag %d: error %d source %d", tag, s.MPI_ERROR, s.MPI_SOURCE);
            TEST_ASSERT(w == 7);
            w = 0;
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
        /* Sendrecv */
        mark(&s);
        MPI_Sendrecv(&v, 1, MPI_INT, peer, 9, &w, 1, MPI_INT, peer, 9, MPI_COMM_WORLD, &s);
        TEST_ASSERT(s.MPI_ERROR == MARK && s.MPI_TAG == 9 && w == 7);

        /* Waitall sets the field of every status */
        MPI_Request rs[2];
        MPI_Status ss[2];
        mark(&ss[0]);
        mark(&ss[1]);
        MPI_Irecv(&w, 1, MPI_INT, peer, 10, MPI_COMM_WORLD, &rs[0]);
        MPI_Isend(&v, 1, MPI_INT, peer, 10, MPI_COMM_WORLD, &rs[1]);
        MPI_Waitall(2, rs, ss);
        TEST_ASSERT(ss[0].MPI_ERROR == MPI_SUCCESS && ss[1].MPI_ERROR == MPI_SUCCESS);
    }

    /* MPI_PROC_NULL forms */
    mark(&s);
    MPI_Recv(&w, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &s);
    TEST_ASSERT(s.MPI_ERROR == MARK && s.MPI_SOURCE == MPI_PROC_NULL);
    mark(&s);
    MPI_Probe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &s);
    TEST_ASSERT(s.MPI_ERROR == MARK && s.MPI_SOURCE == MPI_PROC_NULL);
    mark(&s);
    MPI_Improbe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &flag, &m, &s);
    TEST_ASSERT(s.MPI_ERROR == MARK && flag && m == MPI_MESSAGE_NO_PROC);
    mark(&s);
    MPI_Mrecv(&w, 1, MPI_INT, &m, &s);
    TEST_ASSERT(s.MPI_ERROR == MARK && s.MPI_SOURCE == MPI_PROC_NULL);
    return test_finish();
}
