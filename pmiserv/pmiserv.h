/* pmiserv.h - the PMI server core: one node's share of a job's PMI service.
 *
 * Contract:
 *   A struct psrv serves the tasks of ONE node of ONE job (a slurmstepd, or
 *   the standalone launcher, which is node 0 of 1).  It speaks PMI-1 and PMI-2
 *   on every client connection (detected per connection from the init line),
 *   keeps the job's key-value space, node and job attributes, and runs the
 *   fence (PMI-1 barrier == PMI-2 kvs-fence) across nodes over a k-ary tree
 *   of psrv instances rooted at node 0.
 *
 *   It does no I/O and has no Slurm inside: the host feeds it bytes
 *   (psrv_client_input, psrv_tree_input) and time (psrv_tick), and it calls
 *   back through struct psrv_ops to write to clients, to send tree messages,
 *   to abort the job and to log.  It is not thread safe: the host calls it
 *   from one thread, and no callback may re-enter it.
 *
 *   Clients are numbered by the host 0..cfg.local_count-1; client i is the
 *   task of global rank cfg.local_ranks[i].
 *
 * Notes:
 *   - Every request gets a reply, in the client's protocol; unsupported
 *     requests (job-connect, spawn when the host has no ops->spawn) get rc!=0
 *     with a message.
 *   - Spawn (PMI-2 spawn, PMI-1 mcmd=spawn blocks) is parsed and bounded here
 *     (PSRV_SPAWN_MAX_*) and handed to the host through ops->spawn; the host
 *     starts the new job (it has its own psrv, configured with spawner_jobid
 *     and the preput pairs) and answers with psrv_spawn_done().
 *   - A request that cannot be parsed makes the core reply with an error if
 *     it can, call ops->abort naming the rank, and return -EPROTO: the host
 *     then closes that client.  Other clients are never affected by it.
 *   - Fence messages carry an epoch; duplicates and stale epochs are dropped;
 *     a fence that does not complete within cfg.fence_timeout_ms of its first
 *     local arrival fails: waiting clients get rc!=0 and ops->abort is called
 *     with a message naming the missing ranks or nodes.
 *   - A client that hung up after init without finalize is "dead": a fence
 *     that needs it fails at once (abort naming the rank), not at timeout.
 *     So does a client that already finalized.
 *   - A failed fence (or any ops->abort) is flooded over the tree as a
 *     FENCE_FAIL message: every node's ops->abort is called once with the
 *     first node's message, and every rank waiting in a fence or ring on
 *     any node gets rc!=0.  After ops->abort, new fences fail at once.
 *   - The fence timeout runs from the first local arrival, so a job whose
 *     ranks legitimately reach a fence far apart (long computation before
 *     a barrier) needs a generous fence_timeout_ms (minutes); crashed ranks
 *     are caught by psrv_client_gone without waiting for it.  The same
 *     timeout bounds name-service requests to node 0, rings,
 *     info-getnodeattr wait=TRUE, and gets asked of other nodes in the
 *     on-demand KVS mode (enum psrv_kvs_mode; all answer rc!=0, no abort).
 *   - Every request and reply is logged at PSRV_LOG_TRACE with the rank and
 *     the time (ops->now_ms), up to limits.trace_lines lines per server; then
 *     one line says the trace stopped.
 *   - Quotas (struct psrv_limits) bound what tasks make the server hold: KVS
 *     keys and bytes per rank and per job, node attributes, published names.
 *   - Every log line and abort text passes through one escaper: control
 *     bytes, DEL and bytes >= 0x80 (task-provided text included) become \xNN,
 *     so ops->log and ops->abort never see a newline or an escape sequence.
 *     Warnings a rank can provoke at will are rate-limited per rank and kind
 *     (limits.warn_burst lines, then one line saying more are suppressed,
 *     and a count when the rank ends).
 *
 * See also: doc/design.md (data path of a fence), common/pmi_wire.h.
 */
#ifndef LOOM_PMISERV_H
#define LOOM_PMISERV_H

#include <stddef.h>
#include <stdint.h>

struct psrv;

enum psrv_log_level {
    PSRV_LOG_ERROR = 0,
    PSRV_LOG_WARN = 1,
    PSRV_LOG_INFO = 2,
    PSRV_LOG_DEBUG = 3,
    PSRV_LOG_TRACE = 4, /* one line per PMI request and reply */
};

/* Quotas on what tasks can make this server hold, and caps on what they can
 * make it log.  In struct psrv_config: 0 takes the default below, a negative
 * value means no limit.  Crossing a quota: the request gets rc!=0 with a
 * message naming the limit, the server logs one line naming the rank and the
 * limit, and the job is ended through ops->abort with the same text.
 * KVS bytes are key + value lengths; a rank's counts include its puts waiting
 * for the next fence and stay after it (a re-put of a committed key counts
 * only what it adds).  The job's KVS is checked here against what this node
 * sees (committed + this node's pending) and again when a fence commits. */
struct psrv_limits {
    int64_t kvs_keys_per_rank;  /* keys one rank may put */
    int64_t kvs_bytes_per_rank; /* bytes one rank may put */
    int64_t kvs_keys_per_job;   /* keys in the job's KVS */
    int64_t kvs_bytes_per_job;  /* bytes in the job's KVS */
    int64_t nodeattr_count;     /* node attributes on this node */
    int64_t nodeattr_bytes;     /* bytes of node attribute keys + values */
    int64_t names_count;        /* published names of the job (node 0) */
    int64_t names_bytes;        /* bytes of names + ports */
    int64_t trace_lines;        /* PSRV_LOG_TRACE lines, then one "trace stopped" */
    int64_t warn_burst;         /* warnings of one kind per rank, then suppressed */
};

#define PSRV_DEF_KVS_KEYS_PER_RANK 16384
#define PSRV_DEF_KVS_BYTES_PER_RANK (16LL << 20)
#define PSRV_DEF_KVS_KEYS_PER_JOB (4LL << 20)
#define PSRV_DEF_KVS_BYTES_PER_JOB (1LL << 30)
#define PSRV_DEF_NODEATTR_COUNT 4096
#define PSRV_DEF_NODEATTR_BYTES (4LL << 20)
#define PSRV_DEF_NAMES_COUNT 4096
#define PSRV_DEF_NAMES_BYTES (4LL << 20)
#define PSRV_DEF_TRACE_LINES 10000
#define PSRV_DEF_WARN_BURST 5

/* For hosts: every quota of struct psrv_limits by its mpi.conf key (plugin)
 * and environment variable (mpiexec), with its default; ends with conf NULL. */
struct psrv_limit_knob {
    const char *conf; /* e.g. "LoomMaxKvsBytesPerRank" */
    const char *env;  /* e.g. "LOOM_PMI_MAX_KVS_BYTES_PER_RANK" */
    size_t offset;    /* of the int64_t field in struct psrv_limits */
    int64_t def;
};
extern const struct psrv_limit_knob psrv_limit_knobs[];
int64_t *psrv_limit_field(struct psrv_limits *l, const struct psrv_limit_knob *k);
/* Read the LOOM_PMI_MAX_* variables into l ("0": no limit).  0, or -1 with a
 * message in err for a bad value (that field is left as it was). */
int psrv_limits_from_env(struct psrv_limits *l, char *err, size_t errlen);

/* How the KVS travels at a fence (struct psrv_config kvs_mode).
 *   FULL: every put goes in the fence and every node commits every put
 *     (a get is answered from this node's store only).
 *   ONDEMAND: a put whose key names its putting rank (the rank's decimal
 *     form as a maximal digit run: "P17-businesscard", "card17" by rank 17)
 *     stays on its node; every other put travels as in FULL.  A get this
 *     node cannot answer is asked of the nodes of the ranks its key (and
 *     PMI-2 srcid) name, and the answer is cached until the next fence.
 *   AUTO: each node picks per fence: ONDEMAND when its pending bytes times
 *     the number of nodes reach kvs_auto_bytes, else FULL.
 *   Nodes may choose differently (AUTO): an own key is always found at its
 *   putter's node and a shared key everywhere, so any mix answers every get
 *   right.  FULL never asks other nodes, so FULL and the other modes must not
 *   be mixed by configuration.  PMI-1 getbyidx lists this node's store only
 *   when the fence did not gather everything. */
enum psrv_kvs_mode { PSRV_KVS_AUTO = 0, PSRV_KVS_FULL, PSRV_KVS_ONDEMAND };
/* AUTO's provisional threshold of estimated job KVS bytes per fence. */
#define PSRV_DEF_KVS_AUTO_BYTES (64LL << 20)
/* "auto", "full", "ondemand" (also "on-demand") -> *mode: 0, or -1. */
int psrv_kvs_mode_parse(const char *v, enum psrv_kvs_mode *mode);
const char *psrv_kvs_mode_name(enum psrv_kvs_mode mode);
/* Read LOOM_PMI_KVS_MODE and LOOM_PMI_KVS_AUTO_BYTES (an absent variable
 * leaves the field as it was).  0, or -1 with a message in err for a bad
 * value (that field is left as it was). */
int psrv_kvs_from_env(enum psrv_kvs_mode *mode, int64_t *auto_bytes, char *err,
                      size_t errlen);

/* What the server holds now (psrv_usage), for hosts and tests. */
struct psrv_usage {
    int64_t kvs_keys, kvs_bytes; /* committed store */
    int64_t kvs_pending_bytes;   /* this node's puts before the fence */
    int64_t nodeattr_count, nodeattr_bytes;
    int64_t names_count, names_bytes; /* node 0 only */
    int64_t trace_lines;              /* trace lines logged */
    int64_t suppressed;               /* log lines suppressed (warnings, trace) */
    int64_t kvs_cache_keys;           /* values fetched from other nodes, kept */
    int64_t kvs_remote_gets;          /* gets asked of other nodes so far */
    int64_t kvs_served;               /* gets of other nodes answered here */
    int last_fence_ondemand;          /* 1: the last fence left own puts home */
};

/* A key and its value (spawn preput pairs and info hints). */
struct psrv_kv {
    const char *key;
    const char *val;
};

/* Bounds of a spawn request; a request past one is refused with rc!=0 and a
 * message naming it (the job goes on). */
#define PSRV_SPAWN_MAX_CMDS 64    /* commands (MPI_Comm_spawn_multiple count) */
#define PSRV_SPAWN_MAX_ARGS 256   /* arguments of one command */
#define PSRV_SPAWN_MAX_PREPUT 64  /* preput pairs */
#define PSRV_SPAWN_MAX_INFO 64    /* info pairs of one command */
#define PSRV_SPAWN_MAX_PROCS 4096 /* processes of one request, all commands */
#define PSRV_SPAWN_MAX_STR 4096   /* bytes of a command, argument, key or value */

/* One command of a spawn request. */
struct psrv_spawn_cmd {
    const char *cmd; /* program, as the task gave it */
    int maxprocs;    /* 0..PSRV_SPAWN_MAX_PROCS */
    int argc;
    const char *const *argv; /* [argc + 1], NULL-terminated; the program not included */
    int ninfo;
    const struct psrv_kv *info; /* [ninfo] MPI_Info hints ("wdir", "host", ...) */
};

/* A parsed spawn request, valid during ops->spawn only (copy what you keep). */
struct psrv_spawn {
    int rank; /* global rank of the spawning task */
    int ncmds;
    const struct psrv_spawn_cmd *cmds;
    int npreput;
    const struct psrv_kv *preput; /* pairs the new job finds in its KVS */
    int total;                    /* sum of maxprocs, >= 1 */
};

struct psrv_config {
    const char *jobid;           /* "<job>.<step>": kvsname and job-getid answer */
    int size;                    /* ranks in the job */
    int nnodes;                  /* nodes (servers) in the job, >= 1 */
    int nodeid;                  /* this server's node index, 0..nnodes-1 */
    int local_count;             /* tasks served here */
    const int *local_ranks;      /* [local_count] global rank of each client */
    const int *rank_node;        /* [size] node index of every rank; used for
                                  * PMI_process_mapping and localRanks */
    const int *rank_appnum;      /* [size] MPMD app index per rank, or NULL (0) */
    int universe_size;           /* <= 0: same as size */
    const char *hwloc_xmlfile;   /* PMI_hwloc_xmlfile attribute, or NULL */
    const char *process_mapping; /* override the computed mapping, or NULL */
    int tree_width;              /* children per node in the fence tree, >= 1 */
    int fence_timeout_ms;        /* <= 0: no timeout (not recommended) */
    enum psrv_log_level log_level;
    struct psrv_limits limits; /* all 0: the defaults */
    /* A job started by a spawn: the spawner's job id (PMI-2 fullinit answers
     * it as spawner-jobid, which tells the task it was spawned) and the
     * preput pairs, in the KVS before the first fence.  NULL / 0 otherwise. */
    const char *spawner_jobid;
    int npreput;
    const struct psrv_kv *preput;
    /* Without ops->spawn: the reason a spawn gets (NULL: "spawn is not
     * supported by this host"). */
    const char *spawn_unsupported_msg;
    /* KVS at a fence (enum psrv_kvs_mode above) and AUTO's threshold in
     * bytes (0: PSRV_DEF_KVS_AUTO_BYTES). */
    enum psrv_kvs_mode kvs_mode;
    int64_t kvs_auto_bytes;
};

struct psrv_ops {
    /* Write len bytes to client.  The host must deliver all of them in
     * order (queue what the socket does not take now).  Return 0 or -errno;
     * an error marks the client gone. */
    int (*client_send)(void *arg, int client, const char *buf, size_t len);
    /* Send one tree message to node `to` (always this node's parent or one
     * of its children).  The host preserves message boundaries.  Return 0 or
     * -errno; an error fails the fence in progress. */
    int (*tree_send)(void *arg, int to, const void *buf, size_t len);
    /* The job must end: a task called abort, a task was malformed or died,
     * or a fence failed.  rank is the culprit's global rank or -1.  The host
     * kills the job (the plugin: the step) and prints msg.  Called at most
     * once per psrv. */
    void (*abort)(void *arg, int rank, int exitcode, const char *msg);
    /* One log line, without trailing newline.  May be NULL. */
    void (*log)(void *arg, enum psrv_log_level level, const char *msg);
    /* Monotonic milliseconds.  May be NULL: CLOCK_MONOTONIC is used. */
    uint64_t (*now_ms)(void *arg);

    /* Services for a protocol the host serves itself (PMIx, pmixsrv/); all
     * may be NULL when the host does not use them.  See psrv_coll_contribute
     * and psrv_dmdx_request below. */
    /* The blob collective `id` (this node's contribution) ended: rc 0 and
     * the concatenation of every node's blob, or rc < 0 and msg.  data is
     * valid during the call only. */
    void (*coll_done)(void *arg, uint64_t id, int rc, const void *data, size_t len,
                      const char *msg);
    /* Another node (or this one) asks for the direct-modex data of local
     * rank `rank`; answer once with psrv_dmdx_reply(handle). */
    void (*dmdx_request)(void *arg, uint64_t handle, int rank, const void *info,
                         size_t len);
    /* Our psrv_dmdx_request `id` ended: rc 0 and the data, or rc < 0
     * (-ETIMEDOUT, -ECANCELED, or the serving node's error) and msg. */
    void (*dmdx_done)(void *arg, uint64_t id, int rc, const void *data, size_t len,
                      const char *msg);
    /* Our psrv_ns_request `id` ended: rc 0 (value: the looked-up value for
     * PSRV_NS_LOOKUP, else NULL), 1 (already published / not published),
     * or another code (failure, timeout).  Called exactly once. */
    void (*ns_done)(void *arg, uint64_t id, int rc, const char *value);

    /* A task asked to spawn a new job (req is valid during the call only).
     * Return 0 when the host took it: it answers exactly once, later or
     * from inside this call, with psrv_spawn_done(id).  Return -errno with
     * a one-line reason in err to refuse it (the core answers the task).
     * NULL: spawn is answered rc!=0 "not supported by this host". */
    int (*spawn)(void *arg, uint64_t id, const struct psrv_spawn *req, char *err,
                 size_t errlen);
};

/* Create a server.  cfg's arrays are copied.  Returns NULL and sets errno
 * (EINVAL for an inconsistent configuration). */
struct psrv *psrv_create(const struct psrv_config *cfg, const struct psrv_ops *ops,
                         void *arg);
void psrv_destroy(struct psrv *srv);

/* Bytes arrived from client.  Returns 0, 1 when the client finalized (the
 * host may close it), or -EPROTO after a protocol error (host closes it). */
int psrv_client_input(struct psrv *srv, int client, const char *buf, size_t len);
/* The client's connection reached EOF or broke. */
void psrv_client_gone(struct psrv *srv, int client);

/* One whole tree message from node `from`.  Returns 0 or -errno (a bad
 * message is logged, dropped and fails the fence in progress). */
int psrv_tree_input(struct psrv *srv, int from, const void *buf, size_t len);
/* The link to node `node` broke: fails the fence in progress. */
void psrv_tree_gone(struct psrv *srv, int node);

/* Check timeouts.  Returns milliseconds until the next deadline, or -1 if
 * none is armed.  Hosts call it when that time has passed (and may call it
 * more often). */
int psrv_tick(struct psrv *srv);

/* ---- services for host-side protocols (PMIx) ------------------------ */

/* This node's blob for the next job-wide blob collective.  Every node
 * contributes once per collective, in the same order; node blobs are
 * gathered up the fence tree and the concatenation comes back to every node
 * through ops->coll_done(id).  Epochs, timeout (cfg.fence_timeout_ms), link
 * loss, dead local clients and abort behave as for the KVS fence: a failure
 * answers ops->coll_done with rc < 0 on every node and ends the job through
 * ops->abort.  A contribution made while one is in flight is queued (at
 * most 256: -EAGAIN beyond).  Returns 0 or -errno (bad arguments, out of
 * memory, -EAGAIN). */
int psrv_coll_contribute(struct psrv *srv, uint64_t id, const void *blob, size_t len);
/* Ask the node hosting `rank` for its direct-modex data (info is passed to
 * that node's ops->dmdx_request).  The answer comes through ops->dmdx_done(id)
 * exactly once.  Returns 0 or -errno (then no callback comes; -EAGAIN when
 * 4096 are in flight). */
int psrv_dmdx_request(struct psrv *srv, uint64_t id, int rank, const void *info,
                      size_t len);
/* Answer the request `handle` of ops->dmdx_request: rc 0 and the data, or
 * rc < 0.  Returns 0, -ENOENT for an unknown handle, or the send error. */
int psrv_dmdx_reply(struct psrv *srv, uint64_t handle, int rc, const void *data,
                    size_t len);
/* The job's name service (the one PMI-1/2 publish/lookup use, kept on
 * node 0) for a host-side protocol: publish name=value, unpublish name,
 * look name up.  The answer comes through ops->ns_done(id), possibly before
 * this returns (node 0).  Bounded by cfg.fence_timeout_ms.  Returns 0 or
 * -errno (then no callback comes; -EAGAIN when 1024 are in flight).  A
 * publish past the names quota answers rc 2 and ends the job. */
enum { PSRV_NS_PUBLISH = 1, PSRV_NS_UNPUBLISH = 2, PSRV_NS_LOOKUP = 3 };
int psrv_ns_request(struct psrv *srv, uint64_t id, int op, const char *name,
                    const char *value);
/* The job must end (e.g. a PMIx client called abort): ops->abort once, and
 * every node's waiting ranks and collectives fail, as for a PMI abort. */
void psrv_abort(struct psrv *srv, int rank, int exitcode, const char *msg);
/* Client finalized through another protocol: its hang-up is then normal. */
void psrv_client_finalized(struct psrv *srv, int client);

/* Answer spawn request `id` (ops->spawn): rc 0 with the new job's id and
 * n error codes (one per process started, 0 = started; NULL: all 0), or
 * rc != 0 and msg.  Returns 0, or -ENOENT when no task waits for id (it hung
 * up). */
int psrv_spawn_done(struct psrv *srv, uint64_t id, int rc, const char *jobid,
                    const int *errcodes, int n, const char *msg);

/* Introspection for hosts and tests. */
void psrv_usage(const struct psrv *srv, struct psrv_usage *u);
int psrv_clients_finalized(const struct psrv *srv); /* how many finalized */
int psrv_fence_epoch(const struct psrv *srv);       /* completed fences */

/* PMI_process_mapping for a rank->node table, in MPICH's grammar, written
 * to out (NUL-terminated).  Returns the length, or -EMSGSIZE if it does not
 * fit in outlen (callers then advertise no mapping). */
int psrv_process_mapping(const int *rank_node, int size, char *out, size_t outlen);

#endif /* LOOM_PMISERV_H */
