/* tn_test.h - helpers shared by the treenet unit tests: a thread-safe log
 * capture, munge availability, raw client sockets for hostile peers.
 * Header-only (static functions): each test program includes it once.
 */
#ifndef LOOM_TN_TEST_H
#define LOOM_TN_TEST_H

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

#ifdef HAVE_MUNGE
#include <munge.h>
#endif

#include "mac.h"

/* ---- TREENET_AUTH_COOKIE -------------------------------------------------- */

/* the job cookie of the TREENET_AUTH_COOKIE cases, and one of another job */
#define COOKIE "5f1e0c9a7b3d2e4f6a8b0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f60718293a4b5"
#define COOKIE2 "5f1e0c9a7b3d2e4f6a8b0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f60718293a4b6"

/* A cookie-mode credential written here from the documented format (not
 * with auth.c's code): payload, blank, hex HMAC(key, domain || payload). */
static inline char *cookie_cred(const char *key, const char *payload, const char *tagged)
{
    static const char dom[] = "loom2 treenet cookie\n";
    char msg[1024], *c = malloc(strlen(payload) + 2 + 2 * LOOM_MAC_LEN);
    unsigned char tag[LOOM_MAC_LEN];

    snprintf(msg, sizeof(msg), "%s%s", dom, tagged ? tagged : payload);
    loom_hmac_sha256(key, strlen(key), msg, strlen(msg), tag);
    sprintf(c, "%s ", payload);
    loom_hex(tag, sizeof(tag), c + strlen(c));
    return c;
}

/* ---- log capture ---------------------------------------------------------- */

#define CAP_LINES 256

struct logcap {
    pthread_mutex_t mu;
    char *lines[CAP_LINES];
    int n;
    int verbose;
};

static inline void cap_init(struct logcap *c)
{
    memset(c, 0, sizeof(*c));
    pthread_mutex_init(&c->mu, NULL);
    c->verbose = getenv("TN_TEST_VERBOSE") != NULL;
}

static inline void cap_log(void *arg, int level, const char *msg)
{
    struct logcap *c = arg;
    pthread_mutex_lock(&c->mu);
    if (c->verbose)
        fprintf(stderr, "[%d] %s\n", level, msg);
    if (c->n < CAP_LINES)
        c->lines[c->n++] = strdup(msg);
    pthread_mutex_unlock(&c->mu);
}

/* Lines containing sub. */
static inline int cap_count(struct logcap *c, const char *sub)
{
    int k = 0;
    pthread_mutex_lock(&c->mu);
    for (int i = 0; i < c->n; i++)
        if (c->lines[i] && strstr(c->lines[i], sub))
            k++;
    pthread_mutex_unlock(&c->mu);
    return k;
}

static inline void cap_free(struct logcap *c)
{
    for (int i = 0; i < c->n; i++)
        free(c->lines[i]);
    c->n = 0;
}

/* Wait (bounded, ~10 s) until at least k lines contain sub. */
static inline int cap_wait(struct logcap *c, const char *sub, int k)
{
    for (int i = 0; i < 1000; i++) {
        if (cap_count(c, sub) >= k)
            return 1;
        usleep(10000);
    }
    return 0;
}

/* ---- munge ---------------------------------------------------------------- */

/* 1 if munged answers an encode/decode round trip; else 0 and a reason. */
static inline int munge_usable(char *why, size_t len)
{
#ifdef HAVE_MUNGE
    char *cred = NULL;
    void *p = NULL;
    int plen = 0;
    munge_err_t e = munge_encode(&cred, NULL, "x", 1);
    if (e != EMUNGE_SUCCESS) {
        snprintf(why, len, "munge_encode: %s", munge_strerror(e));
        free(cred);
        return 0;
    }
    e = munge_decode(cred, NULL, &p, &plen, NULL, NULL);
    free(cred);
    free(p);
    if (e != EMUNGE_SUCCESS) {
        snprintf(why, len, "munge_decode: %s", munge_strerror(e));
        return 0;
    }
    return 1;
#else
    snprintf(why, len, "built without libmunge");
    return 0;
#endif
}

/* ---- raw peers -------------------------------------------------------------- */

static inline int raw_connect(int port)
{
    struct sockaddr_in a;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static inline uint32_t tn_test_u32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline int raw_send(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n <= 0)
            return -1;
        p += n;
        len -= n;
    }
    return 0;
}

static inline int raw_frame(int fd, const void *buf, size_t len)
{
    unsigned char h[4] = {len >> 24, len >> 16, len >> 8, len};
    return raw_send(fd, h, 4) || raw_send(fd, buf, len) ? -1 : 0;
}

/* 1 if the other side closes fd within ms (EOF or reset), reading and
 * dropping whatever it sends meanwhile. */
static inline int raw_closed_within(int fd, int ms)
{
    char b[4096];
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        long el;
        clock_gettime(CLOCK_MONOTONIC, &t);
        el = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
        if (el >= ms)
            return 0;
        if (poll(&p, 1, ms - el) <= 0)
            continue;
        ssize_t n = recv(fd, b, sizeof(b), 0);
        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
            return 1;
    }
}

/* Read exactly len bytes within 5 s each; len, or -1. */
static inline ssize_t raw_recv_exact(int fd, void *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 5000) <= 0)
            return -1;
        ssize_t n = recv(fd, (char *)buf + got, len - got, 0);
        if (n <= 0)
            return -1;
        got += n;
    }
    return (ssize_t)got;
}

/* A fixed nonce for the raw peers' side of a handshake. */
#define RAW_NONCE "0123456789abcdef0123456789abcdef"

/* Read the listener's first frame "loom2 <nonce>" into nonce (33 bytes). */
static inline int raw_read_nonce(int fd, char *nonce)
{
    unsigned char h[4];
    char b[64];
    if (raw_recv_exact(fd, h, 4) != 4 || tn_test_u32(h) != 38 ||
        raw_recv_exact(fd, b, 38) != 38 || memcmp(b, "loom2 ", 6) != 0)
        return -1;
    memcpy(nonce, b + 6, 32);
    nonce[32] = '\0';
    return 0;
}

/* Connect and read the listener's nonce: the fd, or -1. */
static inline int raw_connect_nonce(int port, char *nonce)
{
    int fd = raw_connect(port);
    if (fd >= 0 && raw_read_nonce(fd, nonce) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

#endif /* LOOM_TN_TEST_H */
