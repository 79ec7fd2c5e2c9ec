/* fuzz_mpi_sess.c - libFuzzer target: the control messages of MPI_Comm_create_from_group's
 * context-id agreement (mpi/core/sessmsg.c), i.e. what any rank of the job may send on
 * the sessions' reserved context.
 *
 * fuzz-sources: mpi/core/sessmsg.c
 * fuzz-cflags: -Impi/include -Impi/core
 * fuzz-options: -max_len=2048
 *
 * Contract: the input is one received message, copied into an exact-size heap block.
 * Invariants (a trap is a finding): an accepted message is exactly one struct, of a
 * known kind, a round below the limit, a verdict of 0 or 1 where one is carried, and a
 * tag that is a C string of exactly taglen bytes inside the tag field (what the inbox
 * compares with strcmp).
 * Seeds: corpus/mpi_sess/: an offer, a pick, a vote, a done, a tag without its null.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sessboot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    void *msg = malloc(size ? size : 1);
    if (!msg)
        return 0;
    memcpy(msg, data, size);
    struct xm_sb_msg m;
    const char *e = xm_sb_parse(msg, size, &m);
    if (!e) {
        if (size != sizeof(m) || m.magic != XM_SB_MAGIC)
            __builtin_trap();
        if (m.kind < XM_SB_OFFER || m.kind > XM_SB_DONE || m.round >= XM_SB_ROUNDS)
            __builtin_trap();
        if ((m.kind == XM_SB_VOTE || m.kind == XM_SB_DONE) && m.value > 1)
            __builtin_trap();
        if (m.taglen >= XM_SB_TAG_MAX || strlen(m.tag) != m.taglen)
            __builtin_trap();
    }
    free(msg);
    return 0;
}
