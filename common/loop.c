/* loop.c - a small poll()-based reactor (see loop.h for the contract).
 *
 * Design:
 *   Watchers live in an array of pointers; the pollfd array is rebuilt
 *   before every poll() (O(n) with n in the hundreds is far cheaper than the
 *   system call).  Removal only marks a watcher; marked watchers are freed
 *   when no dispatch is in progress, so a callback may remove any watcher.
 *   Timers form a list sorted by (deadline, sequence number); timers added by
 *   a callback during dispatch wait for the next iteration, so a timer that
 *   re-arms itself with delay 0 cannot starve fds.
 *
 * Notes:
 *   - The wake pipe makes loop_stop()/loop_wake() usable from signal
 *     handlers and other threads; its fds are O_CLOEXEC so children never
 *     inherit them.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "loop.h"

struct loop_watch {
    int fd;
    int events;
    bool removed;
    loop_fd_f cb;
    void *arg;
};

struct loop_timer {
    uint64_t deadline;
    uint64_t seq;
    loop_timer_f cb;
    void *arg;
    struct loop_timer *next;
};

struct loop {
    struct loop_watch **w;
    int nw, capw;
    struct pollfd *pfd; /* capw + 1 entries (the wake pipe is last) */
    struct loop_watch **snap; /* watchers polled in this iteration */
    int dispatching;
    bool garbage;

    struct loop_timer *timers;
    uint64_t timer_seq;

    loop_prepare_f prepare;
    void *prepare_arg;

    int wake[2];
    atomic_int stop_req;
    atomic_int stop_code;
};

uint64_t loop_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int make_pipe(int p[2])
{
#ifdef HAVE_PIPE2
    if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
        return -errno;
#else
    if (pipe(p) < 0)
        return -errno;
    for (int i = 0; i < 2; i++) {
        fcntl(p[i], F_SETFD, FD_CLOEXEC);
        fcntl(p[i], F_SETFL, fcntl(p[i], F_GETFL) | O_NONBLOCK);
    }
#endif
    return 0;
}

static int grow(struct loop *lp)
{
    int cap = lp->capw ? lp->capw * 2 : 16;
    struct loop_watch **w = realloc(lp->w, sizeof(*w) * (size_t)cap);

    if (!w)
        return -ENOMEM;
    lp->w = w;
    struct pollfd *p = realloc(lp->pfd, sizeof(*p) * (size_t)(cap + 1));
    if (!p)
        return -ENOMEM;
    lp->pfd = p;
    struct loop_watch **s = realloc(lp->snap, sizeof(*s) * (size_t)cap);
    if (!s)
        return -ENOMEM;
    lp->snap = s;
    lp->capw = cap;
    return 0;
}

struct loop *loop_create(void)
{
    struct loop *lp = calloc(1, sizeof(*lp));
    int rc;

    if (!lp)
        return NULL;
    rc = make_pipe(lp->wake);
    if (rc == 0 && grow(lp) < 0) {
        close(lp->wake[0]);
        close(lp->wake[1]);
        rc = -ENOMEM;
    }
    if (rc < 0) {
        free(lp->w);
        free(lp->pfd);
        free(lp->snap);
        free(lp);
        errno = -rc;
        return NULL;
    }
    atomic_init(&lp->stop_req, 0);
    atomic_init(&lp->stop_code, 0);
    return lp;
}

void loop_destroy(struct loop *lp)
{
    int saved = errno;

    if (!lp)
        return;
    for (int i = 0; i < lp->nw; i++)
        free(lp->w[i]);
    free(lp->w);
    free(lp->pfd);
    free(lp->snap);
    while (lp->timers) {
        struct loop_timer *t = lp->timers;
        lp->timers = t->next;
        free(t);
    }
    close(lp->wake[0]);
    close(lp->wake[1]);
    free(lp);
    errno = saved;
}

struct loop_watch *loop_watch_add(struct loop *lp, int fd, int events,
                                  loop_fd_f cb, void *arg)
{
    struct loop_watch *w;

    if (!lp || fd < 0 || !cb) {
        errno = EINVAL;
        return NULL;
    }
    if (lp->nw == lp->capw && grow(lp) < 0) {
        errno = ENOMEM;
        return NULL;
    }
    w = calloc(1, sizeof(*w));
    if (!w)
        return NULL;
    w->fd = fd;
    w->events = events & (LOOP_READ | LOOP_WRITE);
    w->cb = cb;
    w->arg = arg;
    lp->w[lp->nw++] = w;
    return w;
}

void loop_watch_set(struct loop_watch *w, int events)
{
    if (w)
        w->events = events & (LOOP_READ | LOOP_WRITE);
}

int loop_watch_events(const struct loop_watch *w)
{
    return w ? w->events : 0;
}

static void collect_garbage(struct loop *lp)
{
    int j = 0;

    for (int i = 0; i < lp->nw; i++) {
        if (lp->w[i]->removed)
            free(lp->w[i]);
        else
            lp->w[j++] = lp->w[i];
    }
    lp->nw = j;
    lp->garbage = false;
}

void loop_watch_remove(struct loop *lp, struct loop_watch *w)
{
    if (!lp || !w || w->removed)
        return;
    w->removed = true;
    w->cb = NULL;
    lp->garbage = true;
    if (!lp->dispatching)
        collect_garbage(lp);
}

struct loop_timer *loop_timer_add(struct loop *lp, uint64_t delay_ms,
                                  loop_timer_f cb, void *arg)
{
    struct loop_timer *t, **pp;

    if (!lp || !cb) {
        errno = EINVAL;
        return NULL;
    }
    t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->deadline = loop_now_ms() + delay_ms;
    t->seq = lp->timer_seq++;
    t->cb = cb;
    t->arg = arg;
    /* Keep the list sorted; equal deadlines stay in insertion order. */
    pp = &lp->timers;
    while (*pp && (*pp)->deadline <= t->deadline)
        pp = &(*pp)->next;
    t->next = *pp;
    *pp = t;
    return t;
}

void loop_timer_cancel(struct loop *lp, struct loop_timer *t)
{
    struct loop_timer **pp;

    if (!lp || !t)
        return;
    for (pp = &lp->timers; *pp; pp = &(*pp)->next) {
        if (*pp == t) {
            *pp = t->next;
            free(t);
            return;
        }
    }
}

void loop_set_prepare(struct loop *lp, loop_prepare_f cb, void *arg)
{
    lp->prepare = cb;
    lp->prepare_arg = arg;
}

void loop_wake(struct loop *lp)
{
    int saved = errno;
    char c = 0;

    /* A full pipe already guarantees a wake-up; ignore EAGAIN. */
    if (write(lp->wake[1], &c, 1) < 0) {
    }
    errno = saved;
}

void loop_stop(struct loop *lp, int code)
{
    atomic_store(&lp->stop_code, code);
    atomic_store(&lp->stop_req, 1);
    loop_wake(lp);
}

static int min_timeout(int a, int b)
{
    if (a < 0)
        return b;
    if (b < 0)
        return a;
    return a < b ? a : b;
}

static void run_timers(struct loop *lp)
{
    uint64_t now = loop_now_ms();
    uint64_t limit = lp->timer_seq;

    while (lp->timers && lp->timers->deadline <= now &&
           lp->timers->seq < limit) {
        struct loop_timer *t = lp->timers;
        lp->timers = t->next;
        loop_timer_f cb = t->cb;
        void *arg = t->arg;
        cb(lp, t, arg);
        free(t);
        if (atomic_load(&lp->stop_req))
            break;
    }
}

int loop_run_once(struct loop *lp, int max_ms)
{
    int timeout = max_ms;
    int n, rc;

    if (lp->garbage)
        collect_garbage(lp);
    if (lp->prepare)
        timeout = min_timeout(timeout, lp->prepare(lp, lp->prepare_arg));
    if (lp->timers) {
        uint64_t now = loop_now_ms();
        uint64_t d = lp->timers->deadline;
        int t = d <= now ? 0 : (d - now > 86400000u ? 86400000 : (int)(d - now));
        timeout = min_timeout(timeout, t);
    }
    if (atomic_load(&lp->stop_req))
        timeout = 0;

    n = lp->nw;
    for (int i = 0; i < n; i++) {
        struct loop_watch *w = lp->w[i];
        lp->snap[i] = w;
        lp->pfd[i].fd = w->events ? w->fd : -1;
        lp->pfd[i].events = (short)(((w->events & LOOP_READ) ? POLLIN : 0) |
                                    ((w->events & LOOP_WRITE) ? POLLOUT : 0));
        lp->pfd[i].revents = 0;
    }
    lp->pfd[n].fd = lp->wake[0];
    lp->pfd[n].events = POLLIN;
    lp->pfd[n].revents = 0;

    rc = poll(lp->pfd, (nfds_t)n + 1, timeout);
    if (rc < 0) {
        if (errno == EINTR)
            return 0;
        return -errno;
    }
    if (lp->pfd[n].revents) {
        char buf[64];
        while (read(lp->wake[0], buf, sizeof(buf)) > 0)
            ;
    }
    lp->dispatching++;
    for (int i = 0; i < n && rc > 0; i++) {
        struct loop_watch *w = lp->snap[i];
        short re = lp->pfd[i].revents;
        int ev = 0;

        if (!re)
            continue;
        if (w->removed || !w->cb)
            continue;
        if (re & POLLIN)
            ev |= LOOP_READ;
        if (re & POLLOUT)
            ev |= LOOP_WRITE;
        if (re & (POLLERR | POLLHUP | POLLNVAL))
            ev |= LOOP_ERROR;
        w->cb(lp, w, w->fd, ev, w->arg);
    }
    run_timers(lp);
    lp->dispatching--;
    if (lp->garbage && !lp->dispatching)
        collect_garbage(lp);
    return 0;
}

int loop_run(struct loop *lp)
{
    while (!atomic_load(&lp->stop_req)) {
        int rc = loop_run_once(lp, -1);
        if (rc < 0)
            return rc;
    }
    atomic_store(&lp->stop_req, 0);
    return atomic_load(&lp->stop_code);
}
