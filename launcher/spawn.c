/* spawn.c - mpiexec's side of dynamic processes: a nested mpiexec per spawned job,
 * its report pipe, and the spawned side's reading of LOOM_SPAWN_*.  See spawn.h.
 *
 * Notes:
 *   - The nested mpiexec is this binary (/proc/self/exe), so it is the same
 *     version; it gets --no-slurm (the spawner itself runs outside srun) and the
 *     spawner's --fence-timeout.
 *   - A command whose name starts with '-', or an argument that is exactly ":",
 *     would be read as an mpiexec option or a section separator: such a request
 *     is refused with a message rather than run as something else.
 *   - Commands with maxprocs 0 are left out of the command line; the appnum of
 *     the commands after them is then their index among the ones started.
 *   - Multi-host: the -hosts value is built rank by rank (runs of one host
 *     as "host:k"), so each command's children land where its own list puts
 *     them although mpiexec's host list is one for the whole job; it is
 *     bounded by MPX_SPAWN_HOSTS_MAX.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "child.h"
#include "fdio.h"
#include "hosts.h"
#include "loop.h"
#include "spawn.h"

extern char **environ;

#define REPORT_MAX 512

struct sjob {
    struct mpx_spawner *sp;
    uint64_t id;
    int from;
    pid_t pid;
    int rfd;
    struct loop_watch *w;
    bool answered;
    bool failed; /* answered with rc != 0 */
    bool exited;
    int total;
    char jobid[64];
    char buf[REPORT_MAX];
    size_t blen;
};

struct mpx_spawner {
    struct loop *lp;
    mpx_spawn_done_fn done;
    void *done_arg;
    struct mpx_hostlist hosts; /* multi-host: the job's list (n == 0: one host) */
    int ppn;
    char **launcher_argv; /* NULL-terminated copies */
    char jobid[64];
    char exe[4096];
    int fence_timeout_s;
    int max_procs;
    int used_procs;
    unsigned seq;
    struct sjob jobs[MPX_SPAWN_MAX_JOBS];
    int njobs; /* slots in use (pid > 0 and not reaped, or not answered) */
};

struct mpx_spawner *mpx_spawner_create(struct loop *lp, mpx_spawn_done_fn done,
                                       void *done_arg, const char *jobid,
                                       int fence_timeout_s, int max_procs)
{
    struct mpx_spawner *sp = calloc(1, sizeof(*sp));
    if (!sp)
        return NULL;
    sp->lp = lp;
    sp->done = done;
    sp->done_arg = done_arg;
    snprintf(sp->jobid, sizeof(sp->jobid), "%s", jobid);
    sp->fence_timeout_s = fence_timeout_s;
    sp->max_procs = max_procs;
    ssize_t n = readlink("/proc/self/exe", sp->exe, sizeof(sp->exe) - 1);
    if (n <= 0) {
        free(sp);
        return NULL;
    }
    sp->exe[n] = '\0';
    for (int i = 0; i < MPX_SPAWN_MAX_JOBS; i++)
        sp->jobs[i].rfd = -1;
    return sp;
}

static void close_report(struct sjob *j)
{
    if (j->rfd < 0)
        return;
    loop_watch_remove(j->sp->lp, j->w);
    j->w = NULL;
    close(j->rfd);
    j->rfd = -1;
}

static void slot_check_free(struct sjob *j)
{
    if (j->pid > 0 && j->exited && j->answered && j->rfd < 0) {
        j->pid = 0;
        j->sp->njobs--;
    }
}

static void free_strv(char **v)
{
    for (int i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

int mpx_spawner_set_hosts(struct mpx_spawner *sp, const struct mpx_hostlist *hl, int ppn,
                          const char *const *launcher_argv)
{
    int n = 0;

    while (launcher_argv && launcher_argv[n])
        n++;
    sp->launcher_argv = calloc((size_t)n + 1, sizeof(char *));
    sp->hosts.h = calloc((size_t)hl->n + 1, sizeof(*sp->hosts.h));
    if (!sp->launcher_argv || !sp->hosts.h)
        return -ENOMEM;
    for (int i = 0; i < n; i++)
        if (!(sp->launcher_argv[i] = strdup(launcher_argv[i])))
            return -ENOMEM;
    for (int i = 0; i < hl->n; i++) {
        if (!(sp->hosts.h[i].name = strdup(hl->h[i].name)))
            return -ENOMEM;
        sp->hosts.h[i].slots = hl->h[i].slots;
        sp->hosts.n++;
    }
    sp->ppn = ppn;
    return 0;
}

void mpx_spawner_destroy(struct mpx_spawner *sp)
{
    if (!sp)
        return;
    for (int i = 0; i < MPX_SPAWN_MAX_JOBS; i++)
        close_report(&sp->jobs[i]);
    mpx_hosts_free(&sp->hosts);
    free_strv(sp->launcher_argv);
    free(sp);
}

static void answer(struct sjob *j, int rc, const char *msg)
{
    if (j->answered)
        return;
    j->answered = true;
    j->failed = rc != 0;
    if (rc != 0) /* its processes were not started: give them back */
        j->sp->used_procs -= j->total;
    j->sp->done(j->sp->done_arg, j->from, j->id, rc, j->jobid, j->total, msg);
}

/* Read what the nested mpiexec said; at the end of the line (or of the pipe)
 * answer the spawning task. */
static void report_read(struct sjob *j)
{
    while (j->rfd >= 0) {
        ssize_t n = fdio_read(j->rfd, j->buf + j->blen, sizeof(j->buf) - 1 - j->blen);
        if (n == -EAGAIN)
            return;
        if (n > 0) {
            j->blen += (size_t)n;
            j->buf[j->blen] = '\0';
            char *nl = strchr(j->buf, '\n');
            if (!nl && j->blen < sizeof(j->buf) - 1)
                continue;
            if (nl)
                *nl = '\0';
            if (strcmp(j->buf, "ok") == 0)
                answer(j, 0, NULL);
            else
                answer(j, -1,
                       strncmp(j->buf, "fail ", 5) == 0 ? j->buf + 5 : "bad spawn report");
            close_report(j);
            break;
        }
        /* end of file or an error without a report */
        char msg[160];
        snprintf(msg, sizeof(msg),
                 "the mpiexec of spawned job %s ended before its ranks started", j->jobid);
        answer(j, -1, msg);
        close_report(j);
    }
    slot_check_free(j);
}

static void report_cb(struct loop *lp, struct loop_watch *w, int fd, int revents,
                      void *arg)
{
    report_read(arg);
}

static int add_arg(char ***v, int *n, int *cap, const char *a)
{
    if (*n + 2 > *cap) {
        int nc = *cap ? *cap * 2 : 32;
        char **nv = realloc(*v, sizeof(char *) * (size_t)nc);
        if (!nv)
            return -1;
        *v = nv;
        *cap = nc;
    }
    (*v)[(*n)++] = (char *)a;
    (*v)[*n] = NULL;
    return 0;
}

static const char *info_get(const struct psrv_spawn_cmd *c, const char *key)
{
    for (int i = 0; i < c->ninfo; i++)
        if (strcmp(c->info[i].key, key) == 0)
            return c->info[i].val;
    return NULL;
}

static bool job_host(const struct mpx_spawner *sp, const char *h)
{
    for (int i = 0; i < sp->hosts.n; i++)
        if (strcmp(sp->hosts.h[i].name, h) == 0)
            return true;
    return false;
}

struct hostrun {
    char *buf; /* the -hosts value so far */
    size_t len, cap;
    char last[256]; /* host of the open run */
    int count;      /* ranks in the open run */
};

/* Close the open run: ",host:count" (0, or -E2BIG / -ENOMEM). */
static int run_flush(struct hostrun *hr)
{
    if (hr->count == 0)
        return 0;
    size_t need = strlen(hr->last) + 16;
    if (hr->len + need >= MPX_SPAWN_HOSTS_MAX)
        return -E2BIG;
    if (hr->len + need > hr->cap) {
        size_t nc = hr->cap ? hr->cap * 2 : 256;
        while (nc < hr->len + need)
            nc *= 2;
        char *nb = realloc(hr->buf, nc);
        if (!nb)
            return -ENOMEM;
        hr->buf = nb;
        hr->cap = nc;
    }
    hr->len += (size_t)snprintf(hr->buf + hr->len, hr->cap - hr->len, "%s%s:%d",
                                hr->len ? "," : "", hr->last, hr->count);
    hr->count = 0;
    return 0;
}

/* Where command c's children go, appended rank by rank to hr: its info's
 * "host" list or "hostfile", else the job's own list and -ppn. */
static int place_cmd(const struct mpx_spawner *sp, const struct psrv_spawn_cmd *c,
                     struct hostrun *hr, char *err, size_t errlen)
{
    const char *h = info_get(c, "host"), *hf = info_get(c, "hostfile");
    const struct mpx_hostlist *use = &sp->hosts;
    struct mpx_hostlist own = {0};
    struct mpx_layout ly;
    char e[400];
    int ppn = sp->ppn, rc = 0;

    if ((h && *h) || (hf && *hf)) {
        rc = (h && *h) ? mpx_hosts_parse(h, &own, e, sizeof(e))
                       : mpx_hostfile_read(hf, &own, e, sizeof(e));
        if (rc < 0) {
            snprintf(err, errlen, "spawn: info \"%s\" of %.200s: %s",
                     (h && *h) ? "host" : "hostfile", c->cmd,
                     rc == -ENOMEM ? "out of memory" : e);
            mpx_hosts_free(&own);
            return rc;
        }
        for (int i = 0; i < own.n; i++)
            if (!job_host(sp, own.h[i].name)) {
                snprintf(err, errlen,
                         "spawn: host '%.200s' (info \"%s\" of %.200s) is not one of "
                         "this job's hosts (-hosts/-f)",
                         own.h[i].name, (h && *h) ? "host" : "hostfile", c->cmd);
                mpx_hosts_free(&own);
                return -EINVAL;
            }
        use = &own;
        ppn = 0;
    }
    rc = mpx_hosts_layout(use, c->maxprocs, ppn, &ly);
    mpx_hosts_free(&own);
    if (rc < 0) {
        snprintf(err, errlen, "spawn: cannot place %d processes of %.200s: %s",
                 c->maxprocs, c->cmd, strerror(-rc));
        return rc;
    }
    for (int r = 0; r < ly.size && rc == 0; r++) {
        const char *name = ly.node_host[ly.rank_node[r]];
        if (hr->count && strcmp(hr->last, name) == 0) {
            hr->count++;
            continue;
        }
        rc = run_flush(hr);
        if (rc == 0 && strlen(name) >= sizeof(hr->last))
            rc = -E2BIG;
        if (rc == 0) {
            snprintf(hr->last, sizeof(hr->last), "%s", name);
            hr->count = 1;
        }
    }
    mpx_layout_free(&ly);
    if (rc == -E2BIG)
        snprintf(err, errlen, "spawn: the host list of the new job is too long");
    else if (rc < 0)
        snprintf(err, errlen, "spawn: out of memory");
    return rc;
}

static bool our_env(const char *kv)
{
    return strncmp(kv, "LOOM_SPAWN_", 11) == 0;
}

int mpx_spawn_start(struct mpx_spawner *sp, int from, uint64_t id,
                    const struct psrv_spawn *req, char *err, size_t errlen)
{
    struct hostrun hr = {0};
    char **argv = NULL, **envp = NULL;
    int argn = 0, argcap = 0, envn = 0, envcap = 0, rc = -ENOMEM;
    char nums[PSRV_SPAWN_MAX_CMDS][16], ft[16];
    char *owned[8 + 2 * PSRV_SPAWN_MAX_PREPUT];
    int nowned = 0;
    int p[2] = {-1, -1};
    struct sjob *j = NULL;

    if (sp->njobs >= MPX_SPAWN_MAX_JOBS) {
        snprintf(err, errlen, "spawn: %d spawned jobs are running already (the most at once)",
                 MPX_SPAWN_MAX_JOBS);
        return -EAGAIN;
    }
    if (req->total > sp->max_procs - sp->used_procs) {
        snprintf(err, errlen,
                 "spawn: %d process%s asked, %d of at most %d left for this job "
                 "(LOOM_MPIEXEC_MAX_SPAWN_PROCS)",
                 req->total, req->total == 1 ? "" : "es", sp->max_procs - sp->used_procs,
                 sp->max_procs);
        return -EDQUOT;
    }
    for (int i = 0; i < req->ncmds; i++) {
        const struct psrv_spawn_cmd *c = &req->cmds[i];
        if (c->cmd[0] == '-') {
            snprintf(err, errlen, "spawn: command '%.200s' starts with '-'", c->cmd);
            return -EINVAL;
        }
        for (int k = 0; k < c->argc; k++)
            if (strcmp(c->argv[k], ":") == 0) {
                snprintf(err, errlen, "spawn: argument ':' of %.200s is not supported",
                         c->cmd);
                return -EINVAL;
            }
    }
    if (sp->hosts.n > 0) {
        for (int i = 0; i < req->ncmds; i++)
            if (req->cmds[i].maxprocs > 0 &&
                (rc = place_cmd(sp, &req->cmds[i], &hr, err, errlen)) < 0)
                goto out;
        if ((rc = run_flush(&hr)) < 0) {
            snprintf(err, errlen,
                     rc == -E2BIG ? "spawn: the host list of the new job is too long"
                                  : "spawn: out of memory");
            goto out;
        }
        rc = -ENOMEM;
    }
    for (int i = 0; i < MPX_SPAWN_MAX_JOBS && !j; i++)
        if (sp->jobs[i].pid == 0 && sp->jobs[i].rfd < 0)
            j = &sp->jobs[i];
    if (!j) {
        snprintf(err, errlen, "spawn: no free slot");
        rc = -EAGAIN;
        goto out;
    }
    memset(j, 0, sizeof(*j));
    j->rfd = -1;
    j->sp = sp;
    j->id = id;
    j->from = from;
    j->total = req->total;
    snprintf(j->jobid, sizeof(j->jobid), "%u.%u", (unsigned)getpid(), ++sp->seq);

    /* command line: mpiexec --no-slurm [--fence-timeout S] -n N [-wdir D] cmd args : ...
     * (several hosts: the launcher options and -hosts instead of --no-slurm) */
    if (add_arg(&argv, &argn, &argcap, sp->exe) < 0)
        goto nomem;
    if (sp->hosts.n == 0 && add_arg(&argv, &argn, &argcap, "--no-slurm") < 0)
        goto nomem;
    for (int i = 0; sp->hosts.n > 0 && sp->launcher_argv[i]; i++)
        if (add_arg(&argv, &argn, &argcap, sp->launcher_argv[i]) < 0)
            goto nomem;
    if (sp->hosts.n > 0 && (add_arg(&argv, &argn, &argcap, "-hosts") < 0 ||
                            add_arg(&argv, &argn, &argcap, hr.buf) < 0))
        goto nomem;
    if (sp->fence_timeout_s > 0) {
        snprintf(ft, sizeof(ft), "%d", sp->fence_timeout_s);
        if (add_arg(&argv, &argn, &argcap, "--fence-timeout") < 0 ||
            add_arg(&argv, &argn, &argcap, ft) < 0)
            goto nomem;
    }
    bool first = true;
    for (int i = 0; i < req->ncmds; i++) {
        const struct psrv_spawn_cmd *c = &req->cmds[i];
        if (c->maxprocs == 0)
            continue;
        snprintf(nums[i], sizeof(nums[i]), "%d", c->maxprocs);
        if ((!first && add_arg(&argv, &argn, &argcap, ":") < 0) ||
            add_arg(&argv, &argn, &argcap, "-n") < 0 ||
            add_arg(&argv, &argn, &argcap, nums[i]) < 0)
            goto nomem;
        const char *wdir = info_get(c, "wdir");
        if (wdir && *wdir &&
            (add_arg(&argv, &argn, &argcap, "-wdir") < 0 ||
             add_arg(&argv, &argn, &argcap, wdir) < 0))
            goto nomem;
        if (add_arg(&argv, &argn, &argcap, c->cmd) < 0)
            goto nomem;
        for (int k = 0; k < c->argc; k++)
            if (add_arg(&argv, &argn, &argcap, c->argv[k]) < 0)
                goto nomem;
        first = false;
    }

    if (pipe2(p, O_CLOEXEC) < 0) {
        rc = -errno;
        snprintf(err, errlen, "spawn: pipe: %s", strerror(errno));
        goto out;
    }
    /* environment: ours without LOOM_SPAWN_*, then the new job's identity */
    for (char **e = environ; *e; e++)
        if (!our_env(*e) && add_arg(&envp, &envn, &envcap, *e) < 0)
            goto nomem;
#define OWN(...)                                                                         \
    do {                                                                                 \
        char *s_;                                                                        \
        if (asprintf(&s_, __VA_ARGS__) < 0)                                              \
            goto nomem;                                                                  \
        owned[nowned++] = s_;                                                            \
        if (add_arg(&envp, &envn, &envcap, s_) < 0)                                      \
            goto nomem;                                                                  \
    } while (0)
    OWN("LOOM_SPAWN_JOBID=%s", j->jobid);
    OWN("LOOM_SPAWN_SPAWNER_JOBID=%s", sp->jobid);
    OWN("LOOM_SPAWN_REPORT_FD=%d", p[1]);
    OWN("LOOM_SPAWN_BUDGET=%d", sp->max_procs - sp->used_procs - req->total);
    OWN("LOOM_SPAWN_NPREPUT=%d", req->npreput);
    for (int i = 0; i < req->npreput; i++) {
        OWN("LOOM_SPAWN_PPKEY_%d=%s", i, req->preput[i].key);
        OWN("LOOM_SPAWN_PPVAL_%d=%s", i, req->preput[i].val);
    }
#undef OWN

    /* the child: default signals (an ignored SIGHUP stays: nohup), the report
     * pipe kept at its number across exec, stdin from /dev/null (rank 0 of the
     * spawner has ours); an exec failure is known here and now */
    int dn = open("/dev/null", O_RDONLY | O_CLOEXEC);
    struct child_fd pass[] = {{p[1], p[1]}};
    struct child_spec cs = {
        .path = sp->exe,
        .argv = argv,
        .envp = envp,
        .fd0 = dn,
        .fd1 = -1,
        .fd2 = -1,
        .pass = pass,
        .npass = 1,
        .keep_hup_ignored = true,
        .use_vfork = true,
    };
    struct child_result res;
    pid_t pid = child_start(&cs, &res);
    if (dn >= 0)
        close(dn);
    close(p[1]);
    p[1] = -1;
    if (pid < 0) {
        rc = (int)pid;
        char why[600];
        snprintf(err, errlen, "spawn: %s", child_describe(&cs, &res, why, sizeof(why)));
        goto out;
    }
    j->pid = pid;
    j->rfd = p[0];
    p[0] = -1;
    sp->njobs++;
    sp->used_procs += req->total;
    fdio_set_nonblock(j->rfd, true);
    j->w = loop_watch_add(sp->lp, j->rfd, LOOP_READ, report_cb, j);
    if (!j->w) { /* cannot hear the report: end it and say so */
        kill(pid, SIGTERM);
        close(j->rfd);
        j->rfd = -1;
        answer(j, -1, "spawn: out of memory");
    }
    rc = 0;
    goto out;
nomem:
    rc = -ENOMEM;
    snprintf(err, errlen, "spawn: out of memory");
out:
    if (p[0] >= 0)
        close(p[0]);
    if (p[1] >= 0)
        close(p[1]);
    for (int i = 0; i < nowned; i++)
        free(owned[i]);
    free(hr.buf);
    free(argv);
    free(envp);
    return rc;
}

bool mpx_spawner_reaped(struct mpx_spawner *sp, pid_t pid, int status, char *what,
                        size_t whatlen, bool *judge)
{
    for (int i = 0; sp && i < MPX_SPAWN_MAX_JOBS; i++) {
        struct sjob *j = &sp->jobs[i];
        if (j->pid != pid || j->exited)
            continue;
        j->exited = true;
        snprintf(what, whatlen, "spawned job %s", j->jobid);
        report_read(j); /* what it said before it ended, or its silence */
        *judge = !j->failed;
        slot_check_free(j);
        return true;
    }
    return false;
}

int mpx_spawner_live(const struct mpx_spawner *sp)
{
    int n = 0;
    for (int i = 0; sp && i < MPX_SPAWN_MAX_JOBS; i++)
        if (sp->jobs[i].pid > 0 && !sp->jobs[i].exited)
            n++;
    return n;
}

void mpx_spawner_kill(struct mpx_spawner *sp, int sig)
{
    for (int i = 0; sp && i < MPX_SPAWN_MAX_JOBS; i++)
        if (sp->jobs[i].pid > 0 && !sp->jobs[i].exited)
            kill(sp->jobs[i].pid, sig);
}

/* ---- the spawned side ------------------------------------------------------ */

static int env_int_range(const char *name, int lo, int hi, int *out)
{
    const char *v = getenv(name);
    char *end;
    if (!v || !*v)
        return -1;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || *end || x < lo || x > hi)
        return -1;
    *out = (int)x;
    return 0;
}

int mpx_spawned_from_env(struct mpx_spawned *s, char *err, size_t errlen)
{
    const char *jid = getenv("LOOM_SPAWN_JOBID");
    const char *sjid = getenv("LOOM_SPAWN_SPAWNER_JOBID");
    int rc = 0;

    memset(s, 0, sizeof(*s));
    s->report_fd = -1;
    if (!jid)
        return 0;
    if (!*jid || strlen(jid) >= sizeof(s->jobid) || !sjid || !*sjid ||
        strlen(sjid) >= sizeof(s->spawner_jobid) ||
        env_int_range("LOOM_SPAWN_REPORT_FD", 3, 1 << 20, &s->report_fd) < 0 ||
        env_int_range("LOOM_SPAWN_BUDGET", 0, 1 << 24, &s->budget) < 0 ||
        env_int_range("LOOM_SPAWN_NPREPUT", 0, PSRV_SPAWN_MAX_PREPUT, &s->npreput) < 0) {
        snprintf(err, errlen, "LOOM_SPAWN_JOBID is set but the other LOOM_SPAWN_* "
                              "variables are missing or bad (they are set by mpiexec "
                              "for a spawned job only)");
        s->report_fd = -1;
        return -EINVAL;
    }
    s->on = true;
    snprintf(s->jobid, sizeof(s->jobid), "%s", jid);
    snprintf(s->spawner_jobid, sizeof(s->spawner_jobid), "%s", sjid);
    (void)fdio_set_cloexec(s->report_fd, true);
    s->preput = calloc((size_t)s->npreput + 1, sizeof(*s->preput));
    if (!s->preput) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    for (int i = 0; i < s->npreput && rc == 0; i++) {
        char k[48], v[48];
        snprintf(k, sizeof(k), "LOOM_SPAWN_PPKEY_%d", i);
        snprintf(v, sizeof(v), "LOOM_SPAWN_PPVAL_%d", i);
        const char *kv = getenv(k), *vv = getenv(v);
        if (!kv || !*kv || !vv) {
            snprintf(err, errlen, "%s or %s missing", k, v);
            rc = -EINVAL;
        } else if (!(s->preput[i].key = strdup(kv)) || !(s->preput[i].val = strdup(vv))) {
            snprintf(err, errlen, "out of memory");
            rc = -ENOMEM;
        }
    }
    /* the ranks do not inherit them */
    for (int i = 0; i < s->npreput; i++) {
        char k[48];
        snprintf(k, sizeof(k), "LOOM_SPAWN_PPKEY_%d", i);
        unsetenv(k);
        snprintf(k, sizeof(k), "LOOM_SPAWN_PPVAL_%d", i);
        unsetenv(k);
    }
    unsetenv("LOOM_SPAWN_JOBID");
    unsetenv("LOOM_SPAWN_SPAWNER_JOBID");
    unsetenv("LOOM_SPAWN_REPORT_FD");
    unsetenv("LOOM_SPAWN_BUDGET");
    unsetenv("LOOM_SPAWN_NPREPUT");
    return rc;
}

void mpx_spawned_free(struct mpx_spawned *s)
{
    for (int i = 0; s->preput && i < s->npreput; i++) {
        free((char *)s->preput[i].key);
        free((char *)s->preput[i].val);
    }
    free(s->preput);
    s->preput = NULL;
    if (s->report_fd >= 0)
        close(s->report_fd);
    s->report_fd = -1;
}

void mpx_spawned_report(struct mpx_spawned *s, int rc, const char *msg)
{
    char line[REPORT_MAX];
    if (s->report_fd < 0)
        return;
    int n;
    if (rc == 0) {
        n = snprintf(line, sizeof(line), "ok\n");
    } else {
        n = snprintf(line, sizeof(line), "fail %.*s", (int)sizeof(line) - 8,
                     msg ? msg : "cannot start the spawned job");
        for (int i = 0; i < n && i < (int)sizeof(line); i++)
            if (line[i] == '\n')
                line[i] = ' ';
        if (n > (int)sizeof(line) - 2)
            n = (int)sizeof(line) - 2;
        line[n++] = '\n';
    }
    (void)fdio_write_full(s->report_fd, line, (size_t)n);
    close(s->report_fd);
    s->report_fd = -1;
}
