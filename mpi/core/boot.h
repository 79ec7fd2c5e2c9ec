/*
 * boot.h - bootstrap: who am I, who is on my node, one fence.
 *
 * Owns: libmpi's use of the process manager (PMI-2, PMIx or none, chosen
 * from the launcher's environment by boot_launch.c; the interfaces in boot_pmi.h).
 * Contract:
 *   - xm_boot_init(why, len): picks the interface and wires up -> xm_g.rank/size/
 *     appnum/jobid; 0, or <0 with the whole message for the user in why (a refused
 *     multi-task launch without a server, an unusable PMIx, a failed PMI2_Init).
 *     Node map from the interface (PMI_process_mapping "(vector,(node,nnodes,ppn),...)",
 *     PMIx_Resolve_nodes/peers), renumbered to the smallest rank of each node;
 *     fallback: each rank puts its hostname, and after the fence all are read back.
 *     LOOM_MPI_DEBUG: rank 0 says which interface and where the node map came from.
 *     Fills xm_g.node_of/local_ranks/local_index/nlocal/local_rank, a first guess of
 *     node_cpus/oversubscribed (my affinity, or every online CPU if I am bound
 *     narrower) and any_oversubscribed (rank 0's: its guess against the fullest node,
 *     put in the KVS so every rank of the job makes the same choices from it).
 *   - xm_boot_set_node_cpus(n): the node's CPUs as the shm transport counted them
 *     (union of the local ranks' masks) -> node_cpus, oversubscribed = machine_ranks > n,
 *     where machine_ranks adds the ranks of other nodes on this machine (same boot id:
 *     network namespaces, several slurmd on a host; jobs of up to 64 nodes).
 *   - xm_boot_put(key, val) / xm_boot_get(rank, key, buf, len): KVS under a per-rank
 *     key prefix ("xm-<key>-<rank>"); valid before / after xm_boot_fence() respectively.
 *   - xm_boot_fence(): one fence per MPI_Init (transports put their cards before it,
 *     read peers' after it); the hostname fallback costs the shm transport a second.
 *   - xm_boot_abort(code, msg) never returns.
 */
#ifndef XM_BOOT_H
#define XM_BOOT_H

#include <stddef.h>

int xm_boot_init(char *why, size_t len);
int xm_boot_put(const char *key, const char *val);
int xm_boot_fence(void);
int xm_boot_get(int rank, const char *key, char *buf, int len);
/* 1 if the node map is known before the fence (PMI_process_mapping): then
 * xm_g.nlocal etc. are valid already; 0 with the hostname fallback (valid after it). */
int xm_boot_have_map(void);
void xm_boot_set_node_cpus(int n);
int xm_boot_finalize(void);
/* core/proc.h grow hook for xm_g.node_of and xm_g.local_index: a process of another
 * job gets node number = its id (no world rank has it) and local index -1 */
int xm_boot_proc_grow(int oldcap, int newcap);
void xm_boot_abort(int code, const char *msg) __attribute__((noreturn));
/* Name service of the process manager: 0, -ENOSYS when the
 * interface has none, else the interface's answer (boot_pmi.h). */
int xm_boot_publish(const char *service, const char *port);
int xm_boot_lookup(const char *service, char *port, int len);
int xm_boot_unpublish(const char *service);
/* boot_pmi.h's spawn and parent_port; -ENOSYS where the interface has none */
struct xm_spawn_keys;
int xm_boot_spawn(int count, char *const *cmds, char **const *argv, const int *maxprocs,
                  const struct xm_spawn_keys *keys, const char *port, int *errors);
int xm_boot_parent_port(char *buf, int len);
/* core/bind.c: bind this rank per LOOM_BIND (after the node map is known); 0. */
int xm_bind_init(void);

#endif
