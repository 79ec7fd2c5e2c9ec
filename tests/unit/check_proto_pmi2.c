/* check_proto_pmi2.c - PMI-2 side of the server core, fed raw records.
 *
 * The captured Slurm 22.05.8 libpmi2 streams (fixtures/: how they were
 * recorded is in fixtures/README.md, what they carry in doc/wire.md section 6)
 * replayed as synchronous clients with exact replies; thrid echo; not
 * found answers; limits; node attributes with wait; job attributes; name
 * service; spawn parsed and handed to the host (hostile counts and lengths
 * refused, the server intact), a spawned job's fullinit and preput pairs;
 * job-connect errors; abort variants; PMIX_Ring on one
 * node; malformed records.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_tree.h"
#include "pmi_wire.h"

#ifndef WIRE_FIXTURES
#define WIRE_FIXTURES "fixtures"
#endif

#define EXPECT(ft, rank, want)                                                           \
    do {                                                                                 \
        char *got_ = ft_take((ft), (rank));                                              \
        ck_assert_str_eq(got_, (want));                                                  \
        free(got_);                                                                      \
    } while (0)

#define EXPECT2(ft, rank, body)                                                          \
    do {                                                                                 \
        char want_[4096];                                                                \
        snprintf(want_, sizeof(want_), "%-6zu%s", strlen(body), (body));                 \
        EXPECT((ft), (rank), want_);                                                     \
    } while (0)

static struct ft *job(int size)
{
    int *rn = calloc(size, sizeof(int));
    struct ft *ft = ft_create(1, 2, rn, size, 5000);
    free(rn);
    return ft;
}

static void init2(struct ft *ft, int rank)
{
    char body[128];
    ck_assert_int_eq(ft_send(ft, rank, "cmd=init pmi_version=2 pmi_subversion=0\n"), 0);
    EXPECT(ft, rank, "cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\n");
    snprintf(body, sizeof(body), "cmd=fullinit;pmirank=%d;threaded=FALSE;", rank);
    ck_assert_int_eq(ft_send2(ft, rank, body), 0);
    char *got = ft_take(ft, rank);
    ck_assert_msg(strstr(got, "cmd=fullinit-response;rc=0;") != NULL, "%s", got);
    free(got);
}

static char *read_fixture(const char *name, size_t *len)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", WIRE_FIXTURES, name);
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    char *buf = calloc(1, 1 << 16);
    *len = fread(buf, 1, (1 << 16) - 1, f);
    fclose(f);
    ck_assert_uint_gt(*len, 0);
    return buf;
}

/* Replay captured streams as synchronous clients: each rank sends its next
 * request only once the previous one was answered (every request but abort
 * gets exactly one reply).  Returns each rank's transcript of replies. */
static void replay(struct ft *ft, const char **files, int n, char **transcript)
{
    char *data[4];
    size_t len[4], off[4] = {0};
    enum pmi_version v[4];
    bool waiting[4] = {0}, done[4] = {0};
    int ndone = 0;

    for (int r = 0; r < n; r++) {
        data[r] = read_fixture(files[r], &len[r]);
        v[r] = PMI_V_UNKNOWN;
        transcript[r] = strdup("");
    }
    while (ndone < n) {
        bool progress = false;
        for (int r = 0; r < n; r++) {
            char *out = ft_take(ft, r);
            if (*out) {
                size_t a = strlen(transcript[r]), b = strlen(out);
                transcript[r] = realloc(transcript[r], a + b + 2);
                memcpy(transcript[r] + a, out, b);
                transcript[r][a + b] = '|';
                transcript[r][a + b + 1] = '\0';
                waiting[r] = false;
                progress = true;
            }
            free(out);
            if (done[r] || waiting[r])
                continue;
            size_t flen, blen;
            const char *body;
            int rc = pmi_frame_next(v[r], data[r] + off[r], len[r] - off[r], &flen, &body,
                                    &blen);
            ck_assert_int_eq(rc, 1);
            rc = ft_input(ft, r, data[r] + off[r], flen);
            if (v[r] == PMI_V_UNKNOWN)
                v[r] = PMI_V2;
            off[r] += flen;
            waiting[r] = true;
            progress = true;
            if (rc == 1) {
                done[r] = true;
                ndone++;
            } else {
                ck_assert_int_eq(rc, 0);
            }
        }
        ck_assert_msg(progress, "replay stalled");
    }
    for (int r = 0; r < n; r++) {
        char *out = ft_take(ft, r);
        size_t a = strlen(transcript[r]), b = strlen(out);
        transcript[r] = realloc(transcript[r], a + b + 2);
        strcpy(transcript[r] + a, out);
        if (b)
            strcat(transcript[r], "|");
        free(out);
        free(data[r]);
    }
}

/* The transcript a synchronous client sees: the init line, then framed
 * bodies, each followed by '|'. */
static char *transcript_of(const char *const *bodies)
{
    char *t = calloc(1, 8192);
    strcpy(t, "cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\n|");
    for (int i = 0; bodies[i]; i++)
        sprintf(t + strlen(t), "%-6zu%s|", strlen(bodies[i]), bodies[i]);
    return t;
}

START_TEST(slurm_libpmi2_replay)
{
    struct ft *ft = job(2);
    const char *f[] = {"slurm-22.05.8-libpmi2-rank0.in",
                       "slurm-22.05.8-libpmi2-rank1.in"};
    const char *want0[] = {
        "cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=0;"
        "size=2;appnum=0;debugged=FALSE;pmiverbose=FALSE;",
        "cmd=job-getid-response;rc=0;jobid=42.0;",
        "cmd=info-getjobattr-response;rc=0;found=TRUE;value=(vector,(0,1,2));",
        "cmd=kvs-put-response;rc=0;",
        "cmd=kvs-fence-response;rc=0;",
        "cmd=kvs-get-response;rc=0;found=TRUE;value=x;;;;y;;;", /* x;;y; escaped */
        "cmd=info-putnodeattr-response;rc=0;",
        "cmd=info-getnodeattr-response;rc=0;found=TRUE;value=1;",
        "cmd=finalize-response;rc=0;",
        NULL};
    const char *want1[] = {
        "cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=1;"
        "size=2;appnum=0;debugged=FALSE;pmiverbose=FALSE;",
        "cmd=job-getid-response;rc=0;jobid=42.0;",
        "cmd=info-getjobattr-response;rc=0;found=TRUE;value=(vector,(0,1,2));",
        "cmd=kvs-put-response;rc=0;",
        "cmd=kvs-fence-response;rc=0;",
        "cmd=kvs-get-response;rc=0;found=TRUE;value=a;;b=c d;",
        "cmd=info-putnodeattr-response;rc=0;",
        "cmd=info-getnodeattr-response;rc=0;found=TRUE;value=1;",
        "cmd=finalize-response;rc=0;",
        NULL};
    char *t[2];
    replay(ft, f, 2, t);
    char *w0 = transcript_of(want0), *w1 = transcript_of(want1);
    ck_assert_str_eq(t[0], w0);
    ck_assert_str_eq(t[1], w1);
    free(w0);
    free(w1);
    free(t[0]);
    free(t[1]);
    ck_assert_int_eq(psrv_clients_finalized(ft->nodes[0].srv), 2);
    ck_assert_int_eq(ft->nodes[0].naborts, 0);
    ft_destroy(ft);
}
END_TEST

START_TEST(slurm_libpmi2_with_jobid)
{
    struct ft *ft = job(1);
    const char *f[] = {"slurm-22.05.8-libpmi2-jobid-rank0.in"};
    char *t[1];
    replay(ft, f, 1, t);
    /* k0 was put by this rank: visible after the fence */
    ck_assert_msg(strstr(t[0], "cmd=kvs-get-response;rc=0;found=TRUE;value=a;;b=c d;|"),
                  "%s", t[0]);
    ck_assert_msg(strstr(t[0], "rank=0;size=1;"), "%s", t[0]);
    free(t[0]);
    ft_destroy(ft);
}
END_TEST

START_TEST(thrid_echo_and_not_found)
{
    struct ft *ft = job(1);
    init2(ft, 0);
    ft_send2(ft, 0, "cmd=kvs-get;thrid=0x7f00;jobid=;srcid=-1;key=-NONEXIST-KEY;");
    EXPECT2(ft, 0, "cmd=kvs-get-response;thrid=0x7f00;rc=0;found=FALSE;");
    ft_send2(ft, 0, "cmd=job-getid;thrid=T1;");
    EXPECT2(ft, 0, "cmd=job-getid-response;thrid=T1;rc=0;jobid=42.0;");
    ft_send2(ft, 0, "cmd=info-getjobattr;key=hasNameServ;");
    EXPECT2(ft, 0, "cmd=info-getjobattr-response;rc=0;found=FALSE;");
    ft_send2(ft, 0, "cmd=info-getjobattr;key=universeSize;");
    EXPECT2(ft, 0, "cmd=info-getjobattr-response;rc=0;found=TRUE;value=1;");
    ft_send2(ft, 0, "cmd=info-getjobattr;key=PMI_hwloc_xmlfile;");
    EXPECT2(ft, 0, "cmd=info-getjobattr-response;rc=0;found=FALSE;");
    /* deferred replies echo the thrid of their own request */
    ft_send2(ft, 0, "cmd=kvs-fence;thrid=F9;");
    EXPECT2(ft, 0, "cmd=kvs-fence-response;thrid=F9;rc=0;");
    ft_destroy(ft);
}
END_TEST

START_TEST(fullinit_variants)
{
    struct ft *ft = job(3);
    for (int r = 0; r < 3; r++) {
        ft_send(ft, r, "cmd=init pmi_version=2 pmi_subversion=0\n");
        free(ft_take(ft, r));
    }
    const char *want_fmt = "cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;"
                           "rank=%d;size=3;appnum=0;debugged=FALSE;pmiverbose=FALSE;";
    char want[256];
    ft_send2(ft, 0, "cmd=fullinit;"); /* nothing */
    snprintf(want, sizeof(want), want_fmt, 0);
    EXPECT2(ft, 0, want);
    ft_send2(ft, 1, "cmd=fullinit;pmirank=1;"); /* MPICH >= 4.1 */
    snprintf(want, sizeof(want), want_fmt, 1);
    EXPECT2(ft, 1, want);
    ft_send2(ft, 2, "cmd=fullinit;pmijobid=9.9;srcid=7;threaded=TRUE;"); /* lies */
    snprintf(want, sizeof(want), want_fmt, 2);
    EXPECT2(ft, 2, want);
    ft_destroy(ft);
}
END_TEST

START_TEST(put_limits)
{
    struct ft *ft = job(1);
    char body[2200], key[70], val[1030];
    init2(ft, 0);
    memset(key, 'k', 65);
    key[65] = '\0';
    snprintf(body, sizeof(body), "cmd=kvs-put;key=%s;value=1;", key);
    ft_send2(ft, 0, body);
    EXPECT2(ft, 0, "cmd=kvs-put-response;rc=5;errmsg=key longer than 64 bytes;");
    memset(val, 'v', 1025);
    val[1025] = '\0';
    snprintf(body, sizeof(body), "cmd=kvs-put;key=k;value=%s;", val);
    ft_send2(ft, 0, body);
    EXPECT2(ft, 0, "cmd=kvs-put-response;rc=7;errmsg=value longer than 1024 bytes;");
    ft_send2(ft, 0, "cmd=kvs-put;value=1;");
    EXPECT2(ft, 0, "cmd=kvs-put-response;rc=3;errmsg=missing key;");
    /* exactly at the limits: accepted, and comes back whole */
    key[64] = '\0';
    val[1024] = '\0';
    snprintf(body, sizeof(body), "cmd=kvs-put;key=%s;value=%s;", key, val);
    ft_send2(ft, 0, body);
    EXPECT2(ft, 0, "cmd=kvs-put-response;rc=0;");
    ft_send2(ft, 0, "cmd=kvs-fence;");
    EXPECT2(ft, 0, "cmd=kvs-fence-response;rc=0;");
    snprintf(body, sizeof(body), "cmd=kvs-get;jobid=42.0;srcid=0;key=%s;", key);
    ft_send2(ft, 0, body);
    char want[1200];
    snprintf(want, sizeof(want), "cmd=kvs-get-response;rc=0;found=TRUE;value=%s;", val);
    EXPECT2(ft, 0, want);
    /* node attributes have the same limits */
    snprintf(body, sizeof(body), "cmd=info-putnodeattr;key=%sk;value=1;", key);
    ft_send2(ft, 0, body);
    EXPECT2(ft, 0, "cmd=info-putnodeattr-response;rc=5;errmsg=key longer than 64 bytes;");
    ck_assert_int_eq(ft->nodes[0].naborts, 0);
    ft_destroy(ft);
}
END_TEST

START_TEST(nodeattr_wait)
{
    struct ft *ft = job(3);
    for (int r = 0; r < 3; r++)
        init2(ft, r);
    ft_send2(ft, 1, "cmd=info-getnodeattr;key=shm;wait=FALSE;");
    EXPECT2(ft, 1, "cmd=info-getnodeattr-response;rc=0;found=FALSE;");
    ft_send2(ft, 1, "cmd=info-getnodeattr;thrid=w1;key=shm;wait=TRUE;");
    ft_send2(ft, 2, "cmd=info-getnodeattr;key=shm;wait=TRUE;");
    EXPECT(ft, 1, "");
    EXPECT(ft, 2, "");
    ft_send2(ft, 0, "cmd=info-putnodeattr;key=other;value=x;");
    EXPECT2(ft, 0, "cmd=info-putnodeattr-response;rc=0;");
    EXPECT(ft, 1, "");
    ft_send2(ft, 0, "cmd=info-putnodeattr;key=shm;value=/dev/shm/seg;");
    EXPECT2(ft, 0, "cmd=info-putnodeattr-response;rc=0;");
    EXPECT2(ft, 1,
            "cmd=info-getnodeattr-response;thrid=w1;rc=0;found=TRUE;value=/dev/shm/seg;");
    EXPECT2(ft, 2, "cmd=info-getnodeattr-response;rc=0;found=TRUE;value=/dev/shm/seg;");
    /* built-ins */
    ft_send2(ft, 2, "cmd=info-getnodeattr;key=localRanksCount;wait=FALSE;");
    EXPECT2(ft, 2, "cmd=info-getnodeattr-response;rc=0;found=TRUE;value=3;");
    ft_send2(ft, 2, "cmd=info-getnodeattr;key=localRanks;wait=FALSE;");
    EXPECT2(ft, 2, "cmd=info-getnodeattr-response;rc=0;found=TRUE;value=0,1,2;");
    ft_send2(ft, 2, "cmd=info-putnodeattr;key=localRanks;value=9;");
    EXPECT2(ft, 2,
            "cmd=info-putnodeattr-response;rc=4;"
            "errmsg=this node attribute is provided by the server;");
    /* a wait that is never satisfied ends with an error, not a hang */
    ft_send2(ft, 1, "cmd=info-getnodeattr;key=never;wait=TRUE;");
    EXPECT(ft, 1, "");
    ft_advance(ft, 6000);
    EXPECT2(ft, 1,
            "cmd=info-getnodeattr-response;rc=-1;found=FALSE;"
            "errmsg=timed out waiting for the node attribute;");
    ck_assert_int_eq(ft->nodes[0].naborts, 0);
    ft_destroy(ft);
}
END_TEST

START_TEST(name_service)
{
    struct ft *ft = job(2);
    init2(ft, 0);
    init2(ft, 1);
    ft_send2(ft, 0, "cmd=name-publish;name=svc;port=tcp://h:1;infokeycount=0;");
    EXPECT2(ft, 0, "cmd=name-publish-response;rc=0;");
    ft_send2(ft, 1, "cmd=name-lookup;name=svc;infokeycount=0;");
    EXPECT2(ft, 1, "cmd=name-lookup-response;rc=0;value=tcp://h:1;port=tcp://h:1;");
    ft_send2(ft, 1, "cmd=name-publish;name=svc;port=x;infokeycount=0;");
    EXPECT2(ft, 1,
            "cmd=name-publish-response;rc=1;errmsg=service name already published;");
    ft_send2(ft, 0, "cmd=name-unpublish;name=svc;infokeycount=0;");
    EXPECT2(ft, 0, "cmd=name-unpublish-response;rc=0;");
    ft_send2(ft, 1, "cmd=name-lookup;name=svc;infokeycount=0;");
    EXPECT2(ft, 1, "cmd=name-lookup-response;rc=1;errmsg=service name not published;");
    ft_destroy(ft);
}
END_TEST

START_TEST(unsupported_commands)
{
    struct ft *ft = job(1);
    init2(ft, 0);
    ft_send2(ft, 0,
             "cmd=spawn;ncmds=1;preputcount=0;subcmd=/bin/true;maxprocs=1;argc=0;");
    EXPECT2(ft, 0,
            "cmd=spawn-response;rc=-1;errmsg=spawn is not supported by this host;");
    ft_send2(ft, 0, "cmd=job-connect;jobid=1.0;");
    EXPECT2(ft, 0,
            "cmd=job-connect-response;rc=-1;kvscopy=FALSE;"
            "errmsg=job-connect is not supported by this server;");
    ft_send2(ft, 0, "cmd=job-disconnect;jobid=1.0;");
    EXPECT2(ft, 0,
            "cmd=job-disconnect-response;rc=-1;"
            "errmsg=job-disconnect is not supported by this server;");
    ft_send2(ft, 0, "cmd=frob;");
    EXPECT2(ft, 0, "cmd=frob-response;rc=-1;errmsg=unknown command frob;");
    ck_assert_int_eq(ft->nodes[0].naborts, 0);
    ft_destroy(ft);
}
END_TEST

/* ---- spawn ------------------------------------------------------------------ */

static struct ft *spawn_job(int mode)
{
    ft_spawn_mode = mode; /* read at creation and by each spawn: reset by the test */
    struct ft *ft = job(2);
    init2(ft, 0);
    init2(ft, 1);
    return ft;
}

/* The server still serves both ranks: put, fence, get. */
static void still_serves(struct ft *ft)
{
    ft_send2(ft, 0, "cmd=kvs-put;key=k0;value=v0;");
    EXPECT2(ft, 0, "cmd=kvs-put-response;rc=0;");
    ft_send2(ft, 0, "cmd=kvs-fence;");
    ft_send2(ft, 1, "cmd=kvs-fence;");
    EXPECT2(ft, 0, "cmd=kvs-fence-response;rc=0;");
    EXPECT2(ft, 1, "cmd=kvs-fence-response;rc=0;");
    ft_send2(ft, 1, "cmd=kvs-get;jobid=42.0;srcid=-1;key=k0;");
    EXPECT2(ft, 1, "cmd=kvs-get-response;rc=0;found=TRUE;value=v0;");
    ck_assert_int_eq(ft->nodes[0].naborts, 0);
}

START_TEST(spawn_to_host)
{
    struct ft *ft = spawn_job(1);
    /* MPICH's / Loom's libpmi2 layout: thrid, preput, two commands, argv, info */
    ft_send2(ft, 0,
             "cmd=spawn;thrid=7;ncmds=2;preputcount=1;ppkey0=PARENT_ROOT_PORT_NAME;"
             "ppval0=tag#0$port=1$;subcmd=/bin/a;maxprocs=1;argc=2;argv0=x;argv1=y z;"
             "infokeycount=1;infokey0=wdir;infoval0=/tmp;subcmd=/bin/b;maxprocs=2;argc=0;"
             "infokeycount=0;");
    EXPECT(ft, 0, ""); /* the host answers later */
    ck_assert_int_eq(ft->nodes[0].nspawn, 1);
    ck_assert_str_eq(ft->nodes[0].spawn_desc,
                     "rank=0 total=3 [/bin/a x1 x y z wdir:=/tmp] [/bin/b x2] "
                     "PARENT_ROOT_PORT_NAME=tag#0$port=1$");
    /* a second spawn while one is in flight */
    ft_send2(ft, 0, "cmd=spawn;ncmds=1;preputcount=0;subcmd=/bin/a;maxprocs=1;argc=0;");
    EXPECT2(ft, 0,
            "cmd=spawn-response;rc=-1;errmsg=spawn: this task already has a spawn in "
            "flight;");
    ck_assert_int_eq(psrv_spawn_done(ft->nodes[0].srv, ft->nodes[0].spawn_id + 99, 0,
                                     "x", NULL, 1, NULL),
                     -ENOENT);
    ck_assert_int_eq(
        psrv_spawn_done(ft->nodes[0].srv, ft->nodes[0].spawn_id, 0, "42.1", NULL, 3, NULL),
        0);
    EXPECT2(ft, 0, "cmd=spawn-response;thrid=7;rc=0;jobid=42.1;errcodes=0,0,0;");
    /* without infokeycount (a caller that passed no info sizes); a failure from the host */
    ft_send2(ft, 1, "cmd=spawn;ncmds=1;preputcount=0;subcmd=/bin/c;maxprocs=4;argc=1;"
                    "argv0=-v;");
    ck_assert_str_eq(ft->nodes[0].spawn_desc, "rank=1 total=4 [/bin/c x4 -v]");
    int codes[4] = {0, 0, 0, 0};
    psrv_spawn_done(ft->nodes[0].srv, ft->nodes[0].spawn_id, -1, NULL, codes, 4,
                    "cannot start rank 0: No such file");
    EXPECT2(ft, 1, "cmd=spawn-response;rc=-1;errmsg=cannot start rank 0: No such file;");
    still_serves(ft);
    ft_destroy(ft);
    ft_spawn_mode = 0;
}
END_TEST

START_TEST(spawn_hostile)
{
    static const struct {
        const char *req, *why;
    } bad[] = {
        {"cmd=spawn;ncmds=100000;preputcount=0;", "ncmds=100000 is not a count in 0..64"},
        {"cmd=spawn;ncmds=-1;preputcount=0;", "ncmds=-1 is not a count in 0..64"},
        {"cmd=spawn;ncmds=0;preputcount=0;", "ncmds=0"},
        {"cmd=spawn;ncmds=1;preputcount=99999999999;", "preputcount=99999999999 is not a "
                                                       "count in 0..64"},
        {"cmd=spawn;ncmds=1;preputcount=2;ppkey0=a;ppval0=b;",
         "request ends where ppkey1 was expected"},
        {"cmd=spawn;ncmds=1;preputcount=1;ppkey1=a;ppval1=b;", "ppkey0 expected, not ppkey1"},
        {"cmd=spawn;ncmds=1;preputcount=0;subcmd=/bin/a;maxprocs=5000;argc=0;",
         "maxprocs=5000 is not a count in 0..4096"},
        {"cmd=spawn;ncmds=2;preputcount=0;subcmd=/bin/a;maxprocs=4000;argc=0;"
         "subcmd=/bin/a;maxprocs=4000;argc=0;",
         "8000 processes asked, at most 4096 in one request"},
        {"cmd=spawn;ncmds=1;preputcount=0;subcmd=/bin/a;maxprocs=0;argc=0;",
         "no process to start (every maxprocs is 0)"},
        {"cmd=spawn;ncmds=1;preputcount=0;subcmd=/bin/a;maxprocs=1;argc=1000000;",
         "argc=1000000 is not a count in 0..256"},
        {"cmd=spawn;ncmds=1;preputcount=0;subcmd=/bin/a;maxprocs=1;argc=2;argv0=x;",
         "request ends where argv1 was expected"},
        {"cmd=spawn;ncmds=1;preputcount=0;subcmd=/bin/a;maxprocs=1;argc=0;"
         "infokeycount=65;",
         "infokeycount=65 is not a count in 0..64"},
        {"cmd=spawn;ncmds=1;preputcount=0;subcmd=/bin/a;maxprocs=1;argc=0;junk=1;",
         "unexpected junk after the last command"},
        {"cmd=spawn;ncmds=2;preputcount=0;subcmd=/bin/a;maxprocs=1;argc=0;",
         "request ends where subcmd was expected"},
        {"cmd=spawn;ncmds=1;preputcount=0;subcmd=;maxprocs=1;argc=0;", "empty subcmd"},
        {"cmd=spawn;ncmds=1;preputcount=0;maxprocs=1;subcmd=/bin/a;argc=0;",
         "subcmd expected, not maxprocs"},
    };
    struct ft *ft = spawn_job(1);
    char want[512];
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ft_send2(ft, 0, bad[i].req);
        snprintf(want, sizeof(want), "cmd=spawn-response;rc=-1;errmsg=spawn: %s;",
                 bad[i].why);
        EXPECT2(ft, 0, want);
    }
    /* a string past PSRV_SPAWN_MAX_STR */
    size_t big = PSRV_SPAWN_MAX_STR + 10;
    char *req = malloc(big + 200);
    int n = snprintf(req, 200, "cmd=spawn;ncmds=1;preputcount=0;subcmd=/bin/a;maxprocs=1;"
                               "argc=1;argv0=");
    memset(req + n, 'a', big);
    strcpy(req + n + big, ";");
    ft_send2(ft, 0, req);
    free(req);
    char *got = ft_take(ft, 0);
    ck_assert_msg(strstr(got, "errmsg=spawn: argv longer than 4096 bytes;") != NULL, "%s",
                  got);
    free(got);
    ck_assert_int_eq(ft->nodes[0].nspawn, 0); /* nothing reached the host */
    still_serves(ft);
    ft_destroy(ft);

    /* the host refuses: its reason reaches the task */
    ft = spawn_job(2);
    ft_send2(ft, 1, "cmd=spawn;ncmds=1;preputcount=0;subcmd=/bin/a;maxprocs=1;argc=0;");
    EXPECT2(ft, 1, "cmd=spawn-response;rc=-1;errmsg=the host says no;");
    still_serves(ft);
    ft_destroy(ft);
    ft_spawn_mode = 0;
}
END_TEST

/* Every immediate refusal of a spawn echoes the request's thrid, wherever the
 * thrid sits in the request (a threaded client matches replies by it). */
START_TEST(spawn_error_thrid)
{
    struct ft *ft = spawn_job(1);
    /* refused by the parser, thrid last */
    ft_send2(ft, 0, "cmd=spawn;ncmds=0;preputcount=0;thrid=t1;");
    EXPECT2(ft, 0, "cmd=spawn-response;thrid=t1;rc=-1;errmsg=spawn: ncmds=0;");
    /* one in flight (thrid t2), a second refused (t3), the first answered (t2) */
    ft_send2(ft, 0, "cmd=spawn;thrid=t2;ncmds=1;preputcount=0;subcmd=/bin/a;maxprocs=1;"
                    "argc=0;");
    ft_send2(ft, 0, "cmd=spawn;ncmds=1;preputcount=0;subcmd=/bin/a;maxprocs=1;argc=0;"
                    "thrid=t3;");
    EXPECT2(ft, 0, "cmd=spawn-response;thrid=t3;rc=-1;errmsg=spawn: this task already "
                   "has a spawn in flight;");
    psrv_spawn_done(ft->nodes[0].srv, ft->nodes[0].spawn_id, -1, NULL, NULL, 1, "no");
    EXPECT2(ft, 0, "cmd=spawn-response;thrid=t2;rc=-1;errmsg=no;");
    ft_destroy(ft);

    /* the host refuses at once */
    ft = spawn_job(2);
    ft_send2(ft, 1, "cmd=spawn;ncmds=1;thrid=t4;preputcount=0;subcmd=/bin/a;maxprocs=1;"
                    "argc=0;");
    EXPECT2(ft, 1, "cmd=spawn-response;thrid=t4;rc=-1;errmsg=the host says no;");
    ft_destroy(ft);
    ft_spawn_mode = 0;

    /* no spawn at this host */
    ft = job(1);
    init2(ft, 0);
    ft_send2(ft, 0, "cmd=spawn;thrid=t5;ncmds=1;preputcount=0;subcmd=/bin/a;maxprocs=1;"
                    "argc=0;");
    EXPECT2(ft, 0, "cmd=spawn-response;thrid=t5;rc=-1;errmsg=spawn is not supported by "
                   "this host;");
    ft_destroy(ft);
}
END_TEST

static const struct psrv_kv spawned_pp[] = {{"PARENT_ROOT_PORT_NAME", "tag#0$x$"},
                                            {"k2", "v2"}};
static void spawned_cfg(struct psrv_config *cfg)
{
    cfg->spawner_jobid = "42.0";
    cfg->npreput = 2;
    cfg->preput = spawned_pp;
}

START_TEST(spawned_job_view)
{
    int rn[1] = {0};
    struct ft *ft = ft_create_cfg(1, 2, rn, 1, 5000, spawned_cfg);
    ft_send(ft, 0, "cmd=init pmi_version=2 pmi_subversion=0\n");
    EXPECT(ft, 0, "cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\n");
    ft_send2(ft, 0, "cmd=fullinit;pmirank=0;threaded=FALSE;");
    char *got = ft_take(ft, 0);
    ck_assert_msg(strstr(got, ";spawner-jobid=42.0;") != NULL, "%s", got);
    free(got);
    /* before any fence: the preput pairs are there */
    ft_send2(ft, 0, "cmd=kvs-get;jobid=42.0;srcid=-1;key=PARENT_ROOT_PORT_NAME;");
    EXPECT2(ft, 0, "cmd=kvs-get-response;rc=0;found=TRUE;value=tag#0$x$;");
    ft_send2(ft, 0, "cmd=kvs-get;jobid=42.0;srcid=-1;key=k2;");
    EXPECT2(ft, 0, "cmd=kvs-get-response;rc=0;found=TRUE;value=v2;");
    ft_destroy(ft);
}
END_TEST

START_TEST(abort_slurm_style)
{
    struct ft *ft = job(2);
    init2(ft, 1);
    ck_assert_int_eq(ft_send2(ft, 1, "cmd=abort;isworld=FALSE;msg=bad thing;"), 0);
    EXPECT(ft, 1, "");
    ck_assert_int_eq(ft->nodes[0].naborts, 1);
    ck_assert_int_eq(ft->nodes[0].abort_rank, 1);
    ck_assert_int_eq(ft->nodes[0].abort_code, 1);
    ck_assert_str_eq(ft->nodes[0].abort_msg,
                     "rank 1 called PMI abort (exit code 1, isworld=FALSE treated as "
                     "world): bad thing");
    ft_destroy(ft);
}
END_TEST

START_TEST(abort_mpich_style)
{
    struct ft *ft = job(2);
    init2(ft, 0);
    ft_send2(ft, 0, "cmd=abort;exitcode=13;message=out of memory;");
    ck_assert_int_eq(ft->nodes[0].abort_rank, 0);
    ck_assert_int_eq(ft->nodes[0].abort_code, 13);
    ck_assert_str_eq(ft->nodes[0].abort_msg,
                     "rank 0 called PMI abort (exit code 13): out of memory");
    ft_destroy(ft);
}
END_TEST

START_TEST(ring_one_node)
{
    struct ft *ft = job(3);
    for (int r = 0; r < 3; r++)
        init2(ft, r);
    ft_send2(ft, 2, "cmd=ring;ring-count=1;ring-left=c;ring-right=c;");
    ft_send2(ft, 0, "cmd=ring;thrid=r0;ring-count=1;ring-left=a;ring-right=a;");
    EXPECT(ft, 0, "");
    ft_send2(ft, 1, "cmd=ring;ring-count=1;ring-left=b;ring-right=b;");
    EXPECT2(ft, 0,
            "cmd=ring-response;thrid=r0;rc=0;ring-count=0;ring-left=c;ring-right=b;");
    EXPECT2(ft, 1, "cmd=ring-response;rc=0;ring-count=1;ring-left=a;ring-right=c;");
    EXPECT2(ft, 2, "cmd=ring-response;rc=0;ring-count=2;ring-left=b;ring-right=a;");
    /* a second ring works too */
    for (int r = 0; r < 3; r++)
        ft_send2(ft, r, "cmd=ring;ring-count=1;ring-left=L;ring-right=R;");
    EXPECT2(ft, 1, "cmd=ring-response;rc=0;ring-count=1;ring-left=R;ring-right=L;");
    ft_destroy(ft);
}
END_TEST

START_TEST(framing_variants)
{
    struct ft *ft = job(1);
    ft_send(ft, 0, "cmd=init pmi_version=2 pmi_subversion=0\n");
    free(ft_take(ft, 0));
    /* right-justified (MPICH >= 4.1), zero-padded, and two in one read */
    const char *two = "    13cmd=fullinit;000014cmd=job-getid;";
    ck_assert_int_eq(ft_input(ft, 0, two, strlen(two)), 0);
    char *got = ft_take(ft, 0);
    ck_assert_msg(strstr(got, "cmd=fullinit-response;rc=0;") &&
                      strstr(got, "cmd=job-getid-response;rc=0;jobid=42.0;"),
                  "%s", got);
    free(got);
    /* one byte at a time */
    const char *one = "14    cmd=job-getid;";
    for (const char *p = one; *p; p++)
        ck_assert_int_eq(ft_input(ft, 0, p, 1), 0);
    EXPECT2(ft, 0, "cmd=job-getid-response;rc=0;jobid=42.0;");
    ft_destroy(ft);
}
END_TEST

START_TEST(bad_length_field)
{
    struct ft *ft = job(2);
    init2(ft, 0);
    init2(ft, 1);
    ck_assert_int_eq(ft_input(ft, 1, "xyzzy!cmd=job-getid;", 20), -EPROTO);
    char *got = ft_take(ft, 1);
    ck_assert_msg(strstr(got, "cmd=error;rc=-1;errmsg=malformed request") != NULL, "%s",
                  got);
    free(got);
    ck_assert_int_eq(ft->nodes[0].naborts, 1);
    ck_assert_int_eq(ft->nodes[0].abort_rank, 1);
    ck_assert_msg(strstr(ft->nodes[0].abort_msg, "rank 1 sent a malformed PMI request"),
                  "%s", ft->nodes[0].abort_msg);
    /* rank 0 unaffected */
    ft_send2(ft, 0, "cmd=job-getid;");
    EXPECT2(ft, 0, "cmd=job-getid-response;rc=0;jobid=42.0;");
    ft_destroy(ft);
}
END_TEST

START_TEST(zero_length)
{
    struct ft *ft = job(1);
    init2(ft, 0);
    ck_assert_int_eq(ft_input(ft, 0, "0     ", 6), -EPROTO);
    ck_assert_int_eq(ft->nodes[0].naborts, 1);
    ft_destroy(ft);
}
END_TEST

START_TEST(unparseable_body)
{
    struct ft *ft = job(1);
    init2(ft, 0);
    ck_assert_int_eq(ft_send2(ft, 0, "garbage"), -EPROTO);
    ck_assert_int_eq(ft->nodes[0].abort_rank, 0);
    ft_destroy(ft);
}
END_TEST

/* Seeded mutations of the captured streams (byte flips, insertions,
 * deletions), fed in random-sized pieces to a 3-rank, 2-node job: the core
 * must never crash, and input after a protocol error is refused.
 * FUZZ_ITERS=n runs more (300 by default). */
START_TEST(mutated_streams)
{
    const char *files[] = {"slurm-22.05.8-libpmi2-rank0.in",
                           "slurm-22.05.8-libpmi2-rank1.in", "mpich-4.0.2-pmi1-rank0.in",
                           "mpich-4.0.2-pmi1-rank1.in"};
    unsigned seed = 4242;
    size_t len[4];
    char *orig[4];
    for (int f = 0; f < 4; f++)
        orig[f] = read_fixture(files[f], &len[f]);
    const int rn[] = {0, 0, 1};
    int iters = getenv("FUZZ_ITERS") ? atoi(getenv("FUZZ_ITERS")) : 300;
    for (int iter = 0; iter < iters; iter++) {
        struct ft *ft = ft_create(2, 2, rn, 3, 1000);
        for (int r = 0; r < 3; r++) {
            int f = (int)(rand_r(&seed) % 4);
            size_t n = len[f];
            char *buf = malloc(n + 64);
            memcpy(buf, orig[f], n);
            int nmut = 1 + (int)(rand_r(&seed) % 4);
            for (int k = 0; k < nmut; k++) {
                size_t at = rand_r(&seed) % n;
                switch (rand_r(&seed) % 3) {
                case 0:
                    buf[at] = (char)(rand_r(&seed) & 0xff);
                    break;
                case 1:
                    memmove(buf + at + 1, buf + at, n - at);
                    buf[at] = "=; \n0x"[rand_r(&seed) % 6];
                    n++;
                    break;
                default:
                    if (n > 1) {
                        memmove(buf + at, buf + at + 1, n - at - 1);
                        n--;
                    }
                }
            }
            bool bad = false;
            for (size_t off = 0; off < n;) {
                size_t piece = 1 + rand_r(&seed) % 64;
                if (piece > n - off)
                    piece = n - off;
                int rc = ft_input(ft, r, buf + off, piece);
                ck_assert(rc == 0 || rc == 1 || rc == -EPROTO);
                if (bad)
                    ck_assert_int_ne(rc, 0);
                if (rc != 0)
                    bad = true;
                off += piece;
                ft_run(ft, FT_FIFO);
            }
            free(buf);
            free(ft_take(ft, r));
        }
        ft_advance(ft, 2000);
        ft_run(ft, FT_FIFO);
        ft_destroy(ft);
    }
    for (int f = 0; f < 4; f++)
        free(orig[f]);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("proto_pmi2");
    TCase *tc = tcase_create("pmi2");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, slurm_libpmi2_replay);
    tcase_add_test(tc, slurm_libpmi2_with_jobid);
    tcase_add_test(tc, thrid_echo_and_not_found);
    tcase_add_test(tc, fullinit_variants);
    tcase_add_test(tc, put_limits);
    tcase_add_test(tc, nodeattr_wait);
    tcase_add_test(tc, name_service);
    tcase_add_test(tc, unsupported_commands);
    tcase_add_test(tc, spawn_to_host);
    tcase_add_test(tc, spawn_hostile);
    tcase_add_test(tc, spawn_error_thrid);
    tcase_add_test(tc, spawned_job_view);
    tcase_add_test(tc, abort_slurm_style);
    tcase_add_test(tc, abort_mpich_style);
    tcase_add_test(tc, ring_one_node);
    tcase_add_test(tc, framing_variants);
    tcase_add_test(tc, bad_length_field);
    tcase_add_test(tc, zero_length);
    tcase_add_test(tc, unparseable_body);
    tcase_add_test(tc, mutated_streams);
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
