/* pmix_client.c - our PMIx client test: checks what a PMIx server hands a job.
 *
 * Contract: every rank PMIx_Init()s, checks the job and node level keys against its
 * own view (PMIX_JOB_SIZE, PMIX_UNIV_SIZE, PMIX_LOCAL_SIZE, PMIX_LOCAL_PEERS,
 * PMIX_LOCAL_RANK, PMIX_NODE_RANK, PMIX_NODEID, PMIX_HOSTNAME of itself and of its
 * right neighbour, PMIX_APPNUM), then per round r (-r, default 3): puts "k<r>" with a
 * value of -v bytes (default 64) derived from (rank, round), commits, fences, and gets
 * the key of 3 other ranks (rank+1, rank-1, rank+n/2: other nodes when the job spans
 * several), checking every byte. Rank 0 prints
 *     pmix_client: N ranks, R rounds OK
 * and exits 0; any mismatch prints "pmix_client: rank R: ..." on stderr and exits 1.
 *
 * Modes (-m):
 *   data     fence with PMIX_COLLECT_DATA (default)
 *   dmodex   fence without data collection: remote gets go through direct modex
 *   abort    rank 1 (0 if alone) calls PMIx_Abort(7, "pmix_client rank R aborts on
 *            purpose") after the first fence; the others wait in a second fence
 *   unsup    every rank checks that PMIx_Spawn and PMIx_Connect return an error at once
 *            (not a hang), then runs the data rounds
 *   publish  rank 0 publishes "loom-svc-N" (a string), every rank looks it up after a
 *            fence; rank 0 unpublishes it; after a fence every lookup fails; then the
 *            data rounds
 *   die      rank 1 (0 if alone) exits(3) before the first fence (no finalize)
 * -t: rank 0 also prints "fence_median_us=U" (median over the rounds of its fence time).
 * -s: also check that the server shares its node topology in hwloc shared memory
 *     (PMIX_HWLOC_SHMEM_FILE/ADDR/SIZE, the file readable), as Open MPI adopts it.
 * -o 0|1: also check that the server announces the node as oversubscribed (1:
 *     PMIX_NODE_OVERSUBSCRIBED is true) or not (0: the key is absent).
 * -y VALUE|-: also check OMPI_MCA_mpi_yield_when_idle in this rank's environment:
 *     equal to VALUE, or unset (-).
 *
 * Notes: built with the OpenPMIx client library (libpmix-dev), only when configure
 *   found it; run under srun --mpi=loom (or --mpi=pmix for reference).
 */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pmix_proc_t me;
static int nranks;

#define FAIL(...)                                                                        \
    do {                                                                                 \
        fprintf(stderr, "pmix_client: rank %u: ", me.rank);                              \
        fprintf(stderr, __VA_ARGS__);                                                    \
        fprintf(stderr, "\n");                                                           \
        exit(1);                                                                         \
    } while (0)
/* ASSERT_TRUE(condition that must hold, message...): FAIL unless it holds */
#define ASSERT_TRUE(ok, ...)                                                             \
    do {                                                                                 \
        if (!(ok))                                                                       \
            FAIL(__VA_ARGS__);                                                           \
    } while (0)

static pmix_value_t *get(int rank, const char *key)
{
    pmix_proc_t p;
    pmix_value_t *v = NULL;
    pmix_status_t st;

    PMIX_PROC_CONSTRUCT(&p);
    PMIX_LOAD_NSPACE(p.nspace, me.nspace);
    p.rank = (pmix_rank_t)rank;
    st = PMIx_Get(&p, key, NULL, 0, &v);
    ASSERT_TRUE(st == PMIX_SUCCESS && v, "PMIx_Get(rank %d, %s): %s", rank, key,
                PMIx_Error_string(st));
    return v;
}

static unsigned long getu(int rank, const char *key)
{
    pmix_value_t *v = get(rank, key);
    unsigned long r;
    switch (v->type) {
    case PMIX_UINT32:
        r = v->data.uint32;
        break;
    case PMIX_UINT16:
        r = v->data.uint16;
        break;
    case PMIX_PROC_RANK:
        r = v->data.rank;
        break;
    case PMIX_INT:
        r = (unsigned long)v->data.integer;
        break;
    default:
        FAIL("%s: unexpected type %d", key, v->type);
    }
    PMIX_VALUE_RELEASE(v);
    return r;
}

static char *gets_(int rank, const char *key)
{
    pmix_value_t *v = get(rank, key);
    ASSERT_TRUE(v->type == PMIX_STRING && v->data.string, "%s: not a string (type %d)",
                key, v->type);
    char *s = strdup(v->data.string);
    PMIX_VALUE_RELEASE(v);
    return s;
}

static void fill(char *buf, int len, int rank, int round)
{
    for (int i = 0; i < len - 1; i++)
        buf[i] = (char)('a' + (rank * 7 + round * 13 + i) % 26);
    buf[len - 1] = '\0';
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void fence(int collect)
{
    pmix_info_t info;
    bool flag = collect ? true : false;
    pmix_status_t st;

    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &flag, PMIX_BOOL);
    st = PMIx_Fence(NULL, 0, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    ASSERT_TRUE(st == PMIX_SUCCESS, "PMIx_Fence: %s", PMIx_Error_string(st));
}

static void check_job_keys(void)
{
    unsigned long lsize, lrank, nrank, nodeid;
    char *peers, *host, *myhost;
    int found = 0;

    ASSERT_TRUE((int)getu(PMIX_RANK_WILDCARD, PMIX_JOB_SIZE) == nranks,
                "PMIX_JOB_SIZE is not %d", nranks);
    ASSERT_TRUE((int)getu(PMIX_RANK_WILDCARD, PMIX_UNIV_SIZE) >= nranks,
                "PMIX_UNIV_SIZE < %d", nranks);
    lsize = getu(PMIX_RANK_WILDCARD, PMIX_LOCAL_SIZE);
    peers = gets_(PMIX_RANK_WILDCARD, PMIX_LOCAL_PEERS);
    lrank = getu((int)me.rank, PMIX_LOCAL_RANK);
    nrank = getu((int)me.rank, PMIX_NODE_RANK);
    nodeid = getu((int)me.rank, PMIX_NODEID);
    (void)nodeid;
    unsigned long n = 0, idx = 0;
    for (char *t = strtok(peers, ","); t; t = strtok(NULL, ","), n++)
        if ((pmix_rank_t)strtoul(t, NULL, 10) == me.rank) {
            found = 1;
            idx = n;
        }
    ASSERT_TRUE(found && n == lsize,
                "PMIX_LOCAL_PEERS (%lu entries) does not hold this rank or is not "
                "PMIX_LOCAL_SIZE=%lu",
                n, lsize);
    ASSERT_TRUE(lrank == idx && nrank == lrank,
                "PMIX_LOCAL_RANK %lu / PMIX_NODE_RANK %lu, want %lu", lrank, nrank, idx);
    myhost = gets_((int)me.rank, PMIX_HOSTNAME);
    host = gets_((int)((me.rank + 1) % (pmix_rank_t)nranks), PMIX_HOSTNAME);
    ASSERT_TRUE(*myhost && *host, "empty PMIX_HOSTNAME");
    free(peers);
    free(myhost);
    free(host);
    ASSERT_TRUE(getu((int)me.rank, PMIX_APPNUM) == 0, "PMIX_APPNUM is not 0");
}

static void check_topology_shared(void)
{
    char *file = gets_(PMIX_RANK_WILDCARD, PMIX_HWLOC_SHMEM_FILE);
    pmix_value_t *a = get(PMIX_RANK_WILDCARD, PMIX_HWLOC_SHMEM_ADDR);
    pmix_value_t *z = get(PMIX_RANK_WILDCARD, PMIX_HWLOC_SHMEM_SIZE);
    ASSERT_TRUE(
        a->type == PMIX_SIZE && z->type == PMIX_SIZE && a->data.size && z->data.size,
        "PMIX_HWLOC_SHMEM_ADDR/SIZE: types %d/%d, values %zu/%zu", a->type, z->type,
        a->type == PMIX_SIZE ? a->data.size : 0, z->type == PMIX_SIZE ? z->data.size : 0);
    FILE *f = fopen(file, "r");
    ASSERT_TRUE(f, "PMIX_HWLOC_SHMEM_FILE %s cannot be read", file);
    fclose(f);
    PMIX_VALUE_RELEASE(a);
    PMIX_VALUE_RELEASE(z);
    free(file);
}

static void check_oversubscribed(const char *want_key, const char *want_env)
{
    if (want_key) {
        pmix_proc_t p;
        pmix_value_t *v = NULL;
        int want = strcmp(want_key, "1") == 0;
        PMIX_PROC_CONSTRUCT(&p);
        PMIX_LOAD_NSPACE(p.nspace, me.nspace);
        p.rank = PMIX_RANK_WILDCARD;
        pmix_status_t st = PMIx_Get(&p, PMIX_NODE_OVERSUBSCRIBED, NULL, 0, &v);
        int have = st == PMIX_SUCCESS && v && v->type == PMIX_BOOL && v->data.flag;
        ASSERT_TRUE(want ? have : st != PMIX_SUCCESS,
                    "PMIX_NODE_OVERSUBSCRIBED: %s (type %d), want %s",
                    PMIx_Error_string(st), v ? v->type : -1, want ? "true" : "absent");
        if (v)
            PMIX_VALUE_RELEASE(v);
    }
    if (want_env) {
        const char *env = getenv("OMPI_MCA_mpi_yield_when_idle");
        int unset = strcmp(want_env, "-") == 0;
        ASSERT_TRUE(unset ? !env : env && strcmp(env, want_env) == 0,
                    "OMPI_MCA_mpi_yield_when_idle is %s%s%s, want %s", env ? "'" : "",
                    env ? env : "unset", env ? "'" : "", unset ? "unset" : want_env);
    }
}

int main(int argc, char **argv)
{
    const char *mode = "data", *want_oversub = NULL, *want_yield = NULL;
    int rounds = 3, vlen = 64, timing = 0, topo = 0, c;
    pmix_status_t st;

    while ((c = getopt(argc, argv, "m:r:v:tso:y:")) != -1) {
        switch (c) {
        case 'm':
            mode = optarg;
            break;
        case 'r':
            rounds = atoi(optarg);
            break;
        case 'v':
            vlen = atoi(optarg);
            break;
        case 't':
            timing = 1;
            break;
        case 's':
            topo = 1;
            break;
        case 'o':
            want_oversub = optarg;
            break;
        case 'y':
            want_yield = optarg;
            break;
        default:
            fprintf(stderr,
                    "usage: pmix_client [-m data|dmodex|abort|unsup|publish|die] [-r R] "
                    "[-v BYTES] [-t] [-s] [-o 0|1] [-y VALUE|-]\n");
            return 2;
        }
    }
    if (rounds < 1 || vlen < 2 || vlen > 65536)
        return 2;
    if ((st = PMIx_Init(&me, NULL, 0)) != PMIX_SUCCESS) {
        fprintf(stderr, "pmix_client: PMIx_Init: %s\n", PMIx_Error_string(st));
        return 1;
    }
    nranks = (int)getu(PMIX_RANK_WILDCARD, PMIX_JOB_SIZE);
    check_job_keys();
    if (topo)
        check_topology_shared();
    if (want_oversub || want_yield)
        check_oversubscribed(want_oversub, want_yield);
    int culprit = nranks > 1 ? 1 : 0;

    if (strcmp(mode, "die") == 0 && (int)me.rank == culprit) {
        fprintf(stderr, "pmix_client: rank %u exits before the fence on purpose\n",
                me.rank);
        exit(3);
    }
    if (strcmp(mode, "publish") == 0) {
        char svc[64], port[64];
        snprintf(svc, sizeof(svc), "loom-svc-%d", nranks);
        snprintf(port, sizeof(port), "port-of-%d-ranks", nranks);
        if (me.rank == 0) {
            pmix_info_t pi;
            PMIX_INFO_CONSTRUCT(&pi);
            PMIX_INFO_LOAD(&pi, svc, port, PMIX_STRING);
            if ((st = PMIx_Publish(&pi, 1)) != PMIX_SUCCESS)
                FAIL("PMIx_Publish: %s", PMIx_Error_string(st));
            PMIX_INFO_DESTRUCT(&pi);
        }
        fence(0);
        pmix_pdata_t pd;
        PMIX_PDATA_CONSTRUCT(&pd);
        PMIX_LOAD_KEY(pd.key, svc);
        if ((st = PMIx_Lookup(&pd, 1, NULL, 0)) != PMIX_SUCCESS)
            FAIL("PMIx_Lookup(%s): %s", svc, PMIx_Error_string(st));
        ASSERT_TRUE(pd.value.type == PMIX_STRING &&
                        strcmp(pd.value.data.string, port) == 0,
                    "PMIx_Lookup(%s) gave the wrong value", svc);
        PMIX_PDATA_DESTRUCT(&pd);
        fence(0);
        if (me.rank == 0) {
            char *keys[2] = {svc, NULL};
            if ((st = PMIx_Unpublish(keys, NULL, 0)) != PMIX_SUCCESS)
                FAIL("PMIx_Unpublish: %s", PMIx_Error_string(st));
        }
        fence(0);
        PMIX_PDATA_CONSTRUCT(&pd);
        PMIX_LOAD_KEY(pd.key, svc);
        ASSERT_TRUE(PMIx_Lookup(&pd, 1, NULL, 0) != PMIX_SUCCESS,
                    "PMIx_Lookup(%s) succeeded after unpublish", svc);
        PMIX_PDATA_DESTRUCT(&pd);
    }
    if (strcmp(mode, "unsup") == 0) {
        ASSERT_TRUE(PMIx_Connect(NULL, 0, NULL, 0) != PMIX_SUCCESS,
                    "PMIx_Connect succeeded, want an error");
        pmix_app_t app;
        pmix_nspace_t ns;
        PMIX_APP_CONSTRUCT(&app);
        app.cmd = strdup("/bin/true");
        app.maxprocs = 1;
        ASSERT_TRUE(PMIx_Spawn(NULL, 0, &app, 1, ns) != PMIX_SUCCESS,
                    "PMIx_Spawn succeeded, want an error");
        PMIX_APP_DESTRUCT(&app);
    }

    int collect = strcmp(mode, "dmodex") != 0;
    char *val = malloc((size_t)vlen), *want = malloc((size_t)vlen);
    double *t = calloc((size_t)rounds, sizeof(double));
    if (!val || !want || !t)
        FAIL("out of memory");
    for (int r = 0; r < rounds; r++) {
        char key[32];
        pmix_value_t pv;
        snprintf(key, sizeof(key), "k%d", r);
        fill(val, vlen, (int)me.rank, r);
        PMIX_VALUE_CONSTRUCT(&pv);
        pv.type = PMIX_STRING;
        pv.data.string = val;
        if ((st = PMIx_Put(PMIX_GLOBAL, key, &pv)) != PMIX_SUCCESS)
            FAIL("PMIx_Put: %s", PMIx_Error_string(st));
        if ((st = PMIx_Commit()) != PMIX_SUCCESS)
            FAIL("PMIx_Commit: %s", PMIx_Error_string(st));
        double t0 = now_us();
        fence(collect);
        t[r] = now_us() - t0;
        if (strcmp(mode, "abort") == 0) {
            if ((int)me.rank == culprit) {
                char msg[80];
                snprintf(msg, sizeof(msg), "pmix_client rank %u aborts on purpose",
                         me.rank);
                PMIx_Abort(7, msg, NULL, 0);
                sleep(30); /* the server ends the job */
                FAIL("still alive after PMIx_Abort");
            }
            fence(0); /* the job ends while the others wait here */
            FAIL("the fence after an abort returned");
        }
        int peers[3] = {(int)(me.rank + 1) % nranks, (int)(me.rank + nranks - 1) % nranks,
                        (int)(me.rank + nranks / 2) % nranks};
        for (int k = 0; k < 3; k++) {
            pmix_value_t *v = get(peers[k], key);
            fill(want, vlen, peers[k], r);
            ASSERT_TRUE(v->type == PMIX_STRING && strcmp(v->data.string, want) == 0,
                        "round %d: %s of rank %d is wrong", r, key, peers[k]);
            PMIX_VALUE_RELEASE(v);
        }
    }
    fence(0);
    if (timing && me.rank == 0) {
        qsort(t, (size_t)rounds, sizeof(double), cmpd);
        printf("fence_median_us=%.0f\n", t[rounds / 2]);
    }
    if ((st = PMIx_Finalize(NULL, 0)) != PMIX_SUCCESS)
        FAIL("PMIx_Finalize: %s", PMIx_Error_string(st));
    if (me.rank == 0) {
        printf("pmix_client: %d ranks, %d rounds OK\n", nranks, rounds);
        fflush(stdout);
    }
    free(val);
    free(want);
    free(t);
    return 0;
}
