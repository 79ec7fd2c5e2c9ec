/*
 * dyn_port2.c - the version-2 port name (loom-port:2:..., with a secret and a TCP
 *   address card, the form connections between jobs will use) is understood by every
 *   call that takes a port name when the port is one of this job: rank 0 opens a port
 *   (version 1), the last rank rewrites the name into version 2 and connects with it,
 *   rank 0 accepts on the version-1 name; both check the intercommunicator (sizes, a
 *   message each way), disconnect, and rank 0 closes the port by its version-2 name.
 *   Malformed version-2 names (short secret, no card, bad port) give MPI_ERR_PORT.
 * Loom-specific (the name's format is Loom's); other ranks only take part in the checks.
 */
#include <stdio.h>
#include <string.h>

#include "mpitest.h"

/* "loom-port:1:R:T:J" or "loom-port:2:R:T:<secret>:<card>:J" (what Open_port writes
 * when the netmod can run) -> "loom-port:2:R:T:<secret>:<card>:J" with ours */
static int to_v2(const char *v1, char *out, size_t len, const char *secret, const char *card)
{
    int r, t, n = 0;
    const char *job;
    if (sscanf(v1, "loom-port:1:%d:%d:%n", &r, &t, &n) == 2 && n > 0) {
        job = v1 + n;
    } else if (sscanf(v1, "loom-port:2:%d:%d:%n", &r, &t, &n) == 2 && n > 0 &&
               strlen(v1 + n) > 33 && v1[n + 32] == ':') {
        job = v1 + n + 33; /* past the secret: the card, a.b.c.d:port[,...], then ':' */
        for (;;) {
            const char *colon = strchr(job, ':');
            if (!colon)
                return -1;
            job = colon + 1;
            while (*job >= '0' && *job <= '9')
                job++;
            if (*job != ',')
                break;
            job++;
        }
        if (*job++ != ':')
            return -1;
    } else {
        return -1;
    }
    return snprintf(out, len, "loom-port:2:%d:%d:%s:%s:%s", r, t, secret, card, job) <
                   (int)len
               ? 0
               : -1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *sec = "0123456789abcdef0123456789abcdef";
    char port[MPI_MAX_PORT_NAME] = "", v2[MPI_MAX_PORT_NAME] = "";
    if (size < 2) {
        if (rank == 0)
            printf("needs 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    int last = size - 1;
    if (rank == 0)
        TEST_ASSERT(MPI_Open_port(MPI_INFO_NULL, port) == MPI_SUCCESS);
    MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
    TEST_ASSERT_MSG(to_v2(port, v2, sizeof(v2), sec, "10.1.2.3:4567,127.0.0.1:1") == 0,
                    "port name \"%s\"", port);
    if (rank == 0 || rank == last) {
        MPI_Comm inter = MPI_COMM_NULL;
        int rc = rank == 0
                     ? MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter)
                     : MPI_Comm_connect(v2, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
        TEST_ASSERT_MSG(rc == MPI_SUCCESS, "%s with \"%s\": %d",
                        rank ? "connect" : "accept", rank ? v2 : port, rc);
        if (rc == MPI_SUCCESS) {
            int rs = -1, flag = 0, got = -1, mine = 100 + rank;
            MPI_Comm_test_inter(inter, &flag);
            MPI_Comm_remote_size(inter, &rs);
            TEST_ASSERT(flag && rs == 1);
            MPI_Sendrecv(&mine, 1, MPI_INT, 0, 7, &got, 1, MPI_INT, 0, 7, inter,
                         MPI_STATUS_IGNORE);
            TEST_ASSERT_MSG(got == 100 + (rank ? 0 : last), "got %d", got);
            TEST_ASSERT(MPI_Comm_disconnect(&inter) == MPI_SUCCESS);
            TEST_ASSERT(inter == MPI_COMM_NULL);
        }
    }
    if (rank == last) {
        /* malformed version-2 names: refused before anything is sent */
        static const char *bad[] = {
            "loom-port:2:0:1:0123:10.1.2.3:4567:job",                            /* secret */
            "loom-port:2:0:1:0123456789abcdef0123456789abcdef::job",             /* card */
            "loom-port:2:0:1:0123456789abcdef0123456789abcdef:10.1.2.3:0:job",   /* port */
            "loom-port:2:0:1:0123456789abcdef0123456789abcdef:10.1.2.3:4567:",   /* job */
        };
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
        for (int i = 0; i < 4; i++) {
            MPI_Comm c = MPI_COMM_NULL;
            int rc = MPI_Comm_connect(bad[i], MPI_INFO_NULL, 0, MPI_COMM_SELF, &c), cls = -1;
            MPI_Error_class(rc, &cls);
            TEST_ASSERT_MSG(cls == MPI_ERR_PORT, "\"%s\": class %d", bad[i], cls);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        /* rank 0 rewrites the name too: closing by the version-2 form works */
        TEST_ASSERT(MPI_Close_port(v2) == MPI_SUCCESS);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int cls = -1;
        MPI_Error_class(MPI_Close_port(port), &cls); /* closed already */
        TEST_ASSERT(cls == MPI_ERR_PORT);
    }
    return test_finish();
}
