/* spawn.c - dynamic process requests: the PMI-2 "spawn" record and the PMI-1
 * "mcmd=spawn" blocks parsed into one bounded struct spawn_req, handed to the host
 * (ops->spawn), the one reply each spawning task gets, and the table of each
 * client's spawn in progress (struct spawn_wait, one per client).
 *
 * Contract: see spawn.h.  Wire (doc/wire.md, "Spawn"):
 *   PMI-2: ncmds, preputcount, ppkeyI/ppvalI, then per command subcmd, maxprocs,
 *          argc, argvJ, and optionally infokeycount, infokeyJ/infovalJ -- in this
 *          order (keys repeat across commands, so position is what tells them
 *          apart).  A thrid may appear anywhere and is not part of the request.
 *   PMI-1: one block per command, keys in any order: nprocs, execname, totspawns,
 *          spawnssofar (1-based, blocks in order), argcnt, argJ (1-based),
 *          preput_num, preput_key_I/preput_val_I (the same in every block: the
 *          first block's are kept), info_num, info_key_J/info_val_J.
 *   Replies: "spawn-response" / "spawn_result" with rc, jobid and errcodes (one
 *   per process, comma separated) on success, errmsg / msg otherwise; each
 *   protocol words them in its spawn_done (proto_pmi1.c, proto_pmi2.c), always
 *   with the thrid of the request they answer.
 *
 * Notes:
 *   - A task has at most one spawn in flight; a second is answered rc!=0.
 *   - errcodes is left out when every code is 0 and the list would be long:
 *     MPICH's PMI-1 client reads a reply into 1024 bytes, and both MPICH and
 *     Loom's clients take a missing list as all zeros.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "psrv_int.h"
#include "spawn.h"

#define ERRCODES_INLINE_MAX 200 /* all-zero lists longer than this are left out */

struct spawn_req {
    struct psrv_spawn pub;
    struct psrv_spawn_cmd *cmds; /* [declared] */
    int declared;                /* ncmds / totspawns */
    int filled;                  /* commands parsed so far */
    struct psrv_kv *preput;
    bool have_preput;
};

static void free_kvs(struct psrv_kv *kv, int n)
{
    if (!kv)
        return;
    for (int i = 0; i < n; i++) {
        free((char *)kv[i].key);
        free((char *)kv[i].val);
    }
    free(kv);
}

void spawn_req_free(struct spawn_req *r)
{
    if (!r)
        return;
    for (int i = 0; r->cmds && i < r->declared; i++) {
        struct psrv_spawn_cmd *c = &r->cmds[i];
        free((char *)c->cmd);
        if (c->argv) {
            for (int j = 0; j < c->argc; j++)
                free((char *)c->argv[j]);
            free((void *)c->argv);
        }
        free_kvs((struct psrv_kv *)c->info, c->ninfo);
    }
    free(r->cmds);
    free_kvs(r->preput, r->pub.npreput);
    free(r);
}

const struct psrv_spawn *spawn_req_view(const struct spawn_req *r)
{
    return &r->pub;
}

/* A bounded copy of a task's string. */
static char *dup_bounded(const char *v, const char *what, char *err, size_t errlen)
{
    if (strlen(v) > PSRV_SPAWN_MAX_STR) {
        loom_errf(err, errlen, "spawn: %s longer than %d bytes", what,
                  PSRV_SPAWN_MAX_STR);
        return NULL;
    }
    char *d = strdup(v);
    if (!d)
        loom_errf(err, errlen, "spawn: out of memory");
    return d;
}

/* A whole decimal in [lo, hi]. */
static int parse_count(const char *v, int lo, int hi, int *out)
{
    char *end;
    long x;

    if (!v || !*v)
        return -1;
    errno = 0;
    x = strtol(v, &end, 10);
    if (errno || *end || x < lo || x > hi)
        return -1;
    *out = (int)x;
    return 0;
}

static struct spawn_req *req_new(int ncmds, char *err, size_t errlen)
{
    struct spawn_req *r = calloc(1, sizeof(*r));
    if (r)
        r->cmds = calloc((size_t)ncmds, sizeof(*r->cmds));
    if (!r || !r->cmds) {
        free(r);
        loom_errf(err, errlen, "spawn: out of memory");
        return NULL;
    }
    r->declared = ncmds;
    r->pub.cmds = r->cmds;
    return r;
}

/* The request is complete: totals and the public view. */
static int req_finish(struct spawn_req *r, char *err, size_t errlen)
{
    long total = 0;
    for (int i = 0; i < r->declared; i++)
        total += r->cmds[i].maxprocs;
    if (total < 1) {
        loom_errf(err, errlen, "spawn: no process to start (every maxprocs is 0)");
        return -1;
    }
    if (total > PSRV_SPAWN_MAX_PROCS) {
        loom_errf(err, errlen, "spawn: %ld processes asked, at most %d in one request",
                  total, PSRV_SPAWN_MAX_PROCS);
        return -1;
    }
    r->pub.total = (int)total;
    r->pub.ncmds = r->declared;
    r->pub.cmds = r->cmds;
    r->pub.preput = r->preput;
    return 0;
}

/* ---- PMI-2 ------------------------------------------------------------ */

/* A cursor over the request's pairs in order, thrid left out. */
struct cur {
    const struct pmi_msg *m;
    int i;
};

static const struct pmi_kv *cur_peek(struct cur *c)
{
    while (c->i < c->m->n && strcmp(c->m->kv[c->i].key, "thrid") == 0)
        c->i++;
    return c->i < c->m->n ? &c->m->kv[c->i] : NULL;
}

/* The next pair must be `key` (or key followed by idx when idx >= 0). */
static const char *cur_take(struct cur *c, const char *key, int idx, char *err,
                            size_t errlen)
{
    const struct pmi_kv *kv = cur_peek(c);
    char want[48];

    if (idx >= 0)
        snprintf(want, sizeof(want), "%s%d", key, idx);
    else
        snprintf(want, sizeof(want), "%s", key);
    if (!kv) {
        loom_errf(err, errlen, "spawn: request ends where %s was expected", want);
        return NULL;
    }
    if (strcmp(kv->key, want) != 0) {
        loom_errf(err, errlen, "spawn: %s expected, not %.64s", want, kv->key);
        return NULL;
    }
    c->i++;
    return kv->val;
}

static int cur_count(struct cur *c, const char *key, int hi, int *out, char *err,
                     size_t errlen)
{
    const char *v = cur_take(c, key, -1, err, errlen);
    if (!v)
        return -1;
    if (parse_count(v, 0, hi, out) < 0) {
        loom_errf(err, errlen, "spawn: %s=%.32s is not a count in 0..%d", key, v, hi);
        return -1;
    }
    return 0;
}

static int cur_pairs(struct cur *c, const char *kname, const char *vname, int n,
                     struct psrv_kv **out, char *err, size_t errlen)
{
    struct psrv_kv *kv = calloc((size_t)n + 1, sizeof(*kv));
    if (!kv) {
        loom_errf(err, errlen, "spawn: out of memory");
        return -1;
    }
    *out = kv;
    for (int i = 0; i < n; i++) {
        const char *k = cur_take(c, kname, i, err, errlen);
        if (!k || !(kv[i].key = dup_bounded(k, kname, err, errlen)))
            return -1;
        const char *v = cur_take(c, vname, i, err, errlen);
        if (!v || !(kv[i].val = dup_bounded(v, vname, err, errlen)))
            return -1;
    }
    return 0;
}

struct spawn_req *spawn_parse_v2(const struct pmi_msg *m, char *err, size_t errlen)
{
    struct cur c = {m, 1};
    struct spawn_req *r;
    int ncmds, npp;

    if (cur_count(&c, "ncmds", PSRV_SPAWN_MAX_CMDS, &ncmds, err, errlen) < 0)
        return NULL;
    if (ncmds < 1) {
        loom_errf(err, errlen, "spawn: ncmds=0");
        return NULL;
    }
    if (cur_count(&c, "preputcount", PSRV_SPAWN_MAX_PREPUT, &npp, err, errlen) < 0)
        return NULL;
    if (!(r = req_new(ncmds, err, errlen)))
        return NULL;
    r->pub.npreput = npp;
    if (cur_pairs(&c, "ppkey", "ppval", npp, &r->preput, err, errlen) < 0)
        goto bad;
    for (int i = 0; i < ncmds; i++) {
        struct psrv_spawn_cmd *cmd = &r->cmds[i];
        const char *v = cur_take(&c, "subcmd", -1, err, errlen);
        if (!v || !(cmd->cmd = dup_bounded(v, "subcmd", err, errlen)))
            goto bad;
        if (!*cmd->cmd) {
            loom_errf(err, errlen, "spawn: empty subcmd");
            goto bad;
        }
        if (cur_count(&c, "maxprocs", PSRV_SPAWN_MAX_PROCS, &cmd->maxprocs, err, errlen) <
            0)
            goto bad;
        int argc;
        if (cur_count(&c, "argc", PSRV_SPAWN_MAX_ARGS, &argc, err, errlen) < 0)
            goto bad;
        const char **argv = calloc((size_t)argc + 1, sizeof(*argv));
        if (!argv) {
            loom_errf(err, errlen, "spawn: out of memory");
            goto bad;
        }
        cmd->argv = argv;
        cmd->argc = argc;
        for (int j = 0; j < argc; j++) {
            const char *a = cur_take(&c, "argv", j, err, errlen);
            if (!a || !(argv[j] = dup_bounded(a, "argv", err, errlen)))
                goto bad;
        }
        const struct pmi_kv *nx = cur_peek(&c);
        if (nx && strcmp(nx->key, "infokeycount") == 0) {
            int ninfo;
            if (cur_count(&c, "infokeycount", PSRV_SPAWN_MAX_INFO, &ninfo, err, errlen) <
                0)
                goto bad;
            struct psrv_kv *info;
            cmd->ninfo = ninfo;
            int prc = cur_pairs(&c, "infokey", "infoval", ninfo, &info, err, errlen);
            cmd->info = info;
            if (prc < 0)
                goto bad;
        }
        r->filled++;
    }
    if (cur_peek(&c)) {
        loom_errf(err, errlen, "spawn: unexpected %.64s after the last command",
                  cur_peek(&c)->key);
        goto bad;
    }
    if (req_finish(r, err, errlen) < 0)
        goto bad;
    return r;
bad:
    spawn_req_free(r);
    return NULL;
}

/* ---- PMI-1 ------------------------------------------------------------ */

static int v1_count(const struct pmi_msg *m, const char *key, int lo, int hi, bool need,
                    int *out, char *err, size_t errlen)
{
    const char *v = pmi_msg_get(m, key);
    if (!v && !need) {
        *out = 0;
        return 0;
    }
    if (!v) {
        loom_errf(err, errlen, "spawn: block without %s", key);
        return -1;
    }
    if (parse_count(v, lo, hi, out) < 0) {
        loom_errf(err, errlen, "spawn: %s=%.32s is not a count in %d..%d", key, v, lo,
                  hi);
        return -1;
    }
    return 0;
}

static int v1_pairs(const struct pmi_msg *m, const char *kfmt, const char *vfmt, int n,
                    struct psrv_kv **out, char *err, size_t errlen)
{
    struct psrv_kv *kv = calloc((size_t)n + 1, sizeof(*kv));
    char kn[48], vn[48];

    if (!kv) {
        loom_errf(err, errlen, "spawn: out of memory");
        return -1;
    }
    *out = kv;
    for (int i = 0; i < n; i++) {
        snprintf(kn, sizeof(kn), "%s%d", kfmt, i);
        snprintf(vn, sizeof(vn), "%s%d", vfmt, i);
        const char *k = pmi_msg_get(m, kn), *v = pmi_msg_get(m, vn);
        if (!k || !v) {
            loom_errf(err, errlen, "spawn: block without %s", !k ? kn : vn);
            return -1;
        }
        if (!(kv[i].key = dup_bounded(k, kn, err, errlen)) ||
            !(kv[i].val = dup_bounded(v, vn, err, errlen)))
            return -1;
    }
    return 0;
}

int spawn_add_v1_block(struct spawn_req **b, const struct pmi_msg *m, char *err,
                       size_t errlen)
{
    struct spawn_req *r = *b;
    int tot, sofar, np, argc, npp, ninfo;

    if (v1_count(m, "totspawns", 1, PSRV_SPAWN_MAX_CMDS, true, &tot, err, errlen) < 0 ||
        v1_count(m, "spawnssofar", 1, PSRV_SPAWN_MAX_CMDS, true, &sofar, err, errlen) < 0 ||
        v1_count(m, "nprocs", 0, PSRV_SPAWN_MAX_PROCS, true, &np, err, errlen) < 0 ||
        v1_count(m, "argcnt", 0, PSRV_SPAWN_MAX_ARGS, false, &argc, err, errlen) < 0 ||
        v1_count(m, "preput_num", 0, PSRV_SPAWN_MAX_PREPUT, false, &npp, err, errlen) < 0 ||
        v1_count(m, "info_num", 0, PSRV_SPAWN_MAX_INFO, false, &ninfo, err, errlen) < 0)
        goto bad;
    if (!r) {
        if (sofar != 1) {
            loom_errf(err, errlen, "spawn: block %d of %d came first", sofar, tot);
            goto bad;
        }
        if (!(r = *b = req_new(tot, err, errlen)))
            return -1;
    } else if (tot != r->declared || sofar != r->filled + 1) {
        loom_errf(err, errlen, "spawn: block %d of %d after block %d of %d", sofar, tot,
                  r->filled, r->declared);
        goto bad;
    }
    if (sofar > tot) {
        loom_errf(err, errlen, "spawn: spawnssofar=%d > totspawns=%d", sofar, tot);
        goto bad;
    }
    struct psrv_spawn_cmd *cmd = &r->cmds[r->filled];
    const char *exe = pmi_msg_get(m, "execname");
    if (!exe || !*exe) {
        loom_errf(err, errlen, "spawn: block without execname");
        goto bad;
    }
    if (!(cmd->cmd = dup_bounded(exe, "execname", err, errlen)))
        goto bad;
    cmd->maxprocs = np;
    const char **argv = calloc((size_t)argc + 1, sizeof(*argv));
    if (!argv) {
        loom_errf(err, errlen, "spawn: out of memory");
        goto bad;
    }
    cmd->argv = argv;
    cmd->argc = argc;
    for (int j = 0; j < argc; j++) {
        char kn[32];
        snprintf(kn, sizeof(kn), "arg%d", j + 1);
        const char *a = pmi_msg_get(m, kn);
        if (!a) {
            loom_errf(err, errlen, "spawn: block without %s (argcnt=%d)", kn, argc);
            goto bad;
        }
        if (!(argv[j] = dup_bounded(a, "argument", err, errlen)))
            goto bad;
    }
    struct psrv_kv *info = NULL;
    cmd->ninfo = ninfo;
    int prc = v1_pairs(m, "info_key_", "info_val_", ninfo, &info, err, errlen);
    cmd->info = info;
    if (prc < 0)
        goto bad;
    if (!r->have_preput) {
        r->have_preput = true;
        r->pub.npreput = npp;
        if (v1_pairs(m, "preput_key_", "preput_val_", npp, &r->preput, err, errlen) < 0)
            goto bad;
    }
    r->filled++;
    if (r->filled < r->declared)
        return 0;
    if (req_finish(r, err, errlen) < 0)
        goto bad;
    return 1;
bad:
    spawn_req_free(r);
    *b = NULL;
    return -1;
}

/* ---- the server side ---------------------------------------------------- */

struct spawnsvc {
    int nwait;
    struct spawn_wait *w; /* [client index] */
};

struct spawnsvc *spawn_create(struct psrv *s)
{
    struct spawnsvc *sp = calloc(1, sizeof(*sp));
    if (!sp)
        return NULL;
    sp->nwait = s->cfg.local_count;
    if (!(sp->w = calloc((size_t)sp->nwait, sizeof(*sp->w)))) {
        free(sp);
        return NULL;
    }
    return sp;
}

void spawn_destroy(struct spawnsvc *sp)
{
    if (!sp)
        return;
    for (int i = 0; i < sp->nwait; i++) {
        free(sp->w[i].thrid);
        spawn_req_free(sp->w[i].build);
    }
    free(sp->w);
    free(sp);
}

struct spawn_wait *spawn_wait_of(struct psrv *s, struct client *c)
{
    return &s->spawn->w[c->idx];
}

void spawn_reply_error(struct psrv *s, struct client *c, const char *thrid, int rc,
                       const char *msg)
{
    c->proto->spawn_done(s, c, thrid, rc != 0 ? rc : -1, NULL, NULL, 0,
                         msg ? msg : "spawn failed");
}

void spawn_add_errcodes(struct pmi_out *o, const int *errcodes, int n)
{
    bool zeros = true;
    for (int i = 0; errcodes && i < n; i++)
        if (errcodes[i] != 0)
            zeros = false;
    if (n <= 0 || (zeros && n > ERRCODES_INLINE_MAX))
        return;
    size_t cap = (size_t)n * 12 + 1, len = 0;
    char *list = malloc(cap);
    if (!list) {
        o->err = -ENOMEM;
        return;
    }
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(list + len, cap - len, "%s%d", i ? "," : "",
                                errcodes ? errcodes[i] : 0);
    pmi_out_add(o, "errcodes", list);
    free(list);
}

void spawn_handle(struct psrv *s, struct client *c, struct spawn_req *r)
{
    char err[256] = "";
    const char *thrid = s->cur_thrid;
    struct spawn_wait *w = spawn_wait_of(s, c);

    if (w->on) {
        spawn_reply_error(s, c, thrid, -1, "spawn: this task already has a spawn in flight");
        spawn_req_free(r);
        return;
    }
    if (!s->ops.spawn) {
        const char *why = s->cfg.spawn_unsupported_msg ? s->cfg.spawn_unsupported_msg
                                                       : "spawn is not supported by this host";
        srv_warn(s, c, SRV_W_SPAWN, "rank %d: %s", c->rank, why);
        spawn_reply_error(s, c, thrid, -1, why);
        spawn_req_free(r);
        return;
    }
    r->pub.rank = c->rank;
    free(w->thrid);
    w->thrid = thrid ? strdup(thrid) : NULL;
    if (thrid && !w->thrid) {
        spawn_reply_error(s, c, thrid, 2, "spawn: out of memory");
        spawn_req_free(r);
        return;
    }
    w->id = ++s->spawn_seq;
    w->on = true;
    srv_log(s, PSRV_LOG_INFO, "rank %d spawns %d process%s (%d command%s, %d preput)",
            c->rank, r->pub.total, r->pub.total == 1 ? "" : "es", r->pub.ncmds,
            r->pub.ncmds == 1 ? "" : "s", r->pub.npreput);
    int rc = s->ops.spawn(s->arg, w->id, &r->pub, err, sizeof(err));
    spawn_req_free(r);
    if (rc < 0 && w->on) {
        w->on = false;
        srv_warn(s, c, SRV_W_SPAWN, "rank %d: spawn refused: %s", c->rank,
                 *err ? err : strerror(-rc));
        spawn_reply_error(s, c, w->thrid, -1, *err ? err : strerror(-rc));
    }
}

int psrv_spawn_done(struct psrv *s, uint64_t id, int rc, const char *jobid,
                    const int *errcodes, int n, const char *msg)
{
    struct client *c = NULL;
    struct spawn_wait *w = NULL;

    if (!s)
        return -EINVAL;
    for (int i = 0; i < s->cfg.local_count; i++)
        if (s->spawn->w[i].on && s->spawn->w[i].id == id) {
            c = &s->cl[i];
            w = &s->spawn->w[i];
        }
    if (!c)
        return -ENOENT;
    w->on = false;
    if (c->gone)
        return -ENOENT;
    if (rc != 0) {
        srv_log(s, PSRV_LOG_WARN, "rank %d: spawn failed: %s", c->rank,
                msg ? msg : "spawn failed");
        spawn_reply_error(s, c, w->thrid, rc, msg);
        return 0;
    }
    c->proto->spawn_done(s, c, w->thrid, 0, jobid, errcodes, n, NULL);
    return 0;
}

void spawn_client_lost(struct psrv *s, struct client *c)
{
    struct spawn_wait *w = spawn_wait_of(s, c);
    spawn_req_free(w->build);
    w->build = NULL;
}
