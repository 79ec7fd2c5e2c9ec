/* msg.h - messages between the PMI servers of one job (tree links).
 *
 * Contract:
 *   One message = magic 'L', version 1, u8 type, u32 epoch, i32 from (the
 *   node that sent it on this hop), i32 origin and i32 dest (first sender
 *   and final node of routed messages; -1 when unused), then the payload as
 *   u32 length + bytes, all big-endian through common/pack.h.  Nothing may
 *   follow the payload.  The payload's layout belongs to the module that
 *   owns the type (kvs blob for fences, fields for name service and ring).
 *
 * Notes: msg_decode() points m->payload into the caller's buffer.
 */
#ifndef LOOM_PMISERV_MSG_H
#define LOOM_PMISERV_MSG_H

#include <stddef.h>
#include <stdint.h>

#include "pack.h"

#define MSG_MAGIC 0x4c
#define MSG_VERSION 1

enum msg_type {
    MSG_FENCE_UP = 1,   /* child -> parent: subtree's puts for epoch */
    MSG_FENCE_DOWN = 2, /* parent -> child: all puts of epoch, commit */
    MSG_FENCE_FAIL = 3, /* any direction: epoch failed, payload = text */
    MSG_NS_REQ = 4,     /* routed to node 0: name service request */
    MSG_NS_RESP = 5,    /* routed to origin: name service answer */
    MSG_RING_UP = 6,    /* child -> parent: PMIX_Ring contribution */
    MSG_RING_DOWN = 7,  /* parent -> child: PMIX_Ring answer */
    MSG_COLL_UP = 8,    /* child -> parent: subtree's blobs of a blob collective */
    MSG_COLL_DOWN = 9,  /* parent -> child: every node's blob, concatenated */
    MSG_DMDX_REQ = 10,  /* routed to the node of a rank: direct-modex request */
    MSG_DMDX_RESP = 11, /* routed to origin: direct-modex answer */
    MSG_KVS_REQ = 12,   /* routed to a key's node: on-demand KVS get */
    MSG_KVS_RESP = 13,  /* routed to origin: its answer */
};

struct msg {
    int type;
    uint32_t epoch;
    int32_t from;
    int32_t origin;
    int32_t dest;
    const void *payload;
    size_t len;
};

/* Append the encoded message to p.  Returns pack_error(p). */
int msg_encode(struct pack *p, const struct msg *m);
/* Decode buf: 0 or -EPROTO (bad magic, version, type, length, trailing
 * bytes). */
int msg_decode(struct msg *m, const void *buf, size_t len);
const char *msg_type2str(int type);

#endif /* LOOM_PMISERV_MSG_H */
