/* handshake.h - the job cookie between mpiexec and its proxies: the two
 * handshake proofs, the HMAC tags of control frames, and the proxy's side of
 * the handshake (mpx_proxy_connect).  mpiexec's side of the same handshake
 * (challenging a connection, attaching it to its node) is in front.c and
 * makes its proofs with these functions.
 *
 * Contract:
 *   - mpx_key_init() absorbs the cookie's HMAC pads once for one node;
 *     mpx_key_tag() is an mpx_tag_fn (conn.h): HMAC(cookie, "mpx2" dir node
 *     type body), its first MPX_TAG_LEN bytes.  Directions: MPX_DIR_FRONT for
 *     frames mpiexec sends, MPX_DIR_PROXY for those a proxy sends.
 *   - mpx_make_proof(): the proof of `who` ("front" or "proxy") for a node
 *     and the two nonces, HMAC(cookie, "loom-mpx2 WHO" node Np Nf).
 *   - mpx_proxy_connect(): connect to one of "A1,A2,...:PORT" (in order, again
 *     with backoff until ms have passed) and make the version 2 handshake with
 *     the job cookie: whatever answers must prove the cookie before the proxy
 *     proves it (the cookie never travels).  0 with *up connected and tagged
 *     (the job frame follows), or -errno with a message in err.
 *   - mpx_wait_frame(): the proxy's blocking exchanges before its event loop
 *     runs (the handshake, the job frame): one whole frame on c by end
 *     (loop_now_ms clock), flushing what c queued meanwhile.  0 with the
 *     frame, or -ETIMEDOUT, -ECONNRESET (closed), -EPROTO (bad frame), -errno.
 */
#ifndef LOOM_LAUNCHER_HANDSHAKE_H
#define LOOM_LAUNCHER_HANDSHAKE_H

#include <stddef.h>
#include <stdint.h>

#include "conn.h"
#include "mac.h"

#define MPX_DIR_FRONT 'F' /* tag directions */
#define MPX_DIR_PROXY 'P'

/* HMAC-SHA256 keyed by the job cookie, its pads absorbed once; the node it
 * tags frames for. */
struct mpx_key {
    struct loom_sha256 ictx, octx;
    int32_t node;
};

void mpx_key_init(struct mpx_key *mk, const char *cookie, int node);
void mpx_key_tag(const void *key, int dir, uint8_t type, const void *body, size_t len,
                 uint8_t tag[MPX_TAG_LEN]);
void mpx_make_proof(const char *cookie, const char *who, int node, const uint8_t *np,
                    const uint8_t *nf, uint8_t out[MPX_PROOF_LEN]);

int mpx_wait_frame(struct mpx_conn *c, uint64_t end, uint8_t *type, const uint8_t **body,
                   size_t *len);
int mpx_proxy_connect(const char *spec, const char *cookie, int nodeid, const char *host,
                      int ms, struct mpx_conn *up, char *err, size_t errlen);

#endif /* LOOM_LAUNCHER_HANDSHAKE_H */
