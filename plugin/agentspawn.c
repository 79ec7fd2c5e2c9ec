/* agentspawn.c - a task's spawn (PMI spawn / MPI_Comm_spawn) handed from the
 * stepd agent to srun's spawn server (spawnlink.h): the call, its answer and
 * its bound, and the answer given back to the core (psrv_spawn_done).
 *
 * Contract (agent.h):
 *   agent_spawn is the node server's spawn op: it checks LoomSpawnMaxProcs,
 *   connects to srun (SLURM_LOOM_SPAWN_PORT, munge-authenticated as the job's
 *   uid), hands it the request and returns; the answer (or srun closing, or
 *   no answer within LoomSpawnTimeout plus a slack) comes back on the agent's
 *   loop and ends the call.  One spawn in flight per local task at the most.
 *   agent_spawns_free closes what is still open (the step ends).
 *   A build with LOOM_PLUGIN_NO_TREENET has no spawn: the core answers a
 *   spawn as unsupported (no spawn op), free does nothing.
 */

#include "slurm_glue.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "spawnlink.h"
#include "spawnwire.h"
#ifndef LOOM_PLUGIN_NO_TREENET
#include "treenet.h"
#endif

/* Close a call's connection, watch and timer; the slot is free again. */
static void spawn_call_close(struct agent *a, struct spawn_call *sc)
{
    if (sc->w)
        loop_watch_remove(a->lp, sc->w);
    if (sc->t)
        loop_timer_cancel(a->lp, sc->t);
    if (sc->fd >= 0)
        close(sc->fd);
    memset(sc, 0, sizeof(*sc));
    sc->fd = -1;
}

void agent_spawns_free(struct agent *a)
{
    for (int i = 0; a->spawns && i < a->st->local_count; i++)
        spawn_call_close(a, &a->spawns[i]);
    free(a->spawns);
    a->spawns = NULL;
}

#ifndef LOOM_PLUGIN_NO_TREENET
#define SPAWN_CONNECT_MS 5000       /* reaching srun and handing it the request */
#define SPAWN_ANSWER_SLACK_MS 10000 /* beyond the step's start timeout */

static void spawn_call_end(struct agent *a, struct spawn_call *sc, int rc,
                           const char *jobid, const char *msg)
{
    uint64_t id = sc->id;
    int total = sc->total;

    spawn_call_close(a, sc);
    if (rc != 0)
        loom_plog(LOOM_PLOG_QUIET, "%s: step %s node %d: spawn failed: %s",
                  loom_plugin_tag, a->st->jobid, a->st->nodeid, msg);
    (void)psrv_spawn_done(nodesrv_core_enter(a->ns), id, rc, jobid, NULL, total, msg);
    nodesrv_core_leave(a->ns);
}

static void on_spawn_answer(struct loop *lp, struct loop_watch *w, int fd, int revents,
                            void *arg)
{
    struct spawn_call *sc = arg;
    char text[LSPAWN_ANSWER_MAX];
    int rc = -1;

    int r = lspawn_answer_read(fd, sc->buf, &sc->have, &rc, text, sizeof(text));
    if (r == 0)
        return;
    if (r < 0) {
        spawn_call_end(sc->a, sc, -1, NULL,
                       r == -EPIPE ? "spawn: srun closed the spawn connection without "
                                     "an answer"
                                   : "spawn: bad answer from srun");
        return;
    }
    if (rc == 0 && !text[0])
        spawn_call_end(sc->a, sc, -1, NULL, "spawn: srun answered no job id");
    else
        spawn_call_end(sc->a, sc, rc, rc == 0 ? text : NULL, rc == 0 ? NULL : text);
}

static void on_spawn_timeout(struct loop *lp, struct loop_timer *t, void *arg)
{
    struct spawn_call *sc = arg;

    sc->t = NULL; /* fired */
    spawn_call_end(sc->a, sc, -1, NULL, "spawn: no answer from srun in time");
}

int agent_spawn(void *arg, uint64_t id, const struct psrv_spawn *req, char *err,
                size_t errlen)
{
    struct agent *a = arg;
    struct loom_step *st = a->st;
    struct spawn_call *sc = NULL;
    char *body = NULL;
    size_t len = 0;
    int rc;

    if (st->conf.spawn_max_procs && (uint32_t)req->total > st->conf.spawn_max_procs) {
        snprintf(err, errlen,
                 "spawn: %d processes asked, at most %u in one spawn "
                 "(LoomSpawnMaxProcs)",
                 req->total, st->conf.spawn_max_procs);
        return -E2BIG;
    }
    if (!st->spawn_server) {
        snprintf(err, errlen,
                 "spawn: srun published no spawn server (%s unset: was srun "
                 "started with the same --mpi plugin?)",
                 LSPAWN_ENV_PORT);
        return -ENOTSUP;
    }
    for (int i = 0; i < st->local_count && !sc; i++)
        if (a->spawns[i].id == 0 && a->spawns[i].fd < 0)
            sc = &a->spawns[i];
    if (!sc) {
        snprintf(err, errlen, "spawn: too many spawns in flight on this node");
        return -EAGAIN;
    }
    if ((rc = lspawn_encode(req, (int)st->conf.spawn_max_inflight,
                            (int)st->conf.spawn_timeout_s, &body, &len)) < 0) {
        snprintf(err, errlen, "spawn: request too large to forward to srun");
        return rc;
    }
    rc = lspawn_call_start(st->spawn_server, st->jobid, st->uid, TREENET_AUTH_MUNGE, body,
                           len, SPAWN_CONNECT_MS, err, errlen);
    free(body);
    if (rc < 0)
        return rc;
    sc->a = a;
    sc->id = id;
    sc->fd = rc;
    sc->total = req->total;
    sc->have = 0;
    sc->w = loop_watch_add(a->lp, sc->fd, LOOP_READ, on_spawn_answer, sc);
    sc->t = loop_timer_add(
        a->lp, (uint64_t)st->conf.spawn_timeout_s * 1000 + SPAWN_ANSWER_SLACK_MS,
        on_spawn_timeout, sc);
    if (!sc->w || !sc->t) {
        spawn_call_close(a, sc);
        snprintf(err, errlen, "spawn: out of memory");
        return -ENOMEM;
    }
    return 0;
}
#endif
