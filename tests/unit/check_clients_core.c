/* check_clients_core.c - our libpmi2 and libpmi against the real server core.
 *
 * Each test is a small job on one node: the test process hosts a psrv
 * (pmiserv/pmiserv.h) and forks one child per rank with PMI_FD set to its
 * end of a socketpair; the children run a PMI program through OUR client
 * libraries and report by exit status, while the parent feeds the core from
 * a poll loop, as a launcher would.  This checks that the two sides agree on
 * everything the unit tests pin separately: handshakes, escapes, fences,
 * job and node attributes, rings, the PMI-1/PMI-2 mix in one job, and abort.
 * Every wait is bounded (JOB_TIMEOUT_MS); leftover children are killed.
 */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pcli.h"
#include "pmi.h"
#include "pmi2.h"
#include "pmiserv.h"

#define MAXR 8
#define JOB_TIMEOUT_MS 15000

struct host {
    int fd[MAXR];
    pid_t pid[MAXR];
    int status[MAXR];
    int n;
    int aborted, abort_rank, abort_code;
    char abort_msg[256];
};

static int h_send(void *arg, int client, const char *buf, size_t len)
{
    struct host *h = arg;
    while (len > 0) {
        ssize_t n = send(h->fd[client], buf, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -EPIPE;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

static int h_tree(void *arg, int to, const void *buf, size_t len)
{
    (void)arg, (void)to, (void)buf, (void)len;
    return -ENOSYS; /* one node: no tree */
}

static void h_abort(void *arg, int rank, int exitcode, const char *msg)
{
    struct host *h = arg;
    h->aborted++;
    h->abort_rank = rank;
    h->abort_code = exitcode;
    snprintf(h->abort_msg, sizeof(h->abort_msg), "%s", msg ? msg : "");
}

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

typedef int (*rank_main_f)(int rank, int size);

/* Run a job of n ranks; rank r runs prog[r].  Returns the host record with
 * every child's wait status.  mapping overrides PMI_process_mapping. */
static void run_job(struct host *h, int n, rank_main_f *prog, const char *mapping)
{
    int local[MAXR], node[MAXR];
    struct psrv_config cfg = {0};
    struct psrv_ops ops = {.client_send = h_send, .tree_send = h_tree, .abort = h_abort};

    memset(h, 0, sizeof(*h));
    h->n = n;
    for (int i = 0; i < n; i++) {
        local[i] = i;
        node[i] = 0;
    }
    cfg.jobid = "42.0";
    cfg.size = n;
    cfg.nnodes = 1;
    cfg.nodeid = 0;
    cfg.local_count = n;
    cfg.local_ranks = local;
    cfg.rank_node = node;
    cfg.tree_width = 2;
    cfg.fence_timeout_ms = JOB_TIMEOUT_MS;
    cfg.process_mapping = mapping;
    cfg.log_level = PSRV_LOG_ERROR;
    struct psrv *srv = psrv_create(&cfg, &ops, h);
    ck_assert_ptr_nonnull(srv);

    for (int i = 0; i < n; i++) {
        int sv[2];
        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
            char b[16];
            close(sv[1]);
            for (int j = 0; j < i; j++)
                close(h->fd[j]);
            int fd = dup(sv[0]); /* without CLOEXEC, as a launcher passes it */
            snprintf(b, sizeof(b), "%d", fd);
            setenv("PMI_FD", b, 1);
            snprintf(b, sizeof(b), "%d", i);
            setenv("PMI_RANK", b, 1);
            snprintf(b, sizeof(b), "%d", n);
            setenv("PMI_SIZE", b, 1);
            setenv("PMI_JOBID", "42.0", 1);
            unsetenv("PMI_PORT");
            unsetenv("PMI_ID");
            _exit(prog[i](i, n));
        }
        close(sv[0]);
        h->fd[i] = sv[1];
        h->pid[i] = pid;
    }

    long deadline = now_ms() + JOB_TIMEOUT_MS;
    int live = n, open = n;
    while ((live > 0 || open > 0) && now_ms() < deadline) {
        struct pollfd p[MAXR];
        int np = 0, map[MAXR];
        for (int i = 0; i < n; i++) {
            if (h->fd[i] >= 0) {
                p[np].fd = h->fd[i];
                p[np].events = POLLIN;
                map[np++] = i;
            }
        }
        int t = psrv_tick(srv);
        poll(p, (nfds_t)np, t < 0 || t > 50 ? 50 : t);
        for (int k = 0; k < np; k++) {
            if (!(p[k].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            int i = map[k];
            char buf[4096];
            ssize_t r = read(h->fd[i], buf, sizeof(buf));
            if (r > 0 && psrv_client_input(srv, i, buf, (size_t)r) >= 0)
                continue;
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                psrv_client_gone(srv, i);
            close(h->fd[i]);
            h->fd[i] = -1;
            open--;
        }
        for (int i = 0; i < n; i++) {
            if (h->pid[i] > 0 &&
                waitpid(h->pid[i], &h->status[i], WNOHANG) == h->pid[i]) {
                h->pid[i] = 0;
                live--;
            }
        }
        if (h->aborted) /* like a launcher: the job ends */
            for (int i = 0; i < n; i++)
                if (h->pid[i] > 0)
                    kill(h->pid[i], SIGKILL);
    }
    for (int i = 0; i < n; i++) {
        if (h->pid[i] > 0) {
            kill(h->pid[i], SIGKILL);
            waitpid(h->pid[i], &h->status[i], 0);
            h->status[i] = -1; /* timed out */
        }
        if (h->fd[i] >= 0)
            close(h->fd[i]);
    }
    psrv_destroy(srv);
}

static void all_exit_zero(const struct host *h)
{
    for (int i = 0; i < h->n; i++)
        ck_assert_msg(h->status[i] >= 0 && WIFEXITED(h->status[i]) &&
                          WEXITSTATUS(h->status[i]) == 0,
                      "rank %d: status 0x%x (exit %d)", i, h->status[i],
                      WIFEXITED(h->status[i]) ? WEXITSTATUS(h->status[i]) : -1);
    ck_assert_int_eq(h->aborted, 0);
}

/* ---- rank programs (exit code = failing step) ------------------------------- */

static int pmi2_rank(int rank, int size)
{
    int spawned, sz, rk, app, len, found, n;
    char key[32], val[64], want[64];

    if (PMI2_Init(&spawned, &sz, &rk, &app) != PMI2_SUCCESS)
        return 10;
    if (sz != size || rk != rank || spawned)
        return 11;
    snprintf(key, sizeof(key), "key%d", rank);
    snprintf(val, sizeof(val), "v;%d=a b;;", rank); /* ';', '=', ' ' survive */
    if (PMI2_KVS_Put(key, val) != PMI2_SUCCESS)
        return 12;
    if (PMI2_KVS_Fence() != PMI2_SUCCESS)
        return 13;
    for (int r = 0; r < size; r++) {
        snprintf(key, sizeof(key), "key%d", r);
        snprintf(want, sizeof(want), "v;%d=a b;;", r);
        if (PMI2_KVS_Get(NULL, r, key, val, sizeof(val), &len) != PMI2_SUCCESS)
            return 14;
        if (strcmp(val, want) != 0 || len != (int)strlen(want))
            return 15;
    }
    if (PMI2_KVS_Get(NULL, PMI2_ID_NULL, "-NONEXIST-KEY", val, sizeof(val), &len) ==
        PMI2_SUCCESS)
        return 16;
    if (PMI2_Info_GetJobAttr("PMI_process_mapping", val, sizeof(val), &found) !=
            PMI2_SUCCESS ||
        !found || strcmp(val, "(vector,(0,1,4))") != 0)
        return 17;
    int arr[MAXR];
    if (PMI2_Info_GetNodeAttrIntArray("localRanks", arr, MAXR, &n, &found) !=
            PMI2_SUCCESS ||
        !found || n != size || arr[rank] != rank)
        return 18;
    if (PMI2_Job_GetId(val, sizeof(val)) != PMI2_SUCCESS || strcmp(val, "42.0") != 0)
        return 19;
    char l[16], r[16], mine[16];
    int rr, nr;
    snprintf(mine, sizeof(mine), "r%d", rank);
    if (PMIX_Ring(mine, &rr, &nr, l, r, sizeof(l)) != PMI2_SUCCESS || nr != size)
        return 20;
    snprintf(want, sizeof(want), "r%d", (rr + size - 1) % size); /* ring rank order */
    if (strcmp(l, want) != 0)
        return 21;
    if (PMI2_Job_Connect("1.0", NULL) == PMI2_SUCCESS)
        return 22; /* the core answers with an error, and does answer */
    if (PMI2_Finalize() != PMI2_SUCCESS)
        return 23;
    return 0;
}

static int pmi1_rank(int rank, int size)
{
    int spawned, v;
    char kvs[256], key[32], val[64], want[64];

    if (PMI_Init(&spawned) != PMI_SUCCESS)
        return 30;
    if (PMI_Get_rank(&v) != PMI_SUCCESS || v != rank || PMI_Get_size(&v) != PMI_SUCCESS ||
        v != size)
        return 31;
    if (PMI_KVS_Get_my_name(kvs, sizeof(kvs)) != PMI_SUCCESS)
        return 32;
    snprintf(key, sizeof(key), "key%d", rank);
    snprintf(val, sizeof(val), "v;%d=x", rank); /* PMI-1 values cannot hold spaces */
    if (PMI_KVS_Put(kvs, key, val) != PMI_SUCCESS || PMI_KVS_Commit(kvs) != PMI_SUCCESS)
        return 33;
    if (PMI_Barrier() != PMI_SUCCESS)
        return 34;
    for (int r = 0; r < size; r++) {
        snprintf(key, sizeof(key), "key%d", r);
        snprintf(want, sizeof(want), "v;%d=x", r);
        if (PMI_KVS_Get(kvs, key, val, sizeof(val)) != PMI_SUCCESS)
            return 35;
        if (strcmp(val, want) != 0)
            return 36;
    }
    if (PMI_KVS_Get(kvs, "nokey", val, sizeof(val)) == PMI_SUCCESS)
        return 38;
    if (PMI_Get_universe_size(&v) != PMI_SUCCESS || v != size)
        return 39;
    if (PMI_Get_clique_size(&v) != PMI_SUCCESS)
        return 40;
    int ranks[MAXR];
    if (!getenv("LOOM_MIXED")) {
        /* the job was given mapping (vector,(0,2,2)): two nodes of two */
        if (v != 2 || PMI_Get_clique_ranks(ranks, MAXR) != PMI_SUCCESS ||
            ranks[0] != rank / 2 * 2 || ranks[1] != rank / 2 * 2 + 1)
            return 41;
    }
    if (PMI_Finalize() != PMI_SUCCESS)
        return 42;
    return 0;
}

/* pmi2_rank's put/fence/get half, for a job mixing PMI-1 and PMI-2 ranks. */
static int pmi2_mixed_rank(int rank, int size)
{
    int spawned, sz, rk, app, len;
    char key[32], val[64], want[64];

    if (PMI2_Init(&spawned, &sz, &rk, &app) != PMI2_SUCCESS || sz != size || rk != rank)
        return 50;
    snprintf(key, sizeof(key), "key%d", rank);
    snprintf(val, sizeof(val), "v;%d=x", rank);
    if (PMI2_KVS_Put(key, val) != PMI2_SUCCESS || PMI2_KVS_Fence() != PMI2_SUCCESS)
        return 51;
    for (int r = 0; r < size; r++) {
        snprintf(key, sizeof(key), "key%d", r);
        snprintf(want, sizeof(want), "v;%d=x", r);
        if (PMI2_KVS_Get(NULL, r, key, val, sizeof(val), &len) != PMI2_SUCCESS ||
            strcmp(val, want) != 0)
            return 52;
    }
    return PMI2_Finalize() == PMI2_SUCCESS ? 0 : 53;
}

static int pmi2_aborter(int rank, int size)
{
    int s, sz, rk, app;
    (void)size;
    if (PMI2_Init(&s, &sz, &rk, &app) != PMI2_SUCCESS || rk != rank)
        return 60;
    PMI2_Abort(1, "rank gives up");
    return 61;
}

static int pmi2_fencer(int rank, int size)
{
    int s, sz, rk, app;
    (void)size;
    if (PMI2_Init(&s, &sz, &rk, &app) != PMI2_SUCCESS || rk != rank)
        return 70;
    PMI2_KVS_Fence(); /* never completes: the aborting rank never comes */
    return 71;
}

/* ---- tests ---------------------------------------------------------------------- */

START_TEST(pmi2_job_of_four)
{
    struct host h;
    rank_main_f prog[4] = {pmi2_rank, pmi2_rank, pmi2_rank, pmi2_rank};
    run_job(&h, 4, prog, NULL);
    all_exit_zero(&h);
}
END_TEST

START_TEST(pmi1_job_of_four)
{
    struct host h;
    rank_main_f prog[4] = {pmi1_rank, pmi1_rank, pmi1_rank, pmi1_rank};
    unsetenv("LOOM_MIXED");
    run_job(&h, 4, prog, "(vector,(0,2,2))");
    all_exit_zero(&h);
}
END_TEST

START_TEST(mixed_pmi1_pmi2_job)
{
    struct host h;
    rank_main_f prog[4] = {pmi2_mixed_rank, pmi1_rank, pmi2_mixed_rank, pmi1_rank};
    setenv("LOOM_MIXED", "1", 1);
    run_job(&h, 4, prog, NULL);
    all_exit_zero(&h);
}
END_TEST

START_TEST(abort_reaches_the_host)
{
    struct host h;
    rank_main_f prog[3] = {pmi2_fencer, pmi2_aborter, pmi2_fencer};
    run_job(&h, 3, prog, NULL);
    ck_assert_int_eq(h.aborted, 1);
    ck_assert_int_eq(h.abort_rank, 1);
    ck_assert_msg(strstr(h.abort_msg, "rank gives up") != NULL, "abort message: %s",
                  h.abort_msg);
    /* exit(1) from PMI2_Abort, unless the host's kill got there first */
    ck_assert((WIFEXITED(h.status[1]) && WEXITSTATUS(h.status[1]) == 1) ||
              (WIFSIGNALED(h.status[1]) && WTERMSIG(h.status[1]) == SIGKILL));
    for (int i = 0; i < 3; i += 2) /* the others were killed, none hung */
        ck_assert(h.status[i] != -1);
}
END_TEST

/* The core writes PMI_process_mapping, the clients read it: every layout
 * must survive the round trip (block, uneven, cyclic, plane, random).  A
 * layout too irregular for one value may come back -EMSGSIZE ("advertise no
 * mapping") only when `may_overflow`. */
static void roundtrip(const int *node, int size, const char *what, bool may_overflow)
{
    static char map[1 << 16];
    int back[256];

    int len = psrv_process_mapping(node, size, map, sizeof(map));
    if (len == -EMSGSIZE && may_overflow)
        return;
    ck_assert_msg(len > 0, "%s: no mapping (%d)", what, len);
    ck_assert_msg(loom_pmap_parse(map, size, back) == 0, "%s: cannot parse '%s'", what, map);
    for (int i = 0; i < size; i++)
        ck_assert_msg(back[i] == node[i], "%s: '%s' puts rank %d on node %d, not %d", what,
                      map, i, back[i], node[i]);
}

START_TEST(mapping_roundtrip_with_core)
{
    int node[256];
    char what[64];
    unsigned seed = 12345;

    for (int size = 1; size <= 256; size += (size < 20 ? 1 : 17)) {
        for (int nn = 1; nn <= 9 && nn <= size; nn++) {
            for (int i = 0; i < size; i++) /* block, last node short */
                node[i] = i / ((size + nn - 1) / nn);
            snprintf(what, sizeof(what), "block %d/%d", size, nn);
            roundtrip(node, size, what, false);
            for (int i = 0; i < size; i++)
                node[i] = i % nn;
            snprintf(what, sizeof(what), "cyclic %d/%d", size, nn);
            roundtrip(node, size, what, false);
            for (int i = 0; i < size; i++) /* plane=2 */
                node[i] = (i / 2) % nn;
            snprintf(what, sizeof(what), "plane2 %d/%d", size, nn);
            roundtrip(node, size, what, false);
            for (int i = 0; i < size; i++) {
                seed = seed * 1103515245u + 12345u;
                node[i] = (int)((seed >> 16) % (unsigned)nn);
            }
            snprintf(what, sizeof(what), "random %d/%d", size, nn);
            roundtrip(node, size, what, true);
        }
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("clients+core");
    TCase *tc = tcase_create("job");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, pmi2_job_of_four);
    tcase_add_test(tc, pmi1_job_of_four);
    tcase_add_test(tc, mixed_pmi1_pmi2_job);
    tcase_add_test(tc, abort_reaches_the_host);
    tcase_add_test(tc, mapping_roundtrip_with_core);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
