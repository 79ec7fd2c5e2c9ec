/* check_pmi_wire.c - unit tests of the PMI-1/PMI-2 wire codec (common/pmi_wire).
 *
 * Feeds captured client traffic (fixtures/, see its README) and hand-made
 * malformed input through pmi_frame_next and the parsers, and checks that
 * the builder's output parses back to what was built.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmi_wire.h"

#ifndef WIRE_FIXTURES
#define WIRE_FIXTURES "fixtures"
#endif

/* ---- helpers ---------------------------------------------------------- */

static char *read_fixture(const char *name, size_t *len)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", WIRE_FIXTURES, name);
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    char *buf = malloc(1 << 20);
    ck_assert_ptr_nonnull(buf);
    *len = fread(buf, 1, (1 << 20) - 1, f);
    buf[*len] = '\0'; /* for strstr in the tests; not part of the data */
    fclose(f);
    ck_assert_uint_gt(*len, 0);
    return buf;
}

/* What a server does with one connection's byte stream. */
struct replay {
    enum pmi_version v;
    int nmsg;
    char cmds[64][32];
    char *put_value; /* value of the first kvs-put / put seen */
    size_t consumed;
};

/* Frame and parse everything complete in buf[0..len); returns bytes used. */
static size_t replay_feed(struct replay *r, const char *buf, size_t len)
{
    size_t off = 0;
    for (;;) {
        size_t flen, blen;
        const char *body;
        int rc = pmi_frame_next(r->v, buf + off, len - off, &flen, &body, &blen);
        ck_assert_int_ge(rc, 0);
        if (rc == 0)
            return off;
        ck_assert(body == buf + off || body == buf + off + PMI_WIRE_LENFIELD);
        ck_assert_uint_le(flen, len - off);
        struct pmi_msg m;
        rc = r->v == PMI_V2 ? pmi_msg_parse_v2(&m, body, blen)
                            : pmi_msg_parse_v1(&m, body, blen);
        ck_assert_msg(rc == 0, "parse failed (%d) on message %d", rc, r->nmsg);
        const char *cmd = pmi_msg_cmd(&m);
        ck_assert_int_lt(r->nmsg, 64);
        snprintf(r->cmds[r->nmsg++], sizeof(r->cmds[0]), "%s", cmd);
        if (strcmp(cmd, "init") == 0) {
            int ver;
            ck_assert_int_eq(pmi_msg_get_int(&m, "pmi_version", &ver), 0);
            r->v = ver == 2 ? PMI_V2 : PMI_V1;
        }
        if (!r->put_value && (strcmp(cmd, "put") == 0 || strcmp(cmd, "kvs-put") == 0)) {
            const char *val = pmi_msg_get(&m, "value");
            ck_assert_ptr_nonnull(val);
            r->put_value = strdup(val);
        }
        pmi_msg_free(&m);
        off += flen;
    }
}

/* Replay a stream delivered in chunks of the given sizes (cycled). */
static void replay_chunks(struct replay *r, const char *data, size_t len,
                          const size_t *chunks, int nchunks)
{
    char *buf = malloc(len + 1);
    size_t have = 0, got = 0;
    int ci = 0;
    memset(r, 0, sizeof(*r));
    while (got < len) {
        size_t c = chunks[ci++ % nchunks];
        if (c > len - got)
            c = len - got;
        memcpy(buf + have, data + got, c);
        have += c;
        got += c;
        size_t used = replay_feed(r, buf, have);
        memmove(buf, buf + used, have - used);
        have -= used;
        r->consumed += used;
    }
    ck_assert_uint_eq(have, 0);
    ck_assert_uint_eq(r->consumed, len);
    free(buf);
}

static void check_cmds(const struct replay *r, const char *const *want, int n)
{
    ck_assert_int_eq(r->nmsg, n);
    for (int i = 0; i < n; i++)
        ck_assert_str_eq(r->cmds[i], want[i]);
}

/* ---- captured traffic ----------------------------------------------- */

static const char *const mpich_rank0[] = {
    "init",    "get_maxes",  "get_appnum", "get_my_kvsname", "get", "barrier_in",
    "put",     "barrier_in", "put",        "barrier_in",     "get", "barrier_in",
    "finalize"};

static const char *const slurm_cmds[] = {
    "init",      "fullinit", "job-getid",        "info-getjobattr",  "kvs-put",
    "kvs-fence", "kvs-get",  "info-putnodeattr", "info-getnodeattr", "finalize"};

static const size_t whole[] = {1 << 20};
static const size_t bytewise[] = {1};
static const size_t odd[] = {7, 1, 13, 2, 64, 3, 5, 100};

START_TEST(mpich_pmi1_capture)
{
    size_t len;
    char *data = read_fixture("mpich-4.0.2-pmi1-rank0.in", &len);
    struct replay r;
    const size_t *plans[] = {whole, bytewise, odd};
    const int nplan[] = {1, 1, 8};
    for (int p = 0; p < 3; p++) {
        replay_chunks(&r, data, len, plans[p], nplan[p]);
        check_cmds(&r, mpich_rank0, 13);
        ck_assert_int_eq(r.v, PMI_V1);
        /* "/dev/shm/mpich_shar_tmp..." hex encoded: kept whole, no spaces */
        ck_assert_uint_eq(strncmp(r.put_value, "2F6465762F73686D2F", 18), 0);
        free(r.put_value);
    }
    free(data);

    data = read_fixture("mpich-4.0.2-pmi1-rank1.in", &len);
    replay_chunks(&r, data, len, odd, 8);
    ck_assert_int_eq(r.nmsg, 13);
    ck_assert_str_eq(r.cmds[7], "get");
    free(r.put_value);
    free(data);
}
END_TEST

START_TEST(mpich_pmi1_capture_long_value)
{
    /* the -allgather-shm put carries a long hex value: check it intact */
    size_t len;
    char *data = read_fixture("mpich-4.0.2-pmi1-rank0.in", &len);
    const char *line = strstr(data, "cmd=put kvsname=kvs_1 key=-allgather-shm-1-0 ");
    ck_assert_ptr_nonnull(line);
    const char *nl = memchr(line, '\n', len - (size_t)(line - data));
    ck_assert_ptr_nonnull(nl);
    struct pmi_msg m;
    ck_assert_int_eq(pmi_msg_parse_v1(&m, line, (size_t)(nl - line) + 1), 0);
    ck_assert_int_eq(m.n, 4);
    ck_assert_str_eq(m.kv[2].key, "key");
    ck_assert_str_eq(m.kv[2].val, "-allgather-shm-1-0");
    const char *val = pmi_msg_get(&m, "value");
    const char *vstart = strstr(line, "value=") + 6;
    ck_assert_uint_eq(strlen(val), (size_t)(nl - vstart));
    ck_assert_uint_gt(strlen(val), 400);
    pmi_msg_free(&m);
    free(data);
}
END_TEST

START_TEST(mpich_pmi1_capture_nomap)
{
    size_t len;
    char *data = read_fixture("mpich-4.0.2-pmi1-nomap-rank2.in", &len);
    struct replay r;
    replay_chunks(&r, data, len, bytewise, 1);
    ck_assert_int_eq(r.nmsg, 18);
    ck_assert_str_eq(r.put_value, "vm"); /* hostname[2] of the capture machine */
    free(r.put_value);
    /* keys with '[' and ']' survive */
    ck_assert_ptr_nonnull(strstr(data, "key=hostname[0]"));
    struct pmi_msg m;
    const char *l = "cmd=get kvsname=kvs_1 key=hostname[0]\n";
    ck_assert_int_eq(pmi_msg_parse_v1(&m, l, strlen(l)), 0);
    ck_assert_str_eq(pmi_msg_get(&m, "key"), "hostname[0]");
    pmi_msg_free(&m);
    free(data);
}
END_TEST

START_TEST(slurm_libpmi2_capture)
{
    const size_t *plans[] = {whole, bytewise, odd};
    const int nplan[] = {1, 1, 8};
    size_t len;
    struct replay r;
    char *data = read_fixture("slurm-22.05.8-libpmi2-rank0.in", &len);
    for (int p = 0; p < 3; p++) {
        replay_chunks(&r, data, len, plans[p], nplan[p]);
        check_cmds(&r, slurm_cmds, 10);
        ck_assert_int_eq(r.v, PMI_V2);
        ck_assert_str_eq(r.put_value, "a;b=c d");
        free(r.put_value);
    }
    free(data);

    data = read_fixture("slurm-22.05.8-libpmi2-rank1.in", &len);
    replay_chunks(&r, data, len, odd, 8);
    check_cmds(&r, slurm_cmds, 10);
    ck_assert_str_eq(r.put_value, "x;;y;");
    free(r.put_value);
    free(data);

    data = read_fixture("slurm-22.05.8-libpmi2-jobid-rank0.in", &len);
    replay_chunks(&r, data, len, whole, 1);
    check_cmds(&r, slurm_cmds, 10);
    free(r.put_value);
    /* fullinit with pmijobid, as sent */
    const char *fi = strstr(data, "cmd=fullinit;");
    struct pmi_msg m;
    ck_assert_int_eq(pmi_msg_parse_v2(&m, fi, 51), 0);
    ck_assert_str_eq(pmi_msg_get(&m, "pmijobid"), "7.0");
    int rank;
    bool thr = true;
    ck_assert_int_eq(pmi_msg_get_int(&m, "pmirank", &rank), 0);
    ck_assert_int_eq(rank, 0);
    ck_assert_int_eq(pmi_msg_get_bool(&m, "threaded", &thr), 0);
    ck_assert(!thr);
    pmi_msg_free(&m);
    free(data);
}
END_TEST

/* ---- PMI-1 parsing -------------------------------------------------- */

static int p1(struct pmi_msg *m, const char *s)
{
    return pmi_msg_parse_v1(m, s, strlen(s));
}

START_TEST(v1_parse_basic)
{
    struct pmi_msg m;
    ck_assert_int_eq(p1(&m, "cmd=put kvsname=kvs_1 key=-allgather-shm-1-3 value=0A1B\n"),
                     0);
    ck_assert_int_eq(m.n, 4);
    ck_assert_str_eq(pmi_msg_cmd(&m), "put");
    ck_assert_str_eq(m.kv[1].key, "kvsname");
    ck_assert_str_eq(pmi_msg_get(&m, "key"), "-allgather-shm-1-3");
    ck_assert_str_eq(pmi_msg_get(&m, "value"), "0A1B");
    ck_assert_ptr_null(pmi_msg_get(&m, "nope"));
    pmi_msg_free(&m);

    /* without '\n', repeated / leading / trailing spaces, '=' in a value,
     * empty value */
    ck_assert_int_eq(p1(&m, "  cmd=get_result   rc=0 value=a=b=c  empty= "), 0);
    ck_assert_int_eq(m.n, 4);
    ck_assert_str_eq(pmi_msg_get(&m, "value"), "a=b=c");
    ck_assert_str_eq(pmi_msg_get(&m, "empty"), "");
    pmi_msg_free(&m);

    ck_assert_int_eq(p1(&m, "cmd=barrier_in"), 0);
    ck_assert_int_eq(m.n, 1);
    ck_assert_str_eq(pmi_msg_cmd(&m), "barrier_in");
    pmi_msg_free(&m);
}
END_TEST

START_TEST(v1_parse_malformed)
{
    struct pmi_msg m;
    ck_assert_int_eq(p1(&m, "cmd=put key value=x\n"), -EPROTO); /* no '=' */
    ck_assert_int_eq(m.n, 0);
    pmi_msg_free(&m);                                     /* safe after failure */
    ck_assert_int_eq(p1(&m, "cmd=put =x\n"), -EPROTO);    /* empty key */
    ck_assert_int_eq(p1(&m, "key=x cmd=put\n"), -EPROTO); /* cmd not first */
    ck_assert_int_eq(p1(&m, "\n"), -EPROTO);              /* empty */
    ck_assert_int_eq(p1(&m, ""), -EPROTO);
    ck_assert_int_eq(p1(&m, "   \n"), -EPROTO);
    ck_assert_int_eq(p1(&m, "cmd=get\nkey=x\n"), -EPROTO); /* two lines */
    ck_assert_int_eq(p1(&m, "garbage"), -EPROTO);
    const char nul[] = "cmd=put key=a\0b value=c\n";
    ck_assert_int_eq(pmi_msg_parse_v1(&m, nul, sizeof(nul) - 1), -EPROTO);

    size_t big = PMI_WIRE_MAX_LINE + 10;
    char *s = malloc(big);
    memset(s, 'x', big);
    memcpy(s, "cmd=put value=", 14);
    ck_assert_int_eq(pmi_msg_parse_v1(&m, s, big), -EMSGSIZE);
    free(s);
}
END_TEST

START_TEST(v1_parse_long_line)
{
    /* a 4 KiB value and a line near the limit both parse */
    size_t vlen = PMI_WIRE_MAX_LINE - 64;
    char *s = malloc(vlen + 64);
    int n = sprintf(s, "cmd=put kvsname=kvs_1 key=k value=");
    memset(s + n, 'A', vlen);
    s[n + vlen] = '\n';
    struct pmi_msg m;
    ck_assert_int_eq(pmi_msg_parse_v1(&m, s, n + vlen + 1), 0);
    ck_assert_uint_eq(strlen(pmi_msg_get(&m, "value")), vlen);
    pmi_msg_free(&m);

    size_t flen, blen;
    const char *body;
    ck_assert_int_eq(pmi_frame_next(PMI_V1, s, n + vlen + 1, &flen, &body, &blen), 1);
    ck_assert_uint_eq(flen, n + vlen + 1);
    ck_assert_uint_eq(blen, n + vlen);
    free(s);
}
END_TEST

static const char spawn_block[] = "mcmd=spawn\n"
                                  "nprocs=2\n"
                                  "execname=/bin/true\n"
                                  "totspawns=1\n"
                                  "spawnssofar=1\n"
                                  "arg1=hello world\n"
                                  "arg2=-x=y\n"
                                  "argcnt=2\n"
                                  "preput_num=1\n"
                                  "preput_key_0=PARENT\n"
                                  "preput_val_0=kvs_1 2\n"
                                  "info_num=0\n"
                                  "endcmd\n";

START_TEST(v1_spawn_block)
{
    struct pmi_msg m;
    ck_assert_int_eq(p1(&m, spawn_block), 0);
    ck_assert_int_eq(m.n, 12);
    ck_assert_str_eq(m.kv[0].key, "mcmd");
    ck_assert_str_eq(pmi_msg_cmd(&m), "spawn");
    ck_assert_str_eq(pmi_msg_get(&m, "arg1"), "hello world"); /* spaces kept */
    ck_assert_str_eq(pmi_msg_get(&m, "arg2"), "-x=y");
    ck_assert_str_eq(pmi_msg_get(&m, "preput_val_0"), "kvs_1 2");
    ck_assert_str_eq(m.kv[11].key, "info_num");
    pmi_msg_free(&m);

    /* framing: one frame for the whole block, not before endcmd */
    size_t len = strlen(spawn_block), flen, blen;
    const char *body;
    for (size_t i = 0; i < len; i++)
        ck_assert_int_eq(pmi_frame_next(PMI_V1, spawn_block, i, &flen, &body, &blen), 0);
    char two[1024];
    snprintf(two, sizeof(two), "%scmd=barrier_in\n", spawn_block);
    ck_assert_int_eq(pmi_frame_next(PMI_V1, two, strlen(two), &flen, &body, &blen), 1);
    ck_assert_uint_eq(flen, len);
    ck_assert_int_eq(pmi_msg_parse_v1(&m, body, blen), 0);
    ck_assert_int_eq(m.n, 12);
    pmi_msg_free(&m);

    /* malformed blocks */
    ck_assert_int_eq(p1(&m, "mcmd=spawn\nnprocs=1\n"), -EPROTO); /* no endcmd */
    ck_assert_int_eq(p1(&m, "mcmd=spawn\nnprocs\nendcmd\n"), -EPROTO);
    ck_assert_int_eq(p1(&m, "mcmd=spawn\nendcmd\nx=1\n"), -EPROTO);
    /* repeated keys stay in order (several blocks are never merged, but
     * pmi_msg_next must walk duplicates) */
    ck_assert_int_eq(p1(&m, "mcmd=spawn\narg=1\narg=2\nendcmd"), 0);
    int pos = 0;
    ck_assert_str_eq(pmi_msg_next(&m, "arg", &pos), "1");
    ck_assert_str_eq(pmi_msg_next(&m, "arg", &pos), "2");
    ck_assert_ptr_null(pmi_msg_next(&m, "arg", &pos));
    pmi_msg_free(&m);
}
END_TEST

/* ---- PMI-1 framing -------------------------------------------------- */

START_TEST(v1_frame_several_and_split)
{
    const char s[] = "cmd=get_maxes\ncmd=get_appnum\ncmd=get_my_kvsname\ncmd=barr";
    size_t len = sizeof(s) - 1, off = 0, flen, blen;
    const char *body;
    const char *want[] = {"cmd=get_maxes", "cmd=get_appnum", "cmd=get_my_kvsname"};
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(pmi_frame_next(PMI_V1, s + off, len - off, &flen, &body, &blen),
                         1);
        ck_assert_uint_eq(blen, strlen(want[i]));
        ck_assert_int_eq(memcmp(body, want[i], blen), 0);
        ck_assert_ptr_eq(body, s + off);
        off += flen;
    }
    ck_assert_int_eq(pmi_frame_next(PMI_V1, s + off, len - off, &flen, &body, &blen), 0);
    ck_assert_int_eq(pmi_frame_next(PMI_V_UNKNOWN, "", 0, &flen, &body, &blen), 0);
}
END_TEST

START_TEST(v1_frame_garbage)
{
    size_t flen, blen;
    const char *body;
    /* detected from the first bytes, without waiting for a newline */
    ck_assert_int_eq(pmi_frame_next(PMI_V_UNKNOWN, "GET / HTTP", 10, &flen, &body, &blen),
                     -EPROTO);
    ck_assert_int_eq(pmi_frame_next(PMI_V_UNKNOWN, "x", 1, &flen, &body, &blen), -EPROTO);
    ck_assert_int_eq(pmi_frame_next(PMI_V1, "cmx", 3, &flen, &body, &blen), -EPROTO);
    /* prefixes of cmd= and mcmd= are fine */
    ck_assert_int_eq(pmi_frame_next(PMI_V_UNKNOWN, "cm", 2, &flen, &body, &blen), 0);
    ck_assert_int_eq(pmi_frame_next(PMI_V_UNKNOWN, "mcm", 3, &flen, &body, &blen), 0);
    ck_assert_int_eq(pmi_frame_next(PMI_V_UNKNOWN, "  cmd", 5, &flen, &body, &blen), 0);
    /* a PMI-2 record sent before init is garbage for the line framer */
    ck_assert_int_eq(
        pmi_frame_next(PMI_V_UNKNOWN, "14    cmd=kvs-fence;", 20, &flen, &body, &blen),
        -EPROTO);
    /* NUL bytes */
    const char nul[] = "cmd=put\0 key=x\n";
    ck_assert_int_eq(pmi_frame_next(PMI_V1, nul, sizeof(nul) - 1, &flen, &body, &blen),
                     -EPROTO);
    const char nul2[] = "mcmd=spawn\nnprocs=\0\nendcmd\n";
    ck_assert_int_eq(pmi_frame_next(PMI_V1, nul2, sizeof(nul2) - 1, &flen, &body, &blen),
                     -EPROTO);
    /* an over-long line: needs more until the limit, then EMSGSIZE */
    char *big = malloc(PMI_WIRE_MAX_LINE + 1);
    memset(big, 'x', PMI_WIRE_MAX_LINE + 1);
    memcpy(big, "cmd=put value=", 14);
    ck_assert_int_eq(
        pmi_frame_next(PMI_V1, big, PMI_WIRE_MAX_LINE - 1, &flen, &body, &blen), 0);
    ck_assert_int_eq(pmi_frame_next(PMI_V1, big, PMI_WIRE_MAX_LINE, &flen, &body, &blen),
                     -EMSGSIZE);
    ck_assert_int_eq(
        pmi_frame_next(PMI_V1, big, PMI_WIRE_MAX_LINE + 1, &flen, &body, &blen),
        -EMSGSIZE);
    /* exactly MAX_LINE including the '\n' is accepted */
    big[PMI_WIRE_MAX_LINE - 1] = '\n';
    ck_assert_int_eq(
        pmi_frame_next(PMI_V1, big, PMI_WIRE_MAX_LINE + 1, &flen, &body, &blen), 1);
    ck_assert_uint_eq(flen, PMI_WIRE_MAX_LINE);
    /* an endless spawn block */
    memset(big, 'y', PMI_WIRE_MAX_LINE + 1);
    memcpy(big, "mcmd=spawn\n", 11);
    for (size_t i = 20; i < PMI_WIRE_MAX_LINE; i += 20)
        big[i] = '\n';
    ck_assert_int_eq(
        pmi_frame_next(PMI_V1, big, PMI_WIRE_MAX_LINE + 1, &flen, &body, &blen),
        -EMSGSIZE);
    free(big);
    /* an empty line frames, then fails to parse */
    ck_assert_int_eq(pmi_frame_next(PMI_V1, "\ncmd=x\n", 7, &flen, &body, &blen), 1);
    ck_assert_uint_eq(flen, 1);
    struct pmi_msg m;
    ck_assert_int_eq(pmi_msg_parse_v1(&m, body, blen), -EPROTO);
}
END_TEST

/* ---- PMI-2 framing -------------------------------------------------- */

START_TEST(v2_frame_lengths)
{
    static const char *const recs[] = {
        "27    cmd=kvs-put;key=k0;value=v;", /* Slurm: left-justified */
        "    27cmd=kvs-put;key=k0;value=v;", /* MPICH >= 4.1: right-justified */
        "000027cmd=kvs-put;key=k0;value=v;", /* zero padded */
        "  27  cmd=kvs-put;key=k0;value=v;", /* both */
    };
    for (size_t i = 0; i < sizeof(recs) / sizeof(recs[0]); i++) {
        size_t flen, blen;
        const char *body;
        ck_assert_int_eq(
            pmi_frame_next(PMI_V2, recs[i], strlen(recs[i]), &flen, &body, &blen), 1);
        ck_assert_uint_eq(flen, 33);
        ck_assert_uint_eq(blen, 27);
        ck_assert_ptr_eq(body, recs[i] + 6);
        /* one byte short: need more */
        ck_assert_int_eq(pmi_frame_next(PMI_V2, recs[i], 32, &flen, &body, &blen), 0);
    }
}
END_TEST

START_TEST(v2_frame_bad_length)
{
    size_t flen, blen;
    const char *body;
    const char *bad[] = {
        "2 7   cmd=x;", /* digits not contiguous */
        "      cmd=x;", /* no digits */
        "0     ",       /* body length 0 */
        "000000",       /* body length 0 */
        "-5    cmd=x;", /* sign */
        "+5    cmd=x;", /* sign */
        "1a    cmd=x;", /* letter */
        "5\t    cmd=x", /* tab */
        "cmd=x;",       /* no length field at all */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(pmi_frame_next(PMI_V2, bad[i], strlen(bad[i]), &flen, &body,
                                     &blen) == -EPROTO,
                      "accepted bad length field '%s'", bad[i]);
    /* a bad byte is reported before the field is complete */
    ck_assert_int_eq(pmi_frame_next(PMI_V2, "1x", 2, &flen, &body, &blen), -EPROTO);
    ck_assert_int_eq(pmi_frame_next(PMI_V2, "12", 2, &flen, &body, &blen), 0);
    const char nul[] = "1\0    cmd=x;";
    ck_assert_int_eq(pmi_frame_next(PMI_V2, nul, sizeof(nul) - 1, &flen, &body, &blen),
                     -EPROTO);
    /* the largest body a 6-digit field can carry frames */
    size_t big = PMI_WIRE_LENFIELD + PMI_WIRE_MAX_BODY;
    char *b = malloc(big);
    memset(b, 'x', big);
    memcpy(b, "999999cmd=k;", 12);
    ck_assert_int_eq(pmi_frame_next(PMI_V2, b, big, &flen, &body, &blen), 1);
    ck_assert_uint_eq(blen, PMI_WIRE_MAX_BODY);
    ck_assert_int_eq(pmi_frame_next(PMI_V2, b, big - 1, &flen, &body, &blen), 0);
    free(b);
}
END_TEST

START_TEST(v2_frame_several_and_bytewise)
{
    const char s[] = "14    cmd=kvs-fence;"
                     "40    cmd=kvs-get;jobid=kvs_1;srcid=-1;key=k1;"
                     "    13cmd=finalize;";
    size_t len = sizeof(s) - 1;
    /* all in one buffer */
    size_t off = 0, flen, blen;
    const char *body;
    const char *want[] = {"kvs-fence", "kvs-get", "finalize"};
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(pmi_frame_next(PMI_V2, s + off, len - off, &flen, &body, &blen),
                         1);
        struct pmi_msg m;
        ck_assert_int_eq(pmi_msg_parse_v2(&m, body, blen), 0);
        ck_assert_str_eq(pmi_msg_cmd(&m), want[i]);
        if (i == 1) {
            int src;
            ck_assert_int_eq(pmi_msg_get_int(&m, "srcid", &src), 0);
            ck_assert_int_eq(src, -1);
            ck_assert_str_eq(pmi_msg_get(&m, "jobid"), "kvs_1");
        }
        pmi_msg_free(&m);
        off += flen;
    }
    ck_assert_uint_eq(off, len);
    /* byte by byte: exactly one frame completes at each record end */
    size_t ends[] = {20, 66, 85}, k = 0;
    off = 0;
    for (size_t have = 0; have <= len; have++) {
        int rc = pmi_frame_next(PMI_V2, s + off, have - off, &flen, &body, &blen);
        ck_assert_int_ge(rc, 0);
        if (rc == 1) {
            ck_assert_uint_lt(k, 3);
            ck_assert_uint_eq(have, ends[k]);
            k++;
            off += flen;
        }
    }
    ck_assert_uint_eq(k, 3);
}
END_TEST

/* ---- PMI-2 parsing -------------------------------------------------- */

static int p2(struct pmi_msg *m, const char *s)
{
    return pmi_msg_parse_v2(m, s, strlen(s));
}

START_TEST(v2_parse_escapes)
{
    struct pmi_msg m;
    /* the record Slurm's libpmi2 sends for PMI2_KVS_Put("k0", "a;b=c d") */
    const char rec[] = "    34cmd=kvs-put;key=k0;value=a;;b=c d;";
    size_t flen, blen;
    const char *body;
    ck_assert_int_eq(pmi_frame_next(PMI_V2, rec, strlen(rec), &flen, &body, &blen), 1);
    ck_assert_uint_eq(flen, strlen(rec));
    ck_assert_int_eq(pmi_msg_parse_v2(&m, body, blen), 0);
    ck_assert_int_eq(m.n, 3);
    ck_assert_str_eq(pmi_msg_get(&m, "key"), "k0");
    ck_assert_str_eq(pmi_msg_get(&m, "value"), "a;b=c d");
    pmi_msg_free(&m);

    /* A writer that counts the unescaped value (27) desynchronises: the
     * record ends inside the escape and what follows is no length field. */
    const char bad[] = "    27cmd=kvs-put;key=k0;value=a;;b=c d;";
    ck_assert_int_eq(pmi_frame_next(PMI_V2, bad, strlen(bad), &flen, &body, &blen), 1);
    ck_assert_uint_eq(flen, 33);
    ck_assert_int_eq(
        pmi_frame_next(PMI_V2, bad + flen, strlen(bad) - flen, &flen, &body, &blen),
        -EPROTO);

    ck_assert_int_eq(p2(&m, "cmd=kvs-put;key=k0;value=a;;b=c d;"), 0);
    ck_assert_int_eq(m.n, 3);
    ck_assert_str_eq(pmi_msg_get(&m, "value"), "a;b=c d");
    pmi_msg_free(&m);

    ck_assert_int_eq(p2(&m, "cmd=kvs-put;key=k1;value=x;;;;y;;;"), 0);
    ck_assert_str_eq(pmi_msg_get(&m, "value"), "x;;y;");
    pmi_msg_free(&m);

    ck_assert_int_eq(p2(&m, "cmd=x;empty=;eq==a=;sp= a b ;"), 0);
    ck_assert_int_eq(m.n, 4);
    ck_assert_str_eq(pmi_msg_get(&m, "empty"), "");
    ck_assert_str_eq(pmi_msg_get(&m, "eq"), "=a=");
    ck_assert_str_eq(pmi_msg_get(&m, "sp"), " a b ");
    pmi_msg_free(&m);
}
END_TEST

START_TEST(v2_parse_trailing_junk)
{
    struct pmi_msg m;
    /* MPICH <= 4.0 simple2pmi: length counted 6 more bytes than the body,
     * which were sent uninitialised */
    char rec[64];
    const char *b = "cmd=kvs-fence;";
    size_t bl = strlen(b);
    memcpy(rec, b, bl);
    memcpy(rec + bl,
           "\0\xff"
           "a=b\0",
           6);
    char wire[80];
    snprintf(wire, sizeof(wire), "%-6zu", bl + 6);
    memcpy(wire + 6, rec, bl + 6);
    size_t flen, blen;
    const char *body;
    ck_assert_int_eq(pmi_frame_next(PMI_V2, wire, 6 + bl + 6, &flen, &body, &blen), 1);
    ck_assert_uint_eq(blen, bl + 6);
    ck_assert_int_eq(pmi_msg_parse_v2(&m, body, blen), 0);
    ck_assert_int_eq(m.n, 1);
    ck_assert_str_eq(pmi_msg_cmd(&m), "kvs-fence");
    pmi_msg_free(&m);

    const char *junk[] = {"cmd=finalize;xxxxxx", "cmd=finalize;k=v", "cmd=finalize;=v;",
                          "cmd=finalize;=;;;;;", "cmd=finalize;\n\n\n\n\n\n"};
    for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++) {
        ck_assert_int_eq(p2(&m, junk[i]), 0);
        ck_assert_int_eq(m.n, 1);
        ck_assert_str_eq(pmi_msg_cmd(&m), "finalize");
        pmi_msg_free(&m);
    }
    /* Junk that starts with ';' right after the last pair is read as an
     * escaped ';' (documented ambiguity). */
    ck_assert_int_eq(p2(&m, "cmd=finalize;;x;"), 0);
    ck_assert_str_eq(pmi_msg_cmd(&m), "finalize;x");
    pmi_msg_free(&m);
    /* a NUL inside a pair ends the pairs: the pair is not half-kept */
    const char nul[] = "cmd=kvs-put;key=k;value=a\0b;";
    ck_assert_int_eq(pmi_msg_parse_v2(&m, nul, sizeof(nul) - 1), 0);
    ck_assert_int_eq(m.n, 2);
    ck_assert_ptr_null(pmi_msg_get(&m, "value"));
    pmi_msg_free(&m);
}
END_TEST

START_TEST(v2_parse_malformed)
{
    struct pmi_msg m;
    ck_assert_int_eq(p2(&m, ""), -EPROTO);
    ck_assert_int_eq(m.n, 0);
    ck_assert_int_eq(p2(&m, "cmd"), -EPROTO);
    ck_assert_int_eq(p2(&m, "cmd=kvs-fence"), -EPROTO); /* cmd pair unterminated */
    ck_assert_int_eq(p2(&m, "key=v;cmd=x;"), -EPROTO);  /* does not start with cmd= */
    ck_assert_int_eq(p2(&m, " cmd=x;"), -EPROTO);
    ck_assert_int_eq(p2(&m, "CMD=x;"), -EPROTO);
    ck_assert_int_eq(p2(&m, "cmd=x\0;"), -EPROTO);
    ck_assert_int_eq(pmi_msg_parse_v2(&m, "cmd=x\0;", 7), -EPROTO);
    pmi_msg_free(&m);
    /* longer than any 6-digit length field can announce */
    size_t big = PMI_WIRE_MAX_BODY + 1;
    char *b = malloc(big);
    memset(b, 'x', big);
    memcpy(b, "cmd=x;", 6);
    ck_assert_int_eq(pmi_msg_parse_v2(&m, b, big), -EPROTO);
    ck_assert_int_eq(pmi_msg_parse_v2(&m, b, big - 1), 0);
    ck_assert_int_eq(m.n, 1);
    pmi_msg_free(&m);
    free(b);
    /* "cmd=;" is a complete (empty) command; the server rejects it */
    ck_assert_int_eq(p2(&m, "cmd=;"), 0);
    ck_assert_str_eq(pmi_msg_cmd(&m), "");
    pmi_msg_free(&m);
}
END_TEST

START_TEST(msg_accessors)
{
    struct pmi_msg m;
    ck_assert_int_eq(p2(&m, "cmd=x;a=12;b=-3;c=1x;d=;e=TRUE;f=no;g=maybe;h=99999999999;"),
                     0);
    int v;
    bool bv;
    ck_assert_int_eq(pmi_msg_get_int(&m, "a", &v), 0);
    ck_assert_int_eq(v, 12);
    ck_assert_int_eq(pmi_msg_get_int(&m, "b", &v), 0);
    ck_assert_int_eq(v, -3);
    ck_assert_int_eq(pmi_msg_get_int(&m, "c", &v), -EINVAL);
    ck_assert_int_eq(pmi_msg_get_int(&m, "d", &v), -EINVAL);
    ck_assert_int_eq(pmi_msg_get_int(&m, "h", &v), -EINVAL);
    ck_assert_int_eq(pmi_msg_get_int(&m, "z", &v), -ENOENT);
    ck_assert_int_eq(pmi_msg_get_bool(&m, "e", &bv), 0);
    ck_assert(bv);
    ck_assert_int_eq(pmi_msg_get_bool(&m, "f", &bv), 0);
    ck_assert(!bv);
    ck_assert_int_eq(pmi_msg_get_bool(&m, "a", &bv), -EINVAL);
    ck_assert_int_eq(pmi_msg_get_bool(&m, "g", &bv), -EINVAL);
    ck_assert_int_eq(pmi_msg_get_bool(&m, "z", &bv), -ENOENT);
    pmi_msg_free(&m);
    struct pmi_msg empty = {0};
    ck_assert_str_eq(pmi_msg_cmd(&empty), "");
    ck_assert_str_eq(pmi_msg_cmd(NULL), "");
    ck_assert_ptr_null(pmi_msg_get(&empty, "cmd"));
    pmi_msg_free(&empty);
}
END_TEST

START_TEST(parse_copies_input)
{
    char s[] = "cmd=get key=abc";
    struct pmi_msg m;
    ck_assert_int_eq(p1(&m, s), 0);
    memset(s, 'Z', sizeof(s) - 1);
    ck_assert_str_eq(pmi_msg_get(&m, "key"), "abc");
    pmi_msg_free(&m);
}
END_TEST

/* ---- builder -------------------------------------------------------- */

START_TEST(build_exact_bytes)
{
    struct pmi_out o;
    pmi_out_begin(&o, PMI_V1, "get_result");
    pmi_out_add(&o, "rc", "0");
    pmi_out_add(&o, "value", "hex=00");
    ck_assert_int_eq(pmi_out_end(&o), 0);
    ck_assert_uint_eq(o.len, strlen("cmd=get_result rc=0 value=hex=00\n"));
    ck_assert_int_eq(memcmp(o.buf, "cmd=get_result rc=0 value=hex=00\n", o.len), 0);
    pmi_out_free(&o);

    pmi_out_begin(&o, PMI_V2, "kvs-get-response");
    pmi_out_add(&o, "rc", "0");
    pmi_out_add(&o, "found", "TRUE");
    pmi_out_addf(&o, "value", "%s;%d", "a", 7);
    ck_assert_int_eq(pmi_out_end(&o), 0);
    const char *want = "48    cmd=kvs-get-response;rc=0;found=TRUE;value=a;;7;";
    ck_assert_uint_eq(o.len, strlen(want));
    ck_assert_int_eq(memcmp(o.buf, want, o.len), 0);
    pmi_out_free(&o);

    /* PMI-1: spaces and newlines in a value would break the line */
    pmi_out_begin(&o, PMI_V1, "barrier_out");
    pmi_out_add(&o, "rc", "1");
    pmi_out_add(&o, "msg", "rank 3 died\n");
    ck_assert_int_eq(pmi_out_end(&o), 0);
    ck_assert_int_eq(memcmp(o.buf, "cmd=barrier_out rc=1 msg=rank_3_died_\n", o.len), 0);
    pmi_out_free(&o);
}
END_TEST

/* Integers and the PMI-2 length prefix are formatted by hand: every digit count */
START_TEST(build_integers)
{
    struct pmi_out o;
    pmi_out_begin(&o, PMI_V2, "a");
    ck_assert_int_eq(pmi_out_end(&o), 0);
    ck_assert_uint_eq(o.len, 12);
    ck_assert_int_eq(memcmp(o.buf, "6     cmd=a;", o.len), 0);
    pmi_out_free(&o);

    pmi_out_begin(&o, PMI_V1, "r");
    pmi_out_addint(&o, "z", 0);
    pmi_out_addint(&o, "m", -1);
    pmi_out_addint(&o, "p", 2147483647);
    pmi_out_addint(&o, "n", LONG_MIN);
    pmi_out_addint(&o, "x", LONG_MAX);
    ck_assert_int_eq(pmi_out_end(&o), 0);
    char want[200];
    snprintf(want, sizeof(want), "cmd=r z=0 m=-1 p=2147483647 n=%ld x=%ld\n", LONG_MIN,
             LONG_MAX);
    ck_assert_uint_eq(o.len, strlen(want));
    ck_assert_int_eq(memcmp(o.buf, want, o.len), 0);
    pmi_out_free(&o);

    /* a body of 123456 bytes: all six digits of the prefix, no padding */
    char *v = malloc(123456);
    ck_assert_ptr_nonnull(v);
    size_t vl = 123456 - strlen("cmd=b;v=;");
    memset(v, 'q', vl);
    v[vl] = '\0';
    pmi_out_begin(&o, PMI_V2, "b");
    pmi_out_add(&o, "v", v);
    ck_assert_int_eq(pmi_out_end(&o), 0);
    ck_assert_uint_eq(o.len, 6 + 123456);
    ck_assert_int_eq(memcmp(o.buf, "123456cmd=b;v=qq", 16), 0);
    pmi_out_free(&o);
    free(v);
}
END_TEST

START_TEST(build_errors_sticky)
{
    struct pmi_out o;
    pmi_out_begin(&o, PMI_V1, "x");
    pmi_out_add(&o, "bad key", "v");
    pmi_out_add(&o, "good", "v");
    ck_assert_int_eq(pmi_out_end(&o), -EINVAL);
    pmi_out_free(&o);

    pmi_out_begin(&o, PMI_V2, "x");
    pmi_out_add(&o, "k;", "v");
    ck_assert_int_eq(pmi_out_end(&o), -EINVAL);
    pmi_out_free(&o);

    pmi_out_begin(&o, PMI_V2, "x");
    pmi_out_add(&o, "k=", "v");
    ck_assert_int_eq(pmi_out_end(&o), -EINVAL);
    pmi_out_free(&o);

    pmi_out_begin(&o, PMI_V2, "x");
    pmi_out_add(&o, "", "v");
    ck_assert_int_eq(pmi_out_end(&o), -EINVAL);
    pmi_out_free(&o);

    pmi_out_begin(&o, PMI_V2, "x");
    pmi_out_add(&o, "k", NULL);
    ck_assert_int_eq(pmi_out_end(&o), -EINVAL);
    pmi_out_free(&o);

    pmi_out_begin(&o, PMI_V_UNKNOWN, "x");
    ck_assert_int_eq(pmi_out_end(&o), -EINVAL);
    pmi_out_free(&o);

    pmi_out_begin(&o, PMI_V1, "");
    ck_assert_int_eq(pmi_out_end(&o), -EINVAL);
    pmi_out_free(&o);

    /* too long for the wire */
    size_t n = PMI_WIRE_MAX_BODY;
    char *big = malloc(n + 1);
    memset(big, 'v', n);
    big[n] = '\0';
    pmi_out_begin(&o, PMI_V2, "x");
    pmi_out_add(&o, "k", big);
    ck_assert_int_eq(pmi_out_end(&o), -EMSGSIZE);
    pmi_out_free(&o);
    big[PMI_WIRE_MAX_LINE] = '\0';
    pmi_out_begin(&o, PMI_V1, "x");
    pmi_out_add(&o, "k", big);
    ck_assert_int_eq(pmi_out_end(&o), -EMSGSIZE);
    pmi_out_free(&o);
    /* a long addf value goes through the allocating path */
    big[5000] = '\0';
    pmi_out_begin(&o, PMI_V2, "x");
    pmi_out_addf(&o, "k", "<%s>", big);
    ck_assert_int_eq(pmi_out_end(&o), 0);
    struct pmi_msg m;
    ck_assert_int_eq(pmi_msg_parse_v2(&m, o.buf + 6, o.len - 6), 0);
    ck_assert_uint_eq(strlen(pmi_msg_get(&m, "k")), 5002);
    pmi_msg_free(&m);
    pmi_out_free(&o);
    free(big);
}
END_TEST

/* deterministic pseudo-random strings */
static unsigned long lcg_state = 12345;
static unsigned lcg(void)
{
    lcg_state = lcg_state * 6364136223846793005UL + 1442695040888963407UL;
    return (unsigned)(lcg_state >> 33);
}

static void rand_value(char *s, size_t max, const char *alphabet)
{
    size_t n = lcg() % max, na = strlen(alphabet);
    for (size_t i = 0; i < n; i++)
        s[i] = alphabet[lcg() % na];
    s[n] = '\0';
}

/* Build a message, frame it, parse it; compare all pairs. */
static void round_trip(enum pmi_version v, int npairs, char keys[][32], char vals[][1100])
{
    struct pmi_out o;
    pmi_out_begin(&o, v, "test-cmd");
    for (int i = 0; i < npairs; i++)
        pmi_out_add(&o, keys[i], vals[i]);
    ck_assert_int_eq(pmi_out_end(&o), 0);

    size_t flen, blen;
    const char *body;
    ck_assert_int_eq(pmi_frame_next(v, o.buf, o.len, &flen, &body, &blen), 1);
    ck_assert_uint_eq(flen, o.len);
    /* a prefix is never a frame */
    ck_assert_int_eq(pmi_frame_next(v, o.buf, o.len - 1, &flen, &body, &blen), 0);
    struct pmi_msg m;
    int rc =
        v == PMI_V2 ? pmi_msg_parse_v2(&m, body, blen) : pmi_msg_parse_v1(&m, body, blen);
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(m.n, npairs + 1);
    ck_assert_str_eq(pmi_msg_cmd(&m), "test-cmd");
    for (int i = 0; i < npairs; i++) {
        ck_assert_str_eq(m.kv[i + 1].key, keys[i]);
        ck_assert_str_eq(m.kv[i + 1].val, vals[i]);
    }
    pmi_msg_free(&m);
    pmi_out_free(&o);
}

START_TEST(build_round_trip_v2)
{
    static char keys[8][32], vals[8][1100];
    for (int iter = 0; iter < 500; iter++) {
        int np = (int)(lcg() % 8);
        for (int i = 0; i < np; i++) {
            rand_value(keys[i], 20, "abcXYZ-_[]0123456789 ");
            if (!keys[i][0])
                strcpy(keys[i], "k");
            rand_value(vals[i], 1025, "ab;=; ;;xyz\t\"'\\,()");
        }
        round_trip(PMI_V2, np, keys, vals);
    }
    /* the tricky ends: values that start or end with ';' */
    strcpy(keys[0], "a");
    strcpy(vals[0], ";");
    strcpy(keys[1], "b");
    strcpy(vals[1], ";;");
    strcpy(keys[2], "c");
    strcpy(vals[2], "");
    strcpy(keys[3], "d");
    strcpy(vals[3], ";x;");
    round_trip(PMI_V2, 4, keys, vals);
}
END_TEST

START_TEST(build_round_trip_v1)
{
    static char keys[8][32], vals[8][1100];
    for (int iter = 0; iter < 500; iter++) {
        int np = (int)(lcg() % 8);
        for (int i = 0; i < np; i++) {
            rand_value(keys[i], 20, "abcXYZ-_[]0123456789;");
            if (!keys[i][0])
                strcpy(keys[i], "k");
            rand_value(vals[i], 1025, "0123456789ABCDEF=;:,()/-");
        }
        round_trip(PMI_V1, np, keys, vals);
    }
}
END_TEST

static Suite *wire_suite(void)
{
    Suite *s = suite_create("pmi_wire");
    TCase *tc;

    tc = tcase_create("captured");
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, mpich_pmi1_capture);
    tcase_add_test(tc, mpich_pmi1_capture_long_value);
    tcase_add_test(tc, mpich_pmi1_capture_nomap);
    tcase_add_test(tc, slurm_libpmi2_capture);
    suite_add_tcase(s, tc);

    tc = tcase_create("pmi1");
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, v1_parse_basic);
    tcase_add_test(tc, v1_parse_malformed);
    tcase_add_test(tc, v1_parse_long_line);
    tcase_add_test(tc, v1_spawn_block);
    tcase_add_test(tc, v1_frame_several_and_split);
    tcase_add_test(tc, v1_frame_garbage);
    suite_add_tcase(s, tc);

    tc = tcase_create("pmi2");
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, v2_frame_lengths);
    tcase_add_test(tc, v2_frame_bad_length);
    tcase_add_test(tc, v2_frame_several_and_bytewise);
    tcase_add_test(tc, v2_parse_escapes);
    tcase_add_test(tc, v2_parse_trailing_junk);
    tcase_add_test(tc, v2_parse_malformed);
    tcase_add_test(tc, msg_accessors);
    tcase_add_test(tc, parse_copies_input);
    suite_add_tcase(s, tc);

    tc = tcase_create("build");
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, build_exact_bytes);
    tcase_add_test(tc, build_integers);
    tcase_add_test(tc, build_errors_sticky);
    tcase_add_test(tc, build_round_trip_v2);
    tcase_add_test(tc, build_round_trip_v1);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(wire_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
