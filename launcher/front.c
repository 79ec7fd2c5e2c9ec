/* front.c - multi-host mpiexec: mpx_front_main (the host list, the layout, one
 * proxy per node, the event loop), its messages, ending the job (the kill sent
 * to every proxy, giving up on silent ones), signals and --timeout.  The rest
 * of the front end is in frontaccept.c, frontrelay.c and frontstart.c
 * (front_int.h says who owns what); this header has the design of all four.
 *
 * Contract: see front.h; the user-visible rules (exit status, messages,
 * kill sequence) are those of the single-host launcher (node.c), and the
 * job control (signals, console, exit rule) is the same code (jobctl.h), with
 * the host named in messages about ranks and proxies.
 *
 * Design:
 *   mpiexec runs no rank itself here: every node (distinct host with ranks,
 *   hosts.c) gets a proxy, which is the same binary in --proxy mode.
 *   mpiexec listens on a TCP port on all IPv4 addresses (MPIEXEC_PORT_RANGE
 *   limits the port, as with hydra) and tells each proxy the candidate
 *   addresses (LOOM_MPIEXEC_ADDRS overrides them) and the port on its
 *   command line; the random job cookie goes through the launcher's stdin,
 *   so it never shows in ps, and it never goes on the wire either.  A
 *   connection is attached to its node only after a mutual proof of the
 *   cookie (version 2 handshake, conn.h, handshake.h): the proxy sends HELLO2 (node id,
 *   nonce Np); mpiexec answers PROOF (nonce Nf, HMAC(cookie, "front", node,
 *   Np, Nf)); the proxy checks it before it sends anything reusable, then
 *   sends its own PROOF (HMAC(cookie, "proxy", node, Np, Nf)).  From there
 *   every control frame in both directions (the job, kill, exits, failures:
 *   MPX_TAGGED_TYPES) carries an HMAC tag keyed by the cookie, the direction
 *   and the node, so whatever answers at a candidate address (another user's
 *   listener, even one relaying to the real mpiexec) gets no cookie, cannot
 *   make the proxy run anything, and cannot alter the job the real mpiexec
 *   sends.  Output is not tagged (see conn.h); a relay could alter it, as
 *   anyone on the network could.
 *
 *   The port against strangers: an accepted connection has LOOM_PROXY_
 *   HANDSHAKE_TIMEOUT (3 s) to finish its handshake; at most MAX_PENDING
 *   wait at once and one more evicts the oldest, so idle connections never
 *   keep a proxy out (proxies retry with backoff within their connect
 *   timeout); accept errors for lack of fds are absorbed with a spare fd;
 *   the port closes once every proxy is in.  Refusals are logged
 *   rate-limited (REFUSE_LOG_BURST per REFUSE_LOG_WINDOW_MS).  All of this
 *   is frontaccept.c.  The tree rendezvous' port (below) refuses strangers
 *   the same way, rate-limited by treenet, and its refusals come out as
 *   warnings too (front_rdv_log).
 *
 *   The proxies' PMI server cores form the usual k-ary tree (psrv) and link
 *   to each other directly over treenet (treenet/treenet.h), as the Slurm
 *   plugin's stepds do: mpiexec runs treenet's rendezvous server (a thread,
 *   TREENET_AUTH_COOKIE: every proxy and the server prove the job cookie,
 *   bound to the job, both nodes and the connection's nonces) and sends its
 *   port in the job frame; each proxy meets it at the address it reached
 *   mpiexec on, then connects to its parent and accepts its children.  No
 *   tree message passes through mpiexec: it is off the fence path.
 *
 *   Every wait is bounded: the connect-back (LOOM_PROXY_TIMEOUT, default
 *   30 s; the rendezvous twice that), an unauthenticated connection (3 s),
 *   a proxy's answer to the kill (MPX_KILL_GRACE_MS + GIVEUP_MS), and the
 *   launchers' exit after the job.
 *
 * Caveats:
 *   - Rank 0's stdin is /dev/null in multi-host mode (not forwarded).
 *   - IPv4 only.  The cookie authenticates proxies to mpiexec; the traffic
 *     itself is not encrypted (as with hydra).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "env.h"
#include "front.h"
#include "front_int.h"
#include "mac.h"
#include "node.h" /* MPX_TREE_WIDTH: the proxies' tree */

#define GIVEUP_MS 5000 /* after the kill: a proxy that stays silent is given up */

/* ---- messages ------------------------------------------------------------ */

/* One "mpiexec: ..." line on stderr, after the rank output gathered so far. */
void front_msg(struct front *f, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    mpx_console_vmsg(&f->con, fmt, ap);
    va_end(ap);
}

/* ---- job end ------------------------------------------------------------- */

/* The job is over when every proxy is done and every job its ranks
 * spawned has ended (as with one host, node.c). */
void front_check_done(struct front *f)
{
    if (f->ndone >= f->nnodes && mpx_spawner_live(f->spawner) == 0)
        loop_stop(f->lp, 0);
}

void front_node_finished(struct fnode *nd)
{
    struct front *f = nd->f;

    if (nd->done)
        return;
    nd->done = true;
    f->ndone++;
    /* its ranks that did not report an exit are gone with it */
    for (int r = 0; r < f->ly.size; r++)
        if (f->ly.rank_node[r] == nd->id && !f->exited[r]) {
            f->exited[r] = true;
            f->live--;
        }
    front_check_done(f);
}

static void giveup_cb(struct loop *lp, struct loop_timer *t, void *arg)
{
    struct front *f = arg;

    f->giveup_timer = NULL;
    for (int i = 0; i < f->nnodes; i++) {
        struct fnode *nd = &f->nodes[i];
        if (nd->done)
            continue;
        front_msg(
            f, "no answer from the proxy on host %s (node %d) after the kill: giving up",
            nd->host, nd->id);
        front_node_close(nd);
        front_kill_launcher(nd, SIGKILL);
        front_node_finished(nd);
    }
    mpx_spawner_kill(f->spawner, SIGKILL);
}

void front_begin_kill(struct front *f)
{
    if (f->end.ending)
        return;
    f->end.ending = true;
    if (f->live > 0)
        front_msg(f, "killing %d remaining rank%s", f->live, mpx_plural(f->live));
    mpx_spawner_kill(f->spawner, SIGTERM); /* a nested mpiexec ends its own ranks */
    for (int i = 0; i < f->nnodes; i++) {
        struct fnode *nd = &f->nodes[i];
        if (nd->done)
            continue;
        if (nd->connected) {
            struct pack pk;
            pack_init(&pk);
            pack_i32(&pk, SIGTERM);
            front_node_send(nd, MPX_F_KILL, &pk);
        } else {
            /* not connected: it has no ranks yet, and will be refused */
            front_kill_launcher(nd, SIGTERM);
            front_node_finished(nd);
        }
    }
    if (!f->giveup_timer && (f->ndone < f->nnodes || mpx_spawner_live(f->spawner)))
        f->giveup_timer =
            loop_timer_add(f->lp, MPX_KILL_GRACE_MS + GIVEUP_MS, giveup_cb, f);
}

void front_fail(struct front *f, int code, const char *fmt, ...)
{
    va_list ap;

    if (f->end.ending && !f->o->verbose)
        return;
    va_start(ap, fmt);
    mpx_console_vmsg(&f->con, fmt, ap);
    va_end(ap);
    if (f->spawned && f->spawned->report_fd >= 0) {
        char why[400];
        va_start(ap, fmt);
        vsnprintf(why, sizeof(why), fmt, ap);
        va_end(ap);
        front_spawned_report(f, 1, why);
    }
    if (!f->end.ending) {
        f->end.exit_code = code ? code : 1;
        front_begin_kill(f);
    }
}

static void on_term(void *arg, int sig)
{
    struct front *f = arg;

    if (mpx_jobend_signal(&f->end, sig)) {
        /* a second one: no more grace anywhere */
        for (int k = 0; k < f->nnodes; k++) {
            struct pack pk;
            pack_init(&pk);
            pack_i32(&pk, SIGKILL);
            front_node_send(&f->nodes[k], MPX_F_KILL, &pk);
        }
        return;
    }
    front_msg(f, "caught signal %d (%s)", sig, strsignal(sig));
    if (!f->end.ending)
        f->end.exit_code = 128 + sig;
    front_begin_kill(f);
}

static void on_child(void *arg)
{
    front_reap(arg);
}

static void sig_cb(struct loop *lp, struct loop_watch *w, int fd, int revents, void *arg)
{
    mpx_signals_dispatch(fd, on_term, on_child, arg);
}

static void timeout_cb(struct loop *lp, struct loop_timer *t, void *arg)
{
    struct front *f = arg;

    f->timeout_timer = NULL;
    if (mpx_jobend_timeout(&f->end, &f->con, f->o->timeout_s))
        front_begin_kill(f);
}

static int prepare_cb(struct loop *lp, void *arg)
{
    struct front *f = arg;

    mpx_console_flush(&f->con);
    return -1;
}

static int make_cookie(char *out, size_t outlen)
{
    unsigned char b[LOOM_KEY_LEN];

    if (outlen < 2 * sizeof(b) + 1)
        return -EINVAL;
    if (loom_random_bytes(b, sizeof(b)) < 0)
        return -errno;
    loom_hex(b, sizeof(b), out);
    memset(b, 0, sizeof(b));
    return 0;
}

static int env_ms(const char *name, int dflt_s)
{
    const char *s = getenv(name);
    char *end;
    long v;

    if (!s || !*s)
        return dflt_s * 1000;
    v = strtol(s, &end, 10);
    if (*end || v < 1 || v > 86400)
        return dflt_s * 1000;
    return (int)v * 1000;
}

static enum mpx_launcher_kind resolve_kind(const struct mpx_opts *o)
{
    if (o->launcher != MPX_LAUNCHER_AUTO)
        return o->launcher;
    const char *l = getenv("LOOM_MPIEXEC_LAUNCHER");
    if (l && strcmp(l, "fork") == 0)
        return MPX_LAUNCHER_FORK;
    if (l && strcmp(l, "rsh") == 0)
        return MPX_LAUNCHER_RSH;
    return MPX_LAUNCHER_SSH;
}

int mpx_front_main(struct mpx_opts *o, int pmi_level, struct loom_log *log,
                   struct mpx_spawned *spawned)
{
    struct mpx_hostlist hl = {0};
    struct front f;
    char err[1024], myname[256] = "";
    int rc;

    memset(&f, 0, sizeof(f));
    f.o = o;
    f.log = log;
    f.con.log = log;
    f.pmi_level = pmi_level;
    f.lfd = -1;
    f.spare_fd = -1;
    f.t0 = loop_now_ms();
    f.spawned = spawned && spawned->on ? spawned : NULL;
    rc = o->hosts ? mpx_hosts_parse(o->hosts, &hl, err, sizeof(err)) : 0;
    if (rc == 0 && o->hostfile)
        rc = mpx_hostfile_read(o->hostfile, &hl, err, sizeof(err));
    if (rc < 0) {
        front_msg(&f, "%s", rc == -ENOMEM ? "out of memory" : err);
        mpx_hosts_free(&hl);
        return MPX_EXIT_USAGE;
    }
    /* no -n with a host list: one rank per slot, as hydra */
    if (o->napps == 1 && !o->apps[0].np_set) {
        long t = mpx_hosts_total_slots(&hl, o->ppn);
        o->apps[0].np = (int)(t > 65536 ? 65536 : t);
        o->nranks = o->apps[0].np;
    }
    f.kind = resolve_kind(o);
    if (f.kind == MPX_LAUNCHER_SLURM) {
        front_msg(&f, "-launcher slurm needs srun (not found)");
        mpx_hosts_free(&hl);
        return MPX_EXIT_LAUNCH;
    }
    rc = mpx_hosts_layout(&hl, o->nranks, o->ppn, &f.ly);
    f.hl = hl; /* kept: spawned jobs go over the same hosts */
    if (rc < 0) {
        mpx_hosts_free(&f.hl);
        front_msg(&f, "cannot place %d ranks on the hosts: %s", o->nranks, strerror(-rc));
        return MPX_EXIT_USAGE;
    }
    gethostname(myname, sizeof(myname) - 1);
    if (f.ly.nnodes == 1 &&
        (f.kind == MPX_LAUNCHER_FORK || mpx_host_is_local(f.ly.node_host[0], myname))) {
        mpx_layout_free(&f.ly);
        mpx_hosts_free(&f.hl);
        return MPX_FRONT_LOCAL;
    }

    /* from here on, a multi-host job */
    ssize_t sl = readlink("/proc/self/exe", f.self, sizeof(f.self) - 1);
    const char *px = getenv("LOOM_MPIEXEC_PROXY");
    if (px && *px)
        snprintf(f.self, sizeof(f.self), "%s", px);
    else if (sl <= 0) {
        front_msg(&f, "cannot find my own executable: %s", strerror(errno));
        return MPX_EXIT_LAUNCH;
    }
    if (!getcwd(f.cwd, sizeof(f.cwd)))
        f.cwd[0] = '\0';
    f.timeout_ms = env_ms("LOOM_PROXY_TIMEOUT", 30);
    f.hs_ms = env_ms("LOOM_PROXY_HANDSHAKE_TIMEOUT", PENDING_MS / 1000);
    f.spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (f.spawned)
        snprintf(f.jobid, sizeof(f.jobid), "%s", f.spawned->jobid);
    else
        snprintf(f.jobid, sizeof(f.jobid), "%u.0", (unsigned)getpid());
    f.nnodes = f.ly.nnodes;
    f.nodes = calloc((size_t)f.nnodes, sizeof(*f.nodes));
    f.fwd = calloc((size_t)f.ly.size * 2, sizeof(*f.fwd));
    f.exited = calloc((size_t)f.ly.size, sizeof(*f.exited));
    f.lp = loop_create();
    if (!f.nodes || !f.fwd || !f.exited || !f.lp ||
        make_cookie(f.cookie, sizeof(f.cookie)) || front_spawner_setup(&f) < 0) {
        front_msg(&f, "out of memory (or no random numbers for the job cookie)");
        return 1;
    }
    for (int r = 0; r < f.ly.size; r++)
        f.fwd[2 * r].rank = f.fwd[2 * r + 1].rank = r;
    f.live = f.ly.size;
    for (int i = 0; i < f.nnodes; i++) {
        struct fnode *nd = &f.nodes[i];
        nd->f = &f;
        nd->id = i;
        nd->host = f.ly.node_host[i];
        nd->nranks = f.ly.node_nranks[i];
        nd->local = f.kind == MPX_LAUNCHER_FORK || mpx_host_is_local(nd->host, myname);
        mpx_conn_init(&nd->c, -1);
        mpx_key_init(&nd->key, f.cookie, i);
        mpx_conn_set_tag(&nd->c, mpx_key_tag, &nd->key, MPX_DIR_FRONT, MPX_DIR_PROXY);
        if (!nd->local && strpbrk(f.self, " \t\n'\"\\$`;&|<>*?()[]{}~!#")) {
            front_msg(&f,
                      "the proxy path '%s' cannot go through a remote shell (set "
                      "LOOM_MPIEXEC_PROXY)",
                      f.self);
            return MPX_EXIT_LAUNCH;
        }
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    rc = front_open_listener(&f, err, sizeof(err));
    if (rc < 0) {
        front_msg(&f, "%s", err);
        return rc == -EINVAL ? MPX_EXIT_USAGE : MPX_EXIT_LAUNCH;
    }
    rc = mpx_signals_install();
    if (rc < 0) {
        front_msg(&f, "cannot install signal handlers: %s", strerror(-rc));
        return 1;
    }
    /* the proxies' tree rendezvous: bounded by twice the connect-back, since
     * a proxy comes there only after it connected back and got the job */
    f.rdv = rdv_server_start_cookie(f.nnodes, MPX_TREE_WIDTH, f.jobid, f.cookie, NULL,
                                    (unsigned)f.port_lo, (unsigned)f.port_hi,
                                    2 * f.timeout_ms, front_rdv_log, &f);
    if (!f.rdv) {
        front_msg(&f, "cannot start the tree rendezvous: %s", strerror(errno));
        return MPX_EXIT_LAUNCH;
    }
    f.sig_w = loop_watch_add(f.lp, rc, LOOP_READ, sig_cb, &f);
    f.lw = loop_watch_add(f.lp, f.lfd, LOOP_READ, front_listen_cb, &f);
    loop_set_prepare(f.lp, prepare_cb, &f);
    if (o->timeout_s > 0)
        f.timeout_timer =
            loop_timer_add(f.lp, (uint64_t)o->timeout_s * 1000, timeout_cb, &f);
    f.connect_timer =
        loop_timer_add(f.lp, (uint64_t)f.timeout_ms, front_connect_timeout_cb, &f);
    if (o->verbose)
        front_msg(&f, "%d ranks on %d hosts; listening on port %d (addresses %s)",
                  f.ly.size, f.nnodes, f.port, f.addrs_remote);

    for (int i = 0; i < f.nnodes && !f.end.ending; i++) {
        rc = front_start_proxy(&f, &f.nodes[i], err, sizeof(err));
        if (rc < 0) {
            front_fail(&f, MPX_EXIT_LAUNCH, "cannot start the proxy on host %s: %s",
                       f.nodes[i].host, err);
            front_node_finished(&f.nodes[i]);
        }
    }
    rc = 0;
    if (f.ndone < f.nnodes)
        rc = loop_run(f.lp);
    if (rc < 0)
        front_msg(&f, "event loop failed: %s", strerror(-rc));
    for (int r = 0; r < f.ly.size; r++)
        for (int k = 0; k < 2; k++)
            iofwd_eof(&f.fwd[2 * r + k], o->tag_output, &f.con.obuf[k + 1]);
    mpx_console_flush(&f.con);
    front_wait_launchers(&f);
    if (o->verbose) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        front_msg(&f,
                  "job ended after %llu ms, exit code %d (mpiexec cpu: %ld.%03ld s user, "
                  "%ld.%03ld s sys; %ld frames from the proxies)",
                  (unsigned long long)(loop_now_ms() - f.t0), f.end.exit_code,
                  (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec / 1000,
                  (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec / 1000,
                  f.frames_in);
    }
    (void)rdv_server_stop(f.rdv); /* ended by itself once every proxy got the table */
    mpx_spawner_destroy(f.spawner);
    mpx_hosts_free(&f.hl);

    while (f.pending)
        front_pend_free(&f, f.pending);
    for (int r = 0; r < f.ly.size * 2; r++)
        iobuf_free(&f.fwd[r].part);
    mpx_console_free(&f.con);
    loop_destroy(f.lp);
    if (f.lfd >= 0)
        close(f.lfd);
    if (f.spare_fd >= 0)
        close(f.spare_fd);
    free(f.nodes);
    free(f.fwd);
    free(f.exited);
    mpx_layout_free(&f.ly);
    memset(f.cookie, 0, sizeof(f.cookie));
    if (rc < 0 && f.end.exit_code == 0)
        return 1;
    return f.end.exit_code;
}
