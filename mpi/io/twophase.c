/*
 * twophase.c - collective buffering (two-phase I/O) for the _all calls.
 *
 * The accessed range [lowest offset, highest end) of all ranks is cut into one
 * contiguous file domain per aggregator (two ranks per node by default, hint cb_nodes;
 * domains rounded to striping_unit when it is set).  The domains are worked through
 * in rounds of cb_buffer_size bytes: in each round every rank tells each aggregator
 * what it has inside that aggregator's window (a two-int header), then sends it the
 * pieces (offset/length pairs, and for writes the bytes), over the file's private
 * communicator; the aggregator does large contiguous pwrite/pread calls on the window
 * (writes: one call per covered run, so a hole is never read or overwritten; reads: one
 * pread of the requested span), then (reads) sends every rank its bytes back.  The
 * exchanges are sparse (sparse_xchg): only messages to and from aggregators, all posted
 * at once, never the n*n of an alltoallv.
 * Returns 0, an MPI error class (agreed by all ranks), or 1 when the hints say the
 * access should be done independently (every rank gets the same answer).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io.h"
#include "../coll/coll.h"

struct run {
    MPI_Offset off;
    size_t len;
};

static int cmp_run(const void *a, const void *b)
{
    const struct run *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* aggregators: the first rank of each node, then the second of each node, ... */
static int pick_aggregators(struct xm_comm *c, int naggr, int *agg)
{
    int n = c->size, k = 0;
    int *node = malloc((size_t)n * sizeof(int)), *taken = calloc((size_t)n, sizeof(int));
    if (!node || !taken) {
        free(node);
        free(taken);
        return -1;
    }
    for (int r = 0; r < n; r++)
        node[r] = xm_g.node_of ? xm_g.node_of[xm_comm_world_rank(c, r)] : 0;
    while (k < naggr) {
        int got = 0;
        for (int r = 0; r < n && k < naggr; r++) {
            if (taken[r])
                continue;
            int first = 1; /* first untaken rank of its node in this pass */
            for (int q = 0; q < r && first; q++)
                if (!taken[q] && node[q] == node[r])
                    first = 0;
            for (int q = 0; q < k && first; q++)
                if (node[agg[q]] == node[r] && agg[q] > r)
                    first = 0;
            if (!first)
                continue;
            got = 1;
            agg[k++] = r;
        }
        for (int q = 0; q < k; q++)
            taken[agg[q]] = 1;
        if (!got)
            break;
    }
    free(node);
    free(taken);
    return k;
}

static int io_err(int e)
{
    return e == 0 ? 0 : MPI_ERR_IO;
}

/* One exchange of a round, sparse: cnt[d] bytes at sbuf + dsp[d] go to every rank d with
 * cnt[d] > 0, and rcnt[s] bytes arrive at rbuf + rdsp[s] from every s with rcnt[s] > 0
 * (both sides know the sizes), all posted at once.  Only aggregators take part in the
 * traffic of a round, so an alltoallv's n*n messages (empty ones included, pairwise
 * steps for large ones) become n per aggregator.  Every rank makes exactly one schedule
 * here (the schedules' tags follow the communicator's collective sequence). */
static int sparse_xchg(struct xm_comm *c, const char *sbuf, const int *cnt, const int *dsp,
                       char *rbuf, const int *rcnt, const int *rdsp)
{
    struct xm_sched *s = xm_sched_new(c);
    if (!s)
        return MPI_ERR_NO_MEM;
    int me = c->rank;
    for (int r = 0; r < c->size; r++)
        if (r != me && rcnt[r] > 0)
            xm_sched_recv(s, rbuf + rdsp[r], rcnt[r], MPI_BYTE, r);
    for (int r = 0; r < c->size; r++)
        if (r != me && cnt[r] > 0)
            xm_sched_send(s, sbuf + dsp[r], cnt[r], MPI_BYTE, r);
    if (cnt[me] > 0 && rcnt[me] > 0)
        memcpy(rbuf + rdsp[me], sbuf + dsp[me], (size_t)(cnt[me] < rcnt[me] ? cnt[me] : rcnt[me]));
    return xm_sched_start(s, NULL) < 0 ? MPI_ERR_INTERN : 0;
}

int xm_io_twophase(struct xm_file *f, int write, struct xm_io_piece *p, int np, char *stream)
{
    struct xm_comm *c = f->comm;
    int mode = write ? f->hints.cb_write : f->hints.cb_read;
    if (mode == 0)
        return 1;
    int n = c->size;
    long long v[3] = {LLONG_MIN, LLONG_MIN, np > 1}, g[3];
    if (np) {
        v[0] = -p[0].off;
        for (int i = 0; i < np; i++)
            if (p[i].off + (MPI_Offset)p[i].len > v[1])
                v[1] = p[i].off + (MPI_Offset)p[i].len;
    }
    if (xm_icoll_allreduce(v, g, 3, MPI_LONG_LONG, MPI_MAX, c, NULL) < 0)
        return MPI_ERR_INTERN;
    if (g[1] == LLONG_MIN)
        return 0; /* nobody has data */
    if (mode == 2 && !g[2])
        return 1; /* automatic: every access contiguous, independent is as good */
    MPI_Offset st = -g[0], end = g[1];

    int naggr = f->hints.cb_nodes > 0 ? f->hints.cb_nodes : 1;
    if (naggr > n)
        naggr = n;
    int *agg = malloc((size_t)naggr * sizeof(int));
    int *scnt = calloc((size_t)n, sizeof(int)), *sdsp = calloc((size_t)n, sizeof(int));
    int *rcnt = calloc((size_t)n, sizeof(int)), *rdsp = calloc((size_t)n, sizeof(int));
    int *shdr = calloc((size_t)n * 2, sizeof(int)), *rhdr = calloc((size_t)n * 2, sizeof(int));
    int *two = malloc((size_t)n * sizeof(int)), *twod = malloc((size_t)n * sizeof(int));
    int *cur = calloc((size_t)naggr, sizeof(int));
    size_t *skip = calloc((size_t)naggr, sizeof(size_t));
    int rc = 0;
    if (!agg || !scnt || !sdsp || !rcnt || !rdsp || !shdr || !rhdr || !two || !twod || !cur ||
        !skip)
        rc = MPI_ERR_NO_MEM;
    if (!rc)
        naggr = pick_aggregators(c, naggr, agg);
    if (!rc && naggr <= 0)
        rc = MPI_ERR_NO_MEM;
    MPI_Offset dsize = 0, cb = f->hints.cb_buffer_size;
    int me_agg = -1;
    if (!rc) {
        for (int i = 0; i < n; i++)
            twod[i] = (int)(2 * sizeof(int)) * i; /* byte offset of rank i's header */
        dsize = (end - st + naggr - 1) / naggr;
        if (f->hints.striping_unit > 0)
            dsize = (dsize + f->hints.striping_unit - 1) / f->hints.striping_unit *
                    f->hints.striping_unit;
        if (dsize < 1)
            dsize = 1;
        for (int a = 0; a < naggr; a++)
            if (agg[a] == c->rank)
                me_agg = a;
    }
    long long ntimes = rc ? 0 : (dsize + cb - 1) / cb;
    char *win = me_agg >= 0 && !rc ? malloc((size_t)cb) : NULL;
    if (me_agg >= 0 && !win && !rc)
        rc = MPI_ERR_NO_MEM;
    /* my pieces inside one aggregator window this round: where their bytes are */
    struct sent {
        MPI_Offset off;
        size_t pos, len;
    } *mine = NULL;
    size_t nmine = 0, capmine = 0;
    char *sbuf = NULL, *rbuf = NULL, *back = NULL;
    size_t scap = 0, rcap = 0, bcap = 0;
    struct run *runs = NULL;
    size_t capruns = 0;
    int lerr = rc; /* local failure: still take part in every round, with nothing */
    for (long long k = 0; k < ntimes; k++) {
        f->n_rounds++;
        /* 1. what I send to each aggregator this round */
        nmine = 0;
        size_t total = 0;
        memset(scnt, 0, (size_t)n * sizeof(int));
        memset(shdr, 0, (size_t)n * 2 * sizeof(int));
        size_t *first = calloc((size_t)naggr + 1, sizeof(size_t));
        if (!first) {
            lerr = MPI_ERR_NO_MEM;
        }
        for (int a = 0; a < naggr && !lerr; a++) {
            MPI_Offset ds = st + a * dsize, de = ds + dsize < end ? ds + dsize : end;
            MPI_Offset ws = ds + k * cb, we = ws + cb < de ? ws + cb : de;
            first[a] = nmine;
            if (k == 0) { /* first piece that reaches into this domain */
                int lo = 0, hi = np;
                while (lo < hi) {
                    int mid = (lo + hi) / 2;
                    if (p[mid].off + (MPI_Offset)p[mid].len <= ds)
                        lo = mid + 1;
                    else
                        hi = mid;
                }
                cur[a] = lo;
                skip[a] = lo < np && p[lo].off < ds ? (size_t)(ds - p[lo].off) : 0;
            }
            while (ws < we && cur[a] < np && p[cur[a]].off + (MPI_Offset)skip[a] < we) {
                struct xm_io_piece *q = &p[cur[a]];
                MPI_Offset a0 = q->off + (MPI_Offset)skip[a], e = q->off + (MPI_Offset)q->len;
                if (a0 < ws) /* pieces are sorted, so only the domain start cuts one */
                    a0 = ws;
                int ends = e <= we;
                if (!ends)
                    e = we;
                if (nmine == capmine) {
                    capmine = capmine ? capmine * 2 : 64;
                    struct sent *m2 = realloc(mine, capmine * sizeof(*mine));
                    if (!m2) {
                        lerr = MPI_ERR_NO_MEM;
                        break;
                    }
                    mine = m2;
                }
                mine[nmine].off = a0;
                mine[nmine].pos = q->pos + (size_t)(a0 - q->off);
                mine[nmine].len = (size_t)(e - a0);
                nmine++;
                if (ends) {
                    cur[a]++;
                    skip[a] = 0;
                } else {
                    skip[a] = (size_t)(e - q->off);
                    break;
                }
            }
            size_t cnt = nmine - first[a], dbytes = 0;
            for (size_t i = first[a]; i < nmine; i++)
                dbytes += mine[i].len;
            shdr[2 * agg[a]] = (int)cnt;
            shdr[2 * agg[a] + 1] = (int)dbytes;
            size_t msg = cnt * sizeof(struct run) + (write ? dbytes : 0);
            scnt[agg[a]] = (int)msg;
            total += msg;
        }
        if (first)
            first[naggr] = nmine;
        /* 2. pack: per aggregator, the (offset, length) list, then (writes) the bytes */
        if (!lerr && total > scap) {
            char *b2 = realloc(sbuf, total);
            if (b2) {
                sbuf = b2;
                scap = total;
            } else {
                lerr = MPI_ERR_NO_MEM;
            }
        }
        if (lerr) { /* send nothing; the others still complete the round */
            memset(scnt, 0, (size_t)n * sizeof(int));
            memset(shdr, 0, (size_t)n * 2 * sizeof(int));
            nmine = 0;
            if (first)
                for (int a = 0; a <= naggr; a++)
                    first[a] = 0;
        }
        size_t o = 0;
        for (int a = 0; a < naggr && !lerr; a++) {
            int d = agg[a];
            sdsp[d] = (int)o;
            int cnt = shdr[2 * d];
            struct run *rr = (struct run *)(sbuf + o);
            for (int i = 0; i < cnt; i++) {
                struct sent *m = &mine[first[a] + (size_t)i];
                struct run one = {m->off, m->len};
                memcpy(rr + i, &one, sizeof one);
            }
            o += (size_t)cnt * sizeof(struct run);
            if (write)
                for (int i = 0; i < cnt; i++) {
                    struct sent *m = &mine[first[a] + (size_t)i];
                    memcpy(sbuf + o, stream + m->pos, m->len);
                    o += m->len;
                }
        }
        free(first);
        /* 3. exchange the headers (every rank to every aggregator), then the messages */
        for (int i = 0; i < n; i++)
            two[i] = 0;
        for (int a = 0; a < naggr; a++)
            two[agg[a]] = (int)(2 * sizeof(int));
        for (int i = 0; i < n; i++)
            rcnt[i] = me_agg >= 0 ? (int)(2 * sizeof(int)) : 0;
        memset(rhdr, 0, (size_t)n * 2 * sizeof(int));
        if (sparse_xchg(c, (char *)shdr, two, twod, (char *)rhdr, rcnt, twod)) {
            rc = MPI_ERR_INTERN;
            break;
        }
        size_t rtotal = 0;
        for (int s = 0; s < n; s++) {
            rdsp[s] = (int)rtotal;
            rcnt[s] = (int)((size_t)rhdr[2 * s] * sizeof(struct run) +
                            (write ? (size_t)rhdr[2 * s + 1] : 0));
            rtotal += (size_t)rcnt[s];
        }
        if (rtotal > rcap) {
            char *b2 = realloc(rbuf, rtotal);
            if (b2) {
                rbuf = b2;
                rcap = rtotal;
            } else {
                rc = MPI_ERR_NO_MEM; /* cannot take part any more: give up for all */
            }
        }
        int rr_ok = rc ? 1 : 0, all_bad = 0;
        xm_icoll_allreduce(&rr_ok, &all_bad, 1, MPI_INT, MPI_MAX, c, NULL);
        if (all_bad) {
            if (!rc)
                rc = MPI_ERR_NO_MEM;
            break;
        }
        if (sparse_xchg(c, sbuf, scnt, sdsp, rbuf, rcnt, rdsp)) {
            rc = MPI_ERR_INTERN;
            break;
        }
        /* 4. the aggregator's part */
        size_t nr = 0, backtotal = 0;
        MPI_Offset ws = 0;
        if (me_agg >= 0) {
            MPI_Offset ds = st + me_agg * dsize;
            ws = ds + k * cb;
            for (int s = 0; s < n; s++)
                nr += (size_t)rhdr[2 * s];
            if (nr > capruns) {
                struct run *r2 = realloc(runs, nr * sizeof(*runs));
                if (r2) {
                    runs = r2;
                    capruns = nr;
                } else {
                    lerr = MPI_ERR_NO_MEM;
                    nr = 0;
                }
            }
            size_t m = 0;
            for (int s = 0; s < n && !lerr; s++) {
                const char *msg = rbuf + rdsp[s];
                size_t cnt = (size_t)rhdr[2 * s];
                const char *data = msg + cnt * sizeof(struct run);
                size_t left = (size_t)rhdr[2 * s + 1]; /* data bytes the sender announced */
                for (size_t i = 0; i < cnt; i++) {
                    struct run one;
                    memcpy(&one, msg + i * sizeof one, sizeof one);
                    /* every piece inside my window and inside what was sent */
                    if (one.len > (size_t)cb || one.len > left || one.off < ws ||
                        one.off + (MPI_Offset)one.len > ws + cb) {
                        lerr = MPI_ERR_INTERN;
                        break;
                    }
                    left -= one.len;
                    if (write) {
                        memcpy(win + (one.off - ws), data, one.len);
                        data += one.len;
                    }
                    backtotal += one.len;
                    runs[m++] = one;
                }
            }
            nr = m;
            if (!lerr && nr) {
                qsort(runs, nr, sizeof(*runs), cmp_run);
                if (write) { /* one pwrite per covered run */
                    size_t i = 0;
                    while (i < nr && !lerr) {
                        MPI_Offset a = runs[i].off, e = a + (MPI_Offset)runs[i].len;
                        size_t j = i + 1;
                        while (j < nr && runs[j].off <= e) {
                            MPI_Offset e2 = runs[j].off + (MPI_Offset)runs[j].len;
                            if (e2 > e)
                                e = e2;
                            j++;
                        }
                        size_t d = 0, len = (size_t)(e - a);
                        while (d < len) {
                            f->n_write++;
                            ssize_t w = pwrite(f->fd, win + (a - ws) + d, len - d,
                                               a + (MPI_Offset)d);
                            if (w < 0 && errno == EINTR)
                                continue;
                            if (w <= 0) {
                                lerr = errno == ENOSPC ? MPI_ERR_NO_SPACE
                                     : errno == EDQUOT ? MPI_ERR_QUOTA : io_err(1);
                                break;
                            }
                            d += (size_t)w;
                        }
                        i = j;
                    }
                } else { /* one pread of the requested span */
                    MPI_Offset a = runs[0].off, e = a;
                    for (size_t i = 0; i < nr; i++)
                        if (runs[i].off + (MPI_Offset)runs[i].len > e)
                            e = runs[i].off + (MPI_Offset)runs[i].len;
                    size_t d = 0, len = (size_t)(e - a);
                    while (d < len) {
                        f->n_read++;
                        ssize_t r = pread(f->fd, win + (a - ws) + d, len - d, a + (MPI_Offset)d);
                        if (r < 0 && errno == EINTR)
                            continue;
                        if (r < 0) {
                            lerr = io_err(1);
                            break;
                        }
                        if (r == 0) {
                            memset(win + (a - ws) + d, 0, len - d);
                            break;
                        }
                        d += (size_t)r;
                    }
                }
            }
        }
        if (write)
            continue;
        /* 5. reads: the bytes go back in the order they were asked for */
        if (backtotal > bcap) {
            char *b2 = realloc(back, backtotal);
            if (b2) {
                back = b2;
                bcap = backtotal;
            } else {
                lerr = MPI_ERR_NO_MEM;
            }
        }
        memset(scnt, 0, (size_t)n * sizeof(int));
        size_t bo = 0;
        if (me_agg >= 0 && !lerr) {
            for (int s = 0; s < n; s++) {
                sdsp[s] = (int)bo;
                const char *msg = rbuf + rdsp[s];
                for (int i = 0; i < rhdr[2 * s]; i++) {
                    struct run one;
                    memcpy(&one, msg + (size_t)i * sizeof one, sizeof one);
                    memcpy(back + bo, win + (one.off - ws), one.len);
                    bo += one.len;
                }
                scnt[s] = (int)(bo - (size_t)sdsp[s]);
            }
        } else if (me_agg >= 0) { /* failed: send zeros of the right sizes */
            for (int s = 0; s < n; s++) {
                scnt[s] = rhdr[2 * s + 1];
                sdsp[s] = 0;
            }
            if (bcap < (size_t)INT_MAX) {
                size_t mx = 0;
                for (int s = 0; s < n; s++)
                    if ((size_t)scnt[s] > mx)
                        mx = (size_t)scnt[s];
                char *b2 = realloc(back, mx ? mx : 1);
                if (b2) {
                    back = b2;
                    memset(back, 0, mx);
                }
            }
        }
        /* what comes back to me: the data sizes I announced, per aggregator */
        size_t in = 0;
        for (int s = 0; s < n; s++) {
            rdsp[s] = (int)in;
            rcnt[s] = shdr[2 * s + 1];
            in += (size_t)rcnt[s];
        }
        if (in > rcap) {
            char *b2 = realloc(rbuf, in);
            if (b2) {
                rbuf = b2;
                rcap = in;
            }
        }
        if (sparse_xchg(c, back, scnt, sdsp, rbuf, rcnt, rdsp)) {
            rc = MPI_ERR_INTERN;
            break;
        }
        /* scatter into my stream, aggregator by aggregator in the order sent */
        size_t mi = 0;
        for (int a = 0; a < naggr; a++) {
            const char *src = rbuf + rdsp[agg[a]];
            for (int i = 0; i < shdr[2 * agg[a]]; i++, mi++) {
                memcpy(stream + mine[mi].pos, src, mine[mi].len);
                src += mine[mi].len;
            }
        }
    }
    free(win);
    free(mine);
    free(sbuf);
    free(rbuf);
    free(back);
    free(runs);
    free(agg);
    free(scnt);
    free(sdsp);
    free(rcnt);
    free(rdsp);
    free(shdr);
    free(rhdr);
    free(two);
    free(twod);
    free(cur);
    free(skip);
    /* every rank learns the worst error */
    int e = rc ? rc : lerr, ge = e;
    if (xm_icoll_allreduce(&e, &ge, 1, MPI_INT, MPI_MAX, c, NULL) < 0)
        ge = MPI_ERR_INTERN;
    return ge;
}
