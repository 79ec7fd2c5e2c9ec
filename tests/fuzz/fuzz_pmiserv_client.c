// clang-format off
/* fuzz_pmiserv_client.c - libFuzzer target: the PMI server core (pmiserv/) as a host
 * drives it, with hostile tasks and a hostile peer node.
 *
 * fuzz-sources: pmiserv/spawn.c pmiserv/server.c pmiserv/proto_pmi1.c pmiserv/proto_pmi2.c pmiserv/kvs.c pmiserv/fence.c pmiserv/msg.c pmiserv/attrs.c pmiserv/nameserv.c pmiserv/ring.c pmiserv/blob.c pmiserv/treecoll.c pmiserv/strmap.c pmiserv/limits.c pmiserv/kvsroute.c common/pmi_wire.c common/pack.c common/ktree.c common/mac.c common/log.c common/fdio.c
 * fuzz-cflags: -Icommon -Ipmiserv
 * (clang-format is off for this comment: run.sh reads the fuzz-sources line whole.)
 *
 * Contract: one job of 4 ranks on 2 nodes; this server is node 0 or node 1 (the first
 * input byte's bit 0; its bit 1: the on-demand KVS, else auto), serving 3 (node 0: ranks 0-2) or 1 (node 1: rank 3) clients, with small
 * quotas so that every limit is reachable.  The rest of the input is a list of host
 * events, each an opcode byte (low 3 bits) and its operands:
 *   0-2  bytes from client (op >> 3): a length byte L, then L + 1 bytes (or the rest)
 *   3    client (op >> 3) hangs up (psrv_client_gone)
 *   4    time passes: a byte B, B * 50 ms, then psrv_tick
 *   5    a tree message from the other node: 2 length bytes (big-endian), the bytes
 *   6    the link to the other node breaks (psrv_tree_gone)
 *   7    a host service call: a selector byte (ns request, blob contribution, direct
 *        modex request, abort, finalized-through-another-protocol) and a length byte L
 *        with L bytes of name/value/blob
 * The host behaves as the real ones do: after psrv_client_input returns 1 or -EPROTO it
 * closes the client (psrv_client_gone) and feeds it nothing more.
 * Invariants checked on top of the sanitizers (a trap is a finding):
 *   - no log line and no abort text holds a control byte, DEL or a byte >= 0x80 (task
 *     bytes are escaped), and none is longer than the core's line buffer allows;
 *   - ops->abort comes at most once;
 *   - nothing is sent to a client the host reported gone, nor to a client index out of
 *     range; tree messages go only to the other node;
 *   - the tables stay within their quotas (psrv_usage) and the trace within its cap.
 * Seeds: corpus/pmiserv_client/: captured client streams cut into events (MPICH 4.0.2's
 * PMI-1 and Slurm 22.05.8's libpmi2 from tests/unit/fixtures; loom's pmi2_kvstest_loom
 * and pmi1_kvstest at 3 ranks from LOOM_PMI_TRACE=1 under mpiexec), each fence closed
 * by the other node's FENCE_UP/FENCE_DOWN in msg.h's layout; floods past each quota;
 * control bytes in an abort message, a command and a peer's FENCE_FAIL; a fence left
 * by a hang-up, timeouts, node attribute waits, node 1's name requests and answers
 * (one over quota), the host's service calls; on-demand KVS gets answered, refused and
 * timed out, and the other node's gets served and deferred (node*-kvs-ondemand*).
 */
// clang-format on
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pmiserv.h"

#define CHECK(c)                                                                         \
    do {                                                                                 \
        if (!(c))                                                                        \
            __builtin_trap();                                                            \
    } while (0)

#define NRANKS 4

static struct {
    int nlocal;
    bool gone[NRANKS];
    int naborts;
    uint64_t now;
    int other;
} H;

static void check_text(const char *t)
{
    size_t n = 0;
    for (; t[n]; n++)
        CHECK((unsigned char)t[n] >= 0x20 && (unsigned char)t[n] < 0x7f);
    CHECK(n < 8192);
}

static int op_client_send(void *arg, int client, const char *buf, size_t len)
{
    (void)arg;
    CHECK(client >= 0 && client < H.nlocal);
    CHECK(!H.gone[client]);
    CHECK(len > 0 && buf != NULL);
    return 0;
}

static int op_tree_send(void *arg, int to, const void *buf, size_t len)
{
    (void)arg;
    (void)buf;
    CHECK(to == H.other);
    CHECK(len > 0);
    return 0;
}

static void op_abort(void *arg, int rank, int code, const char *msg)
{
    (void)arg;
    (void)code;
    CHECK(rank >= -1 && rank < NRANKS);
    check_text(msg);
    CHECK(++H.naborts == 1);
}

static void op_log(void *arg, enum psrv_log_level lvl, const char *msg)
{
    (void)arg;
    (void)lvl;
    check_text(msg);
}

static uint64_t op_now(void *arg)
{
    (void)arg;
    return H.now;
}

static void op_coll_done(void *arg, uint64_t id, int rc, const void *data, size_t len,
                         const char *msg)
{
    (void)arg, (void)id, (void)rc, (void)data, (void)len;
    if (msg)
        check_text(msg);
}

static void op_dmdx_request(void *arg, uint64_t handle, int rank, const void *info,
                            size_t len)
{
    (void)arg, (void)handle, (void)info, (void)len;
    CHECK(rank >= 0 && rank < NRANKS);
}

static void op_ns_done(void *arg, uint64_t id, int rc, const char *value)
{
    (void)arg, (void)id, (void)rc, (void)value;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const int rank_node[NRANKS] = {0, 0, 0, 1};
    static const int ranks0[] = {0, 1, 2}, ranks1[] = {3};
    static const struct psrv_ops ops = {
        .client_send = op_client_send,
        .tree_send = op_tree_send,
        .abort = op_abort,
        .log = op_log,
        .now_ms = op_now,
        .coll_done = op_coll_done,
        .dmdx_request = op_dmdx_request,
        .dmdx_done = op_coll_done,
        .ns_done = op_ns_done,
    };
    size_t i = 0;

    if (size < 1 || size > 200000)
        return 0;
    int nodeid = data[i] & 1;
    bool ondemand = (data[i++] & 2) != 0;
    memset(&H, 0, sizeof(H));
    H.nlocal = nodeid == 0 ? 3 : 1;
    H.other = 1 - nodeid;
    H.now = 1000;
    struct psrv_config cfg = {
        .jobid = "42.0",
        .size = NRANKS,
        .nnodes = 2,
        .nodeid = nodeid,
        .local_count = H.nlocal,
        .local_ranks = nodeid == 0 ? ranks0 : ranks1,
        .rank_node = rank_node,
        .tree_width = 2,
        .fence_timeout_ms = 2000,
        .log_level = PSRV_LOG_TRACE,
        .kvs_mode = ondemand ? PSRV_KVS_ONDEMAND : PSRV_KVS_AUTO,
        .limits =
            {
                .kvs_keys_per_rank = 20,
                .kvs_bytes_per_rank = 4000,
                .kvs_keys_per_job = 50,
                .kvs_bytes_per_job = 8000,
                .nodeattr_count = 10,
                .nodeattr_bytes = 600,
                .names_count = 10,
                .names_bytes = 600,
                .trace_lines = 60,
                .warn_burst = 2,
            },
    };
    struct psrv *s = psrv_create(&cfg, &ops, NULL);
    if (!s)
        return 0;
    uint64_t id = 0;
    while (i < size) {
        uint8_t op = data[i++];
        int cl = (op >> 3) % H.nlocal;
        size_t len;
        switch (op & 7) {
        case 0:
        case 1:
        case 2: {
            if (i >= size)
                break;
            len = (size_t)data[i++] + 1;
            if (len > size - i)
                len = size - i;
            if (H.gone[cl]) {
                i += len;
                break;
            }
            /* an exact-size copy: a read past the chunk is an ASan report */
            char *b = malloc(len ? len : 1);
            memcpy(b, data + i, len);
            i += len;
            int rc = psrv_client_input(s, cl, b, len);
            free(b);
            CHECK(rc == 0 || rc == 1 || rc == -EPROTO || rc == -ENOMEM);
            if (rc != 0) {
                psrv_client_gone(s, cl);
                H.gone[cl] = true;
            }
            break;
        }
        case 3:
            if (!H.gone[cl]) {
                psrv_client_gone(s, cl);
                H.gone[cl] = true;
            }
            break;
        case 4:
            if (i < size)
                H.now += (uint64_t)data[i++] * 50;
            (void)psrv_tick(s);
            break;
        case 5: {
            if (size - i < 2) {
                i = size;
                break;
            }
            len = ((size_t)data[i] << 8) | data[i + 1];
            i += 2;
            if (len > size - i)
                len = size - i;
            void *b = malloc(len ? len : 1);
            memcpy(b, data + i, len);
            i += len;
            (void)psrv_tree_input(s, H.other, b, len);
            free(b);
            break;
        }
        case 6:
            psrv_tree_gone(s, H.other);
            break;
        case 7: {
            if (size - i < 2) {
                i = size;
                break;
            }
            uint8_t sel = data[i++];
            len = data[i++];
            if (len > size - i)
                len = size - i;
            char *b = malloc(len + 1);
            memcpy(b, data + i, len);
            b[len] = '\0';
            i += len;
            switch (sel % 6) {
            case 0:
            case 1:
                (void)psrv_ns_request(s, ++id, 1 + sel % 3, *b ? b : "n", b);
                break;
            case 2:
                (void)psrv_coll_contribute(s, ++id, b, len);
                break;
            case 3:
                (void)psrv_dmdx_request(s, ++id, sel % NRANKS, b, len);
                break;
            case 4:
                psrv_abort(s, (int)(sel % 5) - 1, 1, b);
                break;
            case 5:
                psrv_client_finalized(s, cl);
                break;
            }
            free(b);
            break;
        }
        }
        struct psrv_usage u;
        psrv_usage(s, &u);
        CHECK(u.nodeattr_count <= 10 && u.nodeattr_bytes <= 600);
        CHECK(u.names_count <= 10 && u.names_bytes <= 600);
        CHECK(u.kvs_keys <= 50 && u.kvs_bytes <= 8000);
        CHECK(u.trace_lines <= 60);
    }
    psrv_destroy(s);
    return 0;
}
