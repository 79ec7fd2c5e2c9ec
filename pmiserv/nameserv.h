/* nameserv.h - publish / lookup / unpublish, job-wide, kept at node 0.
 *
 * Contract:
 *   The table lives on node 0.  A request from a client on another node
 *   travels hop by hop (ktree_next_hop) as MSG_NS_REQ to node 0; the answer
 *   travels back as MSG_NS_RESP to the origin node, which replies to the
 *   client (if it is still there and still waiting for that request).  On
 *   node 0 requests are answered at once.  Protocol rc: 0 ok; 1 name
 *   already published / not found; 2 out of memory or over the names
 *   quota (limits.names_count / names_bytes: the job then ends).  A request
 *   unanswered after cfg.fence_timeout_ms gets rc!=0.
 */
#ifndef LOOM_PMISERV_NAMESERV_H
#define LOOM_PMISERV_NAMESERV_H

#include <stddef.h>
#include <stdint.h>

struct psrv;
struct client;
struct msg;

enum ns_op { NS_PUBLISH = 1, NS_UNPUBLISH = 2, NS_LOOKUP = 3 };

struct nameserv *ns_create(struct psrv *s);
void ns_destroy(struct nameserv *ns);
/* The checks of a task's request, whatever its protocol: a name (the
 * protocol's word for it: noun), a port for a publish, both at most
 * PMI_MAX_VALLEN.  Returns 0, or -1 with the reason (the request gets rc 3)
 * in out. */
int ns_check(int op, const char *name, const char *port, const char *noun, char *out,
             size_t outlen);
/* Start a request for client c; the reply comes through c->proto->ns_done. */
void ns_request(struct psrv *s, struct client *c, int op, const char *name,
                const char *port, const char *thrid);
/* Client c hung up: its request in flight is never answered (a late
 * answer from node 0 is dropped). */
void ns_client_lost(struct psrv *s, struct client *c);
/* MSG_NS_REQ / MSG_NS_RESP: 0 or -EPROTO. */
int ns_tree_input(struct psrv *s, const struct msg *m);
int ns_tick(struct psrv *s, uint64_t now);
/* Names and bytes (name + port lengths) published (node 0; 0 elsewhere). */
void ns_usage(const struct psrv *s, int64_t *count, int64_t *bytes);

#endif /* LOOM_PMISERV_NAMESERV_H */
