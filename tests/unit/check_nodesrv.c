/* check_nodesrv.c - the node server (nodesrv/nodesrv.h) over real socketpairs
 * on a real loop: replies reach the task, the hang-up rule (now or deferred
 * by the host), held output, the flow cap (a task that does not read is not
 * read), the tick (fence timeout) and the tree hook (messages out, a lost
 * link failing the fence). */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "loop.h"
#include "nodesrv.h"

#define MAXC 4

struct host {
    int aborts, abort_rank;
    char abort_msg[512];
    int hangups[MAXC], gones[MAXC], firsts[MAXC];
    enum nodesrv_hangup how[MAXC];
    int defer; /* client_hangup answers this */
    int tree_sent, tree_to;
    int prepares;
};

static void h_abort(void *arg, int rank, int code, const char *msg)
{
    struct host *h = arg;
    (void)code;
    h->aborts++;
    h->abort_rank = rank;
    snprintf(h->abort_msg, sizeof(h->abort_msg), "%s", msg ? msg : "");
}

static void h_log(void *arg, enum psrv_log_level l, const char *msg)
{
    (void)arg;
    (void)l;
    (void)msg;
}

static int h_tree_send(void *arg, int to, const void *buf, size_t len)
{
    struct host *h = arg;
    (void)buf;
    (void)len;
    h->tree_sent++;
    h->tree_to = to;
    return 0;
}

static void h_first(void *arg, int c)
{
    ((struct host *)arg)->firsts[c]++;
}

static int h_hangup(void *arg, int c, enum nodesrv_hangup how)
{
    struct host *h = arg;
    h->hangups[c]++;
    h->how[c] = how;
    return h->defer;
}

static void h_gone(void *arg, int c)
{
    ((struct host *)arg)->gones[c]++;
}

static int h_prepare(void *arg)
{
    ((struct host *)arg)->prepares++;
    return -1;
}

static const struct nodesrv_ops ops = {
    .abort = h_abort,
    .log = h_log,
    .tree_send = h_tree_send,
    .client_first = h_first,
    .client_hangup = h_hangup,
    .client_gone = h_gone,
    .prepare = h_prepare,
};

struct fix {
    struct loop *lp;
    struct nodesrv *ns;
    struct host h;
    int task[MAXC]; /* the tasks' ends */
    int n;
    int ranks[MAXC], node[2 * MAXC];
};

static void fix_start(struct fix *f, int n, int nnodes, int nodeid, int timeout_ms)
{
    memset(f, 0, sizeof(*f));
    f->n = n;
    for (int i = 0; i < n * nnodes; i++)
        f->node[i] = i / n;
    for (int i = 0; i < n; i++)
        f->ranks[i] = nodeid * n + i;
    struct psrv_config cfg = {
        .jobid = "7.0",
        .size = n * nnodes,
        .nnodes = nnodes,
        .nodeid = nodeid,
        .local_count = n,
        .local_ranks = f->ranks,
        .rank_node = f->node,
        .tree_width = 2,
        .fence_timeout_ms = timeout_ms,
        .log_level = PSRV_LOG_WARN,
    };
    f->lp = loop_create();
    ck_assert_ptr_nonnull(f->lp);
    f->ns = nodesrv_create(f->lp, &cfg, &ops, &f->h);
    ck_assert_ptr_nonnull(f->ns);
    for (int i = 0; i < n; i++) {
        int sv[2];
        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
        fcntl(sv[0], F_SETFL, O_NONBLOCK);
        ck_assert_int_eq(nodesrv_add_client(f->ns, i, sv[0]), 0);
        f->task[i] = sv[1];
    }
}

static void fix_end(struct fix *f)
{
    nodesrv_destroy(f->ns);
    loop_destroy(f->lp);
    for (int i = 0; i < f->n; i++)
        if (f->task[i] >= 0)
            close(f->task[i]);
}

static void say(struct fix *f, int i, const char *line)
{
    ck_assert_int_eq(write(f->task[i], line, strlen(line)), (ssize_t)strlen(line));
}

/* Run the loop until task i has a reply line (or ms pass); returns its length. */
static size_t reply(struct fix *f, int i, char *buf, size_t len, int ms)
{
    size_t have = 0;
    for (int t = 0; t < ms / 5; t++) {
        loop_run_once(f->lp, 5);
        struct pollfd p = {.fd = f->task[i], .events = POLLIN};
        while (poll(&p, 1, 0) == 1 && (p.revents & POLLIN) && have + 1 < len) {
            ssize_t n = read(f->task[i], buf + have, len - 1 - have);
            if (n <= 0)
                break;
            have += (size_t)n;
        }
        buf[have] = '\0';
        if (have && buf[have - 1] == '\n')
            return have;
    }
    return have;
}

static void spin(struct fix *f, int ms)
{
    for (int t = 0; t < ms / 5; t++)
        loop_run_once(f->lp, 5);
}

START_TEST(test_reply_and_first_input)
{
    struct fix f;
    char buf[512];

    fix_start(&f, 2, 1, 0, 5000);
    say(&f, 1, "cmd=init pmi_version=1 pmi_subversion=1\n");
    ck_assert_uint_gt(reply(&f, 1, buf, sizeof(buf), 1000), 0);
    ck_assert_ptr_nonnull(strstr(buf, "cmd=response_to_init"));
    ck_assert_int_eq(f.h.firsts[1], 1);
    ck_assert_int_eq(f.h.firsts[0], 0);
    ck_assert(nodesrv_client_inited(f.ns, 1));
    ck_assert(!nodesrv_client_inited(f.ns, 0));
    ck_assert_int_gt(f.h.prepares, 0);
    say(&f, 1, "cmd=get_maxes\n");
    ck_assert_uint_gt(reply(&f, 1, buf, sizeof(buf), 1000), 0);
    ck_assert_ptr_nonnull(strstr(buf, "cmd=maxes"));
    ck_assert_int_eq(f.h.firsts[1], 1); /* once */
    fix_end(&f);
}
END_TEST

/* EOF without finalize: the host hears it, the core at once (hangup 0): a
 * fence that needs the rank fails naming it. */
START_TEST(test_hangup_now)
{
    struct fix f;
    char buf[512];

    fix_start(&f, 2, 1, 0, 5000);
    say(&f, 0, "cmd=init pmi_version=1 pmi_subversion=1\n");
    reply(&f, 0, buf, sizeof(buf), 1000);
    say(&f, 1, "cmd=init pmi_version=1 pmi_subversion=1\n");
    reply(&f, 1, buf, sizeof(buf), 1000);
    close(f.task[1]);
    f.task[1] = -1;
    spin(&f, 50);
    ck_assert_int_eq(f.h.hangups[1], 1);
    ck_assert_int_eq(f.h.how[1], NODESRV_EOF);
    ck_assert_int_eq(f.h.gones[1], 1);
    ck_assert(!nodesrv_client_open(f.ns, 1));
    ck_assert(!nodesrv_gone_pending(f.ns, 1));
    say(&f, 0, "cmd=barrier_in\n");
    ck_assert_uint_gt(reply(&f, 0, buf, sizeof(buf), 1000), 0);
    ck_assert_ptr_nonnull(strstr(buf, "barrier_out"));
    ck_assert_ptr_null(strstr(buf, "rc=0"));
    ck_assert_int_eq(f.h.aborts, 1);
    ck_assert_int_eq(f.h.abort_rank, 1);
    fix_end(&f);
}
END_TEST

/* The host defers the hang-up: the core hears nothing until it says. */
START_TEST(test_hangup_deferred)
{
    struct fix f;

    fix_start(&f, 1, 1, 0, 5000);
    f.h.defer = 1;
    say(&f, 0, "cmd=init pmi_version=1 pmi_subversion=1\n");
    spin(&f, 30);
    close(f.task[0]);
    f.task[0] = -1;
    spin(&f, 30);
    ck_assert_int_eq(f.h.hangups[0], 1);
    ck_assert_int_eq(f.h.gones[0], 0);
    ck_assert(nodesrv_gone_pending(f.ns, 0));
    nodesrv_client_gone(f.ns, 0);
    nodesrv_client_gone(f.ns, 0); /* once */
    ck_assert_int_eq(f.h.gones[0], 1);
    ck_assert(!nodesrv_gone_pending(f.ns, 0));
    fix_end(&f);
}
END_TEST

START_TEST(test_hold_output)
{
    struct fix f;
    char buf[512];

    fix_start(&f, 1, 1, 0, 5000);
    nodesrv_hold_output(f.ns, true);
    say(&f, 0, "cmd=init pmi_version=1 pmi_subversion=1\n");
    ck_assert_uint_eq(reply(&f, 0, buf, sizeof(buf), 100), 0);
    nodesrv_hold_output(f.ns, false);
    ck_assert_uint_gt(reply(&f, 0, buf, sizeof(buf), 1000), 0);
    ck_assert_ptr_nonnull(strstr(buf, "cmd=response_to_init"));
    fix_end(&f);
}
END_TEST

/* A task that pipelines requests and never reads: once about FLOW_HIGH of
 * replies are queued it is no longer read, so its own socket fills up; the
 * other task is served meanwhile. */
START_TEST(test_flow_cap)
{
    struct fix f;
    char buf[512];
    static const char req[] = "cmd=get_maxes\n";
    char chunk[sizeof(req) * 256];
    size_t sent = 0;

    fix_start(&f, 2, 1, 0, 5000);
    for (size_t i = 0; i < 256; i++)
        memcpy(chunk + i * (sizeof(req) - 1), req, sizeof(req) - 1);
    fcntl(f.task[0], F_SETFL, O_NONBLOCK);
    say(&f, 0, "cmd=init pmi_version=1 pmi_subversion=1\n");
    int stuck = 0;
    for (int t = 0; t < 4000 && stuck < 50; t++) {
        ssize_t n = write(f.task[0], chunk, 256 * (sizeof(req) - 1));
        if (n > 0) {
            sent += (size_t)n;
            stuck = 0;
        } else {
            stuck++;
        }
        loop_run_once(f.lp, 1);
    }
    /* the server stopped reading it: the task's writes block, nothing closed */
    ck_assert_int_ge(stuck, 50);
    ck_assert(nodesrv_client_open(f.ns, 0));
    ck_assert_int_eq(f.h.aborts, 0);
    /* replies to well over FLOW_HIGH / reply size requests were never owed */
    ck_assert_uint_gt(sent, 1024u * 1024u / 8);
    say(&f, 1, "cmd=init pmi_version=1 pmi_subversion=1\n");
    ck_assert_uint_gt(reply(&f, 1, buf, sizeof(buf), 1000), 0);
    ck_assert_ptr_nonnull(strstr(buf, "cmd=response_to_init"));
    fix_end(&f);
}
END_TEST

/* The tick: a fence half the node reached fails at its timeout. */
START_TEST(test_tick_fence_timeout)
{
    struct fix f;
    char buf[512];

    fix_start(&f, 2, 1, 0, 200);
    say(&f, 0, "cmd=init pmi_version=1 pmi_subversion=1\n");
    reply(&f, 0, buf, sizeof(buf), 1000);
    say(&f, 0, "cmd=barrier_in\n");
    ck_assert_uint_gt(reply(&f, 0, buf, sizeof(buf), 3000), 0);
    ck_assert_ptr_nonnull(strstr(buf, "barrier_out"));
    ck_assert_int_eq(f.h.aborts, 1);
    fix_end(&f);
}
END_TEST

/* Node 1 of 2: the fence contribution leaves through the host's tree hook;
 * the parent's link lost fails it. */
START_TEST(test_tree_hook)
{
    struct fix f;
    char buf[512];

    fix_start(&f, 1, 2, 1, 5000);
    say(&f, 0, "cmd=init pmi_version=1 pmi_subversion=1\n");
    reply(&f, 0, buf, sizeof(buf), 1000);
    say(&f, 0, "cmd=barrier_in\n");
    spin(&f, 50);
    ck_assert_int_eq(f.h.tree_sent, 1);
    ck_assert_int_eq(f.h.tree_to, 0);
    nodesrv_tree_gone(f.ns, 0);
    ck_assert_uint_gt(reply(&f, 0, buf, sizeof(buf), 1000), 0);
    ck_assert_ptr_nonnull(strstr(buf, "barrier_out"));
    ck_assert_int_eq(f.h.aborts, 1);
    fix_end(&f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("nodesrv");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, test_reply_and_first_input);
    tcase_add_test(tc, test_hangup_now);
    tcase_add_test(tc, test_hangup_deferred);
    tcase_add_test(tc, test_hold_output);
    tcase_add_test(tc, test_flow_cap);
    tcase_add_test(tc, test_tick_fence_timeout);
    tcase_add_test(tc, test_tree_hook);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
