/* faults_preload.c - an LD_PRELOAD shim that injects faults into the process it is
 * loaded into: failing allocations, short and EAGAIN writes and reads, EMFILE from
 * accept, a redirected munge socket.  Driven by the environment; inert without it.
 *
 * Contract (environment; every count starts at 1 and is per process):
 *   LOOM_FAULT_PROC=name[,name]  only processes whose program name (argv[0]'s base
 *                                name) is listed count and fail; default: all.
 *   LOOM_FAULT_MALLOC=N[:C]      malloc/calloc/realloc/posix_memalign/aligned_alloc
 *                                calls N..N+C-1 return NULL with ENOMEM (C default 1;
 *                                C=0: every call from N on).
 *   LOOM_FAULT_WRITE=N[:C]       write/send/sendto/sendmsg/writev on a socket or pipe:
 *   LOOM_FAULT_WRITE_EVERY=K     those calls (or every K-th) misbehave as
 *   LOOM_FAULT_IO_MODE=short|eagain   short: move half the bytes (at least 1), which
 *                                is always legal; eagain: return -1/EAGAIN without
 *                                moving anything, only on O_NONBLOCK fds (where a
 *                                program must expect it).  Default short.
 *   LOOM_FAULT_READ=N[:C], LOOM_FAULT_READ_EVERY=K   the same for read/recv/recvfrom
 *                                (short = at most half of the buffer, at least 1).
 *   LOOM_FAULT_ACCEPT=N[:C], LOOM_FAULT_ACCEPT_EVERY=K   accept/accept4 return -1/EMFILE
 *                                without taking the connection (it stays pending, as
 *                                with a real fd shortage).
 *   LOOM_FAULT_MUNGE_SOCKET=PATH connect() to munged's default socket
 *                                (/run/munge/munge.socket.2, or any path ending in
 *                                "munge.socket.2") goes to PATH instead: a test's own
 *                                munged, which it may stop, while the machine's stays
 *                                untouched (libmunge has no variable for this).
 *   LOOM_FAULT_LOG=FILE          append one line per injected fault ("pid prog op call
 *                                number") and, at exit, the totals ("pid prog exit
 *                                malloc=N write=N read=N accept=N"), so a sweep knows
 *                                how far to go and whether its fault fired.
 *   LOOM_FAULT_BT=1              also write the call stack of each injected fault to
 *                                the log (raw addresses with their objects: feed them
 *                                to addr2line -e OBJECT), to find the code that failed.
 * Notes:
 *   - Allocation goes to glibc's __libc_malloc & co. (no dlsym, so no recursion);
 *     I/O goes straight to syscall(2), so the shim needs nothing at load time.
 *   - Counting is atomic (threads).  A forked child inherits the counters; an exec'd
 *     program starts again at 0.
 *   - The shim never writes to the process's own fds: its log is a file of its own,
 *     opened O_APPEND|O_CLOEXEC for each line.
 *   - Not for ASan builds (ASan must be the first library loaded): the tests skip there.
 */
#define _GNU_SOURCE 1 /* accept4, program_invocation_short_name */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <execinfo.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern char *program_invocation_short_name;

struct fault {
    const char *name;
    long first, count, every; /* first: 0 = off */
    long calls;               /* atomic */
};

enum { F_MALLOC, F_WRITE, F_READ, F_ACCEPT, F_N };
static struct fault faults[F_N] = {
    {"malloc", 0, 0, 0, 0}, {"write", 0, 0, 0, 0}, {"read", 0, 0, 0, 0}, {"accept", 0, 0, 0, 0}};
static bool active, eagain_mode, want_bt;
static char logpath[512], munge_sock[108];

static void logline(const char *fmt, ...)
{
    char b[256];
    va_list ap;

    if (!logpath[0])
        return;
    va_start(ap, fmt);
    int n = vsnprintf(b, sizeof(b), fmt, ap);
    va_end(ap);
    if (n <= 0)
        return;
    if (n >= (int)sizeof(b))
        n = sizeof(b) - 1;
    int fd = (int)syscall(SYS_open, logpath, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) {
        syscall(SYS_write, fd, b, (size_t)n);
        syscall(SYS_close, fd);
    }
}

static void parse(struct fault *f, const char *var, const char *every)
{
    const char *s = getenv(var);
    char *end;

    if (s && *s) {
        f->first = strtol(s, &end, 10);
        f->count = 1;
        if (*end == ':')
            f->count = strtol(end + 1, NULL, 10);
    }
    s = every ? getenv(every) : NULL;
    if (s && *s)
        f->every = strtol(s, NULL, 10);
}

static bool listed(const char *list, const char *name)
{
    size_t n = strlen(name);

    for (const char *p = list; *p;) {
        const char *c = strchr(p, ',');
        size_t l = c ? (size_t)(c - p) : strlen(p);
        if (l == n && memcmp(p, name, n) == 0)
            return true;
        if (!c)
            break;
        p = c + 1;
    }
    return false;
}

__attribute__((constructor)) static void faults_init(void)
{
    const char *proc = getenv("LOOM_FAULT_PROC");
    const char *s;

    const char *me = program_invocation_short_name;
    if (strncmp(me, "lt-", 3) == 0) /* a libtool wrapper's real program */
        me += 3;
    if (proc && *proc && !listed(proc, me))
        return;
    parse(&faults[F_MALLOC], "LOOM_FAULT_MALLOC", NULL);
    parse(&faults[F_WRITE], "LOOM_FAULT_WRITE", "LOOM_FAULT_WRITE_EVERY");
    parse(&faults[F_READ], "LOOM_FAULT_READ", "LOOM_FAULT_READ_EVERY");
    parse(&faults[F_ACCEPT], "LOOM_FAULT_ACCEPT", "LOOM_FAULT_ACCEPT_EVERY");
    s = getenv("LOOM_FAULT_IO_MODE");
    eagain_mode = s && strcmp(s, "eagain") == 0;
    s = getenv("LOOM_FAULT_LOG");
    if (s && strlen(s) < sizeof(logpath))
        strcpy(logpath, s);
    s = getenv("LOOM_FAULT_BT");
    if (s && *s && strcmp(s, "0") != 0) {
        void *warm[2];
        want_bt = true;
        backtrace(warm, 2); /* loads libgcc_s now, not inside a failing malloc */
    }
    s = getenv("LOOM_FAULT_MUNGE_SOCKET");
    if (s && strlen(s) < sizeof(munge_sock))
        strcpy(munge_sock, s);
    active = true;
}

__attribute__((destructor)) static void faults_fini(void)
{
    if (active)
        logline("%ld %s exit malloc=%ld write=%ld read=%ld accept=%ld\n", (long)getpid(),
                program_invocation_short_name, faults[F_MALLOC].calls, faults[F_WRITE].calls,
                faults[F_READ].calls, faults[F_ACCEPT].calls);
}

/* Count one call of f; true if this one must fail. */
static bool hit(struct fault *f)
{
    if (!active)
        return false;
    long k = __atomic_add_fetch(&f->calls, 1, __ATOMIC_RELAXED);
    bool fail = false;
    if (f->first > 0 && k >= f->first && (f->count == 0 || k < f->first + f->count))
        fail = true;
    if (f->every > 0 && k % f->every == 0)
        fail = true;
    if (fail) {
        logline("%ld %s %s %ld\n", (long)getpid(), program_invocation_short_name, f->name, k);
        if (want_bt && logpath[0]) {
            void *pc[32];
            int n = backtrace(pc, 32);
            int fd = (int)syscall(SYS_open, logpath, O_WRONLY | O_APPEND | O_CLOEXEC);
            if (fd >= 0) {
                backtrace_symbols_fd(pc, n, fd);
                syscall(SYS_close, fd);
            }
        }
    }
    return fail;
}

/* ---- allocation ---------------------------------------------------------------- */

void *malloc(size_t n)
{
    if (hit(&faults[F_MALLOC])) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_malloc(n);
}

void *calloc(size_t a, size_t b)
{
    if (hit(&faults[F_MALLOC])) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_calloc(a, b);
}

void *realloc(void *p, size_t n)
{
    if (n > 0 && hit(&faults[F_MALLOC])) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_realloc(p, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
    if (align < sizeof(void *) || (align & (align - 1)))
        return EINVAL;
    if (hit(&faults[F_MALLOC]))
        return ENOMEM;
    void *p = __libc_memalign(align, n);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

void *aligned_alloc(size_t align, size_t n)
{
    if (hit(&faults[F_MALLOC])) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_memalign(align, n);
}

/* ---- I/O ------------------------------------------------------------------------ */

/* A fault applies to sockets and pipes only (not files, not terminals). */
static bool streamlike(int fd, bool *nonblock, bool *fifo)
{
    struct stat st;

    if (syscall(SYS_fstat, fd, &st) != 0 || !(S_ISSOCK(st.st_mode) || S_ISFIFO(st.st_mode)))
        return false;
    *fifo = S_ISFIFO(st.st_mode);
    long fl = syscall(SYS_fcntl, fd, F_GETFL);
    *nonblock = fl >= 0 && (fl & O_NONBLOCK);
    return true;
}

/* How many of n bytes the call may move: n, a short count, or -1 (EAGAIN). */
static long io_budget(struct fault *f, int fd, size_t n)
{
    bool nb = false, fifo = false;

    if (!active || n == 0 || (f->first == 0 && f->every == 0) ||
        !streamlike(fd, &nb, &fifo))
        return (long)n;
    /* a write of at most PIPE_BUF bytes to a pipe is atomic (POSIX): all or nothing,
     * and EAGAIN only when the pipe is full - a self-pipe's wake-up byte would then be
     * redundant, so failing one on an empty pipe is no behaviour of a real kernel */
    if (fifo && f == &faults[F_WRITE] && n <= PIPE_BUF)
        return (long)n;
    if (eagain_mode && !nb)
        return (long)n; /* EAGAIN only where a program must expect it */
    if (!hit(f))
        return (long)n;
    if (eagain_mode)
        return -1;
    return n > 1 ? (long)(n / 2) : 1;
}

ssize_t write(int fd, const void *buf, size_t n)
{
    long b = io_budget(&faults[F_WRITE], fd, n);
    if (b < 0) {
        errno = EAGAIN;
        return -1;
    }
    return syscall(SYS_write, fd, buf, (size_t)b);
}

ssize_t send(int fd, const void *buf, size_t n, int flags)
{
    long b = io_budget(&faults[F_WRITE], fd, n);
    if (b < 0) {
        errno = EAGAIN;
        return -1;
    }
    return syscall(SYS_sendto, fd, buf, (size_t)b, flags, NULL, 0);
}

ssize_t sendto(int fd, const void *buf, size_t n, int flags, const struct sockaddr *a,
               socklen_t al)
{
    long b = io_budget(&faults[F_WRITE], fd, n);
    if (b < 0) {
        errno = EAGAIN;
        return -1;
    }
    return syscall(SYS_sendto, fd, buf, (size_t)b, flags, a, al);
}

/* writev/sendmsg: cut the vector to the budget */
static ssize_t vec_io(long nr, int fd, const struct iovec *iov, int cnt, int flags,
                      const struct msghdr *mh)
{
    size_t tot = 0;
    for (int i = 0; i < cnt; i++)
        tot += iov[i].iov_len;
    long b = io_budget(&faults[F_WRITE], fd, tot);
    if (b < 0) {
        errno = EAGAIN;
        return -1;
    }
    if ((size_t)b == tot || cnt > 64)
        return mh ? syscall(SYS_sendmsg, fd, mh, flags) : syscall(nr, fd, iov, cnt);
    struct iovec v[64];
    int k = 0;
    size_t left = (size_t)b;
    for (int i = 0; i < cnt && left > 0; i++) {
        v[k] = iov[i];
        if (v[k].iov_len > left)
            v[k].iov_len = left;
        left -= v[k].iov_len;
        k++;
    }
    if (mh) {
        struct msghdr m = *mh;
        m.msg_iov = v;
        m.msg_iovlen = (size_t)k;
        return syscall(SYS_sendmsg, fd, &m, flags);
    }
    return syscall(nr, fd, v, k);
}

ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
    return vec_io(SYS_writev, fd, iov, cnt, 0, NULL);
}

ssize_t sendmsg(int fd, const struct msghdr *mh, int flags)
{
    if (mh->msg_controllen > 0) /* fd passing: leave alone */
        return syscall(SYS_sendmsg, fd, mh, flags);
    return vec_io(SYS_sendmsg, fd, mh->msg_iov, (int)mh->msg_iovlen, flags, mh);
}

ssize_t read(int fd, void *buf, size_t n)
{
    long b = io_budget(&faults[F_READ], fd, n);
    if (b < 0) {
        errno = EAGAIN;
        return -1;
    }
    return syscall(SYS_read, fd, buf, (size_t)b);
}

ssize_t recv(int fd, void *buf, size_t n, int flags)
{
    long b = io_budget(&faults[F_READ], fd, n);
    if (b < 0) {
        errno = EAGAIN;
        return -1;
    }
    return syscall(SYS_recvfrom, fd, buf, (size_t)b, flags, NULL, NULL);
}

ssize_t recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *a, socklen_t *al)
{
    long b = io_budget(&faults[F_READ], fd, n);
    if (b < 0) {
        errno = EAGAIN;
        return -1;
    }
    return syscall(SYS_recvfrom, fd, buf, (size_t)b, flags, a, al);
}

/* ---- accept, connect -------------------------------------------------------------- */

int accept4(int fd, struct sockaddr *a, socklen_t *al, int flags)
{
    if (hit(&faults[F_ACCEPT])) {
        errno = EMFILE;
        return -1;
    }
    return (int)syscall(SYS_accept4, fd, a, al, flags);
}

int accept(int fd, struct sockaddr *a, socklen_t *al)
{
    return accept4(fd, a, al, 0);
}

int connect(int fd, const struct sockaddr *a, socklen_t al)
{
    if (active && munge_sock[0] && a && a->sa_family == AF_UNIX) {
        const struct sockaddr_un *u = (const struct sockaddr_un *)a;
        size_t pl = strnlen(u->sun_path, sizeof(u->sun_path));
        static const char tail[] = "munge.socket.2";
        if (pl >= sizeof(tail) - 1 && memcmp(u->sun_path + pl - (sizeof(tail) - 1), tail,
                                             sizeof(tail) - 1) == 0) {
            struct sockaddr_un r = {.sun_family = AF_UNIX};
            memcpy(r.sun_path, munge_sock, strlen(munge_sock));
            return (int)syscall(SYS_connect, fd, &r, (socklen_t)sizeof(r));
        }
    }
    return (int)syscall(SYS_connect, fd, a, al);
}
