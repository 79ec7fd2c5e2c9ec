/* lpmix.h - mpiexec's PMIx server: pmixsrv/ started beside a node's psrv, so
 * Open MPI (and other PMIx clients) run under our mpiexec off Slurm.
 *
 * Contract:
 *   One PMIx server per mpiexec (or per proxy of a multi-host job): a global
 *   behind these calls.  lpmix_start() after psrv_create(), on the loop's
 *   thread; lpmix_env() gives each rank's PMIX_* variables before its fork;
 *   lpmix_client_gone() when a rank's process is known to have ended;
 *   lpmix_stop() before psrv_destroy().  The four lpmix_* psrv callbacks
 *   go into the psrv_ops table (they ignore their arg).
 *   Built without libpmix, or with LOOM_PMIX=0 in mpiexec's environment,
 *   lpmix_start does nothing and the rest are no-ops: PMI-1/2 only.
 *   A failure to start is one warning; the job then runs without PMIx.
 */
#ifndef LOOM_LAUNCHER_LPMIX_H
#define LOOM_LAUNCHER_LPMIX_H

#include <stddef.h>
#include <stdint.h>

#include "pmiserv.h"

struct loop;

/* host: this node's host name (NULL: gethostname).  Returns 0 (also when
 * PMIx is off) or -errno after a warning through log. */
int lpmix_start(struct loop *lp, struct psrv *srv, const struct psrv_config *cfg,
                const char *host,
                void (*log)(void *arg, enum psrv_log_level lvl, const char *msg),
                void *log_arg);
void lpmix_stop(void);
/* NULL-terminated "NAME=value" list for local rank index idx, or NULL. */
char *const *lpmix_env(int idx);
/* Variables a rank gets only when its env lacks them, or NULL. */
char *const *lpmix_env_defaults(void);
void lpmix_client_gone(int idx);

void lpmix_coll_done(void *arg, uint64_t id, int rc, const void *data, size_t len,
                     const char *msg);
void lpmix_dmdx_request(void *arg, uint64_t handle, int rank, const void *info,
                        size_t len);
void lpmix_dmdx_done(void *arg, uint64_t id, int rc, const void *data, size_t len,
                     const char *msg);
void lpmix_ns_done(void *arg, uint64_t id, int rc, const char *value);

#endif /* LOOM_LAUNCHER_LPMIX_H */
