/* frontstart.c - starting the multi-host front end's proxies: one
 * "mpiexec --proxy" per node, forked directly or through the remote launcher
 * (ssh -x, rsh, -launcher-exec), the job cookie written to its stdin;
 * reaping the launchers (one that exits before its proxy connected ends the
 * job), signalling them, and waiting for them after the job.  Design:
 * front.c; state: front_int.h.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "front_int.h"
#include "log.h"
#include "node.h" /* mpx_find_program */
#include "pack.h"
#include "spawnwire.h"

#define LAUNCHER_WAIT_MS 3000 /* after the job: launchers (ssh) get this to exit */

/* ---- starting the proxies ------------------------------------------------ */

void front_kill_launcher(struct fnode *nd, int sig)
{
    if (nd->pid > 0 && !nd->reaped)
        mpx_kill_group(nd->pid, sig); /* it leads its own process group */
}

/* Split s at blanks into v (malloc'd copy in *store). */
static int split_words(const char *s, char **store, char **v, int max)
{
    int n = 0;
    char *save = NULL;

    *store = strdup(s);
    if (!*store)
        return -ENOMEM;
    for (char *w = strtok_r(*store, " \t", &save); w && n < max;
         w = strtok_r(NULL, " \t", &save))
        v[n++] = w;
    return n;
}

int front_start_proxy(struct front *f, struct fnode *nd, char *err, size_t errlen)
{
    char node[16], conn[1100], tmo[16];
    char *words = NULL, *argv[48];
    int n = 0, p[2];
    const char *spec = nd->local ? f->addrs_local : f->addrs_remote;

    snprintf(node, sizeof(node), "%d", nd->id);
    snprintf(conn, sizeof(conn), "%s:%d", spec, f->port);
    snprintf(tmo, sizeof(tmo), "%d", (f->timeout_ms + 999) / 1000);
    if (!nd->local) {
        const char *ex = f->o->launcher_exec;
        if (!ex)
            ex = f->kind == MPX_LAUNCHER_RSH ? "rsh" : "ssh -x";
        n = split_words(ex, &words, argv, 32);
        if (n <= 0) {
            snprintf(err, errlen, "bad -launcher-exec '%s'", ex);
            free(words);
            return -EINVAL;
        }
        argv[n++] = (char *)nd->host;
    }
    argv[n++] = f->self;
    argv[n++] = "--proxy";
    argv[n++] = "--node";
    argv[n++] = node;
    argv[n++] = "--connect";
    argv[n++] = conn;
    argv[n++] = "--connect-timeout";
    argv[n++] = tmo;
    argv[n] = NULL;
    if (f->o->verbose) {
        char line[2048];
        size_t l = 0;
        for (int i = 0; i < n && l < sizeof(line) - 1; i++)
            l += (size_t)snprintf(line + l, sizeof(line) - l, "%s%s", i ? " " : "",
                                  argv[i]);
        front_msg(f, "node %d (host %s): %s", nd->id, nd->host, line);
    }
    if (pipe2(p, O_CLOEXEC) < 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        free(words);
        return -errno;
    }
    /* execvp's search, done here: the child only execs (child.h) */
    char pathbuf[4096];
    extern char **environ;
    struct child_spec cs = {
        .path = mpx_find_program(argv[0], pathbuf, sizeof(pathbuf)),
        .argv = argv,
        .envp = environ,
        .fd0 = p[0], /* the cookie comes this way */
        .fd1 = -1,
        .fd2 = -1,
        /* its own process group: a Ctrl-C reaches mpiexec, which ends the job */
        .pgrp = CHILD_PGRP_NEW,
    };
    struct child_result res;
    pid_t pid = child_start(&cs, &res);
    close(p[0]);
    if (pid < 0) {
        close(p[1]);
        child_describe(&cs, &res, err, errlen);
        free(words);
        return (int)pid;
    }
    nd->pid = pid;
    /* the cookie: through the launcher's stdin, never on a command line */
    char line[80];
    int ll = snprintf(line, sizeof(line), "%s\n", f->cookie);
    if (write(p[1], line, (size_t)ll) != ll) {
        /* the launcher died at once: its exit is reported when reaped */
    }
    memset(line, 0, sizeof(line));
    close(p[1]);
    free(words);
    return 0;
}

/* A nested mpiexec (a job our ranks spawned) ended: its failure is ours,
 * as with one host (node.c). */
static void spawned_job_exited(struct front *f, const char *what, int status)
{
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return;
    if (WIFEXITED(status))
        front_fail(f, WEXITSTATUS(status), "%s failed (its mpiexec exited with code %d)",
                   what, WEXITSTATUS(status));
    else
        front_fail(f, 1, "%s failed (its mpiexec was killed by signal %d)", what,
                   WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

void front_reap(struct front *f)
{
    int status;
    pid_t pid;

    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        char what[96];
        bool judge = true;
        if (mpx_spawner_reaped(f->spawner, pid, status, what, sizeof(what), &judge)) {
            if (judge)
                spawned_job_exited(f, what, status);
            continue;
        }
        for (int i = 0; i < f->nnodes; i++) {
            struct fnode *nd = &f->nodes[i];
            if (nd->pid != pid || nd->reaped)
                continue;
            nd->reaped = true;
            nd->wstatus = status;
            if (nd->connected || nd->done)
                break; /* the connection tells the rest */
            if (WIFEXITED(status))
                front_fail(
                    f, MPX_EXIT_LAUNCH,
                    "cannot start the proxy on host %s: the launcher exited with code %d",
                    nd->host, WEXITSTATUS(status));
            else
                front_fail(
                    f, MPX_EXIT_LAUNCH,
                    "cannot start the proxy on host %s: the launcher was killed by "
                    "signal %d",
                    nd->host, WTERMSIG(status));
            front_node_finished(nd);
            break;
        }
    }
    front_check_done(f);
}

/* ---- spawning ----------------------------------------------------------- */

/* mpx_spawn_done_fn: the answer goes to the proxy of the spawning rank. */
static void spawn_done(void *arg, int from, uint64_t id, int rc, const char *jobid,
                       int total, const char *msg)
{
    struct front *f = arg;
    struct pack pk;

    if (from < 0 || from >= f->nnodes)
        return;
    pack_init(&pk);
    pack_u64(&pk, id);
    pack_i32(&pk, rc);
    pack_str(&pk, jobid ? jobid : "");
    pack_i32(&pk, total);
    pack_str(&pk, msg ? msg : "");
    front_node_send(&f->nodes[from], MPX_F_SPAWN_DONE, &pk);
}

int front_spawner_setup(struct front *f)
{
    const char *lv[5] = {"-launcher", "ssh", NULL, NULL, NULL};
    int max = f->spawned
                  ? f->spawned->budget
                  : mpx_env_int("LOOM_MPIEXEC_MAX_SPAWN_PROCS", MPX_SPAWN_DEF_MAX_PROCS);

    f->spawner = mpx_spawner_create(f->lp, spawn_done, f, f->jobid, f->o->fence_timeout_s,
                                    max < 0 ? 0 : max);
    if (!f->spawner)
        return -ENOMEM;
    if (f->kind == MPX_LAUNCHER_FORK)
        lv[1] = "fork";
    else if (f->kind == MPX_LAUNCHER_RSH)
        lv[1] = "rsh";
    if (f->o->launcher_exec) {
        lv[2] = "-launcher-exec";
        lv[3] = f->o->launcher_exec;
    }
    return mpx_spawner_set_hosts(f->spawner, &f->hl, f->o->ppn, lv);
}

/* MPX_P_SPAWN from nd's proxy: start the job, or answer why not at once.
 * False: the frame is malformed. */
bool front_spawn_request(struct fnode *nd, struct unpack *u)
{
    struct front *f = nd->f;
    char err[600], why[256];
    size_t blen = 0;
    uint64_t id = unpack_u64(u);
    const void *body = unpack_bytes(u, &blen);

    if (unpack_error(u) || unpack_remaining(u) != 0)
        return false;
    /* the same frame as a stepd's to srun, read with the core's bounds (spawnwire.h) */
    struct lspawn_req *r = lspawn_decode(body, blen, why, sizeof(why));
    if (!r) {
        char esc[300];
        loom_log_escape(esc, sizeof(esc), why);
        snprintf(err, sizeof(err), "spawn: the request was refused: %s", esc);
        spawn_done(f, nd->id, id, -1, "", 0, err);
        return true;
    }
    int rc;
    if (f->end.ending) {
        snprintf(err, sizeof(err), "spawn: the job is ending");
        rc = -ECANCELED;
    } else {
        rc = mpx_spawn_start(f->spawner, nd->id, id, &r->view, err, sizeof(err));
    }
    if (rc < 0)
        spawn_done(f, nd->id, id, -1, "", r->view.total, err);
    lspawn_free(r);
    return true;
}

/* Write the report owed to our spawner (spawn.h), once. */
void front_spawned_report(struct front *f, int rc, const char *msg)
{
    if (f->spawned)
        mpx_spawned_report(f->spawned, rc, msg);
}

/* MPX_P_STARTED: a spawned job is running once every proxy started its ranks. */
void front_node_started(struct fnode *nd)
{
    struct front *f = nd->f;

    if (nd->started)
        return;
    nd->started = true;
    if (++f->nstarted == f->nnodes && !f->end.ending)
        front_spawned_report(f, 0, NULL);
}

/* After the loop: hang up on every proxy and give the launchers a moment
 * to exit (ssh ends when its proxy does); then end them. */
void front_wait_launchers(struct front *f)
{
    uint64_t end = loop_now_ms() + LAUNCHER_WAIT_MS;
    int status;

    for (int i = 0; i < f->nnodes; i++)
        front_node_close(&f->nodes[i]);
    for (;;) {
        int left = 0;
        for (int i = 0; i < f->nnodes; i++) {
            struct fnode *nd = &f->nodes[i];
            if (nd->pid <= 0 || nd->reaped)
                continue;
            if (waitpid(nd->pid, &status, WNOHANG) == nd->pid) {
                nd->reaped = true;
                continue;
            }
            left++;
        }
        if (!left)
            return;
        if (loop_now_ms() >= end)
            break;
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    for (int i = 0; i < f->nnodes; i++)
        front_kill_launcher(&f->nodes[i], SIGTERM);
    struct timespec ts = {0, 200000000};
    nanosleep(&ts, NULL);
    for (int i = 0; i < f->nnodes; i++) {
        struct fnode *nd = &f->nodes[i];
        if (nd->pid > 0 && !nd->reaped && waitpid(nd->pid, &status, WNOHANG) != nd->pid) {
            front_kill_launcher(nd, SIGKILL);
            waitpid(nd->pid, &status, 0);
        }
        nd->reaped = true;
    }
}
