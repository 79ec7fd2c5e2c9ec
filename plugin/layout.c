/* layout.c - rank placement from Slurm's task id lists and job-env parsing,
 * without Slurm (see layout.h; unit tested by plugin/test/check_layout.c).
 *
 * Notes:
 *   - The placement is read, never computed from the distribution name:
 *     Slurm's lists are the truth for every -m option (a plane mapping
 *     derived from the name was a real bug in Slurm's own pmi2 plugin).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "layout.h"

int loom_layout_map(int size, int nnodes, const uint16_t *cnts, uint32_t *const *tids,
                    int *rank_node, char *err, size_t errlen)
{
    int n, i, seen = 0;

    if (size < 1 || nnodes < 1 || !cnts || !tids || !rank_node) {
        snprintf(err, errlen, "no layout (size %d, nodes %d)", size, nnodes);
        return -EINVAL;
    }
    for (i = 0; i < size; i++)
        rank_node[i] = -1;
    for (n = 0; n < nnodes; n++) {
        if (cnts[n] && !tids[n]) {
            snprintf(err, errlen, "node %d has %u tasks but no task id list", n, cnts[n]);
            return -EINVAL;
        }
        for (i = 0; i < cnts[n]; i++) {
            uint32_t r = tids[n][i];
            if (r >= (uint32_t)size) {
                snprintf(err, errlen, "task id %u on node %d is out of range 0..%d", r, n,
                         size - 1);
                return -EINVAL;
            }
            if (rank_node[r] != -1) {
                snprintf(err, errlen, "task id %u is on node %d and node %d", r,
                         rank_node[r], n);
                return -EINVAL;
            }
            rank_node[r] = n;
            seen++;
        }
    }
    if (seen != size) {
        for (i = 0; i < size && rank_node[i] != -1; i++)
            ;
        snprintf(err, errlen, "the layout places %d of %d tasks (task %d is nowhere)",
                 seen, size, i);
        return -EINVAL;
    }
    return 0;
}

int loom_env_flag(const char *v)
{
    static const char *const yes[] = {"1", "yes", "true", "on"};
    static const char *const no[] = {"", "0", "no", "false", "off"};
    size_t i;

    if (!v)
        return 0;
    for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
        if (!strcasecmp(v, yes[i]))
            return 1;
    for (i = 0; i < sizeof(no) / sizeof(no[0]); i++)
        if (!strcasecmp(v, no[i]))
            return 0;
    return -EINVAL;
}

long loom_env_uint(const char *v, long min, long max)
{
    char *end;
    long n;

    if (!v || !*v)
        return -ENOENT;
    if (*v < '0' || *v > '9')
        return -EINVAL;
    errno = 0;
    n = strtol(v, &end, 10);
    if (errno || *end || n < min || n > max)
        return -EINVAL;
    return n;
}
