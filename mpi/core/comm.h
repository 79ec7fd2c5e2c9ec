/*
 * comm.h - communicator and group internals: context-id
 *          allocation, communicator construction/destruction, the group table.
 * Contract:
 *   - xm_ctx_alloc(parent, &ctx) is collective over `parent`: every rank of parent
 *     calls it in the same order; all get the lowest context id that is free at every
 *     one of them (bitmask allreduce with BAND, as MPICH does).  ctx is even.
 *   - xm_comm_new() takes ownership of w (comm rank -> world rank, size entries) and
 *     registers a handle; xm_comm_release() runs attribute delete callbacks, returns the
 *     context id and frees the object.
 *   - Groups: handles of kind XM_K_GROUP; MPI_GROUP_EMPTY is a static empty group.
 *     xm_group_new() takes ownership of w and computes my rank.
 */
#ifndef XM_COMM_H
#define XM_COMM_H

#include "xm.h"

int xm_ctx_alloc(struct xm_comm *parent, uint32_t *ctx);
#define XM_CTX_CREATE_GROUP 4u /* reserved id 2: Comm_create_group's own allreduce */
void xm_ctx_release(uint32_t ctx);
/* Nonblocking agreement (core/idup.c): ids offered by a round in flight are set in
 * xm_ctx_reserved (no other agreement offers them meanwhile); xm_ctx_offer() fills a
 * mask of the ids free and not reserved here; xm_ctx_take() takes the lowest id of an
 * agreed mask (-ENOSPC: none). */
#ifndef XM_CTX_MASK_WORDS
#define XM_CTX_MASK_WORDS 64
/* ---- MPI-4 sessions (core/sessboot.c): the reserved context of
 * Comm_create_from_group's agreement messages (id 3), and claiming one agreed id:
 * 0, -EBUSY (used or reserved here meanwhile), -EINVAL (not an id a comm may have) */
#define XM_SESS_CTX 6u
int xm_ctx_claim(uint32_t ctx);

#endif
extern uint32_t xm_ctx_reserved[XM_CTX_MASK_WORDS];
void xm_ctx_offer(uint32_t *mask);
/* MPI_Comm_idup: start duplicating c; *newcomm is written when *rp completes */
int xm_comm_idup(struct xm_comm *c, MPI_Comm *newcomm, struct xm_req **rp);
/* xm_ctx_alloc under MPI_THREAD_MULTIPLE (an agreement, as idup's) */
int xm_ctx_agree(struct xm_comm *c, uint32_t *ctx);
struct xm_comm *xm_comm_new(int size, int *w, uint32_t ctx, struct xm_comm *parent);
void xm_comm_release(struct xm_comm *c);
/* drop a reference (Comm_free, end of a collective schedule); the last one releases */
void xm_comm_unref(struct xm_comm *c);
/* comm rank of a world rank, or -1 (inverse map, built lazily) */
int xm_comm_rank_of(struct xm_comm *c, int wrank);

struct xm_group *xm_group_get(MPI_Group h);
struct xm_group *xm_group_new(int size, int *w); /* NULL + errno */
void xm_group_unref(struct xm_group *g);

/* IDENT is never returned: CONGRUENT, SIMILAR or UNEQUAL of two rank maps */
int xm_map_compare(int n1, const int *w1, int n2, const int *w2);

/* keyvals and attributes (core/attr.c).  The int results are MPI_SUCCESS,
 * MPI_ERR_NO_MEM, MPI_ERR_KEYVAL (no such keyval / attribute) or a callback's code. */
int xm_keyval_create(MPI_Comm_copy_attr_function *copy_fn,
                     MPI_Comm_delete_attr_function *delete_fn, void *extra_state,
                     int flang, int *keyval);
void xm_keyval_free(int keyval); /* drops the handle's reference once */
int xm_keyval_valid(int keyval); /* 1: a user keyval (not yet gone) */
int xm_attr_set(struct xm_comm *c, int keyval, void *val, int lang);
struct xm_attr *xm_attr_find(struct xm_comm *c, int keyval); /* NULL: not set */
int xm_attr_delete(struct xm_comm *c, int keyval);
int xm_attr_copy_all(struct xm_comm *from, struct xm_comm *to); /* to a duplicate */
int xm_attr_delete_all(struct xm_comm *c);

/* context ids agreed between the two groups of an intercommunicator */
#define XM_CTX_MASK_WORDS 64
void xm_ctx_free_mask(uint32_t *mask);                 /* XM_CTX_MASK_WORDS words */
int xm_ctx_take(const uint32_t *mask, uint32_t *ctx);  /* 0 or -ENOSPC */

/* the context of accept/connect/join control messages (the last
 * id, never handed to a communicator; api/dynproc.c) */
#define XM_DYN_CTX (2u * (XM_CTX_MASK_WORDS * 32u - 1u))

/* ---- MPI-4 sessions (core/sessboot.c): the reserved context of
 * Comm_create_from_group's agreement messages (id 3), and claiming one agreed id:
 * 0, -EBUSY (used or reserved here meanwhile), -EINVAL (not an id a comm may have) */
#define XM_SESS_CTX 6u
int xm_ctx_claim(uint32_t ctx);

#endif
