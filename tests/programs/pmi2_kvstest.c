/* pmi2_kvstest.c - PMI-2 client test: init, put/fence/get-all rounds, verify, finalize.
 *
 * Contract: every rank PMI2_Init()s, checks PMI2_Job_GetId and the job attribute
 * PMI_process_mapping, then for R rounds puts key "k<rank>-<round>" with a value of V
 * bytes derived from (rank, round), PMI2_KVS_Fence()s, and gets and verifies EVERY
 * rank's key of that round; then PMI2_Finalize. Rank 0 prints
 *     pmi2_kvstest: N ranks, R rounds OK
 * and, with -t, one line of per-phase medians (microseconds, rank 0's own view)
 *     pmi2_kvstest: timing ranks=N rounds=R vallen=V init_us=.. put_median_us=..
 *         fence_median_us=.. get_all_median_us=.. fence_last_median_us=..
 *         round_median_us=..
 * fence_median is rank 0's own fence time: it includes waiting for the slowest rank
 * (the others' gets of the previous round). fence_last is the fence as the server
 * delivers it: per round the smallest fence time over all ranks (the rank that entered
 * last waits only for the fence itself), median over rounds; with -t the ranks share
 * their fence times through one more put/fence after the timed rounds (untimed).
 * round is rank 0's put + fence + get-all per round: the pace of the whole job.
 * Exit 0 on success. Any failure prints "pmi2_kvstest: rank R: reason" on stderr and
 * leaves with exit code 1 (through PMI2_Abort once initialised, so that the other ranks
 * do not wait forever in a fence).
 *
 * Built twice from this source: pmi2_kvstest_loom (our include/pmi2.h and libpmi2) and
 * pmi2_kvstest_slurm (Slurm's <slurm/pmi2.h> and -lpmi2), to compare both clients
 * against both servers.
 *
 * Notes: put time is the time of one PMI2_KVS_Put; get_all the time to get N keys.
 */
#include "kvstest_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Slurm's header defines unused static const arrays; keep -Wall quiet about them. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-variable"
#pragma GCC diagnostic ignored "-Wunused-const-variable"
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#ifdef KVSTEST_SLURM
#include <slurm/pmi2.h>
#else
#include <pmi2.h>
#endif
#pragma GCC diagnostic pop

#define PROG "pmi2_kvstest"

static int g_rank = -1;
static int g_inited;

static void fail(const char *fmt, const char *what, int rc)
{
    char msg[512];
    snprintf(msg, sizeof(msg), fmt, what, rc);
    fprintf(stderr, PROG ": rank %d: %s\n", g_rank, msg);
    fflush(stderr);
    if (g_inited)
        PMI2_Abort(1, msg); /* Slurm's libpmi2 exits with the flag, i.e. 1 */
    exit(1);
}

int main(int argc, char **argv)
{
    struct kvt_opts o;
    int spawned = -1, size = -1, rank = -1, appnum = -2, rc;
    char jobid[1024], mapping[PMI2_MAX_VALLEN + 1];
    char key[PMI2_MAX_KEYLEN + 1];
    char *val, *want;
    uint64_t t0, t_init, *t_put, *t_fence, *t_get;
    int found = 0;

    kvt_parse(&o, argc, argv, PROG, PMI2_MAX_VALLEN);
    val = malloc((size_t)o.vallen + 2);
    want = malloc((size_t)o.vallen + 2);
    t_put = calloc((size_t)o.rounds, sizeof(uint64_t));
    t_fence = calloc((size_t)o.rounds, sizeof(uint64_t));
    t_get = calloc((size_t)o.rounds, sizeof(uint64_t));
    if (!val || !want || !t_put || !t_fence || !t_get)
        fail("%s", "out of memory", 0);

    t0 = kvt_now_us();
    rc = PMI2_Init(&spawned, &size, &rank, &appnum);
    t_init = kvt_now_us() - t0;
    if (rc != PMI2_SUCCESS)
        fail("%s failed rc=%d", "PMI2_Init", rc);
    g_inited = 1;
    g_rank = rank;
    if (size < 1 || rank < 0 || rank >= size)
        fail("%s: bad rank/size", "PMI2_Init", 0);
    if (spawned != 0)
        fail("%s: spawned=%d, expected 0", "PMI2_Init", spawned);
    if (!PMI2_Initialized())
        fail("%s returned 0 after init", "PMI2_Initialized", 0);

    {
        int r2 = -1, s2 = -1;
        if ((rc = PMI2_Job_GetRank(&r2)) != PMI2_SUCCESS || r2 != rank)
            fail("%s failed or disagrees with PMI2_Init (rc=%d)", "PMI2_Job_GetRank", rc);
        if ((rc = PMI2_Info_GetSize(&s2)) != PMI2_SUCCESS || s2 < 1)
            fail("%s failed (rc=%d)", "PMI2_Info_GetSize", rc);
    }

    memset(jobid, 0, sizeof(jobid));
    rc = PMI2_Job_GetId(jobid, (int)sizeof(jobid));
    if (rc != PMI2_SUCCESS && !o.nomapping)
        fail("%s failed rc=%d", "PMI2_Job_GetId", rc);
    if (jobid[0] == '\0' && !o.nomapping)
        fail("%s returned an empty jobid", "PMI2_Job_GetId", 0);

    memset(mapping, 0, sizeof(mapping));
    rc = PMI2_Info_GetJobAttr("PMI_process_mapping", mapping, (int)sizeof(mapping),
                              &found);
    if (!o.nomapping) {
        const char *why = NULL;
        long described;
        if (rc != PMI2_SUCCESS || !found)
            fail("%s: PMI_process_mapping not found (rc=%d)", "PMI2_Info_GetJobAttr", rc);
        described = kvt_check_mapping(mapping, &why);
        if (described < 0) {
            char m[PMI2_MAX_VALLEN + 100];
            snprintf(m, sizeof(m), "PMI_process_mapping '%s' is malformed: %s", mapping,
                     why);
            fail("%s", m, 0);
        }
    }

    for (int r = 0; r < o.rounds; r++) {
        uint64_t t;
        kvt_key(key, sizeof(key), rank, r);
        kvt_value(val, o.vallen, rank, r);
        t = kvt_now_us();
        rc = PMI2_KVS_Put(key, val);
        t_put[r] = kvt_now_us() - t;
        if (rc != PMI2_SUCCESS)
            fail("%s failed rc=%d", "PMI2_KVS_Put", rc);

        t = kvt_now_us();
        rc = PMI2_KVS_Fence();
        t_fence[r] = kvt_now_us() - t;
        if (rc != PMI2_SUCCESS)
            fail("%s failed rc=%d", "PMI2_KVS_Fence", rc);

        t = kvt_now_us();
        for (int j = 0; j < size; j++) {
            int vlen = -1;
            kvt_key(key, sizeof(key), j, r);
            kvt_value(want, o.vallen, j, r);
            memset(val, 0, (size_t)o.vallen + 2);
            rc = PMI2_KVS_Get(jobid, j, key, val, o.vallen + 2, &vlen);
            if (rc != PMI2_SUCCESS) {
                char m[128];
                snprintf(m, sizeof(m), "PMI2_KVS_Get(%s) failed", key);
                fail("%s rc=%d", m, rc);
            }
            if (vlen != o.vallen || strcmp(val, want) != 0) {
                char m[256];
                snprintf(m, sizeof(m), "PMI2_KVS_Get(%s): wrong value (len %d, want %d)",
                         key, vlen, o.vallen);
                fail("%s", m, 0);
            }
        }
        t_get[r] = kvt_now_us() - t;
    }

    /* -t: gather every rank's fence times (one more, untimed, put/fence/get-all) */
    uint64_t fence_last = 0, round_med = 0;
    if (o.timing) {
        uint64_t *t_last = malloc((size_t)o.rounds * sizeof(uint64_t));
        uint64_t *t_round = malloc((size_t)o.rounds * sizeof(uint64_t));
        char *tv = malloc(PMI2_MAX_VALLEN + 1);
        int rounds = o.rounds;
        if (!t_last || !t_round || !tv)
            fail("%s", "out of memory", 0);
        /* a value holds at most this many 8-hex-digit times */
        if (rounds > PMI2_MAX_VALLEN / 9)
            rounds = PMI2_MAX_VALLEN / 9;
        size_t off = 0;
        for (int r = 0; r < rounds; r++) {
            uint64_t v = t_fence[r] > 0xffffffffu ? 0xffffffffu : t_fence[r];
            off += (size_t)snprintf(tv + off, PMI2_MAX_VALLEN + 1 - off, "%08llx",
                                    (unsigned long long)v);
            t_last[r] = v;
            t_round[r] = t_put[r] + t_fence[r] + t_get[r];
        }
        snprintf(key, sizeof(key), "tf%d", rank);
        if ((rc = PMI2_KVS_Put(key, tv)) != PMI2_SUCCESS)
            fail("%s (fence times) failed rc=%d", "PMI2_KVS_Put", rc);
        if ((rc = PMI2_KVS_Fence()) != PMI2_SUCCESS)
            fail("%s (fence times) failed rc=%d", "PMI2_KVS_Fence", rc);
        for (int j = 0; rank == 0 && j < size; j++) {
            int vlen = -1;
            snprintf(key, sizeof(key), "tf%d", j);
            rc = PMI2_KVS_Get(jobid, j, key, tv, PMI2_MAX_VALLEN + 1, &vlen);
            if (rc != PMI2_SUCCESS || vlen != 8 * rounds)
                fail("%s (fence times) failed rc=%d", "PMI2_KVS_Get", rc);
            for (int r = 0; r < rounds; r++) {
                char h[9];
                memcpy(h, tv + 8 * r, 8);
                h[8] = '\0';
                uint64_t v = strtoull(h, NULL, 16);
                if (v < t_last[r])
                    t_last[r] = v;
            }
        }
        fence_last = kvt_median(t_last, rounds);
        round_med = kvt_median(t_round, o.rounds);
        free(t_last);
        free(t_round);
        free(tv);
    }

    rc = PMI2_Finalize();
    if (rc != PMI2_SUCCESS)
        fail("%s failed rc=%d", "PMI2_Finalize", rc);
    g_inited = 0;

    if (rank == 0) {
        printf(PROG ": %d ranks, %d rounds OK\n", size, o.rounds);
        if (o.timing)
            printf(PROG
                   ": timing ranks=%d rounds=%d vallen=%d init_us=%llu "
                   "put_median_us=%llu fence_median_us=%llu get_all_median_us=%llu "
                   "fence_last_median_us=%llu round_median_us=%llu\n",
                   size, o.rounds, o.vallen, (unsigned long long)t_init,
                   (unsigned long long)kvt_median(t_put, o.rounds),
                   (unsigned long long)kvt_median(t_fence, o.rounds),
                   (unsigned long long)kvt_median(t_get, o.rounds),
                   (unsigned long long)fence_last, (unsigned long long)round_med);
        fflush(stdout);
    }
    free(val);
    free(want);
    free(t_put);
    free(t_fence);
    free(t_get);
    return 0;
}
