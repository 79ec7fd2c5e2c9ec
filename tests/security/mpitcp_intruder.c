/*
 * mpitcp_intruder.c - attacks a Loom MPI rank's TCP listener (mpi/tcp/conn.c), as a
 *                     stranger on the network or as a rank of the job gone bad.
 *
 * Usage:
 *   mpitcp_intruder ext PORT JOBID
 *       A stranger (not a rank) against 127.0.0.1:PORT, one connection per attack:
 *       oldhello  the hello of the unauthenticated protocol (magic, rank 2, FNV hash of
 *                 the public job id), then forged packets as rank 2: an 8-byte message
 *                 with tag 7 and one whose header says 8 bytes but carries 1000;
 *       nosecret  the authenticated hello, then a proof of random bytes, then packets;
 *       wrongkey  a well-formed proof made with a key of its own, then packets;
 *       badhello  hellos with ranks out of range, for another rank, a bad magic;
 *       garbage   64 KiB of random bytes;
 *       flood     100 idle connections held for 3 s (more than the pending slots).
 *       Prints "attack NAME: refused" or "attack NAME: ACCEPTED" per attack; exit 0
 *       when every attack was refused, 1 otherwise.
 *   mpitcp_intruder int MODE
 *       Started as a rank (>= 2) of the job by mpiexec's MPMD syntax, beside ranks 0-1 of
 *       mpitcp_victim: reads the job's secret and rank 0's card from the KVS like a real
 *       rank (PMI-2), completes the handshake with rank 0 as itself, then breaks the
 *       protocol one way (MODE): src (a packet naming rank 1 as its source), long
 *       (payload longer than the header's len), huge (len 2^40), frag (a fragment
 *       without a message), cookie (RDATA for a request of rank 0 it never asked for),
 *       type (unknown type 42), rts (an RTS without its payload), replay (first a second
 *       connection that replays the first one's proof against a fresh challenge: must
 *       be refused; then the real proof; then mode src).  Rank 0 must end the job with
 *       a protocol error naming this rank; the intruder exits 3 after 10 s if it is
 *       still alive.  With no secret in the KVS (the unauthenticated tree) it sends the
 *       old hello instead, so that the test shows what the old code did.
 * The wire formats are written out here on purpose: this is what a peer sends.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../../common/mac.c"
#include "pkt.h"
#include "pmi2.h"

#define HS_MAGIC 0x324d4c4cu
#define OLD_MAGIC 0x54435031u /* low 32 bits of "LoomTCP1" */
#define REPLY_ACK 0x41434b31u
#define NONCE 16

struct fhdr {
    uint32_t kind, zero;
    uint64_t paylen;
};
struct hs_hello {
    uint32_t magic;
    int32_t rank, to;
    uint32_t zero;
    uint8_t nonce[NONCE];
};
struct hs_chal {
    uint32_t magic;
    int32_t rank;
    uint8_t nonce[NONCE];
    uint8_t mac[LOOM_MAC_LEN];
};
struct old_hello {
    uint32_t magic;
    int32_t rank;
    uint64_t job;
};

static int port;
static uint8_t key[LOOM_KEY_LEN];

static int dial(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
        perror("mpitcp_intruder: connect");
        exit(2);
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

/* n bytes within ms: n, or what came before EOF / error / timeout */
static size_t read_n(int fd, void *buf, size_t n, int ms)
{
    size_t got = 0;
    while (got < n) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, ms) <= 0)
            break;
        ssize_t k = recv(fd, (char *)buf + got, n - got, 0);
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    return got;
}

static void put(int fd, const void *p, size_t n)
{
    if (send(fd, p, n, MSG_NOSIGNAL) != (ssize_t)n) { /* refused already: fine */
    }
}

static void frame(int fd, int type, int src, int tag, uint64_t len, uint64_t cookie,
                  size_t paylen)
{
    struct fhdr f = {.kind = 0, .paylen = paylen};
    struct xm_pkt_hdr h = {.type = (uint8_t)type,
                           .src = src,
                           .tag = tag,
                           .ctx = 0,
                           .len = len,
                           .cookie = cookie};
    char *pay = calloc(1, paylen ? paylen : 1);
    memset(pay, 0xee, paylen);
    put(fd, &f, sizeof(f));
    put(fd, &h, sizeof(h));
    put(fd, pay, paylen);
    free(pay);
}

static void forged_packets(int fd, int rank)
{
    frame(fd, XM_PKT_EAGER, rank, 7, 8, 0, 8);
    frame(fd, XM_PKT_EAGER, rank, 99, 8, 0, 1000);
}

static void hs_mac(const uint8_t *k, const char *label, const uint8_t *n1,
                   const uint8_t *n2, int c, int a, uint8_t out[LOOM_MAC_LEN])
{
    uint8_t m[16 + 2 * NONCE + 8];
    memcpy(m, label, 16);
    memcpy(m + 16, n1, NONCE);
    memcpy(m + 16 + NONCE, n2, NONCE);
    for (int i = 0; i < 4; i++) {
        m[16 + 2 * NONCE + i] = (uint8_t)((uint32_t)c >> (8 * i));
        m[20 + 2 * NONCE + i] = (uint8_t)((uint32_t)a >> (8 * i));
    }
    loom_hmac_sha256(k, LOOM_KEY_LEN, m, sizeof(m), out);
}

/* hello as `rank` to rank 0; the challenge into *ch: 1 if one came */
static int hello(int fd, int rank, uint8_t nonce[NONCE], struct hs_chal *ch)
{
    struct hs_hello h = {.magic = HS_MAGIC, .rank = rank, .to = 0};
    loom_random_bytes(nonce, NONCE);
    memcpy(h.nonce, nonce, NONCE);
    put(fd, &h, sizeof(h));
    return read_n(fd, ch, sizeof(*ch), 3000) == sizeof(*ch);
}

static int accepted(int fd)
{
    uint32_t v = 0;
    return read_n(fd, &v, 4, 3000) == 4 && v == REPLY_ACK;
}

static int report(const char *name, int acc)
{
    printf("attack %s: %s\n", name, acc ? "ACCEPTED" : "refused");
    fflush(stdout);
    return acc;
}

static uint64_t fnv(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int external(const char *jobid)
{
    int bad = 0, fd;
    uint8_t nonce[NONCE], mac[LOOM_MAC_LEN];
    struct hs_chal ch;

    /* oldhello */
    fd = dial();
    struct old_hello oh = {.magic = OLD_MAGIC, .rank = 2, .job = fnv(jobid)};
    put(fd, &oh, sizeof(oh));
    forged_packets(fd, 2);
    bad += report("oldhello", accepted(fd));
    usleep(200000);
    close(fd);

    /* nosecret */
    fd = dial();
    int chal = hello(fd, 2, nonce, &ch);
    loom_random_bytes(mac, sizeof(mac));
    put(fd, mac, sizeof(mac));
    forged_packets(fd, 2);
    bad += report(chal ? "nosecret" : "nosecret (no challenge)", accepted(fd));
    close(fd);

    /* wrongkey */
    fd = dial();
    chal = hello(fd, 2, nonce, &ch);
    uint8_t k2[LOOM_KEY_LEN];
    loom_random_bytes(k2, sizeof(k2));
    hs_mac(k2, "loom-mpi-tcp-con", ch.nonce, nonce, 2, 0, mac);
    put(fd, mac, sizeof(mac));
    forged_packets(fd, 2);
    bad += report("wrongkey", accepted(fd));
    close(fd);

    /* badhello: ranks out of range, another rank as target, bad magic */
    static const int32_t ranks[] = {-1, 0x7fffffff, 0};
    for (int i = 0; i < 4; i++) {
        fd = dial();
        struct hs_hello h = {.magic = i == 3 ? 0xdeadbeef : HS_MAGIC,
                             .rank = i < 3 ? ranks[i] : 2,
                             .to = i == 2 ? 5 : 0};
        put(fd, &h, sizeof(h));
        struct hs_chal c2;
        bad += report("badhello", read_n(fd, &c2, sizeof(c2), 2000) == sizeof(c2));
        close(fd);
    }

    /* garbage */
    fd = dial();
    static char junk[65536];
    loom_random_bytes(junk, sizeof(junk));
    put(fd, junk, sizeof(junk));
    bad += report("garbage", accepted(fd));
    close(fd);

    /* flood: more idle connections than the listener has handshake slots */
    int fl[100];
    for (int i = 0; i < 100; i++)
        fl[i] = dial();
    sleep(3);
    for (int i = 0; i < 100; i++)
        close(fl[i]);
    report("flood", 0);
    return bad ? 1 : 0;
}

static int internal(const char *mode)
{
    int spawned, size, rank, appnum, got = 0;
    char jobid[256], v[PMI2_MAX_VALLEN + 1], k[64];
    if (PMI2_Init(&spawned, &size, &rank, &appnum) != PMI2_SUCCESS ||
        PMI2_Job_GetId(jobid, sizeof(jobid)) != PMI2_SUCCESS) {
        fprintf(stderr, "mpitcp_intruder: PMI2_Init failed\n");
        return 2;
    }
    PMI2_KVS_Fence(); /* the victims' MPI_Init fence */
    if (PMI2_KVS_Get(jobid, 0, "xm-tcp-0", v, sizeof(v), &got) != PMI2_SUCCESS ||
        got < 0) {
        fprintf(stderr, "mpitcp_intruder: no card of rank 0\n");
        return 2;
    }
    char *colon = strchr(v, ':');
    port = colon ? atoi(colon + 1) : 0;
    snprintf(k, sizeof(k), "xm-tsec-0");
    int have = PMI2_KVS_Get(jobid, 0, k, v, sizeof(v), &got) == PMI2_SUCCESS && got > 0 &&
               loom_unhex(v, key, sizeof(key)) == 0;
    int fd = dial();
    if (!have) {
        printf("intruder: no secret in the KVS: the old hello\n");
        struct old_hello oh = {.magic = OLD_MAGIC, .rank = rank, .job = fnv(jobid)};
        put(fd, &oh, sizeof(oh));
        printf("intruder: old hello %s\n", accepted(fd) ? "accepted" : "refused");
        if (strcmp(mode, "replay") == 0)
            mode = "src";
    } else {
        uint8_t nonce[NONCE], mac[LOOM_MAC_LEN], want[LOOM_MAC_LEN];
        struct hs_chal ch;
        if (!hello(fd, rank, nonce, &ch)) {
            printf("intruder: no challenge\n");
            return 2;
        }
        hs_mac(key, "loom-mpi-tcp-acc", nonce, ch.nonce, rank, 0, want);
        printf("intruder: acceptor's proof %s\n",
               loom_ct_equal(want, ch.mac, sizeof(want)) ? "valid" : "INVALID");
        hs_mac(key, "loom-mpi-tcp-con", ch.nonce, nonce, rank, 0, mac);
        if (strcmp(mode, "replay") == 0) {
            uint8_t n2[NONCE];
            struct hs_chal c2;
            int fd2 = dial();
            if (!hello(fd2, rank, n2, &c2)) {
                printf("intruder: no second challenge\n");
                return 2;
            }
            put(fd2, mac, sizeof(mac)); /* the first connection's proof */
            printf("intruder: replayed proof %s\n",
                   accepted(fd2) ? "ACCEPTED" : "refused");
            close(fd2);
            mode = "src";
        }
        put(fd, mac, sizeof(mac));
        printf("intruder: fresh proof %s\n", accepted(fd) ? "accepted" : "REFUSED");
    }
    fflush(stdout);
    usleep(100000);
    if (strcmp(mode, "src") == 0)
        frame(fd, XM_PKT_EAGER, 1, 7, 8, 0, 8);
    else if (strcmp(mode, "long") == 0)
        frame(fd, XM_PKT_EAGER, rank, 99, 8, 0, 1000);
    else if (strcmp(mode, "huge") == 0)
        frame(fd, XM_PKT_EAGER, rank, 99, 1ull << 40, 0, 8);
    else if (strcmp(mode, "frag") == 0)
        frame(fd, XM_PKT_FRAG, rank, 0, 8, 0, 8);
    else if (strcmp(mode, "cookie") == 0)
        frame(fd, XM_PKT_RDATA, rank, 0, 8, 0x47800001u, 8);
    else if (strcmp(mode, "type") == 0)
        frame(fd, 42, rank, 7, 8, 0, 8);
    else if (strcmp(mode, "rts") == 0)
        frame(fd, XM_PKT_RTS, rank, 7, 1 << 20, 0, 0);
    else {
        fprintf(stderr, "mpitcp_intruder: unknown mode %s\n", mode);
        return 2;
    }
    printf("intruder: sent the %s packet\n", mode);
    fflush(stdout);
    sleep(10); /* the job should be over by now */
    return 3;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 4 && strcmp(argv[1], "ext") == 0) {
        port = atoi(argv[2]);
        return external(argv[3]);
    }
    if (argc == 3 && strcmp(argv[1], "int") == 0)
        return internal(argv[2]);
    fprintf(stderr, "usage: mpitcp_intruder ext PORT JOBID | int MODE\n");
    return 2;
}
