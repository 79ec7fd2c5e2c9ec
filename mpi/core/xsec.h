/*
 * xsec.h - which processes of other jobs may send on which context id.
 *
 * Owns: the index context id -> live communicators using it, and the verdict the
 * packet funnel (core/p2p.c) asks for every message (EAGER, RTS) whose src is a
 * process of another job (id >= world size; core/proc.h).  World ranks never ask:
 * the one check on the hot path is `src >= xm_g.size`.
 * Contract:
 *   - xm_comm_new() adds every communicator it makes (xm_xsec_add), xm_comm_release()
 *     removes it (xm_xsec_del); intercommunicators get their local group after
 *     xm_comm_new(), which is fine: membership is read when a packet asks.
 *   - xm_xsec_verdict(ctx, src): XM_XSEC_OK when src is in the group (either group of
 *     an intercommunicator) of a live communicator whose context is ctx or ctx|1 (so
 *     windows' private communicators, dups, splits, merges and topologies are covered:
 *     they are all communicators); XM_XSEC_DENY when the context is one no other job
 *     may use (MPI_COMM_WORLD, MPI_COMM_SELF, the sessions' agreement) or its
 *     communicators here do not contain src; XM_XSEC_UNKNOWN when no communicator has
 *     that context here yet (a faster peer may send on a new communicator before this
 *     process made it: the message waits, marked, and is asked about again when a
 *     receive would take it).  The accept/connect context (XM_DYN_CTX) is open to
 *     every process that proved a port's secret (api/dynproc.c checks its messages);
 *     Comm_create_group's bootstrap context to a process in any live communicator.
 *   - xm_xsec_warn(): one line on stderr for a dropped message, the first one then at
 *     most one a minute (with the number left unsaid); the job id is escaped.
 *   - Quota: what each process of another job has queued unexpected here (bytes of
 *     eager payload, messages) is charged by core/p2p.c where it queues one and
 *     given back when it leaves the queue (xm_xsec_charge).  Over
 *     LOOM_MPI_XJOB_UNEXP_BYTES (64 MiB) or LOOM_MPI_XJOB_UNEXP_MSGS (65536) the
 *     charge is refused and p2p.c drops that process (its connection, its queued
 *     messages, the operations waiting on it); xm_xsec_warn_drop() says so on stderr
 *     (rate-limited like the warning above, job id escaped).
 * Caveats: single-threaded like the engine (core/mt.h's lock).
 */
#ifndef XM_XSEC_H
#define XM_XSEC_H

#include <stdint.h>

struct xm_comm;

enum { XM_XSEC_DENY = 0, XM_XSEC_OK = 1, XM_XSEC_UNKNOWN = 2 };

int xm_xsec_add(struct xm_comm *c); /* 0 or -ENOMEM */
void xm_xsec_del(struct xm_comm *c);
int xm_xsec_verdict(uint32_t ctx, int src);
void xm_xsec_warn(int src, uint32_t ctx, int tag);
/* the number of messages dropped so far (tests) */
unsigned long xm_xsec_dropped(void);
/* add (msgs > 0) or give back (msgs < 0) one unexpected message of `bytes` from
 * process src (>= world size): 0 = done, 1 = adding it would pass a limit (nothing
 * charged: the caller drops src).  xm_xsec_forget(src) zeroes src's account. */
int xm_xsec_charge(int src, uint64_t bytes, int msgs);
void xm_xsec_forget(int src);
/* one line on stderr: process src of another job is dropped, and why */
void xm_xsec_warn_drop(int src, const char *why);

#endif
