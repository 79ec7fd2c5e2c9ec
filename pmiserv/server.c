/* server.c - the pmiserv facade: client table, framing, protocol choice,
 * tracing, replies, client loss, tree message routing, timeouts, abort,
 * logging and quotas: what every protocol and every service shares.
 *
 * Contract: see pmiserv.h.  Per client, bytes are buffered until
 * pmi_frame_next() finds a whole request; the first request must be the
 * PMI-1 "cmd=init" line, whose pmi_version (1 or 2) picks the client's
 * protocol table (struct proto_ops: proto_pmi1.c or proto_pmi2.c) once;
 * every later request and deferred answer of that client goes through it.
 * A request that must wait (fence, ring, name service, node attribute,
 * spawn) waits in its service's own table, indexed by client;
 * this file only tells the services when a client is lost.
 *
 * Notes:
 *   - The server's own allocation failure while taking a request in (buffer,
 *     parse) is said as such ("out of memory"), never blamed on the rank as a
 *     malformed request; the rank is lost as for a reply (srv_client_oom).
 *   - A request that cannot be framed or parsed gets "cmd=error" with rc=-1
 *     in the client's protocol, then ops->abort naming the rank, and
 *     psrv_client_input() returns -EPROTO; later input from that client is
 *     ignored.  Other clients are not touched.
 *   - A reply that cannot be built or sent (out of memory) while its rank is
 *     there and waiting would hang the job: the rank is lost instead
 *     (srv_client_oom: later input is refused with -EPROTO, ops->abort names
 *     it).
 *   - A client line without init is accepted as PMI-1 (old clients), with a
 *     warning.
 *   - ops->abort is called at most once (s->aborted); after it, fences fail
 *     at once so no rank waits for a job that is being torn down.
 *   - Logging: vlog() is the one exit of every log line and srv_abort() of
 *     every abort text; both escape (srv_escape) so task bytes (keys, values,
 *     commands, abort messages, a peer's FENCE_FAIL text) never put a control
 *     byte in a log.  srv_warn() rate-limits what a rank can provoke; trace()
 *     stops after lim.trace_lines lines.  Quotas: srv_quota() (one line, the
 *     reply's text, then the job ends in srv_quota_flush()).
 *
 * One piece (about 900 lines): what every protocol and every service shares, in
 * short sections (shared semantics, lifecycle, client input, tree routing); the
 * protocols and services are in their own files (proto_pmi1.c, proto_pmi2.c,
 * fence.c, kvs.c, nameserv.c, ring.c, spawn.c, attrs.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attrs.h"
#include "blob.h"
#include "fence.h"
#include "ktree.h"
#include "kvs.h"
#include "kvsroute.h"
#include "msg.h"
#include "nameserv.h"
#include "psrv_int.h"
#include "ring.h"
#include "spawn.h"

#define TRACE_MAX 400 /* bytes of a request/reply shown in a trace line */
#define LOG_MAX 1536  /* bytes of a log line before escaping */

static const struct {
    const char *what; /* "<what> exceeded: <limit> <unit>" */
    const char *unit;
    const char *knob; /* mpi.conf key (mpiexec: LOOM_PMI_MAX_...) */
} limit_info[] = {
    [SRV_L_KVS_KEYS_RANK] = {"KVS quota of one rank", "keys", "LoomMaxKvsKeysPerRank"},
    [SRV_L_KVS_BYTES_RANK] = {"KVS quota of one rank", "bytes", "LoomMaxKvsBytesPerRank"},
    [SRV_L_KVS_KEYS_JOB] = {"KVS quota of the job", "keys", "LoomMaxKvsKeysPerJob"},
    [SRV_L_KVS_BYTES_JOB] = {"KVS quota of the job", "bytes", "LoomMaxKvsBytesPerJob"},
    [SRV_L_NA_COUNT] = {"node attribute quota", "attributes", "LoomMaxNodeAttrs"},
    [SRV_L_NA_BYTES] = {"node attribute quota", "bytes", "LoomMaxNodeAttrBytes"},
    [SRV_L_NAMES_COUNT] = {"published names quota", "names", "LoomMaxNames"},
    [SRV_L_NAMES_BYTES] = {"published names quota", "bytes", "LoomMaxNameBytes"},
};

static const char *const warn_kind_name[SRV_W_KINDS] = {
    [SRV_W_PUT] = "refused put", [SRV_W_UNKNOWN] = "unknown command",
    [SRV_W_INIT] = "init",       [SRV_W_NAMES] = "name service",
    [SRV_W_WAIT] = "wait",       [SRV_W_SPAWN] = "spawn",
};

char *srv_escape(char *dst, size_t dstlen, const char *src, size_t srclen)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0, i;

    if (dstlen == 0)
        return dst;
    for (i = 0; i < srclen; i++) {
        unsigned char ch = (unsigned char)src[i];
        bool plain = ch >= 0x20 && ch < 0x7f;
        size_t need = plain ? 1 : 4;
        if (o + need + 4 > dstlen) { /* room for "..." and the NUL */
            if (o + 4 <= dstlen)
                memcpy(dst + o, "...", 3), o += 3;
            break;
        }
        if (plain) {
            dst[o++] = (char)ch;
        } else {
            dst[o++] = '\\';
            dst[o++] = 'x';
            dst[o++] = hex[ch >> 4];
            dst[o++] = hex[ch & 15];
        }
    }
    dst[o] = '\0';
    return dst;
}

char *srv_strdup(const char *s)
{
    return s ? strdup(s) : NULL;
}

uint64_t srv_now(struct psrv *s)
{
    if (s->ops.now_ms)
        return s->ops.now_ms(s->arg);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void vlog(struct psrv *s, enum psrv_log_level lvl, const char *fmt, va_list ap)
{
    char buf[LOG_MAX], esc[4 * LOG_MAX + 4];
    if (!s->ops.log || lvl > s->cfg.log_level)
        return;
    int n = vsnprintf(buf, sizeof(buf), fmt, ap);
    if (n < 0)
        return;
    size_t len = (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1;
    s->ops.log(s->arg, lvl, srv_escape(esc, sizeof(esc), buf, len));
}

void srv_log(struct psrv *s, enum psrv_log_level lvl, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(s, lvl, fmt, ap);
    va_end(ap);
}

void srv_warn(struct psrv *s, struct client *c, enum srv_warn_kind k, const char *fmt,
              ...)
{
    va_list ap;

    if (!s->ops.log || s->cfg.log_level < PSRV_LOG_WARN)
        return;
    if (c->warns[k] < INT64_MAX)
        c->warns[k]++;
    if (c->warns[k] > s->lim.warn_burst) {
        s->suppressed++;
        if (c->warns[k] == s->lim.warn_burst + 1)
            srv_log(s, PSRV_LOG_WARN,
                    "rank %d: more %s warnings from this rank are suppressed (the "
                    "count comes when it ends)",
                    c->rank, warn_kind_name[k]);
        return;
    }
    va_start(ap, fmt);
    vlog(s, PSRV_LOG_WARN, fmt, ap);
    va_end(ap);
}

/* The counts of suppressed warnings of a client that ends. */
static void warn_summary(struct psrv *s, struct client *c)
{
    if (c->warns_told)
        return;
    c->warns_told = true;
    for (int k = 0; k < SRV_W_KINDS; k++)
        if (c->warns[k] > s->lim.warn_burst)
            srv_log(s, PSRV_LOG_WARN, "rank %d: %lld more %s warnings were suppressed",
                    c->rank, (long long)(c->warns[k] - s->lim.warn_burst),
                    warn_kind_name[k]);
}

void srv_quota_text(enum srv_limit which, int64_t limit, int rank, char *out,
                    size_t outlen)
{
    char who[32] = "the job";
    if (rank >= 0)
        snprintf(who, sizeof(who), "rank %d", rank);
    snprintf(out, outlen, "%s exceeded the %s: %lld %s (%s)", who, limit_info[which].what,
             (long long)limit, limit_info[which].unit, limit_info[which].knob);
}

const char *srv_quota(struct psrv *s, struct client *c, enum srv_limit which,
                      int64_t limit)
{
    int rank = c ? c->rank : -1;
    /* One line and one abort per server: the job ends with the first. */
    if (s->quota_rank == -2 && !s->aborted) {
        srv_quota_text(which, limit, rank, s->quota_text, sizeof(s->quota_text));
        s->quota_rank = rank;
        srv_log(s, PSRV_LOG_ERROR, "%s", s->quota_text);
        return s->quota_text;
    }
    s->suppressed++;
    return s->quota_text[0] ? s->quota_text : "over quota: the job is ending";
}

void srv_quota_flush(struct psrv *s)
{
    if (s->quota_rank == -2 || s->aborted)
        return;
    srv_abort(s, s->quota_rank, 1, "%s", s->quota_text);
}

void srv_abort(struct psrv *s, int rank, int exitcode, const char *fmt, ...)
{
    char raw[LOG_MAX], buf[LOG_MAX];
    va_list ap;

    if (s->aborted)
        return;
    s->aborted = true;
    va_start(ap, fmt);
    int n = vsnprintf(raw, sizeof(raw), fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    /* The text goes to the host's log, to srun's stderr, to other nodes and
     * to waiting ranks' replies: never with a control byte in it. */
    srv_escape(buf, sizeof(buf), raw,
               (size_t)n < sizeof(raw) ? (size_t)n : sizeof(raw) - 1);
    srv_log(s, PSRV_LOG_DEBUG, "abort: %s", buf); /* the host prints it */
    if (s->ops.abort)
        s->ops.abort(s->arg, rank, exitcode, buf);
    /* Nobody may keep waiting in a collective of a job that is going away. */
    fence_fail(s, rank, -1, buf);
    ring_fail(s, rank, buf);
    blob_fail(s, rank, buf);
    kr_fail(s, buf);
}

void psrv_abort(struct psrv *s, int rank, int exitcode, const char *msg)
{
    if (s)
        srv_abort(s, rank, exitcode, "%s", msg && *msg ? msg : "the job was aborted");
}

void psrv_client_finalized(struct psrv *s, int client)
{
    if (!s || client < 0 || client >= s->cfg.local_count)
        return;
    struct client *c = &s->cl[client];
    if (!c->finalized && !c->gone) {
        c->finalized = true;
        s->nfinalized++;
    }
}

int srv_child_index(const struct psrv *s, int node)
{
    for (int i = 0; i < s->nchildren; i++)
        if (s->children[i] == node)
            return i;
    return -1;
}

int srv_tree_send(struct psrv *s, int to, const struct msg *m)
{
    struct pack p;
    int rc;

    if (!s->ops.tree_send)
        return -ENOSYS;
    pack_init(&p);
    if ((rc = msg_encode(&p, m)) == 0) {
        srv_log(s, PSRV_LOG_DEBUG, "node %d -> node %d: %s epoch %u (%zu bytes)",
                s->cfg.nodeid, to, msg_type2str(m->type), m->epoch, p.len);
        rc = s->ops.tree_send(s->arg, to, p.buf, p.len);
    }
    pack_free(&p);
    if (rc < 0)
        srv_log(s, PSRV_LOG_ERROR, "cannot send %s to node %d: %s", msg_type2str(m->type),
                to, strerror(-rc));
    return rc;
}

static void trace(struct psrv *s, struct client *c, const char *dir, const char *buf,
                  size_t len)
{
    if (!s->ops.log || s->cfg.log_level < PSRV_LOG_TRACE)
        return;
    if (s->trace_lines >= s->lim.trace_lines) {
        if (s->trace_lines++ == s->lim.trace_lines)
            srv_log(s, PSRV_LOG_TRACE,
                    "trace stopped after %lld lines (LoomMaxTraceLines, "
                    "LOOM_PMI_MAX_TRACE_LINES)",
                    (long long)s->lim.trace_lines);
        else
            s->suppressed++;
        return;
    }
    s->trace_lines++;
    while (len > 0 && (buf[len - 1] == '\n'))
        len--;
    uint64_t t = srv_now(s);
    srv_log(s, PSRV_LOG_TRACE, "[%llu.%03llu] rank %d %s %.*s%s",
            (unsigned long long)(t / 1000), (unsigned long long)(t % 1000), c->rank, dir,
            (int)(len > TRACE_MAX ? TRACE_MAX : len), buf, len > TRACE_MAX ? "..." : "");
}

void reply_begin(struct psrv *s, struct client *c, struct pmi_out *o, const char *cmd,
                 const char *thrid)
{
    (void)s;
    pmi_out_begin(o, c->proto ? c->proto->v : PMI_V1, cmd);
    if (thrid)
        pmi_out_add(o, "thrid", thrid);
}

static void client_lost(struct psrv *s, struct client *c);

/* The server cannot go on serving c (no memory for its request or its reply):
 * the rank would wait forever for an answer, so it is lost: its later input
 * is refused (psrv_client_input returns -EPROTO and the host closes it) and
 * the job ends naming it.  what: "cannot build its reply: ..." etc. */
static void srv_client_oom(struct psrv *s, struct client *c, const char *what)
{
    if (c->bad || c->gone)
        return;
    c->bad = true;
    free(c->in);
    c->in = NULL;
    c->inlen = c->incap = 0;
    if (s->aborted) /* the job is ending already: just say what happened */
        srv_log(s, PSRV_LOG_ERROR, "rank %d lost: the PMI server %s", c->rank, what);
    else
        srv_abort(s, c->rank, 1, "rank %d lost: the PMI server %s", c->rank, what);
    client_lost(s, c);
}

void reply_send(struct psrv *s, struct client *c, struct pmi_out *o)
{
    char what[120];
    int rc = pmi_out_end(o);
    if (rc < 0) {
        snprintf(what, sizeof(what), "cannot build its reply: %s", strerror(-rc));
        srv_client_oom(s, c, what);
    } else if (!c->gone) {
        trace(s, c, "<-", o->buf, o->len);
        rc = s->ops.client_send(s->arg, c->idx, o->buf, o->len);
        if (rc == -EPIPE || rc == -ECONNRESET || rc == -ENOTCONN) {
            srv_log(s, PSRV_LOG_WARN, "rank %d: send failed: %s", c->rank, strerror(-rc));
            client_lost(s, c);
        } else if (rc < 0) {
            /* the rank is there, waiting, and its reply is lost */
            snprintf(what, sizeof(what), "cannot send its reply: %s", strerror(-rc));
            srv_client_oom(s, c, what);
        }
    }
    pmi_out_free(o);
}

void reply_simple(struct psrv *s, struct client *c, const char *cmd, int rc,
                  const char *msg)
{
    struct pmi_out o;
    reply_begin(s, c, &o, cmd, s->cur_thrid);
    pmi_out_addint(&o, "rc", rc);
    if (rc != 0 && msg)
        pmi_out_add(&o, c->proto ? c->proto->errkey : "msg", msg);
    reply_send(s, c, &o);
}

void reply_unsupported(struct psrv *s, struct client *c, const char *cmd,
                       const char *what)
{
    char text[128];
    snprintf(text, sizeof(text), "%s is not supported by this server", what);
    reply_simple(s, c, cmd, -1, text);
}

/* ---- shared semantics ------------------------------------------------ */

int srv_put(struct psrv *s, struct client *c, const char *key, const char *val, bool pmi1,
            const char **err)
{
    if (!key || !*key) {
        *err = "missing key";
        return 3; /* PMI_ERR_INVALID_ARG */
    }
    if (!val) {
        *err = "missing value";
        return 3;
    }
    if (strlen(key) > PMI_MAX_KEYLEN) {
        *err = "key longer than 64 bytes";
        return 5; /* PMI_ERR_INVALID_KEY_LENGTH */
    }
    if (strlen(val) > PMI_MAX_VALLEN) {
        *err = "value longer than 1024 bytes";
        return 7; /* PMI_ERR_INVALID_VAL_LENGTH */
    }
    if (pmi1 && strncmp(key, "PMI_", 4) == 0) {
        *err = "keys starting with PMI_ are reserved";
        return 4; /* PMI_ERR_INVALID_KEY */
    }
    /* Quotas: the rank is charged for new keys and for the bytes it adds;
     * the job's check counts what this node holds, pending puts in full. */
    size_t klen = strlen(key), vlen = strlen(val);
    const char *old = kvs_get(s->kvs, key);
    int64_t add = old ? (int64_t)vlen - (int64_t)strlen(old) : (int64_t)(klen + vlen);
    if (add < 0)
        add = 0;
    if (!old && c->kvs_keys + 1 > s->lim.kvs_keys_per_rank) {
        *err = srv_quota(s, c, SRV_L_KVS_KEYS_RANK, s->lim.kvs_keys_per_rank);
        return 2; /* PMI_ERR_NOMEM */
    }
    if (c->kvs_bytes + add > s->lim.kvs_bytes_per_rank) {
        *err = srv_quota(s, c, SRV_L_KVS_BYTES_RANK, s->lim.kvs_bytes_per_rank);
        return 2;
    }
    size_t plen;
    (void)kvs_pending(s->kvs, &plen);
    if ((int64_t)kvs_count(s->kvs) + kvs_pending_count(s->kvs) + 1 >
        s->lim.kvs_keys_per_job) {
        *err = srv_quota(s, c, SRV_L_KVS_KEYS_JOB, s->lim.kvs_keys_per_job);
        return 2;
    }
    if (kvs_bytes(s->kvs) + (int64_t)(plen + klen + vlen) > s->lim.kvs_bytes_per_job) {
        *err = srv_quota(s, c, SRV_L_KVS_BYTES_JOB, s->lim.kvs_bytes_per_job);
        return 2;
    }
    if (kvs_put_pending_as(s->kvs, key, val, kr_key_names_rank(key, c->rank)) < 0) {
        *err = "out of memory";
        return 2;
    }
    c->kvs_keys += old ? 0 : 1;
    c->kvs_bytes += add;
    return 0;
}

/* ---- lifecycle ------------------------------------------------------- */

static int check_config(const struct psrv_config *cfg, const struct psrv_ops *ops)
{
    if (cfg && ((int)cfg->kvs_mode < PSRV_KVS_AUTO || cfg->kvs_mode > PSRV_KVS_ONDEMAND ||
                cfg->kvs_auto_bytes < 0))
        return -EINVAL;
    if (!cfg || !ops || !ops->client_send || !cfg->jobid || cfg->size < 1 ||
        cfg->nnodes < 1 || cfg->nodeid < 0 || cfg->nodeid >= cfg->nnodes ||
        cfg->local_count < 1 || !cfg->local_ranks || cfg->tree_width < 1)
        return -EINVAL;
    if (cfg->nnodes > 1 && !ops->tree_send)
        return -EINVAL;
    for (int i = 0; i < cfg->local_count; i++)
        if (cfg->local_ranks[i] < 0 || cfg->local_ranks[i] >= cfg->size)
            return -EINVAL;
    if (cfg->rank_node)
        for (int r = 0; r < cfg->size; r++)
            if (cfg->rank_node[r] < 0 || cfg->rank_node[r] >= cfg->nnodes)
                return -EINVAL;
    if (cfg->npreput < 0 || cfg->npreput > PSRV_SPAWN_MAX_PREPUT ||
        (cfg->npreput > 0 && !cfg->preput))
        return -EINVAL;
    for (int i = 0; i < cfg->npreput; i++)
        if (!cfg->preput[i].key || !*cfg->preput[i].key || !cfg->preput[i].val)
            return -EINVAL;
    return 0;
}

static int64_t limit_of(int64_t v, int64_t def)
{
    return v == 0 ? def : v < 0 ? INT64_MAX : v;
}

static void resolve_limits(struct psrv_limits *o, const struct psrv_limits *l)
{
    o->kvs_keys_per_rank = limit_of(l->kvs_keys_per_rank, PSRV_DEF_KVS_KEYS_PER_RANK);
    o->kvs_bytes_per_rank = limit_of(l->kvs_bytes_per_rank, PSRV_DEF_KVS_BYTES_PER_RANK);
    o->kvs_keys_per_job = limit_of(l->kvs_keys_per_job, PSRV_DEF_KVS_KEYS_PER_JOB);
    o->kvs_bytes_per_job = limit_of(l->kvs_bytes_per_job, PSRV_DEF_KVS_BYTES_PER_JOB);
    o->nodeattr_count = limit_of(l->nodeattr_count, PSRV_DEF_NODEATTR_COUNT);
    o->nodeattr_bytes = limit_of(l->nodeattr_bytes, PSRV_DEF_NODEATTR_BYTES);
    o->names_count = limit_of(l->names_count, PSRV_DEF_NAMES_COUNT);
    o->names_bytes = limit_of(l->names_bytes, PSRV_DEF_NAMES_BYTES);
    o->trace_lines = limit_of(l->trace_lines, PSRV_DEF_TRACE_LINES);
    o->warn_burst = limit_of(l->warn_burst, PSRV_DEF_WARN_BURST);
}

static int *dup_ints(const int *a, int n)
{
    int *b = malloc((size_t)n * sizeof(int));
    if (b)
        memcpy(b, a, (size_t)n * sizeof(int));
    return b;
}

/* A spawned job's preput pairs: committed before any task can ask. */
static int seed_preput(struct psrv *s, const struct psrv_config *cfg)
{
    size_t len;

    for (int i = 0; i < cfg->npreput; i++)
        if (kvs_put_pending(s->kvs, cfg->preput[i].key, cfg->preput[i].val) < 0)
            return -ENOMEM;
    const void *blob = kvs_pending(s->kvs, &len);
    int rc = blob ? kvs_commit_blob(s->kvs, blob, len) : 0;
    kvs_pending_clear(s->kvs);
    return rc;
}

struct psrv *psrv_create(const struct psrv_config *cfg, const struct psrv_ops *ops,
                         void *arg)
{
    struct psrv *s;
    int rc;

    if ((rc = check_config(cfg, ops)) < 0) {
        errno = -rc;
        return NULL;
    }
    if (!(s = calloc(1, sizeof(*s))))
        return NULL;
    s->cfg = *cfg;
    s->ops = *ops;
    s->arg = arg;
    resolve_limits(&s->lim, &cfg->limits);
    s->quota_rank = -2;
    s->jobid = strdup(cfg->jobid);
    s->local_ranks = dup_ints(cfg->local_ranks, cfg->local_count);
    s->cl = calloc((size_t)cfg->local_count, sizeof(*s->cl));
    s->children = calloc((size_t)cfg->tree_width, sizeof(int));
    if (!s->jobid || !s->local_ranks || !s->cl || !s->children)
        goto nomem;
    if (cfg->rank_node && !(s->rank_node = dup_ints(cfg->rank_node, cfg->size)))
        goto nomem;
    if (cfg->rank_appnum && !(s->rank_appnum = dup_ints(cfg->rank_appnum, cfg->size)))
        goto nomem;
    if (cfg->hwloc_xmlfile && !(s->hwloc_xmlfile = strdup(cfg->hwloc_xmlfile)))
        goto nomem;
    if (cfg->spawner_jobid && !(s->spawner_jobid = strdup(cfg->spawner_jobid)))
        goto nomem;
    if (cfg->spawn_unsupported_msg &&
        !(s->spawn_unsupported_msg = strdup(cfg->spawn_unsupported_msg)))
        goto nomem;
    s->cfg.jobid = s->jobid;
    s->cfg.local_ranks = s->local_ranks;
    s->cfg.rank_node = s->rank_node;
    s->cfg.rank_appnum = s->rank_appnum;
    s->cfg.hwloc_xmlfile = s->hwloc_xmlfile;
    s->cfg.spawner_jobid = s->spawner_jobid;
    s->cfg.spawn_unsupported_msg = s->spawn_unsupported_msg;
    s->cfg.npreput = 0; /* the pairs are in the KVS (below), not kept */
    s->cfg.preput = NULL;
    s->cfg.process_mapping = NULL;

    if (cfg->process_mapping) {
        if (!(s->mapping = strdup(cfg->process_mapping)))
            goto nomem;
    } else if (cfg->rank_node) {
        char buf[1100];
        rc = psrv_process_mapping(cfg->rank_node, cfg->size, buf, sizeof(buf));
        if (rc >= 0) {
            if (!(s->mapping = strdup(buf)))
                goto nomem;
        }
    }
    snprintf(s->universe, sizeof(s->universe), "%d",
             cfg->universe_size > 0 ? cfg->universe_size : cfg->size);

    s->parent = ktree_parent(cfg->tree_width, cfg->nnodes, cfg->nodeid);
    s->nchildren = ktree_children(cfg->tree_width, cfg->nnodes, cfg->nodeid, s->children);
    if (s->nchildren < 0)
        s->nchildren = 0;

    for (int i = 0; i < cfg->local_count; i++) {
        s->cl[i].idx = i;
        s->cl[i].rank = cfg->local_ranks[i];
    }
    if (!(s->kvs = kvs_create()) || !(s->na = nodeattrs_create(s)) ||
        !(s->fence = fence_create(s)) || !(s->ring = ring_create(s)) ||
        !(s->ns = ns_create(s)) || !(s->blob = blob_create(s)) ||
        !(s->spawn = spawn_create(s)) || !(s->kvsr = kr_create(s)))
        goto nomem;
    kvs_set_limits(s->kvs, s->lim.kvs_keys_per_job, s->lim.kvs_bytes_per_job);
    if (seed_preput(s, cfg) < 0)
        goto nomem;
    if (!s->mapping)
        srv_log(s, PSRV_LOG_WARN, "no PMI_process_mapping for this job (%s)",
                cfg->rank_node ? "longer than 1024 characters" : "no rank layout");
    srv_log(s, PSRV_LOG_DEBUG,
            "node %d of %d: %d local ranks, parent %d, %d children, mapping %s",
            cfg->nodeid, cfg->nnodes, cfg->local_count, s->parent, s->nchildren,
            s->mapping ? s->mapping : "(none)");
    return s;
nomem:
    psrv_destroy(s);
    errno = ENOMEM;
    return NULL;
}

void psrv_destroy(struct psrv *s)
{
    int saved = errno;
    if (!s)
        return;
    if (s->cl) {
        for (int i = 0; i < s->cfg.local_count; i++) {
            struct client *c = &s->cl[i];
            free(c->in);
        }
    }
    kvs_destroy(s->kvs);
    nodeattrs_destroy(s->na);
    fence_destroy(s->fence);
    ring_destroy(s->ring);
    ns_destroy(s->ns);
    blob_destroy(s->blob);
    spawn_destroy(s->spawn);
    kr_destroy(s->kvsr);
    free(s->cl);
    free(s->children);
    free(s->jobid);
    free(s->local_ranks);
    free(s->rank_node);
    free(s->rank_appnum);
    free(s->hwloc_xmlfile);
    free(s->spawner_jobid);
    free(s->spawn_unsupported_msg);
    free(s->mapping);
    free(s);
    errno = saved;
}

/* ---- client input ---------------------------------------------------- */

static int malformed(struct psrv *s, struct client *c, const char *what)
{
    struct pmi_out o;

    reply_begin(s, c, &o, "error", NULL);
    pmi_out_add(&o, "rc", "-1");
    pmi_out_addf(&o, c->proto ? c->proto->errkey : "msg", "malformed request: %s", what);
    reply_send(s, c, &o);
    c->bad = true;
    free(c->in);
    c->in = NULL;
    c->inlen = c->incap = 0;
    srv_abort(s, c->rank, 1, "rank %d sent a malformed PMI request: %s", c->rank, what);
    return -EPROTO;
}

/* The init line: fixes the protocol of the connection. */
static int handle_init(struct psrv *s, struct client *c, const struct pmi_msg *m)
{
    struct pmi_out o;
    int ver = 0, sub = 0;

    if (pmi_msg_get_int(m, "pmi_version", &ver) < 0)
        ver = 0;
    if (pmi_msg_get_int(m, "pmi_subversion", &sub) < 0)
        sub = 0;
    reply_begin(s, c, &o, "response_to_init", s->cur_thrid);
    if (ver == 1 || ver == 2) {
        pmi_out_add(&o, "rc", "0");
        pmi_out_add(&o, "pmi_version", ver == 1 ? "1" : "2");
        pmi_out_add(&o, "pmi_subversion", ver == 1 ? "1" : "0");
        reply_send(s, c, &o); /* the init reply is always a PMI-1 line */
        c->proto = ver == 1 ? &proto_pmi1 : &proto_pmi2;
        c->v = c->proto->v;
        c->inited = true;
        srv_log(s, PSRV_LOG_DEBUG, "rank %d speaks PMI-%d", c->rank, ver);
        return 0;
    }
    pmi_out_add(&o, "rc", "-1");
    pmi_out_add(&o, "pmi_version", "2");
    pmi_out_add(&o, "pmi_subversion", "0");
    pmi_out_addf(&o, "msg", "unsupported PMI version %d.%d (1.1 and 2.0 are)", ver, sub);
    reply_send(s, c, &o);
    srv_warn(s, c, SRV_W_INIT, "rank %d asked for PMI version %d.%d", c->rank, ver, sub);
    return 0;
}

static int handle_one(struct psrv *s, struct client *c, const char *body, size_t blen)
{
    struct pmi_msg m;
    int rc;

    trace(s, c, "->", body, blen);
    rc = c->proto ? c->proto->parse(&m, body, blen) : pmi_msg_parse_v1(&m, body, blen);
    if (rc == -ENOMEM) { /* the server's failure, not the rank's */
        srv_client_oom(s, c, "is out of memory reading its request");
        return -EPROTO;
    }
    if (rc < 0) {
        char what[320], show[256];
        snprintf(what, sizeof(what), "cannot parse \"%s\" (%s)",
                 srv_escape(show, sizeof(show), body, blen > 60 ? 60 : blen),
                 strerror(-rc));
        return malformed(s, c, what);
    }
    if (m.n < 1) {
        pmi_msg_free(&m);
        return malformed(s, c, "empty request");
    }
    s->cur_thrid = pmi_msg_get(&m, "thrid");
    if (!c->proto) {
        if (strcmp(pmi_msg_cmd(&m), "init") == 0) {
            rc = handle_init(s, c, &m);
            goto out;
        }
        srv_warn(s, c, SRV_W_INIT, "rank %d sent %s before init: assuming PMI-1", c->rank,
                 pmi_msg_cmd(&m));
        c->proto = &proto_pmi1;
        c->v = c->proto->v;
    }
    rc = c->proto->dispatch(s, c, &m);
out:
    s->cur_thrid = NULL;
    pmi_msg_free(&m);
    srv_quota_flush(s); /* after the reply: the task sees the error first */
    return rc;
}

int psrv_client_input(struct psrv *s, int client, const char *buf, size_t len)
{
    struct client *c;

    if (!s || client < 0 || client >= s->cfg.local_count)
        return -EINVAL;
    c = &s->cl[client];
    if (c->bad)
        return -EPROTO;
    if (c->finalized)
        return 1;
    if (c->gone || len == 0)
        return 0;
    if (c->inlen + len > c->incap) {
        size_t cap = c->incap ? c->incap : 1024;
        while (cap < c->inlen + len)
            cap *= 2;
        char *n = realloc(c->in, cap);
        if (!n) {
            srv_client_oom(s, c, "is out of memory buffering its request");
            return -EPROTO;
        }
        c->in = n;
        c->incap = cap;
    }
    memcpy(c->in + c->inlen, buf, len);
    c->inlen += len;

    size_t off = 0;
    int rc = 0;
    while (off < c->inlen) {
        size_t flen, blen;
        const char *body;
        int r = pmi_frame_next(c->v, c->in + off, c->inlen - off, &flen, &body, &blen);
        if (r == 0)
            break;
        if (r < 0) {
            char what[160], show[48];
            size_t n = c->inlen - off < 40 ? c->inlen - off : 40;
            for (size_t i = 0; i < n; i++) {
                unsigned char ch = (unsigned char)c->in[off + i];
                show[i] = ch >= 0x20 && ch < 0x7f ? (char)ch : '.';
            }
            show[n] = '\0';
            snprintf(what, sizeof(what), "%s%s at \"%s\"",
                     r == -EMSGSIZE ? "request too long" : "bad framing",
                     c->proto ? c->proto->framing : proto_pmi1.framing, show);
            return malformed(s, c, what);
        }
        rc = handle_one(s, c, body, blen);
        off += flen;
        if (rc != 0 || c->bad)
            break;
    }
    if (c->bad)
        return -EPROTO;
    if (rc == 1 || c->finalized) {
        c->inlen = 0;
        return 1;
    }
    if (off > 0) {
        memmove(c->in, c->in + off, c->inlen - off);
        c->inlen -= off;
    }
    return rc < 0 ? rc : 0;
}

static void client_lost(struct psrv *s, struct client *c)
{
    if (c->gone)
        return;
    c->gone = true;
    warn_summary(s, c);
    if (!c->finalized) {
        c->dead = true;
        srv_log(s, c->inited ? PSRV_LOG_WARN : PSRV_LOG_INFO,
                "rank %d hung up without PMI finalize", c->rank);
    }
    nodeattrs_client_lost(s, c);
    ns_client_lost(s, c);
    spawn_client_lost(s, c);
    kr_client_lost(s, c);
    if (c->dead) {
        fence_client_lost(s, c);
        ring_client_lost(s, c);
        blob_client_lost(s, c);
    }
}

void psrv_client_gone(struct psrv *s, int client)
{
    if (!s || client < 0 || client >= s->cfg.local_count)
        return;
    client_lost(s, &s->cl[client]);
}

/* ---- tree ------------------------------------------------------------ */

int srv_route(struct psrv *s, int dest, struct msg *m)
{
    int hop = ktree_next_hop(s->cfg.tree_width, s->cfg.nnodes, s->cfg.nodeid, dest);
    if (hop < 0)
        return -EINVAL;
    m->from = s->cfg.nodeid;
    return srv_tree_send(s, hop, m);
}

int psrv_tree_input(struct psrv *s, int from, const void *buf, size_t len)
{
    struct msg m;
    int rc;

    if (!s)
        return -EINVAL;
    if ((rc = msg_decode(&m, buf, len)) < 0 || m.from != from) {
        char text[160];
        snprintf(text, sizeof(text),
                 "node %d: undecodable tree message (%zu bytes) from node %d",
                 s->cfg.nodeid, len, from);
        srv_log(s, PSRV_LOG_ERROR, "%s", text);
        if (fence_state(s->fence) == FENCE_COLLECT ||
            fence_state(s->fence) == FENCE_WAIT_PARENT)
            fence_fail(s, -1, -1, text);
        return -EPROTO;
    }
    srv_log(s, PSRV_LOG_DEBUG, "node %d <- node %d: %s epoch %u (%zu bytes)",
            s->cfg.nodeid, from, msg_type2str(m.type), m.epoch, len);
    switch (m.type) {
    case MSG_FENCE_UP:
    case MSG_FENCE_DOWN:
    case MSG_FENCE_FAIL:
        return fence_tree_input(s, &m);
    case MSG_NS_REQ:
    case MSG_NS_RESP:
        rc = ns_tree_input(s, &m);
        srv_quota_flush(s);
        break;
    case MSG_RING_UP:
    case MSG_RING_DOWN:
        rc = ring_tree_input(s, &m);
        break;
    case MSG_COLL_UP:
    case MSG_COLL_DOWN:
    case MSG_DMDX_REQ:
    case MSG_DMDX_RESP:
        rc = blob_tree_input(s, &m);
        break;
    case MSG_KVS_REQ:
    case MSG_KVS_RESP:
        rc = kr_tree_input(s, &m);
        break;
    default:
        rc = -EPROTO;
    }
    if (rc == -EPROTO)
        srv_log(s, PSRV_LOG_ERROR, "node %d: bad %s from node %d dropped", s->cfg.nodeid,
                msg_type2str(m.type), from);
    return rc;
}

void psrv_tree_gone(struct psrv *s, int node)
{
    if (!s)
        return;
    srv_log(s, PSRV_LOG_WARN, "node %d: link to node %d is gone", s->cfg.nodeid, node);
    fence_link_gone(s, node);
    ring_link_gone(s, node);
    blob_link_gone(s, node);
    kr_link_gone(s, node);
}

static int min_deadline(int a, int b)
{
    if (a < 0)
        return b;
    if (b < 0)
        return a;
    return a < b ? a : b;
}

int psrv_tick(struct psrv *s)
{
    if (!s)
        return -1;
    uint64_t now = srv_now(s);
    int next = fence_tick(s, now);
    next = min_deadline(next, ring_tick(s, now));
    next = min_deadline(next, ns_tick(s, now));
    next = min_deadline(next, nodeattrs_tick(s, now));
    next = min_deadline(next, blob_tick(s, now));
    next = min_deadline(next, kr_tick(s, now));
    return next;
}

void psrv_usage(const struct psrv *s, struct psrv_usage *u)
{
    memset(u, 0, sizeof(*u));
    if (!s)
        return;
    size_t plen;
    u->kvs_keys = kvs_count(s->kvs);
    u->kvs_bytes = kvs_bytes(s->kvs);
    (void)kvs_pending(s->kvs, &plen);
    u->kvs_pending_bytes = (int64_t)plen;
    nodeattrs_usage(s, &u->nodeattr_count, &u->nodeattr_bytes);
    ns_usage(s, &u->names_count, &u->names_bytes);
    u->trace_lines =
        s->trace_lines < s->lim.trace_lines ? s->trace_lines : s->lim.trace_lines;
    u->suppressed = s->suppressed;
    kr_usage(s, &u->kvs_cache_keys, &u->kvs_remote_gets, &u->kvs_served);
    u->last_fence_ondemand = fence_last_ondemand(s->fence);
}

int psrv_clients_finalized(const struct psrv *s)
{
    return s ? s->nfinalized : 0;
}

int psrv_fence_epoch(const struct psrv *s)
{
    return s ? fence_epoch(s->fence) : 0;
}
