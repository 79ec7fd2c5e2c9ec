/*
 * dynwire.c - parsers and formatters of the dynamic-process wire formats: port names,
 *             accept/connect control messages, the Comm_join hello (contract in
 *             dynwire.h; fuzzed by tests/fuzz/fuzz_mpi_dyn.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dynwire.h"

#define PREFIX "loom-port:1:"

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

int xm_dyn_port_parse(const char *s, struct xm_dyn_port *p)
{
    if (!s)
        return -EINVAL;
    size_t n = strnlen(s, XM_DYN_PORT_MAX);
    if (n >= XM_DYN_PORT_MAX || strncmp(s, PREFIX, sizeof(PREFIX) - 1))
        return -EINVAL;
    const char *q = s + sizeof(PREFIX) - 1;
    long rank, tag;
    if (number(&q, XM_DYN_TAG_MAX, &rank) || *q++ != ':' ||
        number(&q, XM_DYN_TAG_MAX, &tag) || *q++ != ':' || !(tag & 1))
        return -EINVAL;
    size_t jl = n - (size_t)(q - s);
    if (!jobid_ok(q, jl))
        return -EINVAL;
    p->rank = (int)rank;
    p->tag = (int)tag;
    memcpy(p->jobid, q, jl);
    p->jobid[jl] = 0;
    return 0;
}

int xm_dyn_port_format(char *buf, size_t len, const struct xm_dyn_port *p)
{
    int n = snprintf(buf, len, PREFIX "%d:%d:%s", p->rank, p->tag, p->jobid);
    return n < 0 || (size_t)n >= len || n >= XM_DYN_PORT_MAX ? -ENAMETOOLONG : 0;
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
