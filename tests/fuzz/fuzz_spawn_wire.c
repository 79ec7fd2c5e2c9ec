// clang-format off
/* fuzz_spawn_wire.c - libFuzzer target: the spawn messages between a stepd and srun
 * under srun --mpi=loom (pmiserv/spawnwire.c, also what mpiexec's proxy sends its front
 * end), as srun's spawn server decodes a request
 * (after the credential) and as the stepd decodes srun's answer.
 *
 * fuzz-sources: pmiserv/spawnwire.c
 * fuzz-cflags: -Iplugin -Ipmiserv -Icommon
 * (clang-format is off for this comment: run.sh reads the fuzz-sources line whole.)
 *
 * Contract: the first input byte picks the decoder (even: request, odd: answer), the
 * rest is the frame body.  Invariants on top of the sanitizers (a trap is a finding):
 *   - a refused request always carries a reason; an accepted one is within every bound
 *     of pmiserv.h (1..PSRV_SPAWN_MAX_CMDS commands, total = sum of maxprocs in
 *     1..PSRV_SPAWN_MAX_PROCS, argv NULL-terminated, counts and strings bounded), and
 *     encoding it again gives a frame that decodes to the same request;
 *   - a decoded answer's text is NUL-terminated, printable and fits its buffer.
 * Seeds: corpus/spawn_wire/: what a stepd sends for pmi_spawn's requests (one command
 * with preput pairs and info, two commands), answers (rc 0 with a job id, a refusal),
 * and truncated or oversized frames.
 */
// clang-format on
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spawnwire.h"

#define CHECK(c)                                                                         \
    do {                                                                                 \
        if (!(c))                                                                        \
            __builtin_trap();                                                            \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_req(const struct lspawn_req *q)
{
    const struct psrv_spawn *r = &q->view;
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
    CHECK(q->timeout_s >= 1 && q->max_inflight >= 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];

    if (size < 1)
        return 0;
    if (data[0] & 1) {
        char text[64];
        int rc = 0;
        memset(text, 'x', sizeof(text));
        if (lspawn_answer_decode(data + 1, size - 1, &rc, text, sizeof(text)) == 0) {
            size_t n = strnlen(text, sizeof(text));
            CHECK(n < sizeof(text));
            for (size_t i = 0; i < n; i++)
                CHECK(text[i] >= 0x20 && text[i] < 0x7f);
        }
        return 0;
    }
    err[0] = 'x';
    struct lspawn_req *r = lspawn_decode(data + 1, size - 1, err, sizeof(err));
    if (!r) {
        CHECK(err[0] != '\0' && err[0] != 'x');
        return 0;
    }
    check_req(r);
    char *again = NULL;
    size_t alen = 0;
    CHECK(lspawn_encode(&r->view, r->max_inflight, r->timeout_s, &again, &alen) == 0);
    /* numbers may have been spelled differently ("+1", "01"): compare decoded */
    struct lspawn_req *r2 = lspawn_decode(again, alen, err, sizeof(err));
    CHECK(r2 != NULL);
    CHECK(r2->view.ncmds == r->view.ncmds && r2->view.total == r->view.total &&
          r2->view.npreput == r->view.npreput && r2->view.rank == r->view.rank);
    for (int i = 0; i < r->view.ncmds; i++) {
        CHECK(strcmp(r2->cmds[i].cmd, r->cmds[i].cmd) == 0);
        CHECK(r2->cmds[i].argc == r->cmds[i].argc && r2->cmds[i].ninfo == r->cmds[i].ninfo);
        for (int j = 0; j < r->cmds[i].argc; j++)
            CHECK(strcmp(r2->cmds[i].argv[j], r->cmds[i].argv[j]) == 0);
    }
    for (int i = 0; i < r->view.npreput; i++)
        CHECK(strcmp(r2->preput[i].key, r->preput[i].key) == 0 &&
              strcmp(r2->preput[i].val, r->preput[i].val) == 0);
    free(again);
    lspawn_free(r2);
    lspawn_free(r);
    return 0;
}
