/* spawnwire.c - encoding and bounded decoding of a spawn request and its answer as
 * they travel between hosts: a stepd to srun under srun --mpi=loom, a proxy to the
 * front end under mpiexec -hosts.  Contract: see spawnwire.h.  No Slurm inside.
 *
 * Request body, fields in this order (numbers as decimal text):
 *   "loomspawn1", rank, max_inflight, timeout_s, ncmds, npreput,
 *   npreput x (key, value),
 *   ncmds x (cmd, maxprocs, argc, argc x arg, ninfo, ninfo x (key, value))
 * Answer body: rc, text (the new job id when rc is 0, else the reason).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spawnwire.h"

/* ---- encoding ------------------------------------------------------------- */

struct obuf {
    char *p;
    size_t len, cap;
    int err;
};

static void put_bytes(struct obuf *o, const char *s, size_t n)
{
    if (o->err)
        return;
    if (n > PSRV_SPAWN_MAX_STR || o->len + 4 + n > LSPAWN_FRAME_MAX) {
        o->err = -EMSGSIZE;
        return;
    }
    if (o->len + 4 + n > o->cap) {
        size_t cap = o->cap ? o->cap : 1024;
        while (cap < o->len + 4 + n)
            cap *= 2;
        char *np = realloc(o->p, cap);
        if (!np) {
            o->err = -ENOMEM;
            return;
        }
        o->p = np;
        o->cap = cap;
    }
    unsigned char *h = (unsigned char *)o->p + o->len;
    h[0] = (unsigned char)(n >> 24);
    h[1] = (unsigned char)(n >> 16);
    h[2] = (unsigned char)(n >> 8);
    h[3] = (unsigned char)n;
    memcpy(o->p + o->len + 4, s, n);
    o->len += 4 + n;
}

static void put_str(struct obuf *o, const char *s)
{
    put_bytes(o, s ? s : "", s ? strlen(s) : 0);
}

static void put_int(struct obuf *o, long v)
{
    char b[24];
    put_bytes(o, b, (size_t)snprintf(b, sizeof(b), "%ld", v));
}

int lspawn_encode(const struct psrv_spawn *req, int max_inflight, int timeout_s,
                  char **out, size_t *len)
{
    struct obuf o = {0};

    put_str(&o, LSPAWN_MAGIC);
    put_int(&o, req->rank);
    put_int(&o, max_inflight);
    put_int(&o, timeout_s);
    put_int(&o, req->ncmds);
    put_int(&o, req->npreput);
    for (int i = 0; i < req->npreput; i++) {
        put_str(&o, req->preput[i].key);
        put_str(&o, req->preput[i].val);
    }
    for (int i = 0; i < req->ncmds; i++) {
        const struct psrv_spawn_cmd *c = &req->cmds[i];
        put_str(&o, c->cmd);
        put_int(&o, c->maxprocs);
        put_int(&o, c->argc);
        for (int j = 0; j < c->argc; j++)
            put_str(&o, c->argv[j]);
        put_int(&o, c->ninfo);
        for (int j = 0; j < c->ninfo; j++) {
            put_str(&o, c->info[j].key);
            put_str(&o, c->info[j].val);
        }
    }
    if (o.err) {
        free(o.p);
        return o.err;
    }
    *out = o.p;
    *len = o.len;
    return 0;
}

/* ---- decoding ------------------------------------------------------------- */

struct ibuf {
    const unsigned char *p;
    size_t len, off;
    char *err;
    size_t errlen;
};

static void fail(struct ibuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void fail(struct ibuf *b, const char *fmt, ...)
{
    va_list ap;
    if (b->err[0])
        return;
    va_start(ap, fmt);
    vsnprintf(b->err, b->errlen, fmt, ap);
    va_end(ap);
}

/* The next field as a fresh NUL-terminated string of at most max bytes. */
static char *get_str(struct ibuf *b, const char *what, size_t max)
{
    if (b->len - b->off < 4) {
        fail(b, "spawn request: ends before %s", what);
        return NULL;
    }
    const unsigned char *h = b->p + b->off;
    size_t n = ((size_t)h[0] << 24) | ((size_t)h[1] << 16) | ((size_t)h[2] << 8) | h[3];
    if (n > max || n > b->len - b->off - 4) {
        fail(b, "spawn request: %s of %zu bytes (at most %zu, %zu left)", what, n, max,
             b->len - b->off - 4);
        return NULL;
    }
    if (memchr(h + 4, '\0', n)) {
        fail(b, "spawn request: NUL byte in %s", what);
        return NULL;
    }
    char *s = malloc(n + 1);
    if (!s) {
        fail(b, "spawn request: out of memory");
        return NULL;
    }
    memcpy(s, h + 4, n);
    s[n] = '\0';
    b->off += 4 + n;
    return s;
}

static int get_int(struct ibuf *b, const char *what, long lo, long hi, int *out)
{
    char *s = get_str(b, what, 20), *end;
    if (!s)
        return -1;
    errno = 0;
    long v = strtol(s, &end, 10);
    int bad = errno || end == s || *end || v < lo || v > hi;
    free(s);
    if (bad) {
        fail(b, "spawn request: %s is not a number in %ld..%ld", what, lo, hi);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int get_pairs(struct ibuf *b, int n, struct psrv_kv **out)
{
    struct psrv_kv *kv = calloc((size_t)n + 1, sizeof(*kv));
    *out = kv;
    if (!kv) {
        fail(b, "spawn request: out of memory");
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if (!(kv[i].key = get_str(b, "a key", PSRV_SPAWN_MAX_STR)) ||
            !(kv[i].val = get_str(b, "a value", PSRV_SPAWN_MAX_STR)))
            return -1;
    }
    return 0;
}

static void free_pairs(struct psrv_kv *kv, int n)
{
    for (int i = 0; kv && i < n; i++) {
        free((char *)kv[i].key);
        free((char *)kv[i].val);
    }
    free(kv);
}

void lspawn_free(struct lspawn_req *r)
{
    if (!r)
        return;
    for (int i = 0; r->cmds && i < r->ncmds_alloc; i++) {
        struct psrv_spawn_cmd *c = &r->cmds[i];
        free((char *)c->cmd);
        for (int j = 0; c->argv && j < c->argc; j++)
            free((char *)c->argv[j]);
        free((void *)c->argv);
        free_pairs((struct psrv_kv *)c->info, c->ninfo);
    }
    free(r->cmds);
    free_pairs(r->preput, r->view.npreput);
    free(r);
}

struct lspawn_req *lspawn_decode(const void *buf, size_t len, char *err, size_t errlen)
{
    struct ibuf b = {buf, len, 0, err, errlen};
    struct lspawn_req *r = NULL;
    char *magic;
    int ncmds, npp;
    long total = 0;

    if (errlen)
        err[0] = '\0';
    if (len > LSPAWN_FRAME_MAX) {
        fail(&b, "spawn request: %zu bytes, at most %u", len, LSPAWN_FRAME_MAX);
        return NULL;
    }
    if (!(magic = get_str(&b, "the magic", 16)))
        return NULL;
    int ok = strcmp(magic, LSPAWN_MAGIC) == 0;
    free(magic);
    if (!ok) {
        fail(&b, "spawn request: not a %s frame", LSPAWN_MAGIC);
        return NULL;
    }
    if (!(r = calloc(1, sizeof(*r)))) {
        fail(&b, "spawn request: out of memory");
        return NULL;
    }
    if (get_int(&b, "rank", 0, INT32_MAX, &r->view.rank) < 0 ||
        get_int(&b, "max_inflight", 0, 1 << 20, &r->max_inflight) < 0 ||
        get_int(&b, "timeout", 1, 86400, &r->timeout_s) < 0 ||
        get_int(&b, "ncmds", 1, PSRV_SPAWN_MAX_CMDS, &ncmds) < 0 ||
        get_int(&b, "npreput", 0, PSRV_SPAWN_MAX_PREPUT, &npp) < 0)
        goto bad;
    r->view.npreput = npp;
    if (get_pairs(&b, npp, &r->preput) < 0)
        goto bad;
    if (!(r->cmds = calloc((size_t)ncmds, sizeof(*r->cmds)))) {
        fail(&b, "spawn request: out of memory");
        goto bad;
    }
    r->ncmds_alloc = ncmds;
    for (int i = 0; i < ncmds; i++) {
        struct psrv_spawn_cmd *c = &r->cmds[i];
        int argc, ninfo;
        if (!(c->cmd = get_str(&b, "a command", PSRV_SPAWN_MAX_STR)))
            goto bad;
        if (!*c->cmd) {
            fail(&b, "spawn request: empty command");
            goto bad;
        }
        if (get_int(&b, "maxprocs", 0, PSRV_SPAWN_MAX_PROCS, &c->maxprocs) < 0 ||
            get_int(&b, "argc", 0, PSRV_SPAWN_MAX_ARGS, &argc) < 0)
            goto bad;
        const char **argv = calloc((size_t)argc + 1, sizeof(*argv));
        if (!argv) {
            fail(&b, "spawn request: out of memory");
            goto bad;
        }
        c->argv = argv;
        c->argc = argc;
        for (int j = 0; j < argc; j++)
            if (!(argv[j] = get_str(&b, "an argument", PSRV_SPAWN_MAX_STR)))
                goto bad;
        if (get_int(&b, "ninfo", 0, PSRV_SPAWN_MAX_INFO, &ninfo) < 0)
            goto bad;
        struct psrv_kv *info = NULL;
        int prc = get_pairs(&b, ninfo, &info);
        c->info = info;
        c->ninfo = ninfo;
        if (prc < 0)
            goto bad;
        total += c->maxprocs;
    }
    if (b.off != b.len) {
        fail(&b, "spawn request: %zu bytes after the last command", b.len - b.off);
        goto bad;
    }
    if (total < 1 || total > PSRV_SPAWN_MAX_PROCS) {
        fail(&b, "spawn request: %ld processes (1..%d)", total, PSRV_SPAWN_MAX_PROCS);
        goto bad;
    }
    r->view.ncmds = ncmds;
    r->view.cmds = r->cmds;
    r->view.preput = r->preput;
    r->view.total = (int)total;
    return r;
bad:
    lspawn_free(r);
    return NULL;
}

size_t lspawn_answer_encode(int rc, const char *text, char out[LSPAWN_ANSWER_MAX])
{
    char num[24];
    size_t nl = (size_t)snprintf(num, sizeof(num), "%d", rc);
    size_t tl = text ? strlen(text) : 0;

    if (tl > LSPAWN_ANSWER_MAX - 8 - nl)
        tl = LSPAWN_ANSWER_MAX - 8 - nl;
    unsigned char *o = (unsigned char *)out;
    o[0] = o[1] = o[2] = 0;
    o[3] = (unsigned char)nl;
    memcpy(out + 4, num, nl);
    o += 4 + nl;
    o[0] = (unsigned char)(tl >> 24);
    o[1] = (unsigned char)(tl >> 16);
    o[2] = (unsigned char)(tl >> 8);
    o[3] = (unsigned char)tl;
    if (tl)
        memcpy(out + 8 + nl, text, tl);
    return 8 + nl + tl;
}

int lspawn_answer_decode(const void *buf, size_t len, int *rc, char *text, size_t textlen)
{
    char err[8] = "";
    struct ibuf b = {buf, len, 0, err, sizeof(err)};
    char *t;

    if (len > LSPAWN_ANSWER_MAX || textlen == 0)
        return -EPROTO;
    if (get_int(&b, "rc", -1000000, 1000000, rc) < 0)
        return -EPROTO;
    if (!(t = get_str(&b, "text", LSPAWN_ANSWER_MAX)))
        return -EPROTO;
    if (b.off != b.len) {
        free(t);
        return -EPROTO;
    }
    /* srun is the job owner's process: what it says is kept printable */
    size_t k = 0;
    for (const char *p = t; *p && k + 1 < textlen; p++)
        text[k++] = (*p >= 0x20 && *p < 0x7f) ? *p : '?';
    text[k] = '\0';
    free(t);
    return 0;
}
