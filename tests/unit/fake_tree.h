/* fake_tree.h - an in-memory job of several psrv instances for unit tests.
 *
 * Contract:
 *   ft_create() builds one psrv per node with the given rank->node layout
 *   (local clients in rank order), a fake clock (ft->now, milliseconds) and
 *   a message queue standing for the tree links: tree_send appends, and the
 *   test decides when and in which order messages are delivered
 *   (ft_run: FIFO, seeded random order, random duplicates; ft->drop_*
 *   makes messages vanish).  Replies to each rank accumulate in a string
 *   that ft_take() hands over.  Every ops->abort is recorded per node.
 */
#ifndef LOOM_TEST_FAKE_TREE_H
#define LOOM_TEST_FAKE_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pmiserv.h"

struct ft;

struct ft_node {
    struct ft *ft;
    int node;
    struct psrv *srv;
    int nlocal;
    int *ranks;  /* [nlocal] */
    int naborts; /* ops->abort calls */
    int abort_rank;
    int abort_code;
    char abort_msg[2048];
    /* Blob collective / direct modex (ops->coll_done, dmdx_request, dmdx_done):
     * the last result of each kind, and how many came. */
    int ncoll;
    uint64_t coll_id;
    int coll_rc;
    char *coll_data; /* malloc'ed copy, NUL-terminated */
    size_t coll_len;
    int ndreq; /* requests served here, handles in dreq_handle */
    uint64_t dreq_handle[16];
    int dreq_rank[16];
    int ndmdx;
    uint64_t dmdx_id;
    int dmdx_rc;
    char *dmdx_data;
    size_t dmdx_len;
    int nspawn; /* ops->spawn (ft_spawn_mode != 0): count, last id and request */
    uint64_t spawn_id;
    char spawn_desc[1024];
    int nns; /* ops->ns_done: count and last answer */
    uint64_t ns_id;
    int ns_rc;
    char ns_value[256];
};

struct ft_msg {
    int from, to;
    void *buf;
    size_t len;
    bool dup; /* already duplicated once */
};

enum ft_order { FT_FIFO = 0, FT_RANDOM = 1, FT_RANDOM_DUP = 2 };

struct ft {
    int nnodes, size, width;
    int *rank_node;
    int *client_of; /* rank -> local client index */
    struct ft_node *nodes;
    char **out; /* [size] accumulated replies */
    size_t *outlen;
    struct ft_msg *q;
    int nq, capq;
    uint64_t now;
    unsigned seed;
    /* loss: drop the next drop_count messages matching from/to (-1: any)
     * and, if drop_type > 0, the message type byte. */
    int drop_from, drop_to, drop_type, drop_count;
    int delivered, dropped, duplicated;
    bool verbose; /* print log lines */
    char *log;    /* every log line received, '\n'-separated */
    size_t loglen;
    int send_fail_to; /* tree_send to this node fails (-1: none) */
    /* bytes handed to tree_send, in all and by message type (msg.h: byte 2) */
    int64_t sent_bytes;
    int64_t sent_type_bytes[32];
    /* ft_run leaves queued the messages to hold_to of type hold_type
     * (hold_to >= 0); clear hold_to and run again to deliver them */
    int hold_to, hold_type;
};

/* Before ft_create: 0 no ops->spawn, 1 ops->spawn records the request
 * (ft_node.spawn_desc) and accepts it, 2 records and refuses it. */
extern int ft_spawn_mode;
/* cfg_tweak may adjust each node's config before psrv_create (may be NULL). */
struct ft *ft_create(int nnodes, int width, const int *rank_node, int size,
                     int timeout_ms);
struct ft *ft_create_cfg(int nnodes, int width, const int *rank_node, int size,
                         int timeout_ms, void (*cfg_tweak)(struct psrv_config *cfg));
void ft_destroy(struct ft *ft);

/* Feed raw bytes from rank's connection.  Returns psrv_client_input's rc. */
int ft_input(struct ft *ft, int rank, const char *buf, size_t len);
/* Feed a NUL-terminated string. */
int ft_send(struct ft *ft, int rank, const char *text);
/* Feed a PMI-2 body with a left-justified 6-byte length. */
int ft_send2(struct ft *ft, int rank, const char *body);
/* Replies received by rank since the last take ("" if none); caller frees. */
char *ft_take(struct ft *ft, int rank);
void ft_gone(struct ft *ft, int rank);

/* Deliver queued tree messages until the queue is empty (including those
 * sent while delivering).  Returns the number delivered. */
int ft_run(struct ft *ft, enum ft_order order);
/* Deliver at most max messages (max < 0: all). */
int ft_run_some(struct ft *ft, enum ft_order order, int max);
/* Advance the clock and tick every node. */
void ft_advance(struct ft *ft, uint64_t ms);
/* Node of the first abort (or -1) and total aborts across nodes. */
int ft_first_abort(const struct ft *ft, int *total);
struct ft_node *ft_node_of(struct ft *ft, int rank);

#endif /* LOOM_TEST_FAKE_TREE_H */
