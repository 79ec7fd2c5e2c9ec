/*
 * dynwire.h - what dynamic-process code reads from outside its own process: port
 *             names (strings a user passes around, publishes or looks up), the
 *             accept/connect control messages and the Comm_join hello read from a
 *             socket the user hands us.  Pure parsers (core/dynwire.c), no engine
 *             state, so that tests/fuzz/fuzz_mpi_dyn.c links them alone.
 *
 * Owns: the formats, and every bound on them.
 * Contract:
 *   - A port name is "loom-port:1:<world rank>:<tag>:<job id>" (decimal, no signs or
 *     spaces, tag odd and in (0, XM_DYN_TAG_MAX), job id 1..63 printable bytes, whole
 *     string < MPI_MAX_PORT_NAME).  xm_dyn_port_parse() accepts exactly that, 0 or
 *     -EINVAL; it never reads past the first NUL nor past MPI_MAX_PORT_NAME bytes.
 *   - Control messages (struct xm_dyn_msg, four int32 in host order: the peer is a
 *     process of this job on this machine's ABI) are checked by xm_dyn_msg_check():
 *     magic, a known kind, an even tag in [0, XM_DYN_TAG_MAX).
 *   - The join hello (struct xm_dyn_hello, fixed 88 bytes) is checked by
 *     xm_dyn_hello_check(): magic, version, a job id NUL-terminated inside its field,
 *     size > 0, 0 <= rank < size, an even tag in range.
 *   Between jobs (the formats of the cross-job step, DESIGN.md "Dynamic processes"):
 *   - A TCP address card is "a.b.c.d:port[,a.b.c.d:port...]" (what tcp.c advertises),
 *     1..XM_DYN_ADDRS addresses, dotted quads of 0..255 without leading zeros beyond
 *     one digit, ports 1..65535.  xm_dyn_addrs_parse() reads one, stopping at the first
 *     byte that cannot continue it.
 *   - A version-2 port name also carries what a process of another job needs to reach
 *     the owner: "loom-port:2:<rank>:<tag>:<secret>:<card>:<job id>", the secret being
 *     XM_DYN_SECRET random bytes in lower-case hex (drawn per port: connections made
 *     through the port prove it instead of the job's secret, which never leaves the
 *     job).  Same bounds as version 1 for the rest; xm_dyn_port_parse() takes both
 *     versions (p->version says which; a version-1 name has naddr 0).
 *   - The card list the two roots swap (one entry per process of the sending group, in
 *     group rank order): header {magic "LMDC", u32 version 1, u32 count, u32 0} then
 *     count fixed entries of XM_DYN_CARD_WIRE bytes {job id[64] NUL-padded, u32 rank
 *     in its job, u32 naddr, naddr x (u32 IPv4 in network order, u32 port)}, all u32
 *     little-endian (the peer may be another machine).  xm_dyn_cards_check(): exact
 *     length for count, 1 <= count <= XM_DYN_CARDS_MAX, each job id printable and
 *     terminated, rank < XM_DYN_TAG_MAX, 1 <= naddr <= XM_DYN_ADDRS, unused address
 *     slots zero, ports 1..65535, no (job id, rank) twice.
 *   - The TCP netmod's cross-job hello (tcp.c, the first bytes a process of another job
 *     sends to this one's listener): fixed XM_DYN_XHELLO_WIRE bytes, little-endian,
 *     {u32 magic "LLMX", u32 connector's rank in its job, u32 acceptor's rank it wants,
 *     u32 port tag (0 = none: the acceptor knows the connector already), 16-byte nonce,
 *     connector's job id[64], acceptor's job id[64] (NUL-padded), u32 naddr, 4 x (u32
 *     IPv4 in network order, u32 port)} (the connector's card).  The first 32 bytes
 *     have the layout of the in-job hello, so the acceptor tells the two apart by the
 *     magic before it reads more.  xm_dyn_xhello_check(): exact length, magic, both
 *     job ids printable, terminated and zero-padded, ranks < XM_DYN_TAG_MAX, port tag
 *     0 or odd and below XM_DYN_TAG_MAX, the card as in a card list.  Nothing in it
 *     is believed until the connector proved the secret (tcp.c).

 *   - The join port message (Comm_join between jobs, after both hellos and verdicts:
 *     the side that accepts sends it on the user's socket): fixed XM_DYN_JOINPORT_WIRE
 *     bytes, {magic "LOOMPORT", a port name NUL-terminated and NUL-padded to
 *     XM_DYN_PORT_MAX}.  xm_dyn_joinport_check(): exact length, magic, one spelling
 *     (terminated, zeros after), a version-2 name that xm_dyn_port_parse() takes.
 */
#ifndef XM_DYNWIRE_H
#define XM_DYNWIRE_H

#include <stddef.h>
#include <stdint.h>

#define XM_DYN_TAG_MAX (1 << 30)
#define XM_DYN_JOBID 64
#define XM_DYN_PORT_MAX 256 /* MPI_MAX_PORT_NAME */

#define XM_DYN_ADDRS 4  /* addresses per card, in port names and card lists */
#define XM_DYN_SECRET 16 /* bytes of a port's secret */

/* one TCP address card: IPv4 addresses in network order, ports in host order */
struct xm_dyn_addrs {
    int naddr;
    uint32_t ip[XM_DYN_ADDRS];
    uint16_t port[XM_DYN_ADDRS];
};

struct xm_dyn_port {
    int version; /* 1: this job only; 2: with secret and card */
    int rank, tag;
    char jobid[XM_DYN_JOBID];
    uint8_t secret[XM_DYN_SECRET]; /* version 2 */
    struct xm_dyn_addrs addrs;     /* version 2 (naddr 0 for version 1) */
};

int xm_dyn_port_parse(const char *s, struct xm_dyn_port *p);
/* "loom-port:<p->version>:..." into buf (len >= XM_DYN_PORT_MAX); 0 or -ENAMETOOLONG
 * (-EINVAL for a version-2 port without addresses) */
int xm_dyn_port_format(char *buf, size_t len, const struct xm_dyn_port *p);

#define XM_DYN_MAGIC 0x4c4d4459 /* "LMDY" */
enum { XM_DYN_REQ = 1, XM_DYN_OK = 2, XM_DYN_NAK = 3, XM_DYN_CONFIRM = 4 };

struct xm_dyn_msg {
    int32_t magic, kind, tag, zero;
};

/* NULL = acceptable, else what is wrong */
const char *xm_dyn_msg_check(const void *buf, size_t len, struct xm_dyn_msg *out);

#define XM_DYN_HELLO_MAGIC "LOOMJOIN"
struct xm_dyn_hello {
    char magic[8];
    int32_t version, size, rank, tag;
    char jobid[XM_DYN_JOBID];
};

const char *xm_dyn_hello_check(const void *buf, size_t len, struct xm_dyn_hello *out);

/* Parse a card from s (at most n bytes, stops at NUL): 0 and *used = bytes consumed, or
 * -EINVAL. */
int xm_dyn_addrs_parse(const char *s, size_t n, struct xm_dyn_addrs *a, size_t *used);
/* the card as text (len >= XM_DYN_ADDRS * 22); 0 or -ENAMETOOLONG */
int xm_dyn_addrs_format(char *buf, size_t len, const struct xm_dyn_addrs *a);

#define XM_DYN_CARDS_MAGIC 0x43444d4cu /* "LMDC" little-endian */
#define XM_DYN_CARDS_MAX 4096          /* processes in one group of a connection */
#define XM_DYN_CARDS_HDR 16
#define XM_DYN_CARD_WIRE (XM_DYN_JOBID + 8 + 8 * XM_DYN_ADDRS)

struct xm_dyn_card {
    char jobid[XM_DYN_JOBID];
    int rank; /* in its own job */
    struct xm_dyn_addrs addrs;
};

/* bytes of a card list of n entries */
static inline size_t xm_dyn_cards_len(int n)
{
    return XM_DYN_CARDS_HDR + (size_t)n * XM_DYN_CARD_WIRE;
}
/* Encode n cards into buf (cap >= xm_dyn_cards_len(n)); bytes written or -EINVAL
 * (n out of range, an entry that xm_dyn_cards_check would refuse) / -ENOSPC. */
long xm_dyn_cards_encode(const struct xm_dyn_card *c, int n, void *buf, size_t cap);
/* Check a received list; NULL and *n = count, then decode entry i with
 * xm_dyn_cards_get (only after a NULL check).  Else what is wrong. */
const char *xm_dyn_cards_check(const void *buf, size_t len, int *n);
void xm_dyn_cards_get(const void *buf, int i, struct xm_dyn_card *out);

#define XM_DYN_XHELLO_MAGIC 0x584d4c4cu /* "LLMX" little-endian */
#define XM_DYN_NONCE 16
#define XM_DYN_XHELLO_WIRE (32 + 2 * XM_DYN_JOBID + 4 + 8 * XM_DYN_ADDRS)

struct xm_dyn_xhello {
    int rank, to, port_tag;
    uint8_t nonce[XM_DYN_NONCE];
    char tojob[XM_DYN_JOBID];
    struct xm_dyn_card from; /* the connector: job id, rank, card */
};

/* Encode h into buf (XM_DYN_XHELLO_WIRE bytes); 0 or -EINVAL (a field the check would
 * refuse). */
int xm_dyn_xhello_encode(const struct xm_dyn_xhello *h, void *buf);
/* NULL = acceptable (*out filled), else what is wrong */
const char *xm_dyn_xhello_check(const void *buf, size_t len, struct xm_dyn_xhello *out);

#define XM_DYN_JOINPORT_MAGIC "LOOMPORT"
#define XM_DYN_JOINPORT_WIRE (8 + XM_DYN_PORT_MAX)

/* The message for name (a version-2 port name) into buf (XM_DYN_JOINPORT_WIRE bytes);
 * 0 or -EINVAL (too long, or a name the check would refuse). */
int xm_dyn_joinport_encode(const char *name, void *buf);
/* NULL = acceptable (*out parsed, name[] the name), else what is wrong */
const char *xm_dyn_joinport_check(const void *buf, size_t len, struct xm_dyn_port *out,
                                  char name[XM_DYN_PORT_MAX]);

#endif
