/* pmap.h - PMI_process_mapping, MPICH's description of which node runs each rank.
 *
 * Contract: loom_pmap_parse(s, size, rank_node) fills rank_node[0..size-1] with the
 * node index of every rank and returns 0, or returns -EINVAL when s is NULL, empty,
 * malformed, or cannot place size ranks.  Input is untrusted (it comes from a
 * process manager's reply): the cost is O(strlen(s) + size) and the memory it
 * takes is bounded whatever s says.  The grammar and the wrap-around rule are in
 * pmap.c.  libc only, so libmpi compiles it in too (mpi/core/pmap.c).
 */
#ifndef LOOM_PMAP_H
#define LOOM_PMAP_H

int loom_pmap_parse(const char *s, int size, int *rank_node);

#endif /* LOOM_PMAP_H */
