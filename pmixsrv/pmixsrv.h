/* pmixsrv.h - PMIx server mode: OpenPMIx's server library in front of one
 * node's pmiserv core, so PMIx clients (Open MPI) are served beside PMI-1/2.
 *
 * Contract:
 *   No Slurm inside: the Slurm plugin (slurmstepd) and mpiexec use it.  One
 *   struct pmixsrv per process (libpmix has one server per process).  It
 *   shares the host's struct psrv for everything that crosses nodes or ends
 *   the job: fences are psrv blob collectives (psrv_coll_contribute), direct
 *   modex goes to the rank's node through psrv_dmdx_request, PMIx_Abort is
 *   psrv_abort (ops->abort of the host kills the job).
 *
 *   Threads: libpmix calls our server module on its own progress thread.
 *   Those callbacks never block and never touch psrv: they queue the work
 *   and make pmixsrv_fd() readable.  The host's loop calls
 *   pmixsrv_dispatch() on that, on the thread that owns the psrv; libpmix's
 *   completion callbacks are called from there.
 *
 *   The host forwards four psrv ops here: coll_done -> pmixsrv_coll_done,
 *   dmdx_request -> pmixsrv_dmdx_request, dmdx_done -> pmixsrv_dmdx_done,
 *   ns_done -> pmixsrv_ns_done.
 *
 *   Served: client connect/finalize, fence with and without data (only over
 *   the whole namespace), direct modex, abort (the job ends, rank named),
 *   publish/lookup/unpublish of string values through the job's name
 *   service (psrv_ns_request: shared with PMI-1/2 publish and lookup).
 *   Not supported (PMIX_ERR_NOT_SUPPORTED at once): spawn, connect/disconnect,
 *   fences over subsets, non-string published values, unpublish without
 *   keys, lookup with PMIX_WAIT (a missing key is simply not found).
 *
 * Notes:
 *   - pmixsrv_create registers the namespace (job and node level info: sizes,
 *     node and proc maps, local peers, per-rank local/node rank, hostname,
 *     node id, app number) and every local client (cfg.uid/gid), and
 *     computes every local task's environment (PMIx_server_setup_fork) so
 *     that a forked child only copies strings.
 *   - A node with more local ranks than CPUs (this process's affinity, and
 *     cfg.node_cpus when known) is
 *     announced as oversubscribed: PMIX_NODE_OVERSUBSCRIBED, and the task
 *     env defaults above.
 *   - The server's directory: cfg.tmpdir is BASE/PREFIX, and the directory
 *     made is BASE/PREFIX.<12 random hex digits> (never an existing path: a
 *     name taken draws another), mode 0700; its path is what the tasks get as
 *     PMIX_SERVER_TMPDIR.  BASE and every directory above it must belong to
 *     root, to us or to cfg.base_owner (0 adds no one; the plugin gives
 *     SlurmUser, which owns SlurmdSpoolDir on Debian) and be writable by no
 *     other user (sticky ones excepted on the way); when root serves another
 *     uid, BASE itself may not be writable
 *     by any other user either (no /tmp): pmixsrv_create then fails (EPERM,
 *     logged with the reason).  The directory is ours until the server is set
 *     up, then handed to cfg.uid/cfg.gid by fchown; destroy takes it back and
 *     removes it through fds only (common/safefs.h), before libpmix's own
 *     cleanup.
 */
#ifndef LOOM_PMIXSRV_H
#define LOOM_PMIXSRV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pmiserv.h"

struct pmixsrv;

struct pmixsrv_config {
    const char *nspace;       /* namespace, e.g. "loom.<job>.<step>" */
    const char *jobid;        /* PMIX_JOBID */
    int size, nnodes, nodeid; /* as struct psrv_config */
    int local_count;
    const int *local_ranks;        /* [local_count] */
    const int *rank_node;          /* [size] */
    const int *rank_appnum;        /* [size] or NULL */
    const char *const *node_names; /* [nnodes] host names */
    int universe_size;             /* <= 0: size */
    int node_cpus;                 /* CPUs the job has on this node, 0: unknown */
    uid_t uid;                     /* owner of the job's processes */
    gid_t gid;
    const char *tmpdir;            /* BASE/PREFIX of the server's directory (notes) */
    uid_t base_owner;              /* may own BASE and above beside root (SlurmUser) */
    const char *anl_map;           /* PMI_process_mapping, or NULL */
    enum psrv_log_level log_level; /* lines above it are not logged */
};

struct pmixsrv_ops {
    /* One log line (psrv levels).  May be NULL. */
    void (*log)(void *arg, enum psrv_log_level level, const char *msg);
    /* A local client connected to libpmix (on the owner's thread).  May be
     * NULL. */
    void (*client_connected)(void *arg, int client);
};

/* What a host knows of its node's share of the job, in plain terms: the Slurm
 * plugin fills it from the step, mpiexec from its ranks; pmixsrv_start turns it
 * into the server's configuration (pmixjob.c). */
struct pmixsrv_job {
    const struct psrv_config *core; /* the node's core: jobid, size, nnodes, nodeid,
                                     * local ranks, rank_node (required), rank_appnum,
                                     * universe_size, log_level */
    const char *const *node_names;  /* [nnodes] host names, or NULL: this node is
                                     * `host`, the others "node<k>" */
    const char *host;               /* with node_names NULL: this node's name (NULL
                                     * or "": gethostname) */
    const char *tmp_base;           /* BASE of the server's directory (notes) */
    int node_cpus;                  /* as pmixsrv_config */
    uid_t uid;
    gid_t gid;
    uid_t base_owner;
};

/* The namespace "loom.<jobid>", the directory BASE/loom-pmix.<jobid>.<nodeid>
 * (plus the random suffix), the node names and PMI_process_mapping made from
 * job, then pmixsrv_create.  NULL and errno as pmixsrv_create, and EINVAL (no
 * rank_node, no base), ENAMETOOLONG (a name does not fit), ENOMEM. */
struct pmixsrv *pmixsrv_start(const struct pmixsrv_job *job, struct psrv *srv,
                              const struct pmixsrv_ops *ops, void *arg);

/* Start the PMIx server.  Returns NULL and sets errno (EBUSY: one already
 * exists in this process; EIO: libpmix refused, logged; EPERM, EEXIST, ...:
 * the server's directory could not be made safely, logged). */
struct pmixsrv *pmixsrv_create(const struct pmixsrv_config *cfg, struct psrv *srv,
                               const struct pmixsrv_ops *ops, void *arg);
/* Finalize libpmix, answer what is pending with an error, remove tmpdir. */
void pmixsrv_destroy(struct pmixsrv *px);

/* Readable when pmixsrv_dispatch() has work. */
int pmixsrv_fd(const struct pmixsrv *px);
void pmixsrv_dispatch(struct pmixsrv *px);

/* The host saw local client i's process end (its PMI socket closed).  A
 * client that connected to libpmix and did not PMIx_Finalize ends the job
 * (psrv_abort naming the rank): libpmix itself would drop it from the
 * collectives and let the others run on without it. */
void pmixsrv_client_gone(struct pmixsrv *px, int client);

/* NULL-terminated "NAME=value" strings for local client i (owned by px). */
char *const *pmixsrv_task_env(const struct pmixsrv *px, int client);
/* NULL-terminated "NAME=value" strings every local task gets only where its
 * own environment does not name the variable (the user's setting wins), or
 * NULL: when the node has more local ranks than CPUs, the variable that makes
 * Open MPI yield instead of busy-polling. */
char *const *pmixsrv_task_env_defaults(const struct pmixsrv *px);

/* psrv ops forwarded by the host. */
void pmixsrv_coll_done(struct pmixsrv *px, uint64_t id, int rc, const void *data,
                       size_t len, const char *msg);
void pmixsrv_dmdx_request(struct pmixsrv *px, uint64_t handle, int rank, const void *info,
                          size_t len);
void pmixsrv_dmdx_done(struct pmixsrv *px, uint64_t id, int rc, const void *data,
                       size_t len, const char *msg);
void pmixsrv_ns_done(struct pmixsrv *px, uint64_t id, int rc, const char *value);

#endif /* LOOM_PMIXSRV_H */
