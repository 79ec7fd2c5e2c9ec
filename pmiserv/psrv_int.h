/* psrv_int.h - internals shared by the pmiserv modules (not installed).
 *
 * Contract:
 *   struct psrv and struct client are visible to server.c, the two protocol
 *   files and the collective modules (fence, ring, name service, attrs).
 *   Everything here runs on the host's one thread; no callback re-enters.
 *
 *   Each wire protocol a task may speak over its socket (PMI-1, PMI-2) is
 *   one struct proto_ops (proto_pmi1.c, proto_pmi2.c), chosen once per
 *   client when its init names the version (server.c); the core never asks
 *   which protocol a client speaks, it calls c->proto.  PMIx is not one of
 *   them: the host serves it itself (pmixsrv/) and uses the core only
 *   through the host-side services of pmiserv.h (blob collectives, direct
 *   modex, name service, abort, psrv_client_finalized).
 *
 *   Deferred replies (fence, ring, name service, node attribute wait) are
 *   recorded by their service, in its own per-client table (indexed by
 *   client->idx) with a copy of the request's thrid, and answered later
 *   through the *_done operations of c->proto.  struct client keeps what
 *   every request needs: identity, protocol, lifecycle, input buffer,
 *   quotas and warning counts.
 */
#ifndef LOOM_PMISERV_INT_H
#define LOOM_PMISERV_INT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "pmi_wire.h"
#include "pmiserv.h"

struct fence;
struct ring;
struct nameserv;
struct kvs;
struct nodeattrs;
struct msg;
struct blobsvc;
struct spawnsvc;
struct kvsroute;

/* Kinds of warnings a task can provoke at will: each is rate-limited per
 * client (srv_warn). */
enum srv_warn_kind {
    SRV_W_PUT,     /* put / kvs-put / putnodeattr refused */
    SRV_W_UNKNOWN, /* unknown or unsupported command */
    SRV_W_INIT,    /* init problems: before init, bad version, fullinit claims */
    SRV_W_NAMES,   /* name service refusals */
    SRV_W_WAIT,    /* gave up waiting (node attribute) */
    SRV_W_SPAWN,   /* spawn refused */
    SRV_W_KINDS
};

/* The quotas (struct psrv_limits); see srv_quota(). */
enum srv_limit {
    SRV_L_KVS_KEYS_RANK,
    SRV_L_KVS_BYTES_RANK,
    SRV_L_KVS_KEYS_JOB,
    SRV_L_KVS_BYTES_JOB,
    SRV_L_NA_COUNT,
    SRV_L_NA_BYTES,
    SRV_L_NAMES_COUNT,
    SRV_L_NAMES_BYTES,
};

struct client;
struct psrv;

/* One wire protocol: how a request is parsed and dispatched, and how each
 * kind of deferred answer is worded.  thrid: the request's thread id to
 * echo (may be NULL).  msg may be NULL when rc == 0.  An operation is NULL
 * when the protocol has no request that waits for it (PMI-1: node
 * attributes, ring); the services only park clients whose request asked. */
struct proto_ops {
    enum pmi_version v;  /* framing and reply syntax */
    const char *errkey;  /* reply key of an error text: "msg" or "errmsg" */
    const char *framing; /* for a framing error: " (PMI-1 line)" */
    int (*parse)(struct pmi_msg *m, const char *body, size_t len);
    /* Handle one parsed request: 0, 1 (finalized) or -EPROTO. */
    int (*dispatch)(struct psrv *s, struct client *c, const struct pmi_msg *m);
    void (*fence_done)(struct psrv *s, struct client *c, const char *thrid, int rc,
                       const char *msg);
    void (*nodeattr_done)(struct psrv *s, struct client *c, const char *thrid, int rc,
                          const char *val, const char *msg);
    void (*ns_done)(struct psrv *s, struct client *c, const char *thrid, int op, int rc,
                    const char *port, const char *msg);
    void (*ring_done)(struct psrv *s, struct client *c, const char *thrid, int rc,
                      int count, const char *left, const char *right, const char *msg);
    /* a get asked of other nodes (kvsroute.c): rc 0 with val (NULL: not
     * found, worded as any miss), or rc != 0 and msg */
    void (*get_done)(struct psrv *s, struct client *c, const char *thrid, int rc,
                     const char *val, const char *msg);
    /* spawn's one answer: rc 0 with jobid and one code per process (n of them,
     * errcodes NULL: all 0), else msg; now (a refusal) or from psrv_spawn_done */
    void (*spawn_done)(struct psrv *s, struct client *c, const char *thrid, int rc,
                       const char *jobid, const int *errcodes, int n, const char *msg);
};
extern const struct proto_ops proto_pmi1; /* proto_pmi1.c */
extern const struct proto_ops proto_pmi2; /* proto_pmi2.c */

struct client {
    int idx;
    int rank;
    enum pmi_version v;            /* PMI_V_UNKNOWN until init: frames as PMI-1 */
    const struct proto_ops *proto; /* NULL until init (or a first request) */
    bool inited;
    bool finalized;
    bool gone;
    bool dead; /* gone without finalize */
    bool bad;  /* sent a malformed request: ignored from now on */
    char *in;  /* bytes not yet framed */
    size_t inlen, incap;

    /* Waiting state lives in each service, indexed by idx (fence.c,
     * attrs.c, nameserv.c, ring.c, spawn.c). */

    int64_t kvs_keys, kvs_bytes; /* this rank's KVS charge (quotas) */
    int64_t warns[SRV_W_KINDS];  /* warnings of each kind (rate limit) */
    bool warns_told;             /* the suppressed counts were logged */
};

struct psrv {
    struct psrv_config cfg; /* arrays below are our copies */
    char *jobid;
    int *local_ranks;
    int *rank_node;
    int *rank_appnum;
    char *hwloc_xmlfile;
    char *spawner_jobid;
    char *spawn_unsupported_msg;
    char *mapping; /* PMI_process_mapping, NULL if unknown/too long */
    char universe[16];

    struct psrv_ops ops;
    void *arg;

    struct client *cl; /* [cfg.local_count] */
    int nfinalized;
    bool aborted;

    int parent;    /* parent node or -1 */
    int nchildren; /* child nodes in the fence tree */
    int *children;

    struct kvs *kvs;
    struct nodeattrs *na;
    struct fence *fence;
    struct ring *ring;
    struct nameserv *ns;
    struct blobsvc *blob;
    struct spawnsvc *spawn;
    struct kvsroute *kvsr;

    uint64_t spawn_seq; /* ids of spawn requests given to the host */
    const char *cur_thrid; /* thrid of the request being handled, or NULL */

    struct psrv_limits lim; /* resolved: every field > 0, or INT64_MAX */
    int64_t trace_lines;    /* trace lines logged so far */
    int64_t suppressed;     /* log lines not written (rate limits, trace cap) */
    int quota_rank;         /* a quota was crossed by this rank: abort after */
    char quota_text[256];   /* ... the reply, with this text (quota_rank >= 0) */
};

/* server.c */
void srv_log(struct psrv *s, enum psrv_log_level lvl, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void srv_abort(struct psrv *s, int rank, int exitcode, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
uint64_t srv_now(struct psrv *s);
/* Encode and send one tree message; 0 or -errno (logged). */
int srv_tree_send(struct psrv *s, int to, const struct msg *m);
/* Send a routed message (origin/dest set) one hop towards dest; sets
 * m->from.  0 or -errno. */
int srv_route(struct psrv *s, int dest, struct msg *m);
/* Index of child node `node` in s->children, or -1. */
int srv_child_index(const struct psrv *s, int node);
char *srv_strdup(const char *s); /* NULL-safe strdup */
/* A warning rank c can provoke at will: logged at PSRV_LOG_WARN for the first
 * lim.warn_burst of its kind, then one "suppressed" line; the count comes when
 * the client ends. */
void srv_warn(struct psrv *s, struct client *c, enum srv_warn_kind k, const char *fmt,
              ...) __attribute__((format(printf, 4, 5)));
/* Rank c (may be NULL: the job) crossed quota `which` whose value is `limit`:
 * log one line naming the rank and the limit, keep the text for the reply
 * (returned) and end the job once the current request is answered. */
const char *srv_quota(struct psrv *s, struct client *c, enum srv_limit which,
                      int64_t limit);
/* End the job now if a quota was crossed (srv_quota); the core calls it
 * once the request, tree message or host call that crossed it is answered. */
void srv_quota_flush(struct psrv *s);
/* The text for quota `which` without logging or aborting (tree side). */
void srv_quota_text(enum srv_limit which, int64_t limit, int rank, char *out,
                    size_t outlen);
/* Copy src to dst (dstlen bytes, NUL-ended, truncated with "..."), control
 * bytes, DEL and bytes >= 0x80 as \xNN.  Returns dst. */
char *srv_escape(char *dst, size_t dstlen, const char *src, size_t srclen);

/* Reply builders: begin adds cmd and the thrid to echo (may be NULL). */
void reply_begin(struct psrv *s, struct client *c, struct pmi_out *o, const char *cmd,
                 const char *thrid);
void reply_send(struct psrv *s, struct client *c, struct pmi_out *o);
/* A reply of cmd with rc, and on failure msg under the protocol's error key
 * (c->proto->errkey); the thrid echoed is the current request's. */
void reply_simple(struct psrv *s, struct client *c, const char *cmd, int rc,
                  const char *msg);
/* rc=-1 and "<what> is not supported by this server": requests the core
 * knows but no host serves. */
void reply_unsupported(struct psrv *s, struct client *c, const char *cmd,
                       const char *what);

/* Validate and record a put of client c (server.c).  Returns the protocol
 * rc (0 ok) and sets *err to a message for rc != 0.  Limits: key 1..64 B,
 * value <= 1024 B; PMI-1 keys starting with "PMI_" are reserved; the KVS
 * quotas of struct psrv_limits (rc 2, PMI_ERR_NOMEM, and the job ends). */
int srv_put(struct psrv *s, struct client *c, const char *key, const char *val, bool pmi1,
            const char **err);
/* Job attribute value, or NULL when unknown (attrs.c). */
const char *attrs_job_get(struct psrv *s, const char *key);

#endif /* LOOM_PMISERV_INT_H */
