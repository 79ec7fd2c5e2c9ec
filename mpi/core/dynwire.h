/*
 * dynwire.h - what dynamic-process code reads from outside its own process: port
 *             names (strings a user passes around, publishes or looks up), the
 *             accept/connect control messages and the Comm_join hello read from a
 *             socket the user hands us.  Pure parsers (core/dynwire.c), no engine
 *             state, so that tests/fuzz/fuzz_mpi_dyn.c links them alone.
 *
 * Owns: the formats, and every bound on them.
 * Contract:
 *   - A port name is "loom-port:1:<world rank>:<tag>:<job id>" (decimal, no signs or
 *     spaces, tag odd and in (0, XM_DYN_TAG_MAX), job id 1..63 printable bytes, whole
 *     string < MPI_MAX_PORT_NAME).  xm_dyn_port_parse() accepts exactly that, 0 or
 *     -EINVAL; it never reads past the first NUL nor past MPI_MAX_PORT_NAME bytes.
 *   - Control messages (struct xm_dyn_msg, four int32 in host order: the peer is a
 *     process of this job on this machine's ABI) are checked by xm_dyn_msg_check():
 *     magic, a known kind, an even tag in [0, XM_DYN_TAG_MAX).
 *   - The join hello (struct xm_dyn_hello, fixed 88 bytes) is checked by
 *     xm_dyn_hello_check(): magic, version, a job id NUL-terminated inside its field,
 *     size > 0, 0 <= rank < size, an even tag in range.
 */
#ifndef XM_DYNWIRE_H
#define XM_DYNWIRE_H

#include <stddef.h>
#include <stdint.h>

#define XM_DYN_TAG_MAX (1 << 30)
#define XM_DYN_JOBID 64
#define XM_DYN_PORT_MAX 256 /* MPI_MAX_PORT_NAME */

struct xm_dyn_port {
    int rank, tag;
    char jobid[XM_DYN_JOBID];
};

int xm_dyn_port_parse(const char *s, struct xm_dyn_port *p);
/* "loom-port:1:..." into buf (len >= XM_DYN_PORT_MAX); 0 or -ENAMETOOLONG */
int xm_dyn_port_format(char *buf, size_t len, const struct xm_dyn_port *p);

#define XM_DYN_MAGIC 0x4c4d4459 /* "LMDY" */
enum { XM_DYN_REQ = 1, XM_DYN_OK = 2, XM_DYN_NAK = 3, XM_DYN_CONFIRM = 4 };

struct xm_dyn_msg {
    int32_t magic, kind, tag, zero;
};

/* NULL = acceptable, else what is wrong */
const char *xm_dyn_msg_check(const void *buf, size_t len, struct xm_dyn_msg *out);

#define XM_DYN_HELLO_MAGIC "LOOMJOIN"
struct xm_dyn_hello {
    char magic[8];
    int32_t version, size, rank, tag;
    char jobid[XM_DYN_JOBID];
};

const char *xm_dyn_hello_check(const void *buf, size_t len, struct xm_dyn_hello *out);

#endif
