/* check_loop.c - unit tests for common/loop.c, the reactor.
 *
 * Covers: timer order (including equal deadlines), cancel, fd read/write
 * readiness, EOF reporting, removal from inside a callback, one watcher per
 * fd, a paused watcher on a hung-up fd staying quiet, loop_stop from
 * a callback and from another thread, the prepare hook bounding the sleep,
 * and a self re-arming zero-delay timer not starving fds.
 * Also common/flow.c, the per-client flow control the loop's hosts use: a
 * client that sends requests and never reads makes its host queue at most
 * FLOW_MAX_BYTES and stop reading it; once it reads, the held input is fed
 * and every reply arrives in order; input beyond what can be held, a
 * feeder's verdict and a closed peer are reported.
 * No assertion depends on elapsed time; every test has a Check timeout.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "flow.h"
#include "loop.h"

struct order {
    int seen[16];
    int n;
};

struct tmark {
    struct order *o;
    int id;
    int stop_after;
};

static void mark_cb(struct loop *lp, struct loop_timer *t, void *arg)
{
    struct tmark *m = arg;

    m->o->seen[m->o->n++] = m->id;
    if (m->stop_after && m->o->n == m->stop_after)
        loop_stop(lp, 42);
}

START_TEST(timers_fire_in_order)
{
    struct loop *lp = loop_create();
    struct order o = {0};
    struct tmark m[5] = {{&o, 30, 0}, {&o, 10, 0}, {&o, 20, 0}, {&o, 11, 0}, {&o, 40, 5}};

    ck_assert_ptr_nonnull(lp);
    ck_assert_ptr_nonnull(loop_timer_add(lp, 30, mark_cb, &m[0]));
    ck_assert_ptr_nonnull(loop_timer_add(lp, 10, mark_cb, &m[1]));
    ck_assert_ptr_nonnull(loop_timer_add(lp, 20, mark_cb, &m[2]));
    /* same delay as m[1], added later: must fire after it */
    ck_assert_ptr_nonnull(loop_timer_add(lp, 10, mark_cb, &m[3]));
    ck_assert_ptr_nonnull(loop_timer_add(lp, 40, mark_cb, &m[4]));
    ck_assert_int_eq(loop_run(lp), 42);
    ck_assert_int_eq(o.n, 5);
    ck_assert_int_eq(o.seen[0], 10);
    ck_assert_int_eq(o.seen[1], 11);
    ck_assert_int_eq(o.seen[2], 20);
    ck_assert_int_eq(o.seen[3], 30);
    ck_assert_int_eq(o.seen[4], 40);
    loop_destroy(lp);
}
END_TEST

START_TEST(timer_cancel)
{
    struct loop *lp = loop_create();
    struct order o = {0};
    struct tmark a = {&o, 1, 0}, b = {&o, 2, 1};

    struct loop_timer *t = loop_timer_add(lp, 0, mark_cb, &a);
    ck_assert_ptr_nonnull(t);
    ck_assert_ptr_nonnull(loop_timer_add(lp, 5, mark_cb, &b));
    loop_timer_cancel(lp, t);
    ck_assert_int_eq(loop_run(lp), 42);
    ck_assert_int_eq(o.n, 1);
    ck_assert_int_eq(o.seen[0], 2);
    loop_destroy(lp);
}
END_TEST

struct fdrec {
    int calls;
    int revents;
    int fd;
    char got;
    ssize_t nread;
};

static void rec_cb(struct loop *lp, struct loop_watch *w, int fd, int revents, void *arg)
{
    struct fdrec *r = arg;

    r->calls++;
    r->revents |= revents;
    r->fd = fd;
    if (revents & (LOOP_READ | LOOP_ERROR))
        r->nread = read(fd, &r->got, 1);
}

START_TEST(fd_readiness)
{
    struct loop *lp = loop_create();
    struct fdrec rr = {0}, wr = {0};
    int p[2];

    ck_assert_int_eq(pipe(p), 0);
    struct loop_watch *rw = loop_watch_add(lp, p[0], LOOP_READ, rec_cb, &rr);
    ck_assert_ptr_nonnull(rw);
    /* Nothing written yet: a bounded poll reports nothing. */
    ck_assert_int_eq(loop_run_once(lp, 0), 0);
    ck_assert_int_eq(rr.calls, 0);

    ck_assert_int_eq(write(p[1], "x", 1), 1);
    ck_assert_int_eq(loop_run_once(lp, -1), 0);
    ck_assert_int_eq(rr.calls, 1);
    ck_assert(rr.revents & LOOP_READ);
    ck_assert_int_eq(rr.fd, p[0]);
    ck_assert_int_eq(rr.got, 'x');

    /* Write interest on an empty pipe is ready at once. */
    struct loop_watch *ww = loop_watch_add(lp, p[1], LOOP_WRITE, rec_cb, &wr);
    ck_assert_ptr_nonnull(ww);
    ck_assert_int_eq(loop_run_once(lp, -1), 0);
    ck_assert_int_eq(wr.calls, 1);
    ck_assert(wr.revents & LOOP_WRITE);
    ck_assert_int_eq(rr.calls, 1);

    /* Paused watcher (no interest) is not called. */
    loop_watch_set(ww, 0);
    ck_assert_int_eq(loop_watch_events(ww), 0);
    ck_assert_int_eq(loop_run_once(lp, 0), 0);
    ck_assert_int_eq(wr.calls, 1);

    /* EOF: closing the writer makes the reader ready; read returns 0. */
    loop_watch_remove(lp, ww);
    close(p[1]);
    ck_assert_int_eq(loop_run_once(lp, -1), 0);
    ck_assert_int_eq(rr.calls, 2);
    ck_assert_int_eq(rr.nread, 0);
    loop_watch_remove(lp, rw);
    close(p[0]);
    loop_destroy(lp);
}
END_TEST

struct remover {
    struct loop_watch *victim;
    int calls;
};

static void remover_cb(struct loop *lp, struct loop_watch *w, int fd, int revents,
                       void *arg)
{
    struct remover *r = arg;

    r->calls++;
    if (r->victim) {
        loop_watch_remove(lp, r->victim);
        r->victim = NULL;
    }
}

START_TEST(remove_inside_callback)
{
    struct loop *lp = loop_create();
    struct remover a = {0}, b = {0};
    int p[2], q[2];

    ck_assert_int_eq(pipe(p), 0);
    ck_assert_int_eq(pipe(q), 0);
    ck_assert_int_eq(write(p[1], "x", 1), 1);
    ck_assert_int_eq(write(q[1], "x", 1), 1);
    /* Both readable; whichever runs first removes the other. */
    struct loop_watch *wa = loop_watch_add(lp, p[0], LOOP_READ, remover_cb, &a);
    struct loop_watch *wb = loop_watch_add(lp, q[0], LOOP_READ, remover_cb, &b);
    ck_assert_ptr_nonnull(wa);
    ck_assert_ptr_nonnull(wb);
    a.victim = wb;
    b.victim = wa;
    ck_assert_int_eq(loop_run_once(lp, -1), 0);
    ck_assert_int_eq(a.calls + b.calls, 1);
    struct remover *alive = a.calls ? &a : &b;
    /* the survivor keeps firing (its fd stays readable), the other never */
    ck_assert_int_eq(loop_run_once(lp, -1), 0);
    ck_assert_int_eq(a.calls + b.calls, 2);
    ck_assert_int_eq(alive->calls, 2);
    /* a watcher removing itself */
    alive->victim = alive == &a ? wa : wb;
    ck_assert_int_eq(loop_run_once(lp, -1), 0);
    ck_assert_int_eq(alive->calls, 3);
    ck_assert_int_eq(loop_run_once(lp, 0), 0);
    ck_assert_int_eq(a.calls + b.calls, 3);
    close(p[0]);
    close(p[1]);
    close(q[0]);
    close(q[1]);
    loop_destroy(lp);
}
END_TEST

START_TEST(one_watcher_per_fd)
{
    struct loop *lp = loop_create();
    struct fdrec r = {0};
    int p[2];

    ck_assert_int_eq(pipe(p), 0);
    struct loop_watch *w = loop_watch_add(lp, p[0], LOOP_READ, rec_cb, &r);
    ck_assert_ptr_nonnull(w);
    errno = 0;
    ck_assert_ptr_null(loop_watch_add(lp, p[0], LOOP_READ, rec_cb, &r));
    ck_assert_int_eq(errno, EEXIST);
    /* after removal the fd can be watched again */
    loop_watch_remove(lp, w);
    ck_assert_ptr_nonnull(loop_watch_add(lp, p[0], LOOP_READ, rec_cb, &r));
    close(p[0]);
    close(p[1]);
    loop_destroy(lp);
}
END_TEST

START_TEST(paused_watcher_ignores_hangup)
{
    struct loop *lp = loop_create();
    struct fdrec r = {0};
    int p[2];

    /* A hung-up fd with no interest must not be reported (it would make
     * the loop spin), and is reported again once interest returns. */
    ck_assert_int_eq(pipe(p), 0);
    struct loop_watch *w = loop_watch_add(lp, p[0], 0, rec_cb, &r);
    ck_assert_ptr_nonnull(w);
    close(p[1]);
    ck_assert_int_eq(loop_run_once(lp, 0), 0);
    ck_assert_int_eq(r.calls, 0);
    loop_watch_set(w, LOOP_READ);
    ck_assert_int_eq(loop_run_once(lp, -1), 0);
    ck_assert_int_eq(r.calls, 1);
    ck_assert(r.revents & (LOOP_READ | LOOP_ERROR));
    ck_assert_int_eq(r.nread, 0);
    loop_watch_remove(lp, w);
    close(p[0]);
    loop_destroy(lp);
}
END_TEST

static void *stopper(void *arg)
{
    usleep(20000);
    loop_stop(arg, 7);
    return NULL;
}

START_TEST(stop_from_other_thread)
{
    struct loop *lp = loop_create();
    pthread_t th;

    /* No fds, no timers: only the wake-up can end this run. */
    ck_assert_int_eq(pthread_create(&th, NULL, stopper, lp), 0);
    ck_assert_int_eq(loop_run(lp), 7);
    pthread_join(th, NULL);
    loop_destroy(lp);
}
END_TEST

START_TEST(stop_before_run)
{
    struct loop *lp = loop_create();

    loop_stop(lp, 3);
    ck_assert_int_eq(loop_run(lp), 3);
    loop_destroy(lp);
}
END_TEST

static int prep_calls;

static int prep_cb(struct loop *lp, void *arg)
{
    prep_calls++;
    return 1;
}

START_TEST(prepare_bounds_sleep)
{
    struct loop *lp = loop_create();

    prep_calls = 0;
    loop_set_prepare(lp, prep_cb, NULL);
    /* With nothing to wait for, the prepare hook's 1 ms makes these return. */
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(loop_run_once(lp, -1), 0);
    ck_assert_int_eq(prep_calls, 3);
    loop_destroy(lp);
}
END_TEST

struct rearm {
    int fires;
    int fd_calls;
};

static void rearm_cb(struct loop *lp, struct loop_timer *t, void *arg)
{
    struct rearm *r = arg;

    r->fires++;
    if (r->fd_calls == 0)
        ck_assert_ptr_nonnull(loop_timer_add(lp, 0, rearm_cb, r));
}

static void rearm_fd_cb(struct loop *lp, struct loop_watch *w, int fd, int revents,
                        void *arg)
{
    struct rearm *r = arg;

    r->fd_calls++;
    loop_stop(lp, 1);
}

static void *late_writer(void *arg)
{
    usleep(20000);
    ck_assert_int_eq(write(*(int *)arg, "x", 1), 1);
    return NULL;
}

START_TEST(zero_timer_does_not_starve)
{
    struct loop *lp = loop_create();
    struct rearm r = {0};
    pthread_t th;
    int p[2];

    /* The timer re-arms itself with delay 0 until the fd has been seen; if
     * new timers ran in the same pass, the fd would never be polled and
     * the test would hit its timeout. */
    ck_assert_int_eq(pipe(p), 0);
    ck_assert_ptr_nonnull(loop_timer_add(lp, 0, rearm_cb, &r));
    ck_assert_ptr_nonnull(loop_watch_add(lp, p[0], LOOP_READ, rearm_fd_cb, &r));
    ck_assert_int_eq(pthread_create(&th, NULL, late_writer, &p[1]), 0);
    ck_assert_int_eq(loop_run(lp), 1);
    pthread_join(th, NULL);
    ck_assert_int_eq(r.fd_calls, 1);
    ck_assert_int_ge(r.fires, 1);
    close(p[0]);
    close(p[1]);
    loop_destroy(lp);
}
END_TEST

START_TEST(bad_arguments)
{
    struct loop *lp = loop_create();

    errno = 0;
    ck_assert_ptr_null(loop_watch_add(lp, -1, LOOP_READ, rec_cb, NULL));
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_ptr_null(loop_timer_add(lp, 1, NULL, NULL));
    /* removing NULL / cancelling NULL are no-ops */
    loop_watch_remove(lp, NULL);
    loop_timer_cancel(lp, NULL);
    loop_destroy(lp);
    loop_destroy(NULL);
}
END_TEST

/* A fake server core: every REQ bytes of input are one request, answered with
 * a REPLY-byte reply whose first 8 bytes are its sequence number (PMI's worst
 * case: a 14-byte kvs-get answered with a 2 KiB value). */
#define REQ 14
#define REPLY 2048
struct fake_core {
    struct flow *f;
    int fd;
    size_t fed, partial;
    unsigned long seq;
    int verdict_at; /* non-zero: return 1 once this many requests came */
};

static int fake_feed(void *arg, const char *buf, size_t len)
{
    struct fake_core *fc = arg;
    char reply[REPLY];

    (void)buf;
    fc->fed += len;
    fc->partial += len;
    while (fc->partial >= REQ) {
        fc->partial -= REQ;
        memset(reply, 'r', sizeof(reply));
        memcpy(reply, &fc->seq, sizeof(fc->seq));
        fc->seq++;
        ck_assert_int_eq(flow_write(fc->f, fc->fd, reply, sizeof(reply)), 0);
        if (fc->verdict_at && fc->seq == (unsigned long)fc->verdict_at)
            return 1;
    }
    return 0;
}

START_TEST(flow_caps_a_client_that_never_reads)
{
    struct flow f = {0};
    struct fake_core fc = {.f = &f};
    int sv[2];
    size_t total = 0, got = 0;
    char in[65536], buf[REPLY];
    unsigned long want = 0;

    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    fc.fd = sv[0];
    memset(in, 'q', sizeof(in));
    /* the host reads while flow_reading(): 64 KiB at a time */
    while (flow_reading(&f) && total < 64 * sizeof(in)) {
        ck_assert_int_eq(flow_feed(&f, in, sizeof(in), fake_feed, &fc), 0);
        total += sizeof(in);
    }
    ck_assert(!flow_reading(&f));
    ck_assert_int_eq(flow_events(&f), LOOP_WRITE);
    ck_assert_uint_ge(flow_queued(&f), FLOW_HIGH);
    ck_assert_uint_le(flow_queued(&f) + (f.hlen - f.hoff), FLOW_MAX_BYTES);
    ck_assert_uint_eq(fc.fed + (f.hlen - f.hoff), total);
    /* more input while full cannot be held past FLOW_HOLD_MAX */
    int rc = 0;
    for (int i = 0; i < 8 && rc == 0; i++)
        rc = flow_feed(&f, in, sizeof(in), fake_feed, &fc);
    ck_assert_int_eq(rc, -ENOBUFS);
    ck_assert_uint_le(f.hlen - f.hoff, FLOW_HOLD_MAX);
    size_t held_total = fc.fed + (f.hlen - f.hoff);

    /* the client reads: every reply in order, the held input fed */
    for (int spins = 0; spins < 100000; spins++) {
        ssize_t n = read(sv[1], buf + got % REPLY, REPLY - got % REPLY);
        if (n > 0) {
            got += (size_t)n;
            if (got % REPLY == 0) {
                ck_assert_int_eq(memcmp(buf, &want, sizeof(want)), 0);
                want++;
            }
        }
        ck_assert_int_eq(flow_send(&f, sv[0]), 0);
        ck_assert_int_eq(flow_resume(&f, fake_feed, &fc), 0);
        if (flow_reading(&f) && !flow_queued(&f) && got == fc.seq * REPLY)
            break;
    }
    ck_assert_uint_eq(fc.fed, held_total);
    ck_assert_uint_eq(got, fc.seq * REPLY);
    ck_assert_int_eq(flow_events(&f), LOOP_READ);
    flow_free(&f);
    close(sv[0]);
    close(sv[1]);
}
END_TEST

START_TEST(flow_verdicts_and_broken_peers)
{
    struct flow f = {0};
    struct fake_core fc = {.f = &f, .verdict_at = 3};
    int sv[2];
    char in[10 * REQ];

    signal(SIGPIPE, SIG_DFL); /* a send must not raise it */
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    fc.fd = sv[0];
    memset(in, 'q', sizeof(in));
    /* the feeder's verdict stops feeding; the rest is dropped, not held */
    ck_assert_int_eq(flow_feed(&f, in, sizeof(in), fake_feed, &fc), 1);
    ck_assert_uint_eq(fc.seq, 3);
    ck_assert_uint_eq(f.hlen - f.hoff, 0);
    ck_assert(flow_reading(&f));
    /* a peer that is gone: -EPIPE, no signal, nothing queued */
    close(sv[1]);
    ck_assert_int_eq(flow_write(&f, sv[0], "x", 1), -EPIPE);
    ck_assert_int_eq(flow_queue(&f, "y", 1), 0);
    ck_assert_int_eq(flow_send(&f, sv[0]), -EPIPE);
    flow_free(&f);
    ck_assert_uint_eq(flow_queued(&f), 0);
    close(sv[0]);
}
END_TEST

static Suite *loop_suite(void)
{
    Suite *s = suite_create("loop");
    TCase *tc = tcase_create("core");

    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, timers_fire_in_order);
    tcase_add_test(tc, timer_cancel);
    tcase_add_test(tc, fd_readiness);
    tcase_add_test(tc, remove_inside_callback);
    tcase_add_test(tc, one_watcher_per_fd);
    tcase_add_test(tc, paused_watcher_ignores_hangup);
    tcase_add_test(tc, stop_from_other_thread);
    tcase_add_test(tc, stop_before_run);
    tcase_add_test(tc, prepare_bounds_sleep);
    tcase_add_test(tc, zero_timer_does_not_starve);
    tcase_add_test(tc, bad_arguments);
    tcase_add_test(tc, flow_caps_a_client_that_never_reads);
    tcase_add_test(tc, flow_verdicts_and_broken_peers);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(loop_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
