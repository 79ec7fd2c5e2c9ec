/* loop.h - a small reactor (level-triggered epoll): fd watchers, one-shot
 * timers, stop.
 *
 * Contract:
 *   A struct loop owns no fds of its users.  Watchers say which fd and
 *   which interest (LOOP_READ, LOOP_WRITE, both or none); their callback gets
 *   the readiness that poll() reported (LOOP_READ for POLLIN, LOOP_WRITE for
 *   POLLOUT, LOOP_ERROR for POLLERR/POLLHUP/POLLNVAL - callers then read to
 *   see EOF or the error).  Timers are one-shot, in milliseconds on the
 *   monotonic clock; timers due at the same time fire in the order they were
 *   added.  A prepare hook, if set, runs before every poll() and may shorten
 *   its timeout (a host feeds psrv_tick() through it).
 *
 *   loop_run() runs until loop_stop() and returns the code given to it.
 *   loop_run_once() polls once and dispatches what is ready.
 *
 * Notes:
 *   - No globals and no signal handling inside: several loops may run in
 *     several threads (slurmstepd runs one in the plugin's thread).  Only
 *     loop_stop() and loop_wake() may be called from another thread or from a
 *     signal handler; everything else belongs to the loop's thread.
 *   - Watchers and timers may be added, changed and removed from inside any
 *     callback, including their own; a removed watcher is never called again,
 *     even later in the same iteration.
 *   - The loop never spins: with nothing ready and no timer due it sleeps in
 *     epoll_wait() until an fd is ready, a timer is due, or loop_wake() is called.
 */
#ifndef LOOM_LOOP_H
#define LOOM_LOOP_H

#include <stdint.h>

struct loop;
struct loop_watch;
struct loop_timer;

enum {
    LOOP_READ = 1,
    LOOP_WRITE = 2,
    LOOP_ERROR = 4, /* only in revents */
};

typedef void (*loop_fd_f)(struct loop *lp, struct loop_watch *w, int fd, int revents,
                          void *arg);
typedef void (*loop_timer_f)(struct loop *lp, struct loop_timer *t, void *arg);
/* Returns the longest the next poll() may sleep in ms, or -1 for no limit. */
typedef int (*loop_prepare_f)(struct loop *lp, void *arg);

/* Returns NULL and sets errno on failure. */
struct loop *loop_create(void);
/* Frees the loop, its watchers and timers (not the fds). */
void loop_destroy(struct loop *lp);

/* Returns NULL and sets errno (ENOMEM, EINVAL for a negative fd, EEXIST
 * if fd already has a watcher). */
struct loop_watch *loop_watch_add(struct loop *lp, int fd, int events, loop_fd_f cb,
                                  void *arg);
/* Change the interest set (LOOP_READ|LOOP_WRITE, or 0 to pause). */
void loop_watch_set(struct loop_watch *w, int events);
int loop_watch_events(const struct loop_watch *w);
void loop_watch_remove(struct loop *lp, struct loop_watch *w);

/* One-shot timer firing delay_ms from now.  NULL + errno on failure. */
struct loop_timer *loop_timer_add(struct loop *lp, uint64_t delay_ms, loop_timer_f cb,
                                  void *arg);
/* Cancel a pending timer (it must not have fired yet). */
void loop_timer_cancel(struct loop *lp, struct loop_timer *t);

void loop_set_prepare(struct loop *lp, loop_prepare_f cb, void *arg);

/* Poll once, sleeping at most max_ms (-1: until something happens), and
 * dispatch ready watchers and due timers.  Returns 0 or -errno. */
int loop_run_once(struct loop *lp, int max_ms);
/* Run until loop_stop().  Returns the stop code, or -errno if poll fails. */
int loop_run(struct loop *lp);
/* Make loop_run() return code after the current iteration.  Thread and
 * async-signal safe. */
void loop_stop(struct loop *lp, int code);
/* Interrupt a sleeping poll().  Thread and async-signal safe. */
void loop_wake(struct loop *lp);

/* Monotonic time in ms (fresh, not cached). */
uint64_t loop_now_ms(void);

#endif /* LOOM_LOOP_H */
