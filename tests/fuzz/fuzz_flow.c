/* fuzz_flow.c - libFuzzer target: common/flow.c, the per-client flow control of the
 * hosts (mpiexec, the plugin's agent), driven by a client that sends and reads as it
 * likes against a fake server core with PMI's worst reply/request ratio.
 *
 * fuzz-sources: common/flow.c common/loop.c
 * fuzz-cflags: -Icommon
 *
 * Contract: input = ops of 3 bytes (op, a, b), n = (a*256+b) % 16385.  op % 4: 0 the
 * host reads n bytes from the client (only while flow_reading(), as the hosts do) and
 * feeds them; 1 the same, ignoring flow_reading() (flow_feed must then hold at most
 * FLOW_HOLD_MAX or say -ENOBUFS); 2 the client reads up to n bytes; 3 the host sends and
 * resumes (as on LOOP_WRITE).  The fake core answers every 14 bytes fed with a
 * 1024-byte reply carrying its sequence number (24 KiB of input per run at most).  After
 * every op: the queue plus the held input stay within FLOW_MAX_BYTES, input fed + held +
 * refused = input given, flow_events() agrees with flow_reading()/flow_queued(); the
 * client reads the replies complete and in order. Seeds: corpus/flow/ (a client that
 * never reads; one that reads slowly; one that pipelines, stops, then drains).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "flow.h"
#include "loop.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REQ 14
#define REPLY 1024
#define MAX_GIVEN (24 * 1024) /* input per run: keeps a run in milliseconds */

struct core {
    struct flow *f;
    int fd;
    size_t fed, partial;
    uint64_t seq;
};

static int feed(void *arg, const char *buf, size_t len)
{
    struct core *c = arg;
    char reply[REPLY];

    (void)buf;
    c->fed += len;
    c->partial += len;
    while (c->partial >= REQ) {
        c->partial -= REQ;
        memset(reply, 'r', sizeof(reply));
        memcpy(reply, &c->seq, sizeof(c->seq));
        c->seq++;
        if (flow_write(c->f, c->fd, reply, sizeof(reply)) != 0)
            __builtin_trap();
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char in[65536];
    static char rbuf[65536];
    struct flow f = {0};
    struct core c = {.f = &f};
    int sv[2];
    size_t given = 0, refused = 0, got = 0;
    uint64_t want = 0;
    char cur[REPLY];

    if (size > 3 * 512)
        return 0;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0)
        return 0;
    c.fd = sv[0];
    memset(in, 'q', sizeof(in));
    for (size_t i = 0; i + 3 <= size; i += 3) {
        size_t n = ((size_t)data[i + 1] * 256 + data[i + 2]) % 16385;
        int op = data[i] % 4;
        if (op == 0 || op == 1) {
            if ((op == 0 && !flow_reading(&f)) || given + n > MAX_GIVEN)
                continue;
            int rc = flow_feed(&f, in, n, feed, &c);
            if (rc == -ENOBUFS)
                refused += n;
            else if (rc != 0)
                __builtin_trap();
            given += n;
        } else if (op == 2) {
            ssize_t r = read(sv[1], rbuf, n < sizeof(rbuf) ? n : sizeof(rbuf));
            for (ssize_t k = 0; k < r;) {
                size_t off = got % REPLY, take = REPLY - off;
                if (take > (size_t)(r - k))
                    take = (size_t)(r - k);
                memcpy(cur + off, rbuf + k, take);
                k += (ssize_t)take;
                got += take;
                if (got % REPLY == 0) {
                    if (memcmp(cur, &want, sizeof(want)) != 0)
                        __builtin_trap();
                    want++;
                }
            }
        } else {
            if (flow_send(&f, sv[0]) != 0 || flow_resume(&f, feed, &c) != 0)
                __builtin_trap();
        }
        size_t held = f.hlen - f.hoff;
        if (flow_queued(&f) + held > FLOW_MAX_BYTES || held > FLOW_HOLD_MAX)
            __builtin_trap();
        if (c.fed + held + refused != given)
            __builtin_trap();
        int ev = flow_events(&f);
        if (!!(ev & LOOP_READ) != flow_reading(&f) ||
            !!(ev & LOOP_WRITE) != !!flow_queued(&f))
            __builtin_trap();
    }
    flow_free(&f);
    close(sv[0]);
    close(sv[1]);
    return 0;
}
