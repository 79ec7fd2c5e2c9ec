/* proxy.c - proxy mode ("mpiexec --proxy", started by front.c for each host
 * of a multi-host job): read the cookie, connect back and prove it
 * (mpx_proxy_connect), take the job description, then run this node's ranks
 * with node_run().  Output, exits, failures and log lines go to the front
 * end as frames (conn.h), and it decides the exit status; a lost connection
 * ends the node's ranks.  Tree messages go to the adjacent proxies directly:
 * proxy_join_tree() meets the others at mpiexec's treenet rendezvous and
 * links to the parent and children (cookie mode, the job cookie as key). */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "handshake.h"
#include "node.h"
#include "treenet.h"

/* Proxy mode: one frame to mpiexec (pk is freed).  A failed send shows up
 * as EOF or an error on the connection, handled in up_cb(). */
void up_send(struct job *job, uint8_t type, struct pack *pk)
{
    if (job->up && !job->up_lost && pack_error(pk) == 0) {
        mpx_conn_send(job->up, type, pk->buf, pk->len);
        if (job->up_w && mpx_conn_pending(job->up))
            loop_watch_set(job->up_w, LOOP_READ | LOOP_WRITE);
    }
    pack_free(pk);
}

/* The uplink's log sink: lines go to mpiexec, which prints them. */
static void up_sink(void *arg, enum loom_log_level level, const char *ident,
                    const char *line)
{
    struct job *job = arg;
    struct pack pk;

    if (!job->up || job->up_lost) {
        loom_log_stderr_sink(NULL, level, ident, line);
        return;
    }
    pack_init(&pk);
    pack_str(&pk, line);
    up_send(job, MPX_P_LOG, &pk);
}

void proxy_bye_cb(struct loop *lp, struct loop_timer *t, void *arg)
{
    struct job *job = arg;

    job->bye_timer = NULL;
    loop_stop(lp, 0);
}

/* The connection to mpiexec reached EOF or broke. */
static void up_gone(struct job *job, const char *why)
{
    if (job->up_lost)
        return;
    job->up_lost = true;
    streams_pause(job, false); /* nothing queues for mpiexec any more */
    if (job->up_w) {
        loop_watch_remove(job->lp, job->up_w);
        job->up_w = NULL;
    }
    if (job->done_sent) {
        loop_stop(job->lp, 0);
        return;
    }
    if (job->live > 0)
        loom_logf(&job->log, LOOM_LOG_ERROR,
                  "lost the connection to mpiexec (%s): "
                  "killing %d rank%s",
                  why, job->live, mpx_plural(job->live));
    else
        loom_logf(&job->log, LOOM_LOG_ERROR,
                  "host %s (node %d): lost the connection to mpiexec (%s): ending",
                  job->host, job->nodeid, why);
    job->end.exit_code = 1;
    job_kill(job);
    job_check_done(job);
}

static void up_frame(struct job *job, uint8_t type, const uint8_t *body, size_t len)
{
    struct unpack u;

    unpack_init(&u, body, len);
    switch (type) {
    case MPX_F_KILL: {
        int sig = unpack_i32(&u);
        if (sig == SIGKILL) {
            job->end.ending = true;
            job->sigkill_sent = true;
            job_kill_all(job, SIGKILL);
        } else {
            job_kill(job);
        }
        break;
    }
    case MPX_F_SPAWN_DONE: { /* mpiexec's answer to a spawn of our ranks */
        uint64_t id = unpack_u64(&u);
        int rc = unpack_i32(&u);
        char *jobid = unpack_strdup(&u);
        int total = unpack_i32(&u);
        char *msg = unpack_strdup(&u);
        if (jobid && msg && !unpack_error(&u) && job->srv)
            (void)psrv_spawn_done(job->srv, id, rc, jobid, NULL, total,
                                  *msg ? msg : NULL);
        free(jobid);
        free(msg);
        break;
    }
    default:
        break; /* unknown frames from a newer mpiexec are ignored */
    }
}

/* Handle the whole frames buffered from mpiexec. */
void up_process(struct job *job)
{
    uint8_t type;
    const uint8_t *body;
    size_t len;
    int rc;

    while (!job->up_lost && (rc = mpx_conn_next(job->up, &type, &body, &len)) == 1)
        up_frame(job, type, body, len);
    if (!job->up_lost && rc < 0)
        up_gone(job, "bad frame");
}

void up_cb(struct loop *lp, struct loop_watch *w, int fd, int revents, void *arg)
{
    struct job *job = arg;

    if (revents & LOOP_WRITE) {
        if (mpx_conn_flush(job->up) < 0) {
            up_gone(job, "write failed");
            return;
        }
        loop_watch_set(w, LOOP_READ | (mpx_conn_pending(job->up) ? LOOP_WRITE : 0));
        if (job->out_paused && up_queued(job) <= UP_LOW)
            streams_pause(job, false);
    }
    if (!(revents & (LOOP_READ | LOOP_ERROR)))
        return;
    long n = mpx_conn_read(job->up);
    if (n == -EAGAIN)
        return;
    if (n <= 0) {
        up_gone(job, n == 0 ? "closed" : strerror((int)-n));
        return;
    }
    up_process(job);
}

/* First line of stdin (the cookie), waiting at most ms. */
static int read_cookie(char *buf, size_t len, int ms)
{
    size_t got = 0;
    uint64_t end = loop_now_ms() + (uint64_t)ms;

    while (got + 1 < len) {
        struct pollfd pfd = {.fd = 0, .events = POLLIN};
        int64_t left = (int64_t)(end - loop_now_ms());
        if (left <= 0)
            return -ETIMEDOUT;
        int prc = poll(&pfd, 1, (int)left);
        if (prc < 0 && errno == EINTR)
            continue;
        if (prc <= 0)
            return prc == 0 ? -ETIMEDOUT : -errno;
        ssize_t n = read(0, buf + got, 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n == 0 ? -ENODATA : -errno;
        if (buf[got] == '\n') {
            buf[got] = '\0';
            return 0;
        }
        got++;
    }
    return -EMSGSIZE;
}

/* Decode MPX_F_JOB into job and o; rank_node is malloc'd. */
static int decode_job(struct job *job, struct mpx_opts *o, const uint8_t *body,
                      size_t len, int **rank_node, int *nnodes)
{
    struct unpack u;

    unpack_init(&u, body, len);
    memset(o, 0, sizeof(*o));
    if (unpack_u32(&u) != MPX_PROTO_VERSION)
        return -EPROTO;
    char *jobid = unpack_strdup(&u);
    job->size = unpack_i32(&u);
    *nnodes = unpack_i32(&u);
    int nodeid = unpack_i32(&u);
    o->fence_timeout_s = unpack_i32(&u);
    job->pmi_level = unpack_i32(&u);
    o->bind = unpack_i32(&u) ? MPX_BIND_CORE : MPX_BIND_NONE;
    o->report_bindings = unpack_i32(&u);
    o->verbose = unpack_i32(&u);
    char *hname = unpack_strdup(&u);
    if (hname) /* the name mpiexec knows this node by (-hosts) */
        job->host = hname;
    if (!jobid || unpack_error(&u) || job->size < 1 || job->size > 65536 || *nnodes < 1 ||
        nodeid != job->nodeid || strlen(jobid) >= sizeof(job->jobid)) {
        free(jobid);
        return -EPROTO;
    }
    snprintf(job->jobid, sizeof(job->jobid), "%s", jobid);
    free(jobid);
    *rank_node = malloc(sizeof(int) * (size_t)job->size);
    if (!*rank_node)
        return -ENOMEM;
    for (int r = 0; r < job->size; r++) {
        (*rank_node)[r] = unpack_i32(&u);
        if ((*rank_node)[r] < 0 || (*rank_node)[r] >= *nnodes)
            return -EPROTO;
    }
    o->napps = unpack_i32(&u);
    if (unpack_error(&u) || o->napps < 1 || o->napps > job->size)
        return -EPROTO;
    o->apps = calloc((size_t)o->napps, sizeof(*o->apps));
    if (!o->apps)
        return -ENOMEM;
    for (int a = 0; a < o->napps; a++) {
        struct mpx_app *app = &o->apps[a];
        app->np = unpack_i32(&u);
        app->argc = unpack_i32(&u);
        if (unpack_error(&u) || app->np < 1 || app->argc < 1 || app->argc > (1 << 20))
            return -EPROTO;
        o->nranks += app->np;
        app->argv = calloc((size_t)app->argc + 1, sizeof(char *));
        if (!app->argv)
            return -ENOMEM;
        for (int i = 0; i < app->argc; i++)
            if (!(app->argv[i] = unpack_strdup(&u)))
                return -EPROTO;
        int nenv = unpack_i32(&u);
        if (unpack_error(&u) || nenv < 0 || nenv > (1 << 20))
            return -EPROTO;
        app->env.v = calloc((size_t)nenv + 1, sizeof(char *));
        if (!app->env.v)
            return -ENOMEM;
        for (int i = 0; i < nenv; i++) {
            if (!(app->env.v[i] = unpack_strdup(&u)) || !strchr(app->env.v[i], '='))
                return -EPROTO;
            app->env.n++;
        }
        char *wdir = unpack_strdup(&u);
        int soft = unpack_u8(&u);
        struct stat st;
        if (!wdir)
            return -EPROTO;
        /* mpiexec's own directory is only a default: a host that lacks it
         * runs the ranks where the proxy started, as hydra does */
        if (!*wdir || (soft && (stat(wdir, &st) < 0 || !S_ISDIR(st.st_mode))))
            free(wdir);
        else
            app->wdir = wdir;
    }
    job->rdv_port = unpack_i32(&u);
    job->port_lo = unpack_i32(&u);
    job->port_hi = unpack_i32(&u);
    /* a spawned job: its spawner's id and the preput pairs (spawn.h) */
    if (unpack_u8(&u)) {
        struct mpx_spawned *sp = &job->spawned;
        char *sj = unpack_strdup(&u);
        sp->npreput = unpack_i32(&u);
        sp->report_fd = -1; /* the front end reports to the spawner */
        if (!sj || strlen(sj) >= sizeof(sp->spawner_jobid) || unpack_error(&u) ||
            sp->npreput < 0 || sp->npreput > PSRV_SPAWN_MAX_PREPUT) {
            free(sj);
            sp->npreput = 0;
            return -EPROTO;
        }
        snprintf(sp->spawner_jobid, sizeof(sp->spawner_jobid), "%s", sj);
        snprintf(sp->jobid, sizeof(sp->jobid), "%s", job->jobid);
        free(sj);
        sp->preput = calloc((size_t)sp->npreput + 1, sizeof(*sp->preput));
        if (!sp->preput) {
            sp->npreput = 0;
            return -ENOMEM;
        }
        for (int i = 0; i < sp->npreput; i++)
            if (!(sp->preput[i].key = unpack_strdup(&u)) ||
                !(sp->preput[i].val = unpack_strdup(&u)))
                return -EPROTO;
        sp->on = true;
    }
    if (unpack_error(&u) || o->nranks != job->size || job->rdv_port < 1 ||
        job->rdv_port > 65535 || job->port_lo < 0 || job->port_hi > 65535 ||
        job->port_lo > job->port_hi || (job->port_lo == 0) != (job->port_hi == 0))
        return -EPROTO;
    /* the program is searched in the PATH the ranks will have */
    for (int i = 0; i < o->apps[0].env.n; i++)
        if (strncmp(o->apps[0].env.v[i], "PATH=", 5) == 0)
            setenv("PATH", o->apps[0].env.v[i] + 5, 1);
    return 0;
}

/* ---- the tree ---------------------------------------------------------- */

static void tn_recv(void *arg, int from, const void *buf, size_t len)
{
    struct job *job = arg;

    nodesrv_tree_input(job->ns, from, buf, len);
}

/* A link that closes is normal once a node's ranks are done (its proxy
 * leaves); one that matters fails the fence in progress, and the core then
 * aborts the job with a message naming the node (as the Slurm plugin). */
static void tn_lost(void *arg, int node, const char *why)
{
    struct job *job = arg;

    if (job->o->verbose && !job->end.ending)
        loom_logf(&job->log, LOOM_LOG_ERROR,
                  "host %s (node %d): link to node %d closed: %s", job->host, job->nodeid,
                  node, why ? why : "?");
    nodesrv_tree_gone(job->ns, node); /* dropped if from inside the core */
}

static void tn_log(void *arg, int level, const char *msg)
{
    struct job *job = arg;

    /* refused connections are worth saying; progress only with -v */
    if (level <= LOOM_LOG_WARN ? !strstr(msg, " lost: ") : job->o->verbose > 1)
        loom_logf(&job->log, LOOM_LOG_ERROR, "host %s (node %d): %s", job->host,
                  job->nodeid, msg);
}

/* The rendezvous, watching the connection to mpiexec meanwhile: mpiexec
 * gone (killed, its host lost) ends the proxy at once, not at the
 * rendezvous timeout, and so does its kill (the job ends while the others
 * are still coming).  0 with *addrs, -ECONNABORTED (up_gone() or the kill
 * took it), or the rendezvous' error. */
static int tree_rendezvous(struct job *job, const char *server, int nnodes, char ***addrs)
{
    uint64_t end = loop_now_ms() + (uint64_t)job->tree_timeout_ms;

    for (;;) {
        int64_t left = (int64_t)(end - loop_now_ms());
        if (left <= 0)
            return -ETIMEDOUT;
        int rc = rdv_exchange_cookie_watch(server, job->jobid, job->cookie, nnodes,
                                           job->nodeid, treenet_port(job->tn), (int)left,
                                           job->up->s.fd, addrs, NULL);
        if (rc != -ECONNABORTED)
            return rc;
        long n = mpx_conn_read(job->up);
        if (n <= 0 && n != -EAGAIN) {
            up_gone(job,
                    n == 0 ? "closed during the tree rendezvous" : strerror((int)-n));
            return -ECONNABORTED;
        }
        up_process(job);
        if (job->up_lost || job->end.ending)
            return -ECONNABORTED;
    }
}

/* Join the tree of the proxies: listen (a leaf does not), meet the others at
 * mpiexec's rendezvous (on the address this proxy reached mpiexec at), then
 * connect to the parent; children connect to us.  Bounded by the connect
 * timeout.  0, or -1 once the failure was reported to mpiexec. */
int proxy_join_tree(struct job *job, int nnodes)
{
    struct treenet_config cfg = {
        .nnodes = nnodes,
        .nodeid = job->nodeid,
        .width = MPX_TREE_WIDTH,
        .jobkey = job->jobid,
        .uid = geteuid(),
        .auth = TREENET_AUTH_COOKIE,
        .bind_addr = NULL,
        .connect_timeout_ms = job->tree_timeout_ms,
        .port_lo = (unsigned short)job->port_lo,
        .port_hi = (unsigned short)job->port_hi,
        .cookie = job->cookie,
    };
    static const struct treenet_ops ops = {
        .recv = tn_recv,
        .lost = tn_lost,
        .log = tn_log,
    };
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    char ip[INET6_ADDRSTRLEN] = "", server[INET6_ADDRSTRLEN + 16], why[256];
    char **addrs = NULL;
    int rc;

    if (nnodes <= 1)
        return 0;
    if (getpeername(job->up->s.fd, (struct sockaddr *)&ss, &sl) < 0 ||
        (ss.ss_family == AF_INET &&
         !inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, ip, sizeof(ip))) ||
        (ss.ss_family == AF_INET6 &&
         !inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, ip,
                    sizeof(ip))) ||
        !ip[0]) {
        job_fail(job, MPX_EXIT_LAUNCH, "host %s: cannot tell mpiexec's address: %s",
                 job->host, strerror(errno));
        return -1;
    }
    snprintf(server, sizeof(server), ss.ss_family == AF_INET6 ? "[%s]:%d" : "%s:%d", ip,
             job->rdv_port);
    job->tn = treenet_create(job->lp, &cfg, &ops, job);
    if (!job->tn) {
        if (errno == EADDRINUSE && job->port_lo)
            snprintf(why, sizeof(why),
                     "host %s (node %d): cannot listen for tree links: every port of "
                     "MPIEXEC_PORT_RANGE=%d:%d is in use",
                     job->host, job->nodeid, job->port_lo, job->port_hi);
        else
            snprintf(why, sizeof(why),
                     "host %s (node %d): cannot listen for tree links: %s", job->host,
                     job->nodeid, strerror(errno));
        /* the others hear it from the rendezvous at once, not at their timeout */
        (void)rdv_fail_cookie(server, job->jobid, job->cookie, nnodes, job->nodeid, 5000,
                              why);
        job_fail(job, MPX_EXIT_LAUNCH, "%s", why);
        return -1;
    }
    rc = tree_rendezvous(job, server, nnodes, &addrs);
    if (rc == -ECONNABORTED)
        return -1; /* mpiexec gone (up_gone() said so) or ending the job */
    if (rc < 0) {
        job_fail(job, MPX_EXIT_LAUNCH,
                 "host %s (node %d): rendezvous with mpiexec at %s failed: %s", job->host,
                 job->nodeid, server, rdv_strerror(rc));
        return -1;
    }
    rc = treenet_start(job->tn, addrs);
    rdv_addrs_free(addrs, nnodes);
    if (rc < 0) {
        job_fail(job, MPX_EXIT_LAUNCH, "host %s (node %d): cannot start tree links: %s",
                 job->host, job->nodeid, strerror(-rc));
        return -1;
    }
    if (job->o->verbose)
        loom_logf(&job->log, LOOM_LOG_ERROR,
                  "host %s (node %d): tree links started (rendezvous %s, port %d)",
                  job->host, job->nodeid, server, treenet_port(job->tn));
    return 0;
}

/* After the loop: close the links, forget the cookie. */
void proxy_leave_tree(struct job *job)
{
    if (job->tn)
        treenet_destroy(job->tn);
    job->tn = NULL;
    if (job->cookie) {
        memset(job->cookie, 0, strlen(job->cookie));
        free(job->cookie);
        job->cookie = NULL;
    }
}

/* mpiexec --proxy NODE --connect A1,A2,...:PORT [--connect-timeout S]
 * The cookie is the first line of stdin. */
int mpx_proxy_main(int argc, char **argv)
{
    struct job job;
    struct mpx_opts o;
    struct mpx_conn up;
    char host[256] = "?", ident[300], err[512], cookie[256];
    const char *spec = NULL;
    int timeout_s = 30, rc, nodeid = -1;

    memset(&job, 0, sizeof(job));
    gethostname(host, sizeof(host) - 1);
    snprintf(ident, sizeof(ident), "mpiexec (proxy on %s)", host);
    loom_log_init(&job.log, ident, LOOM_LOG_INFO);
    job.con.log = &job.log;
    job.t0 = loop_now_ms();
    job.host = host;
    mpx_sane_stdio();
    for (int i = 2; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--node") == 0)
            nodeid = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--connect") == 0)
            spec = argv[i + 1];
        else if (strcmp(argv[i], "--connect-timeout") == 0)
            timeout_s = atoi(argv[i + 1]);
    }
    if (nodeid < 0 || !spec || timeout_s < 1) {
        job_msg(&job, "usage: mpiexec --proxy --node N --connect ADDR[,ADDR...]:PORT "
                      "[--connect-timeout S] (started by mpiexec, cookie on stdin)");
        return MPX_EXIT_USAGE;
    }
    job.nodeid = nodeid;
    rc = read_cookie(cookie, sizeof(cookie), timeout_s * 1000);
    if (rc < 0) {
        job_msg(&job, "cannot read the job cookie from stdin: %s", strerror(-rc));
        return 1;
    }
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) {
        dup2(devnull, 0);
        if (devnull != 0)
            close(devnull);
    }
    /* mutual proof of the cookie (front.c); the cookie never travels */
    rc = mpx_proxy_connect(spec, cookie, nodeid, host, timeout_s * 1000, &up, err,
                           sizeof(err));
    job.cookie = strdup(cookie); /* the key of the tree links (proxy_join_tree) */
    memset(cookie, 0, sizeof(cookie));
    job.tree_timeout_ms = timeout_s * 1000;
    if (rc == 0 && !job.cookie) {
        job_msg(&job, "out of memory");
        return 1;
    }
    if (rc < 0) {
        job_msg(&job, "%s", err);
        return 1;
    }
    uint8_t type = 0;
    const uint8_t *body = NULL;
    size_t len = 0;
    if (rc == 0)
        rc = mpx_wait_frame(&up, loop_now_ms() + (uint64_t)timeout_s * 1000, &type, &body,
                            &len);
    if (rc == 0 && type != MPX_F_JOB)
        rc = -EPROTO;
    int *rank_node = NULL, nnodes = 0;
    job.o = &o;
    if (rc == 0)
        rc = decode_job(&job, &o, body, len, &rank_node, &nnodes);
    if (rc < 0) {
        job_msg(&job, "no job from mpiexec: %s", strerror(-rc));
        return 1;
    }
    job.up = &up;
    loom_log_set_sink(&job.log, up_sink, &job);
    if (job.pmi_level > PSRV_LOG_TRACE)
        job.pmi_level = PSRV_LOG_TRACE;
    mpx_raise_nofile();

    struct mpx_bind *binder = NULL;
    if (o.bind == MPX_BIND_CORE) {
        binder = mpx_bind_open(err, sizeof(err));
        if (!binder)
            job_msg(&job, "warning: -bind-to core on host %s: %s", host, err);
    }
    rc = node_run(&job, rank_node, nnodes, nodeid, binder);
    mpx_bind_close(binder);
    free(rank_node);
    mpx_conn_free(&up, 1);
    return rc;
}
