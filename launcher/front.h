/* front.h - multi-host mpiexec: one proxy per host, mpiexec in the middle.
 *
 * Contract:
 *   mpx_front_main() runs a job given a host list (-hosts / -f, -ppn,
 *   -launcher, -launcher-exec) and returns mpiexec's exit code, or
 *   MPX_FRONT_LOCAL when every rank lands on this machine as one node: the
 *   caller then runs the job locally (o->apps[0].np and o->nranks may have
 *   been set from the host slots when -n was not given).
 *
 *   Each node's proxy is "mpiexec --proxy --node I --connect ADDRS:PORT",
 *   started directly (-launcher fork, or a host naming this machine) or as
 *   "LAUNCHER-EXEC HOST mpiexec --proxy ..." (default "ssh -x").  The job
 *   cookie is written to the proxy's stdin; the proxy connects back over
 *   TCP, proves it (and makes mpiexec prove it first: mpx_proxy_connect in
 *   handshake.h),
 *   gets the job (ranks, programs, environment), runs its
 *   ranks with its own PMI server core, and mpiexec relays the cores' tree
 *   messages, assembles output lines, judges exits and ends the job.
 *   doc/man/mpiexec.1 describes the user-visible behaviour.
 */
#ifndef LOOM_LAUNCHER_FRONT_H
#define LOOM_LAUNCHER_FRONT_H

#include "args.h"
#include "log.h"

#define MPX_FRONT_LOCAL (-1)

struct mpx_spawned;
/* spawned: the job's identity when another job's ranks spawned it (spawn.h;
 * its report to the spawner is written here once every proxy started its
 * ranks, or with the reason it could not be). */
int mpx_front_main(struct mpx_opts *o, int pmi_level, struct loom_log *log,
                   struct mpx_spawned *spawned);

#endif /* LOOM_LAUNCHER_FRONT_H */
