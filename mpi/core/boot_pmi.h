/*
 * boot_pmi.h - the process-manager interfaces boot.c wires up through: one table of
 * operations per interface (PMI-2, PMIx, a lone singleton).
 *
 * Owns: the contract between boot.c (node view, key names, fallbacks) and
 * the code that speaks to a process manager.
 * Contract:
 *   - init(job, why, len): connect, fill *job; on failure <0 and a sentence in why
 *     (what failed and the library's own words), which boot.c prints.
 *   - node_map(size, node_of): node of every rank, as any ids (boot.c renumbers them);
 *     <0 when the interface has none (boot.c falls back to hostnames in the KVS).
 *   - put(key, val) before fence(), get(rank, key, buf, len) after it; keys arrive
 *     whole ("xm-<key>-<rank>"), values are strings of at most XM_PMI_VALLEN bytes.
 *     get returns -ENOENT for a key the rank did not put; it never waits for ever.
 *   - abort(code, msg) ends the whole job and does not return.
 *   - publish/lookup/unpublish (may be NULL): the name service behind MPI_Publish_name.
 */
#ifndef XM_BOOT_PMI_H
#define XM_BOOT_PMI_H

#include <stddef.h>

/* The MPI_Info keys of one spawn command the process manager reads: the
 * directory, and where the processes go (Loom's mpiexec: a list of the job's
 * hosts, or a host file); NULL when not given. */
struct xm_spawn_keys {
    const char *wdir, *host, *hostfile;
};

#define XM_PMI_VALLEN 1024

struct xm_pmi_job {
    int rank, size, appnum, universe, spawned;
    char jobid[64];
};

struct xm_pmi {
    const char *name; /* "PMI-2", "PMIx", "none (singleton)": for messages */
    int (*init)(struct xm_pmi_job *job, char *why, size_t len);
    int (*node_map)(int size, int *node_of);
    int (*put)(const char *key, const char *val);
    int (*fence)(void);
    int (*get)(int rank, const char *key, char *buf, int len);
    int (*finalize)(void);
    void (*abort)(int code, const char *msg) __attribute__((noreturn));
    /* the process manager's name service (MPI_Publish_name &c.);
     * NULL where the interface has none.  0, -ENOENT (lookup/unpublish: no such name),
     * -EEXIST (publish: taken, where the server says so) or -EIO. */
    int (*publish)(const char *service, const char *port);
    int (*lookup)(const char *service, char *port, int len);
    int (*unpublish)(const char *service);
    /* MPI_Comm_spawn(_multiple) (may be NULL): start count commands, maxprocs[i]
     * processes of cmds[i] with argv[i] (NULL-terminated, may be NULL) and the info
     * keys keys[i] hands on (struct xm_spawn_keys; keys may be NULL), with
     * PARENT_ROOT_PORT_NAME=port in the new job's KVS;
     * errors[] gets one code per process (0 = started).  0, or <0 with the process
     * manager's refusal (its words on stderr where the library prints them). */
    int (*spawn)(int count, char *const *cmds, char **const *argv, const int *maxprocs,
                 const struct xm_spawn_keys *keys, const char *port, int *errors);
    /* a spawned job's PARENT_ROOT_PORT_NAME from its KVS (may be NULL): 0 or <0 */
    int (*parent_port)(char *buf, int len);
};

extern const struct xm_pmi xm_pmi_pmi2;   /* boot_pmi2.c: libpmi2 (ours or Slurm's) */
extern const struct xm_pmi xm_pmi_pmix;   /* boot_pmix.c: OpenPMIx, loaded at run time */
extern const struct xm_pmi xm_pmi_single; /* boot_single.c: rank 0 of 1, no server */

#endif
