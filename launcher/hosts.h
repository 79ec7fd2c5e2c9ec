/* hosts.h - mpiexec's host list: -hosts, host files, and which rank runs where.
 *
 * Contract:
 *   mpx_hosts_parse() appends the entries of a "-hosts" value
 *   ("h1,h2:4,h3") to a list; mpx_hostfile_parse() appends those of a host
 *   file's text: one "host[:n]" (or "host slots=n") per line, blank lines
 *   and "#" comments ignored.  A host name is letters, digits, '.', '-' and
 *   '_' and may not start with '-' (it goes on a launcher's command line);
 *   n is 1..65536.  Errors return -EINVAL with a one-line message (file
 *   name and line number for files) in err.
 *
 *   mpx_hosts_layout() places nranks ranks as hydra does: in blocks of
 *   each host's slots (-ppn N, when > 0, replaces every host's slots), host
 *   after host in list order, starting again at the first host when all
 *   slots are used.  Each distinct host name that receives a rank is one
 *   node; nodes are numbered in the order they first receive a rank.
 *
 *   mpx_host_is_local() says whether a name means this machine without any
 *   lookup: "localhost", "localhost.*", 127.x.y.z, or equal to the given
 *   host name (also when the names agree up to the first dot).
 *
 * Notes: pure functions (no I/O except mpx_hostfile_read()), for unit tests.
 */
#ifndef LOOM_LAUNCHER_HOSTS_H
#define LOOM_LAUNCHER_HOSTS_H

#include <stddef.h>

#define MPX_MAX_SLOTS 65536

struct mpx_host {
    char *name;
    int slots; /* 1 unless given */
};

struct mpx_hostlist {
    struct mpx_host *h;
    int n;
};

struct mpx_layout {
    int size;         /* ranks */
    int nnodes;       /* distinct hosts that got ranks */
    char **node_host; /* [nnodes] host name of each node */
    int *node_nranks; /* [nnodes] ranks on each node */
    int *rank_node;   /* [size] node of each rank */
};

int mpx_hosts_parse(const char *list, struct mpx_hostlist *hl, char *err, size_t errlen);
/* fname is only used in messages. */
int mpx_hostfile_parse(const char *text, const char *fname, struct mpx_hostlist *hl,
                       char *err, size_t errlen);
/* Reads the file and parses it; -errno / -EINVAL with a message. */
int mpx_hostfile_read(const char *path, struct mpx_hostlist *hl, char *err, size_t errlen);
void mpx_hosts_free(struct mpx_hostlist *hl);

/* Sum of slots (each host's, or ppn per host when ppn > 0). */
long mpx_hosts_total_slots(const struct mpx_hostlist *hl, int ppn);

/* Returns 0, -EINVAL (empty list, nranks < 1) or -ENOMEM. */
int mpx_hosts_layout(const struct mpx_hostlist *hl, int nranks, int ppn,
                     struct mpx_layout *ly);
void mpx_layout_free(struct mpx_layout *ly);

int mpx_host_is_local(const char *host, const char *myname);

#endif /* LOOM_LAUNCHER_HOSTS_H */
