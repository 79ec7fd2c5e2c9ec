/* pcli.h - the connection layer shared by libpmi2 and libpmi (internal).
 *
 * Contract:
 *   A struct pcli is one client's connection to its PMI server: finding it
 *   (PMI_FD, else PMI_PORT, else singleton), writing whole messages, reading
 *   whole replies (PMI-1 lines or PMI-2 records) with the wire codec, and
 *   tracing both directions to stderr when debugging is on.  It also holds
 *   the small in-process store a singleton uses for its KVS, node attributes
 *   and names, and the PMI_process_mapping parser behind clique queries.
 *   All functions return 0 or -errno unless noted.
 *
 * Notes:
 *   - Nothing here is exported from the shared libraries: the link filters
 *     keep only the PMI2_ names and PMIX_Ring (libpmi2) and
 *     the PMI_ names (libpmi).
 *   - Reads loop on short reads and EINTR; EOF from the server is -EPIPE,
 *     never a hang.  There is no reply timeout: a fence may legitimately
 *     take as long as the slowest rank, and a server that dies closes the
 *     socket, which ends the wait.
 *   - Writes use MSG_NOSIGNAL on sockets, so a vanished server is an error
 *     return, not SIGPIPE.
 *   - Not thread safe by itself: the API layers hold their call mutex around
 *     every request/response.  pcli_send() takes the write lock, so an abort
 *     written from another thread never interleaves with a request.
 */
#ifndef LOOM_PCLI_H
#define LOOM_PCLI_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "pmi_wire.h"

struct pcli_item {
    char *key;
    char *val;
    struct pcli_item *next;
};

struct pcli {
    int fd;          /* -1: singleton */
    int debug;       /* trace requests and replies to stderr */
    const char *tag; /* "pmi2" or "pmi": prefix of trace lines */
    int rank;        /* for trace lines */
    char *in;        /* received bytes not yet consumed */
    size_t inlen, incap;
    pthread_mutex_t wlock;   /* serialises writes (abort vs. requests) */
    struct pcli_item *store; /* singleton KVS / attributes / names */
};

void pcli_init(struct pcli *c, const char *tag);
/* Environment helpers: 0, -ENOENT (unset), -EINVAL (not an integer). */
int pcli_env_int(const char *name, int *out);
/* Debug level from PMI2_DEBUG / PMI_DEBUG (first set, non-zero = on). */
int pcli_env_debug(void);

/* Find the server: PMI_FD (validated), else PMI_PORT (TCP connect).  Sets
 * c->fd, or leaves it -1 when neither variable is set (singleton).  Errors:
 * -EINVAL for a malformed variable, -EBADF for a PMI_FD that is not open,
 * or the connect error. */
int pcli_connect(struct pcli *c);
/* Called when pcli_connect found no server: if the environment says this
 * process is one of several (PMI_SIZE > 1, or a Slurm step of several
 * tasks), print a warning that it runs as a singleton anyway, so that "N
 * copies of rank 0" is not silent (srun without --mpi=pmi2).  Returns 1 if
 * it warned. */
int pcli_singleton_check(const struct pcli *c);
/* Close the connection (shutdown + close) and free buffers and the store.
 * c must be pcli_init'ed again before reuse. */
void pcli_close(struct pcli *c);

/* Write all of buf.  -EPIPE if the server is gone. */
int pcli_write(struct pcli *c, const char *buf, size_t len);
/* Finish o (pmi_out_end), trace it and write it.  Does not free o. */
int pcli_send(struct pcli *c, struct pmi_out *o);
/* Read and parse the next reply in protocol v.  -EPIPE on EOF, -EPROTO on a
 * malformed reply (the connection is then unusable). */
int pcli_recv(struct pcli *c, enum pmi_version v, struct pmi_msg *m);
/* Send o, then read a reply that must be command `expect` and carry an
 * integer rc; *rc receives it.  -EPROTO if the reply is another command or
 * has no valid rc.  On success the caller owns *m. */
int pcli_call(struct pcli *c, struct pmi_out *o, enum pmi_version v, const char *expect,
              struct pmi_msg *m, int *rc);

/* Print one line to stderr prefixed with the tag and rank (always). */
void pcli_log(const struct pcli *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Singleton store: key spaces are separated by a one-letter prefix chosen
 * by the caller ("k:" KVS, "n:" node attributes, "s:" names). */
int pcli_store_put(struct pcli *c, const char *key, const char *val);
const char *pcli_store_get(const struct pcli *c, const char *key);
int pcli_store_del(struct pcli *c, const char *key);

/* Copy src into dst of dstlen bytes (NUL included); returns true if it had
 * to truncate.  dstlen <= 0 copies nothing (truncation if src non-empty). */
bool pcli_copy(char *dst, int dstlen, const char *src);

/* Parse a comma-separated list of integers into array[arraylen]; *outlen
 * receives how many were stored.  -EINVAL if the text is not such a list. */
int pcli_parse_intlist(const char *s, int *array, int arraylen, int *outlen);

/* PMI_process_mapping: loom_pmap_parse() in common/pmap.h. */
#include "pmap.h"

#endif /* LOOM_PCLI_H */
