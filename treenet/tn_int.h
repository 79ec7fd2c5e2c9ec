/* tn_int.h - internals shared by the rendezvous (rdv.c) and the tree links
 * (links.c): credentials (auth.c), framing and address helpers (util.c).
 *
 * Contract:
 *   Every connection opens with the listening side's nonce frame
 *   "loom2 <hex nonce>" (TN_NONCE_HEX digits of getrandom(2)); nothing
 *   reusable is sent before it.  A credential then binds the payload
 *   "loom2 <jobkey> <from> <to> <receiver's nonce> <sender's nonce>", where
 *   from and to are node ids in decimal or the word "rdv" for the rendezvous
 *   server, so a credential taken from one connection is refused on any other
 *   (the receiver's nonce differs).  With TREENET_AUTH_MUNGE the credential is
 *   a munge string carrying that payload, restricted (MUNGE_OPT_UID_RESTRICTION)
 *   to the one uid that must decode it; with TREENET_AUTH_COOKIE the payload
 *   followed by an HMAC of it keyed by the job's secret cookie; with
 *   TREENET_AUTH_NONE it is the
 *   payload itself (tests only: anyone can forge it).
 *
 *   Every frame on the wire is a 4-byte big-endian length followed by that
 *   many bytes.  Handshake frames are at most TN_CRED_MAX bytes.
 */
#ifndef LOOM_TN_INT_H
#define LOOM_TN_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "net.h" /* loom_addr_parse, loom_listen */
#include "treenet.h"

#define TN_CRED_MAX 4096
#define TN_JOBKEY_MAX 200
#define TN_WHY_MAX 256
/* Largest tree message accepted (and sent): more is treated as a broken peer. */
#define TN_MSG_MAX (64u << 20)
/* Bytes queued for one link at most (sends beyond: -ENOBUFS): a peer that
 * stops reading costs a bounded amount of memory. */
#define TN_QUEUE_MAX ((size_t)16 * TN_MSG_MAX)

/* "uid any": accept a credential of any uid (or: no decode restriction). */
#define TN_UID_ANY ((uid_t)-1)

/* Nonces: 16 random bytes, carried as 32 lowercase hex digits. */
#define TN_NONCE_LEN 16
#define TN_NONCE_HEX (2 * TN_NONCE_LEN)
/* Handshake deadline of an accepted, not yet authenticated connection
 * (links and rendezvous), unless the host sets another. */
#define TN_HS_DEFAULT_MS 3000
/* Accepted, unauthenticated connections kept per listener; one more evicts
 * the oldest (so idle strangers never lock a real peer out). */
#define TN_PENDING_MAX 64

/* A fresh nonce (NUL-terminated hex).  0, or -errno (no kernel randomness). */
int tn_nonce_new(char out[TN_NONCE_HEX + 1]);
/* The listener's first frame: "loom2 <nonce>" into buf (>= TN_NONCE_HEX + 7).
 * Returns its length. */
size_t tn_nonce_frame(const char *nonce, char *buf);
/* Parse a received nonce frame into nonce.  0 or -EPROTO. */
int tn_nonce_parse(const void *p, size_t len, char nonce[TN_NONCE_HEX + 1]);
/* Copy s into out (size outlen) with every byte outside printable ASCII as
 * \xHH, so peer-provided text can go to a log line. */
void tn_escape(const char *s, size_t len, char *out, size_t outlen);

/* 0 if jobkey is usable in a credential (no blanks, not too long). */
int tn_jobkey_ok(const char *jobkey);
/* -ENOTSUP when auth is MUNGE but Loom was built without libmunge. */
int tn_auth_supported(enum treenet_auth auth);

/* TREENET_AUTH_COOKIE: the job's secret, a printable string of
 * TN_COOKIE_MIN..TN_COOKIE_MAX bytes (mpiexec's: 64 hex digits). */
#define TN_COOKIE_MIN 16
#define TN_COOKIE_MAX 256
/* 0 if cookie is usable as the key of TREENET_AUTH_COOKIE. */
int tn_cookie_ok(const char *cookie);

/* Make a credential for (from -> to) bound to the receiver's nonce rnonce
 * and the sender's snonce, decodable only by uid reader (TN_UID_ANY: by
 * anyone); *cred is malloc'ed, NUL-terminated.  0, or -ENOKEY (munge
 * unavailable: munged stopped, frozen, refusing), -ENOMEM, -EINVAL, -ENOTSUP,
 * with a reason naming munge and its own message in why (size TN_WHY_MAX,
 * escaped; why may be NULL). */
int tn_cred_make(enum treenet_auth auth, const char *jobkey, const char *from,
                 const char *to, const char *rnonce, const char *snonce, uid_t reader,
                 char **cred, char *why);
/* Check a received credential (len bytes, not NUL-terminated).  The payload
 * must name jobkey, `to` and my_nonce (the nonce this receiver sent on this
 * connection); the uid must be want_uid or root (any uid with TN_UID_ANY).
 * The sender's "from" word goes to from (size fromlen), its nonce to
 * peer_nonce, its uid to *uid (may be NULL).  Returns 0, or -EACCES (the
 * peer's credential is refused) or -ENOKEY / -ENOMEM (this host's munge could
 * not decode it: munged stopped or frozen), with a reason in why (size
 * TN_WHY_MAX, peer bytes and munge's message escaped). */
int tn_cred_check(enum treenet_auth auth, const void *cred, size_t len, uid_t want_uid,
                  const char *jobkey, const char *to, const char *my_nonce, char *from,
                  size_t fromlen, char peer_nonce[TN_NONCE_HEX + 1], uid_t *uid,
                  char *why);
/* The same two with the key of TREENET_AUTH_COOKIE (ignored by the other
 * modes; the two above pass NULL).  In cookie mode the credential is the
 * payload, a blank and the 64 hex digits of HMAC-SHA256(cookie, "loom2
 * treenet cookie\n" payload); the check compares the tag in constant time
 * before it reads the payload, and the uid is neither made nor checked
 * (*uid: TN_UID_ANY): knowing the cookie is the proof. */
int tn_cred_make_k(enum treenet_auth auth, const char *cookie, const char *jobkey,
                   const char *from, const char *to, const char *rnonce,
                   const char *snonce, uid_t reader, char **cred, char *why);
int tn_cred_check_k(enum treenet_auth auth, const char *cookie, const void *cred,
                    size_t len, uid_t want_uid, const char *jobkey, const char *to,
                    const char *my_nonce, char *from, size_t fromlen,
                    char peer_nonce[TN_NONCE_HEX + 1], uid_t *uid, char *why);

/* The pure payload check of tn_cred_check (after munge), for tests/fuzzing. */
int tn_payload_check(const char *p, size_t len, const char *jobkey, const char *to,
                     const char *my_nonce, char *from, size_t fromlen,
                     char peer_nonce[TN_NONCE_HEX + 1], char *why);

/* Big-endian u32 helpers. */
void tn_put_u32(uint8_t *p, uint32_t v);
uint32_t tn_get_u32(const uint8_t *p);

/* Format a socket address as "ip:port" (or just "ip" if with_port is 0). */
void tn_addr_format(const struct sockaddr *sa, int with_port, char *out, size_t outlen);
/* TCP_NODELAY on; errors ignored (not every socket is TCP in tests). */
void tn_nodelay(int fd);
/* TCP keepalive on tree links, so a peer host that vanished without a FIN
 * (power loss, partition) is noticed on an idle link after about
 * TN_KEEPIDLE_S + TN_KEEPINTVL_S * TN_KEEPCNT seconds. */
#define TN_KEEPIDLE_S 30
#define TN_KEEPINTVL_S 10
#define TN_KEEPCNT 6
void tn_keepalive(int fd);

#endif /* LOOM_TN_INT_H */
