/*
 * dynwire.c - parsers and formatters of the dynamic-process wire formats: port names
 *             (versions 1 and 2), TCP address cards, the roots' card lists,
 *             accept/connect control messages, the Comm_join hello and port message
 *             (contract in dynwire.h; fuzzed by tests/fuzz/fuzz_mpi_dyn.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dynwire.h"

#define PREFIX "loom-port:"

/* a decimal number without sign or leading junk, < lim; advances *s past it */
static int number(const char **s, long lim, long *out)
{
    const char *p = *s;
    long v = 0;
    int n = 0;
    while (*p >= '0' && *p <= '9') {
        if (++n > 10)
            return -1;
        v = v * 10 + (*p - '0');
        if (v >= lim)
            return -1;
        p++;
    }
    if (n == 0)
        return -1;
    *s = p;
    *out = v;
    return 0;
}

static int jobid_ok(const char *j, size_t n)
{
    if (n == 0 || n >= XM_DYN_JOBID)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)j[i] < 0x21 || (unsigned char)j[i] > 0x7e)
            return 0;
    return 1;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

int xm_dyn_addrs_parse(const char *s, size_t n, struct xm_dyn_addrs *a, size_t *used)
{
    size_t i = 0;
    struct xm_dyn_addrs r;
    memset(&r, 0, sizeof(r));
    for (;;) {
        if (r.naddr == XM_DYN_ADDRS)
            return -EINVAL;
        uint32_t ip = 0;
        for (int oct = 0; oct < 4; oct++) {
            unsigned v = 0;
            int d = 0;
            while (i < n && s[i] >= '0' && s[i] <= '9' && d < 3) {
                if (d == 1 && v == 0)
                    return -EINVAL; /* a leading zero */
                v = v * 10 + (unsigned)(s[i++] - '0');
                d++;
            }
            if (d == 0 || v > 255 || i >= n || s[i++] != (oct < 3 ? '.' : ':'))
                return -EINVAL;
            ip = ip << 8 | v;
        }
        unsigned long port = 0;
        int d = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9' && d < 5) {
            if (d == 1 && port == 0)
                return -EINVAL;
            port = port * 10 + (unsigned long)(s[i++] - '0');
            d++;
        }
        if (d == 0 || port == 0 || port > 65535)
            return -EINVAL;
        /* network order, as inet_pton writes it */
        uint8_t b[4] = {(uint8_t)(ip >> 24), (uint8_t)(ip >> 16), (uint8_t)(ip >> 8),
                        (uint8_t)ip};
        memcpy(&r.ip[r.naddr], b, 4);
        r.port[r.naddr++] = (uint16_t)port;
        if (i < n && s[i] == ',') {
            i++;
            continue;
        }
        break;
    }
    *a = r;
    *used = i;
    return 0;
}

int xm_dyn_addrs_format(char *buf, size_t len, const struct xm_dyn_addrs *a)
{
    size_t at = 0;
    if (a->naddr < 1 || a->naddr > XM_DYN_ADDRS)
        return -EINVAL;
    for (int i = 0; i < a->naddr; i++) {
        uint8_t b[4];
        memcpy(b, &a->ip[i], 4);
        int k = snprintf(buf + at, len - at, "%s%u.%u.%u.%u:%u", i ? "," : "", b[0], b[1],
                         b[2], b[3], (unsigned)a->port[i]);
        if (k < 0 || (size_t)k >= len - at)
            return -ENAMETOOLONG;
        at += (size_t)k;
    }
    return 0;
}

int xm_dyn_port_parse(const char *s, struct xm_dyn_port *p)
{
    if (!s)
        return -EINVAL;
    size_t n = strnlen(s, XM_DYN_PORT_MAX);
    if (n >= XM_DYN_PORT_MAX || strncmp(s, PREFIX, sizeof(PREFIX) - 1))
        return -EINVAL;
    const char *q = s + sizeof(PREFIX) - 1;
    struct xm_dyn_port r;
    memset(&r, 0, sizeof(r));
    if (q[0] == '1' && q[1] == ':')
        r.version = 1;
    else if (q[0] == '2' && q[1] == ':')
        r.version = 2;
    else
        return -EINVAL;
    q += 2;
    long rank, tag;
    if (number(&q, XM_DYN_TAG_MAX, &rank) || *q++ != ':' ||
        number(&q, XM_DYN_TAG_MAX, &tag) || *q++ != ':' || !(tag & 1))
        return -EINVAL;
    if (r.version == 2) {
        for (int i = 0; i < XM_DYN_SECRET; i++) {
            int hi = hexval(q[0]), lo = hi < 0 ? -1 : hexval(q[1]);
            if (lo < 0)
                return -EINVAL;
            r.secret[i] = (uint8_t)(hi << 4 | lo);
            q += 2;
        }
        size_t used;
        if (*q++ != ':' ||
            xm_dyn_addrs_parse(q, n - (size_t)(q - s), &r.addrs, &used) < 0)
            return -EINVAL;
        q += used;
        if (*q++ != ':')
            return -EINVAL;
    }
    size_t jl = n - (size_t)(q - s);
    if (!jobid_ok(q, jl))
        return -EINVAL;
    r.rank = (int)rank;
    r.tag = (int)tag;
    memcpy(r.jobid, q, jl);
    r.jobid[jl] = 0;
    *p = r;
    return 0;
}

int xm_dyn_port_format(char *buf, size_t len, const struct xm_dyn_port *p)
{
    int n;
    if (p->version == 2) {
        char hex[2 * XM_DYN_SECRET + 1], card[XM_DYN_ADDRS * 22];
        for (int i = 0; i < XM_DYN_SECRET; i++)
            snprintf(hex + 2 * i, 3, "%02x", p->secret[i]);
        if (xm_dyn_addrs_format(card, sizeof(card), &p->addrs) < 0)
            return -EINVAL;
        n = snprintf(buf, len, PREFIX "2:%d:%d:%s:%s:%s", p->rank, p->tag, hex, card,
                     p->jobid);
    } else {
        n = snprintf(buf, len, PREFIX "1:%d:%d:%s", p->rank, p->tag, p->jobid);
    }
    return n < 0 || (size_t)n >= len || n >= XM_DYN_PORT_MAX ? -ENAMETOOLONG : 0;
}

/* ---- card lists ---- */

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16),
    p[3] = (uint8_t)(v >> 24);
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

/* NULL if the card c may travel, else what is wrong */
static const char *card_bad(const struct xm_dyn_card *c)
{
    size_t jl = strnlen(c->jobid, sizeof(c->jobid));
    if (!jobid_ok(c->jobid, jl))
        return "job id";
    if (c->rank < 0 || c->rank >= XM_DYN_TAG_MAX)
        return "rank";
    if (c->addrs.naddr < 1 || c->addrs.naddr > XM_DYN_ADDRS)
        return "address count";
    for (int i = 0; i < c->addrs.naddr; i++)
        if (c->addrs.port[i] == 0)
            return "port";
    return NULL;
}

long xm_dyn_cards_encode(const struct xm_dyn_card *c, int n, void *buf, size_t cap)
{
    if (n < 1 || n > XM_DYN_CARDS_MAX)
        return -EINVAL;
    size_t need = xm_dyn_cards_len(n);
    if (cap < need)
        return -ENOSPC;
    uint8_t *b = buf;
    memset(b, 0, need);
    put32(b, XM_DYN_CARDS_MAGIC);
    put32(b + 4, 1);
    put32(b + 8, (uint32_t)n);
    for (int i = 0; i < n; i++) {
        if (card_bad(&c[i]))
            return -EINVAL;
        uint8_t *e = b + XM_DYN_CARDS_HDR + (size_t)i * XM_DYN_CARD_WIRE;
        memcpy(e, c[i].jobid, strnlen(c[i].jobid, XM_DYN_JOBID));
        put32(e + XM_DYN_JOBID, (uint32_t)c[i].rank);
        put32(e + XM_DYN_JOBID + 4, (uint32_t)c[i].addrs.naddr);
        for (int k = 0; k < c[i].addrs.naddr; k++) {
            memcpy(e + XM_DYN_JOBID + 8 + 8 * k, &c[i].addrs.ip[k], 4);
            put32(e + XM_DYN_JOBID + 12 + 8 * k, c[i].addrs.port[k]);
        }
    }
    return (long)need;
}

void xm_dyn_cards_get(const void *buf, int i, struct xm_dyn_card *out)
{
    const uint8_t *e = (const uint8_t *)buf + XM_DYN_CARDS_HDR + (size_t)i * XM_DYN_CARD_WIRE;
    memset(out, 0, sizeof(*out));
    memcpy(out->jobid, e, XM_DYN_JOBID);
    out->jobid[XM_DYN_JOBID - 1] = 0;
    out->rank = (int)get32(e + XM_DYN_JOBID);
    out->addrs.naddr = (int)get32(e + XM_DYN_JOBID + 4);
    if (out->addrs.naddr > XM_DYN_ADDRS)
        out->addrs.naddr = XM_DYN_ADDRS; /* only after a check, but never overrun */
    for (int k = 0; k < out->addrs.naddr; k++) {
        memcpy(&out->addrs.ip[k], e + XM_DYN_JOBID + 8 + 8 * k, 4);
        out->addrs.port[k] = (uint16_t)get32(e + XM_DYN_JOBID + 12 + 8 * k);
    }
}

/* entries compare by their wire (job id, rank): 68 bytes */
static int key_cmp(const void *a, const void *b)
{
    return memcmp(*(const uint8_t *const *)a, *(const uint8_t *const *)b,
                  XM_DYN_JOBID + 4);
}

const char *xm_dyn_cards_check(const void *buf, size_t len, int *n)
{
    const uint8_t *b = buf;
    if (len < XM_DYN_CARDS_HDR)
        return "length";
    if (get32(b) != XM_DYN_CARDS_MAGIC)
        return "magic";
    if (get32(b + 4) != 1)
        return "version";
    uint32_t cnt = get32(b + 8);
    if (cnt < 1 || cnt > XM_DYN_CARDS_MAX)
        return "count";
    if (get32(b + 12) != 0)
        return "reserved field";
    if (len != xm_dyn_cards_len((int)cnt))
        return "length for the count";
    const uint8_t **key = malloc(cnt * sizeof(*key));
    if (!key)
        return "no memory to check the list";
    const char *why = NULL;
    for (uint32_t i = 0; i < cnt && !why; i++) {
        const uint8_t *e = b + XM_DYN_CARDS_HDR + (size_t)i * XM_DYN_CARD_WIRE;
        key[i] = e;
        size_t jl = strnlen((const char *)e, XM_DYN_JOBID);
        if (!jobid_ok((const char *)e, jl)) {
            why = "job id";
            break;
        }
        for (size_t k = jl; k < XM_DYN_JOBID; k++)
            if (e[k])
                why = "job id padding";
        uint32_t rank = get32(e + XM_DYN_JOBID), na = get32(e + XM_DYN_JOBID + 4);
        if (rank >= XM_DYN_TAG_MAX)
            why = "rank";
        else if (na < 1 || na > XM_DYN_ADDRS)
            why = "address count";
        for (uint32_t k = 0; k < XM_DYN_ADDRS && !why; k++) {
            uint32_t ip = get32(e + XM_DYN_JOBID + 8 + 8 * k);
            uint32_t port = get32(e + XM_DYN_JOBID + 12 + 8 * k);
            if (k < na ? port < 1 || port > 65535 : ip || port)
                why = k < na ? "port" : "unused address slot";
        }
    }
    if (!why) {
        qsort(key, cnt, sizeof(*key), key_cmp);
        for (uint32_t i = 1; i < cnt; i++)
            if (key_cmp(&key[i - 1], &key[i]) == 0)
                why = "a process named twice";
    }
    free(key);
    if (!why)
        *n = (int)cnt;
    return why;
}
const char *xm_dyn_msg_check(const void *buf, size_t len, struct xm_dyn_msg *out)
{
    struct xm_dyn_msg m;
    if (len != sizeof(m))
        return "length";
    memcpy(&m, buf, sizeof(m));
    if (m.magic != XM_DYN_MAGIC)
        return "magic";
    if (m.kind < XM_DYN_REQ || m.kind > XM_DYN_CONFIRM)
        return "kind";
    if (m.tag < 0 || m.tag >= XM_DYN_TAG_MAX || (m.tag & 1))
        return "tag";
    if (m.zero != 0)
        return "reserved field";
    *out = m;
    return NULL;
}

const char *xm_dyn_hello_check(const void *buf, size_t len, struct xm_dyn_hello *out)
{
    struct xm_dyn_hello h;
    if (len != sizeof(h))
        return "length";
    memcpy(&h, buf, sizeof(h));
    if (memcmp(h.magic, XM_DYN_HELLO_MAGIC, sizeof(h.magic)))
        return "magic (not a Loom MPI process at the other end)";
    if (h.version != 1)
        return "version";
    size_t jl = strnlen(h.jobid, sizeof(h.jobid));
    if (!jobid_ok(h.jobid, jl))
        return "job id";
    if (h.size <= 0 || h.rank < 0 || h.rank >= h.size)
        return "rank";
    if (h.tag < 0 || h.tag >= XM_DYN_TAG_MAX || (h.tag & 1))
        return "tag";
    *out = h;
    return NULL;
}

/* ---- the TCP netmod's cross-job hello ---- */

static const char *xhello_bad(const struct xm_dyn_xhello *h)
{
    const char *bad = card_bad(&h->from);
    if (bad)
        return bad;
    if (h->from.rank != h->rank)
        return "rank";
    if (!jobid_ok(h->tojob, strnlen(h->tojob, sizeof(h->tojob))))
        return "acceptor's job id";
    if (h->to < 0 || h->to >= XM_DYN_TAG_MAX)
        return "acceptor's rank";
    if (h->port_tag < 0 || h->port_tag >= XM_DYN_TAG_MAX ||
        (h->port_tag != 0 && !(h->port_tag & 1)))
        return "port tag";
    return NULL;
}

int xm_dyn_xhello_encode(const struct xm_dyn_xhello *h, void *buf)
{
    if (xhello_bad(h))
        return -EINVAL;
    uint8_t *b = buf;
    memset(b, 0, XM_DYN_XHELLO_WIRE);
    put32(b, XM_DYN_XHELLO_MAGIC);
    put32(b + 4, (uint32_t)h->rank);
    put32(b + 8, (uint32_t)h->to);
    put32(b + 12, (uint32_t)h->port_tag);
    memcpy(b + 16, h->nonce, XM_DYN_NONCE);
    memcpy(b + 32, h->from.jobid, strnlen(h->from.jobid, XM_DYN_JOBID));
    memcpy(b + 32 + XM_DYN_JOBID, h->tojob, strnlen(h->tojob, XM_DYN_JOBID));
    uint8_t *a = b + 32 + 2 * XM_DYN_JOBID;
    put32(a, (uint32_t)h->from.addrs.naddr);
    for (int k = 0; k < h->from.addrs.naddr; k++) {
        memcpy(a + 4 + 8 * k, &h->from.addrs.ip[k], 4);
        put32(a + 8 + 8 * k, h->from.addrs.port[k]);
    }
    return 0;
}

const char *xm_dyn_xhello_check(const void *buf, size_t len, struct xm_dyn_xhello *out)
{
    const uint8_t *b = buf;
    struct xm_dyn_xhello h;
    if (len != XM_DYN_XHELLO_WIRE)
        return "length";
    if (get32(b) != XM_DYN_XHELLO_MAGIC)
        return "magic";
    memset(&h, 0, sizeof(h));
    uint32_t r = get32(b + 4), to = get32(b + 8), pt = get32(b + 12);
    if (r >= XM_DYN_TAG_MAX || to >= XM_DYN_TAG_MAX || pt >= XM_DYN_TAG_MAX)
        return "rank or port tag out of range";
    h.rank = (int)r;
    h.to = (int)to;
    h.port_tag = (int)pt;
    memcpy(h.nonce, b + 16, XM_DYN_NONCE);
    for (int f = 0; f < 2; f++) { /* NUL-terminated, NUL-padded: one spelling only */
        const uint8_t *j = b + 32 + f * XM_DYN_JOBID, *z = memchr(j, 0, XM_DYN_JOBID);
        if (!z)
            return "job id not terminated";
        for (; z < j + XM_DYN_JOBID; z++)
            if (*z)
                return "job id padding not zero";
    }
    memcpy(h.from.jobid, b + 32, XM_DYN_JOBID);
    memcpy(h.tojob, b + 32 + XM_DYN_JOBID, XM_DYN_JOBID);
    h.from.rank = h.rank;
    const uint8_t *a = b + 32 + 2 * XM_DYN_JOBID;
    uint32_t na = get32(a);
    if (na < 1 || na > XM_DYN_ADDRS)
        return "address count";
    h.from.addrs.naddr = (int)na;
    for (int k = 0; k < XM_DYN_ADDRS; k++) {
        uint32_t port = get32(a + 8 + 8 * k);
        uint32_t ip;
        memcpy(&ip, a + 4 + 8 * k, 4);
        if (k >= (int)na) {
            if (ip || port)
                return "unused address slot not zero";
            continue;
        }
        if (port == 0 || port > 65535)
            return "port";
        h.from.addrs.ip[k] = ip;
        h.from.addrs.port[k] = (uint16_t)port;
    }
    const char *bad = xhello_bad(&h);
    if (bad)
        return bad;
    *out = h;
    return NULL;
}

/* ---- Comm_join between jobs: the port message ---- */

const char *xm_dyn_joinport_check(const void *buf, size_t len, struct xm_dyn_port *out,
                                  char name[XM_DYN_PORT_MAX])
{
    const uint8_t *b = buf;
    if (len != XM_DYN_JOINPORT_WIRE)
        return "length";
    if (memcmp(b, XM_DYN_JOINPORT_MAGIC, 8))
        return "magic";
    const uint8_t *n = b + 8, *z = memchr(n, 0, XM_DYN_PORT_MAX);
    if (!z)
        return "port name not terminated";
    for (const uint8_t *q = z; q < n + XM_DYN_PORT_MAX; q++)
        if (*q)
            return "bytes after the port name";
    struct xm_dyn_port p;
    if (xm_dyn_port_parse((const char *)n, &p) < 0)
        return "port name";
    if (p.version != 2)
        return "a port name that reaches only its own job";
    memcpy(name, n, XM_DYN_PORT_MAX);
    *out = p;
    return NULL;
}

int xm_dyn_joinport_encode(const char *name, void *buf)
{
    uint8_t *b = buf;
    size_t n = strnlen(name, XM_DYN_PORT_MAX);
    if (n >= XM_DYN_PORT_MAX)
        return -EINVAL;
    memset(b, 0, XM_DYN_JOINPORT_WIRE);
    memcpy(b, XM_DYN_JOINPORT_MAGIC, 8);
    memcpy(b + 8, name, n);
    struct xm_dyn_port p;
    char back[XM_DYN_PORT_MAX];
    return xm_dyn_joinport_check(b, XM_DYN_JOINPORT_WIRE, &p, back) ? -EINVAL : 0;
}
