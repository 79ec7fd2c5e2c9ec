/* pmi1_kvstest.c - PMI-1 client test: init, put/commit/barrier/get-all rounds, finalize.
 *
 * Contract: the PMI-1 twin of pmi2_kvstest. Every rank PMI_Init()s, checks size/rank,
 * the kvsname (PMI_KVS_Get_my_name), the advertised maxima, the clique (node-local
 * ranks: size in 1..N, contains the caller, distinct, in range), then for R rounds
 * PMI_KVS_Put()s "k<rank>-<round>" with a V-byte value derived from (rank, round),
 * PMI_KVS_Commit()s, PMI_Barrier()s and PMI_KVS_Get()s and verifies EVERY rank's key;
 * then PMI_Finalize. Rank 0 prints
 *     pmi1_kvstest: N ranks, R rounds OK
 * and, with -t, one line of per-phase medians (microseconds, rank 0's own view)
 *     pmi1_kvstest: timing ranks=N rounds=R vallen=V init_us=.. put_median_us=..
 *         fence_median_us=.. get_all_median_us=..
 * (fence = commit + barrier). Exit 0 on success; any failure prints
 * "pmi1_kvstest: rank R: reason" on stderr and exits 1 (through PMI_Abort once
 * initialised, so no other rank waits forever in a barrier).
 *
 * Notes: PMI_process_mapping is read as a KVS key (as MPICH does over PMI-1) and
 *   checked when present; -M makes it optional, as for singletons.
 *   Slurm's pmi2 plugin reads a PMI-1 request with one read() of at most 1024 bytes,
 *   so under srun keep the put line short: -v 900 or less.
 */
#include "kvstest_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pmi.h>

#define PROG "pmi1_kvstest"

static int g_rank = -1;
static int g_inited;

static void fail(const char *fmt, const char *what, int rc)
{
    char msg[512];
    snprintf(msg, sizeof(msg), fmt, what, rc);
    fprintf(stderr, PROG ": rank %d: %s\n", g_rank, msg);
    fflush(stderr);
    if (g_inited)
        PMI_Abort(1, msg);
    exit(1);
}

static void check_clique(int rank, int size)
{
    int n = -1, rc;
    int *ranks;
    if ((rc = PMI_Get_clique_size(&n)) != PMI_SUCCESS)
        fail("%s failed rc=%d", "PMI_Get_clique_size", rc);
    if (n < 1 || n > size)
        fail("%s: clique size %d out of range", "PMI_Get_clique_size", n);
    ranks = calloc((size_t)n, sizeof(int));
    if (!ranks)
        fail("%s", "out of memory", 0);
    if ((rc = PMI_Get_clique_ranks(ranks, n)) != PMI_SUCCESS)
        fail("%s failed rc=%d", "PMI_Get_clique_ranks", rc);
    int self = 0;
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= size)
            fail("%s: rank %d out of range", "PMI_Get_clique_ranks", ranks[i]);
        if (ranks[i] == rank)
            self++;
        for (int j = 0; j < i; j++)
            if (ranks[j] == ranks[i])
                fail("%s: rank %d listed twice", "PMI_Get_clique_ranks", ranks[i]);
    }
    if (self != 1)
        fail("%s: the caller is not in its own clique", "PMI_Get_clique_ranks", 0);
    free(ranks);
}

int main(int argc, char **argv)
{
    struct kvt_opts o;
    int spawned = -1, size = -1, rank = -1, rc;
    int kvsmax = 0, keymax = 0, valmax = 0;
    char *kvs, *key, *val, *want;
    uint64_t t0, t_init, *t_put, *t_fence, *t_get;

    kvt_parse(&o, argc, argv, PROG, 1023);
    t_put = calloc((size_t)o.rounds, sizeof(uint64_t));
    t_fence = calloc((size_t)o.rounds, sizeof(uint64_t));
    t_get = calloc((size_t)o.rounds, sizeof(uint64_t));
    if (!t_put || !t_fence || !t_get)
        fail("%s", "out of memory", 0);

    t0 = kvt_now_us();
    rc = PMI_Init(&spawned);
    if (rc != PMI_SUCCESS)
        fail("%s failed rc=%d", "PMI_Init", rc);
    g_inited = 1;
    if ((rc = PMI_Get_size(&size)) != PMI_SUCCESS)
        fail("%s failed rc=%d", "PMI_Get_size", rc);
    if ((rc = PMI_Get_rank(&rank)) != PMI_SUCCESS)
        fail("%s failed rc=%d", "PMI_Get_rank", rc);
    t_init = kvt_now_us() - t0;
    g_rank = rank;
    if (size < 1 || rank < 0 || rank >= size)
        fail("%s: bad rank/size", "PMI_Init", 0);
    if (spawned != PMI_FALSE)
        fail("%s: spawned=%d, expected 0", "PMI_Init", spawned);
    {
        PMI_BOOL ini = PMI_FALSE;
        if (PMI_Initialized(&ini) != PMI_SUCCESS || ini != PMI_TRUE)
            fail("%s does not say initialised", "PMI_Initialized", 0);
    }

    if ((rc = PMI_KVS_Get_name_length_max(&kvsmax)) != PMI_SUCCESS || kvsmax < 16)
        fail("%s failed or too small (rc=%d)", "PMI_KVS_Get_name_length_max", rc);
    if ((rc = PMI_KVS_Get_key_length_max(&keymax)) != PMI_SUCCESS || keymax < 32)
        fail("%s failed or too small (rc=%d)", "PMI_KVS_Get_key_length_max", rc);
    if ((rc = PMI_KVS_Get_value_length_max(&valmax)) != PMI_SUCCESS || valmax <= o.vallen)
        fail("%s failed or smaller than -v (rc=%d)", "PMI_KVS_Get_value_length_max", rc);

    kvs = calloc((size_t)kvsmax + 1, 1);
    key = calloc((size_t)keymax + 1, 1);
    val = calloc((size_t)valmax + 1, 1);
    want = calloc((size_t)valmax + 1, 1);
    if (!kvs || !key || !val || !want)
        fail("%s", "out of memory", 0);
    if ((rc = PMI_KVS_Get_my_name(kvs, kvsmax)) != PMI_SUCCESS)
        fail("%s failed rc=%d", "PMI_KVS_Get_my_name", rc);
    if (kvs[0] == '\0')
        fail("%s returned an empty name", "PMI_KVS_Get_my_name", 0);

    check_clique(rank, size);

    rc = PMI_KVS_Get(kvs, "PMI_process_mapping", val, valmax);
    if (rc == PMI_SUCCESS && strcmp(val, "unavailable") != 0) {
        const char *why = NULL;
        if (kvt_check_mapping(val, &why) < 0) {
            char m[1200];
            snprintf(m, sizeof(m), "PMI_process_mapping '%s' is malformed: %s", val, why);
            fail("%s", m, 0);
        }
    } else if (!o.nomapping && size > 1) {
        fail("%s: PMI_process_mapping not found (rc=%d)", "PMI_KVS_Get", rc);
    }

    for (int r = 0; r < o.rounds; r++) {
        uint64_t t;
        kvt_key(key, (size_t)keymax + 1, rank, r);
        kvt_value(val, o.vallen, rank, r);
        t = kvt_now_us();
        rc = PMI_KVS_Put(kvs, key, val);
        t_put[r] = kvt_now_us() - t;
        if (rc != PMI_SUCCESS)
            fail("%s failed rc=%d", "PMI_KVS_Put", rc);

        t = kvt_now_us();
        if ((rc = PMI_KVS_Commit(kvs)) != PMI_SUCCESS)
            fail("%s failed rc=%d", "PMI_KVS_Commit", rc);
        if ((rc = PMI_Barrier()) != PMI_SUCCESS)
            fail("%s failed rc=%d", "PMI_Barrier", rc);
        t_fence[r] = kvt_now_us() - t;

        t = kvt_now_us();
        for (int j = 0; j < size; j++) {
            kvt_key(key, (size_t)keymax + 1, j, r);
            kvt_value(want, o.vallen, j, r);
            memset(val, 0, (size_t)valmax + 1);
            rc = PMI_KVS_Get(kvs, key, val, valmax);
            if (rc != PMI_SUCCESS) {
                char m[128];
                snprintf(m, sizeof(m), "PMI_KVS_Get(%s) failed", key);
                fail("%s rc=%d", m, rc);
            }
            if (strcmp(val, want) != 0) {
                char m[256];
                snprintf(m, sizeof(m), "PMI_KVS_Get(%s): wrong value (len %zu, want %d)",
                         key, strlen(val), o.vallen);
                fail("%s", m, 0);
            }
        }
        t_get[r] = kvt_now_us() - t;
    }

    rc = PMI_Finalize();
    if (rc != PMI_SUCCESS)
        fail("%s failed rc=%d", "PMI_Finalize", rc);
    g_inited = 0;

    if (rank == 0) {
        printf(PROG ": %d ranks, %d rounds OK\n", size, o.rounds);
        if (o.timing)
            printf(PROG
                   ": timing ranks=%d rounds=%d vallen=%d init_us=%llu "
                   "put_median_us=%llu fence_median_us=%llu get_all_median_us=%llu\n",
                   size, o.rounds, o.vallen, (unsigned long long)t_init,
                   (unsigned long long)kvt_median(t_put, o.rounds),
                   (unsigned long long)kvt_median(t_fence, o.rounds),
                   (unsigned long long)kvt_median(t_get, o.rounds));
        fflush(stdout);
    }
    free(kvs);
    free(key);
    free(val);
    free(want);
    free(t_put);
    free(t_fence);
    free(t_get);
    return 0;
}
