/* loop.c - a small reactor over epoll (see loop.h for the contract).
 *
 * Design:
 *   Level-triggered epoll, so the semantics are poll()'s, but the cost of
 *   an iteration is O(ready fds) rather than O(watched fds): the launcher
 *   watches three fds per rank and, at 256 ranks each waiting for one PMI
 *   reply at a time, rebuilding and scanning a pollfd array per request
 *   dominated its CPU time.  A watcher with no interest is taken out of the
 *   epoll set (epoll would still report hang-ups for it).  Watchers live in
 *   an array of pointers (for destroy); removal marks a watcher and takes it
 *   out of the epoll set at once; marked watchers are freed when no
 *   dispatch is in progress, so a callback may remove any watcher, and a
 *   removed watcher still listed in this iteration's events is skipped.
 *   Timers form a list sorted by (deadline, sequence number); timers added by
 *   a callback during dispatch wait for the next iteration, so a timer that
 *   re-arms itself with delay 0 cannot starve fds.
 *
 * Notes:
 *   - One watcher per fd (epoll's rule): a second one fails with EEXIST.
 *     Remove a watcher before closing its fd.
 *   - The wake pipe makes loop_stop()/loop_wake() usable from signal
 *     handlers and other threads; its fds are O_CLOEXEC so children never
 *     inherit them.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "loop.h"

struct loop_watch {
    struct loop *lp;
    int fd;
    int events;
    bool registered; /* in the epoll set */
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
    int epfd;
    struct epoll_event ev[256];
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
    lp->capw = cap;
    return 0;
}

struct loop *loop_create(void)
{
    struct loop *lp = calloc(1, sizeof(*lp));
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
    int e;

    if (!lp)
        return NULL;
    lp->wake[0] = lp->wake[1] = -1;
    lp->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (lp->epfd < 0)
        goto fail;
    e = make_pipe(lp->wake);
    if (e < 0) {
        errno = -e;
        goto fail;
    }
    if (epoll_ctl(lp->epfd, EPOLL_CTL_ADD, lp->wake[0], &ev) < 0)
        goto fail;
    atomic_init(&lp->stop_req, 0);
    atomic_init(&lp->stop_code, 0);
    return lp;
fail:
    e = errno;
    if (lp->epfd >= 0)
        close(lp->epfd);
    if (lp->wake[0] >= 0) {
        close(lp->wake[0]);
        close(lp->wake[1]);
    }
    free(lp);
    errno = e;
    return NULL;
}

void loop_destroy(struct loop *lp)
{
    int saved = errno;

    if (!lp)
        return;
    for (int i = 0; i < lp->nw; i++)
        free(lp->w[i]);
    free(lp->w);
    while (lp->timers) {
        struct loop_timer *t = lp->timers;
        lp->timers = t->next;
        free(t);
    }
    close(lp->epfd);
    close(lp->wake[0]);
    close(lp->wake[1]);
    free(lp);
    errno = saved;
}

static uint32_t ep_events(int events)
{
    return ((events & LOOP_READ) ? EPOLLIN : 0u) |
           ((events & LOOP_WRITE) ? EPOLLOUT : 0u);
}

/* Bring the epoll registration in line with w->events. */
static int sync_watch(struct loop_watch *w)
{
    struct epoll_event ev = {.events = ep_events(w->events), .data.ptr = w};

    if (w->events && !w->removed) {
        if (epoll_ctl(w->lp->epfd, w->registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, w->fd,
                      &ev) < 0)
            return -errno;
        w->registered = true;
    } else if (w->registered) {
        /* EBADF/ENOENT: the fd was closed first; nothing left to undo. */
        epoll_ctl(w->lp->epfd, EPOLL_CTL_DEL, w->fd, &ev);
        w->registered = false;
    }
    return 0;
}

struct loop_watch *loop_watch_add(struct loop *lp, int fd, int events, loop_fd_f cb,
                                  void *arg)
{
    struct loop_watch *w;
    int rc;

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
    w->lp = lp;
    w->fd = fd;
    w->events = events & (LOOP_READ | LOOP_WRITE);
    w->cb = cb;
    w->arg = arg;
    rc = sync_watch(w);
    if (rc < 0) {
        free(w);
        errno = -rc;
        return NULL;
    }
    lp->w[lp->nw++] = w;
    return w;
}

void loop_watch_set(struct loop_watch *w, int events)
{
    events &= LOOP_READ | LOOP_WRITE;
    if (!w || w->removed || w->events == events)
        return;
    w->events = events;
    /* MOD/ADD of a registered, open fd only fails for lack of memory;
     * the watcher then stays as it was. */
    (void)sync_watch(w);
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
    sync_watch(w);
    lp->garbage = true;
    if (!lp->dispatching)
        collect_garbage(lp);
}

struct loop_timer *loop_timer_add(struct loop *lp, uint64_t delay_ms, loop_timer_f cb,
                                  void *arg)
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

    while (lp->timers && lp->timers->deadline <= now && lp->timers->seq < limit) {
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
    int n;

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

    n = epoll_wait(lp->epfd, lp->ev, (int)(sizeof(lp->ev) / sizeof(lp->ev[0])), timeout);
    if (n < 0) {
        if (errno == EINTR)
            return 0;
        return -errno;
    }
    lp->dispatching++;
    for (int i = 0; i < n; i++) {
        struct loop_watch *w = lp->ev[i].data.ptr;
        uint32_t re = lp->ev[i].events;
        int ev = 0;

        if (!w) {
            char buf[64];
            while (read(lp->wake[0], buf, sizeof(buf)) > 0)
                ;
            continue;
        }
        /* Removed or paused by an earlier callback of this iteration. */
        if (w->removed || !w->cb || !w->events)
            continue;
        if (re & EPOLLIN)
            ev |= LOOP_READ;
        if (re & EPOLLOUT)
            ev |= LOOP_WRITE;
        if (re & (EPOLLERR | EPOLLHUP))
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
