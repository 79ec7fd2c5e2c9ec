// clang-format off
/* fuzz_spawn.c - libFuzzer target: a task's spawn request as the server core parses it
 * (pmiserv/spawn.c): the PMI-2 "spawn" record and the PMI-1 "mcmd=spawn" blocks.
 *
 * fuzz-sources: pmiserv/spawn.c pmiserv/server.c pmiserv/proto_pmi1.c pmiserv/proto_pmi2.c pmiserv/kvs.c pmiserv/fence.c pmiserv/msg.c pmiserv/attrs.c pmiserv/nameserv.c pmiserv/ring.c pmiserv/blob.c pmiserv/treecoll.c pmiserv/strmap.c pmiserv/limits.c pmiserv/kvsroute.c common/pmi_wire.c common/pack.c common/ktree.c common/mac.c common/log.c common/fdio.c
 * fuzz-cflags: -Icommon -Ipmiserv
 * (clang-format is off for this comment: run.sh reads the fuzz-sources line whole.)
 *
 * Contract: the first input byte picks the wire (even: PMI-2, odd: PMI-1); the rest is
 * framed as that wire frames a task's stream (PMI-2 records after init, PMI-1 lines
 * and spawn blocks) and every frame that parses is given to spawn_parse_v2 or, block
 * after block, to spawn_add_v1_block, as the protocol handlers do.
 * Invariants checked on top of the sanitizers (a trap is a finding):
 *   - a refusal always carries a reason; an accepted request is within every bound of
 *     pmiserv.h: 1..PSRV_SPAWN_MAX_CMDS commands, total = sum of maxprocs in
 *     1..PSRV_SPAWN_MAX_PROCS, argc <= PSRV_SPAWN_MAX_ARGS with argv NULL-terminated,
 *     info and preput counts <= their maxima, every string at most PSRV_SPAWN_MAX_STR;
 *   - PMI-1: a block either completes the request, asks for more, or refuses and
 *     frees the partial request (LeakSanitizer sees the rest).
 * Seeds: corpus/spawn/: what Loom's libpmi2 (PMI2_Job_Spawn) and libpmi
 * (PMI_Spawn_multiple, MPICH's simple PMI layout) send for tests/programs/pmi_spawn.c,
 * a request without infokeycount (the caller gave no info sizes), and hostile counts (huge ncmds, argc, nprocs,
 * out-of-order blocks, missing keys).
 */
// clang-format on
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pmi_wire.h"
#include "spawn.h"

#define CHECK(c)                                                                         \
    do {                                                                                 \
        if (!(c))                                                                        \
            __builtin_trap();                                                            \
    } while (0)

static void check_req(const struct psrv_spawn *r)
{
    long total = 0;
    CHECK(r->ncmds >= 1 && r->ncmds <= PSRV_SPAWN_MAX_CMDS);
    CHECK(r->npreput >= 0 && r->npreput <= PSRV_SPAWN_MAX_PREPUT);
    for (int i = 0; i < r->npreput; i++)
        CHECK(strlen(r->preput[i].key) <= PSRV_SPAWN_MAX_STR &&
              strlen(r->preput[i].val) <= PSRV_SPAWN_MAX_STR);
    for (int i = 0; i < r->ncmds; i++) {
        const struct psrv_spawn_cmd *c = &r->cmds[i];
        CHECK(c->cmd && *c->cmd && strlen(c->cmd) <= PSRV_SPAWN_MAX_STR);
        CHECK(c->maxprocs >= 0 && c->maxprocs <= PSRV_SPAWN_MAX_PROCS);
        CHECK(c->argc >= 0 && c->argc <= PSRV_SPAWN_MAX_ARGS && c->argv[c->argc] == NULL);
        for (int j = 0; j < c->argc; j++)
            CHECK(strlen(c->argv[j]) <= PSRV_SPAWN_MAX_STR);
        CHECK(c->ninfo >= 0 && c->ninfo <= PSRV_SPAWN_MAX_INFO);
        for (int j = 0; j < c->ninfo; j++)
            CHECK(strlen(c->info[j].key) <= PSRV_SPAWN_MAX_STR &&
                  strlen(c->info[j].val) <= PSRV_SPAWN_MAX_STR);
        total += c->maxprocs;
    }
    CHECK(total == r->total && total >= 1 && total <= PSRV_SPAWN_MAX_PROCS);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 1 << 18)
        return 0;
    bool v2 = (data[0] & 1) == 0;
    enum pmi_version v = v2 ? PMI_V2 : PMI_V1;
    size_t len = size - 1;
    char *buf = malloc(len ? len : 1); /* exact size: one byte too far is a report */
    if (!buf)
        return 0;
    memcpy(buf, data + 1, len);

    struct spawn_req *build = NULL;
    size_t off = 0;
    while (off < len) {
        size_t flen, blen;
        const char *body;
        int r = pmi_frame_next(v, buf + off, len - off, &flen, &body, &blen);
        if (r <= 0)
            break;
        struct pmi_msg m;
        if ((v2 ? pmi_msg_parse_v2(&m, body, blen) : pmi_msg_parse_v1(&m, body, blen)) ==
                0 &&
            m.n >= 1) {
            char err[256] = "";
            if (v2) {
                struct spawn_req *q = spawn_parse_v2(&m, err, sizeof(err));
                if (q) {
                    check_req(spawn_req_view(q));
                    spawn_req_free(q);
                } else {
                    CHECK(err[0] != '\0');
                }
            } else if (strcmp(m.kv[0].key, "mcmd") == 0) {
                int rc = spawn_add_v1_block(&build, &m, err, sizeof(err));
                CHECK(rc >= -1 && rc <= 1);
                if (rc == 1) {
                    check_req(spawn_req_view(build));
                    spawn_req_free(build);
                    build = NULL;
                } else if (rc < 0) {
                    CHECK(build == NULL && err[0] != '\0');
                } else {
                    CHECK(build != NULL);
                }
            }
            pmi_msg_free(&m);
        } else {
            pmi_msg_free(&m);
        }
        off += flen;
    }
    spawn_req_free(build);
    free(buf);
    return 0;
}
