/* lpmix.c - mpiexec's PMIx server (contract in lpmix.h).
 *
 * Notes:
 *   - The server's directory is $TMPDIR (else /tmp)/loom-pmix.<jobid>.<node>.
 *     <12 random hex digits>, made by pmixsrv like mkdtemp (never a directory
 *     that exists: one another user made first is left alone and another name
 *     drawn) and removed by lpmix_stop, through fds only (common/safefs.h).
 *     The jobid starts with the pid of the front mpiexec; a proxy killed by a
 *     signal cannot clean up, so lpmix_start removes our own such directories
 *     (owned by our uid) whose mpiexec no longer exists, the same way.
 *   - The server's configuration (namespace, directory name, node names: a
 *     proxy does not know the other hosts') is pmixsrv_start's (pmixsrv/
 *     pmixjob.c), the same as the Slurm plugin's; here only what is mpiexec's.
 *   - Open MPI 4.x recognises a direct launch only under the resource
 *     managers it knows (Slurm, Flux, ALPS, ...); anywhere else its
 *     schizo/orte component declares a singleton unless a local daemon URI
 *     is set, in which case it selects ess/pmi and takes everything from
 *     PMIx.  So, unless the user set one, we put a placeholder
 *     OMPI_MCA_orte_local_daemon_uri (an unreachable address, never
 *     contacted from MPI_Init to MPI_Finalize) into the ranks' environment
 *     (inherited from ours).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loop.h"
#include "lpmix.h"
#include "safefs.h"

#ifdef HAVE_PMIX
#include "pmixsrv.h"

#define OMPI_DAEMON_URI "OMPI_MCA_orte_local_daemon_uri"

static struct pmixsrv *g_px;
static struct loop *g_lp;
static struct loop_watch *g_w;

static void on_pmix(struct loop *lp, struct loop_watch *w, int fd, int revents, void *arg)
{
    (void)lp;
    (void)w;
    (void)fd;
    (void)revents;
    (void)arg;
    pmixsrv_dispatch(g_px);
}

/* Remove base/loom-pmix.<pid>.<n>.<node>.<random> of ours whose <pid> is gone. */
static void sweep(const char *base)
{
    char err[256];
    int bfd = safefs_open_base(base, 0, (uid_t)-1, NULL, err, sizeof(err)), dfd;
    struct dirent *e;
    DIR *d;

    if (bfd < 0)
        return;
    if ((dfd = dup(bfd)) < 0 || !(d = fdopendir(dfd))) {
        if (dfd >= 0)
            close(dfd);
        close(bfd);
        return;
    }
    while ((e = readdir(d))) {
        long pid;
        unsigned a, b;
        char rnd[SAFEFS_RAND_HEX + 1], tail;
        struct stat st;
        if (sscanf(e->d_name, "loom-pmix.%ld.%u.%u.%12[0-9a-f]%c", &pid, &a, &b, rnd,
                   &tail) != 4 ||
            pid <= 1 || strlen(rnd) != SAFEFS_RAND_HEX)
            continue;
        if (fstatat(bfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
            !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
            continue;
        if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
            safefs_rmtree_fd(bfd, e->d_name, (dev_t)-1);
    }
    closedir(d);
    close(bfd);
}

int lpmix_start(struct loop *lp, struct psrv *srv, const struct psrv_config *cfg,
                const char *host, void (*log)(void *, enum psrv_log_level, const char *),
                void *log_arg)
{
    const char *off = getenv("LOOM_PMIX");
    const char *tmp = getenv("TMPDIR");
    char warn[300];
    int rc = 0;

    if (g_px || (off && strcmp(off, "0") == 0))
        return 0;
    if (!tmp || !*tmp)
        tmp = "/tmp";
    sweep(tmp);
    /* the other nodes' names are not known to a proxy: pmixjob.c names them */
    struct pmixsrv_job job = {
        .core = cfg,
        .node_names = NULL,
        .host = host,
        .tmp_base = tmp,
        .uid = getuid(),
        .gid = getgid(),
    };
    struct pmixsrv_ops o = {.log = log};
    if ((g_px = pmixsrv_start(&job, srv, &o, log_arg))) {
        g_lp = lp;
        if (!(g_w = loop_watch_add(lp, pmixsrv_fd(g_px), LOOP_READ, on_pmix, NULL))) {
            pmixsrv_destroy(g_px);
            g_px = NULL;
            rc = -ENOMEM;
        }
    } else {
        rc = errno ? -errno : -EINVAL;
    }
    if (rc == 0 && !getenv(OMPI_DAEMON_URI))
        setenv(OMPI_DAEMON_URI, "0.0;tcp://127.0.0.1:1", 0);
    if (rc < 0 && log) {
        snprintf(warn, sizeof(warn),
                 "cannot start the PMIx server (%s): PMIx clients will not find it",
                 strerror(-rc));
        log(log_arg, PSRV_LOG_WARN, warn);
    }
    return rc;
}

void lpmix_stop(void)
{
    if (g_w)
        loop_watch_remove(g_lp, g_w);
    g_w = NULL;
    pmixsrv_destroy(g_px);
    g_px = NULL;
}

char *const *lpmix_env(int idx)
{
    return g_px ? pmixsrv_task_env(g_px, idx) : NULL;
}

char *const *lpmix_env_defaults(void)
{
    return g_px ? pmixsrv_task_env_defaults(g_px) : NULL;
}

void lpmix_client_gone(int idx)
{
    if (g_px)
        pmixsrv_client_gone(g_px, idx);
}

void lpmix_coll_done(void *arg, uint64_t id, int rc, const void *data, size_t len,
                     const char *msg)
{
    (void)arg;
    pmixsrv_coll_done(g_px, id, rc, data, len, msg);
}

void lpmix_dmdx_request(void *arg, uint64_t handle, int rank, const void *info,
                        size_t len)
{
    (void)arg;
    if (g_px)
        pmixsrv_dmdx_request(g_px, handle, rank, info, len);
}

void lpmix_dmdx_done(void *arg, uint64_t id, int rc, const void *data, size_t len,
                     const char *msg)
{
    (void)arg;
    pmixsrv_dmdx_done(g_px, id, rc, data, len, msg);
}

void lpmix_ns_done(void *arg, uint64_t id, int rc, const char *value)
{
    (void)arg;
    pmixsrv_ns_done(g_px, id, rc, value);
}

#else /* !HAVE_PMIX: PMI-1/2 only */

void lpmix_ns_done(void *arg, uint64_t id, int rc, const char *value)
{
    (void)arg;
    (void)id;
    (void)rc;
    (void)value;
}

int lpmix_start(struct loop *lp, struct psrv *srv, const struct psrv_config *cfg,
                const char *host, void (*log)(void *, enum psrv_log_level, const char *),
                void *log_arg)
{
    (void)lp;
    (void)srv;
    (void)cfg;
    (void)host;
    (void)log;
    (void)log_arg;
    return 0;
}

void lpmix_stop(void)
{
}

char *const *lpmix_env(int idx)
{
    (void)idx;
    return NULL;
}

char *const *lpmix_env_defaults(void)
{
    return NULL;
}

void lpmix_client_gone(int idx)
{
    (void)idx;
}

void lpmix_coll_done(void *arg, uint64_t id, int rc, const void *data, size_t len,
                     const char *msg)
{
    (void)arg;
    (void)id;
    (void)rc;
    (void)data;
    (void)len;
    (void)msg;
}

void lpmix_dmdx_request(void *arg, uint64_t handle, int rank, const void *info,
                        size_t len)
{
    (void)arg;
    (void)handle;
    (void)rank;
    (void)info;
    (void)len;
}

void lpmix_dmdx_done(void *arg, uint64_t id, int rc, const void *data, size_t len,
                     const char *msg)
{
    (void)arg;
    (void)id;
    (void)rc;
    (void)data;
    (void)len;
    (void)msg;
}

#endif
