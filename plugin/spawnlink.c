/* spawnlink.c - spawn under srun --mpi=loom: srun's spawn server thread (accept,
 * authenticate, check, run the child srun, answer), the child srun's report and the
 * stepd's side of the call.  Contract: see spawnlink.h.  No Slurm inside.
 *
 * One piece (about 1000 lines) on purpose: the three ends of the one exchange (srun's
 * server thread, the child srun's report, the stepd's call) share the frame layout and
 * the handshake order, and a change to one side must be read next to the others; the
 * server part alone is one state machine over struct lspawn_srv.  The bounded wire
 * codec, the part a peer controls, is apart in pmiserv/spawnwire.c (and fuzzed).
 *
 * Notes:
 *   - Nothing of a connection is parsed before its credential checked out: the
 *     first frame must be the credential (at most TN_CRED_MAX bytes), the request
 *     frame (at most LSPAWN_FRAME_MAX) is read only after.  A connection has
 *     LSPAWN_HS_MS for both; at most LSPAWN_MAX_CONNS are open at once (one more
 *     evicts the oldest unauthenticated one).
 *   - The child srun is this process's own binary (/proc/self/exe), so it is
 *     never anything but srun; its argv is built here from the request: options
 *     in --opt=value form (a value cannot become an option), the command after
 *     "--".  A command or argument starting with '-' is fine after "--".
 *   - Several commands are one step: srun --multi-prog with a private file of quoted
 *     words (mp_write), removed when the child srun is reaped or the server stops.
 *   - The child srun is started by child_start (child.h) from this thread with an
 *     empty signal mask and default dispositions, so it handles signals as a srun
 *     started by hand; it gets srun's stdin/stdout/stderr and its report pipe, no
 *     other fd of ours.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <netdb.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "spawnlink.h"
#include "spawnwire.h"
#include "tn_int.h"
#include "treenet.h"

#ifndef LOOM_PLUGIN_NO_TREENET
extern char **environ;

#define LSPAWN_MAX_CONNS 32

struct sconn {
    int fd;
    int authed;
    int kid; /* index into kids while a child srun works for it, else -1 */
    uint64_t deadline;
    char nonce[TN_NONCE_HEX + 1];
    char *buf;
    size_t have, cap;
    char from[32];
};

struct skid {
    pid_t pid;
    int rfd;  /* report pipe, -1 once read or closed */
    int conn; /* the connection to answer, -1 once answered */
    int exited;
    uint64_t deadline;
    char rep[256];
    size_t rlen;
    char mpfile[64]; /* --multi-prog file of several commands, removed at the end */
};

struct lspawn_srv {
    struct lspawn_srv_cfg cfg;
    char jobkey[TN_JOBKEY_MAX + 1];
    char mpi_type[16];
    int lfd, port;
    int stop[2];
    pthread_t thr;
    char exe[4096];
    struct sconn conns[LSPAWN_MAX_CONNS];
    struct skid kids[LSPAWN_MAX_CHILDREN];
    unsigned seq;
};

static uint64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

static void slog(struct lspawn_srv *s, int error, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void slog(struct lspawn_srv *s, int error, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    if (!s->cfg.log)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    s->cfg.log(s->cfg.log_arg, error, line);
}

/* Best effort, small: one frame of at most a few KiB on a fresh socket. */
static void send_frame(int fd, const void *body, size_t len)
{
    uint8_t h[4];
    tn_put_u32(h, (uint32_t)len);
    struct iovec v[2] = {{h, 4}, {(void *)body, len}};
    struct msghdr m = {.msg_iov = v, .msg_iovlen = 2};
    (void)sendmsg(fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
}

static void conn_close(struct lspawn_srv *s, int i)
{
    struct sconn *c = &s->conns[i];
    if (c->fd >= 0)
        close(c->fd);
    free(c->buf);
    memset(c, 0, sizeof(*c));
    c->fd = -1;
    c->kid = -1;
}

static void answer(struct lspawn_srv *s, int i, int rc, const char *text)
{
    char b[LSPAWN_ANSWER_MAX];
    size_t n = lspawn_answer_encode(rc, text, b);
    if (s->conns[i].fd >= 0)
        send_frame(s->conns[i].fd, b, n);
    if (rc != 0)
        slog(s, 1, "step %s: spawn for %s refused: %s", s->jobkey, s->conns[i].from, text);
    conn_close(s, i);
}

int lspawn_cmd_check(const char *cmd, const char *dir, const char *path)
{
    char full[8192];
    struct stat st;

    if (strchr(cmd, '/')) {
        if (cmd[0] == '/' || !dir)
            snprintf(full, sizeof(full), "%s", cmd);
        else
            snprintf(full, sizeof(full), "%s/%s", dir, cmd);
        if (stat(full, &st) < 0 || !S_ISREG(st.st_mode))
            return -ENOENT;
        return access(full, X_OK) < 0 ? -EACCES : 0;
    }
    for (const char *p = path ? path : ""; ; ) {
        const char *e = strchr(p, ':');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == 0)
            snprintf(full, sizeof(full), "%s/%s", dir ? dir : ".", cmd);
        else if (p[0] != '/' && dir)
            snprintf(full, sizeof(full), "%s/%.*s/%s", dir, (int)n, p, cmd);
        else
            snprintf(full, sizeof(full), "%.*s/%s", (int)n, p, cmd);
        if (stat(full, &st) == 0 && S_ISREG(st.st_mode) && access(full, X_OK) == 0)
            return 0;
        if (!e)
            break;
        p = e + 1;
    }
    return -ENOENT;
}

static int inflight(struct lspawn_srv *s)
{
    int n = 0;
    for (int i = 0; i < LSPAWN_MAX_CHILDREN; i++)
        if (s->kids[i].pid > 0 && s->kids[i].conn >= 0)
            n++;
    return n;
}

/* Environment entries the child srun must not take from ours. */
static int env_drop(const char *e)
{
    static const char *const drop[] = {
        "SLURM_LOOM_SPAWN", "SLURM_NTASKS=", "SLURM_NPROCS=", "SLURM_NTASKS_PER_NODE=",
        "SLURM_NNODES=", "SLURM_STEP_", "SLURM_SRUN_COMM_", "PMI_SPAWNED=", NULL};
    for (int i = 0; drop[i]; i++)
        if (strncmp(e, drop[i], strlen(drop[i])) == 0)
            return 1;
    return 0;
}

/* Several commands become one step: srun --multi-prog with a file of "ranks program
 * args" lines, every word single-quoted (slurmstepd's reader keeps quoted bytes as they
 * are; a quote itself is written \' outside them).  Newlines cannot be written there,
 * and slurmstepd keeps at most 128 words of a line. */
#define MP_MAX_ARGS 100
static int mp_check(const struct psrv_spawn_cmd *x, char *err, size_t errlen)
{
    if (x->argc > MP_MAX_ARGS) {
        snprintf(err, errlen, "spawn: %d arguments for %.200s, at most %d with several "
                 "commands (srun --multi-prog)", x->argc, x->cmd, MP_MAX_ARGS);
        return -1;
    }
    for (int j = -1; j < x->argc; j++) {
        const char *a = j < 0 ? x->cmd : x->argv[j];
        if (strpbrk(a, "\n\r")) {
            snprintf(err, errlen, "spawn: a line break in a command or argument of "
                     "%.200s cannot go through srun --multi-prog", x->cmd);
            return -1;
        }
    }
    return 0;
}

static void mp_word(FILE *f, const char *w)
{
    fputc(' ', f);
    fputc('\'', f);
    for (const char *p = w; *p; p++) {
        if (*p == '\'')
            fputs("'\\''", f); /* close, escaped quote, reopen */
        else
            fputc(*p, f);
    }
    fputc('\'', f);
}

static int mp_write(struct lspawn_srv *s, const struct psrv_spawn *q, struct skid *kd,
                    char *err, size_t errlen)
{
    const char *tmp = getenv("TMPDIR");
    int first = 0;

    if (!tmp || !*tmp || strlen(tmp) > 32)
        tmp = "/tmp";
    snprintf(kd->mpfile, sizeof(kd->mpfile), "%s/loom-spawn.XXXXXX", tmp);
    int fd = mkostemp(kd->mpfile, O_CLOEXEC);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        snprintf(err, errlen, "spawn: cannot write the --multi-prog file in %s: %s", tmp,
                 strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(kd->mpfile);
        }
        kd->mpfile[0] = '\0';
        return -1;
    }
    for (int i = 0; i < q->ncmds; i++) {
        const struct psrv_spawn_cmd *x = &q->cmds[i];
        if (x->maxprocs == 0)
            continue;
        fprintf(f, "%d-%d", first, first + x->maxprocs - 1);
        first += x->maxprocs;
        mp_word(f, x->cmd);
        for (int j = 0; j < x->argc; j++)
            mp_word(f, x->argv[j]);
        fputc('\n', f);
    }
    if (fclose(f) != 0) {
        snprintf(err, errlen, "spawn: cannot write the --multi-prog file: %s",
                 strerror(errno));
        unlink(kd->mpfile);
        kd->mpfile[0] = '\0';
        return -1;
    }
    (void)s;
    return 0;
}

/* Run the child srun for request r of connection ci.  0, or -1 with err. */
static int run_child(struct lspawn_srv *s, int ci, const struct lspawn_req *r, char *err,
                     size_t errlen)
{
    const struct psrv_spawn *q = &r->view;
    const struct psrv_spawn_cmd *c = NULL;
    const char *wdir = NULL, *host = NULL;
    char **argv = NULL, **envp = NULL, **own = NULL;
    int nown = 0, k = -1, p[2] = {-1, -1}, rc = -1;

    int nstart = 0, total = 0;
    for (int i = 0; i < q->ncmds; i++) {
        if (q->cmds[i].maxprocs == 0)
            continue;
        if (!c)
            c = &q->cmds[i]; /* its info hints are the step's */
        nstart++;
        total += q->cmds[i].maxprocs;
    }
    for (int i = 0; i < c->ninfo; i++) {
        if (strcmp(c->info[i].key, "wdir") == 0)
            wdir = c->info[i].val;
        else if (strcmp(c->info[i].key, "host") == 0 || strcmp(c->info[i].key, "hosts") == 0)
            host = c->info[i].val;
    }
    if (r->max_inflight > 0 && inflight(s) >= r->max_inflight) {
        snprintf(err, errlen, "spawn: %d spawns of this step are starting already "
                 "(LoomSpawnMaxInFlight=%d)", inflight(s), r->max_inflight);
        return -1;
    }
    for (int i = 0; i < LSPAWN_MAX_CHILDREN && k < 0; i++)
        if (s->kids[i].pid == 0)
            k = i;
    if (k < 0) {
        snprintf(err, errlen, "spawn: %d child sruns of this step run already (the most)",
                 LSPAWN_MAX_CHILDREN);
        return -1;
    }
    for (int i = 0; i < q->ncmds; i++) {
        const struct psrv_spawn_cmd *x = &q->cmds[i];
        if (x->maxprocs == 0)
            continue;
        if (lspawn_cmd_check(x->cmd, wdir, getenv("PATH")) < 0) {
            snprintf(err, errlen,
                     "spawn: command '%.200s' not found or not executable%s%.200s", x->cmd,
                     wdir ? " in " : "", wdir ? wdir : "");
            return -1;
        }
        if (nstart > 1 && mp_check(x, err, errlen) < 0)
            return -1;
    }
    if (nstart > 1 && mp_write(s, q, &s->kids[k], err, errlen) < 0)
        return -1;
    size_t ne = 0;
    while (environ[ne])
        ne++;
    argv = calloc((size_t)c->argc + 16, sizeof(*argv));
    envp = calloc(ne + 2 * (size_t)q->npreput + 8, sizeof(*envp));
    own = calloc(2 * (size_t)q->npreput + 16, sizeof(*own));
    if (!argv || !envp || !own) {
        snprintf(err, errlen, "spawn: out of memory");
        goto out;
    }
#define OWN(...)                                                                         \
    do {                                                                                 \
        if (asprintf(&own[nown], __VA_ARGS__) < 0) {                                     \
            own[nown] = NULL;                                                            \
            snprintf(err, errlen, "spawn: out of memory");                               \
            goto out;                                                                    \
        }                                                                                \
        nown++;                                                                          \
    } while (0)
    int na = 0;
    argv[na++] = s->exe;
    OWN("--mpi=%s", s->mpi_type);
    argv[na++] = own[nown - 1];
    OWN("--jobid=%u", s->cfg.job_id);
    argv[na++] = own[nown - 1];
    argv[na++] = "--overlap";
    argv[na++] = "--overcommit"; /* the spawner's allocation may have fewer CPUs */
    OWN("--ntasks=%d", total);
    argv[na++] = own[nown - 1];
    if (nstart > 1)
        argv[na++] = "--multi-prog";
    if (wdir) {
        OWN("--chdir=%s", wdir);
        argv[na++] = own[nown - 1];
    }
    if (host) {
        OWN("--nodelist=%s", host);
        argv[na++] = own[nown - 1];
    }
    argv[na++] = "--";
    if (nstart > 1) {
        argv[na++] = s->kids[k].mpfile;
    } else {
        argv[na++] = (char *)c->cmd;
        for (int j = 0; j < c->argc; j++)
            argv[na++] = (char *)c->argv[j];
    }
    argv[na] = NULL;

    if (pipe2(p, O_CLOEXEC) < 0) {
        snprintf(err, errlen, "spawn: pipe: %s", strerror(errno));
        goto out;
    }
    size_t nv = 0;
    for (size_t i = 0; i < ne; i++)
        if (!env_drop(environ[i]))
            envp[nv++] = environ[i];
    OWN("%s=%s", LSPAWN_ENV_SPAWNER, s->jobkey);
    envp[nv++] = own[nown - 1];
    OWN("%s=%d", LSPAWN_ENV_REPORT, p[1]);
    envp[nv++] = own[nown - 1];
    OWN("%s=%d", LSPAWN_ENV_NPREPUT, q->npreput);
    envp[nv++] = own[nown - 1];
    if (nstart > 1) { /* appnum = the command's index among the ones started */
        size_t al = 0, acap = 16 + (size_t)q->ncmds * 12;
        char *ap = malloc(acap);
        if (!ap) {
            snprintf(err, errlen, "spawn: out of memory");
            goto out;
        }
        for (int i = 0; i < q->ncmds; i++)
            if (q->cmds[i].maxprocs > 0)
                al += (size_t)snprintf(ap + al, acap - al, "%s%d", al ? "," : "",
                                       q->cmds[i].maxprocs);
        own[nown] = NULL;
        if (asprintf(&own[nown], "%s=%s", LSPAWN_ENV_APPNUM, ap) < 0)
            own[nown] = NULL;
        free(ap);
        if (!own[nown]) {
            snprintf(err, errlen, "spawn: out of memory");
            goto out;
        }
        envp[nv++] = own[nown++];
    }
    for (int i = 0; i < q->npreput; i++) {
        OWN("%s%d=%s", LSPAWN_ENV_PPKEY, i, q->preput[i].key);
        envp[nv++] = own[nown - 1];
        OWN("%s%d=%s", LSPAWN_ENV_PPVAL, i, q->preput[i].val);
        envp[nv++] = own[nown - 1];
    }
    envp[nv] = NULL;
#undef OWN

    /* fork, not vfork: srun has other threads.  The report pipe keeps its
     * number across exec; an exec failure is known here and now. */
    struct child_fd pass[] = {{p[1], p[1]}};
    struct child_spec cs = {
        .path = s->exe,
        .argv = argv,
        .envp = envp,
        .fd0 = -1,
        .fd1 = -1,
        .fd2 = -1,
        .pass = pass,
        .npass = 1,
    };
    struct child_result res;
    pid_t pid = child_start(&cs, &res);
    if (pid < 0) {
        char why[600];
        snprintf(err, errlen, "spawn: %s", child_describe(&cs, &res, why, sizeof(why)));
        goto out;
    }
    close(p[1]);
    p[1] = -1;
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    struct skid *kd = &s->kids[k];
    char mpkeep[sizeof(kd->mpfile)];
    memcpy(mpkeep, kd->mpfile, sizeof(mpkeep));
    memset(kd, 0, sizeof(*kd));
    memcpy(kd->mpfile, mpkeep, sizeof(mpkeep));
    kd->pid = pid;
    kd->rfd = p[0];
    p[0] = -1;
    kd->conn = ci;
    kd->deadline = now_ms() + (uint64_t)r->timeout_s * 1000;
    s->conns[ci].kid = k;
    slog(s, 0, "step %s: %s spawns %d process%s: srun --ntasks=%d %.200s%s", s->jobkey,
         s->conns[ci].from, total, total == 1 ? "" : "es", total, c->cmd,
         nstart > 1 ? " ... (--multi-prog)" : "");
    rc = 0;
out:
    if (rc < 0 && s->kids[k].pid == 0 && s->kids[k].mpfile[0]) {
        unlink(s->kids[k].mpfile);
        s->kids[k].mpfile[0] = '\0';
    }
    if (p[0] >= 0)
        close(p[0]);
    if (p[1] >= 0)
        close(p[1]);
    for (int i = 0; own && i < nown; i++)
        free(own[i]);
    free(own);
    free(argv);
    free(envp);
    return rc;
}

/* A whole frame at the head of c->buf: its body and length, or NULL. */
static const char *frame_at(struct sconn *c, size_t off, size_t max, size_t *len, int *bad)
{
    if (c->have - off < 4)
        return NULL;
    uint32_t n = tn_get_u32((const uint8_t *)c->buf + off);
    if (n == 0 || n > max) {
        *bad = 1;
        return NULL;
    }
    if (c->have - off - 4 < n)
        return NULL;
    *len = n;
    return c->buf + off + 4;
}

static void conn_input(struct lspawn_srv *s, int i)
{
    struct sconn *c = &s->conns[i];
    size_t max = c->authed ? 4 + LSPAWN_FRAME_MAX : 4 + TN_CRED_MAX;

    if (c->kid >= 0) { /* nothing more is expected: EOF means the stepd gave up */
        char b[64];
        ssize_t n = recv(c->fd, b, sizeof(b), MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
            s->kids[c->kid].conn = -1;
            conn_close(s, i);
        }
        return;
    }
    if (c->cap < max) {
        char *nb = realloc(c->buf, max);
        if (!nb) {
            conn_close(s, i);
            return;
        }
        c->buf = nb;
        c->cap = max;
    }
    ssize_t n = recv(c->fd, c->buf + c->have, max - c->have, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        conn_close(s, i);
        return;
    }
    if (n < 0)
        return;
    c->have += (size_t)n;
    int bad = 0;
    size_t len;
    const char *f;
    if (!c->authed) {
        if (!(f = frame_at(c, 0, TN_CRED_MAX, &len, &bad))) {
            if (bad || c->have >= max) {
                slog(s, 1, "step %s: spawn connection refused: bad handshake frame",
                     s->jobkey);
                conn_close(s, i);
            }
            return;
        }
        char why[TN_WHY_MAX], pn[TN_NONCE_HEX + 1];
        if (tn_cred_check((enum treenet_auth)s->cfg.auth, f, len, s->cfg.uid, s->jobkey,
                          "srun", c->nonce, c->from, sizeof(c->from), pn, NULL, why) < 0) {
            slog(s, 1, "step %s: spawn connection refused: %s", s->jobkey, why);
            conn_close(s, i);
            return;
        }
        c->authed = 1;
        memmove(c->buf, c->buf + 4 + len, c->have - 4 - len);
        c->have -= 4 + len;
        max = 4 + LSPAWN_FRAME_MAX;
        char *nb = realloc(c->buf, max);
        if (!nb) {
            conn_close(s, i);
            return;
        }
        c->buf = nb;
        c->cap = max;
    }
    if (!(f = frame_at(c, 0, LSPAWN_FRAME_MAX, &len, &bad))) {
        if (bad)
            answer(s, i, -1, "spawn: request frame too long");
        return;
    }
    char err[512] = "";
    struct lspawn_req *r = lspawn_decode(f, len, err, sizeof(err));
    if (!r) {
        answer(s, i, -1, err);
        return;
    }
    free(c->buf);
    c->buf = NULL;
    c->have = c->cap = 0;
    if (run_child(s, i, r, err, sizeof(err)) < 0)
        answer(s, i, -1, err);
    lspawn_free(r);
}

static void kid_report(struct lspawn_srv *s, struct skid *k)
{
    for (;;) {
        ssize_t n = read(k->rfd, k->rep + k->rlen, sizeof(k->rep) - 1 - k->rlen);
        if (n > 0) {
            k->rlen += (size_t)n;
            /* the report is one line: act on it as soon as it is whole, not at EOF
             * (the write end may outlive the report in the child srun's process
             * tree while the new step runs) */
            if (k->rlen < sizeof(k->rep) - 1 && !memchr(k->rep, '\n', k->rlen))
                continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
            return;
        }
        break; /* a whole line, EOF, error or full */
    }
    close(k->rfd);
    k->rfd = -1;
    k->rep[k->rlen] = '\0';
    char *nl = strchr(k->rep, '\n');
    if (nl)
        *nl = '\0';
    if (k->conn < 0)
        return;
    if (strncmp(k->rep, "ok ", 3) == 0 && k->rep[3]) {
        int ci = k->conn;
        k->conn = -1;
        answer(s, ci, 0, k->rep + 3);
    }
    /* else: wait for the exit status, which says more */
}

static void kid_reap(struct lspawn_srv *s, struct skid *k)
{
    int st = 0;
    if (k->exited)
        return;
    pid_t w = waitpid(k->pid, &st, WNOHANG);
    if (w == -1 && errno == ECHILD) /* reaped by someone else: status unknown */
        st = 0xff00;                /* read as "exited with status 255" */
    else if (w != k->pid)
        return;
    k->exited = 1;
    if (k->rfd >= 0)
        kid_report(s, k);
    if (k->conn >= 0) {
        char why[300];
        int ci = k->conn;
        k->conn = -1;
        if (strncmp(k->rep, "fail ", 5) == 0)
            snprintf(why, sizeof(why), "spawn: the new step failed: %.200s", k->rep + 5);
        else if (WIFEXITED(st))
            snprintf(why, sizeof(why), "spawn: srun for the new step exited with status "
                     "%d before the step started", WEXITSTATUS(st));
        else
            snprintf(why, sizeof(why), "spawn: srun for the new step died of signal %d "
                     "before the step started", WIFSIGNALED(st) ? WTERMSIG(st) : 0);
        answer(s, ci, -1, why);
    }
    if (k->mpfile[0])
        unlink(k->mpfile);
    k->mpfile[0] = '\0';
    k->pid = 0; /* slot free */
}

static void on_accept(struct lspawn_srv *s)
{
    int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    int slot = -1, oldest = -1;
    if (fd < 0)
        return;
    for (int i = 0; i < LSPAWN_MAX_CONNS; i++) {
        if (s->conns[i].fd < 0 && slot < 0)
            slot = i;
        else if (s->conns[i].fd >= 0 && !s->conns[i].authed &&
                 (oldest < 0 || s->conns[i].deadline < s->conns[oldest].deadline))
            oldest = i;
    }
    if (slot < 0 && oldest >= 0) {
        conn_close(s, oldest);
        slot = oldest;
    }
    if (slot < 0) {
        close(fd);
        return;
    }
    struct sconn *c = &s->conns[slot];
    c->fd = fd;
    c->kid = -1;
    c->deadline = now_ms() + LSPAWN_HS_MS;
    snprintf(c->from, sizeof(c->from), "?");
    char fr[TN_NONCE_HEX + 16];
    if (tn_nonce_new(c->nonce) < 0) {
        conn_close(s, slot);
        return;
    }
    send_frame(fd, fr, tn_nonce_frame(c->nonce, fr));
}

static void *srv_thread(void *arg)
{
    struct lspawn_srv *s = arg;
    struct pollfd pf[2 + LSPAWN_MAX_CONNS + LSPAWN_MAX_CHILDREN];
    int map[2 + LSPAWN_MAX_CONNS + LSPAWN_MAX_CHILDREN];

    for (;;) {
        int n = 0;
        pf[n] = (struct pollfd){.fd = s->stop[0], .events = POLLIN};
        map[n++] = -1;
        pf[n] = (struct pollfd){.fd = s->lfd, .events = POLLIN};
        map[n++] = -2;
        for (int i = 0; i < LSPAWN_MAX_CONNS; i++)
            if (s->conns[i].fd >= 0) {
                pf[n] = (struct pollfd){.fd = s->conns[i].fd, .events = POLLIN};
                map[n++] = i;
            }
        for (int i = 0; i < LSPAWN_MAX_CHILDREN; i++)
            if (s->kids[i].pid > 0 && s->kids[i].rfd >= 0) {
                pf[n] = (struct pollfd){.fd = s->kids[i].rfd, .events = POLLIN};
                map[n++] = 1000 + i;
            }
        int rc = poll(pf, (nfds_t)n, 100);
        if (rc < 0 && errno != EINTR)
            break;
        if (rc > 0 && pf[0].revents)
            break;
        for (int j = 1; rc > 0 && j < n; j++) {
            if (!pf[j].revents)
                continue;
            if (map[j] == -2)
                on_accept(s);
            else if (map[j] >= 1000 && s->kids[map[j] - 1000].rfd >= 0)
                kid_report(s, &s->kids[map[j] - 1000]);
            else if (map[j] >= 0 && map[j] < 1000 && s->conns[map[j]].fd == pf[j].fd)
                conn_input(s, map[j]);
        }
        uint64_t now = now_ms();
        for (int i = 0; i < LSPAWN_MAX_CHILDREN; i++) {
            struct skid *k = &s->kids[i];
            if (k->pid <= 0)
                continue;
            kid_reap(s, k);
            if (k->pid > 0 && k->conn >= 0 && now >= k->deadline) {
                int ci = k->conn;
                k->conn = -1;
                kill(k->pid, SIGTERM);
                answer(s, ci, -1, "spawn: the new step did not start in time (srun "
                                  "waited for it and was stopped)");
            }
        }
        for (int i = 0; i < LSPAWN_MAX_CONNS; i++)
            if (s->conns[i].fd >= 0 && s->conns[i].kid < 0 && now >= s->conns[i].deadline)
                conn_close(s, i);
    }
    return NULL;
}

struct lspawn_srv *lspawn_srv_start(const struct lspawn_srv_cfg *cfg)
{
    struct lspawn_srv *s = calloc(1, sizeof(*s));
    int rc;

    if (!s)
        return NULL;
    s->cfg = *cfg;
    s->lfd = -1;
    s->stop[0] = s->stop[1] = -1;
    snprintf(s->jobkey, sizeof(s->jobkey), "%s", cfg->jobkey);
    snprintf(s->mpi_type, sizeof(s->mpi_type), "%s", cfg->mpi_type);
    s->cfg.jobkey = s->jobkey;
    s->cfg.mpi_type = s->mpi_type;
    for (int i = 0; i < LSPAWN_MAX_CONNS; i++) {
        s->conns[i].fd = -1;
        s->conns[i].kid = -1;
    }
    ssize_t n = readlink("/proc/self/exe", s->exe, sizeof(s->exe) - 1);
    if (n <= 0 || tn_jobkey_ok(s->jobkey) < 0) {
        errno = n <= 0 ? errno : EINVAL;
        goto fail;
    }
    s->exe[n] = '\0';
    if (pipe2(s->stop, O_CLOEXEC) < 0)
        goto fail;
    if ((rc = loom_listen(NULL, cfg->port_lo, cfg->port_hi, 64, &s->port)) < 0) {
        errno = -rc;
        goto fail;
    }
    s->lfd = rc;
    if ((rc = pthread_create(&s->thr, NULL, srv_thread, s)) != 0) {
        errno = rc;
        goto fail;
    }
    return s;
fail:
    rc = errno;
    if (s->lfd >= 0)
        close(s->lfd);
    if (s->stop[0] >= 0) {
        close(s->stop[0]);
        close(s->stop[1]);
    }
    free(s);
    errno = rc;
    return NULL;
}

int lspawn_srv_port(const struct lspawn_srv *s)
{
    return s->port;
}

void lspawn_srv_stop(struct lspawn_srv *s, int wait_s)
{
    if (!s)
        return;
    if (write(s->stop[1], "x", 1) < 0) {
        /* the pipe is empty and ours: cannot fail */
    }
    pthread_join(s->thr, NULL);
    for (int i = 0; i < LSPAWN_MAX_CONNS; i++)
        if (s->conns[i].fd >= 0) {
            if (s->conns[i].kid >= 0)
                s->kids[s->conns[i].kid].conn = -1;
            answer(s, i, -1, "spawn: the spawning step is ending");
        }
    uint64_t end = now_ms() + (uint64_t)wait_s * 1000;
    int termed = 0;
    for (;;) {
        int live = 0;
        for (int i = 0; i < LSPAWN_MAX_CHILDREN; i++) {
            struct skid *k = &s->kids[i];
            if (k->pid <= 0)
                continue;
            int st;
            if (waitpid(k->pid, &st, WNOHANG) == k->pid || (errno == ECHILD)) {
                if (k->rfd >= 0)
                    close(k->rfd);
                if (k->mpfile[0])
                    unlink(k->mpfile);
                k->pid = 0;
                continue;
            }
            live++;
            if (now_ms() >= end && termed < 2)
                kill(k->pid, termed ? SIGKILL : SIGTERM);
        }
        if (!live)
            break;
        if (now_ms() >= end) {
            if (termed >= 2)
                break;
            termed++;
            end = now_ms() + 5000;
        }
        usleep(50 * 1000);
    }
    close(s->lfd);
    close(s->stop[0]);
    close(s->stop[1]);
    free(s);
}

/* ---- the child srun ------------------------------------------------------ */

void lspawn_child_report(const char *jobid, const char *why)
{
    const char *v = getenv(LSPAWN_ENV_REPORT);
    char *end, line[300];
    long fd;

    if (!v)
        return;
    errno = 0;
    fd = strtol(v, &end, 10);
    unsetenv(LSPAWN_ENV_REPORT);
    if (errno || *end || fd < 3 || fd > (1 << 20))
        return;
    int n = jobid ? snprintf(line, sizeof(line), "ok %.200s\n", jobid)
                  : snprintf(line, sizeof(line), "fail %.200s\n", why ? why : "?");
    if (write((int)fd, line, (size_t)n) < 0) {
        /* the parent srun went away: nothing to tell */
    }
    close((int)fd);
}

/* ---- the stepd side -------------------------------------------------------- */

static int wait_fd(int fd, short ev, uint64_t deadline)
{
    for (;;) {
        uint64_t now = now_ms();
        struct pollfd p = {.fd = fd, .events = ev};
        if (now >= deadline)
            return -ETIMEDOUT;
        int rc = poll(&p, 1, (int)(deadline - now));
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc < 0)
            return -errno;
        if (rc > 0)
            return 0;
    }
}

static int io_all(int fd, char *p, size_t len, int out, uint64_t deadline)
{
    while (len) {
        ssize_t n = out ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
        if (n == 0 && !out)
            return -EPIPE;
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                return -errno;
            int rc = wait_fd(fd, out ? POLLOUT : POLLIN, deadline);
            if (rc < 0)
                return rc;
            continue;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int send_frame_all(int fd, const char *body, size_t len, uint64_t deadline)
{
    uint8_t h[4];
    tn_put_u32(h, (uint32_t)len);
    int rc = io_all(fd, (char *)h, 4, 1, deadline);
    return rc < 0 ? rc : io_all(fd, (char *)body, len, 1, deadline);
}

int lspawn_call_start(const char *server, const char *jobkey, uid_t uid, int auth,
                      const char *body, size_t len, int timeout_ms, char *err,
                      size_t errlen)
{
    char host[256], port[16], why[TN_WHY_MAX];
    char nonce[TN_NONCE_HEX + 1], mine[TN_NONCE_HEX + 1], fr[TN_NONCE_HEX + 16];
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV}, *res;
    uint64_t deadline = now_ms() + (uint64_t)timeout_ms;
    const char *c = server ? strrchr(server, ':') : NULL;
    int fd = -1, rc;

    if (!c || c == server || (size_t)(c - server) >= sizeof(host) || strlen(c + 1) >= 16) {
        snprintf(err, errlen, "spawn: no spawn server address in the step's env");
        return -EINVAL;
    }
    memcpy(host, server, (size_t)(c - server));
    host[c - server] = '\0';
    if (host[0] == '[' && host[strlen(host) - 1] == ']') {
        memmove(host, host + 1, strlen(host));
        host[strlen(host) - 1] = '\0';
    }
    snprintf(port, sizeof(port), "%s", c + 1);
    if (getaddrinfo(host, port, &hints, &res) != 0 || !res) {
        snprintf(err, errlen, "spawn: cannot resolve srun's host %.100s", host);
        return -EHOSTUNREACH;
    }
    rc = -ECONNREFUSED;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
            continue;
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 && errno != EINPROGRESS) {
            rc = -errno;
            close(fd);
            fd = -1;
            continue;
        }
        int e = 0;
        socklen_t el = sizeof(e);
        if ((rc = wait_fd(fd, POLLOUT, deadline)) < 0 ||
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) < 0 || e) {
            rc = rc < 0 ? rc : -(e ? e : errno);
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0) {
        snprintf(err, errlen, "spawn: cannot reach srun's spawn server at %.100s: %s",
                 server, strerror(-rc));
        return rc;
    }
    uint8_t h[4];
    char in[TN_NONCE_HEX + 16];
    if ((rc = io_all(fd, (char *)h, 4, 0, deadline)) < 0 ||
        (rc = tn_get_u32(h) < sizeof(in) ? 0 : -EPROTO) < 0 ||
        (rc = io_all(fd, in, tn_get_u32(h), 0, deadline)) < 0 ||
        (rc = tn_nonce_parse(in, tn_get_u32(h), nonce)) < 0) {
        snprintf(err, errlen, "spawn: srun's spawn server at %.100s did not greet: %s",
                 server, strerror(-rc));
        close(fd);
        return rc;
    }
    char *cred = NULL;
    if ((rc = tn_nonce_new(mine)) < 0 ||
        (rc = tn_cred_make((enum treenet_auth)auth, jobkey, "stepd", "srun", nonce, mine,
                           uid, &cred, why)) < 0) {
        snprintf(err, errlen, "spawn: cannot make a credential: %s", rc == -ENOMEM ? "out of memory" : why);
        close(fd);
        return rc;
    }
    (void)fr;
    rc = send_frame_all(fd, cred, strlen(cred), deadline);
    free(cred);
    if (rc == 0)
        rc = send_frame_all(fd, body, len, deadline);
    if (rc < 0) {
        snprintf(err, errlen, "spawn: sending the request to srun failed: %s",
                 strerror(-rc));
        close(fd);
        return rc;
    }
    return fd;
}

int lspawn_answer_read(int fd, char *buf, size_t *have, int *rc, char *text,
                       size_t textlen)
{
    for (;;) {
        size_t want = 4;
        if (*have >= 4) {
            uint32_t n = tn_get_u32((const uint8_t *)buf);
            if (n == 0 || n > LSPAWN_ANSWER_MAX)
                return -EPROTO;
            want = 4 + n;
            if (*have == want)
                return lspawn_answer_decode(buf + 4, n, rc, text, textlen) < 0 ? -EPROTO : 1;
        }
        ssize_t r = recv(fd, buf + *have, want - *have, MSG_DONTWAIT);
        if (r == 0)
            return -EPIPE;
        if (r < 0)
            return errno == EAGAIN || errno == EINTR ? 0 : -errno;
        *have += (size_t)r;
    }
}
#endif /* LOOM_PLUGIN_NO_TREENET */
