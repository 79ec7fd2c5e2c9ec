/* limits.c - the names of the server core's quotas for its hosts: one table
 * of mpi.conf keys and environment variables over struct psrv_limits, and
 * the environment reader the standalone launcher uses; the same for the KVS
 * mode (LOOM_PMI_KVS_MODE, LOOM_PMI_KVS_AUTO_BYTES).
 *
 * Contract: see psrv_limit_knobs in pmiserv.h.  Values are counts or bytes;
 * "0" means no limit (the struct's -1); an absent variable leaves the field
 * as it was (0: the core's default).  A value that is not a whole number in
 * 0..2^62 is refused with a message naming the variable.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pmiserv.h"

#define K(conf, env, field, def)                                                         \
    {                                                                                    \
        conf, env, offsetof(struct psrv_limits, field), def                              \
    }

const struct psrv_limit_knob psrv_limit_knobs[] = {
    K("LoomMaxKvsKeysPerRank", "LOOM_PMI_MAX_KVS_KEYS_PER_RANK", kvs_keys_per_rank,
      PSRV_DEF_KVS_KEYS_PER_RANK),
    K("LoomMaxKvsBytesPerRank", "LOOM_PMI_MAX_KVS_BYTES_PER_RANK", kvs_bytes_per_rank,
      PSRV_DEF_KVS_BYTES_PER_RANK),
    K("LoomMaxKvsKeysPerJob", "LOOM_PMI_MAX_KVS_KEYS_PER_JOB", kvs_keys_per_job,
      PSRV_DEF_KVS_KEYS_PER_JOB),
    K("LoomMaxKvsBytesPerJob", "LOOM_PMI_MAX_KVS_BYTES_PER_JOB", kvs_bytes_per_job,
      PSRV_DEF_KVS_BYTES_PER_JOB),
    K("LoomMaxNodeAttrs", "LOOM_PMI_MAX_NODEATTRS", nodeattr_count,
      PSRV_DEF_NODEATTR_COUNT),
    K("LoomMaxNodeAttrBytes", "LOOM_PMI_MAX_NODEATTR_BYTES", nodeattr_bytes,
      PSRV_DEF_NODEATTR_BYTES),
    K("LoomMaxNames", "LOOM_PMI_MAX_NAMES", names_count, PSRV_DEF_NAMES_COUNT),
    K("LoomMaxNameBytes", "LOOM_PMI_MAX_NAME_BYTES", names_bytes, PSRV_DEF_NAMES_BYTES),
    K("LoomMaxTraceLines", "LOOM_PMI_MAX_TRACE_LINES", trace_lines, PSRV_DEF_TRACE_LINES),
    {NULL, NULL, 0, 0},
};

int64_t *psrv_limit_field(struct psrv_limits *l, const struct psrv_limit_knob *k)
{
    return (int64_t *)(void *)((char *)l + k->offset);
}

int psrv_limits_from_env(struct psrv_limits *l, char *err, size_t errlen)
{
    int rc = 0;

    for (const struct psrv_limit_knob *k = psrv_limit_knobs; k->conf; k++) {
        const char *v = getenv(k->env);
        char *end;
        if (!v || !*v)
            continue;
        errno = 0;
        unsigned long long n = strtoull(v, &end, 10);
        if (errno || *end || *v == '-' || n > (1ULL << 62)) {
            if (rc == 0 && err && errlen)
                snprintf(err, errlen,
                         "%s=%.40s is not a number of 0 (no limit) to 2^62: using the "
                         "default",
                         k->env, v);
            rc = -1;
            continue;
        }
        *psrv_limit_field(l, k) = n == 0 ? -1 : (int64_t)n;
    }
    return rc;
}

int psrv_kvs_mode_parse(const char *v, enum psrv_kvs_mode *mode)
{
    if (!v)
        return -1;
    if (strcasecmp(v, "auto") == 0)
        *mode = PSRV_KVS_AUTO;
    else if (strcasecmp(v, "full") == 0)
        *mode = PSRV_KVS_FULL;
    else if (strcasecmp(v, "ondemand") == 0 || strcasecmp(v, "on-demand") == 0)
        *mode = PSRV_KVS_ONDEMAND;
    else
        return -1;
    return 0;
}

const char *psrv_kvs_mode_name(enum psrv_kvs_mode mode)
{
    return mode == PSRV_KVS_FULL       ? "full"
           : mode == PSRV_KVS_ONDEMAND ? "ondemand"
                                       : "auto";
}

int psrv_kvs_from_env(enum psrv_kvs_mode *mode, int64_t *auto_bytes, char *err,
                      size_t errlen)
{
    const char *v = getenv("LOOM_PMI_KVS_MODE");
    int rc = 0;

    if (v && *v && psrv_kvs_mode_parse(v, mode) < 0) {
        if (err && errlen)
            snprintf(err, errlen,
                     "LOOM_PMI_KVS_MODE=%.40s is not one of auto, full, ondemand", v);
        rc = -1;
    }
    v = getenv("LOOM_PMI_KVS_AUTO_BYTES");
    if (v && *v) {
        char *end;
        errno = 0;
        unsigned long long n = strtoull(v, &end, 10);
        if (errno || *end || *v == '-' || n > (1ULL << 62)) {
            if (rc == 0 && err && errlen)
                snprintf(err, errlen,
                         "LOOM_PMI_KVS_AUTO_BYTES=%.40s is not a number of bytes "
                         "(0: the default) up to 2^62",
                         v);
            rc = -1;
        } else {
            *auto_bytes = (int64_t)n;
        }
    }
    return rc;
}
