/* conf.c - mpi.conf options of the plugin: parsed by slurmd, shipped to the
 * slurmstepd of every step, shown by `scontrol show config`.
 *
 * Contract:
 *   Options (all optional, in mpi.conf next to slurm.conf):
 *     LoomTreeWidth=N        children per stepd in the fence tree (default 16)
 *     LoomFenceTimeout=S     seconds a fence may wait for its last rank; then the
 *                            step is killed naming the missing ranks (default 600)
 *     LoomConnectTimeout=S   seconds for the rendezvous and the tree links (60)
 *     LoomDebug=LEVEL        error|warn|info|debug|trace or 0-4 (default warn)
 *     LoomTrace=yes|no       log every PMI request and reply (default no)
 *     LoomPMIx=yes|no        also serve PMIx (OpenPMIx server library) beside PMI-1/2
 *                            (default yes when built --with-pmix; always no without)
 *     LoomAgentNice=N        nice value (-20..19) of the stepd thread that serves the
 *                            tasks' PMI requests, and of libpmix's thread (default -10)
 *     LoomTimerSlack=US      timer slack in microseconds (0..1000000) of the tasks
 *                            on a node where they outnumber the step's CPUs;
 *                            0 leaves what they inherit (default 1000, cpus.h)
 *     LoomSpawnMaxProcs=N    processes one spawn (PMI2_Job_Spawn, PMI_Spawn_multiple)
 *                            may start, 0: no limit (default 256)
 *     LoomSpawnMaxInFlight=N spawns of a step whose new step is still starting,
 *                            0: no limit (default 4)
 *     LoomSpawnTimeout=S     seconds srun waits for a spawned step to start (60)
 *     LoomMaxKvsKeysPerRank=N, LoomMaxKvsBytesPerRank=N, LoomMaxKvsKeysPerJob=N,
 *     LoomMaxKvsBytesPerJob=N, LoomMaxNodeAttrs=N, LoomMaxNodeAttrBytes=N,
 *     LoomMaxNames=N, LoomMaxNameBytes=N, LoomMaxTraceLines=N
 *                            quotas of the PMI server core (struct psrv_limits,
 *                            pmiserv.h: defaults there); 0 means no limit.  Not
 *                            overridable from a job's environment.
 *   mpi_p_conf_options / conf_set / conf_get / conf_get_printable implement
 *   Slurm's four conf hooks over the global struct loom_conf, and over
 *   loom_limits for the quotas (agent.c copies it into the server's config).
 *
 * Notes:
 *   - The drop-in mpi_pmi2.so declares the same keys; when both plugins are
 *     installed slurmd gives each its own copy of the values.
 *   - A job can override some values through its environment (see
 *     loom_plugin.h, LOOM_ENV_*); setup.c applies them in the stepd.
 */
#include "slurm_glue.h"

#include <inttypes.h>

#include "cpus.h"
#include "log.h"
#include "loom_plugin.h"

#define LOOM_EXPORT __attribute__((visibility("default")))

struct loom_conf loom_conf;
/* The quotas from mpi.conf (0: the core's default, -1: no limit). */
struct psrv_limits loom_limits;

static s_p_options_t loom_options[] = {
    {"LoomTreeWidth", S_P_UINT32},
    {"LoomFenceTimeout", S_P_UINT32},
    {"LoomConnectTimeout", S_P_UINT32},
    {"LoomDebug", S_P_STRING},
    {"LoomTrace", S_P_BOOLEAN},
    {"LoomPMIx", S_P_BOOLEAN},
    {"LoomAgentNice", S_P_LONG},
    {"LoomTimerSlack", S_P_UINT32},
    {"LoomSpawnMaxProcs", S_P_UINT32},
    {"LoomSpawnMaxInFlight", S_P_UINT32},
    {"LoomSpawnTimeout", S_P_UINT32},
    {"LoomKvsMode", S_P_STRING},
    {"LoomKvsAutoBytes", S_P_UINT64},
    /* the names of psrv_limit_knobs (pmiserv/limits.c) */
    {"LoomMaxKvsKeysPerRank", S_P_UINT64},
    {"LoomMaxKvsBytesPerRank", S_P_UINT64},
    {"LoomMaxKvsKeysPerJob", S_P_UINT64},
    {"LoomMaxKvsBytesPerJob", S_P_UINT64},
    {"LoomMaxNodeAttrs", S_P_UINT64},
    {"LoomMaxNodeAttrBytes", S_P_UINT64},
    {"LoomMaxNames", S_P_UINT64},
    {"LoomMaxNameBytes", S_P_UINT64},
    {"LoomMaxTraceLines", S_P_UINT64},
    {NULL},
};

void loom_conf_reset(void)
{
    loom_conf.tree_width = LOOM_DEFAULT_TREE_WIDTH;
    loom_conf.fence_timeout_s = LOOM_DEFAULT_FENCE_TIMEOUT;
    loom_conf.connect_timeout_s = LOOM_DEFAULT_CONNECT_TIMEOUT;
    loom_conf.debug = LOOM_DEFAULT_DEBUG;
    loom_conf.trace = 0;
    loom_conf.pmix = LOOM_DEFAULT_PMIX;
    loom_conf.agent_nice = LOOM_DEFAULT_AGENT_NICE;
    loom_conf.timer_slack_us = CPUS_DEFAULT_TIMER_SLACK_US;
    loom_conf.spawn_max_procs = LOOM_DEFAULT_SPAWN_MAX_PROCS;
    loom_conf.spawn_max_inflight = LOOM_DEFAULT_SPAWN_MAX_INFLIGHT;
    loom_conf.spawn_timeout_s = LOOM_DEFAULT_SPAWN_TIMEOUT;
    loom_conf.kvs_mode = PSRV_KVS_AUTO;
    loom_conf.kvs_auto_bytes = 0;
    memset(&loom_limits, 0, sizeof(loom_limits));
}

/* The value a quota takes: its default when unset, 0 when unlimited. */
static int64_t limit_value(const struct psrv_limit_knob *k)
{
    int64_t v = *psrv_limit_field(&loom_limits, k);
    return v == 0 ? k->def : v < 0 ? 0 : v;
}

LOOM_EXPORT void mpi_p_conf_options(s_p_options_t **full_options, int *full_opt_cnt);
LOOM_EXPORT void mpi_p_conf_set(s_p_hashtbl_t *tbl);
LOOM_EXPORT s_p_hashtbl_t *mpi_p_conf_get(void);
LOOM_EXPORT list_t *mpi_p_conf_get_printable(void);

LOOM_EXPORT void mpi_p_conf_options(s_p_options_t **full_options, int *full_opt_cnt)
{
    transfer_s_p_options(full_options, loom_options, full_opt_cnt);
}

LOOM_EXPORT void mpi_p_conf_set(s_p_hashtbl_t *tbl)
{
    uint32_t u;
    long l;
    bool b;
    char *s = NULL;

    loom_conf_reset();
    if (!tbl)
        return;
    if (s_p_get_uint32(&u, "LoomTreeWidth", tbl)) {
        if (u >= 1 && u <= 1024)
            loom_conf.tree_width = u;
        else
            error("%s: mpi.conf: LoomTreeWidth=%u out of range 1..1024, using %u",
                  loom_plugin_tag, u, loom_conf.tree_width);
    }
    if (s_p_get_uint32(&u, "LoomFenceTimeout", tbl))
        loom_conf.fence_timeout_s = u;
    if (s_p_get_uint32(&u, "LoomConnectTimeout", tbl) && u > 0)
        loom_conf.connect_timeout_s = u;
    if (s_p_get_string(&s, "LoomDebug", tbl)) {
        int lvl = loom_log_level_parse(s);
        if (lvl >= 0)
            loom_conf.debug = lvl;
        else
            error("%s: mpi.conf: LoomDebug=%s is not error|warn|info|debug|trace",
                  loom_plugin_tag, s);
        xfree(s);
    }
    if (s_p_get_boolean(&b, "LoomTrace", tbl))
        loom_conf.trace = b;
    if (s_p_get_boolean(&b, "LoomPMIx", tbl)) {
        loom_conf.pmix = b && LOOM_DEFAULT_PMIX;
        if (b && !LOOM_DEFAULT_PMIX)
            error("%s: mpi.conf: LoomPMIx=yes but this plugin was built without PMIx",
                  loom_plugin_tag);
    }
    if (s_p_get_long(&l, "LoomAgentNice", tbl)) {
        /* slurmd packs an S_P_LONG for the stepd as 32 bits and the stepd unpacks
         * them unsigned (Slurm 22.05 parse_config.c): -5 arrives as 4294967291.
         * Only that range is read back as negative; anything above 32 bits stays
         * out of range (a plain cast would wrap 4294967301 to 5). */
        if (l > INT32_MAX && l <= (long)UINT32_MAX)
            l = (long)(int32_t)(uint32_t)l;
        if (l >= -20 && l <= 19)
            loom_conf.agent_nice = (int)l;
        else
            error("%s: mpi.conf: LoomAgentNice=%ld out of range -20..19, using %d",
                  loom_plugin_tag, l, loom_conf.agent_nice);
    }
    for (const struct psrv_limit_knob *k = psrv_limit_knobs; k->conf; k++) {
        uint64_t v;
        if (!s_p_get_uint64(&v, k->conf, tbl))
            continue;
        if (v <= (1ULL << 62))
            *psrv_limit_field(&loom_limits, k) = v == 0 ? -1 : (int64_t)v;
        else
            error("%s: mpi.conf: %s=%" PRIu64 " out of range 0..2^62, using %" PRId64,
                  loom_plugin_tag, k->conf, v, k->def);
    }
    if (s_p_get_string(&s, "LoomKvsMode", tbl)) {
        enum psrv_kvs_mode m;
        if (psrv_kvs_mode_parse(s, &m) == 0)
            loom_conf.kvs_mode = (int)m;
        else
            error("%s: mpi.conf: LoomKvsMode=%s is not auto|full|ondemand, using %s",
                  loom_plugin_tag, s, psrv_kvs_mode_name(loom_conf.kvs_mode));
        xfree(s);
    }
    {
        uint64_t v;
        if (s_p_get_uint64(&v, "LoomKvsAutoBytes", tbl)) {
            if (v <= (1ULL << 62))
                loom_conf.kvs_auto_bytes = (int64_t)v;
            else
                error("%s: mpi.conf: LoomKvsAutoBytes=%" PRIu64
                      " out of range 0..2^62, using the default",
                      loom_plugin_tag, v);
        }
    }
    if (s_p_get_uint32(&u, "LoomSpawnMaxProcs", tbl))
        loom_conf.spawn_max_procs = u;
    if (s_p_get_uint32(&u, "LoomSpawnMaxInFlight", tbl))
        loom_conf.spawn_max_inflight = u;
    if (s_p_get_uint32(&u, "LoomSpawnTimeout", tbl)) {
        if (u >= 1 && u <= 86400)
            loom_conf.spawn_timeout_s = u;
        else
            error("%s: mpi.conf: LoomSpawnTimeout=%u out of range 1..86400, using %u",
                  loom_plugin_tag, u, loom_conf.spawn_timeout_s);
    }
    if (s_p_get_uint32(&u, "LoomTimerSlack", tbl)) {
        if (u <= CPUS_MAX_TIMER_SLACK_US)
            loom_conf.timer_slack_us = u;
        else
            error("%s: mpi.conf: LoomTimerSlack=%u out of range 0..%d, using %u",
                  loom_plugin_tag, u, CPUS_MAX_TIMER_SLACK_US, loom_conf.timer_slack_us);
    }
}

/* A number into the table slurmd ships to the stepds, as mpi.conf would spell it. */
static void parse_num(s_p_hashtbl_t *tbl, const char *name, long value)
{
    char *v = xstrdup_printf("%ld", value);
    s_p_parse_pair(tbl, name, v);
    xfree(v);
}

LOOM_EXPORT s_p_hashtbl_t *mpi_p_conf_get(void)
{
    s_p_hashtbl_t *tbl = s_p_hashtbl_create(loom_options);

    parse_num(tbl, "LoomTreeWidth", loom_conf.tree_width);
    parse_num(tbl, "LoomFenceTimeout", loom_conf.fence_timeout_s);
    parse_num(tbl, "LoomConnectTimeout", loom_conf.connect_timeout_s);
    s_p_parse_pair(tbl, "LoomDebug", (char *)loom_log_level_name(loom_conf.debug));
    s_p_parse_pair(tbl, "LoomTrace", loom_conf.trace ? "yes" : "no");
    s_p_parse_pair(tbl, "LoomPMIx", loom_conf.pmix ? "yes" : "no");
    parse_num(tbl, "LoomAgentNice", loom_conf.agent_nice);
    parse_num(tbl, "LoomTimerSlack", loom_conf.timer_slack_us);
    parse_num(tbl, "LoomSpawnMaxProcs", loom_conf.spawn_max_procs);
    parse_num(tbl, "LoomSpawnMaxInFlight", loom_conf.spawn_max_inflight);
    parse_num(tbl, "LoomSpawnTimeout", loom_conf.spawn_timeout_s);
    s_p_parse_pair(tbl, "LoomKvsMode", (char *)psrv_kvs_mode_name(loom_conf.kvs_mode));
    parse_num(tbl, "LoomKvsAutoBytes", (long)loom_conf.kvs_auto_bytes);
    for (const struct psrv_limit_knob *k = psrv_limit_knobs; k->conf; k++)
        parse_num(tbl, k->conf, (long)limit_value(k));
    return tbl;
}

static void add_pair(list_t *l, const char *name, char *value)
{
    config_key_pair_t *kp = xmalloc(sizeof(*kp));
    kp->name = xstrdup(name);
    kp->value = value;
    list_append(l, kp);
}

LOOM_EXPORT list_t *mpi_p_conf_get_printable(void)
{
    list_t *l = list_create(destroy_config_key_pair);

    add_pair(l, "LoomAgentNice", xstrdup_printf("%d", loom_conf.agent_nice));
    add_pair(l, "LoomConnectTimeout", xstrdup_printf("%u", loom_conf.connect_timeout_s));
    add_pair(l, "LoomDebug", xstrdup(loom_log_level_name(loom_conf.debug)));
    add_pair(l, "LoomKvsAutoBytes", xstrdup_printf("%" PRId64, loom_conf.kvs_auto_bytes));
    add_pair(l, "LoomKvsMode", xstrdup(psrv_kvs_mode_name(loom_conf.kvs_mode)));
    add_pair(l, "LoomFenceTimeout", xstrdup_printf("%u", loom_conf.fence_timeout_s));
    add_pair(l, "LoomPMIx", xstrdup(loom_conf.pmix ? "yes" : "no"));
    add_pair(l, "LoomSpawnMaxInFlight", xstrdup_printf("%u", loom_conf.spawn_max_inflight));
    add_pair(l, "LoomSpawnMaxProcs", xstrdup_printf("%u", loom_conf.spawn_max_procs));
    add_pair(l, "LoomSpawnTimeout", xstrdup_printf("%u", loom_conf.spawn_timeout_s));
    add_pair(l, "LoomTimerSlack", xstrdup_printf("%u", loom_conf.timer_slack_us));
    add_pair(l, "LoomTrace", xstrdup(loom_conf.trace ? "yes" : "no"));
    add_pair(l, "LoomTreeWidth", xstrdup_printf("%u", loom_conf.tree_width));
    for (const struct psrv_limit_knob *k = psrv_limit_knobs; k->conf; k++)
        add_pair(l, k->conf, xstrdup_printf("%" PRId64, limit_value(k)));
    return l;
}
