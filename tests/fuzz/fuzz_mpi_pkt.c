/* fuzz_mpi_pkt.c - libFuzzer target: libmpi's TCP netmod as a hostile peer drives it:
 * the byte stream of an authenticated connection (frame reassembly, frame_check,
 * xm_pkt_check, xm_handle_pkt, the direct-to-buffer path) and the acceptor's handshake.
 *
 * fuzz-sources: mpi/dt/dtype.c mpi/dt/derived.c mpi/dt/flatten.c common/mac.c
 * fuzz-sources: mpi/core/proc.c mpi/core/dynwire.c mpi/core/xsec.c
 * fuzz-cflags: -Impi/include -Iinclude -Impi/core -Icommon
 * fuzz-options: -max_len=200000 -close_fd_mask=2 -use_value_profile=1
 *
 * Contract: the target includes mpi/core/obj.c, the engine's files (p2p.c, funnel.c,
 * match.c, progress.c, rdv.c) and the TCP netmod's (conn.c, recv.c, send.c, tcp.c):
 * their statics are its state (the request table restarts empty for every input, so
 * request handles - the cookies - are the same for the same input); it runs rank 0 of
 * a 4-rank job whose COMM_WORLD returns errors (a broken connection fails requests
 * instead of ending the process).  Input byte 0 picks: even  a connection to rank 1 that
 * passed the handshake: the rest of the input arrives on it (a socketpair, then end of
 * stream) while receives are posted (handle 0x47800000: 64 KiB contiguous from rank 1 tag
 * 5 - the direct path -,
 *         ...01: 16 bytes from any rank and tag, ...02: 100 ints from rank 1 any tag);
 * CTS packets our rendezvous receives send go back on the same socket. odd   a stranger's
 * connection to our listener: the rest is what it sends (hello, proof, anything) against
 * a fixed secret. Invariants (a trap is a finding): xm_die() is never reached (every
 * protocol error of a TCP peer ends that connection; out-of-memory cannot happen at these
 * sizes); a packet xm_pkt_check() passed never writes outside the buffers (ASan); a
 * stranger's connection never becomes rank 1's connection (it cannot make the proof).
 * State (requests, queues, the connection) is reset after every input.
 * Seeds: corpus/mpi_pkt/: the frames a real rank 1 writes, byte for byte in tcp.c's
 * layout (struct fhdr + struct xm_pkt_hdr + payload): an 8-byte eager message, one for
 * the any-source receive, a synchronous one, 64 KiB straight into the posted buffer,
 * an unexpected eager message in three fragments, 100 ints, RTS then RDATA (whole and
 * truncated in two parts), an unexpected RTS, SSEND_ACK/CTS/FIN, CANCEL of an unexpected
 * message and of none then a stray CANCEL_ACK (cancel), a stream cut without
 * goodbye; for the acceptor a hello as tcp.c's connector sends it with a proof, and
 * the old unauthenticated hello.
 */

/* Input byte 0 & 3 == 2: the even mode's connection, but from process 4 of another job
 * (rank 0 there, so its frames name src 0).  No communicator here holds it
 * (core/xsec.c); its messages on contexts not made here wait unexpected under a small
 * quota (LOOM_MPI_XJOB_UNEXP_MSGS 8, _BYTES 4096); passing it, or a refused synchronous
 * or rendezvous send, drops it (core/p2p.c xm_p2p_drop, tcp/conn.c: the connection
 * closes in the middle of the stream).  Invariants: it never holds more than 8
 * messages here, and a dropped connection is not read again.  Seeds: xjob_quota (eager
 * messages past the quota), xjob_bytes, xjob_sync (a refused synchronous send), xjob_rts
 * (a refused RTS). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* the engine is p2p.c with funnel.c, match.c, progress.c and rdv.c (core/p2p_int.h) */
#include "../../mpi/core/funnel.c"
#include "../../mpi/core/match.c"
#include "../../mpi/core/obj.c"
#include "../../mpi/core/p2p.c"
#include "../../mpi/core/progress.c"
#include "../../mpi/core/rdv.c"
/* the TCP netmod in four files (mpi/tcp/tcp.h): tcp.c, the state machine and
 * handshake (conn.c), the send queue (send.c) and the frame parser (recv.c) */
#include "../../mpi/tcp/conn.c"
#include "../../mpi/tcp/recv.c"
#include "../../mpi/tcp/send.c"
#include "../../mpi/tcp/tcp.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---- what the rest of libmpi would provide ---- */
void xm_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nfuzz_mpi_pkt: xm_die reached\n");
    __builtin_trap();
}
int xm_env_int(const char *name, int dflt)
{
    (void)name;
    return dflt;
}
int xm_boot_get(int rank, const char *key, char *buf, int len)
{
    (void)rank, (void)key, (void)buf, (void)len;
    return -ENOENT;
}
int xm_boot_put(const char *key, const char *val)
{
    (void)key, (void)val;
    return 0;
}
void xm_lmt_init(void)
{
}
void xm_lmt_report(void)
{
}
int xm_lmt_wanted(size_t n)
{
    (void)n;
    return 0;
}
int xm_lmt_help(int dest, uint32_t cookie)
{
    (void)dest, (void)cookie;
    return 0;
}
int xm_lmt_recv(int src, uint32_t cookie, int spid, uint64_t saddr, void *dst, size_t n)
{
    (void)src, (void)cookie, (void)spid, (void)saddr, (void)dst, (void)n;
    __builtin_trap(); /* CMA is never used towards a peer of the netmod */
}
int xm_vm_copy(int write, int pid, void *buf, uint64_t remote, size_t n)
{
    (void)write, (void)pid, (void)buf, (void)remote, (void)n;
    __builtin_trap();
}
struct xm_transport xm_shm_transport;
void xm_comm_unref(struct xm_comm *c)
{
    (void)c; /* the target's requests have no communicator */
}
int xm_comm_rank_of(struct xm_comm *c, int wrank)
{
    (void)c, (void)wrank;
    return -1; /* (core/xsec.c) no communicator holds another job's process here */
}

/* ---- the job ---- */
#define NRANKS 4
#define FOREIGN NRANKS /* the other job's process: the first id after the world */
static struct xm_comm world = {
    .handle = MPI_COMM_WORLD, .refs = 1, .size = NRANKS, .errh = MPI_ERRORS_RETURN};
static int node_of[NRANKS] = {0, 1, 2, 3}, local_index[NRANKS] = {0, -1, -1, -1};

static void setup(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    xm_g.initialized = 1;
    xm_g.rank = 0;
    xm_g.size = NRANKS;
    snprintf(xm_g.jobid, sizeof(xm_g.jobid), "fuzz.0");
    xm_g.node_of = node_of;
    xm_g.local_index = local_index;
    xm_g.nlocal = 1;
    xm_g.world = &world;
    xm_g.net = &xm_tcp_transport;
    if (xm_proc_init(xm_g.jobid, NRANKS) < 0) /* the process table bounds packet sources */
        abort();
    struct xm_dyn_card card;
    memset(&card, 0, sizeof(card));
    snprintf(card.jobid, sizeof(card.jobid), "other.0");
    card.addrs.naddr = 1;
    card.addrs.ip[0] = 0x0100007fu;
    card.addrs.port[0] = 1;
    if (xm_proc_add(&card) != FOREIGN) /* before p2p: its arrays have room for it */
        abort();
    setenv("LOOM_MPI_XJOB_UNEXP_MSGS", "8", 1);
    setenv("LOOM_MPI_XJOB_UNEXP_BYTES", "4096", 1);
    if (xm_p2p_init() < 0)
        abort();
    T.lfd = -1;
    T.ep = epoll_create1(EPOLL_CLOEXEC);
    T.peer = calloc(NRANKS + 1, sizeof(*T.peer));
    T.up = calloc(NRANKS + 1, sizeof(*T.up));
    T.wl = calloc(NRANKS + 1, sizeof(*T.wl));
    T.pend_max = 4;
    T.pend = calloc((size_t)T.pend_max, sizeof(*T.pend));
    T.hs_timeout = 5;
    memset(T.key, 0x5a, sizeof(T.key));
    T.have_key = 1;
    T.active = 1;
    if (T.ep < 0 || !T.peer || !T.up || !T.wl || !T.pend)
        abort();
}

/* the rest of the input into fd's peer, then end of stream */
static int feed(const uint8_t *p, size_t n, int *mine)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0)
        abort();
    int big = 1 << 20;
    setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
    setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
    size_t off = 0;
    while (off < n) {
        ssize_t k = send(sv[1], p + off, n - off, MSG_NOSIGNAL);
        if (k <= 0)
            abort(); /* max_len keeps it below the socket buffer */
        off += (size_t)k;
    }
    shutdown(sv[1], SHUT_WR);
    *mine = sv[0];
    return sv[1];
}

static void reset_conn(int r)
{
    if (!T.peer[r])
        return;
    tcp_conn_free(T.peer[r]);
    T.peer[r] = NULL;
}

static void reset(struct xm_req **mine, int n)
{
    for (int i = 0; i < n; i++) {
        struct xm_req *r = mine[i];
        if (!r)
            continue;
        if (!r->done && !xm_cancel_recv(r) && xm_p2p_inflight[1] != r) {
            /* matched and waiting for its data: fail it like a lost peer would */
            xm_status_set(&r->status, 1, r->tag, MPI_ERR_OTHER, 0);
            xm_p2p_complete(r);
        }
        if (!r->done)
            xm_p2p_complete(r);
        xm_req_free(r);
    }
    for (int r = 0; r <= FOREIGN; r++) {
        struct xm_req *u = xm_p2p_inflight[r];
        xm_p2p_inflight[r] = NULL;
        if (u && u->kind == XM_REQ_UNEXP && !xm_p2p_on_list(&xm_p2p_unexp, u))
            xm_req_free(u);
    }
    while (xm_p2p_unexp.head) {
        struct xm_req *u = xm_p2p_unexp.head;
        xm_p2p_list_del(&xm_p2p_unexp, u);
        xm_req_free(u);
    }
    while (xm_p2p_posted.head)
        xm_p2p_list_del(&xm_p2p_posted, xm_p2p_posted.head);
    while (xm_p2p_ctrlq) {
        struct xm_p2p_ctrl *c = xm_p2p_ctrlq;
        xm_p2p_ctrlq = c->next;
        free(c);
    }
    ctrlq_tail = &xm_p2p_ctrlq;
    for (int r = 0; r <= FOREIGN; r++) {
        reset_conn(r);
        xm_p2p_lost[r] = 0;
        xm_p2p_pending[r] = 0;
    }
    xm_p2p_ndue = 0;
    xm_xsec_forget(FOREIGN);
    T.nup = T.nwl = T.nhand = T.quiet = 0;
    T.any_err = 0;
    while (T.npend)
        tcp_pend_free(T.pend[T.npend - 1]);
    T.nhand = 0;
    /* every request is free: the next input's get handles 0x47800000, ...01, ...02 */
    for (int i = 0; i < reqs.n; i++)
        reqs.slot[i] = NULL;
    reqs.n = reqs.nfree = 0;
}

static char big[65536], small[16];
static int ints[100];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 200000)
        return 0;
    setup();
    struct xm_req *mine[3] = {0};
    int mode = data[0] & 1, fd, other;
    if (mode == 0) {
        xm_irecv(big, sizeof(big), MPI_BYTE, 1, 5, 0, NULL, &mine[0]);
        xm_irecv(small, sizeof(small), MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, NULL,
                 &mine[1]);
        xm_irecv(ints, 100, MPI_INT, 1, MPI_ANY_TAG, 0, NULL, &mine[2]);
        other = feed(data + 1, size - 1, &fd);
        int from = (data[0] & 3) == 2 ? FOREIGN : 1;
        struct conn *c = tcp_conn_new(from);
        c->fd = fd;
        c->tries = 0;
        tcp_became_up(c);
        for (int i = 0; i < 4096 && c->state == C_UP; i++)
            if (tcp_read(c) == 0 && c->state == C_UP && !c->dleft)
                break; /* nothing more will come: a frame cut short */
        if (from == FOREIGN) {
            int held = 0;
            for (struct xm_req *u = xm_p2p_unexp.head; u; u = u->next)
                held += u->peer == FOREIGN;
            if (held > 8 || (xm_p2p_lost[FOREIGN] && c->state == C_UP))
                __builtin_trap(); /* past its quota, or dropped but still read */
        }
        close(other);
        reset(mine, 3);
    } else {
        other = feed(data + 1, size - 1, &fd);
        struct pend *p = calloc(1, sizeof(*p));
        if (!p)
            abort();
        p->kind = K_PEND;
        p->fd = fd;
        p->state = P_HELLO;
        p->deadline = tcp_now() + 5;
        p->slot = T.npend;
        T.pend[T.npend++] = p;
        T.nhand++;
        for (int i = 0; i < 64 && T.npend; i++)
            tcp_pend_event(T.pend[0]); /* p, until it is refused and freed */
        if (T.peer[1] && T.peer[1]->state == C_UP)
            __builtin_trap(); /* a stranger became rank 1 */
        close(other);
        reset(mine, 0);
    }
    return 0;
}
