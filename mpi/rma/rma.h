/*
 * rma.h - one-sided communication engine: window objects and the calls
 *         api/rma.c makes after checking arguments.
 *
 * Owns: struct xm_win, the window table (handles of kind XM_K_WIN), the active-message
 * service of a window (rma.c), node-shared window memory (shmwin.c), the wire format
 * (rma_msg.h).
 * Contract:
 *   - Ranks are ranks of the window's group (comm ranks); displacements are in the
 *     target's disp_unit (bytes of the address for dynamic windows).
 *   - Engine calls return 0 or a positive MPI error class (the api/ layer runs the
 *     window's error handler); they never crash on bad input.
 *   - Progress: targets service requests from xm_progress() (a hook in core/p2p.c), so
 *     a target makes progress whenever it is inside any MPI call that progresses the
 *     p2p engine (weak progress, mpi/README.md).
 *   - One thread at a time, like the rest of libmpi (core/mt.h under MULTIPLE).
 */
#ifndef XM_RMA_H
#define XM_RMA_H
#include "../core/xm.h"
#include "rma_msg.h"

#define XM_RMA_RING 4 /* request receives posted per window */

struct xm_rma_pend;
struct xm_rma_waiter;
struct xm_win_region {
    uintptr_t base;
    size_t len;
};

struct xm_win {
    int handle;
    struct xm_comm *comm; /* private communicator: its context carries the messages */
    int flavor, model;
    void *base;
    MPI_Aint size;
    int disp_unit;
    MPI_Aint *sizes; /* per rank */
    int *units;      /* per rank */
    /* node-shared memory (flavor SHARED, or ALLOCATE inside one node) */
    char *map;
    size_t maplen;
    size_t *offs;    /* per rank: offset of its part in map, or NULL */
    size_t lock_off; /* per-rank accumulate lock words (64 bytes apart) in map */
    int own_base;    /* ALLOCATE from malloc: free at Win_free */
    uint64_t *raddr;        /* per rank: its base address (Win_create: CMA target) */
    unsigned char *cma_ok;  /* per rank: 0 untried, 1 CMA works, 2 not; NULL = off */
    /* (issue 21) Win_create inside one node with CMA: a node-shared page of lock words
     * (one per rank, 64 bytes apart) so the accumulate family runs at the origin by
     * CMA under the target's word, and the target's service takes the same word */
    char *lkmap;
    size_t lklen;
    struct xm_rma_lkpage *lkpage; /* lkmap's entry in rma.c's cache (shared by windows) */
    /* Win_create over MPI_Alloc_mem memory (allocmem.c): per rank, its window base
     * mapped into this process (mine: w->base), or NULL; taken like a node-shared
     * part (put/get copies, the accumulate family under the rank's lkmap word) */
    char **direct;
    void **dmap; /* per rank: the mapping behind direct[r] (to unmap) */
    size_t *dmaplen;
    void *memref; /* the Alloc_mem block base lies in (counted there), or NULL */
    MPI_Errhandler errh;
    char name[MPI_MAX_OBJECT_NAME];
    /* dynamic windows */
    struct xm_win_region *regs;
    int nregs, capregs;
    /* target side: posted request receives, lock state */
    struct xm_req *ring[XM_RMA_RING];
    void *ringbuf[XM_RMA_RING];
    int ring_head;
    int lk_excl;     /* world rank holding the exclusive lock, or -1 */
    int lk_shared;   /* shared holders */
    struct xm_rma_waiter *lkq, *lkq_tail;
    int *post_from;      /* PSCW: POSTs received from each rank, not yet consumed */
    int *complete_from;  /* COMPLETEs received from each rank */
    /* origin side */
    unsigned char *dirty;  /* ops sent to that rank since its last flush */
    unsigned char *locked; /* lock held at that rank (Win_lock) */
    int lock_all;
    int fence_open;
    int *access, naccess;  /* Win_start group (ranks), -1 when none */
    int *expo, nexpo;      /* Win_post group */
    int started, posted;
    uint32_t next_tag;
    struct xm_rma_pend *pend; /* outstanding get-like replies */
    struct xm_rma_accq *accq; /* accumulates by CMA not yet applied (rma.c acc_defer) */
    int accrc;                /* an error class from applying them, for the next flush */
    struct xm_win *next_live;
    struct xm_attr *attrs; /* user attributes (api/winattr.c) */
    /* info hints of MPI-3.1 11.2.1 (api/rma.c hint table): the values set at creation
     * or by Win_set_info, "" = the default; reported by Win_get_info */
    char hints[8][32];
};

struct xm_win *xm_win_get(MPI_Win h);
/* creation: collective over c; flavor-specific memory.  0 / MPI error class */
int xm_win_create(void *base, MPI_Aint size, int disp_unit, struct xm_comm *c, int flavor,
                  struct xm_win **out);
int xm_win_free(struct xm_win *w);
/* user attributes (api/winattr.c): 0 / MPI error class */
int xm_win_attr_set(struct xm_win *w, int keyval, void *val);
int xm_win_attr_get(struct xm_win *w, int keyval, void *val, int *flag);
int xm_win_attr_delete(struct xm_win *w, int keyval);
int xm_win_attr_delete_all(struct xm_win *w);
int xm_win_attach(struct xm_win *w, void *base, MPI_Aint size);
int xm_win_detach(struct xm_win *w, const void *base);
void *xm_win_shared_base(struct xm_win *w, int rank);

/* origin-side operations (op only for ACC/GACC) */
int xm_rma_put(struct xm_win *w, const void *oaddr, int ocount, MPI_Datatype odt, int trank,
               MPI_Aint tdisp, int tcount, MPI_Datatype tdt);
int xm_rma_get(struct xm_win *w, void *oaddr, int ocount, MPI_Datatype odt, int trank,
               MPI_Aint tdisp, int tcount, MPI_Datatype tdt);
int xm_rma_acc(struct xm_win *w, const void *oaddr, int ocount, MPI_Datatype odt,
               void *raddr, int rcount, MPI_Datatype rdt, int trank, MPI_Aint tdisp,
               int tcount, MPI_Datatype tdt, MPI_Op op, int fetch);
int xm_rma_cas(struct xm_win *w, const void *oaddr, const void *caddr, void *raddr,
               MPI_Datatype dt, int trank, MPI_Aint tdisp);
/* (issue 21) node-shared windows, count elements of one predefined basic type at both
 * ends, rank and epoch checked by the caller: 1 done, 0 take the general path */
int xm_rma_copy_fast(struct xm_win *w, void *addr, int count, MPI_Datatype dt, int trank,
                     MPI_Aint tdisp, int put);
int xm_rma_acc_fast(struct xm_win *w, const void *oaddr, void *raddr, int count,
                    MPI_Datatype dt, int trank, MPI_Aint tdisp, MPI_Op op);

/* synchronization */
int xm_rma_fence(struct xm_win *w, int assert);
int xm_rma_lock(struct xm_win *w, int type, int trank, int assert);
int xm_rma_unlock(struct xm_win *w, int trank);
int xm_rma_lock_all(struct xm_win *w, int assert);
int xm_rma_unlock_all(struct xm_win *w);
int xm_rma_flush(struct xm_win *w, int trank); /* trank -1: all */
int xm_rma_flush_local(struct xm_win *w, int trank);
int xm_rma_post(struct xm_win *w, const int *ranks, int n, int assert);
int xm_rma_start(struct xm_win *w, const int *ranks, int n, int assert);
int xm_rma_complete(struct xm_win *w);
int xm_rma_wait(struct xm_win *w, int block, int *flag);

/* the service, called by xm_progress() through xm_rma_progress_hook */
int xm_rma_progress(void);

/* The target's byte ranges of (count, t) placed at base, in packed-stream order. */
struct xm_dtype;
struct xm_rma_segit {
    const struct xm_dtype *t;
    int count, k, b;
    size_t j;
    uint64_t base;
    int done;
};
void xm_rma_segit_init(struct xm_rma_segit *it, uint64_t base, int count,
                       const struct xm_dtype *t);
int xm_rma_segit_next(struct xm_rma_segit *it, uint64_t *off, uint64_t *len);

/* shmwin.c: operations straight on a node-shared mapping (w->offs set).  tbase is the
 * checked byte offset in trank's part.  put/get copy; the accumulate family (fetch
 * when rdt is set, compare-and-swap) runs under trank's lock word, so it is
 * element-wise atomic against every other accumulate on that part (all of them come
 * here on such windows) and needs nothing from the target. */
void xm_shmwin_copy(struct xm_win *w, int trank, uint64_t tbase, int tcount,
                    const struct xm_dtype *tdt, void *obuf, int ocount,
                    const struct xm_dtype *odt, int put);
int xm_shmwin_acc(struct xm_win *w, const void *obuf, int ocount, const struct xm_dtype *odt,
                  void *rbuf, int rcount, const struct xm_dtype *rdt, int trank,
                  uint64_t tbase, int tcount, const struct xm_dtype *tdt, MPI_Op op);
int xm_shmwin_cas(struct xm_win *w, const void *obuf, const void *cbuf, void *rbuf,
                  size_t es, int trank, uint64_t tbase);
/* rma.c: op (MINLOC/MAXLOC) on n packed elements of a padded pair type
 * (xm_rma_pair_layout): in and inout are packed streams.  0, or -1 (not a pair type,
 * op not defined on it). */
int xm_rma_pair_apply(MPI_Op op, MPI_Datatype basic, const void *in, void *inout, size_t n);
/* rank r's accumulate lock word (w->map's or w->lkmap's); holders never wait inside */
void xm_shmwin_lock(struct xm_win *w, int r);
void xm_shmwin_unlock(struct xm_win *w, int r);

/* shmwin.c: one mapping of total bytes shared by every rank of c (all on one node),
 * made by rank 0 (O_EXCL|O_NOFOLLOW, random name, 0600), checked and unlinked once all
 * mapped it.  Collective.  0 / MPI error class (the same at every rank). */
int xm_shmwin_map(struct xm_comm *c, size_t total, char **map);
/* the same, and *id = the mapping's random name bits (equal at every rank of c) */
int xm_shmwin_map_id(struct xm_comm *c, size_t total, char **map, uint64_t *id);
void xm_shmwin_unmap(char *map, size_t total);
/* rank r's part of a window whose memory this process reaches directly (node-shared,
 * or a peer's Alloc_mem block mapped here), or NULL */
static inline char *xm_win_part(const struct xm_win *w, int r)
{
    return w->offs ? w->map + w->offs[r] : w->direct ? w->direct[r] : NULL;
}

/* allocmem.c: MPI_Alloc_mem blocks other ranks of the node may map */
void *xm_mem_alloc(size_t size);
/* 0; a block windows still use goes with the last of them; pointers not from
 * xm_mem_alloc: free() */
int xm_mem_free(void *p);
/* a window over [base, base + len): the block that holds it (counted; *fd is its
 * memory file and *off the offset of base in it, or -1 for a malloc block), or NULL */
void *xm_mem_win_ref(const void *base, size_t len, int *fd, uint64_t *off);
void xm_mem_win_unref(void *blk);
/* (issue 21) a window over [base, base + len) of ordinary memory: move its pages in
 * place into a memory file of their own (*fd, *off as above), counted like a block and
 * put back into private memory with the last window over them; NULL where that is not
 * safe or fails (the memory is left as it was) */
void *xm_mem_win_adopt(void *base, size_t len, int *fd, uint64_t *off);
/* map [off, off + len) of process pid's memory file fd (a peer's announcement, checked
 * against the file): its address here, or NULL; *map and *maplen for munmap */
char *xm_mem_map_peer(pid_t pid, int fd, uint64_t off, uint64_t len, void **map,
                      size_t *maplen);
#endif
