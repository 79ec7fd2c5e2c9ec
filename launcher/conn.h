/* conn.h - framed messages between mpiexec and its proxies (multi-host mode).
 *
 * Contract:
 *   A frame is a 4-byte big-endian length L (1..MPX_FRAME_MAX) followed by
 *   L bytes: a one-byte type and the type's payload (packed with
 *   common/pack.h).  struct mpx_conn is a common/stream.h stream (the
 *   framing, the input buffer, the output queue of at most MPX_QUEUE_MAX
 *   bytes) plus the type byte and the tags: mpx_conn_send() queues a frame
 *   and writes what the socket takes now; the owner watches the fd (c->s.fd)
 *   for writing while mpx_conn_pending() and calls mpx_conn_flush().
 *   mpx_conn_read() reads what is there; mpx_conn_next() then hands out
 *   whole frames until it returns 0 (the body stays valid until the next
 *   read or next call).
 *
 *   Tagged connections (after the handshake of front.c): with a tag
 *   function set (mpx_conn_set_tag), every frame of a type in
 *   MPX_TAGGED_TYPES carries MPX_TAG_LEN more bytes, tag(key, dir_out, type,
 *   body), and every such frame received must end with tag(key, dir_in, type,
 *   body) or mpx_conn_next() returns -EBADMSG: a peer without the job's key
 *   cannot forge or alter what a proxy runs (the job, kill, stdin) nor what
 *   mpiexec concludes about ranks (exits, failures, done, log lines) nor what
 *   it starts for them (spawn requests and their answers).  The
 *   bulk frames (tree messages, rank output) are not tagged: they are the
 *   fence path, and hashing them would cost more than the fence itself; they
 *   have the integrity of the network, as with hydra.
 *   conn.c holds no cryptography itself (the unit tests link it alone); the
 *   owner supplies the function (front.c: HMAC-SHA256 with the job cookie).
 *
 * Notes: all functions return 0 (or a count) or -errno; a length of 0 or
 *   above MPX_FRAME_MAX is -EPROTO (the peer is not one of ours).
 */
#ifndef LOOM_LAUNCHER_CONN_H
#define LOOM_LAUNCHER_CONN_H

#include <stddef.h>
#include <stdint.h>

#include "stream.h"

#define MPX_FRAME_MAX (64u << 20)
/* Frames accepted before the handshake is over (the handshake's are small):
 * a stranger cannot make us allocate a large frame's buffer. */
#define MPX_HS_FRAME_MAX 4096u
/* Output queued for one peer at most (frames refused beyond: -ENOBUFS). */
#define MPX_QUEUE_MAX ((size_t)16 * MPX_FRAME_MAX)
#define MPX_PROTO_VERSION 4 /* 4: spawning (spawn frames, a spawned job frame) */
#define MPX_TAG_LEN 16   /* bytes of a frame tag on a tagged connection */
#define MPX_NONCE_LEN 32 /* handshake nonces */
#define MPX_PROOF_LEN 32 /* handshake proofs (HMAC-SHA256) */

/* Frame types: F_ front to proxy, P_ proxy to front. */
enum mpx_frame_type {
    MPX_P_HELLO = 1, /* u32 version, str cookie, i32 node, str hostname */
    MPX_F_JOB,       /* job description (see front.c send_job / proxy.c decode_job) */
    MPX_P_TREE,      /* retired in version 3 (tree messages go over treenet) */
    MPX_F_TREE,      /* retired in version 3 */
    MPX_P_OUT,       /* i32 rank, u8 stream (1 out, 2 err), bytes */
    MPX_P_EOF,       /* i32 rank, u8 stream */
    MPX_P_EXIT,      /* i32 rank, i32 wait status */
    MPX_P_FAIL,      /* i32 exit code, str message: the job must end */
    MPX_P_LOG,       /* str message: print it */
    MPX_P_DONE,      /* every local rank reaped, every stream at EOF */
    MPX_F_KILL,      /* i32 signal: SIGTERM starts the kill sequence, SIGKILL ends it */
    MPX_F_STDIN,     /* bytes for rank 0's stdin; empty: EOF */
    /* version 2 handshake (front.c), before anything else on a connection;
     * the cookie itself never travels */
    MPX_P_HELLO2, /* u32 version, i32 node, bytes nonce Np */
    MPX_F_PROOF,  /* bytes nonce Nf, bytes HMAC(cookie, "front", node, Np, Nf) */
    MPX_P_PROOF,  /* bytes HMAC(cookie, "proxy", node, Np, Nf), str hostname */
    /* version 4: MPI_Comm_spawn from a rank of a proxy, run by mpiexec */
    MPX_P_SPAWN,      /* u64 id, bytes: the request (spawnwire.h) */
    MPX_F_SPAWN_DONE, /* u64 id, i32 rc, str jobid, i32 total, str message */
    MPX_P_STARTED,    /* i32 node: every local rank was started */
};

/* The frame types that carry a tag on a tagged connection (see above). */
#define MPX_TAGGED_TYPES                                                                 \
    ((1u << MPX_F_JOB) | (1u << MPX_F_KILL) | (1u << MPX_F_STDIN) | (1u << MPX_P_EXIT) | \
     (1u << MPX_P_FAIL) | (1u << MPX_P_LOG) | (1u << MPX_P_DONE) | (1u << MPX_P_EOF) |   \
     (1u << MPX_P_SPAWN) | (1u << MPX_F_SPAWN_DONE) | (1u << MPX_P_STARTED))

/* tag = f(key, direction, frame type, body): MPX_TAG_LEN bytes. */
typedef void (*mpx_tag_fn)(const void *key, int dir, uint8_t type, const void *body,
                           size_t len, uint8_t tag[MPX_TAG_LEN]);

struct mpx_conn {
    struct loom_stream s; /* fd, framing, input, output queue */
    mpx_tag_fn tag;       /* NULL: frames carry no tag */
    const void *tag_key;
    int tag_out, tag_in; /* direction bytes of what we send / receive */
};

void mpx_conn_init(struct mpx_conn *c, int fd);
/* Frees the buffers; closes the fd if close_fd. */
void mpx_conn_free(struct mpx_conn *c, int close_fd);

/* From now on every frame of a type in MPX_TAGGED_TYPES sent is tagged with
 * (key, dir_out), and every one received must carry a tag of (key, dir_in).
 * key must outlive c. */
void mpx_conn_set_tag(struct mpx_conn *c, mpx_tag_fn fn, const void *key, int dir_out,
                      int dir_in);

/* Queue one frame (type + body) and try to send.  Does not need fd >= 0:
 * frames queue until the fd is attached. */
int mpx_conn_send(struct mpx_conn *c, uint8_t type, const void *body, size_t len);
/* Put a frame in front of everything queued and not yet started. */
int mpx_conn_send_first(struct mpx_conn *c, uint8_t type, const void *body, size_t len);
int mpx_conn_flush(struct mpx_conn *c);
int mpx_conn_pending(const struct mpx_conn *c);
/* > 0 bytes read, 0 at EOF, -EAGAIN, or -errno (see loom_stream_read). */
long mpx_conn_read(struct mpx_conn *c);
/* 1 with a frame, 0 when none is complete, -EPROTO (bad length), -EBADMSG
 * (tagged connection: missing or wrong tag), -ENOMEM. */
int mpx_conn_next(struct mpx_conn *c, uint8_t *type, const uint8_t **body, size_t *len);

#endif /* LOOM_LAUNCHER_CONN_H */
