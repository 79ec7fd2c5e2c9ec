/*
 * dynproc.c - dynamic processes: Open_port/Close_port, Comm_accept/Comm_connect,
 *             Comm_join, Comm_disconnect, Publish/Unpublish/Lookup_name, and
 *             Comm_spawn/Comm_spawn_multiple/Comm_get_parent.
 *
 * Owns: the port table of this process, the accept/connect
 * handshake, the join hello.  Wire formats and their bounds: core/dynwire.h.
 *
 * Scope today: the processes that connect are processes of this job (two halves of
 *   MPI_COMM_WORLD, or any groups of it).  Their engine already knows every peer by its
 *   world rank and reaches it over shm or the TCP netmod, so a new intercommunicator
 *   needs only an agreement between the two roots, then Intercomm_create's own body
 *   (api/intercomm.c, xm_intercomm_build) with the roots talking on XM_DYN_CTX, the
 *   context id no communicator gets (core/comm.h).  A port of another job (a spawned
 *   job, an independently launched one) is refused with MPI_ERR_PORT and a sentence on
 *   stderr, and Comm_spawn reports MPI_ERR_SPAWN before asking the process manager for
 *   anything: processes outside MPI_COMM_WORLD need peers beyond the world ranks in the
 *   engine (DESIGN.md, "Dynamic processes", lays out that next step).
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
 *     Accept itself waits for a connector as long as it takes, as MPI says.
 *   - Close_port answers NAK to every REQ already queued for the port; a REQ that
 *     arrives later is never answered, and its connector times out.
 *   - A control message that fails xm_dyn_msg_check is dropped (the port stays open).
 * Comm_join: each side writes a struct xm_dyn_hello (job id, size, world rank, a fresh
 *   even tag) to the socket and reads the other's, then one verdict byte each way (1 =
 *   I take your hello), all within the connect timeout; the tag g of the side with the
 *   lower world rank is used; the two ranks then swap CONFIRM{g} on tag g by p2p (the
 *   named rank proves it is joining: a relayed or forged hello fails at the deadline
 *   instead of hanging), then xm_intercomm_build over COMM_SELF.  A hello from another
 *   job, of another size, or naming my own rank fails with MPI_ERR_OTHER.
 * Name service: the process manager's (PMI-2 Nameserv_*: mpiexec, srun's mpi/pmi2,
 *   Loom's plugin); boot.c's xm_boot_publish &c.  Without one (PMIx path, singleton):
 *   MPI_ERR_NAME / MPI_ERR_SERVICE.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../coll/coll.h"
#include "../core/boot.h"
#include "../core/dynwire.h"
#include "../core/p2p.h"
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

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static double deadline(void)
{
    int s = xm_env_int("LOOM_MPI_CONNECT_TIMEOUT", 60);
    return now_s() + (s > 0 ? s : 60);
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
int PMPI_Open_port(MPI_Info info, char *port_name)
{
    (void)info;
    const char *fn = "MPI_Open_port";
    if (!port_name)
        return xm_err(NULL, MPI_ERR_ARG, fn);
    int slot = port_slot(0);
    if (slot < 0)
        return xm_err(NULL, MPI_ERR_NO_MEM, fn);
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
    if (!tag || xm_dyn_port_format(name, sizeof(name), &p) < 0 ||
        xm_dyn_port_parse(name, &back) < 0)
        return xm_err(NULL, MPI_ERR_INTERN, fn); /* a job id we cannot carry */
    ports[slot] = tag;
    memcpy(port_name, name, strlen(name) + 1);
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

/* the port's owner and tag, or <0 (a message on stderr for another job's port) */
static int parse_port(const char *name, struct xm_dyn_port *p, const char *fn)
{
    if (!name || xm_dyn_port_parse(name, p) < 0)
        return -EINVAL;
    if (strcmp(p->jobid, xm_g.jobid)) {
        fprintf(stderr,
                "loom-mpi: rank %d: %s: port of job %s, this is job %s: connections "
                "between jobs are not implemented yet\n",
                xm_g.rank, fn, p->jobid, xm_g.jobid);
        return -EXDEV;
    }
    if (p->rank >= xm_g.size)
        return -EINVAL;
    return 0;
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
    int lrc = 0, peer = -1, g = 0;
    if (c->rank == root) {
        struct xm_dyn_port p;
        if (parse_port(port_name, &p, fn) < 0 || p.rank != xm_g.rank ||
            port_slot(p.tag) < 0)
            lrc = -EINVAL;
        while (lrc == 0) {
            struct xm_dyn_msg m;
            int from = -1;
            int rc = recv_msg(MPI_ANY_SOURCE, p.tag, 0, &m, &from);
            if (rc < 0 && rc != -EPROTO) {
                lrc = rc;
                break;
            }
            if (rc < 0 || m.kind != XM_DYN_REQ)
                continue; /* malformed: dropped, the port stays open */
            g = m.tag;
            if ((rc = send_msg(from, g, XM_DYN_OK, g)) < 0) {
                lrc = rc;
                break;
            }
            rc = recv_msg(from, g, deadline(), &m, &from);
            if (rc == 1 && m.kind == XM_DYN_CONFIRM && m.tag == g) {
                peer = from;
                break;
            }
            /* the connector gave up or said something else: wait for the next one */
        }
    }
    *newcomm = MPI_COMM_NULL;
    int rc = xm_intercomm_build(c, root, peer, g, XM_DYN_CTX, lrc, newcomm);
    return rc < 0 ? xm_err(c, to_class(rc), fn) : MPI_SUCCESS;
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
    int lrc = 0, peer = -1, g = 0;
    if (c->rank == root) {
        struct xm_dyn_port p;
        lrc = parse_port(port_name, &p, fn);
        if (lrc == 0) {
            peer = p.rank;
            g = fresh_tag();
            lrc = send_msg(peer, p.tag, XM_DYN_REQ, g);
        }
        if (lrc == 0) {
            struct xm_dyn_msg m;
            int from;
            int rc = recv_msg(peer, g, deadline(), &m, &from);
            if (rc == 0)
                lrc = -ETIMEDOUT;
            else if (rc < 0 || m.kind != XM_DYN_OK || m.tag != g)
                lrc = rc < 0 ? rc : -ECONNREFUSED;
            else
                lrc = send_msg(peer, g, XM_DYN_CONFIRM, g);
        }
    }
    *newcomm = MPI_COMM_NULL;
    int rc = xm_intercomm_build(c, root, peer, g, XM_DYN_CTX, lrc, newcomm);
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
        ssize_t k = out ? write(fd, b + done, n - done) : read(fd, b + done, n - done);
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
    if (rc == 0 && (bad = xm_dyn_hello_check(&raw, sizeof(raw), &them)) == NULL) {
        if (strcmp(them.jobid, me.jobid))
            bad = "another job (connections between jobs are not implemented yet)";
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

/* ---- spawn ------------------------------------------------------------------------------ */
static int spawn_refused(struct xm_comm *c, int n, int *errcodes, MPI_Comm *intercomm,
                         const char *fn)
{
    if (intercomm)
        *intercomm = MPI_COMM_NULL;
    if (errcodes && errcodes != MPI_ERRCODES_IGNORE)
        for (int i = 0; i < n; i++)
            errcodes[i] = MPI_ERR_SPAWN;
    static int said;
    if (!said++)
        fprintf(stderr,
                "loom-mpi: rank %d: %s: spawning is not implemented yet (the engine "
                "reaches only the processes of MPI_COMM_WORLD)\n",
                xm_g.rank, fn);
    return xm_err(c, MPI_ERR_SPAWN, fn);
}

int PMPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info,
                    int root, MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
    (void)argv;
    (void)info;
    const char *fn = "MPI_Comm_spawn";
    struct xm_comm *c = xm_comm_get(comm);
    int erc = check_collective(c, root, intercomm, fn);
    if (erc != MPI_SUCCESS)
        return erc;
    if (c->rank == root && (!command || maxprocs <= 0))
        return xm_err(c, MPI_ERR_ARG, fn);
    return spawn_refused(c, c->rank == root ? maxprocs : 0, array_of_errcodes, intercomm,
                         fn);
}

int PMPI_Comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[],
                             const int array_of_maxprocs[], const MPI_Info array_of_info[],
                             int root, MPI_Comm comm, MPI_Comm *intercomm,
                             int array_of_errcodes[])
{
    (void)array_of_argv;
    (void)array_of_info;
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
    return spawn_refused(c, n, array_of_errcodes, intercomm, fn);
}

int PMPI_Comm_get_parent(MPI_Comm *parent)
{
    if (!parent)
        return xm_err(NULL, MPI_ERR_ARG, "MPI_Comm_get_parent");
    /* no process of ours is ever started by Comm_spawn yet (see the header) */
    *parent = MPI_COMM_NULL;
    return MPI_SUCCESS;
}
