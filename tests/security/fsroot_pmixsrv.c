/* fsroot_pmixsrv.c - pmixsrv (the real OpenPMIx server) started as root for
 * another uid, as the stepd's plugin does, for t-fsroot-pmixsrv.sh.
 *
 * Usage: fsroot_pmixsrv TMPDIR UID GID
 *   Starts a one-rank PMIx server whose directory is TMPDIR (what the plugin
 *   passes as pmixsrv_config.tmpdir) for the job user UID:GID.  Prints
 *       dir=<the server's directory, from the task's PMIX_SERVER_TMPDIR>
 *       ready
 *   then waits (at most 60 s) for a line on stdin, destroys the server (which
 *   removes the directory: the teardown the test attacks) and prints
 *   "destroyed".  When pmixsrv_create refuses, its log lines are on stderr and
 *   the exit status is 2.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pmiserv.h"
#include "pmixsrv.h"

static int px_send(void *arg, int client, const char *buf, size_t len)
{
    (void)arg;
    (void)client;
    (void)buf;
    (void)len;
    return 0;
}

static int tree_send(void *arg, int to, const void *buf, size_t len)
{
    (void)arg;
    (void)to;
    (void)buf;
    (void)len;
    return -1;
}

static void on_abort(void *arg, int rank, int code, const char *msg)
{
    (void)arg;
    fprintf(stderr, "abort: rank %d code %d: %s\n", rank, code, msg);
}

static void on_log(void *arg, enum psrv_log_level lvl, const char *msg)
{
    (void)arg;
    fprintf(stderr, "log[%d]: %s\n", (int)lvl, msg);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: fsroot_pmixsrv TMPDIR UID GID\n");
        return 1;
    }
    static const int local[1] = {0}, node[1] = {0};
    const char *names[1] = {"localhost"};
    struct psrv_config pc = {
        .jobid = "fsroot.0",
        .size = 1,
        .nnodes = 1,
        .local_count = 1,
        .local_ranks = local,
        .rank_node = node,
        .tree_width = 2,
        .fence_timeout_ms = 10000,
        .log_level = PSRV_LOG_WARN,
    };
    static const struct psrv_ops ops = {
        .client_send = px_send,
        .tree_send = tree_send,
        .abort = on_abort,
        .log = on_log,
    };
    struct psrv *srv = psrv_create(&pc, &ops, NULL);
    if (!srv) {
        perror("psrv_create");
        return 1;
    }
    struct pmixsrv_config xc = {
        .nspace = "loom.fsroot.0",
        .jobid = "fsroot.0",
        .size = 1,
        .nnodes = 1,
        .local_count = 1,
        .local_ranks = local,
        .rank_node = node,
        .node_names = names,
        .uid = (uid_t)atol(argv[2]),
        .gid = (gid_t)atol(argv[3]),
        .tmpdir = argv[1],
        .log_level = PSRV_LOG_WARN,
    };
    static const struct pmixsrv_ops xops = {.log = on_log};
    struct pmixsrv *px = pmixsrv_create(&xc, srv, &xops, NULL);
    if (!px) {
        perror("pmixsrv_create");
        psrv_destroy(srv);
        return 2;
    }
    const char *dir = "";
    for (char *const *e = pmixsrv_task_env(px, 0); e && *e; e++)
        if (strncmp(*e, "PMIX_SERVER_TMPDIR=", 19) == 0)
            dir = *e + 19;
    printf("dir=%s\nready\n", dir);
    fflush(stdout);
    struct pollfd p = {.fd = 0, .events = POLLIN};
    char line[64];
    if (poll(&p, 1, 60000) > 0)
        (void)!read(0, line, sizeof(line));
    pmixsrv_destroy(px);
    psrv_destroy(srv);
    printf("destroyed\n");
    return 0;
}
