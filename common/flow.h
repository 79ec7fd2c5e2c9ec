/* flow.h - per-client flow control for a server host: the replies a client has
 * not read yet, and the input held back while there are too many of them.
 *
 * Contract:
 *   A host of the PMI server core (mpiexec, the plugin's agent in slurmstepd)
 *   keeps one struct flow per client socket (zeroed to start).
 *   - Output: flow_write() sends reply bytes straight to the socket when
 *     nothing is queued and queues what the socket does not take; flow_queue()
 *     only queues; flow_send() writes queued bytes when the socket has room.
 *     Nothing is ever dropped: the core requires every reply delivered in order.
 *   - Input: bytes read from the client go to the core through flow_feed(),
 *     in slices of at most FLOW_SLICE bytes.  Once the queue holds FLOW_HIGH
 *     bytes the flow is "full": feeding stops, the rest of that read is held,
 *     and flow_events() leaves LOOP_READ out so the host stops reading the
 *     socket.  When flow_send() brings the queue down to FLOW_LOW,
 *     flow_resume() feeds the held bytes and reading starts again.
 *   So a client that pipelines requests and never reads costs its host at most
 *   FLOW_HIGH + the replies to one slice + one held read (FLOW_MAX_BYTES in
 *   all), whatever it sends; it is simply not served until it reads, and
 *   other clients are served as usual.
 *
 * Notes:
 *   - Hosts must read a client only while flow_reading() (also when draining
 *     a socket outside the loop); flow_feed() refuses input beyond
 *     FLOW_HOLD_MAX with -ENOBUFS rather than hold it.
 *   - The slice bounds the replies one feed can produce: the largest reply
 *     (a PMI-2 kvs-get of a 1024-byte value, escaped: about 2.1 KiB; the
 *     process mapping is shorter) to the smallest request (about 14 bytes)
 *     is about 150 times, so one slice adds at most ~160 KiB.
 *   - A good client never has more than a few replies queued (PMI waits for
 *     each), so the slicing and the bound never change its service.
 *   - Sockets only (send with MSG_NOSIGNAL: a closed peer is -EPIPE, not a signal).
 *   - No locks: a flow belongs to the host's loop thread.
 */
#ifndef LOOM_FLOW_H
#define LOOM_FLOW_H

#include <stdbool.h>
#include <stddef.h>

#define FLOW_HIGH (1024u * 1024u)    /* queued reply bytes that stop reading */
#define FLOW_LOW (256u * 1024u)      /* ... and that start it again */
#define FLOW_SLICE 1024u             /* input bytes fed to the core at a time */
#define FLOW_HOLD_MAX (128u * 1024u) /* input held at most (one read of the host) */
/* The most a client can make its host hold, with margin for the largest reply. */
#define FLOW_MAX_BYTES (FLOW_HIGH + 256u * 1024u + FLOW_HOLD_MAX)

struct flow {
    char *q; /* queued output: q[qoff..qlen) */
    size_t qoff, qlen, qcap;
    char *held; /* input read but not fed: held[hoff..hlen) */
    size_t hoff, hlen, hcap;
    bool full; /* reached FLOW_HIGH, not yet back to FLOW_LOW */
};

/* Hands len bytes of client input to the server core: 0, or non-zero to stop
 * feeding (e.g. 1: the client finalized, < 0: a protocol error). */
typedef int (*flow_feed_f)(void *arg, const char *buf, size_t len);

/* Queue len bytes (no I/O).  0 or -ENOMEM. */
int flow_queue(struct flow *f, const void *buf, size_t len);
/* Send len bytes now if nothing is queued, queue the rest.  0 or -errno
 * (-EPIPE etc.: the socket is broken; -ENOMEM). */
int flow_write(struct flow *f, int fd, const void *buf, size_t len);
/* Send queued bytes while the socket takes them.  0 or -errno. */
int flow_send(struct flow *f, int fd);
size_t flow_queued(const struct flow *f);
/* Read the client only when this is true. */
bool flow_reading(const struct flow *f);
/* LOOP_READ while reading, LOOP_WRITE while something is queued. */
int flow_events(const struct flow *f);

/* Feed buf to fn in slices, holding what is left once the flow is full.
 * Returns 0, fn's first non-zero result (the rest of buf is dropped), or
 * -ENOBUFS / -ENOMEM when the input cannot be held. */
int flow_feed(struct flow *f, const char *buf, size_t len, flow_feed_f fn, void *arg);
/* Feed held input if the flow is no longer full.  Returns as flow_feed. */
int flow_resume(struct flow *f, flow_feed_f fn, void *arg);
/* Forget everything and free the buffers (the flow can be reused). */
void flow_free(struct flow *f);

#endif /* LOOM_FLOW_H */
