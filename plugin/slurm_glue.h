/* slurm_glue.h - the Slurm internal headers the plugin needs, in the right order.
 *
 * Contract:
 *   Include first in every plugin .c file that touches Slurm.  slurm_xlator.h
 *   must come before the others: with USE_ALIAS (our generated config.h) it
 *   renames calls like error() or env_array_overwrite_fmt() to the slurm_*
 *   aliases that libslurmfull exports, so the plugin links against nothing and
 *   resolves them from the process that loads it (srun, slurmd, slurmstepd).
 *
 * Notes:
 *   - What differs between releases is in slurm_compat.h (and the one #if below
 *     for the mpi interface header's path); _GNU_SOURCE comes from the command line
 *     defined empty, as 23.11's slurmstepd_job.h defines it, so neither warns.
 *   - Compiled against the Slurm source of the installed release
 *     (-I$(SLURM_SRC) -I$(SLURM_SRC)/src/common and the generated gen/ dir
 *     holding config.h and slurm/slurm_version.h); see Makefile.am.
 */
#ifndef LOOM_SLURM_GLUE_H
#define LOOM_SLURM_GLUE_H

#include "src/common/slurm_xlator.h"

#include <signal.h>
#include <string.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/env.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/parse_config.h"
#include "src/common/read_config.h"
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 2, 0)
#include "src/interfaces/mpi.h"
#else
#include "src/common/slurm_mpi.h"
#endif
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmd/slurmstepd/slurmstepd_job.h"

#include "slurm_compat.h"

#endif /* LOOM_SLURM_GLUE_H */
