/*
 * dynproc.c - dynamic processes: Open_port/Close_port, Comm_accept/Comm_connect,
 *             Comm_join, Comm_disconnect, Publish/Unpublish/Lookup_name, and
 *             Comm_spawn/Comm_spawn_multiple/Comm_get_parent.
 *
 * Owns: the port table of this process, the accept/connect
 * handshake, the join hello.  Wire formats and their bounds: core/dynwire.h.
 *
 * Scope: processes of this job (two halves of MPI_COMM_WORLD, or any groups of it),
 *   whose engine already knows every peer by its world rank, so a new intercommunicator
 *   needs only an agreement between the two roots, then Intercomm_create's own body
 *   (api/intercomm.c, xm_intercomm_build) with the roots talking on XM_DYN_CTX, the
 *   context id no communicator gets (core/comm.h); and processes of another job
 *   connecting through a version-2 port name (below), which is also how a spawned
 *   job meets its parents (the spawn section).
 * Between jobs: Open_port writes version 2 (a fresh 16-byte secret and this process's
 *   TCP card; the netmod starts here in a job that runs without it) and registers the
 *   secret with the process table (core/proc.h), which lets the TCP handshake of a
 *   stranger naming the port in.  Connect's root adds the owner from the name's card
 *   with the secret, then REQ/OK/CONFIRM as within a job on the owner's id.  After the
 *   handshake the root tells its group whether the peer is of another job (with the
 *   port's secret); if so every process of each group puts its card in (allgather),
 *   the roots swap the card lists (core/dynwire.h, checked), each root broadcasts the
 *   other group's list, every process adds those processes to its table with the
 *   port's secret, and xm_intercomm_build_ids builds the intercommunicator on those
 *   ids.
 *
 * Handshake (all on XM_DYN_CTX, messages are struct xm_dyn_msg):
 *   - Open_port takes a fresh odd tag t; the name is "loom-port:1:<my world rank>:t:<job
 *     id>".  Connect's root c sends REQ{tag = g} to the port's rank on tag t, where g is
 *     a fresh even tag unique in the job (c's counter * size + c, doubled).
 *   - Accept's root a receives REQ from any source on tag t, answers OK on tag g, and
 *     waits for c's CONFIRM on g; c, on OK, sends CONFIRM.  Then both groups run
 *     xm_intercomm_build with the roots exchanging on tag g.  No one else ever uses g.
 *   - Timeouts (LOOM_MPI_CONNECT_TIMEOUT, 60 s): c gives up waiting for OK (MPI allows
 *     connect to time out; an accept that never comes) -> MPI_ERR_PORT; a waits at most
 *     that long for CONFIRM, then drops that connector and goes on waiting for the next
 *     one (a half-made connection never becomes a communicator at one side only).
 *     Accept itself waits for a connector as long as it takes, as MPI says; spawn's
 *     accept of its children only that long (MPI_ERR_SPAWN when they never come).
 *   - Close_port answers NAK to every REQ already queued for the port; a REQ that
 *     arrives later is never answered, and its connector times out.
 *   - A control message that fails xm_dyn_msg_check is dropped (the port stays open).
 * Comm_join: each side writes a struct xm_dyn_hello (job id, size, world rank, a fresh
 *   even tag) to the socket and reads the other's, then one verdict byte each way (1 =
 *   I take your hello), all within the connect timeout; the tag g of the side with the
 *   lower world rank is used; the two ranks then swap CONFIRM{g} on tag g by p2p (the
 *   named rank proves it is joining: a relayed or forged hello fails at the deadline
 *   instead of hanging), then xm_intercomm_build over COMM_SELF.  A hello of this job
 *   of another size, or naming my own rank, fails with MPI_ERR_OTHER.
 *   A hello of another job (MPICH's way, over the socket itself): the side whose job id
 *   sorts first opens a version-2 port and sends its name on the socket (the fixed
 *   port message of core/dynwire.h), the other checks that the port belongs to the
 *   process its hello named, answers one byte (1 = I connect) and connects through it;
 *   the first accepts that process only (anyone else's REQ gets NAK) and closes the
 *   port.  Both sides stop at the join's deadline (a forged hello of another job:
 *   nobody connects, or no port comes), and the intercommunicator is accept/connect's,
 *   card swap included (finish).
 * Name service: the process manager's (PMI-2 Nameserv_*: mpiexec, srun's mpi/pmi2,
 *   Loom's plugin); boot.c's xm_boot_publish &c.  Without one (PMIx path, singleton):
 *   MPI_ERR_NAME / MPI_ERR_SERVICE.
 *
 * One piece (about 1000 lines): ports, accept/connect, join and spawn all end in the
 *   same root handshake on XM_DYN_CTX and the same card exchange between jobs (above),
 *   which are read together; the wire formats and their checks are in core/dynwire.h.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../../common/mac.h"
#include "../coll/coll.h"
#include "../core/boot.h"
#include "../core/boot_pmi.h"
#include "../core/dynwire.h"
#include "../core/p2p.h"
#include "../core/proc.h"
#include "../core/transport.h"
#include "intercomm.h"

XM_WEAK(MPI_Open_port)
XM_WEAK(MPI_Close_port)
XM_WEAK(MPI_Comm_accept)
XM_WEAK(MPI_Comm_connect)
XM_WEAK(MPI_Comm_disconnect)
XM_WEAK(MPI_Comm_join)
XM_WEAK(MPI_Publish_name)
XM_WEAK(MPI_Unpublish_name)
XM_WEAK(MPI_Lookup_name)
XM_WEAK(MPI_Comm_spawn)
XM_WEAK(MPI_Comm_spawn_multiple)
XM_WEAK(MPI_Comm_get_parent)

#define PORTS_MAX 1024

static int ports[PORTS_MAX]; /* open port tags; 0 = free slot */
static unsigned port_seq, tag_seq;
static MPI_Comm parent_comm = MPI_COMM_NULL; /* a spawned job's, from MPI_Init */

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static int connect_timeout(void)
{
    int s = xm_env_int("LOOM_MPI_CONNECT_TIMEOUT", 60);
    return s > 0 ? s : 60;
}

static double deadline(void)
{
    return now_s() + connect_timeout();
}

/* an even tag no other process of the job draws */
static int fresh_tag(void)
{
    unsigned span = (unsigned)(XM_DYN_TAG_MAX / 2) / (unsigned)xm_g.size;
    unsigned k = tag_seq++ % (span ? span : 1);
    return (int)((k * (unsigned)xm_g.size + (unsigned)xm_g.rank) * 2u);
}

static int port_slot(int tag)
{
    for (int i = 0; i < PORTS_MAX; i++)
        if (ports[i] == tag)
            return i;
    return -1;
}

static int to_class(int rc)
{
    switch (rc) {
    case -ENOMEM:
        return MPI_ERR_NO_MEM;
    case -ENOSPC:
        return MPI_ERR_INTERN;
    default:
        return MPI_ERR_PORT;
    }
}

/* Wait for r until it completes (1) or the deadline passes (0; r is then cancelled
 * and freed unless it completed meanwhile). */
static int wait_until(struct xm_req *r, double when)
{
    int spins = 0;
    while (!r->done) {
        if (now_s() > when) {
            if (xm_cancel_recv(r)) {
                xm_wait(r);
                xm_req_free(r);
                return 0;
            }
            break; /* matched meanwhile: it completes */
        }
        xm_progress();
        if (!r->done)
            xm_idle(&spins);
    }
    xm_wait(r);
    return 1;
}

static int send_msg(int dest, int tag, int kind, int g)
{
    struct xm_dyn_msg m = {XM_DYN_MAGIC, kind, g, 0};
    return xm_send(&m, (int)sizeof(m), MPI_BYTE, dest, tag, XM_DYN_CTX);
}

/* Receive one control message from src (MPI_ANY_SOURCE allowed) on tag; checked.
 * 1 received (*from set), 0 timed out (when > 0), -EPROTO malformed (dropped). */
static int recv_msg(int src, int tag, double when, struct xm_dyn_msg *m, int *from)
{
    char buf[2 * sizeof(*m)];
    struct xm_req *r;
    int rc = xm_irecv(buf, (int)sizeof(buf), MPI_BYTE, src, tag, XM_DYN_CTX, NULL, &r);
    if (rc < 0)
        return rc;
    if (when > 0) {
        if (!wait_until(r, when))
            return 0;
    } else {
        xm_wait(r);
    }
    MPI_Status st = r->status;
    xm_req_free(r);
    *from = st.MPI_SOURCE;
    if (st.MPI_ERROR != MPI_SUCCESS || xm_dyn_msg_check(buf, xm_status_bytes(&st), m))
        return -EPROTO;
    return 1;
}

/* ---- ports ------------------------------------------------------------------------ */
/* Open_port's body: 0 (port_name written, *version set) or -ENOMEM (no slot or table
 * space) / -EINVAL (a job id we cannot carry). */
static int open_port(char *port_name, int *version)
{
    int slot = port_slot(0);
    if (slot < 0)
        return -ENOMEM;
    struct xm_dyn_port p = {.version = 1, .rank = xm_g.rank};
    int tag = 0;
    for (unsigned tries = 0; tries < 2 * PORTS_MAX && !tag; tries++) {
        tag = (int)(((port_seq++ % (XM_DYN_TAG_MAX / 2 - 1)) * 2u) + 1u);
        if (port_slot(tag) >= 0)
            tag = 0;
    }
    p.tag = tag;
    snprintf(p.jobid, sizeof(p.jobid), "%s", xm_g.jobid);
    char name[XM_DYN_PORT_MAX];
    struct xm_dyn_port back;
    /* version 2 (reachable from other jobs) when the netmod runs or can start; the
     * secret goes to the process table only once the name is made */
    if (xm_tcp_card(&p.addrs) == 0 && loom_random_bytes(p.secret, sizeof(p.secret)) == 0) {
        p.version = 2;
        if (xm_dyn_port_format(name, sizeof(name), &p) < 0 ||
            xm_dyn_port_parse(name, &back) < 0) {
            p.version = 1; /* too long a name with every address: this job only */
            memset(&p.addrs, 0, sizeof(p.addrs));
        }
    }
    if (!tag || xm_dyn_port_format(name, sizeof(name), &p) < 0 ||
        xm_dyn_port_parse(name, &back) < 0)
        return -EINVAL; /* a job id we cannot carry */
    if (p.version == 2 && xm_proc_port_add(tag, p.secret) < 0)
        return -ENOMEM;
    memset(&p.secret, 0, sizeof(p.secret));
    ports[slot] = tag;
    memcpy(port_name, name, strlen(name) + 1);
    *version = p.version;
    return 0;
}

int PMPI_Open_port(MPI_Info info, char *port_name)
{
    (void)info;
    const char *fn = "MPI_Open_port";
    if (!port_name)
        return xm_err(NULL, MPI_ERR_ARG, fn);
    int version, rc = open_port(port_name, &version);
    if (rc < 0)
        return xm_err(NULL, rc == -ENOMEM ? MPI_ERR_NO_MEM : MPI_ERR_INTERN, fn);
    return MPI_SUCCESS;
}

int PMPI_Close_port(const char *port_name)
{
    const char *fn = "MPI_Close_port";
    struct xm_dyn_port p;
    if (!port_name || xm_dyn_port_parse(port_name, &p) < 0 || p.rank != xm_g.rank ||
        strcmp(p.jobid, xm_g.jobid))
        return xm_err(NULL, MPI_ERR_PORT, fn);
    int slot = port_slot(p.tag);
    if (slot < 0)
        return xm_err(NULL, MPI_ERR_PORT, fn);
    ports[slot] = 0;
    xm_proc_port_del(p.tag); /* no stranger comes in through it any more */
    /* refuse the connectors already waiting */
    MPI_Status st;
    struct xm_req *u;
    xm_progress();
    while ((u = xm_improbe(MPI_ANY_SOURCE, p.tag, XM_DYN_CTX, &st))) {
        char buf[2 * sizeof(struct xm_dyn_msg)];
        struct xm_req *r;
        struct xm_dyn_msg m;
        if (xm_mrecv(u, buf, (int)sizeof(buf), MPI_BYTE, NULL, &r) < 0)
            break;
        xm_wait(r);
        MPI_Status rs = r->status;
        xm_req_free(r);
        if (rs.MPI_ERROR == MPI_SUCCESS && !xm_dyn_msg_check(buf, xm_status_bytes(&rs), &m) &&
            m.kind == XM_DYN_REQ)
            send_msg(rs.MPI_SOURCE, m.tag, XM_DYN_NAK, m.tag);
    }
    return MPI_SUCCESS;
}

/* ---- accept / connect ---------------------------------------------------------------- */
static int check_collective(struct xm_comm *c, int root, MPI_Comm *newcomm, const char *fn)
{
    if (!c || c->inter)
        return xm_err(c, MPI_ERR_COMM, fn);
    if (root < 0 || root >= c->size)
        return xm_err(c, MPI_ERR_ROOT, fn);
    if (!newcomm)
        return xm_err(c, MPI_ERR_ARG, fn);
    return MPI_SUCCESS;
}

/* the port's owner and tag: 0, 1 for a port of another job (version 2), or <0 (a
 * message on stderr for a version-1 name of another job) */
static int parse_port(const char *name, struct xm_dyn_port *p, const char *fn)
{
    if (!name || xm_dyn_port_parse(name, p) < 0)
        return -EINVAL;
    if (strcmp(p->jobid, xm_g.jobid) && p->version == 2)
        return 1;
    if (strcmp(p->jobid, xm_g.jobid)) {
        fprintf(stderr,
                "loom-mpi: rank %d: %s: port of job %s, this is job %s: a version-1 "
                "port name reaches only its own job\n",
                xm_g.rank, fn, p->jobid, xm_g.jobid);
        return -EXDEV;
    }
    if (p->rank >= xm_g.size)
        return -EINVAL;
    return 0;
}

/* After the roots' handshake (peer, tag g): the root tells its group whether the
 * peer is of another job; if not, Intercomm_create's body as within a job, else the
 * card swap (see the header) and the build on the ids it gave.  0 or -errno. */
static int finish(struct xm_comm *c, int root, int peer, int g, int lrc, int cross,
                  const uint8_t secret[XM_DYN_SECRET], MPI_Comm *newcomm)
{
    struct {
        int32_t rc, cross;
        uint8_t secret[XM_DYN_SECRET];
    } h;
    memset(&h, 0, sizeof(h));
    /* the roots agree: the card swap as soon as either group has a process of another
     * job (the peer, or a member of a communicator spanning jobs) */
    if (c->rank == root && lrc == 0) {
        int32_t mine = cross || c->xjob, theirs = 0;
        lrc = xm_sendrecv(&mine, 1, MPI_INT32_T, peer, &theirs, 1, MPI_INT32_T, peer, g,
                          XM_DYN_CTX);
        cross = mine || theirs;
    }
    h.rc = lrc;
    h.cross = cross && lrc == 0;
    if (h.cross)
        memcpy(h.secret, secret, XM_DYN_SECRET);
    int rc = c->size > 1 ? xm_coll_bcast(&h, (int)sizeof(h), MPI_BYTE, root, c) : 0;
    if (rc < 0)
        return rc;
    if (!h.cross)
        return xm_intercomm_build(c, root, peer, g, XM_DYN_CTX, lrc, newcomm);
    /* every process's own card, to everyone of the group (the root needs them) */
    struct xm_dyn_card mine, *all = calloc((size_t)c->size, sizeof(*all));
    memset(&mine, 0, sizeof(mine));
    snprintf(mine.jobid, sizeof(mine.jobid), "%s", xm_g.jobid);
    mine.rank = xm_g.rank;
    rc = all ? xm_tcp_card(&mine.addrs) : -ENOMEM;
    if (rc < 0)
        memset(&mine.addrs, 0, sizeof(mine.addrs)); /* the root refuses the list */
    int arc = xm_icoll_allgather(&mine, (int)sizeof(mine), MPI_BYTE, all,
                                 (int)sizeof(mine), MPI_BYTE, c, NULL);
    if (!all)
        return -ENOMEM; /* (calloc of a few KiB) */
    int32_t hdr[2] = {arc < 0 ? arc : 0, 0}; /* rc, remote count */
    char *list = NULL;
    if (c->rank == root) {
        size_t ml = xm_dyn_cards_len(c->size);
        char *out = malloc(ml);
        int32_t rn = 0;
        long el = out && hdr[0] == 0 ? xm_dyn_cards_encode(all, c->size, out, ml) : -ENOMEM;
        if (el < 0) /* our own list: the other root gets a count of 0 and fails too */
            hdr[0] = (int32_t)el;
        int32_t n = hdr[0] < 0 ? 0 : c->size;
        rc = xm_sendrecv(&n, 1, MPI_INT32_T, peer, &rn, 1, MPI_INT32_T, peer, g, XM_DYN_CTX);
        if (rc == 0 && (rn < 1 || rn > XM_DYN_CARDS_MAX))
            rc = -EPROTO;
        size_t rl = rc == 0 ? xm_dyn_cards_len(rn) : 0;
        if (rc == 0 && !(list = malloc(rl)))
            rc = -ENOMEM;
        if (rc == 0)
            rc = xm_sendrecv(out, n ? (int)ml : 0, MPI_BYTE, peer, list, (int)rl, MPI_BYTE,
                             peer, g, XM_DYN_CTX);
        int got = 0;
        if (rc == 0 && (xm_dyn_cards_check(list, rl, &got) || got != rn))
            rc = -EPROTO;
        if (hdr[0] == 0)
            hdr[0] = rc;
        hdr[1] = hdr[0] == 0 ? rn : 0;
        free(out);
    }
    rc = c->size > 1 ? xm_coll_bcast(hdr, 2, MPI_INT32_T, root, c) : 0;
    if (rc == 0 && hdr[0] < 0)
        rc = hdr[0];
    size_t rl = rc == 0 ? xm_dyn_cards_len(hdr[1]) : 0;
    if (rc == 0 && c->rank != root && !(list = malloc(rl)))
        rc = -ENOMEM; /* (the bcast below then fails this process only) */
    if (hdr[0] == 0 && c->size > 1) {
        int brc = xm_coll_bcast(list, list ? (int)rl : 0, MPI_BYTE, root, c);
        rc = rc < 0 ? rc : brc;
    }
    int *ids = rc == 0 ? malloc((size_t)hdr[1] * sizeof(int)) : NULL;
    if (rc == 0 && !ids)
        rc = -ENOMEM;
    for (int i = 0; rc == 0 && i < hdr[1]; i++) {
        struct xm_dyn_card k;
        xm_dyn_cards_get(list, i, &k);
        ids[i] = xm_proc_add(&k);
        if (ids[i] < 0)
            rc = ids[i];
        else if (ids[i] >= xm_g.size)
            xm_proc_set_secret(ids[i], h.secret, 0);
    }
    free(list);
    free(all);
    if (hdr[0] < 0) { /* the roots' swap failed: both groups end here */
        free(ids);
        return hdr[0];
    }
    if (rc < 0 && c->rank != root) /* out of memory or table space, alone in the group */
        xm_die("connecting to another job: %s", strerror(-rc));
    rc = xm_intercomm_build_ids(c, root, peer, g, XM_DYN_CTX, rc, hdr[1], ids, newcomm);
    free(ids);
    memset(&h, 0, sizeof(h));
    return rc;
}

/* whether id is the process want names (job id and rank in its job) */
static int is_proc(int id, const struct xm_dyn_card *want)
{
    const struct xm_proc *pr = xm_proc_get(id);
    return pr && pr->rank == want->rank && !strcmp(pr->jobid, want->jobid);
}

/* Accept's body on a checked communicator: 0 or -errno (the same at every process).
 * when > 0: no connector by then is -ETIMEDOUT (spawn's children that never came).
 * want: only that process may connect (join); anyone else's REQ gets NAK. */
static int accept_until(const char *port_name, int root, struct xm_comm *c,
                        MPI_Comm *newcomm, double when, const struct xm_dyn_card *want,
                        const char *fn)
{
    int lrc = 0, peer = -1, g = 0, cross = 0;
    uint8_t secret[XM_DYN_SECRET] = {0};
    if (c->rank == root) {
        struct xm_dyn_port p;
        if (parse_port(port_name, &p, fn) != 0 || p.rank != xm_g.rank ||
            port_slot(p.tag) < 0)
            lrc = -EINVAL;
        else if (p.version == 2 && xm_proc_port_secret(p.tag, secret) < 0)
            lrc = -EINVAL; /* a version-2 name of ours with another tag's secret */
        while (lrc == 0) {
            struct xm_dyn_msg m;
            int from = -1;
            int rc = recv_msg(MPI_ANY_SOURCE, p.tag, when, &m, &from);
            if (rc == 0) {
                lrc = -ETIMEDOUT;
                break;
            }
            if (rc < 0 && rc != -EPROTO) {
                lrc = rc;
                break;
            }
            if (rc < 0 || m.kind != XM_DYN_REQ)
                continue; /* malformed: dropped, the port stays open */
            g = m.tag;
            if (want && !is_proc(from, want)) {
                send_msg(from, g, XM_DYN_NAK, g);
                continue;
            }
            if ((rc = send_msg(from, g, XM_DYN_OK, g)) < 0) {
                lrc = rc;
                break;
            }
            rc = recv_msg(from, g, deadline(), &m, &from);
            if (rc == 1 && m.kind == XM_DYN_CONFIRM && m.tag == g) {
                peer = from;
                cross = from >= xm_g.size; /* came in through the port's secret */
                break;
            }
            /* the connector gave up or said something else: wait for the next one */
        }
    }
    *newcomm = MPI_COMM_NULL;
    int rc = finish(c, root, peer, g, lrc, cross, secret, newcomm);
    memset(secret, 0, sizeof(secret));
    return rc;
}

int PMPI_Comm_accept(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                     MPI_Comm *newcomm)
{
    (void)info;
    const char *fn = "MPI_Comm_accept";
    struct xm_comm *c = xm_comm_get(comm);
    int erc = check_collective(c, root, newcomm, fn);
    if (erc != MPI_SUCCESS)
        return erc;
    int rc = accept_until(port_name, root, c, newcomm, 0, NULL, fn);
    return rc < 0 ? xm_err(c, to_class(rc), fn) : MPI_SUCCESS;
}

/* Connect's body on a checked communicator: 0 or -errno (the same at every process);
 * no OK by `when` is -ETIMEDOUT.  want: the port must be that process's, of another
 * job (join). */
static int connect_until(const char *port_name, int root, struct xm_comm *c,
                         MPI_Comm *newcomm, double when, const struct xm_dyn_card *want,
                         const char *fn)
{
    int lrc = 0, peer = -1, g = 0, cross = 0;
    struct xm_dyn_port p;
    memset(&p, 0, sizeof(p));
    if (c->rank == root) {
        lrc = parse_port(port_name, &p, fn);
        if (want && lrc == 1 && (p.rank != want->rank || strcmp(p.jobid, want->jobid)))
            lrc = -EINVAL;
        else if (want && lrc == 0)
            lrc = -EINVAL;
        if (lrc == 1) { /* another job's port: its owner joins the table */
            cross = 1;
            struct xm_dyn_card k;
            struct xm_dyn_addrs mine;
            memset(&k, 0, sizeof(k));
            memcpy(k.jobid, p.jobid, sizeof(k.jobid));
            k.rank = p.rank;
            k.addrs = p.addrs;
            lrc = xm_tcp_card(&mine); /* the netmod runs from here */
            int id = lrc < 0 ? lrc : xm_proc_add(&k);
            if (id >= 0 && id < xm_g.size)
                id = -EINVAL; /* names a process of this job */
            if (id >= 0)
                xm_proc_set_secret(id, p.secret, p.tag);
            lrc = id < 0 ? id : 0;
            p.rank = id;
        }
        if (lrc == 0) {
            peer = p.rank;
            g = fresh_tag();
            lrc = send_msg(peer, p.tag, XM_DYN_REQ, g);
        }
        if (lrc == 0) {
            struct xm_dyn_msg m;
            int from;
            int rc = recv_msg(peer, g, when, &m, &from);
            if (rc == 0)
                lrc = -ETIMEDOUT;
            else if (rc < 0 || m.kind != XM_DYN_OK || m.tag != g)
                lrc = rc < 0 ? rc : -ECONNREFUSED;
            else
                lrc = send_msg(peer, g, XM_DYN_CONFIRM, g);
        }
    }
    *newcomm = MPI_COMM_NULL;
    int rc = finish(c, root, peer, g, lrc, cross, p.secret, newcomm);
    memset(&p, 0, sizeof(p));
    return rc;
}

int PMPI_Comm_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                      MPI_Comm *newcomm)
{
    (void)info;
    const char *fn = "MPI_Comm_connect";
    struct xm_comm *c = xm_comm_get(comm);
    int erc = check_collective(c, root, newcomm, fn);
    if (erc != MPI_SUCCESS)
        return erc;
    int rc = connect_until(port_name, root, c, newcomm, deadline(), NULL, fn);
    return rc < 0 ? xm_err(c, to_class(rc), fn) : MPI_SUCCESS;
}

/* ---- join ------------------------------------------------------------------------------ */
/* all n bytes to/from fd before the deadline; 0 or -errno */
static int fd_xfer(int fd, void *buf, size_t n, int out, double when)
{
    char *b = buf;
    size_t done = 0;
    while (done < n) {
        double left = when - now_s();
        if (left <= 0)
            return -ETIMEDOUT;
        struct pollfd pf = {fd, (short)(out ? POLLOUT : POLLIN), 0};
        int pr = poll(&pf, 1, (int)(left * 1000) + 1);
        if (pr < 0 && errno != EINTR)
            return -errno;
        if (pr <= 0)
            continue;
        /* a peer that hangs up must not kill us with SIGPIPE: send(MSG_NOSIGNAL) on a
         * socket, write() on anything else the user hands us */
        ssize_t k = out ? send(fd, b + done, n - done, MSG_NOSIGNAL)
                        : read(fd, b + done, n - done);
        if (k < 0 && out && errno == ENOTSOCK)
            k = write(fd, b + done, n - done);
        if (k == 0)
            return -ECONNRESET;
        if (k < 0) {
            if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
                continue;
            return -errno;
        }
        done += (size_t)k;
    }
    return 0;
}

/* Comm_join with a process of another job, after both hellos and verdicts: the side
 * whose job id sorts first opens a version-2 port and sends its name on the socket
 * (struct of core/dynwire.h), the other checks that the port is the hello's process,
 * says on the socket whether it connects, and connects; the first accepts that process
 * only.  Both within `when`; then the intercommunicator is accept/connect's. */
static int join_xjob(int fd, const struct xm_dyn_hello *them, double when,
                     MPI_Comm *intercomm)
{
    const char *fn = "MPI_Comm_join";
    struct xm_dyn_card want;
    memset(&want, 0, sizeof(want));
    snprintf(want.jobid, sizeof(want.jobid), "%s", them->jobid);
    want.rank = them->rank;
    int acc = strcmp(xm_g.jobid, them->jobid) < 0;
    unsigned char wire[XM_DYN_JOINPORT_WIRE], yes = 0;
    char name[XM_DYN_PORT_MAX] = "";
    const char *bad = NULL, *why = "";
    int rc = 0, version = 0;
    *intercomm = MPI_COMM_NULL;
    if (acc) {
        memset(wire, 0, sizeof(wire)); /* all zeros if we fail: the other end refuses */
        if (open_port(name, &version) < 0) {
            name[0] = 0;
            bad = "no port could be opened";
        } else if (version != 2 || xm_dyn_joinport_encode(name, wire) < 0) {
            bad = "this process cannot be reached from another job (no TCP address)";
        }
        rc = fd_xfer(fd, wire, sizeof(wire), 1, when);
        if (rc == 0 && !bad) {
            rc = fd_xfer(fd, &yes, 1, 0, when);
            if (rc == 0 && yes != 1)
                bad = "the other end refused our port";
        }
        if (rc == 0 && !bad) {
            rc = accept_until(name, 0, xm_g.self, intercomm, when, &want, fn);
            if (rc == -ETIMEDOUT)
                bad = "the process its hello named did not connect within "
                      "LOOM_MPI_CONNECT_TIMEOUT";
        }
        if (name[0])
            PMPI_Close_port(name);
    } else {
        struct xm_dyn_port p;
        const char *pbad;
        rc = fd_xfer(fd, wire, sizeof(wire), 0, when);
        if (rc == -ETIMEDOUT)
            bad = "no port message within LOOM_MPI_CONNECT_TIMEOUT";
        else if (rc == 0 && (pbad = xm_dyn_joinport_check(wire, sizeof(wire), &p, name)))
            bad = "its port message is malformed: ", why = pbad;
        else if (rc == 0 && (p.rank != them->rank || strcmp(p.jobid, them->jobid)))
            bad = "its port is not the process its hello named";
        yes = rc == 0 && !bad;
        if (rc == 0)
            rc = fd_xfer(fd, &yes, 1, 1, when);
        if (rc == 0 && !bad) {
            rc = connect_until(name, 0, xm_g.self, intercomm, when, &want, fn);
            if (rc == -ETIMEDOUT)
                bad = "the port its hello named did not answer within "
                      "LOOM_MPI_CONNECT_TIMEOUT";
        }
        memset(&p, 0, sizeof(p));
    }
    memset(wire, 0, sizeof(wire));
    memset(name, 0, sizeof(name));
    if (rc < 0 || bad) {
        fprintf(stderr, "loom-mpi: rank %d: %s: job %s rank %d: %s%s\n", xm_g.rank, fn,
                them->jobid, them->rank, bad ? bad : strerror(-rc), bad ? why : "");
        *intercomm = MPI_COMM_NULL;
        return xm_err(NULL, rc == -ENOMEM ? MPI_ERR_NO_MEM : MPI_ERR_OTHER, fn);
    }
    return MPI_SUCCESS;
}

int PMPI_Comm_join(int fd, MPI_Comm *intercomm)
{
    const char *fn = "MPI_Comm_join";
    if (!intercomm)
        return xm_err(NULL, MPI_ERR_ARG, fn);
    if (fd < 0)
        return xm_err(NULL, MPI_ERR_ARG, fn);
    struct xm_dyn_hello me, them, raw;
    memset(&me, 0, sizeof(me));
    memcpy(me.magic, XM_DYN_HELLO_MAGIC, sizeof(me.magic));
    me.version = 1;
    me.size = xm_g.size;
    me.rank = xm_g.rank;
    me.tag = fresh_tag();
    snprintf(me.jobid, sizeof(me.jobid), "%s", xm_g.jobid);
    double when = deadline();
    int rc = fd_xfer(fd, &me, sizeof(me), 1, when);
    if (rc == 0)
        rc = fd_xfer(fd, &raw, sizeof(raw), 0, when);
    const char *bad = NULL;
    int xjob = 0;
    if (rc == 0 && (bad = xm_dyn_hello_check(&raw, sizeof(raw), &them)) == NULL) {
        if (strcmp(them.jobid, me.jobid))
            xjob = 1; /* checked by the port and the TCP handshake: join_xjob */
        else if (them.size != me.size)
            bad = "size of MPI_COMM_WORLD differs";
        else if (them.rank == me.rank)
            bad = "names my own rank";
    }
    /* Each side says on the socket whether it takes the other's hello: a side whose
     * hello was refused learns it here instead of waiting for a partner that will
     * never build anything. */
    const char *why = "the hello from the other end: ";
    if (rc == 0) {
        unsigned char mine = bad ? 0 : 1, theirs = 0;
        rc = fd_xfer(fd, &mine, 1, 1, when);
        if (rc == 0 && !bad) {
            rc = fd_xfer(fd, &theirs, 1, 0, when);
            if (rc == 0 && theirs != 1) {
                bad = "it refused our hello";
                why = "the other end: ";
            }
        }
    }
    if (rc == 0 && !bad && xjob)
        return join_xjob(fd, &them, when, intercomm);
    int g = 0;
    if (rc == 0 && !bad) {
        /* The socket's word is not proof that the rank it names is joining (a relayed
         * or forged hello): that rank itself confirms on the join tag, within the same
         * deadline, before anything waits on it without one. */
        g = me.rank < them.rank ? me.tag : them.tag;
        struct xm_dyn_msg m;
        int from = -1, got = send_msg(them.rank, g, XM_DYN_CONFIRM, g);
        if (got == 0)
            got = recv_msg(them.rank, g, when, &m, &from);
        if (got != 1 || m.kind != XM_DYN_CONFIRM || m.tag != g) {
            bad = got == 0 ? "it named a rank that did not confirm within "
                             "LOOM_MPI_CONNECT_TIMEOUT"
                           : "it named a rank whose confirmation was malformed";
            why = "the other end: ";
            rc = got < 0 && got != -EPROTO ? got : 0;
        }
    }
    if (rc < 0 || bad) {
        fprintf(stderr, "loom-mpi: rank %d: %s: %s%s\n", xm_g.rank, fn, bad ? why : "",
                bad ? bad : strerror(-rc));
        *intercomm = MPI_COMM_NULL;
        return xm_err(NULL, MPI_ERR_OTHER, fn);
    }
    *intercomm = MPI_COMM_NULL;
    rc = xm_intercomm_build(xm_g.self, 0, them.rank, g, XM_DYN_CTX, 0, intercomm);
    return rc < 0 ? xm_err(NULL, rc == -ENOMEM ? MPI_ERR_NO_MEM : MPI_ERR_OTHER, fn)
                  : MPI_SUCCESS;
}

/* ---- disconnect ------------------------------------------------------------------------ */
int PMPI_Comm_disconnect(MPI_Comm *comm)
{
    const char *fn = "MPI_Comm_disconnect";
    struct xm_comm *c = comm ? xm_comm_get(*comm) : NULL;
    if (!c || *comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
        return xm_err(c, MPI_ERR_COMM, fn);
    /* "waits for all pending communication on comm to complete": every process of
     * both groups has got here, so what each sent before has been matched or is
     * buffered here; the barrier's own messages follow everything earlier */
    int rc = c->inter ? xm_inter_barrier(c, NULL) : xm_coll_barrier(c);
    if (rc < 0)
        return xm_err(c, MPI_ERR_OTHER, fn);
    rc = xm_attr_delete_all(c);
    if (rc != MPI_SUCCESS)
        return xm_err(c, rc, fn);
    if (*comm == parent_comm) /* Comm_get_parent: MPI_COMM_NULL from now on */
        parent_comm = MPI_COMM_NULL;
    xm_comm_unref(c);
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

/* ---- name service ------------------------------------------------------------------------ */
static int service_ok(const char *s)
{
    return s && *s && strnlen(s, MPI_MAX_INFO_VAL) < MPI_MAX_INFO_VAL;
}

int PMPI_Publish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    (void)info;
    const char *fn = "MPI_Publish_name";
    if (!service_ok(service_name) || !port_name || !*port_name ||
        strnlen(port_name, MPI_MAX_PORT_NAME) >= MPI_MAX_PORT_NAME)
        return xm_err(NULL, MPI_ERR_ARG, fn);
    int rc = xm_boot_publish(service_name, port_name);
    if (rc == -ENOSYS)
        fprintf(stderr, "loom-mpi: rank %d: %s: the process manager has no name service\n",
                xm_g.rank, fn);
    return rc < 0 ? xm_err(NULL, MPI_ERR_SERVICE, fn) : MPI_SUCCESS;
}

int PMPI_Unpublish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    (void)info;
    (void)port_name;
    const char *fn = "MPI_Unpublish_name";
    if (!service_ok(service_name))
        return xm_err(NULL, MPI_ERR_ARG, fn);
    int rc = xm_boot_unpublish(service_name);
    return rc < 0 ? xm_err(NULL, MPI_ERR_SERVICE, fn) : MPI_SUCCESS;
}

int PMPI_Lookup_name(const char *service_name, MPI_Info info, char *port_name)
{
    (void)info;
    const char *fn = "MPI_Lookup_name";
    if (!service_ok(service_name) || !port_name)
        return xm_err(NULL, MPI_ERR_ARG, fn);
    char buf[MPI_MAX_PORT_NAME];
    memset(buf, 0, sizeof(buf));
    int rc = xm_boot_lookup(service_name, buf, (int)sizeof(buf));
    if (rc < 0 || !buf[0] || strnlen(buf, sizeof(buf)) >= sizeof(buf))
        return xm_err(NULL, MPI_ERR_NAME, fn);
    memcpy(port_name, buf, strlen(buf) + 1);
    return MPI_SUCCESS;
}

/* ---- spawn ------------------------------------------------------------------------------
 * MPICH's contract with the process manager: the root opens a port, asks for the new
 * job with PARENT_ROOT_PORT_NAME=<port> in its KVS (xm_boot_spawn: PMI2_Job_Spawn),
 * tells its group the outcome and the error codes, and the group accepts on the port;
 * the children connect in MPI_Init (xm_dyn_init_parent) and keep the intercommunicator
 * as MPI_Comm_get_parent's.  A refusal (e.g. more processes than the process manager
 * allows) is MPI_ERR_SPAWN with the process manager's words on stderr. */
/* The reserved info key "path" (MPI-3.1 10.3.4): directories, ':'-separated, where
 * the executable is looked for.  A command without '/' found executable in one of them
 * becomes that file's path (malloc'd into *out); else *out stays NULL (the process
 * manager searches as it does). */
static int path_lookup(const char *cmd, const char *path, char **out)
{
    *out = NULL;
    if (!cmd || strchr(cmd, '/'))
        return 0;
    for (const char *d = path; d && *d;) {
        size_t n = strcspn(d, ":");
        char *f = malloc(n + strlen(cmd) + 2);
        if (!f)
            return -ENOMEM;
        memcpy(f, d, n);
        f[n] = '/';
        strcpy(f + n + 1, cmd);
        if (n && access(f, X_OK) == 0) {
            *out = f;
            return 0;
        }
        free(f);
        d += n + (d[n] == ':');
    }
    return 0;
}

/* every array is significant at the root only; n = total processes there */
static int spawn_common(struct xm_comm *c, int root, int count, char *const *cmds,
                        char **const *argv, const int *maxprocs, const MPI_Info *infos,
                        int n, MPI_Comm *intercomm, int *errcodes, const char *fn)
{
    char port[MPI_MAX_PORT_NAME] = "";
    int32_t hdr[2] = {0, n}; /* rc, processes */
    int *codes = NULL;
    if (c->rank == root) {
        /* wdir, host, hostfile of each command: [3 * i + k] */
        char **wdir = calloc((size_t)count * 3, sizeof(char *));
        struct xm_spawn_keys *keys = calloc((size_t)count, sizeof(*keys));
        char **found = calloc((size_t)count, sizeof(char *)); /* by "path" */
        char **run = calloc((size_t)count, sizeof(char *));
        codes = calloc((size_t)n, sizeof(int));
        int rc = wdir && keys && found && run && codes ? 0 : -ENOMEM;
        for (int i = 0; rc == 0 && i < count; i++) {
            int flag = 0;
            char v[MPI_MAX_INFO_VAL + 1];
            static const char *const hk[3] = {"wdir", "host", "hostfile"};
            for (int k = 0; k < 3 && rc == 0; k++) {
                flag = 0;
                if (infos && infos[i] != MPI_INFO_NULL &&
                    PMPI_Info_get(infos[i], hk[k], MPI_MAX_INFO_VAL, v, &flag) ==
                        MPI_SUCCESS &&
                    flag && !(wdir[3 * i + k] = strdup(v)))
                    rc = -ENOMEM;
            }
            keys[i].wdir = wdir[3 * i];
            keys[i].host = wdir[3 * i + 1];
            keys[i].hostfile = wdir[3 * i + 2];
            flag = 0;
            if (rc == 0 && infos && infos[i] != MPI_INFO_NULL &&
                PMPI_Info_get(infos[i], "path", MPI_MAX_INFO_VAL, v, &flag) == MPI_SUCCESS &&
                flag)
                rc = path_lookup(cmds[i], v, &found[i]);
            run[i] = found[i] ? found[i] : cmds[i];
        }
        if (rc == 0 && PMPI_Open_port(MPI_INFO_NULL, port) != MPI_SUCCESS)
            rc = -EIO;
        if (rc == 0) {
            rc = xm_boot_spawn(count, run, argv, maxprocs, keys, port, codes);
            if (rc < 0) {
                fprintf(stderr,
                        "loom-mpi: rank %d: %s: the process manager %s the spawn of %d "
                        "process%s (%s)\n",
                        xm_g.rank, fn, rc == -ENOSYS ? "cannot do" : "refused", n,
                        n == 1 ? "" : "es",
                        rc == -ENOSYS ? "this interface has no spawn"
                                      : "its reason, where it gave one, is above");
                PMPI_Close_port(port);
            }
        }
        for (int i = 0; wdir && found && i < count; i++) {
            for (int k = 0; k < 3; k++)
                free(wdir[3 * i + k]);
            free(found[i]);
        }
        free(wdir);
        free(keys);
        free(found);
        free(run);
        hdr[0] = rc;
    }
    int rc = c->size > 1 ? xm_coll_bcast(hdr, 2, MPI_INT32_T, root, c) : 0;
    if (rc == 0 && c->rank != root && hdr[0] == 0 && !(codes = calloc((size_t)hdr[1], sizeof(int))))
        rc = -ENOMEM;
    if (rc == 0 && hdr[0] == 0 && c->size > 1)
        rc = xm_coll_bcast(codes, hdr[1], MPI_INT, root, c);
    if (rc < 0 || hdr[0] < 0) {
        free(codes);
        if (intercomm)
            *intercomm = MPI_COMM_NULL;
        if (errcodes && errcodes != MPI_ERRCODES_IGNORE)
            for (int i = 0; i < hdr[1]; i++)
                errcodes[i] = MPI_ERR_SPAWN;
        return xm_err(c, rc < 0 ? xm_errno_to_class(rc) : MPI_ERR_SPAWN, fn);
    }
    int bad = 0;
    for (int i = 0; i < hdr[1]; i++) {
        if (errcodes && errcodes != MPI_ERRCODES_IGNORE)
            errcodes[i] = codes[i] ? MPI_ERR_SPAWN : MPI_SUCCESS;
        bad |= codes[i] != 0;
    }
    free(codes);
    /* the children connect from their MPI_Init, within the connect timeout: a job
     * that died before (or never reaches MPI_Init) fails the spawn, not hangs it */
    MPI_Comm ic = MPI_COMM_NULL;
    rc = accept_until(port, root, c, &ic, deadline(), NULL, fn);
    if (c->rank == root)
        PMPI_Close_port(port);
    if (intercomm)
        *intercomm = ic;
    if (rc < 0) {
        if (rc == -ETIMEDOUT && c->rank == root)
            fprintf(stderr,
                    "loom-mpi: rank %d: %s: the spawned processes did not connect "
                    "within LOOM_MPI_CONNECT_TIMEOUT (%d s)\n",
                    xm_g.rank, fn, connect_timeout());
        if (errcodes && errcodes != MPI_ERRCODES_IGNORE)
            for (int i = 0; i < hdr[1]; i++)
                errcodes[i] = MPI_ERR_SPAWN;
        return xm_err(c, MPI_ERR_SPAWN, fn); /* (non-roots learn only that it failed) */
    }
    return bad ? xm_err(c, MPI_ERR_SPAWN, fn) : MPI_SUCCESS;
}

int PMPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info,
                    int root, MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
    const char *fn = "MPI_Comm_spawn";
    struct xm_comm *c = xm_comm_get(comm);
    int erc = check_collective(c, root, intercomm, fn);
    if (erc != MPI_SUCCESS)
        return erc;
    if (c->rank == root && (!command || maxprocs <= 0 || maxprocs > (1 << 24)))
        return xm_err(c, MPI_ERR_ARG, fn);
    char *cmds[1] = {(char *)command};
    char **argvs[1] = {argv == MPI_ARGV_NULL ? NULL : argv};
    MPI_Info infos[1] = {info};
    return spawn_common(c, root, 1, cmds, argvs, &maxprocs, infos,
                        c->rank == root ? maxprocs : 0, intercomm, array_of_errcodes, fn);
}

int PMPI_Comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[],
                             const int array_of_maxprocs[], const MPI_Info array_of_info[],
                             int root, MPI_Comm comm, MPI_Comm *intercomm,
                             int array_of_errcodes[])
{
    const char *fn = "MPI_Comm_spawn_multiple";
    struct xm_comm *c = xm_comm_get(comm);
    int erc = check_collective(c, root, intercomm, fn);
    if (erc != MPI_SUCCESS)
        return erc;
    int n = 0;
    if (c->rank == root) {
        if (count <= 0 || !array_of_commands || !array_of_maxprocs)
            return xm_err(c, MPI_ERR_ARG, fn);
        for (int i = 0; i < count; i++) {
            if (!array_of_commands[i] || array_of_maxprocs[i] <= 0 ||
                array_of_maxprocs[i] > (1 << 24) - n)
                return xm_err(c, MPI_ERR_ARG, fn);
            n += array_of_maxprocs[i];
        }
    }
    char ***argvs = array_of_argv == MPI_ARGVS_NULL ? NULL : array_of_argv;
    return spawn_common(c, root, count, array_of_commands, argvs, array_of_maxprocs,
                        array_of_info, n, intercomm, array_of_errcodes, fn);
}

int PMPI_Comm_get_parent(MPI_Comm *parent)
{
    if (!parent)
        return xm_err(NULL, MPI_ERR_ARG, "MPI_Comm_get_parent");
    /* MPI_COMM_NULL once the parent intercommunicator was freed or disconnected */
    *parent = parent_comm != MPI_COMM_NULL && xm_comm_get(parent_comm) ? parent_comm
                                                                       : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

/* MPI_Init of a spawned job (api/env.c): connect to the parents' port */
void xm_dyn_init_parent(void)
{
    if (!xm_g.spawned)
        return;
    char port[MPI_MAX_PORT_NAME] = "";
    if (xm_g.rank == 0 && xm_boot_parent_port(port, (int)sizeof(port)) < 0)
        xm_die("spawned job without PARENT_ROOT_PORT_NAME from the process manager");
    if (PMPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &parent_comm) !=
        MPI_SUCCESS)
        xm_die("spawned job: connecting to the parents failed");
    struct xm_comm *pc = xm_comm_get(parent_comm);
    if (pc) /* MPI-3.1 10.3.2: the parent intercommunicator's default name */
        snprintf(pc->name, sizeof(pc->name), "MPI_COMM_PARENT");
}
