/*
 * xsec.c - which processes of other jobs may send on which context id (contract in
 *          xsec.h): the index context id -> live communicators, the verdict the packet
 *          funnel asks for another job's messages, the warning for a dropped one, and
 *          each such process's quota of unexpected messages (with the line when one
 *          is dropped for passing it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "comm.h"
#include "proc.h"
#include "xsec.h"

#define NIDS (XM_CTX_MASK_WORDS * 32) /* context ids; ctx = 2 * id (+1: collectives) */
#define WARN_EVERY_S 60

static struct {
    int n, cap;
    struct xm_comm **v;
} ix[NIDS];

int xm_xsec_add(struct xm_comm *c)
{
    uint32_t id = c->ctx / 2;
    if (id >= NIDS)
        return 0; /* no packet names such a context: nothing to admit */
    if (ix[id].n == ix[id].cap) {
        int cap = ix[id].cap ? 2 * ix[id].cap : 2;
        struct xm_comm **v = realloc(ix[id].v, (size_t)cap * sizeof(*v));
        if (!v)
            return -ENOMEM;
        ix[id].v = v;
        ix[id].cap = cap;
    }
    ix[id].v[ix[id].n++] = c;
    return 0;
}

void xm_xsec_del(struct xm_comm *c)
{
    uint32_t id = c->ctx / 2;
    if (id >= NIDS)
        return;
    for (int i = 0; i < ix[id].n; i++)
        if (ix[id].v[i] == c) {
            ix[id].v[i] = ix[id].v[--ix[id].n];
            break;
        }
    if (!ix[id].n) {
        free(ix[id].v);
        ix[id].v = NULL;
        ix[id].cap = 0;
    }
}

static int member(struct xm_comm *c, int src)
{
    if (c->w && xm_comm_rank_of(c, src) >= 0)
        return 1; /* (no w: the world's identity map, which holds no other job) */
    if (c->inter && c->local_w)
        for (int i = 0; i < c->local_size; i++)
            if (c->local_w[i] == src)
                return 1;
    return 0;
}

static int member_of_id(uint32_t id, int src)
{
    for (int i = 0; i < ix[id].n; i++)
        if (member(ix[id].v[i], src))
            return 1;
    return 0;
}

int xm_xsec_verdict(uint32_t ctx, int src)
{
    uint32_t id = ctx / 2;
    if (id >= NIDS)
        return XM_XSEC_DENY;
    if (ctx / 2 == XM_DYN_CTX / 2)
        return XM_XSEC_OK; /* a port's secret was proved; dynproc.c checks its messages */
    if (ctx / 2 == XM_CTX_CREATE_GROUP / 2) {
        /* Comm_create_group's bootstrap (a communicator on the stack, never indexed):
         * only processes some live communicator here shares with this one */
        for (uint32_t k = 0; k < NIDS; k++)
            if (member_of_id(k, src))
                return XM_XSEC_OK;
        return XM_XSEC_DENY;
    }
    if (ctx / 2 == 0 || ctx / 2 == 1 || ctx / 2 == XM_SESS_CTX / 2)
        return XM_XSEC_DENY; /* MPI_COMM_WORLD, MPI_COMM_SELF, sessions: this job only */
    if (!ix[id].n)
        return XM_XSEC_UNKNOWN;
    return member_of_id(id, src) ? XM_XSEC_OK : XM_XSEC_DENY;
}

static unsigned long dropped;

unsigned long xm_xsec_dropped(void)
{
    return dropped;
}

/* printable ASCII but backslash as is, the rest as \xNN; cut to fit */
static void escape(char *dst, size_t len, const char *s, size_t max)
{
    size_t o = 0;
    for (size_t i = 0; i < max && s[i] && o + 5 < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch >= 0x20 && ch < 0x7f && ch != '\\')
            dst[o++] = (char)ch;
        else
            o += (size_t)snprintf(dst + o, len - o, "\\x%02x", ch);
    }
    dst[o] = 0;
}

/* One kind of rate-limited line about another job's process src: at most one per
 * WARN_EVERY_S, the lines held back counted into the next.  Fills job (escaped) and
 * more; returns 0 when this line is held back. */
struct warn_rate {
    double last_t;
    unsigned long quiet;
};

static int warn_begin(struct warn_rate *w, int src, char *job, size_t joblen, char *more,
                      size_t morelen, const struct xm_proc **pp)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double now = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
    if (now - w->last_t < WARN_EVERY_S) {
        w->quiet++;
        return 0;
    }
    w->last_t = now;
    *pp = xm_proc_get(src);
    escape(job, joblen, *pp ? (*pp)->jobid : "?", XM_DYN_JOBID);
    more[0] = 0;
    if (w->quiet)
        snprintf(more, morelen, " (and %lu more since the last line)", w->quiet);
    w->quiet = 0;
    return 1;
}

static struct warn_rate msg_rate = {-1e9, 0}, drop_rate = {-1e9, 0};

void xm_xsec_warn(int src, uint32_t ctx, int tag)
{
    const struct xm_proc *p;
    char job[4 * XM_DYN_JOBID + 8], more[64];
    dropped++;
    if (!warn_begin(&msg_rate, src, job, sizeof(job), more, sizeof(more), &p))
        return;
    fprintf(stderr,
            "loom-mpi: rank %d: dropped a message from process %d (job \"%s\" rank %d) "
            "on context %u tag %d: it is in no communicator of that context here%s\n",
            xm_g.rank, src, job, p ? p->rank : -1, (unsigned)ctx, tag, more);
}

/* ---- quota of unexpected messages per process of another job ---- */

struct acct {
    uint64_t bytes;
    uint32_t msgs;
};
static struct acct *acct; /* id - world size -> what it has queued here */
static int nacct;
static uint64_t max_bytes, max_msgs; /* 0: not read yet */

static uint64_t env_u64(const char *name, uint64_t dflt)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return dflt;
    char *end;
    unsigned long long x = strtoull(v, &end, 10);
    return *end || x == 0 ? dflt : (uint64_t)x;
}

int xm_xsec_charge(int src, uint64_t bytes, int msgs)
{
    if (src < xm_g.size)
        return 0;
    if (!max_msgs) {
        max_bytes = env_u64("LOOM_MPI_XJOB_UNEXP_BYTES", (uint64_t)64 << 20);
        max_msgs = env_u64("LOOM_MPI_XJOB_UNEXP_MSGS", 65536);
    }
    int i = src - xm_g.size;
    if (msgs < 0) {
        if (i < nacct) {
            acct[i].bytes -= bytes <= acct[i].bytes ? bytes : acct[i].bytes;
            acct[i].msgs -= acct[i].msgs ? 1 : 0;
        }
        return 0;
    }
    if (i >= nacct) {
        int n = i + 16;
        struct acct *a = realloc(acct, (size_t)n * sizeof(*a));
        if (!a)
            return 1; /* no room to count it: as if over */
        for (int k = nacct; k < n; k++)
            a[k] = (struct acct){0, 0};
        acct = a;
        nacct = n;
    }
    if (acct[i].msgs + 1 > max_msgs || bytes > max_bytes - acct[i].bytes)
        return 1;
    acct[i].bytes += bytes;
    acct[i].msgs++;
    return 0;
}

void xm_xsec_forget(int src)
{
    int i = src - xm_g.size;
    if (i >= 0 && i < nacct)
        acct[i] = (struct acct){0, 0};
}

void xm_xsec_warn_drop(int src, const char *why)
{
    const struct xm_proc *p;
    char job[4 * XM_DYN_JOBID + 8], more[64];
    if (!warn_begin(&drop_rate, src, job, sizeof(job), more, sizeof(more), &p))
        return;
    fprintf(stderr,
            "loom-mpi: rank %d: dropped process %d (job \"%s\" rank %d): %s; "
            "operations with it fail%s\n",
            xm_g.rank, src, job, p ? p->rank : -1, why, more);
}
