/* check_spawnmsg.c - unit tests for launcher/spawnmsg.c: a spawn request packed by a
 * proxy and read back by mpiexec's front end, which runs what it says.
 *
 * Covers: a two-command request with arguments, info and preput pairs survives the
 * round trip (total recomputed); every count past the server core's bounds
 * (commands, processes, arguments, info, preput), a total of 0, a string past
 * PSRV_SPAWN_MAX_STR, a frame cut anywhere and trailing bytes are -EPROTO, and the
 * message frees what it read in every case.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../launcher/spawn.h" /* not pmiserv/spawn.h */
#include "pack.h"

static const char *const av0[] = {"-x", "y", NULL};
static const struct psrv_kv info0[] = {{"host", "a,b"}, {"wdir", "/tmp"}};
static const struct psrv_kv pp[] = {{"PARENT_ROOT_PORT_NAME", "tag#0$x$"}};

static void sample(struct psrv_spawn *req, struct psrv_spawn_cmd cmds[2])
{
    memset(cmds, 0, 2 * sizeof(cmds[0]));
    cmds[0] = (struct psrv_spawn_cmd){
        .cmd = "prog", .maxprocs = 3, .argc = 2, .argv = av0, .ninfo = 2, .info = info0};
    cmds[1] = (struct psrv_spawn_cmd){
        .cmd = "other", .maxprocs = 0, .argc = 0, .argv = av0 + 2};
    *req = (struct psrv_spawn){
        .rank = 5, .ncmds = 2, .cmds = cmds, .npreput = 1, .preput = pp, .total = 3};
}

static int unpack_all(const struct pack *pk, size_t len, struct mpx_spawn_msg *m)
{
    struct unpack u;
    unpack_init(&u, pk->buf, len);
    return mpx_spawn_unpack(&u, m);
}

START_TEST(round_trip)
{
    struct psrv_spawn req;
    struct psrv_spawn_cmd cmds[2];
    struct pack pk;
    struct mpx_spawn_msg m;

    sample(&req, cmds);
    pack_init(&pk);
    ck_assert_int_eq(mpx_spawn_pack(&pk, &req), 0);
    ck_assert_int_eq(unpack_all(&pk, pk.len, &m), 0);
    ck_assert_int_eq(m.req.rank, 5);
    ck_assert_int_eq(m.req.ncmds, 2);
    ck_assert_int_eq(m.req.total, 3);
    ck_assert_str_eq(m.req.cmds[0].cmd, "prog");
    ck_assert_int_eq(m.req.cmds[0].argc, 2);
    ck_assert_str_eq(m.req.cmds[0].argv[0], "-x");
    ck_assert_str_eq(m.req.cmds[0].argv[1], "y");
    ck_assert_ptr_null(m.req.cmds[0].argv[2]);
    ck_assert_int_eq(m.req.cmds[0].ninfo, 2);
    ck_assert_str_eq(m.req.cmds[0].info[0].key, "host");
    ck_assert_str_eq(m.req.cmds[0].info[0].val, "a,b");
    ck_assert_str_eq(m.req.cmds[1].cmd, "other");
    ck_assert_int_eq(m.req.cmds[1].maxprocs, 0);
    ck_assert_int_eq(m.req.npreput, 1);
    ck_assert_str_eq(m.req.preput[0].key, "PARENT_ROOT_PORT_NAME");
    ck_assert_str_eq(m.req.preput[0].val, "tag#0$x$");
    mpx_spawn_msg_free(&m);
    pack_free(&pk);
}
END_TEST

/* every prefix of a good frame is refused, and so is one byte more */
START_TEST(truncated_and_trailing)
{
    struct psrv_spawn req;
    struct psrv_spawn_cmd cmds[2];
    struct pack pk;
    struct mpx_spawn_msg m;

    sample(&req, cmds);
    pack_init(&pk);
    ck_assert_int_eq(mpx_spawn_pack(&pk, &req), 0);
    for (size_t n = 0; n < pk.len; n++) {
        ck_assert_int_eq(unpack_all(&pk, n, &m), -EPROTO);
        mpx_spawn_msg_free(&m);
    }
    pack_u8(&pk, 0);
    ck_assert_int_eq(unpack_all(&pk, pk.len, &m), -EPROTO);
    mpx_spawn_msg_free(&m);
    pack_free(&pk);
}
END_TEST

/* one command: ncmds, maxprocs, argc (args "a"), ninfo, npreput as given */
static int one(int ncmds, int maxprocs, int argc, int ninfo, int npreput, size_t slen)
{
    struct pack pk;
    struct mpx_spawn_msg m;
    char *big = malloc(slen + 1);

    ck_assert_ptr_nonnull(big);
    memset(big, 'p', slen);
    big[slen] = '\0';
    pack_init(&pk);
    pack_i32(&pk, 0);
    pack_i32(&pk, ncmds);
    pack_str(&pk, big);
    pack_i32(&pk, maxprocs);
    pack_i32(&pk, argc);
    for (int k = 0; k < argc && k < 1000; k++)
        pack_str(&pk, "a");
    pack_i32(&pk, ninfo);
    for (int k = 0; k < ninfo && k < 1000; k++) {
        pack_str(&pk, "k");
        pack_str(&pk, "v");
    }
    pack_i32(&pk, npreput);
    for (int k = 0; k < npreput && k < 1000; k++) {
        pack_str(&pk, "k");
        pack_str(&pk, "v");
    }
    int rc = unpack_all(&pk, pk.len, &m);
    mpx_spawn_msg_free(&m);
    ck_assert_int_eq(m.nstrs, 0);
    pack_free(&pk);
    free(big);
    return rc;
}

START_TEST(bounds)
{
    ck_assert_int_eq(one(1, 1, 0, 0, 0, 4), 0);
    ck_assert_int_eq(one(1, PSRV_SPAWN_MAX_PROCS, PSRV_SPAWN_MAX_ARGS,
                         PSRV_SPAWN_MAX_INFO, PSRV_SPAWN_MAX_PREPUT, PSRV_SPAWN_MAX_STR),
                     0);
    ck_assert_int_eq(one(0, 1, 0, 0, 0, 4), -EPROTO); /* no command */
    ck_assert_int_eq(one(PSRV_SPAWN_MAX_CMDS + 1, 1, 0, 0, 0, 4), -EPROTO);
    ck_assert_int_eq(one(1, 0, 0, 0, 0, 4), -EPROTO); /* total 0 */
    ck_assert_int_eq(one(1, -1, 0, 0, 0, 4), -EPROTO);
    ck_assert_int_eq(one(1, PSRV_SPAWN_MAX_PROCS + 1, 0, 0, 0, 4), -EPROTO);
    ck_assert_int_eq(one(1, 1, PSRV_SPAWN_MAX_ARGS + 1, 0, 0, 4), -EPROTO);
    ck_assert_int_eq(one(1, 1, -1, 0, 0, 4), -EPROTO);
    ck_assert_int_eq(one(1, 1, 0, PSRV_SPAWN_MAX_INFO + 1, 0, 4), -EPROTO);
    ck_assert_int_eq(one(1, 1, 0, 0, PSRV_SPAWN_MAX_PREPUT + 1, 4), -EPROTO);
    ck_assert_int_eq(one(1, 1, 0, 0, 0, PSRV_SPAWN_MAX_STR + 1), -EPROTO);
    ck_assert_int_eq(one(1, 1, 1 << 30, 0, 0, 4), -EPROTO);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("spawnmsg");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, round_trip);
    tcase_add_test(tc, truncated_and_trailing);
    tcase_add_test(tc, bounds);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
