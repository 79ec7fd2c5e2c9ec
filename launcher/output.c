/* output.c - the ranks' stdout and stderr: each pipe read in chunks and
 * assembled into whole lines (iofwd.h, optionally tagged "[rank] ") for our
 * console, or, in proxy mode, sent raw to the front end as frames, with the
 * pipes paused while too much is queued for it (UP_HIGH/UP_LOW). */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdio.h"
#include "node.h"

/* iofwd could not take a rank's output (ENOMEM): what it held is gone.  Said
 * once per stream, and the job's exit status will not be 0 (node_run). */
static void output_lost(struct stream *s)
{
    struct job *job = s->job;

    if (!s->lost)
        job_msg(job, "rank %d: out of memory: some of its %s was lost", s->r->rank,
                s->which == 1 ? "stdout" : "stderr");
    s->lost = true;
    job->out_lost = true;
}

void stream_close(struct stream *s)
{
    struct job *job = s->job;

    if (s->fd < 0)
        return;
    if (job->up) {
        struct pack pk;
        pack_init(&pk);
        pack_i32(&pk, s->r->rank);
        pack_u8(&pk, (uint8_t)s->which);
        up_send(job, MPX_P_EOF, &pk);
    } else {
        if (iofwd_eof(&s->fwd, job->o->tag_output, &job->con.obuf[s->which]) < 0)
            output_lost(s);
    }
    loop_watch_remove(job->lp, s->w);
    s->w = NULL;
    close(s->fd);
    s->fd = -1;
    job->open_streams--;
}

size_t up_queued(const struct job *job)
{
    return job->up ? loom_stream_queued(&job->up->s) : 0;
}

/* Proxy mode: stop or resume reading every rank's output pipes. */
void streams_pause(struct job *job, bool pause)
{
    if (job->out_paused == pause)
        return;
    job->out_paused = pause;
    for (int i = 0; i < job->n; i++)
        for (int k = 0; k < 2; k++)
            if (job->ranks[i].out[k].w)
                loop_watch_set(job->ranks[i].out[k].w, pause ? 0 : LOOP_READ);
}

/* Read what is there; returns false at EOF or error (stream closed).
 * drain (the rank exited) reads on even when paused: what a dead rank's pipe
 * holds is bounded by the pipe's size. */
bool stream_read(struct stream *s, bool drain)
{
    struct job *job = s->job;
    char buf[READ_CHUNK];

    while (s->fd >= 0) {
        ssize_t n = fdio_read(s->fd, buf, sizeof(buf));
        if (n == -EAGAIN)
            return true;
        if (n <= 0) {
            stream_close(s);
            return false;
        }
        if (job->up) {
            /* mpiexec assembles and tags the lines */
            struct pack pk;
            pack_init(&pk);
            pack_i32(&pk, s->r->rank);
            pack_u8(&pk, (uint8_t)s->which);
            pack_bytes(&pk, buf, (size_t)n);
            up_send(job, MPX_P_OUT, &pk);
            if (up_queued(job) >= UP_HIGH)
                streams_pause(job, true);
            if (!drain)
                break;
            continue;
        }
        if (iofwd_feed(&s->fwd, buf, (size_t)n, job->o->tag_output,
                       &job->con.obuf[s->which]) < 0)
            output_lost(s);
        if (job->con.obuf[s->which].len >= MPX_FLUSH_THRESHOLD)
            mpx_console_flush(&job->con);
        if (!drain)
            break;
    }
    return s->fd >= 0;
}

void stream_cb(struct loop *lp, struct loop_watch *w, int fd, int revents, void *arg)
{
    struct stream *s = arg;

    if (!stream_read(s, false))
        job_check_done(s->job);
}
