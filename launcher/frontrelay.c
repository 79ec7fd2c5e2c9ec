/* frontrelay.c - the multi-host front end's attached connections, one per
 * proxy: the job frame it gets first (ranks, programs, environment, the
 * treenet rendezvous port), the frames it sends (output assembled into
 * lines, rank exits judged by the exit rule, failures, log lines, done) and
 * a proxy lost before it said done.  Tree messages never come here: the
 * proxies link to each other over treenet.  Design: front.c; state:
 * front_int.h.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "env.h"
#include "front_int.h"

#define EXIT_LOST 1

/* ---- connections to the proxies ----------------------------------------- */

void front_node_send(struct fnode *nd, uint8_t type, struct pack *pk)
{
    if (!nd->done && pack_error(pk) == 0) {
        mpx_conn_send(&nd->c, type, pk->buf, pk->len);
        if (nd->w && mpx_conn_pending(&nd->c))
            loop_watch_set(nd->w, LOOP_READ | LOOP_WRITE);
    }
    pack_free(pk);
}

void front_node_close(struct fnode *nd)
{
    if (nd->w) {
        loop_watch_remove(nd->f->lp, nd->w);
        nd->w = NULL;
    }
    mpx_conn_free(&nd->c, 1);
}

/* The connection of a node that has not reported DONE broke. */
static void node_lost(struct fnode *nd, const char *why)
{
    struct front *f = nd->f;
    char st[128] = "";
    int status;

    front_node_close(nd);
    if (nd->done)
        return;
    if (nd->local && nd->pid > 0 && !nd->reaped) {
        /* a local proxy: its own exit status says what happened */
        for (int i = 0; i < 50; i++) {
            if (waitpid(nd->pid, &status, WNOHANG) == nd->pid) {
                nd->reaped = true;
                nd->wstatus = status;
                break;
            }
            struct timespec ts = {0, 2000000};
            nanosleep(&ts, NULL);
        }
    }
    if (nd->reaped && WIFSIGNALED(nd->wstatus))
        snprintf(st, sizeof(st), ", it was killed by signal %d (%s)",
                 WTERMSIG(nd->wstatus), strsignal(WTERMSIG(nd->wstatus)));
    else if (nd->reaped && WIFEXITED(nd->wstatus))
        snprintf(st, sizeof(st), ", it exited with code %d", WEXITSTATUS(nd->wstatus));
    front_node_finished(nd); /* its ranks are gone: not counted among those to kill */
    front_fail(f, EXIT_LOST, "lost the proxy on host %s (node %d, %d rank%s): %s%s",
               nd->host, nd->id, nd->nranks, mpx_plural(nd->nranks), why, st);
}

static bool rank_of_node(struct front *f, struct fnode *nd, int rank)
{
    return rank >= 0 && rank < f->ly.size && f->ly.rank_node[rank] == nd->id;
}

static void rank_exit(struct front *f, struct fnode *nd, int rank, int status)
{
    if (f->exited[rank])
        return;
    f->exited[rank] = true;
    f->live--;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return;
    if (f->end.ending)
        return;
    char what[96];
    f->end.exit_code = mpx_exit_rule(status, what, sizeof(what)); /* as the local job */
    if (f->spawned) {
        front_msg(f, "rank %d of spawned job %s on host %s %s", rank, f->jobid, nd->host,
                  what);
        if (f->spawned->report_fd >= 0) { /* before every rank started: the spawn fails */
            char why[300];
            snprintf(why, sizeof(why), "rank %d of spawned job %s on host %s %s", rank,
                     f->jobid, nd->host, what);
            front_spawned_report(f, 1, why);
        }
    } else {
        front_msg(f, "rank %d on host %s %s", rank, nd->host, what);
    }
    front_begin_kill(f);
}

/* One frame from node nd's proxy; false: protocol error. */
static bool node_frame(struct fnode *nd, uint8_t type, const uint8_t *body, size_t len)
{
    struct front *f = nd->f;
    struct unpack u;

    unpack_init(&u, body, len);
    f->frames_in++;
    switch (type) {
    case MPX_P_OUT: {
        int rank = unpack_i32(&u);
        int which = unpack_u8(&u);
        size_t n;
        const void *b = unpack_bytes(&u, &n);
        if (!b || unpack_error(&u) || !rank_of_node(f, nd, rank) || which < 1 ||
            which > 2)
            return false;
        iofwd_feed(&f->fwd[rank * 2 + which - 1], b, n, f->o->tag_output,
                   &f->con.obuf[which]);
        if (f->con.obuf[which].len >= MPX_FLUSH_THRESHOLD)
            mpx_console_flush(&f->con);
        return true;
    }
    case MPX_P_EOF: {
        int rank = unpack_i32(&u);
        int which = unpack_u8(&u);
        if (unpack_error(&u) || !rank_of_node(f, nd, rank) || which < 1 || which > 2)
            return false;
        iofwd_eof(&f->fwd[rank * 2 + which - 1], f->o->tag_output, &f->con.obuf[which]);
        return true;
    }
    case MPX_P_EXIT: {
        int rank = unpack_i32(&u);
        int status = unpack_i32(&u);
        if (unpack_error(&u) || !rank_of_node(f, nd, rank))
            return false;
        rank_exit(f, nd, rank, status);
        return true;
    }
    case MPX_P_FAIL: {
        int code = unpack_i32(&u);
        char *text = unpack_strdup(&u);
        if (!text)
            return false;
        front_fail(f, code & 0xff, "%s", text);
        free(text);
        return true;
    }
    case MPX_P_LOG: {
        char *text = unpack_strdup(&u);
        if (!text)
            return false;
        /* as with one host: once the job is being ended, the proxies'
         * complaints about ranks vanishing are consequences, not news */
        if (!f->end.ending || f->o->verbose)
            front_msg(f, "%s", text);
        free(text);
        return true;
    }
    case MPX_P_DONE:
        front_node_finished(nd);
        return true;
    case MPX_P_SPAWN:
        return front_spawn_request(nd, &u);
    case MPX_P_STARTED:
        if (unpack_i32(&u) != nd->id || unpack_error(&u))
            return false;
        front_node_started(nd);
        return true;
    default:
        return false;
    }
}

void front_node_cb(struct loop *lp, struct loop_watch *w, int fd, int revents, void *arg)
{
    struct fnode *nd = arg;

    if (revents & LOOP_WRITE) {
        if (mpx_conn_flush(&nd->c) < 0) {
            node_lost(nd, "connection broken");
            return;
        }
        loop_watch_set(w, LOOP_READ | (mpx_conn_pending(&nd->c) ? LOOP_WRITE : 0));
    }
    if (!(revents & (LOOP_READ | LOOP_ERROR)))
        return;
    long n = mpx_conn_read(&nd->c);
    if (n == -EAGAIN)
        return;
    if (n <= 0) {
        node_lost(nd, n == 0 ? "connection closed" : strerror((int)-n));
        return;
    }
    uint8_t type;
    const uint8_t *body;
    size_t len;
    int rc;
    while (nd->w && (rc = mpx_conn_next(&nd->c, &type, &body, &len)) == 1)
        if (!node_frame(nd, type, body, len)) {
            node_lost(nd, "protocol error");
            return;
        }
    if (nd->w && rc < 0)
        node_lost(nd, "protocol error");
}

/* ---- the job description sent to each proxy ----------------------------- */

/* Environment entries of one application, later ones win on the proxy:
 * mpiexec's environment (hydra's -genvall, unless -genvnone), -genv/-x,
 * then the segment's -env. */
static int env_count(void *arg, const char *kv)
{
    (*(int *)arg)++;
    return 0;
}

static int env_pack(void *arg, const char *kv)
{
    pack_str(arg, kv);
    return 0;
}

static void pack_env(struct front *f, struct mpx_app *a, struct pack *pk)
{
    int n = 0;

    (void)mpx_app_env_each(f->o, a, env_count, &n);
    pack_i32(pk, n);
    (void)mpx_app_env_each(f->o, a, env_pack, pk);
}

int front_send_job(struct fnode *nd)
{
    struct front *f = nd->f;
    struct mpx_opts *o = f->o;
    struct pack pk;

    pack_init(&pk);
    pack_u32(&pk, MPX_PROTO_VERSION);
    pack_str(&pk, f->jobid);
    pack_i32(&pk, f->ly.size);
    pack_i32(&pk, f->nnodes);
    pack_i32(&pk, nd->id);
    pack_i32(&pk, o->fence_timeout_s);
    pack_i32(&pk, f->pmi_level);
    pack_i32(&pk, o->bind == MPX_BIND_CORE);
    pack_i32(&pk, o->report_bindings);
    pack_i32(&pk, o->verbose);
    pack_str(&pk, nd->host);
    for (int r = 0; r < f->ly.size; r++)
        pack_i32(&pk, f->ly.rank_node[r]);
    pack_i32(&pk, o->napps);
    for (int a = 0; a < o->napps; a++) {
        struct mpx_app *app = &o->apps[a];
        pack_i32(&pk, app->np);
        pack_i32(&pk, app->argc);
        for (int i = 0; i < app->argc; i++)
            pack_str(&pk, app->argv[i]);
        pack_env(f, app, &pk);
        const char *wdir = app->wdir ? app->wdir : o->gwdir;
        pack_str(&pk, wdir ? wdir : f->cwd);
        pack_u8(&pk, wdir ? 0 : 1);
    }
    /* the tree: the rendezvous port (on the address the proxy reached us
     * at) and the port range for the proxies' own listeners */
    pack_i32(&pk, f->rdv ? rdv_server_port(f->rdv) : 0);
    pack_i32(&pk, f->port_lo);
    pack_i32(&pk, f->port_hi);
    /* a spawned job: the spawner's id and the preput pairs (spawn.h) */
    pack_u8(&pk, f->spawned ? 1 : 0);
    if (f->spawned) {
        pack_str(&pk, f->spawned->spawner_jobid);
        pack_i32(&pk, f->spawned->npreput);
        for (int i = 0; i < f->spawned->npreput; i++) {
            pack_str(&pk, f->spawned->preput[i].key);
            pack_str(&pk, f->spawned->preput[i].val);
        }
    }
    int rc = pack_error(&pk);
    if (rc == 0)
        rc = mpx_conn_send_first(&nd->c, MPX_F_JOB, pk.buf, pk.len);
    pack_free(&pk);
    return rc;
}
