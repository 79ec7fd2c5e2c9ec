/* layout.h - Slurm-free helpers of the plugin: rank placement and the job-env
 * overrides, kept apart from the Slurm glue so that unit tests can run them.
 *
 * Contract:
 *   loom_layout_map() turns Slurm's per-node task id lists (launch message
 *   global_task_ids, or het_job_tids of a het step) into rank_node[rank] for
 *   every rank, exactly as placed (block, cyclic, plane, arbitrary).  Every
 *   rank 0..size-1 must appear exactly once; otherwise -EINVAL with the reason
 *   in err.  loom_env_flag()/loom_env_uint() parse the LOOM_* job-env values.
 */
#ifndef LOOM_PLUGIN_LAYOUT_H
#define LOOM_PLUGIN_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

int loom_layout_map(int size, int nnodes, const uint16_t *cnts, uint32_t *const *tids,
                    int *rank_node, char *err, size_t errlen);

/* "1", "yes", "true", "on" (any case) -> 1; "", "0", "no", "false", "off" -> 0;
 * NULL -> 0; anything else -> -EINVAL. */
int loom_env_flag(const char *v);
/* Decimal in [min, max] -> the value; NULL or "" -> -ENOENT; else -EINVAL. */
long loom_env_uint(const char *v, long min, long max);

#endif /* LOOM_PLUGIN_LAYOUT_H */
