/* pmi_wire.h - the PMI-1 and PMI-2 wire codec, shared by server and clients.
 *
 * Contract:
 *   Parsing: a request or reply is turned into an ordered list of key/value
 *   pairs (struct pmi_msg).  The first pair is always "cmd" (or "mcmd" for a
 *   PMI-1 spawn block).  Order and repeated keys are kept (spawn needs both).
 *   Parsing copies the input, so the caller's buffer may be reused at once.
 *
 *   Framing: pmi_frame_next() finds the end of the next complete request in
 *   an input buffer that grows by arbitrary reads.  It never reads past the
 *   data it was given, so several requests in one read and one request over
 *   many reads both work.
 *
 *   Building: struct pmi_out accumulates one message and produces the exact
 *   bytes to write (PMI-1: "cmd=x k=v\n"; PMI-2: 6-byte length + "cmd=x;k=v;").
 *
 * Notes:
 *   - PMI-1 (version 1): tokens separated by one or more spaces, line ends at
 *     '\n'.  A value ends at the next space; '=' inside a value is kept.  A
 *     token without '=' is a protocol error (EPROTO).  A spawn block
 *     ("mcmd=spawn\n...endcmd\n") is one request whose pairs are one per line
 *     (values may then contain spaces).
 *   - PMI-2 (version 2): 6 ASCII bytes of decimal body length, left- or
 *     right-justified with spaces, leading zeros allowed; then the body
 *     "cmd=NAME;k=v;...;".  ";;" inside a value is a literal ';'.  Bytes after
 *     the last complete "k=v;" pair are ignored (MPICH <= 4.0 simple2pmi sent
 *     6 stray bytes there).  Body length 0 or > PMI_WIRE_MAX_BODY is EPROTO.
 *   - Every function returns 0 or a negative errno (-EPROTO malformed,
 *     -EMSGSIZE too long, -ENOMEM); nothing here does I/O.
 *
 * See also: doc/wire.md, doc/clients.md
 */
#ifndef LOOM_PMI_WIRE_H
#define LOOM_PMI_WIRE_H

#include <stddef.h>
#include <stdbool.h>

#define PMI_WIRE_LENFIELD 6           /* PMI-2 length prefix, in bytes */
#define PMI_WIRE_MAX_BODY 999999      /* largest body a 6-digit prefix can carry */
#define PMI_WIRE_MAX_LINE (64 * 1024) /* largest PMI-1 line/spawn block we accept */

/* Limits we advertise (get_maxes, PMI2_MAX_*): MPICH and Slurm clients size
 * their buffers from these, so they must not grow. */
#define PMI_MAX_KVSNAME 256
#define PMI_MAX_KEYLEN 64
#define PMI_MAX_VALLEN 1024

struct pmi_kv {
    char *key;
    char *val;
};

struct pmi_msg {
    int n;              /* number of pairs */
    struct pmi_kv *kv;  /* kv[0] is cmd / mcmd */
    char *store;        /* owned storage the pointers point into */
};

/* Which protocol a connection speaks once its init line has been seen. */
enum pmi_version { PMI_V_UNKNOWN = 0, PMI_V1 = 1, PMI_V2 = 2 };

/* Find the next complete request in buf[0..len).
 * Returns 1 and sets *frame_len (bytes to consume) and *body, *body_len (the
 * part to hand to the parser) when one is complete; 0 if more bytes are
 * needed; -EPROTO/-EMSGSIZE if the input can never become a valid request.
 * For PMI-1 the body is the line or block without its final '\n'; for
 * PMI-2 it is the record after the length field (it may hold junk after
 * the last pair, which pmi_msg_parse_v2 ignores).
 * For PMI_V_UNKNOWN and PMI_V1 the frame is one '\n'-terminated line, or,
 * when the line starts with "mcmd=", everything up to and including a line
 * that is exactly "endcmd".  For PMI_V2 it is the length-prefixed record. */
int pmi_frame_next(enum pmi_version v, const char *buf, size_t len,
                   size_t *frame_len, const char **body, size_t *body_len);

/* Parse one PMI-1 line (without or with its trailing '\n') or spawn block. */
int pmi_msg_parse_v1(struct pmi_msg *m, const char *s, size_t len);
/* Parse one PMI-2 body (no length prefix). */
int pmi_msg_parse_v2(struct pmi_msg *m, const char *s, size_t len);
void pmi_msg_free(struct pmi_msg *m);

/* The value of the first pair named key, or NULL. */
const char *pmi_msg_get(const struct pmi_msg *m, const char *key);
/* Like pmi_msg_get, starting the search at pair index *pos and leaving *pos
 * just after the match: walks repeated keys in order. */
const char *pmi_msg_next(const struct pmi_msg *m, const char *key, int *pos);
/* Integer value of key (strtol base 10, whole string): 0, -ENOENT if absent,
 * -EINVAL if not an integer. */
int pmi_msg_get_int(const struct pmi_msg *m, const char *key, int *out);
/* Boolean "TRUE"/"FALSE" (also "true"/"false", "yes"/"no", "1"/"0"):
 * 0, -ENOENT, -EINVAL. */
int pmi_msg_get_bool(const struct pmi_msg *m, const char *key, bool *out);
/* The command name (value of kv[0]), or "" for an empty message. */
const char *pmi_msg_cmd(const struct pmi_msg *m);

/* Message builder.  Usage:
 *   struct pmi_out o;
 *   pmi_out_begin(&o, PMI_V2, "kvs-get-response");
 *   pmi_out_add(&o, "rc", "0"); pmi_out_addint(&o, "rank", r);
 *   if (pmi_out_end(&o) == 0) write(fd, o.buf, o.len);
 *   pmi_out_free(&o);
 * PMI_V2 values are escaped (';' -> ";;").  PMI_V1 values must not contain
 * ' ' or '\n': pmi_out_add replaces them by '_' so a reply never breaks the
 * line grammar (messages to humans only).  Errors are sticky: the first
 * failure is returned by pmi_out_end, which also writes the length prefix. */
struct pmi_out {
    enum pmi_version v;
    char *buf;
    size_t len, cap;
    int err;
};
void pmi_out_begin(struct pmi_out *o, enum pmi_version v, const char *cmd);
void pmi_out_add(struct pmi_out *o, const char *key, const char *val);
void pmi_out_addint(struct pmi_out *o, const char *key, long v); /* decimal */
void pmi_out_addf(struct pmi_out *o, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int pmi_out_end(struct pmi_out *o);
void pmi_out_free(struct pmi_out *o);

#endif /* LOOM_PMI_WIRE_H */
