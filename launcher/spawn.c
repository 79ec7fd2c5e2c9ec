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
#include "loop.h"
#include "spawn.h"

extern char **environ;

#define REPORT_MAX 512

struct sjob {
    struct mpx_spawner *sp;
    uint64_t id;
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
    struct psrv **srvp;
    char jobid[64];
    char exe[4096];
    int fence_timeout_s;
    int max_procs;
    int used_procs;
    unsigned seq;
    struct sjob jobs[MPX_SPAWN_MAX_JOBS];
    int njobs; /* slots in use (pid > 0 and not reaped, or not answered) */
};

struct mpx_spawner *mpx_spawner_create(struct loop *lp, struct psrv **srvp,
                                       const char *jobid, int fence_timeout_s,
                                       int max_procs)
{
    struct mpx_spawner *sp = calloc(1, sizeof(*sp));
    if (!sp)
        return NULL;
    sp->lp = lp;
    sp->srvp = srvp;
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

void mpx_spawner_destroy(struct mpx_spawner *sp)
{
    if (!sp)
        return;
    for (int i = 0; i < MPX_SPAWN_MAX_JOBS; i++)
        close_report(&sp->jobs[i]);
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
    if (*j->sp->srvp)
        (void)psrv_spawn_done(*j->sp->srvp, j->id, rc, j->jobid, NULL, j->total, msg);
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

static bool our_env(const char *kv)
{
    return strncmp(kv, "LOOM_SPAWN_", 11) == 0;
}

int mpx_spawn_start(struct mpx_spawner *sp, uint64_t id, const struct psrv_spawn *req,
                    char *err, size_t errlen)
{
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
    for (int i = 0; i < MPX_SPAWN_MAX_JOBS && !j; i++)
        if (sp->jobs[i].pid == 0 && sp->jobs[i].rfd < 0)
            j = &sp->jobs[i];
    if (!j) {
        snprintf(err, errlen, "spawn: no free slot");
        return -EAGAIN;
    }
    memset(j, 0, sizeof(*j));
    j->rfd = -1;
    j->sp = sp;
    j->id = id;
    j->total = req->total;
    snprintf(j->jobid, sizeof(j->jobid), "%u.%u", (unsigned)getpid(), ++sp->seq);

    /* command line: mpiexec --no-slurm [--fence-timeout S] -n N [-wdir D] cmd args : ... */
    if (add_arg(&argv, &argn, &argcap, sp->exe) < 0 ||
        add_arg(&argv, &argn, &argcap, "--no-slurm") < 0)
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
