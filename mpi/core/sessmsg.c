/*
 * sessmsg.c - the check of a received Comm_create_from_group control message
 *             (struct xm_sb_msg, core/sessboot.h): what any process of the job may
 *             send on XM_SESS_CTX.  Kept alone so the fuzz target
 *             tests/fuzz/fuzz_mpi_sess.c links it without the engine.
 */
#include <string.h>

#include "sessboot.h"

const char *xm_sb_parse(const void *buf, size_t len, struct xm_sb_msg *out)
{
    if (len != sizeof(*out))
        return "size";
    memcpy(out, buf, sizeof(*out));
    if (out->magic != XM_SB_MAGIC)
        return "magic";
    if (out->kind < XM_SB_OFFER || out->kind > XM_SB_DONE)
        return "kind";
    if (out->taglen >= XM_SB_TAG_MAX || out->tag[out->taglen] != 0 ||
        memchr(out->tag, 0, out->taglen))
        return "tag";
    if (out->round >= XM_SB_ROUNDS)
        return "round";
    if ((out->kind == XM_SB_VOTE || out->kind == XM_SB_DONE) && out->value > 1)
        return "verdict";
    return NULL;
}
