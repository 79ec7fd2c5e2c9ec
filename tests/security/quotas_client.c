/* quotas_client.c - a hostile PMI task for the quota and log tests of the
 * server core (t-quotas-*.sh): it speaks the PMI-1 or PMI-2 wire itself on
 * PMI_FD (common/pmi_wire.c builds and frames the records), so it can send
 * what no PMI library would.
 *
 * Usage: quotas_client [-1] SCENARIO [N]      (one rank; -1: PMI-1, else PMI-2)
 *   puts N       N puts of distinct keys (1000-byte values; QC_VALLEN changes it)
 *   names N      N name publications
 *   nodeattrs N  N node attribute puts (PMI-2 only)
 *   badreqs N    N unknown commands and N puts without a key, then finalize
 *   abortctl     abort with a message full of control bytes and a fake log line
 *   unknownctl   one unknown command whose name holds control bytes, then finalize
 * A flood stops at the first refusal and prints on stdout
 *   "quotas_client: <what> <i> refused rc=<rc> msg=<text>"
 * or "quotas_client: all <N> <what> accepted", then the server's memory
 *   "quotas_client: server VmHWM=<kB> VmRSS=<kB>"
 * (the parent process: mpiexec runs its ranks itself).  Exit status 0 when the
 * scenario ran to its end (a refusal included), 1 when the server accepted a
 * whole flood, 2 for a usage or I/O error.
 *
 * Notes: SIGTERM is blocked: a refused quota ends the job, and the report
 * must still reach stdout (mpiexec's SIGKILL comes after its grace period).
 * After a refusal the client waits up to 10 s for that end, so the job's
 * status is the host's verdict, not the client's own exit.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pmi_wire.h"

#define PROG "quotas_client"

static int g_fd = -1;
static enum pmi_version g_v = PMI_V2;
static char g_in[1 << 17];
static size_t g_inlen;

static void die(const char *what)
{
    fprintf(stderr, PROG ": %s: %s\n", what, errno ? strerror(errno) : "failed");
    exit(2);
}

static void send_out(struct pmi_out *o)
{
    if (pmi_out_end(o) < 0)
        die("cannot build a request");
    for (size_t off = 0; off < o->len;) {
        ssize_t n = write(g_fd, o->buf + off, o->len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            die("write to PMI_FD");
        off += (size_t)n;
    }
    pmi_out_free(o);
}

/* Next reply (v: its framing), parsed into m; waits up to 20 s. */
static void recv_msg(enum pmi_version v, struct pmi_msg *m)
{
    for (;;) {
        size_t flen, blen;
        const char *body;
        int r = pmi_frame_next(v, g_in, g_inlen, &flen, &body, &blen);
        if (r < 0) {
            errno = -r;
            die("bad reply framing");
        }
        if (r == 1) {
            int rc = v == PMI_V2 ? pmi_msg_parse_v2(m, body, blen)
                                 : pmi_msg_parse_v1(m, body, blen);
            if (rc < 0) {
                errno = -rc;
                die("bad reply");
            }
            memmove(g_in, g_in + flen, g_inlen - flen);
            g_inlen -= flen;
            return;
        }
        struct pollfd p = {.fd = g_fd, .events = POLLIN};
        int pr = poll(&p, 1, 20000);
        if (pr == 0) {
            errno = ETIMEDOUT;
            die("waiting for a reply");
        }
        if (pr < 0)
            continue;
        ssize_t n = read(g_fd, g_in + g_inlen, sizeof(g_in) - g_inlen);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            errno = n == 0 ? EPIPE : errno;
            die("reading a reply");
        }
        g_inlen += (size_t)n;
    }
}

static int reply_rc(const struct pmi_msg *m)
{
    int rc = -999;
    (void)pmi_msg_get_int(m, "rc", &rc);
    return rc;
}

static const char *reply_text(const struct pmi_msg *m)
{
    const char *t = pmi_msg_get(m, g_v == PMI_V2 ? "errmsg" : "msg");
    return t ? t : "";
}

static void server_memory(void)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)getppid());
    FILE *f = fopen(path, "r");
    long hwm = -1, rss = -1;
    if (f) {
        while (fgets(line, sizeof(line), f)) {
            sscanf(line, "VmHWM: %ld", &hwm);
            sscanf(line, "VmRSS: %ld", &rss);
        }
        fclose(f);
    }
    printf(PROG ": server VmHWM=%ld VmRSS=%ld\n", hwm, rss);
    fflush(stdout);
}

static void init(void)
{
    struct pmi_out o;
    struct pmi_msg m;

    pmi_out_begin(&o, PMI_V1, "init");
    pmi_out_add(&o, "pmi_version", g_v == PMI_V2 ? "2" : "1");
    pmi_out_add(&o, "pmi_subversion", g_v == PMI_V2 ? "0" : "1");
    send_out(&o);
    recv_msg(PMI_V1, &m);
    if (reply_rc(&m) != 0)
        die("init refused");
    pmi_msg_free(&m);
    if (g_v == PMI_V2) {
        pmi_out_begin(&o, PMI_V2, "fullinit");
        pmi_out_add(&o, "pmirank", getenv("PMI_RANK") ? getenv("PMI_RANK") : "0");
        send_out(&o);
        recv_msg(PMI_V2, &m);
        if (reply_rc(&m) != 0)
            die("fullinit refused");
        pmi_msg_free(&m);
    }
}

/* One request and its reply: returns the reply's rc; text gets its message. */
static int request(struct pmi_out *o, char *text, size_t textlen)
{
    struct pmi_msg m;
    send_out(o);
    recv_msg(g_v, &m);
    int rc = reply_rc(&m);
    if (text)
        snprintf(text, textlen, "%s", reply_text(&m));
    pmi_msg_free(&m);
    return rc;
}

static void finalize(void)
{
    struct pmi_out o;
    pmi_out_begin(&o, g_v, "finalize");
    (void)request(&o, NULL, 0);
}

/* The i-th request of a flood. */
static void flood_req(struct pmi_out *o, const char *what, long i, const char *val)
{
    char key[32];
    snprintf(key, sizeof(key), "q%ld", i);
    if (strcmp(what, "puts") == 0) {
        pmi_out_begin(o, g_v, g_v == PMI_V2 ? "kvs-put" : "put");
        if (g_v == PMI_V1)
            pmi_out_add(o, "kvsname", "x");
        pmi_out_add(o, "key", key);
        pmi_out_add(o, "value", val);
    } else if (strcmp(what, "names") == 0) {
        pmi_out_begin(o, g_v, g_v == PMI_V2 ? "name-publish" : "publish_name");
        pmi_out_add(o, g_v == PMI_V2 ? "name" : "service", key);
        pmi_out_add(o, "port", val);
    } else {
        pmi_out_begin(o, g_v, "info-putnodeattr");
        pmi_out_add(o, "key", key);
        pmi_out_add(o, "value", val);
    }
}

static int flood(const char *what, long n)
{
    long vlen = getenv("QC_VALLEN") ? atol(getenv("QC_VALLEN")) : 1000;
    if (vlen < 1 || vlen > PMI_MAX_VALLEN)
        vlen = 1000;
    char *val = malloc((size_t)vlen + 1);
    if (!val)
        die("malloc");
    memset(val, 'v', (size_t)vlen);
    val[vlen] = '\0';
    for (long i = 0; i < n; i++) {
        struct pmi_out o;
        char text[512];
        flood_req(&o, what, i, val);
        int rc = request(&o, text, sizeof(text));
        if (rc != 0) {
            printf(PROG ": %s %ld refused rc=%d msg=%s\n", what, i, rc, text);
            server_memory();
            free(val);
            sleep(10); /* the job ends us (SIGKILL after the host's grace) */
            return 0;
        }
    }
    printf(PROG ": all %ld %s accepted\n", n, what);
    server_memory();
    free(val);
    finalize();
    return 1;
}

static int badreqs(long n)
{
    for (long i = 0; i < n; i++) {
        struct pmi_out o;
        pmi_out_begin(&o, g_v, "no-such-command");
        (void)request(&o, NULL, 0);
        pmi_out_begin(&o, g_v, g_v == PMI_V2 ? "kvs-put" : "put");
        pmi_out_add(&o, "value", "novalue");
        (void)request(&o, NULL, 0);
    }
    printf(PROG ": sent %ld bad requests\n", 2 * n);
    server_memory();
    finalize();
    return 0;
}

static const char evil[] = "evil\x1b[31mRED\r\nmpiexec: FAKE LOG LINE\x07\x7f\xc3\xa9";

static int abortctl(void)
{
    struct pmi_out o;
    pmi_out_begin(&o, g_v, "abort");
    pmi_out_add(&o, "exitcode", "7");
    pmi_out_add(&o, g_v == PMI_V2 ? "message" : "msg", evil);
    if (g_v == PMI_V2)
        pmi_out_add(&o, "isworld", "TRUE");
    send_out(&o);
    printf(PROG ": abort sent\n");
    fflush(stdout);
    sleep(20); /* the job ends us */
    return 0;
}

static int unknownctl(void)
{
    struct pmi_out o;
    pmi_out_begin(&o, g_v, "ev\x1b[2Jil\x07");
    (void)request(&o, NULL, 0);
    printf(PROG ": unknown command sent\n");
    finalize();
    return 0;
}

int main(int argc, char **argv)
{
    sigset_t ss;
    int a = 1;

    sigemptyset(&ss);
    sigaddset(&ss, SIGTERM);
    sigprocmask(SIG_BLOCK, &ss, NULL);
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (a < argc && strcmp(argv[a], "-1") == 0) {
        g_v = PMI_V1;
        a++;
    }
    if (a >= argc) {
        fprintf(stderr,
                "usage: " PROG " [-1] puts|names|nodeattrs|badreqs N | abortctl | "
                "unknownctl\n");
        return 2;
    }
    const char *sc = argv[a];
    long n = a + 1 < argc ? atol(argv[a + 1]) : 0;
    const char *fd = getenv("PMI_FD");
    if (!fd || (g_fd = atoi(fd)) < 0)
        die("no PMI_FD");
    init();
    if (!strcmp(sc, "puts") || !strcmp(sc, "names") || !strcmp(sc, "nodeattrs"))
        return flood(sc, n);
    if (!strcmp(sc, "badreqs"))
        return badreqs(n);
    if (!strcmp(sc, "abortctl"))
        return abortctl();
    if (!strcmp(sc, "unknownctl"))
        return unknownctl();
    fprintf(stderr, PROG ": unknown scenario %s\n", sc);
    return 2;
}
