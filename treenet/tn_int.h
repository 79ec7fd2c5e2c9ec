/* tn_int.h - internals shared by the rendezvous (rdv.c) and the tree links
 * (links.c): credentials (auth.c), framing and address helpers (frame.c).
 *
 * Contract:
 *   A credential binds the payload "loom1 <jobkey> <from> <to>", where from
 *   and to are node ids in decimal or the word "rdv" for the rendezvous
 *   server.  With TREENET_AUTH_MUNGE the credential is a munge string
 *   carrying that payload; with TREENET_AUTH_NONE it is the payload itself
 *   (tests only: anyone can forge it).
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

#include "treenet.h"

#define TN_CRED_MAX 4096
#define TN_JOBKEY_MAX 200
#define TN_WHY_MAX 256
/* Largest tree message accepted (and sent): more is treated as a broken peer. */
#define TN_MSG_MAX (64u << 20)

/* "uid any": the rendezvous client does not know the job's uid. */
#define TN_UID_ANY ((uid_t)-1)

/* 0 if jobkey is usable in a credential (no blanks, not too long). */
int tn_jobkey_ok(const char *jobkey);
/* -ENOTSUP when auth is MUNGE but Loom was built without libmunge. */
int tn_auth_supported(enum treenet_auth auth);

/* Make a credential for (from -> to); *cred is malloc'ed, NUL-terminated. */
int tn_cred_make(enum treenet_auth auth, const char *jobkey, const char *from,
                 const char *to, char **cred);
/* Check a received credential (len bytes, not NUL-terminated).  The payload
 * must name jobkey and `to`; the uid must be want_uid or root (any uid with
 * TN_UID_ANY).  The sender's "from" word goes to from (size fromlen).
 * Returns 0, or -EACCES with a reason in why (size TN_WHY_MAX). */
int tn_cred_check(enum treenet_auth auth, const void *cred, size_t len, uid_t want_uid,
                  const char *jobkey, const char *to, char *from, size_t fromlen,
                  char *why);

/* Big-endian u32 helpers. */
void tn_put_u32(uint8_t *p, uint32_t v);
uint32_t tn_get_u32(const uint8_t *p);

/* Parse "ip:port" / "[v6]:port" (numeric only) into sa.  0 or -EINVAL. */
int tn_addr_parse(const char *s, struct sockaddr_storage *sa, socklen_t *salen);
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
