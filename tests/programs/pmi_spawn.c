/* pmi_spawn.c - spawn through Loom's PMI client libraries: PMI2_Job_Spawn (built as
 * pmi2_spawn, libpmi2) or PMI_Spawn_multiple (built as pmi1_spawn with -DSPAWN_PMI1,
 * libpmi), and what the spawned job sees.
 *
 * Contract (argv[1] selects the role):
 *   parent N     rank 0 spawns two commands of this program, 1 and N-1 processes
 *                (N >= 2), with preput PARENT_ROOT_PORT_NAME=port-of-<jobid> and
 *                loom-test=42; every error code must be 0 (PMI-2: a job id comes
 *                back).  Prints "pmi_spawn: parent spawned N OK".
 *   single N     rank 0 spawns ONE command of this program, N processes (1..64), with
 *                the same preput pairs (what srun --mpi=loom runs as one new step);
 *                prints "pmi_spawn: parent spawned N OK" (PMI-2 also the job id) or
 *                "pmi_spawn: rank 0: spawn failed with rc R" and exits 1.
 *   child A S P  (what the parent passes) must see spawned=1, size S, appnum A, the
 *                preput pairs in its own KVS (P: the port value), and a working KVS of
 *                its own (put, fence, get of a neighbour).  Rank 0 of appnum A prints
 *                "pmi_spawn: child appnum A of S OK".
 *   hostile      rank 0 asks for more processes than the wire allows (1000000), then
 *                more than mpiexec's default budget (3000 > 256), then for a program
 *                that does not exist: all must fail (not hang, not crash);
 *                then every rank fences and finalizes normally.  Prints
 *                "pmi_spawn: hostile requests refused OK".
 *   orphan SECS  rank 0 spawns 2 x "/bin/sleep SECS" and every rank exits 3 without
 *                finalize: the spawned job must end with the job (launcher's duty).
 *   Any failure prints "pmi_spawn: rank R: reason" on stderr and exits 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef SPAWN_PMI1
#include <pmi.h>
#else
#include <pmi2.h>
#endif

static int g_rank = -1;

static void fail(const char *what)
{
    fprintf(stderr, "pmi_spawn: rank %d: %s\n", g_rank, what);
    fflush(stderr);
    exit(1);
}

/* ---- the client API in one shape -------------------------------------------- */

static char g_kvs[256];

static void init(int *spawned, int *size, int *rank, int *appnum)
{
#ifdef SPAWN_PMI1
    if (PMI_Init(spawned) != PMI_SUCCESS || PMI_Get_size(size) != PMI_SUCCESS ||
        PMI_Get_rank(rank) != PMI_SUCCESS || PMI_Get_appnum(appnum) != PMI_SUCCESS ||
        PMI_KVS_Get_my_name(g_kvs, sizeof(g_kvs)) != PMI_SUCCESS)
        fail("PMI_Init and queries failed");
#else
    if (PMI2_Init(spawned, size, rank, appnum) != PMI2_SUCCESS ||
        PMI2_Job_GetId(g_kvs, sizeof(g_kvs)) != PMI2_SUCCESS)
        fail("PMI2_Init / PMI2_Job_GetId failed");
#endif
    g_rank = *rank;
}

static void put(const char *k, const char *v)
{
#ifdef SPAWN_PMI1
    if (PMI_KVS_Put(g_kvs, k, v) != PMI_SUCCESS || PMI_KVS_Commit(g_kvs) != PMI_SUCCESS)
        fail("put failed");
#else
    if (PMI2_KVS_Put(k, v) != PMI2_SUCCESS)
        fail("put failed");
#endif
}

static void fence(void)
{
#ifdef SPAWN_PMI1
    if (PMI_Barrier() != PMI_SUCCESS)
        fail("barrier failed");
#else
    if (PMI2_KVS_Fence() != PMI2_SUCCESS)
        fail("fence failed");
#endif
}

static int get(const char *k, char *v, int len)
{
#ifdef SPAWN_PMI1
    return PMI_KVS_Get(g_kvs, k, v, len) == PMI_SUCCESS ? 0 : -1;
#else
    int vl = 0;
    return PMI2_KVS_Get(g_kvs, -1, k, v, len, &vl) == PMI2_SUCCESS ? 0 : -1;
#endif
}

static void finalize(void)
{
#ifdef SPAWN_PMI1
    PMI_Finalize();
#else
    PMI2_Finalize();
#endif
}

/* Spawn ncmds commands of `prog`: 0 on success (errors[] filled), else the rc. */
static int spawn(int ncmds, const char *prog, const char **args[], const int maxprocs[],
                 int npp, const char *ppk[], const char *ppv[], int errors[],
                 char *jobid, int jlen)
{
    const char *cmds[4];
    for (int i = 0; i < ncmds; i++)
        cmds[i] = prog;
#ifdef SPAWN_PMI1
    PMI_keyval_t pp[4];
    int infos[4] = {0, 0, 0, 0};
    for (int i = 0; i < npp; i++) {
        pp[i].key = (char *)ppk[i];
        pp[i].val = (char *)ppv[i];
    }
    snprintf(jobid, (size_t)jlen, "(PMI-1 has none)");
    return PMI_Spawn_multiple(ncmds, cmds, args, maxprocs, infos, NULL, npp, pp, errors);
#else
    MPID_Info pp[4];
    const MPID_Info *ppp[4];
    int argcs[4];
    for (int i = 0; i < ncmds; i++) {
        argcs[i] = 0;
        while (args[i] && args[i][argcs[i]])
            argcs[i]++;
    }
    for (int i = 0; i < npp; i++) {
        memset(&pp[i], 0, sizeof(pp[i]));
        pp[i].key = (char *)ppk[i];
        pp[i].value = (char *)ppv[i];
        ppp[i] = &pp[i];
    }
    return PMI2_Job_Spawn(ncmds, cmds, argcs, args, maxprocs, NULL, NULL, npp, ppp, jobid,
                          jlen, errors);
#endif
}

/* ---- roles ------------------------------------------------------------------ */

static int child(int argc, char **argv, int spawned, int size, int rank, int appnum)
{
    char v[1100], k[64], want[64];

    if (argc < 5)
        fail("child needs A S P");
    if (!spawned)
        fail("spawned is not set: the task does not know it was spawned");
    if (size != atoi(argv[3]))
        fail("wrong size");
    if (appnum != atoi(argv[2]))
        fail("wrong appnum");
    if (get("PARENT_ROOT_PORT_NAME", v, sizeof(v)) < 0 || strcmp(v, argv[4]) != 0)
        fail("preput PARENT_ROOT_PORT_NAME missing or wrong");
    if (get("loom-test", v, sizeof(v)) < 0 || strcmp(v, "42") != 0)
        fail("preput loom-test missing or wrong");
    snprintf(k, sizeof(k), "c%d", rank);
    snprintf(want, sizeof(want), "child-%d", rank);
    put(k, want);
    fence();
    int peer = (rank + 1) % size;
    snprintf(k, sizeof(k), "c%d", peer);
    snprintf(want, sizeof(want), "child-%d", peer);
    if (get(k, v, sizeof(v)) < 0 || strcmp(v, want) != 0)
        fail("the spawned job's own KVS does not work");
    fence();
    if (rank == 0 || (appnum == 1 && rank == 1))
        printf("pmi_spawn: child appnum %d of %d OK\n", appnum, size);
    fflush(stdout);
    finalize();
    return 0;
}

int main(int argc, char **argv)
{
    int spawned = 0, size = 0, rank = -1, appnum = -1;
    char jobid[256] = "", port[300];

    init(&spawned, &size, &rank, &appnum);
    if (argc > 1 && strcmp(argv[1], "child") == 0)
        return child(argc, argv, spawned, size, rank, appnum);
    if (spawned)
        fail("spawned is set in a job nobody spawned");

    if (argc > 2 && strcmp(argv[1], "orphan") == 0) {
        /* spawn 2 x "sleep SECS", then fail: the launcher must end them too */
        const char *a0[] = {argv[2], NULL};
        const char **args[] = {a0};
        int two[] = {2}, errs[2];
        if (rank == 0 && spawn(1, "/bin/sleep", args, two, 0, NULL, NULL, errs, jobid,
                               sizeof(jobid)) != 0)
            fail("spawn of sleep failed");
        printf("pmi_spawn: spawned 2 sleepers, exiting 3\n");
        fflush(stdout);
        exit(3);
    }
    if (argc > 1 && strcmp(argv[1], "hostile") == 0) {
        if (rank == 0) {
            const char *a0[] = {"child", NULL};
            const char **args[] = {a0};
            int many[] = {1000000}, over[] = {3000}, one[] = {1}, errs[4];
            if (spawn(1, argv[0], args, many, 0, NULL, NULL, errs, jobid,
                      sizeof(jobid)) == 0)
                fail("a spawn of 1000000 processes was accepted");
            if (spawn(1, argv[0], args, over, 0, NULL, NULL, errs, jobid,
                      sizeof(jobid)) == 0)
                fail("a spawn past the launcher's budget was accepted");
            if (spawn(1, "/nonexistent/loom-spawn-test", args, one, 0, NULL, NULL, errs,
                      jobid, sizeof(jobid)) == 0)
                fail("a spawn of a program that does not exist succeeded");
        }
        fence();
        if (rank == 0)
            printf("pmi_spawn: hostile requests refused OK\n");
        fflush(stdout);
        finalize();
        return 0;
    }

    if (argc > 2 && strcmp(argv[1], "single") == 0) {
        int n = atoi(argv[2]);
        if (n < 1 || n > 64)
            fail("N must be 1..64");
        if (rank == 0) {
            char s0[16];
            snprintf(port, sizeof(port), "port-of-%s", g_kvs);
            snprintf(s0, sizeof(s0), "%d", n);
            const char *a0[] = {"child", "0", s0, port, NULL};
            const char **args[] = {a0};
            const char *ppk[] = {"PARENT_ROOT_PORT_NAME", "loom-test"};
            const char *ppv[] = {port, "42"};
            int maxprocs[] = {n};
            int errs[64];
            memset(errs, 0xff, sizeof(errs));
            int rc =
                spawn(1, argv[0], args, maxprocs, 2, ppk, ppv, errs, jobid, sizeof(jobid));
            if (rc != 0) {
                char m[64];
                snprintf(m, sizeof(m), "spawn failed with rc %d", rc);
                fail(m);
            }
            for (int i = 0; i < n; i++)
                if (errs[i] != 0)
                    fail("an error code is not 0");
            if (!*jobid || strcmp(jobid, g_kvs) == 0)
                fail("no new job id");
            printf("pmi_spawn: parent spawned %d OK (new job %s)\n", n, jobid);
            fflush(stdout);
        }
        fence();
        finalize();
        return 0;
    }
    if (argc < 3 || strcmp(argv[1], "parent") != 0)
        fail("usage: pmi_spawn parent N | single N | hostile | child A S P");
    int n = atoi(argv[2]);
    if (n < 2 || n > 64)
        fail("N must be 2..64");
    if (rank == 0) {
        char s0[16], s1[16];
        snprintf(port, sizeof(port), "port-of-%s", g_kvs);
        snprintf(s0, sizeof(s0), "%d", n);
        snprintf(s1, sizeof(s1), "%d", n);
        const char *a0[] = {"child", "0", s0, port, NULL};
        const char *a1[] = {"child", "1", s1, port, NULL};
        const char **args[] = {a0, a1};
        const char *ppk[] = {"PARENT_ROOT_PORT_NAME", "loom-test"};
        const char *ppv[] = {port, "42"};
        int maxprocs[] = {1, n - 1};
        int errs[64];
        memset(errs, 0xff, sizeof(errs));
        int rc = spawn(2, argv[0], args, maxprocs, 2, ppk, ppv, errs, jobid, sizeof(jobid));
        if (rc != 0) {
            char m[64];
            snprintf(m, sizeof(m), "spawn failed with rc %d", rc);
            fail(m);
        }
        for (int i = 0; i < n; i++)
            if (errs[i] != 0)
                fail("an error code is not 0");
        if (!*jobid || strcmp(jobid, g_kvs) == 0)
            fail("no new job id");
        printf("pmi_spawn: parent spawned %d OK\n", n);
        fflush(stdout);
    }
    fence();
    finalize();
    return 0;
}
