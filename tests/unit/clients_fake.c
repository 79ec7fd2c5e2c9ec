/* clients_fake.c - a scripted fake PMI server for the client library tests.
 *
 * Contract: see clients_fake.h.  Test code only: allocation failures abort.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "clients_fake.h"

enum act_kind { ACT_EXPECT, ACT_SEND, ACT_PAUSE, ACT_HANGUP, ACT_NOTIFY };

struct act {
    enum act_kind kind;
    char *bytes;
    size_t len;
    int ms;
};

struct fake {
    int fd;  /* server end, or -1 */
    int lfd; /* listening socket (PMI_PORT mode), or -1 */
    struct act *acts;
    int n, cap;
    pthread_t th;
    int bad;
    char why[2048];
};

static void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (!p)
        abort();
    return p;
}

static struct fake *alloc_fake(void)
{
    struct fake *f = calloc(1, sizeof(*f));
    if (!f)
        abort();
    f->fd = f->lfd = -1;
    unsetenv("PMI_FD");
    unsetenv("PMI_PORT");
    unsetenv("PMI_ID");
    return f;
}

struct fake *fake_new(void)
{
    struct fake *f = alloc_fake();
    int sv[2];
    char num[16];

    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
        abort();
    f->fd = sv[1];
    snprintf(num, sizeof(num), "%d", sv[0]);
    setenv("PMI_FD", num, 1);
    return f;
}

struct fake *fake_listen(void)
{
    struct fake *f = alloc_fake();
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t al = sizeof(a);
    char hp[64];

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    f->lfd = socket(AF_INET, SOCK_STREAM, 0);
    if (f->lfd < 0 || bind(f->lfd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
        listen(f->lfd, 1) < 0 || getsockname(f->lfd, (struct sockaddr *)&a, &al) < 0)
        abort();
    snprintf(hp, sizeof(hp), "127.0.0.1:%d", ntohs(a.sin_port));
    setenv("PMI_PORT", hp, 1);
    return f;
}

static void add(struct fake *f, enum act_kind k, const char *b, size_t len, int ms)
{
    if (f->n == f->cap) {
        f->cap = f->cap ? f->cap * 2 : 16;
        f->acts = realloc(f->acts, sizeof(*f->acts) * (size_t)f->cap);
        if (!f->acts)
            abort();
    }
    struct act *a = &f->acts[f->n++];
    a->kind = k;
    a->len = len;
    a->ms = ms;
    a->bytes = NULL;
    if (b) {
        a->bytes = xmalloc(len + 1);
        memcpy(a->bytes, b, len);
        a->bytes[len] = '\0';
    }
}

static char *frame(const char *body)
{
    size_t n = strlen(body);
    char *s = xmalloc(n + 8);
    snprintf(s, n + 8, "%-6zu%s", n, body);
    return s;
}

void fake_expect(struct fake *f, const char *bytes)
{
    add(f, ACT_EXPECT, bytes, strlen(bytes), 0);
}

void fake_expect_rec(struct fake *f, const char *body)
{
    char *s = frame(body);
    add(f, ACT_EXPECT, s, strlen(s), 0);
    free(s);
}

void fake_send(struct fake *f, const char *bytes)
{
    add(f, ACT_SEND, bytes, strlen(bytes), 0);
}

void fake_send_rec(struct fake *f, const char *body)
{
    char *s = frame(body);
    add(f, ACT_SEND, s, strlen(s), 0);
    free(s);
}

void fake_pause_ms(struct fake *f, int ms)
{
    add(f, ACT_PAUSE, NULL, 0, ms);
}

void fake_hangup(struct fake *f)
{
    add(f, ACT_HANGUP, NULL, 0, 0);
}

void fake_notify(struct fake *f, int fd)
{
    add(f, ACT_NOTIFY, NULL, 0, fd);
}

/* Read exactly len bytes within FAKE_WAIT_MS per chunk; returns bytes got. */
static size_t read_exact(int fd, char *buf, size_t len)
{
    size_t got = 0;

    while (got < len) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, FAKE_WAIT_MS);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        ssize_t n = read(fd, buf + got, len - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    return got;
}

static void *run(void *arg)
{
    struct fake *f = arg;

    if (f->lfd >= 0) {
        struct pollfd p = {.fd = f->lfd, .events = POLLIN};
        if (poll(&p, 1, FAKE_WAIT_MS) != 1 || (f->fd = accept(f->lfd, NULL, NULL)) < 0) {
            f->bad = 1;
            snprintf(f->why, sizeof(f->why), "no connection on PMI_PORT");
            return NULL;
        }
    }
    for (int i = 0; i < f->n && !f->bad; i++) {
        struct act *a = &f->acts[i];
        switch (a->kind) {
        case ACT_EXPECT: {
            char *buf = xmalloc(a->len + 1);
            size_t got = read_exact(f->fd, buf, a->len);
            if (got != a->len || memcmp(buf, a->bytes, a->len) != 0) {
                f->bad = i + 1;
                snprintf(f->why, sizeof(f->why), "expected '%s', got '%.*s'%s", a->bytes,
                         (int)got, buf, got < a->len ? " (short)" : "");
            }
            free(buf);
            break;
        }
        case ACT_SEND: {
            size_t off = 0;
            while (off < a->len) {
                ssize_t n = send(f->fd, a->bytes + off, a->len - off, MSG_NOSIGNAL);
                if (n < 0 && errno == EINTR)
                    continue;
                if (n <= 0) {
                    f->bad = i + 1;
                    snprintf(f->why, sizeof(f->why), "send failed: %s", strerror(errno));
                    break;
                }
                off += (size_t)n;
            }
            break;
        }
        case ACT_PAUSE: {
            struct timespec ts = {a->ms / 1000, (a->ms % 1000) * 1000000L};
            nanosleep(&ts, NULL);
            break;
        }
        case ACT_HANGUP:
            close(f->fd);
            f->fd = -1;
            break;
        case ACT_NOTIFY:
            if (write(a->ms, "!", 1) != 1) {
                f->bad = i + 1;
                snprintf(f->why, sizeof(f->why), "notify failed: %s", strerror(errno));
            }
            break;
        }
    }
    if (f->bad && f->fd >= 0) { /* let the client see EOF instead of waiting */
        close(f->fd);
        f->fd = -1;
    }
    return NULL;
}

void fake_start(struct fake *f)
{
    if (pthread_create(&f->th, NULL, run, f) != 0)
        abort();
}

int fake_join(struct fake *f, const char **why)
{
    pthread_join(f->th, NULL);
    if (why)
        *why = f->why;
    return f->bad;
}

void fake_free(struct fake *f)
{
    if (f->fd >= 0)
        close(f->fd);
    if (f->lfd >= 0)
        close(f->lfd);
    for (int i = 0; i < f->n; i++)
        free(f->acts[i].bytes);
    free(f->acts);
    free(f);
}

void fake_pmi2_init(struct fake *f, int rank, int size)
{
    char b[256], r[16];

    snprintf(r, sizeof(r), "%d", rank);
    setenv("PMI_RANK", r, 1);
    unsetenv("PMI_JOBID");
    fake_expect(f, "cmd=init pmi_version=2 pmi_subversion=0\n");
    fake_send(f, "cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\n");
    snprintf(b, sizeof(b), "cmd=fullinit;pmirank=%d;threaded=FALSE;", rank);
    fake_expect_rec(f, b);
    snprintf(b, sizeof(b),
             "cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=%d;size=%d;"
             "appnum=0;debugged=FALSE;pmiverbose=FALSE;",
             rank, size);
    fake_send_rec(f, b);
}

void fake_pmi1_init(struct fake *f)
{
    fake_expect(f, "cmd=init pmi_version=1 pmi_subversion=1\n");
    fake_send(f, "cmd=response_to_init rc=0 pmi_version=1 pmi_subversion=1\n");
    fake_expect(f, "cmd=get_maxes\n");
    fake_send(f, "cmd=maxes rc=0 kvsname_max=256 keylen_max=64 vallen_max=1024\n");
}
