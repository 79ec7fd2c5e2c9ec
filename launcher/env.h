/* env.h - the environment of an application's ranks, as mpiexec builds it for
 * its own ranks (launch.c) and sends it to a proxy (front.c).
 *
 * Contract:
 *   mpx_app_env_each() calls fn for each "K=V" entry of application a, in
 *   order, later ones winning: mpiexec's environment (hydra's -genvall,
 *   unless -genvnone) without the variables mpiexec sets per rank
 *   (mpx_env_ours), then -genv/-x/-genvlist, then the segment's -env/-envlist.
 *   A bare "K" (-x K) stands for mpiexec's own K=value and is skipped when
 *   mpiexec has no K.  The strings are the options' or environ's own: not
 *   copied.  A nonzero return of fn stops the walk and is returned.
 *
 *   struct mpx_envv is an envp under construction: set replaces a variable
 *   of the same name, set_default only adds one that is not there.  It keeps
 *   room for 10 more entries than it holds (the per-rank variables).
 */
#ifndef LOOM_LAUNCHER_ENV_H
#define LOOM_LAUNCHER_ENV_H

#include <stdbool.h>

#include "args.h"

bool mpx_env_ours(const char *kv);
const char *mpx_env_resolve(const char *s);
int mpx_app_env_each(const struct mpx_opts *o, const struct mpx_app *a,
                     int (*fn)(void *arg, const char *kv), void *arg);

struct mpx_envv {
    char **v;
    int n, cap;
};

int mpx_envv_set(struct mpx_envv *e, const char *kv);
int mpx_envv_set_default(struct mpx_envv *e, const char *kv);
/* e := the environment of application a (mpx_app_env_each); 0 or -ENOMEM. */
int mpx_envv_app(struct mpx_envv *e, const struct mpx_opts *o, const struct mpx_app *a);

#endif /* LOOM_LAUNCHER_ENV_H */
