/*
 * pmix_phases.c - where a Loom-MPI rank's time goes under PMIx: a shim, preloaded and
 * named as libmpi's PMIx library, that times MPI_Init, MPI_Finalize and the PMIx calls
 * under them, in wall time (CLOCK_MONOTONIC) and process CPU time.
 *
 * Build: cc -O2 -shared -fPIC -o pmix_phases.so bench/pmix_phases.c \
 *            $(pkg-config --cflags pmix) -Wl,--no-as-needed -lpmix -ldl
 *        (link libpmix.so.2 itself if pkg-config names another -L directory)
 * Use:   srun --mpi=pmix -n 64 --export=ALL,LD_PRELOAD=$PWD/pmix_phases.so,\
 *            LOOM_MPI_PMIX_LIB=$PWD/pmix_phases.so BUILD/mpi/hello
 *        (and the same under --mpi=loom without LOOM_MPI_PMIX_LIB, for PMI-2's side)
 * Every rank prints one line on stderr at MPI_Finalize:
 *     pmix_phases: rank=R start_to_init=.. init=.. pmix_init=.. put=.. commit=..
 *       fence=.. gets=K get=.. body=.. finalize=.. pmix_finalize=.. cpu_start=..
 *       cpu_init=.. cpu_pmixinit=.. cpu_fence=.. cpu_body=.. cpu_fin=..
 * in milliseconds: wall time of each phase (body = between MPI_Init and MPI_Finalize,
 * which holds the wait for the slowest rank) and, cpu_*, the process's CPU time in it
 * (cpu_start: from exec to the shim's constructor, loading every library).
 *
 * Notes: libmpi dlopen()s LOOM_MPI_PMIX_LIB and dlsym()s PMIx_* in it: this object comes
 *   first there and forwards to libpmix (RTLD_NEXT). Preloaded, it also sees the calls
 *   libpmix makes to its own API through the PLT (PMIx_Init's gets of pmix.appnum and
 *   the like): gets counts them too. Preloading loads libpmix at exec, so cpu_start
 *   holds its loading also when the program runs under PMI-2. A diagnostic for the
 *   bench (bench/results/mpi-launchers.md), not a measurement of record.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <pmix.h>

int MPI_Init(int *argc, char ***argv);
int MPI_Init_thread(int *argc, char ***argv, int required, int *provided);
int MPI_Finalize(void);

static double t_start, t_init0, t_init1, t_fin0, t_fin1;
static double w_pinit, w_pfin, w_fence, w_get, w_put, w_commit;
static double c_start, c_init0, c_init1, c_fin0, c_fin1, c_pinit, c_fence;
static int n_get;

static double ms(clockid_t clk)
{
    struct timespec t;
    clock_gettime(clk, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}
#define NOW() ms(CLOCK_MONOTONIC)
#define CPU() ms(CLOCK_PROCESS_CPUTIME_ID)

__attribute__((constructor)) static void start(void)
{
    t_start = NOW();
    c_start = CPU();
}

/* the next definition of NAME (libpmix's, libmpi's), looked up once */
#define REAL(name)                                                                       \
    static __typeof__(name) *real;                                                       \
    if (!real)                                                                           \
        *(void **)&real = dlsym(RTLD_NEXT, #name);                                       \
    if (!real)                                                                           \
        abort()

pmix_status_t PMIx_Init(pmix_proc_t *proc, pmix_info_t info[], size_t ninfo)
{
    REAL(PMIx_Init);
    double w = NOW(), c = CPU();
    pmix_status_t st = real(proc, info, ninfo);
    w_pinit += NOW() - w;
    c_pinit += CPU() - c;
    return st;
}

pmix_status_t PMIx_Finalize(const pmix_info_t info[], size_t ninfo)
{
    REAL(PMIx_Finalize);
    double w = NOW();
    pmix_status_t st = real(info, ninfo);
    w_pfin += NOW() - w;
    return st;
}

pmix_status_t PMIx_Fence(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                         size_t ninfo)
{
    REAL(PMIx_Fence);
    double w = NOW(), c = CPU();
    pmix_status_t st = real(procs, nprocs, info, ninfo);
    w_fence += NOW() - w;
    c_fence += CPU() - c;
    return st;
}

pmix_status_t PMIx_Get(const pmix_proc_t *proc, const char key[], const pmix_info_t info[],
                       size_t ninfo, pmix_value_t **val)
{
    REAL(PMIx_Get);
    double w = NOW();
    pmix_status_t st = real(proc, key, info, ninfo, val);
    w_get += NOW() - w;
    n_get++;
    return st;
}

pmix_status_t PMIx_Put(pmix_scope_t scope, const char key[], pmix_value_t *val)
{
    REAL(PMIx_Put);
    double w = NOW();
    pmix_status_t st = real(scope, key, val);
    w_put += NOW() - w;
    return st;
}

pmix_status_t PMIx_Commit(void)
{
    REAL(PMIx_Commit);
    double w = NOW();
    pmix_status_t st = real();
    w_commit += NOW() - w;
    return st;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    REAL(MPI_Init_thread);
    t_init0 = NOW();
    c_init0 = CPU();
    int rc = real(argc, argv, required, provided);
    t_init1 = NOW();
    c_init1 = CPU();
    return rc;
}

int MPI_Init(int *argc, char ***argv)
{
    REAL(MPI_Init);
    t_init0 = NOW();
    c_init0 = CPU();
    int rc = real(argc, argv);
    t_init1 = NOW();
    c_init1 = CPU();
    return rc;
}

int MPI_Finalize(void)
{
    REAL(MPI_Finalize);
    t_fin0 = NOW();
    c_fin0 = CPU();
    int rc = real();
    t_fin1 = NOW();
    c_fin1 = CPU();
    const char *r = getenv("SLURM_PROCID");
    char rank[16];
    snprintf(rank, sizeof(rank), "%.12s", r ? r : "?");
    for (char *p = rank; *p; p++)
        if (*p < '0' || *p > '9')
            *p = '?';
    fprintf(stderr,
            "pmix_phases: rank=%s start_to_init=%.2f init=%.2f pmix_init=%.2f put=%.2f "
            "commit=%.2f fence=%.2f gets=%d get=%.2f body=%.2f finalize=%.2f "
            "pmix_finalize=%.2f cpu_start=%.2f cpu_init=%.2f cpu_pmixinit=%.2f "
            "cpu_fence=%.2f cpu_body=%.2f cpu_fin=%.2f\n",
            rank, t_init0 - t_start, t_init1 - t_init0, w_pinit, w_put, w_commit, w_fence,
            n_get, w_get, t_fin0 - t_init1, t_fin1 - t_fin0, w_pfin, c_start, c_init1 - c_init0,
            c_pinit, c_fence, c_fin0 - c_init1, c_fin1 - c_fin0);
    return rc;
}
