/* check_pmixjob.c - pmixsrv_start (pmixsrv/pmixjob.c): the PMIx server's
 * configuration made from a host's plain job description, the one both the
 * Slurm plugin and mpiexec hand over.  pmixsrv_create is this file's own: it
 * records the configuration it is given, so every field is checked exactly
 * (namespace, directory prefix, node names with and without the host's list,
 * the process mapping, ids and levels) and the refusals (EINVAL,
 * ENAMETOOLONG) and a failing create's errno are seen as the host sees them.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pmixsrv.h"

/* ---- the recording pmixsrv_create ---------------------------------------- */

static struct {
    int calls;
    struct pmixsrv_config cfg;
    char nspace[256], jobid[256], tmpdir[1100], map[1200];
    char names[8][64];
    const int *local_ranks, *rank_node, *rank_appnum;
    struct psrv *srv;
    void *arg;
    int fail_errno; /* non-zero: return NULL with this errno */
} rec;

static struct pmixsrv *fake_px = (struct pmixsrv *)&rec;

struct pmixsrv *pmixsrv_create(const struct pmixsrv_config *cfg, struct psrv *srv,
                               const struct pmixsrv_ops *ops, void *arg)
{
    (void)ops;
    rec.calls++;
    rec.cfg = *cfg;
    snprintf(rec.nspace, sizeof(rec.nspace), "%s", cfg->nspace);
    snprintf(rec.jobid, sizeof(rec.jobid), "%s", cfg->jobid);
    snprintf(rec.tmpdir, sizeof(rec.tmpdir), "%s", cfg->tmpdir);
    snprintf(rec.map, sizeof(rec.map), "%s", cfg->anl_map ? cfg->anl_map : "(none)");
    for (int k = 0; k < cfg->nnodes && k < 8; k++)
        snprintf(rec.names[k], sizeof(rec.names[k]), "%s", cfg->node_names[k]);
    rec.srv = srv;
    rec.arg = arg;
    if (rec.fail_errno) {
        errno = rec.fail_errno;
        return NULL;
    }
    return fake_px;
}

/* ---- a job: 5 ranks on 3 nodes, this node 1 with ranks 2 and 3 ----------- */

static const int rank_node[5] = {0, 0, 1, 1, 2};
static const int rank_app[5] = {0, 0, 0, 1, 1};
static const int local[2] = {2, 3};

static struct psrv_config core(const char *jobid)
{
    struct psrv_config c = {
        .jobid = jobid,
        .size = 5,
        .nnodes = 3,
        .nodeid = 1,
        .local_count = 2,
        .local_ranks = local,
        .rank_node = rank_node,
        .rank_appnum = rank_app,
        .universe_size = 9,
        .log_level = PSRV_LOG_DEBUG,
    };
    return c;
}

static void reset(void)
{
    memset(&rec, 0, sizeof(rec));
}

START_TEST(test_fields)
{
    struct psrv_config c = core("42.7");
    const char *hosts[3] = {"alpha", "beta", "gamma"};
    struct pmixsrv_job job = {
        .core = &c,
        .node_names = hosts,
        .tmp_base = "/var/spool/slurmd",
        .node_cpus = 4,
        .uid = 1234,
        .gid = 567,
        .base_owner = 64030,
    };
    reset();
    ck_assert_ptr_eq(pmixsrv_start(&job, (struct psrv *)&c, NULL, &job), fake_px);
    ck_assert_int_eq(rec.calls, 1);
    ck_assert_str_eq(rec.nspace, "loom.42.7");
    ck_assert_str_eq(rec.jobid, "42.7");
    ck_assert_str_eq(rec.tmpdir, "/var/spool/slurmd/loom-pmix.42.7.1");
    ck_assert_int_eq(rec.cfg.size, 5);
    ck_assert_int_eq(rec.cfg.nnodes, 3);
    ck_assert_int_eq(rec.cfg.nodeid, 1);
    ck_assert_int_eq(rec.cfg.local_count, 2);
    ck_assert_ptr_eq(rec.cfg.local_ranks, local);
    ck_assert_ptr_eq(rec.cfg.rank_node, rank_node);
    ck_assert_ptr_eq(rec.cfg.rank_appnum, rank_app);
    ck_assert_int_eq(rec.cfg.universe_size, 9);
    ck_assert_int_eq(rec.cfg.node_cpus, 4);
    ck_assert_int_eq((int)rec.cfg.uid, 1234);
    ck_assert_int_eq((int)rec.cfg.gid, 567);
    ck_assert_int_eq((int)rec.cfg.base_owner, 64030);
    ck_assert_int_eq(rec.cfg.log_level, PSRV_LOG_DEBUG);
    ck_assert_str_eq(rec.names[0], "alpha");
    ck_assert_str_eq(rec.names[1], "beta");
    ck_assert_str_eq(rec.names[2], "gamma");
    ck_assert_ptr_eq(rec.srv, (struct psrv *)&c);
    ck_assert_ptr_eq(rec.arg, &job);
    /* the mapping is the core's own PMI_process_mapping */
    char want[256];
    ck_assert_int_ge(psrv_process_mapping(rank_node, 5, want, sizeof(want)), 0);
    ck_assert_str_eq(rec.map, want);
    ck_assert_str_eq(rec.map, "(vector,(0,2,2),(2,1,1))");
}
END_TEST

START_TEST(test_names_unknown)
{
    struct psrv_config c = core("9");
    struct pmixsrv_job job = {.core = &c, .host = "here", .tmp_base = "/tmp"};
    reset();
    ck_assert_ptr_eq(pmixsrv_start(&job, NULL, NULL, NULL), fake_px);
    ck_assert_str_eq(rec.names[0], "node0");
    ck_assert_str_eq(rec.names[1], "here");
    ck_assert_str_eq(rec.names[2], "node2");
    ck_assert_str_eq(rec.tmpdir, "/tmp/loom-pmix.9.1");

    /* no host: this machine's name */
    char me[256] = "";
    gethostname(me, sizeof(me) - 1);
    job.host = "";
    reset();
    ck_assert_ptr_eq(pmixsrv_start(&job, NULL, NULL, NULL), fake_px);
    ck_assert_str_eq(rec.names[1], me);
    ck_assert_str_eq(rec.names[0], "node0");
}
END_TEST

START_TEST(test_refused)
{
    struct psrv_config c = core("1");
    struct pmixsrv_job job = {.core = &c, .host = "h", .tmp_base = "/tmp"};

    reset();
    c.rank_node = NULL;
    errno = 0;
    ck_assert_ptr_null(pmixsrv_start(&job, NULL, NULL, NULL));
    ck_assert_int_eq(errno, EINVAL);
    c = core("1");
    c.nodeid = 3; /* outside nnodes */
    errno = 0;
    ck_assert_ptr_null(pmixsrv_start(&job, NULL, NULL, NULL));
    ck_assert_int_eq(errno, EINVAL);
    c = core("1");
    job.tmp_base = "";
    errno = 0;
    ck_assert_ptr_null(pmixsrv_start(&job, NULL, NULL, NULL));
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_ptr_null(pmixsrv_start(NULL, NULL, NULL, NULL));
    ck_assert_int_eq(rec.calls, 0);

    /* a name that would be cut: refused, never truncated into another job's */
    char longid[300];
    memset(longid, '7', sizeof(longid) - 1);
    longid[sizeof(longid) - 1] = '\0';
    c = core(longid);
    job.tmp_base = "/tmp";
    errno = 0;
    ck_assert_ptr_null(pmixsrv_start(&job, NULL, NULL, NULL));
    ck_assert_int_eq(errno, ENAMETOOLONG);
    char longbase[1100];
    memset(longbase, 'b', sizeof(longbase) - 1);
    longbase[0] = '/';
    longbase[sizeof(longbase) - 1] = '\0';
    c = core("1");
    job.tmp_base = longbase;
    errno = 0;
    ck_assert_ptr_null(pmixsrv_start(&job, NULL, NULL, NULL));
    ck_assert_int_eq(errno, ENAMETOOLONG);
    ck_assert_int_eq(rec.calls, 0);
}
END_TEST

START_TEST(test_create_fails)
{
    struct psrv_config c = core("5");
    struct pmixsrv_job job = {.core = &c, .host = "h", .tmp_base = "/tmp"};

    reset();
    rec.fail_errno = EPERM;
    errno = 0;
    ck_assert_ptr_null(pmixsrv_start(&job, NULL, NULL, NULL));
    ck_assert_int_eq(errno, EPERM);
    ck_assert_int_eq(rec.calls, 1);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("pmixjob");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_fields);
    tcase_add_test(tc, test_names_unknown);
    tcase_add_test(tc, test_refused);
    tcase_add_test(tc, test_create_fails);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
