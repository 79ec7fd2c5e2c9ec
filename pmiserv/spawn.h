/* spawn.h - dynamic process requests (PMI-2 "spawn", PMI-1 "mcmd=spawn" blocks):
 * parsing into struct psrv_spawn and the deferred reply (not installed).
 *
 * Contract:
 *   The parsers turn a task's request into a struct spawn_req that owns all its
 *   strings, or refuse it with a one-line reason.  Every count and every string is
 *   bounded by the PSRV_SPAWN_MAX_* limits of pmiserv.h before anything is allocated
 *   for it, so a hostile task cannot make the server allocate more than the request
 *   itself is long (a few times over).  doc/wire.md, "Spawn", has the wire.
 *
 *   spawn_handle() hands a complete request to the host (ops->spawn) and answers the
 *   task once, now (refusal) or through psrv_spawn_done().
 */
#ifndef LOOM_PMISERV_SPAWN_H
#define LOOM_PMISERV_SPAWN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pmi_wire.h"
#include "pmiserv.h"

struct psrv;
struct client;
struct spawn_req;

/* A PMI-2 spawn request: NULL and a reason in err when it is refused. */
struct spawn_req *spawn_parse_v2(const struct pmi_msg *m, char *err, size_t errlen);
/* One PMI-1 mcmd=spawn block added to *b (created at the first block).  Returns 1
 * when the request is complete (*b holds it), 0 when more blocks must follow, -1
 * when refused (reason in err; *b freed and NULL). */
int spawn_add_v1_block(struct spawn_req **b, const struct pmi_msg *m, char *err,
                       size_t errlen);
const struct psrv_spawn *spawn_req_view(const struct spawn_req *r);
void spawn_req_free(struct spawn_req *r);

/* Server side (server.c and the protocol files). */
/* A client's spawn in progress: spawn.c's table holds one per client. */
struct spawn_wait {
    struct spawn_req *build; /* PMI-1 mcmd=spawn blocks so far */
    bool on;                 /* handed to the host, unanswered */
    uint64_t id;             /* the host's request id (ops->spawn) */
    char *thrid;             /* the request's thrid, echoed in the answer */
    int skip;                /* PMI-1 blocks of a refused request still to come */
    char err[256];           /* ... and the reason they get after the last */
};
struct spawnsvc *spawn_create(struct psrv *s);
void spawn_destroy(struct spawnsvc *sp);
/* Client c's entry. */
struct spawn_wait *spawn_wait_of(struct psrv *s, struct client *c);
/* Give complete request r (consumed) of client c to the host, or answer it. */
void spawn_handle(struct psrv *s, struct client *c, struct spawn_req *r);
/* Answer c's spawn now with an error (through c->proto->spawn_done). */
void spawn_reply_error(struct psrv *s, struct client *c, const char *thrid, int rc,
                       const char *msg);
/* The protocols' spawn_done: errcodes= of a successful reply (both protocols
 * word it alike), left out where the list is all zeros and long. */
void spawn_add_errcodes(struct pmi_out *o, const int *errcodes, int n);
/* The client ends: forget its pending request and partial blocks. */
void spawn_client_lost(struct psrv *s, struct client *c);

#endif /* LOOM_PMISERV_SPAWN_H */
