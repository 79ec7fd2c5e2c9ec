/* slurm.c - map mpiexec's options to an srun command line (see slurm.h).
 *
 * Contract: see slurm.h.  Pure: no environment, file or process access
 * except through the caller's getenv-like function.
 *
 * Notes:
 *   - The multi-prog syntax (one line per rank range, "%t"/"%o" expanded,
 *     single quotes keep everything, backslash escapes one character) is
 *     Slurm's; every argument is written single-quoted, a quote inside as
 *     '\'' so no "%" or space is ever interpreted.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "slurm.h"

int mpx_slurm_decide(const struct mpx_opts *o, mpx_getenv_fn ge, void *gearg,
                     int srun_found, char *err, size_t errlen)
{
    enum mpx_launcher_kind k = o->launcher;

    if (k == MPX_LAUNCHER_AUTO) {
        const char *l = ge(gearg, "LOOM_MPIEXEC_LAUNCHER");
        if (l && *l) {
            if (strcmp(l, "fork") == 0)
                k = MPX_LAUNCHER_FORK;
            else if (strcmp(l, "slurm") == 0)
                k = MPX_LAUNCHER_SLURM;
            else if (strcmp(l, "ssh") == 0)
                k = MPX_LAUNCHER_SSH;
            else if (strcmp(l, "rsh") == 0)
                k = MPX_LAUNCHER_RSH;
            else
                return loom_errf(
                    err, errlen,
                    "LOOM_MPIEXEC_LAUNCHER='%s' is not ssh, rsh, fork or slurm", l);
        }
    }
    if (k == MPX_LAUNCHER_FORK || k == MPX_LAUNCHER_SSH || k == MPX_LAUNCHER_RSH)
        return 0;
    /* A host list without -launcher: hydra's users expect ssh to those hosts,
     * not srun on whatever the allocation holds. */
    if (k == MPX_LAUNCHER_AUTO && (o->hosts || o->hostfile))
        return 0;
    if (k == MPX_LAUNCHER_SLURM) {
        if (!srun_found)
            return loom_errf(err, errlen, "launcher slurm: srun not found in PATH");
        return 1;
    }
    const char *job = ge(gearg, "SLURM_JOB_ID");
    return job && *job && srun_found;
}

static int push(struct mpx_strv *sv, char *s)
{
    char **v;

    if (!s)
        return -ENOMEM;
    v = realloc(sv->v, sizeof(*v) * (size_t)(sv->n + 2));
    if (!v) {
        free(s);
        return -ENOMEM;
    }
    sv->v = v;
    v[sv->n++] = s;
    v[sv->n] = NULL;
    return 0;
}

static char *fmt(const char *f, ...)
{
    va_list ap;
    char *s = NULL;

    va_start(ap, f);
    if (vasprintf(&s, f, ap) < 0)
        s = NULL;
    va_end(ap);
    return s;
}

static void strv_clear(struct mpx_strv *sv)
{
    for (int i = 0; i < sv->n; i++)
        free(sv->v[i]);
    free(sv->v);
    sv->v = NULL;
    sv->n = 0;
}

/* Growable text buffer for the multi-prog file. */
struct text {
    char *p;
    size_t len, cap;
    int oom;
};

static void tput(struct text *t, const char *s, size_t n)
{
    if (t->oom)
        return;
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        while (cap < t->len + n + 1)
            cap *= 2;
        char *p = realloc(t->p, cap);
        if (!p) {
            t->oom = 1;
            return;
        }
        t->p = p;
        t->cap = cap;
    }
    memcpy(t->p + t->len, s, n);
    t->len += n;
    t->p[t->len] = '\0';
}

static void tstr(struct text *t, const char *s)
{
    tput(t, s, strlen(s));
}

/* One argument, single-quoted for the multi-prog parser. */
static void tquote(struct text *t, const char *s)
{
    tput(t, "'", 1);
    for (const char *q; (q = strchr(s, '\'')); s = q + 1) {
        tput(t, s, (size_t)(q - s));
        tput(t, "'\\''", 4);
    }
    tstr(t, s);
    tput(t, "'", 1);
}

/* "K" -> "K=<value>" via ge (NULL if unset); "K=V" copied. */
static char *resolve(const char *kv, mpx_getenv_fn ge, void *gearg, int *unset)
{
    const char *v;

    *unset = 0;
    if (strchr(kv, '='))
        return strdup(kv);
    v = ge(gearg, kv);
    if (!v) {
        *unset = 1;
        return NULL;
    }
    return fmt("%s=%s", kv, v);
}

static int push_env(struct mpx_strv *env, const struct mpx_strv *from, mpx_getenv_fn ge,
                    void *gearg)
{
    for (int i = 0; i < from->n; i++) {
        int unset;
        char *kv = resolve(from->v[i], ge, gearg, &unset);
        if (unset)
            continue;
        if (push(env, kv) < 0)
            return -ENOMEM;
    }
    return 0;
}

static int has_newline(char **argv)
{
    for (; *argv; argv++)
        if (strchr(*argv, '\n'))
            return 1;
    return 0;
}

int mpx_srun_build(const struct mpx_opts *o, mpx_getenv_fn ge, void *gearg,
                   const char *srun, const char *multiprog_path, struct mpx_srun *s,
                   char *err, size_t errlen)
{
    struct mpx_strv *a = &s->argv;
    const char *mpi = o->mpi_type;
    int mpmd = o->napps > 1;
    int rc = -ENOMEM;

    memset(s, 0, sizeof(*s));
    if (!mpi || !*mpi) {
        mpi = ge(gearg, "LOOM_MPI_TYPE");
        if (!mpi || !*mpi)
            mpi = "loom";
    }
    if (push(a, strdup(srun)) < 0 || push(a, fmt("--mpi=%s", mpi)) < 0 ||
        push(a, strdup("--kill-on-bad-exit=1")) < 0)
        goto out;
    if (mpmd || o->apps[0].np_set)
        if (push(a, fmt("-n%d", o->nranks)) < 0)
            goto out;
    const char *wdir = o->gwdir;
    if (!mpmd && o->apps[0].wdir)
        wdir = o->apps[0].wdir;
    if (wdir && push(a, fmt("--chdir=%s", wdir)) < 0)
        goto out;
    if (o->tag_output && push(a, strdup("--label")) < 0)
        goto out;
    if (o->bind_set || o->report_bindings) {
        const char *b = !o->bind_set ? "" : o->bind == MPX_BIND_CORE ? "cores" : "none";
        const char *sep = o->report_bindings && *b ? "," : "";
        if (push(a, fmt("--cpu-bind=%s%s%s", o->report_bindings ? "verbose" : "", sep,
                        b)) < 0)
            goto out;
    }

    /* Environment for srun (and so for the tasks). */
    if (push_env(&s->env, &o->genv, ge, gearg) < 0)
        goto out;
    if (!mpmd && push_env(&s->env, &o->apps[0].env, ge, gearg) < 0)
        goto out;
    if (o->fence_timeout_s > 0 &&
        push(&s->env, fmt("LOOM_FENCE_TIMEOUT=%d", o->fence_timeout_s)) < 0)
        goto out;
    if (o->genv_none) {
        struct text t = {0};
        tstr(&t, "--export=");
        for (int i = 0; i < s->env.n; i++) {
            const char *eq = strchr(s->env.v[i], '=');
            if (i)
                tput(&t, ",", 1);
            tput(&t, s->env.v[i], (size_t)(eq - s->env.v[i]));
        }
        if (s->env.n == 0)
            tstr(&t, "NONE");
        if (t.oom || push(a, t.p) < 0)
            goto out;
    }

    if (!mpmd) {
        for (int i = 0; i < o->apps[0].argc; i++)
            if (push(a, strdup(o->apps[0].argv[i])) < 0)
                goto out;
        return 0;
    }

    /* MPMD: one multi-prog line per segment. */
    struct text t = {0};
    tstr(&t, "# mpiexec MPMD job (Loom): ranks  program and arguments\n");
    for (int k = 0, first = 0; k < o->napps; k++) {
        const struct mpx_app *ap = &o->apps[k];
        char range[32];
        if (has_newline(ap->argv)) {
            free(t.p);
            rc = loom_errf(err, errlen,
                           "application %d: an argument with a newline cannot go "
                           "into srun's --multi-prog file",
                           k + 1);
            goto out;
        }
        snprintf(range, sizeof(range), "%d-%d ", first, first + ap->np - 1);
        tstr(&t, range);
        if (ap->env.n > 0 || ap->wdir) {
            tstr(&t, "env ");
            if (ap->wdir) {
                tstr(&t, "-C ");
                tquote(&t, ap->wdir);
                tput(&t, " ", 1);
            }
            for (int i = 0; i < ap->env.n; i++) {
                int unset;
                char *kv = resolve(ap->env.v[i], ge, gearg, &unset);
                if (unset)
                    continue;
                if (!kv) {
                    t.oom = 1;
                    break;
                }
                tquote(&t, kv);
                tput(&t, " ", 1);
                free(kv);
            }
        }
        for (int i = 0; i < ap->argc; i++) {
            if (i)
                tput(&t, " ", 1);
            tquote(&t, ap->argv[i]);
        }
        tput(&t, "\n", 1);
        first += ap->np;
    }
    if (t.oom) {
        free(t.p);
        goto out;
    }
    s->multiprog = t.p;
    if (push(a, strdup("--multi-prog")) < 0 || push(a, strdup(multiprog_path)) < 0)
        goto out;
    return 0;
out:
    mpx_srun_free(s);
    return rc;
}

void mpx_srun_free(struct mpx_srun *s)
{
    strv_clear(&s->argv);
    strv_clear(&s->env);
    free(s->multiprog);
    s->multiprog = NULL;
}

char *mpx_srun_cmdline(char *const *argv)
{
    struct text t = {0};

    for (int i = 0; argv[i]; i++) {
        const char *s = argv[i];
        if (i)
            tput(&t, " ", 1);
        if (*s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                            "0123456789-_=.,/:+%@") == strlen(s))
            tstr(&t, s);
        else
            tquote(&t, s);
    }
    if (t.oom || !t.p) {
        free(t.p);
        return t.oom ? NULL : strdup("");
    }
    return t.p;
}
