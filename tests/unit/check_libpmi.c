/* check_libpmi.c - unit tests of libpmi.so.0 (PMI-1) and of the client-side
 * PMI_process_mapping parser.
 *
 * The library runs against a scripted fake server (clients_fake.h) over
 * PMI_FD, or over PMI_PORT with the PMI_ID initack handshake; tests assert
 * the exact lines sent and the handling of replies: not found, found=FALSE,
 * missing rc, info=ok|fail name-service answers, EOF, values the line
 * grammar cannot carry, cliques from block/cyclic/irregular mappings, abort
 * and singleton mode.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clients_fake.h"
#include "pcli.h"
#include "pmi.h"

static void clean_env(void)
{
    unsetenv("PMI_FD");
    unsetenv("PMI_PORT");
    unsetenv("PMI_ID");
    unsetenv("PMI_RANK");
    unsetenv("PMI_SIZE");
    unsetenv("PMI_SPAWNED");
    unsetenv("PMI2_DEBUG");
    unsetenv("PMI_DEBUG");
}

static void env_rank(int rank, int size)
{
    char b[16];
    snprintf(b, sizeof(b), "%d", rank);
    setenv("PMI_RANK", b, 1);
    snprintf(b, sizeof(b), "%d", size);
    setenv("PMI_SIZE", b, 1);
}

/* ---- the mapping parser ------------------------------------------------------ */

static void map_is(const char *map, int size, const int *want)
{
    int got[64];
    ck_assert_int_eq(loom_pmap_parse(map, size, got), 0);
    for (int i = 0; i < size; i++)
        ck_assert_msg(got[i] == want[i], "%s: rank %d on node %d, want %d", map, i,
                      got[i], want[i]);
}

START_TEST(map_block_cyclic_irregular)
{
    map_is("(vector,(0,2,4))", 8, (int[]){0, 0, 0, 0, 1, 1, 1, 1});
    map_is("(vector,(0,2,3),(2,1,2))", 8, (int[]){0, 0, 0, 1, 1, 1, 2, 2});
    /* Slurm's explicit cyclic and the legacy wrap-around form agree */
    map_is("(vector,(0,4,1),(0,4,1))", 8, (int[]){0, 1, 2, 3, 0, 1, 2, 3});
    map_is("(vector,(0,4,1))", 8, (int[]){0, 1, 2, 3, 0, 1, 2, 3});
    /* plane=2 over 4 nodes, 16 ranks */
    map_is("(vector,(0,4,2),(0,4,2))", 16,
           (int[]){0, 0, 1, 1, 2, 2, 3, 3, 0, 0, 1, 1, 2, 2, 3, 3});
    /* non-zero start, bare numbers, whitespace, hex */
    map_is("( vector , (1,2,1) , 0 , 0x3 )", 4, (int[]){1, 2, 0, 3});
    /* bracketed repeat */
    map_is("(vector,[(0,1,2),(1,1,1)]x2)", 6, (int[]){0, 0, 1, 0, 0, 1});
    /* longer than needed is fine */
    map_is("(vector,(0,8,8))", 3, (int[]){0, 0, 0});
}
END_TEST

START_TEST(map_malformed)
{
    int got[8];
    const char *bad[] = {"",
                         "vector,(0,1,1)",
                         "(vector)",
                         "(vectr,(0,1,1))",
                         "(vector,(0,1))",
                         "(vector,(0,1,1)",
                         "(vector,(0,1,1)) junk",
                         "(vector,(-1,1,1))",
                         "(vector,(1,2,1))", /* 4 ranks, 2 covered, no start-0 block */
                         "(vector,(0,2,0))", /* covers nothing */
                         "(vector,[(0,1,1)]y2)",
                         "unavailable"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(loom_pmap_parse(bad[i], 4, got) == -EINVAL, "accepted '%s'", bad[i]);
    ck_assert_int_eq(loom_pmap_parse(NULL, 4, got), -EINVAL);
}
END_TEST

/* ---- the library --------------------------------------------------------------- */

START_TEST(init_exact_bytes)
{
    clean_env();
    struct fake *f = fake_new();
    env_rank(1, 4);
    setenv("PMI_SPAWNED", "1", 1);
    fake_pmi1_init(f);
    fake_expect(f, "cmd=get_universe_size\n");
    fake_send(f, "cmd=universe_size rc=0 size=8\n");
    fake_expect(f, "cmd=get_appnum\n");
    fake_send(f, "cmd=appnum rc=0 appnum=0\n");
    fake_expect(f, "cmd=finalize\n");
    fake_send(f, "cmd=finalize_ack rc=0\n");
    fake_start(f);
    int spawned = -1, v;
    PMI_BOOL b = PMI_TRUE;
    ck_assert_int_eq(PMI_Initialized(&b), PMI_SUCCESS);
    ck_assert_int_eq(b, PMI_FALSE);
    ck_assert_int_eq(PMI_Init(&spawned), PMI_SUCCESS);
    ck_assert_int_eq(spawned, PMI_TRUE);
    ck_assert_int_eq(PMI_Initialized(&b), PMI_SUCCESS);
    ck_assert_int_eq(b, PMI_TRUE);
    ck_assert_int_eq(PMI_Get_rank(&v), PMI_SUCCESS);
    ck_assert_int_eq(v, 1);
    ck_assert_int_eq(PMI_Get_size(&v), PMI_SUCCESS);
    ck_assert_int_eq(v, 4);
    ck_assert_int_eq(PMI_KVS_Get_key_length_max(&v), PMI_SUCCESS);
    ck_assert_int_eq(v, 64);
    ck_assert_int_eq(PMI_KVS_Get_value_length_max(&v), PMI_SUCCESS);
    ck_assert_int_eq(v, 1024);
    ck_assert_int_eq(PMI_KVS_Get_name_length_max(&v), PMI_SUCCESS);
    ck_assert_int_eq(v, 256);
    ck_assert_int_eq(PMI_Get_universe_size(&v), PMI_SUCCESS);
    ck_assert_int_eq(v, 8);
    ck_assert_int_eq(PMI_Get_appnum(&v), PMI_SUCCESS);
    ck_assert_int_eq(v, 0);
    ck_assert_int_eq(PMI_Finalize(), PMI_SUCCESS);
    FAKE_JOIN_OK(f);
    fake_free(f);
}
END_TEST

/* The replies of Debian's mpiexec.hydra (MPICH 4.0.2), captured with
 * PMI_DEBUG=1: rc comes last, and maxes has none at all. */
START_TEST(hydra_402_replies)
{
    clean_env();
    struct fake *f = fake_new();
    env_rank(0, 2);
    fake_expect(f, "cmd=init pmi_version=1 pmi_subversion=1\n");
    fake_send(f, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n");
    fake_expect(f, "cmd=get_maxes\n");
    fake_send(f, "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024\n");
    fake_expect(f, "cmd=get_my_kvsname\n");
    fake_send(f, "cmd=my_kvsname kvsname=kvs_32247_0_889424840_vm\n");
    fake_start(f);
    int spawned, v;
    char kvs[256];
    ck_assert_int_eq(PMI_Init(&spawned), PMI_SUCCESS);
    ck_assert_int_eq(PMI_KVS_Get_value_length_max(&v), PMI_SUCCESS);
    ck_assert_int_eq(v, 1024);
    ck_assert_int_eq(PMI_KVS_Get_my_name(kvs, sizeof(kvs)), PMI_SUCCESS);
    ck_assert_str_eq(kvs, "kvs_32247_0_889424840_vm");
    FAKE_JOIN_OK(f);
    fake_free(f);
}
END_TEST

START_TEST(init_over_pmi_port_with_initack)
{
    clean_env();
    struct fake *f = fake_listen();
    setenv("PMI_ID", "5", 1);
    fake_expect(f, "cmd=initack pmiid=5\n");
    /* the four reply lines in one write */
    fake_send(f, "cmd=initack\ncmd=set size=3\ncmd=set rank=2\ncmd=set debug=0\n");
    fake_pmi1_init(f);
    fake_start(f);
    int spawned, v;
    ck_assert_int_eq(PMI_Init(&spawned), PMI_SUCCESS);
    ck_assert_int_eq(PMI_Get_rank(&v), PMI_SUCCESS);
    ck_assert_int_eq(v, 2);
    ck_assert_int_eq(PMI_Get_size(&v), PMI_SUCCESS);
    ck_assert_int_eq(v, 3);
    FAKE_JOIN_OK(f);
    fake_free(f);
}
END_TEST

START_TEST(init_refused_and_eof)
{
    clean_env();
    struct fake *f = fake_new();
    env_rank(0, 2);
    fake_expect(f, "cmd=init pmi_version=1 pmi_subversion=1\n");
    fake_send(f, "cmd=response_to_init rc=-1 pmi_version=2 pmi_subversion=0\n");
    fake_expect(f, "cmd=init pmi_version=1 pmi_subversion=1\n"); /* never: fd closed */
    fake_start(f);
    int spawned;
    ck_assert_int_eq(PMI_Init(&spawned), PMI_FAIL);
    PMI_BOOL b;
    PMI_Initialized(&b);
    ck_assert_int_eq(b, PMI_FALSE);
    const char *why;
    ck_assert_int_eq(fake_join(f, &why), 3); /* the client closed instead of retrying */
    fake_free(f);
}
END_TEST

START_TEST(kvs_put_barrier_get)
{
    clean_env();
    struct fake *f = fake_new();
    env_rank(0, 2);
    fake_pmi1_init(f);
    fake_expect(f, "cmd=get_my_kvsname\n");
    fake_send(f, "cmd=my_kvsname rc=0 kvsname=12.0\n");
    fake_expect(f, "cmd=put kvsname=12.0 key=-bcast-1-0 value=2f6465762f73686d\n");
    fake_send(f, "cmd=put_result rc=0\n");
    fake_expect(f, "cmd=barrier_in\n");
    fake_send(f, "cmd=barrier_out rc=0\n");
    fake_expect(f, "cmd=get kvsname=12.0 key=hostname[1]\n");
    fake_send(f, "cmd=get_result rc=0 value=node=a=b\n");
    fake_expect(f, "cmd=get kvsname=12.0 key=gone\n");
    fake_send(f, "cmd=get_result rc=1 msg=key_not_found\n");
    fake_expect(f, "cmd=get kvsname=12.0 key=gone\n");
    fake_send(f, "cmd=get_result rc=0 found=FALSE\n");
    fake_expect(f, "cmd=get kvsname=12.0 key=big\n");
    fake_send(f, "cmd=get_result rc=0 value=0123456789\n");
    fake_expect(f, "cmd=put kvsname=12.0 key=k value=v\n");
    fake_send(f, "cmd=put_result\n"); /* no rc: success, as MPICH >= 4.1 reads it */
    fake_expect(f, "cmd=put kvsname=12.0 key=k value=v\n");
    fake_send(f, "cmd=put_result rc=bad\n"); /* a malformed rc is an error */
    fake_start(f);
    int spawned;
    char kvs[64], v[32];
    ck_assert_int_eq(PMI_Init(&spawned), PMI_SUCCESS);
    ck_assert_int_eq(PMI_KVS_Get_my_name(kvs, sizeof(kvs)), PMI_SUCCESS);
    ck_assert_str_eq(kvs, "12.0");
    ck_assert_int_eq(PMI_KVS_Get_my_name(kvs, sizeof(kvs)), PMI_SUCCESS); /* cached */
    ck_assert_int_eq(PMI_KVS_Put(kvs, "-bcast-1-0", "2f6465762f73686d"), PMI_SUCCESS);
    ck_assert_int_eq(PMI_KVS_Commit(kvs), PMI_SUCCESS);
    ck_assert_int_eq(PMI_Barrier(), PMI_SUCCESS);
    ck_assert_int_eq(PMI_KVS_Get(kvs, "hostname[1]", v, sizeof(v)), PMI_SUCCESS);
    ck_assert_str_eq(v, "node=a=b");
    ck_assert_int_eq(PMI_KVS_Get(kvs, "gone", v, sizeof(v)), PMI_FAIL);
    ck_assert_int_eq(PMI_KVS_Get(kvs, "gone", v, sizeof(v)), PMI_FAIL);
    ck_assert_int_eq(PMI_KVS_Get(kvs, "big", v, 5), PMI_ERR_INVALID_VAL_LENGTH);
    ck_assert_str_eq(v, "0123");
    ck_assert_int_eq(PMI_KVS_Put(kvs, "k", "v"), PMI_SUCCESS);
    ck_assert_int_eq(PMI_KVS_Put(kvs, "k", "v"), PMI_FAIL);
    FAKE_JOIN_OK(f);
    fake_free(f);
}
END_TEST

START_TEST(put_refuses_what_the_line_cannot_carry)
{
    clean_env();
    struct fake *f = fake_new();
    char big[1100];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    env_rank(0, 1);
    fake_pmi1_init(f);
    fake_expect(f, "cmd=barrier_in\n"); /* nothing else may have been sent */
    fake_send(f, "cmd=barrier_out rc=0\n");
    fake_start(f);
    int spawned;
    ck_assert_int_eq(PMI_Init(&spawned), PMI_SUCCESS);
    ck_assert_int_eq(PMI_KVS_Put("k s", "a", "v"), PMI_ERR_INVALID_KVS);
    ck_assert_int_eq(PMI_KVS_Put("kvs", "a b", "v"), PMI_ERR_INVALID_KEY);
    ck_assert_int_eq(PMI_KVS_Put("kvs", "a=b", "v"), PMI_ERR_INVALID_KEY);
    ck_assert_int_eq(PMI_KVS_Put("kvs", "k", "has space"), PMI_ERR_INVALID_VAL);
    ck_assert_int_eq(PMI_KVS_Put("kvs", "k", "line\nbreak"), PMI_ERR_INVALID_VAL);
    ck_assert_int_eq(PMI_KVS_Put("kvs", "k", big), PMI_ERR_INVALID_VAL_LENGTH);
    ck_assert_int_eq(PMI_Barrier(), PMI_SUCCESS);
    FAKE_JOIN_OK(f);
    fake_free(f);
}
END_TEST

START_TEST(eof_and_bad_replies_are_errors)
{
    clean_env();
    struct fake *f = fake_new();
    env_rank(0, 2);
    fake_pmi1_init(f);
    fake_expect(f, "cmd=barrier_in\n");
    fake_send(f, "cmd=barrier_out rc=\n"); /* empty rc */
    fake_expect(f, "cmd=barrier_in\n");
    fake_send(f, "cmd=put_result rc=0\n"); /* another command */
    fake_expect(f, "cmd=barrier_in\n");
    fake_send(f, "cmd=barrier_out rc=0 msg=half a li"); /* then EOF */
    fake_hangup(f);
    fake_start(f);
    int spawned;
    ck_assert_int_eq(PMI_Init(&spawned), PMI_SUCCESS);
    ck_assert_int_eq(PMI_Barrier(), PMI_FAIL);
    ck_assert_int_eq(PMI_Barrier(), PMI_FAIL);
    ck_assert_int_eq(PMI_Barrier(), PMI_FAIL);
    ck_assert_int_eq(PMI_Barrier(), PMI_FAIL); /* gone: fails at once, no SIGPIPE */
    FAKE_JOIN_OK(f);
    fake_free(f);
}
END_TEST

START_TEST(pmi2_record_on_pmi1_is_error)
{
    clean_env();
    struct fake *f = fake_new();
    env_rank(0, 2);
    fake_pmi1_init(f);
    fake_expect(f, "cmd=barrier_in\n");
    fake_send(f, "27    cmd=barrier_out;rc=0;"); /* a PMI-2 record on a PMI-1 line */
    fake_start(f);
    int spawned;
    ck_assert_int_eq(PMI_Init(&spawned), PMI_SUCCESS);
    ck_assert_int_eq(PMI_Barrier(), PMI_FAIL);
    FAKE_JOIN_OK(f);
    fake_free(f);
}
END_TEST

START_TEST(name_service_rc_or_info)
{
    clean_env();
    struct fake *f = fake_new();
    env_rank(0, 1);
    fake_pmi1_init(f);
    fake_expect(f, "cmd=publish_name service=svc port=tcp://h:1\n");
    fake_send(f, "cmd=publish_result info=ok\n"); /* Slurm's answer */
    fake_expect(f, "cmd=lookup_name service=svc\n");
    fake_send(f, "cmd=lookup_result rc=0 info=ok port=tcp://h:1\n");
    fake_expect(f, "cmd=lookup_name service=nope\n");
    fake_send(f, "cmd=lookup_result info=fail\n");
    fake_expect(f, "cmd=unpublish_name service=svc\n");
    fake_send(f, "cmd=unpublish_result rc=1 msg=unknown\n");
    fake_start(f);
    int spawned;
    char port[256];
    ck_assert_int_eq(PMI_Init(&spawned), PMI_SUCCESS);
    ck_assert_int_eq(PMI_Publish_name("svc", "tcp://h:1"), PMI_SUCCESS);
    ck_assert_int_eq(PMI_Lookup_name("svc", port), PMI_SUCCESS);
    ck_assert_str_eq(port, "tcp://h:1");
    ck_assert_int_eq(PMI_Lookup_name("nope", port), PMI_FAIL);
    ck_assert_int_eq(PMI_Unpublish_name("svc"), PMI_FAIL);
    FAKE_JOIN_OK(f);
    fake_free(f);
}
END_TEST

/* Clique of `rank` of `size` when the server answers PMI_process_mapping
 * with `reply` (a whole get_result line). */
static void clique_case(int rank, int size, const char *reply, int n, const int *want)
{
    clean_env();
    struct fake *f = fake_new();
    env_rank(rank, size);
    fake_pmi1_init(f);
    fake_expect(f, "cmd=get_my_kvsname\n");
    fake_send(f, "cmd=my_kvsname rc=0 kvsname=3.0\n");
    fake_expect(f, "cmd=get kvsname=3.0 key=PMI_process_mapping\n");
    fake_send(f, reply);
    fake_start(f);
    int spawned, sz = -1, ranks[16];
    ck_assert_int_eq(PMI_Init(&spawned), PMI_SUCCESS);
    ck_assert_int_eq(PMI_Get_clique_size(&sz), PMI_SUCCESS);
    ck_assert_int_eq(sz, n);
    ck_assert_int_eq(PMI_Get_clique_ranks(ranks, n - 1), PMI_ERR_INVALID_LENGTH);
    ck_assert_int_eq(PMI_Get_clique_ranks(ranks, 16), PMI_SUCCESS);
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(ranks[i], want[i]);
    FAKE_JOIN_OK(f);
    fake_free(f);
}

START_TEST(clique_block)
{
    clique_case(3, 4, "cmd=get_result rc=0 value=(vector,(0,2,2))\n", 2, (int[]){2, 3});
}
END_TEST

START_TEST(clique_cyclic_wraparound)
{
    clique_case(1, 6, "cmd=get_result rc=0 value=(vector,(0,3,1))\n", 2, (int[]){1, 4});
}
END_TEST

START_TEST(clique_irregular)
{
    clique_case(6, 8, "cmd=get_result rc=0 value=(vector,(0,2,3),(2,1,2))\n", 2,
                (int[]){6, 7});
}
END_TEST

START_TEST(clique_unknown_is_self)
{
    clique_case(2, 4, "cmd=get_result rc=1 msg=key_not_found\n", 1, (int[]){2});
}
END_TEST

START_TEST(clique_garbage_is_self)
{
    clique_case(1, 4, "cmd=get_result rc=0 value=unavailable\n", 1, (int[]){1});
}
END_TEST

START_TEST(iterate_and_create)
{
    clean_env();
    struct fake *f = fake_new();
    env_rank(0, 1);
    fake_pmi1_init(f);
    fake_expect(f, "cmd=getbyidx kvsname=3.0 idx=0\n");
    fake_send(f, "cmd=getbyidx_results rc=0 nextidx=1 key=a val=1\n");
    fake_expect(f, "cmd=getbyidx kvsname=3.0 idx=1\n");
    fake_send(f, "cmd=getbyidx_results rc=-1 reason=no_more_keyvals\n");
    fake_expect(f, "cmd=create_kvs\n");
    fake_send(f, "cmd=newkvs kvsname=kvs_7\n"); /* no rc, as MPICH's spec */
    fake_expect(f, "cmd=destroy_kvs kvsname=kvs_7\n");
    fake_send(f, "cmd=kvs_destroyed rc=0\n");
    fake_start(f);
    int spawned;
    char k[16], v[16];
    ck_assert_int_eq(PMI_Init(&spawned), PMI_SUCCESS);
    ck_assert_int_eq(PMI_KVS_Iter_first("3.0", k, sizeof(k), v, sizeof(v)), PMI_SUCCESS);
    ck_assert_str_eq(k, "a");
    ck_assert_str_eq(v, "1");
    ck_assert_int_eq(PMI_KVS_Iter_next("3.0", k, sizeof(k), v, sizeof(v)), PMI_SUCCESS);
    ck_assert_str_eq(k, ""); /* end */
    ck_assert_int_eq(PMI_KVS_Create(k, sizeof(k)), PMI_SUCCESS);
    ck_assert_str_eq(k, "kvs_7");
    ck_assert_int_eq(PMI_KVS_Destroy(k), PMI_SUCCESS);
    FAKE_JOIN_OK(f);
    fake_free(f);
}
END_TEST

START_TEST(spawn_block_and_error)
{
    clean_env();
    struct fake *f = fake_new();
    env_rank(0, 1);
    fake_pmi1_init(f);
    fake_expect(f,
                "mcmd=spawn\nnprocs=2\nexecname=./w\ntotspawns=1\nspawnssofar=1\n"
                "arg1=-v\narg2=a b\nargcnt=2\npreput_num=1\npreput_key_0=pk\n"
                "preput_val_0=pv\ninfo_num=1\ninfo_key_0=wdir\ninfo_val_0=/t\nendcmd\n");
    fake_send(f, "cmd=spawn_result rc=1 msg=spawn_not_supported\n");
    fake_start(f);
    int spawned, errors[2];
    ck_assert_int_eq(PMI_Init(&spawned), PMI_SUCCESS);
    const char *cmds[] = {"./w"};
    const char *a0[] = {"-v", "a b", NULL};
    const char **argvs[] = {a0};
    int maxprocs[] = {2}, infosz[] = {1};
    PMI_keyval_t info = {"wdir", "/t"}, pp = {"pk", "pv"};
    const PMI_keyval_t *infos[] = {&info};
    ck_assert_int_eq(
        PMI_Spawn_multiple(1, cmds, argvs, maxprocs, infosz, infos, 1, &pp, errors),
        PMI_FAIL);
    FAKE_JOIN_OK(f);
    fake_free(f);
}
END_TEST

START_TEST(abort_sends_then_exits)
{
    clean_env();
    struct fake *f = fake_new();
    env_rank(0, 2);
    fake_pmi1_init(f);
    fake_expect(f, "cmd=abort exitcode=3 message=bad_thing\n");
    fake_start(f);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int s;
        if (PMI_Init(&s) != PMI_SUCCESS)
            _exit(99);
        PMI_Abort(3, "bad thing");
        _exit(98);
    }
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert(WIFEXITED(st));
    ck_assert_int_eq(WEXITSTATUS(st), 3);
    FAKE_JOIN_OK(f);
    fake_free(f);
}
END_TEST

START_TEST(singleton_mode)
{
    clean_env();
    int spawned = -1, v;
    char kvs[64], val[32];
    ck_assert_int_eq(PMI_Init(&spawned), PMI_SUCCESS);
    ck_assert_int_eq(spawned, PMI_FALSE);
    ck_assert_int_eq(PMI_Get_rank(&v), PMI_SUCCESS);
    ck_assert_int_eq(v, 0);
    ck_assert_int_eq(PMI_Get_size(&v), PMI_SUCCESS);
    ck_assert_int_eq(v, 1);
    ck_assert_int_eq(PMI_Get_appnum(&v), PMI_SUCCESS);
    ck_assert_int_eq(v, -1);
    ck_assert_int_eq(PMI_Get_universe_size(&v), PMI_SUCCESS);
    ck_assert_int_eq(v, 1);
    ck_assert_int_eq(PMI_KVS_Get_my_name(kvs, sizeof(kvs)), PMI_SUCCESS);
    ck_assert_int_eq(PMI_KVS_Put(kvs, "k", "v1"), PMI_SUCCESS);
    ck_assert_int_eq(PMI_Barrier(), PMI_SUCCESS);
    ck_assert_int_eq(PMI_KVS_Get(kvs, "k", val, sizeof(val)), PMI_SUCCESS);
    ck_assert_str_eq(val, "v1");
    ck_assert_int_eq(PMI_KVS_Get(kvs, "nokey", val, sizeof(val)), PMI_FAIL);
    ck_assert_int_eq(PMI_Get_clique_size(&v), PMI_SUCCESS);
    ck_assert_int_eq(v, 1);
    ck_assert_int_eq(PMI_Get_clique_ranks(&v, 1), PMI_SUCCESS);
    ck_assert_int_eq(v, 0);
    ck_assert_int_eq(PMI_Finalize(), PMI_SUCCESS);
    ck_assert_int_eq(PMI_Barrier(), PMI_ERR_INIT);
}
END_TEST

START_TEST(launcher_helper_stubs)
{
    int n = -1, size = -1, len = 8;
    PMI_keyval_t *kv = (PMI_keyval_t *)1;
    char *args[] = {"-foo", NULL}, str[8] = "x";
    ck_assert_int_eq(PMI_Parse_option(1, args, &n, &kv, &size), PMI_SUCCESS);
    ck_assert_int_eq(n, 0);
    ck_assert_ptr_null(kv);
    ck_assert_int_eq(size, 0);
    ck_assert_int_eq(PMI_Free_keyvals(NULL, 0), PMI_SUCCESS);
    ck_assert_int_eq(PMI_Free_keyvals(NULL, 1), PMI_ERR_INVALID_ARG);
    ck_assert_int_eq(PMI_Get_options(str, &len), PMI_SUCCESS);
    ck_assert_str_eq(str, "");
    ck_assert_int_eq(len, 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("libpmi");
    TCase *t = tcase_create("mapping");
    tcase_set_timeout(t, 10);
    tcase_add_test(t, map_block_cyclic_irregular);
    tcase_add_test(t, map_malformed);
    suite_add_tcase(s, t);

    t = tcase_create("wire");
    tcase_set_timeout(t, 20);
    tcase_add_test(t, init_exact_bytes);
    tcase_add_test(t, hydra_402_replies);
    tcase_add_test(t, init_over_pmi_port_with_initack);
    tcase_add_test(t, init_refused_and_eof);
    tcase_add_test(t, kvs_put_barrier_get);
    tcase_add_test(t, put_refuses_what_the_line_cannot_carry);
    tcase_add_test(t, eof_and_bad_replies_are_errors);
    tcase_add_test(t, pmi2_record_on_pmi1_is_error);
    tcase_add_test(t, name_service_rc_or_info);
    tcase_add_test(t, clique_block);
    tcase_add_test(t, clique_cyclic_wraparound);
    tcase_add_test(t, clique_irregular);
    tcase_add_test(t, clique_unknown_is_self);
    tcase_add_test(t, clique_garbage_is_self);
    tcase_add_test(t, iterate_and_create);
    tcase_add_test(t, spawn_block_and_error);
    tcase_add_test(t, abort_sends_then_exits);
    tcase_add_test(t, singleton_mode);
    tcase_add_test(t, launcher_helper_stubs);
    suite_add_tcase(s, t);
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
