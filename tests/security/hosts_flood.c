/* hosts_flood.c - PMI-2 tasks that attack their host: one floods its server with
 * requests and never reads the replies (t-hosts-flood*.sh); one feeds it text
 * with newlines and escape bytes meant for the host's log (t-hosts-logesc*.sh).
 *
 * Usage: hosts_flood MIB          (run with exactly 2 ranks, PMI-2 wire on PMI_FD)
 *   Both ranks init (PMI-1 "init" line, then PMI-2 "fullinit"); rank 0 puts key
 *   "k" with a 1024-byte value (the largest legal one, so every kvs-get reply is
 *   as large as a reply can be); both fence.  Then both wait for the file named by
 *   HOSTS_FLOOD_GO (at most 60 s), after creating HOSTS_FLOOD_READY.
 *   Rank 0 writes MIB MiB of pipelined "kvs-get k" records and never reads; it stops
 *   early when its socket takes nothing for 3 s (the server stopped reading it),
 *   prints "hosts_flood: rank 0: wrote N bytes", creates HOSTS_FLOOD_DONE and
 *   sleeps up to 120 s (the test kills the job), then exits 3.
 *   Rank 1 then does 200 kvs-get round trips (each reply awaited at most 10 s) and
 *   prints "hosts_flood: rank 1: 200 gets served while rank 0 flooded OK" on stdout,
 *   then finalizes and exits 0 (exit 1 if the server did not answer).
 *
 *
 * Usage: hosts_flood abort        (2 ranks)
 *   Rank 0 sends a fullinit whose pmijobid, then an unknown command whose name,
 *   then an abort whose message carry "\n", "\r", ESC sequences and BEL, each
 *   trying to forge a line of its own (FORGED_LINE below); rank 1 waits in a fence.
 *   The job must end with the abort, the host's lines showing the bytes escaped.
 *
 * Usage: hosts_flood logflood N  (1 or more ranks)
 *   Rank 0 sends N requests with an unknown command, each with a different name,
 *   reading every reply, then finalizes; the others just init and finalize.  Each
 *   one is a warning of the server: the host's log must not get N lines.
 *
 * Notes: raw records, no client library: the program must never read what it
 *   is sent once the flood starts, which no PMI library allows.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PROG "hosts_flood"

static int g_rank = -1;

static int env_int(const char *name)
{
    const char *s = getenv(name);
    char *end;
    long v;

    if (!s || !*s)
        return -1;
    v = strtol(s, &end, 10);
    return (*end || v < 0 || v > 1 << 20) ? -1 : (int)v;
}

static void die(const char *what)
{
    fprintf(stderr, PROG ": rank %d: %s\n", g_rank, what);
    exit(1);
}

/* Write everything; a wait for room is bounded by ms.  Returns the count written. */
static size_t write_some(int fd, const char *buf, size_t len, int ms)
{
    size_t done = 0;

    while (done < len) {
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        int r = poll(&p, 1, ms);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        ssize_t n = write(fd, buf + done, len - done);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0)
            break;
        done += (size_t)n;
    }
    return done;
}

static void send_raw(int fd, const char *s)
{
    if (write_some(fd, s, strlen(s), 10000) != strlen(s))
        die("cannot write to the server");
}

static void send_record(int fd, const char *body)
{
    char hdr[24];

    snprintf(hdr, sizeof(hdr), "%-6zu", strlen(body));
    send_raw(fd, hdr);
    send_raw(fd, body);
}

static int read_all(int fd, char *buf, size_t len, int ms)
{
    while (len > 0) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, ms);
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

/* One PMI-2 record; dies unless its body contains want. */
static void expect_record(int fd, const char *want)
{
    char hdr[7] = {0}, body[8192];
    long len;

    if (read_all(fd, hdr, 6, 10000) < 0)
        die("no reply from the server");
    len = strtol(hdr, NULL, 10);
    if (len <= 0 || len >= (long)sizeof(body) ||
        read_all(fd, body, (size_t)len, 10000) < 0)
        die("bad reply from the server");
    body[len] = '\0';
    if (!strstr(body, want) || !strstr(body, "rc=0"))
        die("unexpected reply from the server");
}

static void wait_file(const char *path)
{
    struct stat sb;

    for (int i = 0; path && i < 6000; i++) {
        if (stat(path, &sb) == 0)
            return;
        usleep(10000);
    }
    die("the test never said go");
}

static void touch(const char *path)
{
    int fd = path ? open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600) : -1;

    if (fd >= 0)
        close(fd);
}

/* What the hostile texts try to make appear as a line of the host's own. */
#define FORGED_LINE "FORGED: all ranks exited normally"
#define EVIL "\n" FORGED_LINE "\r\033[2J\033]0:owned\007\177"

static void hostile_texts(int fd)
{
    send_record(fd, "cmd=fullinit;pmijobid=job" EVIL ";");
    if (g_rank != 0) {
        expect_record(fd, "fullinit-response");
        send_record(fd, "cmd=kvs-fence;");
        expect_record(fd, "kvs-fence-response"); /* must fail: dies */
        exit(0);
    }
    expect_record(fd, "fullinit-response");
    send_record(fd, "cmd=nosuchcmd" EVIL ";");
    usleep(200000);
    send_record(fd, "cmd=abort;isworld=TRUE;exitcode=7;msg=bye" EVIL ";");
    sleep(10);
    exit(0);
}

static void log_flood(int fd, long n)
{
    char rec[64];

    send_record(fd, "cmd=fullinit;");
    expect_record(fd, "fullinit-response");
    for (long i = 0; g_rank == 0 && i < n; i++) {
        char hdr[7] = {0}, body[8192];
        long len;
        snprintf(rec, sizeof(rec), "cmd=nosuchcmd%ld;", i);
        send_record(fd, rec);
        if (read_all(fd, hdr, 6, 10000) < 0)
            die("no reply to an unknown command");
        len = strtol(hdr, NULL, 10);
        if (len <= 0 || len >= (long)sizeof(body) ||
            read_all(fd, body, (size_t)len, 10000) < 0)
            die("bad reply to an unknown command");
    }
    if (g_rank == 0)
        printf(PROG ": rank 0: %ld unknown commands answered\n", n);
    send_record(fd, "cmd=finalize;");
    expect_record(fd, "finalize-response");
    exit(0);
}

int main(int argc, char **argv)
{
    int fd = env_int("PMI_FD");
    int abort_mode = argc > 1 && strcmp(argv[1], "abort") == 0;
    int logflood = argc > 2 && strcmp(argv[1], "logflood") == 0;
    long mib = argc > 1 ? strtol(argv[1], NULL, 10) : 4;
    char line[256], put[1200], val[1025];

    g_rank = env_int("PMI_RANK");
    if (logflood)
        mib = strtol(argv[2], NULL, 10);
    if (fd < 0 || g_rank < 0 || (!abort_mode && !logflood && (mib < 1 || mib > 256)) ||
        (logflood && (mib < 1 || mib > 1000000)))
        die("usage: hosts_flood MIB (1..256) | abort | logflood N, under a PMI-2 server");
    setvbuf(stdout, NULL, _IONBF, 0);

    /* init: the PMI-1 line, its PMI-1 reply, then PMI-2 records */
    send_raw(fd, "cmd=init pmi_version=2 pmi_subversion=0\n");
    for (size_t n = 0; n + 1 < sizeof(line); n++) {
        if (read_all(fd, line + n, 1, 10000) < 0)
            die("no init reply");
        if (line[n] == '\n')
            break;
    }
    if (abort_mode)
        hostile_texts(fd);
    if (logflood)
        log_flood(fd, mib);
    send_record(fd, "cmd=fullinit;");
    expect_record(fd, "fullinit-response");
    if (g_rank == 0) {
        memset(val, 'v', 1024);
        val[1024] = '\0';
        snprintf(put, sizeof(put), "cmd=kvs-put;key=k;value=%s;", val);
        send_record(fd, put);
        expect_record(fd, "kvs-put-response");
    }
    send_record(fd, "cmd=kvs-fence;");
    expect_record(fd, "kvs-fence-response");
    if (g_rank == 0)
        touch(getenv("HOSTS_FLOOD_READY"));
    wait_file(getenv("HOSTS_FLOOD_GO"));

    if (g_rank == 0) {
        static const char rec[] = "18    cmd=kvs-get;key=k;";
        size_t reclen = sizeof(rec) - 1, total = (size_t)mib << 20, done = 0;
        char *buf = malloc(1 << 16);
        size_t per = (1 << 16) / reclen;
        if (!buf)
            die("out of memory");
        for (size_t i = 0; i < per; i++)
            memcpy(buf + i * reclen, rec, reclen);
        while (done < total) {
            size_t want = per * reclen, n = write_some(fd, buf, want, 3000);
            done += n;
            if (n < want)
                break;
        }
        printf(PROG ": rank 0: wrote %zu bytes\n", done);
        touch(getenv("HOSTS_FLOOD_DONE"));
        sleep(120);
        return 3;
    }
    usleep(500000);
    for (int i = 0; i < 200; i++) {
        send_record(fd, "cmd=kvs-get;key=k;");
        expect_record(fd, "kvs-get-response");
    }
    printf(PROG ": rank 1: 200 gets served while rank 0 flooded OK\n");
    send_record(fd, "cmd=finalize;");
    expect_record(fd, "finalize-response");
    return 0;
}
