/*
 * sessboot.h - the context-id agreement of MPI_Comm_create_from_group (MPI-4.0 11.3):
 *              members of a group with no parent communicator agree on an id, keyed
 *              by the caller's string tag, compared in full.
 *
 * Owns: the control messages on XM_SESS_CTX (a reserved context, core/comm.c), their
 * check (xm_sb_parse, fuzzed by tests/fuzz/fuzz_mpi_sess.c) and the process's inbox of
 * them.  Contract:
 *   - xm_sb_agree(tag, n, w, me, &ctx) is called by every member of the group
 *     (n world ranks w[], me = my index) with the same tag; calls with different tags
 *     never exchange a message's meaning, however many run at once in how many threads
 *     (every message names its tag and its leader; a message is taken only by the
 *     call whose tag and leader it names).  0 and an even ctx, or -errno.
 *   - Round: members send OFFER (their free, unreserved ids) to the leader (w[0]); the
 *     leader picks an id free at everyone (the lowest in the first round, a random one
 *     after), sends PICK; each member claims it if still free here (xm_ctx_claim) and
 *     answers VOTE; the leader sends DONE with the verdict (all claimed).  A refused
 *     round releases its claims and starts again (another agreement took the id in
 *     between), up to XM_SB_ROUNDS rounds.
 *   - Waiting goes through the engine's idle policy (xm_idle); a dead peer ends the job
 *     as every wait does.
 */
#ifndef XM_SESSBOOT_H
#define XM_SESSBOOT_H

#include <stddef.h>
#include <stdint.h>

#define XM_SB_TAG_MAX 256     /* MPI_MAX_STRINGTAG_LEN + 1 */
#define XM_SB_MASK_WORDS 64   /* XM_CTX_MASK_WORDS */
#define XM_SB_ROUNDS 1000
enum { XM_SB_OFFER = 1, XM_SB_PICK = 2, XM_SB_VOTE = 3, XM_SB_DONE = 4 };
#define XM_SB_MAGIC 0x4c53424du /* "LSBM" */

struct xm_sb_msg {
    uint32_t magic;
    uint32_t kind;
    uint32_t round;
    uint32_t value;  /* PICK: the id (0xffffffff: none); VOTE/DONE: 1 yes, 0 no */
    uint32_t nmemb;  /* group size as the sender sees it */
    uint32_t leader; /* world rank of the leader */
    uint32_t taglen; /* bytes of tag used, < XM_SB_TAG_MAX, tag[taglen] == 0 */
    uint32_t pad;
    uint32_t mask[XM_SB_MASK_WORDS]; /* OFFER: free ids */
    char tag[XM_SB_TAG_MAX];
};

/* a received message of len bytes: NULL and *out filled, or why it is refused */
const char *xm_sb_parse(const void *buf, size_t len, struct xm_sb_msg *out);
int xm_sb_agree(const char *tag, int n, const int *w, int me, uint32_t *ctx);

#endif
