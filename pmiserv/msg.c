/* msg.c - encode/decode inter-server messages (layout in msg.h). */
#include <errno.h>

#include "msg.h"

int msg_encode(struct pack *p, const struct msg *m)
{
    pack_u8(p, MSG_MAGIC);
    pack_u8(p, MSG_VERSION);
    pack_u8(p, (uint8_t)m->type);
    pack_u32(p, m->epoch);
    pack_i32(p, m->from);
    pack_i32(p, m->origin);
    pack_i32(p, m->dest);
    pack_bytes(p, m->payload, m->payload ? m->len : 0);
    return pack_error(p);
}

int msg_decode(struct msg *m, const void *buf, size_t len)
{
    struct unpack u;
    size_t n = 0;

    unpack_init(&u, buf, len);
    uint8_t magic = unpack_u8(&u);
    uint8_t version = unpack_u8(&u);
    m->type = unpack_u8(&u);
    m->epoch = unpack_u32(&u);
    m->from = unpack_i32(&u);
    m->origin = unpack_i32(&u);
    m->dest = unpack_i32(&u);
    m->payload = unpack_bytes(&u, &n);
    m->len = n;
    if (unpack_error(&u) || magic != MSG_MAGIC || version != MSG_VERSION ||
        unpack_remaining(&u) != 0)
        return -EPROTO;
    if (m->type < MSG_FENCE_UP || m->type > MSG_KVS_RESP)
        return -EPROTO;
    if (n == 0)
        m->payload = NULL;
    return 0;
}

const char *msg_type2str(int type)
{
    switch (type) {
    case MSG_FENCE_UP:
        return "FENCE_UP";
    case MSG_FENCE_DOWN:
        return "FENCE_DOWN";
    case MSG_FENCE_FAIL:
        return "FENCE_FAIL";
    case MSG_NS_REQ:
        return "NS_REQ";
    case MSG_NS_RESP:
        return "NS_RESP";
    case MSG_RING_UP:
        return "RING_UP";
    case MSG_RING_DOWN:
        return "RING_DOWN";
    case MSG_COLL_UP:
        return "COLL_UP";
    case MSG_COLL_DOWN:
        return "COLL_DOWN";
    case MSG_DMDX_REQ:
        return "DMDX_REQ";
    case MSG_DMDX_RESP:
        return "DMDX_RESP";
    case MSG_KVS_REQ:
        return "KVS_REQ";
    case MSG_KVS_RESP:
        return "KVS_RESP";
    }
    return "UNKNOWN";
}
