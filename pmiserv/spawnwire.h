/* spawnwire.h - a spawn request and its answer between two hosts: the stepd and srun
 * under srun --mpi=loom, a proxy and the front end under mpiexec -hosts (the one
 * codec of both; Slurm-free, so the fuzz target and the unit tests link it alone).
 *
 * Contract:
 *   A stepd whose task asked to spawn sends srun one request frame (after the
 *   munge handshake, doc/wire.md section 7, "Under srun --mpi=loom"); srun answers
 *   with one answer frame.  Both are a sequence of fields, each a big-endian u32
 *   length and that many bytes (no NUL inside).  lspawn_decode() bounds every count
 *   and string by the PSRV_SPAWN_MAX_* limits of pmiserv.h and the whole frame by
 *   LSPAWN_FRAME_MAX before it allocates, and refuses anything else with a reason.
 */
#ifndef LOOM_PMISERV_SPAWNWIRE_H
#define LOOM_PMISERV_SPAWNWIRE_H

#include <stddef.h>

#include "pmiserv.h"

#define LSPAWN_MAGIC "loomspawn1"
/* Largest request frame: the bounds of pmiserv.h allow more in theory, but a
 * real request (MPI_Comm_spawn: one command, a port name) is a few KiB. */
#define LSPAWN_FRAME_MAX (1u << 20)
#define LSPAWN_ANSWER_MAX 1024 /* an answer frame: rc and a job id or a reason */

/* A decoded request; view points into it. */
struct lspawn_req {
    struct psrv_spawn view;
    int max_inflight; /* the spawner's mpi.conf LoomSpawnMaxInFlight (0: none) */
    int timeout_s;    /* how long srun waits for the new step to start */
    struct psrv_spawn_cmd *cmds;
    struct psrv_kv *preput;
    int ncmds_alloc;
};

/* Encode req into a malloc'ed frame body (*out, *len).  0 or -ENOMEM/-EMSGSIZE. */
int lspawn_encode(const struct psrv_spawn *req, int max_inflight, int timeout_s,
                  char **out, size_t *len);
/* Decode a frame body; NULL with a one-line reason in err when it is refused. */
struct lspawn_req *lspawn_decode(const void *buf, size_t len, char *err, size_t errlen);
void lspawn_free(struct lspawn_req *r);

/* The answer: rc 0 and the new step's job id, or rc != 0 and the reason.
 * encode returns the body length (<= LSPAWN_ANSWER_MAX); decode 0 or -EPROTO. */
size_t lspawn_answer_encode(int rc, const char *text, char out[LSPAWN_ANSWER_MAX]);
int lspawn_answer_decode(const void *buf, size_t len, int *rc, char *text,
                         size_t textlen);

#endif /* LOOM_PMISERV_SPAWNWIRE_H */
