/*
 * dyn_join.c - MPI_Comm_join over a TCP socket: ranks pair up (2k, 2k+1), the even
 * one listens on every address and sends its port and its IPv4 addresses (loopback
 * first; the pair may be on different nodes or network namespaces) by MPI_Send, the
 * odd one connects to the first that answers, both join; the intercommunicator (remote size 1) carries a message each way and
 * merges.  Then a join whose other end is not an MPI process (it writes garbage into a
 * socketpair) fails with MPI_ERR_OTHER under ERRORS_RETURN.  An odd last rank only
 * does the second part.
 */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mpitest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int partner = rank ^ 1;
    if (partner < size) {
        int fd = -1;
        if (!(rank & 1)) {
            int ls = socket(AF_INET, SOCK_STREAM, 0);
            struct sockaddr_in a = {.sin_family = AF_INET};
            a.sin_addr.s_addr = htonl(INADDR_ANY);
            socklen_t al = sizeof(a);
            TEST_ASSERT(bind(ls, (struct sockaddr *)&a, sizeof(a)) == 0);
            TEST_ASSERT(listen(ls, 1) == 0);
            getsockname(ls, (struct sockaddr *)&a, &al);
            /* [0] port, [1] count, [2..] addresses in network order, loopback first */
            unsigned int msg[2 + 8] = {ntohs(a.sin_port), 1, htonl(INADDR_LOOPBACK)};
            struct ifaddrs *ifs = NULL;
            if (getifaddrs(&ifs) == 0) {
                for (struct ifaddrs *i = ifs; i && msg[1] < 8; i = i->ifa_next)
                    if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET) {
                        unsigned int ip = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr;
                        if (ip != htonl(INADDR_LOOPBACK))
                            msg[2 + msg[1]++] = ip;
                    }
                freeifaddrs(ifs);
            }
            MPI_Send(msg, 10, MPI_UNSIGNED, partner, 0, MPI_COMM_WORLD);
            fd = accept(ls, NULL, NULL);
            close(ls);
        } else {
            unsigned int msg[2 + 8] = {0};
            MPI_Recv(msg, 10, MPI_UNSIGNED, partner, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            int ok = 0;
            for (unsigned int k = 0; k < msg[1] && k < 8 && !ok; k++) {
                fd = socket(AF_INET, SOCK_STREAM, 0);
                struct sockaddr_in a = {.sin_family = AF_INET,
                                        .sin_port = htons((uint16_t)msg[0])};
                a.sin_addr.s_addr = msg[2 + k];
                ok = connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
                if (!ok)
                    close(fd);
            }
            TEST_ASSERT_MSG(ok, "no address of rank %d answered", partner);
            if (!ok)
                fd = -1;
        }
        TEST_ASSERT(fd >= 0);
        MPI_Comm inter, merged;
        TEST_ASSERT(MPI_Comm_join(fd, &inter) == MPI_SUCCESS);
        close(fd);
        int rsize = 0, got = -1;
        MPI_Comm_remote_size(inter, &rsize);
        TEST_ASSERT(rsize == 1);
        MPI_Sendrecv(&rank, 1, MPI_INT, 0, 3, &got, 1, MPI_INT, 0, 3, inter,
                     MPI_STATUS_IGNORE);
        TEST_ASSERT_MSG(got == partner, "got %d", got);
        MPI_Intercomm_merge(inter, rank & 1, &merged);
        int mrank = -1, msize = 0;
        MPI_Comm_rank(merged, &mrank);
        MPI_Comm_size(merged, &msize);
        TEST_ASSERT(msize == 2 && mrank == (rank & 1));
        MPI_Comm_free(&merged);
        MPI_Comm_disconnect(&inter);
    }
    /* the other end is no MPI process */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int sp[2];
    TEST_ASSERT(socketpair(AF_UNIX, SOCK_STREAM, 0, sp) == 0);
    char junk[200];
    memset(junk, 'x', sizeof(junk));
    TEST_ASSERT(write(sp[1], junk, sizeof(junk)) == (ssize_t)sizeof(junk));
    MPI_Comm inter = MPI_COMM_WORLD;
    int cls = -1, rc = MPI_Comm_join(sp[0], &inter);
    MPI_Error_class(rc, &cls);
    TEST_ASSERT_MSG(cls == MPI_ERR_OTHER, "class %d", cls);
    TEST_ASSERT(inter == MPI_COMM_NULL);
    close(sp[0]);
    close(sp[1]);
    return test_finish();
}
