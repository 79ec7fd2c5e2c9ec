/* env.c - the environment of an application's ranks: which variables are
 * inherited, how -genv/-x/-env combine, and the envp the ranks get.
 * Contract: env.h. */
#include "config.h"

#include "env.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

/* The variables mpiexec sets for each rank itself: never inherited. */
bool mpx_env_ours(const char *kv)
{
    static const char *const ours[] = {
        "PMI_FD=", "PMI_RANK=",    "PMI_SIZE=",        "PMI_JOBID=",       "PMI_PORT=",
        "PMI_ID=", "PMI_SPAWNED=", "MPI_LOCALRANKID=", "MPI_LOCALNRANKS=",
    };

    for (size_t i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
        if (strncmp(kv, ours[i], strlen(ours[i])) == 0)
            return true;
    return false;
}

/* "K" (from -x K / -genvlist) -> "K=<mpiexec's value>", or NULL if unset. */
const char *mpx_env_resolve(const char *s)
{
    if (strchr(s, '='))
        return s;
    for (char **p = environ; *p; p++) {
        size_t kl = strlen(s);
        if (strncmp(*p, s, kl) == 0 && (*p)[kl] == '=')
            return *p;
    }
    return NULL;
}

int mpx_app_env_each(const struct mpx_opts *o, const struct mpx_app *a,
                     int (*fn)(void *arg, const char *kv), void *arg)
{
    int rc;

    for (char **p = environ; *p && !o->genv_none; p++)
        if (!mpx_env_ours(*p) && (rc = fn(arg, *p)) != 0)
            return rc;
    for (int i = 0; i < o->genv.n; i++) {
        const char *kv = mpx_env_resolve(o->genv.v[i]);
        if (kv && (rc = fn(arg, kv)) != 0)
            return rc;
    }
    for (int i = 0; i < a->env.n; i++) {
        const char *kv = mpx_env_resolve(a->env.v[i]);
        if (kv && (rc = fn(arg, kv)) != 0)
            return rc;
    }
    return 0;
}

/* Index in e of the variable that "NAME=value" (or "NAME") names, or -1. */
static int envv_find(const struct mpx_envv *e, const char *kv)
{
    const char *eq = strchr(kv, '=');
    size_t kl = eq ? (size_t)(eq - kv) : strlen(kv);

    for (int i = 0; i < e->n; i++)
        if (strncmp(e->v[i], kv, kl) == 0 && e->v[i][kl] == '=')
            return i;
    return -1;
}

int mpx_envv_set(struct mpx_envv *e, const char *kv)
{
    int i = envv_find(e, kv);

    if (i >= 0) {
        e->v[i] = (char *)kv;
        return 0;
    }
    if (e->n + 10 >= e->cap) {
        int cap = e->cap ? e->cap * 2 : 64;
        char **v = realloc(e->v, sizeof(*v) * (size_t)cap);
        if (!v)
            return -ENOMEM;
        e->v = v;
        e->cap = cap;
    }
    e->v[e->n++] = (char *)kv;
    return 0;
}

/* the user's value wins */
int mpx_envv_set_default(struct mpx_envv *e, const char *kv)
{
    return envv_find(e, kv) >= 0 ? 0 : mpx_envv_set(e, kv);
}

static int envv_add(void *arg, const char *kv)
{
    return mpx_envv_set(arg, kv) < 0 ? -ENOMEM : 0;
}

int mpx_envv_app(struct mpx_envv *e, const struct mpx_opts *o, const struct mpx_app *a)
{
    e->n = 0;
    if (!e->v) {
        /* room for the per-rank variables even if nothing else is set */
        e->cap = 64;
        e->v = malloc(sizeof(*e->v) * (size_t)e->cap);
        if (!e->v)
            return -ENOMEM;
    }
    return mpx_app_env_each(o, a, envv_add, e);
}
