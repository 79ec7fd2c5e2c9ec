/* pmi_misbehave.c - PMI-2 clients that misbehave on purpose, for the failure tests.
 *
 * Usage: pmi_misbehave SCENARIO        (run with 2 or more ranks)
 *   die-before-fence  rank 1 exits with code 3 right after PMI2_Init; the others fence.
 *   abort             rank 1 calls PMI2_Abort(1, msg) after init; the others fence.
 *   garbage           rank 1 writes garbage bytes on PMI_FD, waits up to 10 s for the
 *                     server's reaction (error reply or EOF), then exits 4; others fence.
 *   bigkey, bigval    rank 0 writes a raw kvs-put record with a 65-byte key (bigkey) or a
 *                     1025-byte value (bigval) on PMI_FD and reads the reply itself: an
 *                     error reply (rc!=0) is the expected outcome; rank 0 then finalises
 *                     and exits 0 (exit 1 if the server accepted it or did not answer
 *                     within 10 s). The other ranks init and finalise.
 *   no-finalize       everyone inits and fences; rank 1 then exits 0 without finalising
 *                     while the others fence a second time.
 * Every rank says on stderr what it is about to do ("pmi_misbehave: rank R: ...").
 * A fence that fails is reported (exit 1); a fence that succeeds where the scenario
 * should have broken the job is reported as unexpected (exit 5). bigkey/bigval print
 * "pmi_misbehave: bigkey: rejected by the server rc=N OK" on stdout from rank 0.
 *
 * Notes: the raw records use the PMI-2 framing (6-byte left-justified length) on the
 *   fd the PMI-2 library itself uses; this is safe because the program is single
 *   threaded and the library waits for no reply at that moment.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-variable"
#pragma GCC diagnostic ignored "-Wunused-const-variable"
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#ifdef KVSTEST_SLURM
#include <slurm/pmi2.h>
#else
#include <pmi2.h>
#endif
#pragma GCC diagnostic pop

#define PROG "pmi_misbehave"

static int g_rank = -1;

static void say(const char *fmt, const char *arg)
{
    fprintf(stderr, PROG ": rank %d: ", g_rank);
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    fflush(stderr);
}

static int pmi_fd(void)
{
    const char *s = getenv("PMI_FD");
    char *end;
    long fd;
    if (!s || !*s)
        return -1;
    fd = strtol(s, &end, 10);
    return (*end || fd < 0 || fd > 65535) ? -1 : (int)fd;
}

static int write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Read exactly len bytes, each wait bounded by timeout_ms. 0 ok, -1 error/EOF/timeout. */
static int read_all(int fd, char *buf, size_t len, int timeout_ms)
{
    while (len > 0) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, timeout_ms);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        ssize_t n = read(fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

static int write_record(int fd, const char *body)
{
    char hdr[24];
    size_t len = strlen(body);
    if (len > 999999)
        return -1;
    snprintf(hdr, sizeof(hdr), "%-6zu", len);
    if (write_all(fd, hdr, 6) < 0 || write_all(fd, body, len) < 0)
        return -1;
    return 0;
}

/* Read one PMI-2 record into buf (NUL-terminated). Returns 0 or -1. */
static int read_record(int fd, char *buf, size_t size, int timeout_ms)
{
    char hdr[7] = {0};
    long len;
    if (read_all(fd, hdr, 6, timeout_ms) < 0)
        return -1;
    len = strtol(hdr, NULL, 10);
    if (len <= 0 || (size_t)len >= size)
        return -1;
    if (read_all(fd, buf, (size_t)len, timeout_ms) < 0)
        return -1;
    buf[len] = '\0';
    return 0;
}

/* Value of "rc=" in a record body; sets *found. */
static long record_rc(const char *body, int *found)
{
    const char *p = body;
    *found = 0;
    while ((p = strstr(p, "rc=")) != NULL) {
        if (p == body || p[-1] == ';') {
            *found = 1;
            return strtol(p + 3, NULL, 10);
        }
        p += 3;
    }
    return 0;
}

static int fence_expect_failure(const char *why)
{
    int rc;
    say("fencing (%s)", why);
    rc = PMI2_KVS_Fence();
    if (rc != PMI2_SUCCESS) {
        fprintf(stderr, PROG ": rank %d: fence failed rc=%d (expected)\n", g_rank, rc);
        return 1;
    }
    say("fence succeeded although %s: unexpected", why);
    return 5;
}

static int oversized(const char *what)
{
    int fd = pmi_fd(), found, rc;
    size_t klen = strcmp(what, "bigkey") == 0 ? PMI2_MAX_KEYLEN + 1 : 8;
    size_t vlen = strcmp(what, "bigval") == 0 ? PMI2_MAX_VALLEN + 1 : 8;
    char *body = malloc(klen + vlen + 64);
    char reply[4096];
    long src;

    if (fd < 0 || !body) {
        say("%s: no PMI_FD in the environment (or out of memory)", what);
        return 1;
    }
    strcpy(body, "cmd=kvs-put;key=");
    memset(body + strlen(body), 'K', klen);
    body[16 + klen] = '\0';
    strcat(body, ";value=");
    size_t off = strlen(body);
    memset(body + off, 'V', vlen);
    body[off + vlen] = '\0';
    strcat(body, ";");
    fprintf(stderr,
            PROG ": rank %d: %s: writing a raw kvs-put with a %zu-byte key and a "
                 "%zu-byte value on PMI_FD %d\n",
            g_rank, what, klen, vlen, fd);
    if (write_record(fd, body) < 0) {
        say("%s: write on PMI_FD failed", what);
        return 1;
    }
    free(body);
    if (read_record(fd, reply, sizeof(reply), 10000) < 0) {
        say("%s: no reply from the server within 10 s (or connection closed)", what);
        return 1;
    }
    src = record_rc(reply, &found);
    fprintf(stderr, PROG ": rank %d: %s: reply '%s'\n", g_rank, what, reply);
    if (!found || src == 0 || strstr(reply, "cmd=kvs-put-response;") != reply) {
        say("%s: the server did not reject the oversized put", what);
        return 1;
    }
    rc = PMI2_Finalize();
    if (rc != PMI2_SUCCESS)
        fprintf(stderr, PROG ": rank %d: PMI2_Finalize after %s rc=%d\n", g_rank, what,
                rc);
    printf(PROG ": %s: rejected by the server rc=%ld OK\n", what, src);
    fflush(stdout);
    return 0;
}

static int garbage(void)
{
    static const char junk[] = "@@garbage!\n\001\002\377cmd=;;;==\n";
    char buf[512];
    int fd = pmi_fd();
    if (fd < 0) {
        say("%s", "garbage: no PMI_FD in the environment");
        return 1;
    }
    fprintf(stderr,
            PROG ": rank %d: garbage: writing %zu garbage bytes on PMI_FD %d, "
                 "then waiting up to 10 s\n",
            g_rank, sizeof(junk) - 1, fd);
    if (write_all(fd, junk, sizeof(junk) - 1) < 0) {
        say("%s", "write failed (server already gone?)");
        return 4;
    }
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, 10000) <= 0) {
        say("%s", "no reaction from the server within 10 s");
        return 4;
    }
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    if (n <= 0) {
        say("%s", "server closed the connection");
    } else {
        buf[n] = '\0';
        say("server answered: %s", buf);
    }
    return 4;
}

int main(int argc, char **argv)
{
    int spawned, size, rank, appnum, rc;
    const char *sc = argc > 1 ? argv[1] : "";

    if (argc != 2 ||
        (strcmp(sc, "die-before-fence") && strcmp(sc, "abort") && strcmp(sc, "garbage") &&
         strcmp(sc, "bigkey") && strcmp(sc, "bigval") && strcmp(sc, "no-finalize"))) {
        fprintf(stderr, "usage: " PROG " die-before-fence|abort|garbage|bigkey|bigval|"
                        "no-finalize\n");
        return 2;
    }
    rc = PMI2_Init(&spawned, &size, &rank, &appnum);
    if (rc != PMI2_SUCCESS) {
        fprintf(stderr, PROG ": PMI2_Init failed rc=%d\n", rc);
        return 1;
    }
    g_rank = rank;
    if (size < 2 && strcmp(sc, "bigkey") && strcmp(sc, "bigval")) {
        say("scenario %s needs at least 2 ranks", sc);
        return 2;
    }

    if (!strcmp(sc, "die-before-fence")) {
        if (rank == 1) {
            say("%s: exiting with code 3 before the fence", sc);
            _exit(3);
        }
        return fence_expect_failure("rank 1 died before the fence");
    }
    if (!strcmp(sc, "abort")) {
        if (rank == 1) {
            say("%s: calling PMI2_Abort", sc);
            PMI2_Abort(1, "pmi_misbehave rank 1 aborts on purpose");
            say("%s", "PMI2_Abort returned");
            return 6;
        }
        return fence_expect_failure("rank 1 aborted");
    }
    if (!strcmp(sc, "garbage")) {
        if (rank == 1)
            return garbage();
        return fence_expect_failure("rank 1 wrote garbage");
    }
    if (!strcmp(sc, "bigkey") || !strcmp(sc, "bigval")) {
        if (rank == 0)
            return oversized(sc);
        say("%s: finalizing", sc);
        rc = PMI2_Finalize();
        return rc == PMI2_SUCCESS ? 0 : 1;
    }
    /* no-finalize */
    say("%s: first fence", sc);
    rc = PMI2_KVS_Fence();
    if (rc != PMI2_SUCCESS) {
        fprintf(stderr, PROG ": rank %d: first fence failed rc=%d\n", rank, rc);
        return 1;
    }
    if (rank == 1) {
        say("%s: exiting 0 without PMI2_Finalize", sc);
        _exit(0);
    }
    return fence_expect_failure("rank 1 left without finalize");
}
