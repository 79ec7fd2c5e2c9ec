/*
 * check_mpi_launch.c - mpi/core/boot_launch.c: which interface libmpi wires up
 *   through for the environments launchers leave (Loom, Slurm's pmi2/pmix/none, Open
 *   MPI's mpirun, Hydra, a plain shell, a batch script), the refusal of a multi-task
 *   launch without a server (the whole message), LOOM_MPI_PMI, and escaping.
 */
#include <check.h>
#include <string.h>

#include "boot_launch.h"

/* a made-up environment: NULL-terminated "NAME=value" strings */
static const char *fake_get(const char *name, void *ctx)
{
    size_t n = strlen(name);
    for (const char **e = ctx; *e; e++)
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
            return *e + n + 1;
    return NULL;
}

static struct xm_launch detect(const char **env)
{
    struct xm_launch l;
    xm_launch_detect(fake_get, env, &l);
    return l;
}

START_TEST(test_pmi2_first)
{
    /* Loom's plugin serves both: PMI-2 wins */
    const char *env[] = {"PMI_FD=5", "PMIX_NAMESPACE=slurm.pmix.3.0",
                         "PMIX_SERVER_URI4=pmix-server.1;tcp4://127.0.0.1:1",
                         "SLURM_STEP_NUM_TASKS=4", NULL};
    ck_assert_int_eq(detect(env).kind, XM_LAUNCH_PMI2);
    const char *hydra[] = {"PMI_PORT=host:1234", "PMI_RANK=1", "PMI_SIZE=4", NULL};
    ck_assert_int_eq(detect(hydra).kind, XM_LAUNCH_PMI2);
}
END_TEST

START_TEST(test_pmix)
{
    const char *slurm[] = {"PMIX_NAMESPACE=slurm.pmix.7.0", "PMIX_RANK=3",
                           "PMIX_SERVER_URI3=pmix-server.9;tcp4://127.0.0.1:9",
                           "SLURM_STEP_NUM_TASKS=4", "SLURM_MPI_TYPE=pmix", NULL};
    struct xm_launch l = detect(slurm);
    ck_assert_int_eq(l.kind, XM_LAUNCH_PMIX);
    ck_assert_str_eq(l.why, "PMIx launch (PMIX_NAMESPACE=slurm.pmix.7.0, PMIX_RANK=3, "
                            "PMIX_SERVER_URI3)");
    const char *ompi[] = {"OMPI_COMM_WORLD_SIZE=4", "PMIX_SERVER_URI41=x", NULL};
    ck_assert_int_eq(detect(ompi).kind, XM_LAUNCH_PMIX);
}
END_TEST

START_TEST(test_singleton)
{
    const char *none[] = {NULL};
    ck_assert_int_eq(detect(none).kind, XM_LAUNCH_SINGLETON);
    /* a batch script of sbatch -n 4 running a program directly */
    const char *batch[] = {"SLURM_NTASKS=4", "SLURM_JOB_ID=12", NULL};
    ck_assert_int_eq(detect(batch).kind, XM_LAUNCH_SINGLETON);
    /* one task of srun --mpi=none */
    const char *one[] = {"SLURM_STEP_NUM_TASKS=1", "SLURM_STEP_ID=0", "SLURM_NTASKS=1", NULL};
    ck_assert_int_eq(detect(one).kind, XM_LAUNCH_SINGLETON);
    /* values that are no counts are no signs */
    const char *junk[] = {"SLURM_STEP_NUM_TASKS=4x", "OMPI_COMM_WORLD_SIZE=-4",
                          "PMI_SIZE=99999999999", NULL};
    ck_assert_int_eq(detect(junk).kind, XM_LAUNCH_SINGLETON);
}
END_TEST

START_TEST(test_refuse_slurm)
{
    const char *env[] = {"SLURM_STEP_NUM_TASKS=4", "SLURM_PROCID=2", "SLURM_STEP_ID=0",
                         "SLURM_MPI_TYPE=none", NULL};
    struct xm_launch l = detect(env);
    ck_assert_int_eq(l.kind, XM_LAUNCH_REFUSE);
    ck_assert_str_eq(l.why,
                     "MPI_Init: task 2 of a Slurm step of 4 tasks (SLURM_STEP_NUM_TASKS=4, "
                     "SLURM_MPI_TYPE=none) found no PMI server to wire up with and would "
                     "run alone as rank 0 of 1; launch it with srun --mpi=loom (or "
                     "--mpi=pmi2 or --mpi=pmix), or set LOOM_MPI_PMI=singleton to run every "
                     "task alone");
    /* SLURM_NTASKS counts inside a step */
    const char *old[] = {"SLURM_NTASKS=8", "SLURM_STEPID=1", "SLURM_PROCID=7", NULL};
    l = detect(old);
    ck_assert_int_eq(l.kind, XM_LAUNCH_REFUSE);
    ck_assert_ptr_nonnull(strstr(l.why, "task 7 of a Slurm step of 8 tasks (SLURM_NTASKS=8)"));
}
END_TEST

START_TEST(test_refuse_ompi_pmi)
{
    const char *ompi[] = {"OMPI_COMM_WORLD_SIZE=4", "OMPI_COMM_WORLD_RANK=1", NULL};
    struct xm_launch l = detect(ompi);
    ck_assert_int_eq(l.kind, XM_LAUNCH_REFUSE);
    ck_assert_ptr_nonnull(strstr(l.why, "MPI_Init: process 1 of 4 started by Open MPI's "
                                        "mpirun (OMPI_COMM_WORLD_SIZE=4)"));
    const char *pmi[] = {"PMI_SIZE=3", "PMI_RANK=2", NULL};
    l = detect(pmi);
    ck_assert_int_eq(l.kind, XM_LAUNCH_REFUSE);
    ck_assert_ptr_nonnull(strstr(l.why, "MPI_Init: process 2 of 3 of a PMI launch "
                                        "(PMI_SIZE=3) has neither PMI_FD nor PMI_PORT"));
}
END_TEST

START_TEST(test_forced)
{
    const char *single[] = {"LOOM_MPI_PMI=singleton", "SLURM_STEP_NUM_TASKS=4",
                            "PMI_FD=3", NULL};
    struct xm_launch l = detect(single);
    ck_assert_int_eq(l.kind, XM_LAUNCH_SINGLETON);
    ck_assert_int_eq(l.forced, 1);
    const char *pmix[] = {"LOOM_MPI_PMI=pmix", "PMI_FD=3", "PMIX_NAMESPACE=n", NULL};
    ck_assert_int_eq(detect(pmix).kind, XM_LAUNCH_PMIX);
    const char *nopmix[] = {"LOOM_MPI_PMI=pmix", "PMI_FD=3", NULL};
    l = detect(nopmix);
    ck_assert_int_eq(l.kind, XM_LAUNCH_REFUSE);
    ck_assert_ptr_nonnull(strstr(l.why, "LOOM_MPI_PMI=pmix but neither PMIX_NAMESPACE"));
    const char *nopmi2[] = {"LOOM_MPI_PMI=pmi2", "PMIX_NAMESPACE=n", NULL};
    l = detect(nopmi2);
    ck_assert_int_eq(l.kind, XM_LAUNCH_REFUSE);
    ck_assert_ptr_nonnull(strstr(l.why, "LOOM_MPI_PMI=pmi2 but neither PMI_FD nor PMI_PORT"));
    const char *autom[] = {"LOOM_MPI_PMI=auto", NULL};
    ck_assert_int_eq(detect(autom).kind, XM_LAUNCH_SINGLETON);
    const char *bad[] = {"LOOM_MPI_PMI=pmi3", NULL};
    l = detect(bad);
    ck_assert_int_eq(l.kind, XM_LAUNCH_REFUSE);
    ck_assert_str_eq(l.why, "MPI_Init: LOOM_MPI_PMI=pmi3: expected auto, pmi2, pmix or "
                            "singleton");
}
END_TEST

START_TEST(test_escape)
{
    /* what the environment says is quoted escaped and cut */
    const char *env[] = {"SLURM_STEP_NUM_TASKS=2", "SLURM_STEP_ID=0",
                         "SLURM_PROCID=1\n\033[2Jx", NULL};
    struct xm_launch l = detect(env);
    ck_assert_ptr_nonnull(strstr(l.why, "task 1??[2Jx of"));
    char buf[80];
    char longv[200];
    memset(longv, 'a', sizeof(longv) - 1);
    longv[sizeof(longv) - 1] = 0;
    xm_launch_escape(buf, sizeof(buf), longv);
    ck_assert_int_eq(strlen(buf), 51);
    ck_assert_str_eq(buf + 48, "...");
    xm_launch_escape(buf, 4, longv);
    ck_assert_str_eq(buf, "aaa");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("mpi_launch");
    TCase *tc = tcase_create("detect");
    tcase_add_test(tc, test_pmi2_first);
    tcase_add_test(tc, test_pmix);
    tcase_add_test(tc, test_singleton);
    tcase_add_test(tc, test_refuse_slurm);
    tcase_add_test(tc, test_refuse_ompi_pmi);
    tcase_add_test(tc, test_forced);
    tcase_add_test(tc, test_escape);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
