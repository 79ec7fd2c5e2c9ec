/*
 * tcp.h - what the pieces of the TCP netmod share (and nothing outside mpi/tcp/ uses):
 *         the wire layout (frame header, handshake messages), the one enum of
 *         connection states, the connection and pending-accept objects, the netmod's
 *         state, and the functions one piece calls in another.
 *
 * The pieces (each opens with what it owns):
 *   tcp.c   the transport ops table, discovery (addresses, business cards, the job
 *           secret), the listener socket, the epoll set and progress (poll, block,
 *           the wake descriptors in the set), finalize;
 *   conn.c  the connection state machine: every state change (tcp_conn_to), the
 *           handshake of both sides and both hello kinds (job and cross-job), the
 *           accept slots, losing a peer;
 *   send.c  the send queue: queue entries, writev (sendmsg) of header + payload,
 *           back-pressure (EPOLLOUT, the write list), the goodbye frame;
 *   recv.c  the frame parser: reassembly, every header checked before its payload is
 *           read, payloads straight into the receive buffer.
 *
 * Why not common/stream.c (the framed stream of treenet and the launcher): its wire is
 *   a 4-byte length per frame, ours a 16-byte frame header that every peer already
 *   speaks (wire bytes stay as they are); and the hot path needs what it does not do:
 *   it copies every outgoing frame into one allocation (post_ref here sends header +
 *   the caller's payload with one sendmsg, no copy, and reports when the last byte
 *   left), and it reads a large frame into a buffer of its own (here an eager or
 *   rendezvous payload goes straight into the user's receive buffer, and the next
 *   header after a large frame is read alone so that the one after can too).
 */
#ifndef XM_TCP_H
#define XM_TCP_H

#include <netinet/in.h>
#include <stdint.h>
#include <time.h>

#include "../../common/mac.h"
#include "../core/p2p.h"
#include "../core/proc.h"
#include "../core/transport.h"

#define HS_MAGIC 0x324d4c4cu /* "LLM2": handshake version 2 (authenticated) */
#define REPLY_ACK 0x41434b31u
#define REPLY_NAK 0x4e414b31u
#define NONCE_LEN 16
#define HS_TIMEOUT_DEFAULT 10 /* s: LOOM_MPI_TCP_HANDSHAKE_TIMEOUT */
#define HS_PENDING_DEFAULT 64 /* LOOM_MPI_TCP_MAX_PENDING */
#define HS_RETRIES 16         /* a handshake of mine cut short is tried again */
#define REFUSE_LOG_S 60       /* refusals after the first: one summary line a minute */
#define SMALL_CAP 4096
#define BIG_CAP 65536
#define RBUF_INIT (256 * 1024)
#define MAX_IOV 64
#define CARD_MAX 1024
#define MAX_ADDRS 8
#define DIRECT_MIN 4096 /* payloads read straight into the receive buffer */
#define BIG_FRAME 65536 /* after a frame this big, read the next header alone */

/* what an epoll entry's data points at (the first int of the object) */
enum { K_LISTEN = 1, K_PEND, K_CONN, K_EVENT, K_WATCH };

/* The states of the netmod's objects; conn.c makes every change (tcp_conn_to for a
 * connection, the acceptor's steps for a pending accept).
 * A connection (struct conn), connector side:
 *   NONE -> (first packet) CONNECTING -> (writable: hello) HELLO_SENT
 *   -> (challenge checked, proof) PROOF_SENT -> ACK: UP, NAK: WAIT_PEER (the peer's
 *   own connection wins); a handshake cut short goes back to NONE and connects again.
 * acceptor side: an accepted socket (struct pend) goes P_HELLO (reading the hello;
 *   P_XHELLO: the rest of a cross-job one) -> (challenge) P_PROOF (reading the proof)
 *   -> ACK: the peer's connection (whatever state it was in but UP) becomes UP with
 *   that socket, or NAK / refused and closed.
 * Then UP -> (goodbye, end of stream) CLOSED, or any -> DEAD (xm_peer_lost). */
enum tcp_state {
    C_NONE,
    C_CONNECTING,
    C_HELLO_SENT,
    C_PROOF_SENT,
    C_WAIT_PEER,
    C_UP,
    C_CLOSED,
    C_DEAD,
    P_HELLO,
    P_XHELLO,
    P_PROOF
};
enum { F_PKT = 0, F_BYE = 1 };

struct fhdr {
    uint32_t kind;
    uint32_t zero;
    uint64_t paylen;
};
#define FRAME_HDR (sizeof(struct fhdr) + sizeof(struct xm_pkt_hdr))

/* connector -> acceptor, first */
struct hs_hello {
    uint32_t magic;
    int32_t rank; /* the connector's world rank */
    int32_t to;   /* the acceptor's world rank it wants */
    uint32_t zero;
    uint8_t nonce[NONCE_LEN]; /* fresh: binds the acceptor's proof to this connection */
};
/* acceptor -> connector: its challenge and its own proof */
struct hs_chal {
    uint32_t magic;
    int32_t rank;
    uint8_t nonce[NONCE_LEN]; /* fresh: the connector's proof must cover it */
    uint8_t mac[LOOM_MAC_LEN];
};
/* then connector -> acceptor: LOOM_MAC_LEN bytes of proof; acceptor -> connector: a
 * 4-byte REPLY_ACK or REPLY_NAK */

/* One queued frame: header (+ copied payload) in buf, or a referenced payload. */
struct tq {
    struct tq *next;
    size_t cap;       /* bytes of buf beyond the frame header */
    size_t hlen;      /* bytes in buf to send (frame header + copied payload) */
    const char *zptr; /* referenced payload (post_ref) or NULL */
    size_t zlen;
    size_t off;         /* bytes of hlen + zlen already written */
    struct xm_req *req; /* post_ref: told when written */
    _Alignas(8) char buf[];
};

struct conn {
    int kind; /* K_CONN (first: epoll data points at it) */
    int fd;
    enum tcp_state state; /* changed only by tcp_conn_to() */
    int peer;
    struct tq *sq, **sq_tail;
    int in_wlist;
    uint32_t ev;   /* events registered in xm_tcp.ep (0: not in the set) */
    uint32_t want; /* events it should have there (tcp_ep_set); quiet defers them */
    char *rb;
    size_t rlen, rcap;
    /* a frame whose payload is read straight into memory outside rb */
    char *dptr;
    size_t dleft, dlen;
    size_t dkeep; /* of dleft, bytes still to store at dptr (the rest is dropped) */
    char *dtmp;   /* temporary of the frame's size (not a direct target) */
    struct xm_pkt_hdr dh;
    unsigned char hs[sizeof(struct hs_chal)]; /* handshake bytes read so far */
    int rgot;
    int tries;                /* handshakes of mine cut short (HS_RETRIES) */
    uint8_t nonce[NONCE_LEN]; /* my hello's nonce */
    int xrank; /* the peer's rank in its own job: what its frames name as src */
    int big;   /* the last frame was large: read the next header alone */
    int bye;   /* goodbye received */
    int err;   /* deferred failure (errno) from a send */
};

struct pend { /* an accepted socket whose handshake is not done */
    int kind; /* K_PEND */
    int fd;
    enum tcp_state state; /* P_HELLO, P_XHELLO, P_PROOF */
    int rank, slot;
    unsigned char buf[XM_DYN_XHELLO_WIRE]; /* hello, then proof */
    int x;                                 /* a process of another job (hello in xh) */
    struct xm_dyn_xhello xh;
    uint8_t xkey[XM_DYN_SECRET];
    size_t got;
    uint8_t nonce_c[NONCE_LEN], nonce_a[NONCE_LEN];
    double deadline;
    struct sockaddr_in from;
};

struct xm_tcp_state {
    int ep, lfd, lport;
    int kind_listen;
    struct conn **peer; /* process id (core/proc.h) -> conn (NULL until first used) */
    int cap;            /* entries of peer, up and wl */
    struct conn **up;   /* connections in C_UP (for the fast poll) */
    int nup;
    struct conn **wl; /* connections with something queued */
    int nwl;
    int nhand;          /* handshakes in progress (connecting, pending accepts) */
    struct pend **pend; /* accepted sockets in their handshake (at most pend_max) */
    int npend, pend_max, lpaused;
    double hs_timeout;
    unsigned sweep;
    uint8_t key[LOOM_KEY_LEN]; /* the job's secret (rank 0 made it; the KVS spread it) */
    int have_key;
    double refuse_t; /* refusals: when the last line was logged, and since then */
    unsigned long refused, refused_quiet;
    int any_err;
    unsigned tick;
    int quiet;           /* the C_UP connections are out of the epoll set (tcp.c) */
    unsigned fast_polls; /* fast polls since the last block() */
    struct tq *free_small, *free_big;
    struct in_addr my_addr[MAX_ADDRS], my_mask[MAX_ADDRS];
    int nmy;
    int active;
};
extern struct xm_tcp_state xm_tcp; /* defined in tcp.c */

static inline double tcp_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- tcp.c ---- */
void tcp_ep_set(struct conn *c, uint32_t ev); /* events c should have in the set */
void tcp_ep_del_close(int fd);
int tcp_peer_addr(int peer, struct sockaddr_in *sa); /* from its card; 0 or -errno */

/* ---- conn.c ---- */
void tcp_conn_to(struct conn *c, enum tcp_state s);
struct conn *tcp_conn_new(int peer);
struct conn *tcp_conn_open(int dest); /* dest's connection, connecting if NONE */
void tcp_conn_free(struct conn *c);
void tcp_became_up(struct conn *c);
int tcp_conn_event(struct conn *c, uint32_t events); /* epoll said c is ready */
void tcp_lose(struct conn *c, const char *why);
void tcp_lose_errno(struct conn *c, int e);
/* the transport's drop op: another job's process dest closed for good (core/p2p.c) */
void tcp_drop(struct xm_transport *t, int dest);
void tcp_accept(void);               /* the listener is readable */
void tcp_pend_event(struct pend *p); /* bytes of an accepted socket's handshake */
void tcp_pend_free(struct pend *p);
void tcp_pend_sweep(void);

/* The connection a packet to dest goes on (connecting on the first one). */
static inline struct conn *tcp_conn_get(int dest)
{
    struct conn *c = xm_tcp.peer[dest];
    if (!c || c->state == C_NONE)
        c = tcp_conn_open(dest);
    return c;
}

/* ---- send.c ---- */
struct tq *tcp_tq_get(size_t want);
void tcp_tq_put(struct tq *q);
void tcp_wl_add(struct conn *c);
int tcp_flush(struct conn *c); /* 0, or -errno on a broken socket */
void tcp_flush_or_fail(struct conn *c);
void tcp_send_bye(struct conn *c);
struct xm_pkt_hdr *tcp_alloc_n(struct xm_transport *t, int dest, size_t want,
                               void **payload, size_t *cap);
struct xm_pkt_hdr *tcp_alloc(struct xm_transport *t, int dest, void **payload,
                             size_t *cap);
int tcp_post(struct xm_transport *t, int dest, struct xm_pkt_hdr *h, size_t paylen);
int tcp_post_ref(struct xm_transport *t, int dest, const struct xm_pkt_hdr *h,
                 const void *data, size_t len, struct xm_req *r);
int tcp_queued(struct xm_transport *t, int dest);

/* ---- recv.c ---- */
int tcp_read(struct conn *c); /* read what is there; > 0: progress */

#endif
