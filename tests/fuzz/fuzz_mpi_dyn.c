/* fuzz_mpi_dyn.c - libFuzzer target: what the dynamic-process code reads from outside
 * (mpi/core/dynwire.c): port names (any string a user, a name service or another
 * process hands over), accept/connect control messages and the Comm_join hello read
 * from a user's socket.
 *
 * fuzz-sources: mpi/core/dynwire.c
 * fuzz-cflags: -Impi/core
 * fuzz-options: -max_len=512
 *
 * Contract: input byte 0 picks the parser (0: port name, NUL-terminated copy of the
 * rest in an exact-size block; 1: control message; 2: join hello; the last two get
 * the rest in an exact-size block, any length).
 * Invariants (a trap is a finding): an accepted port name has a rank and an odd tag in
 * range and a job id, and formats back to a name that parses to the same; an accepted control
 * message has a known kind and an even tag in range; an accepted hello has 0 <= rank <
 * size and a NUL-terminated job id.
 * Seeds: corpus/mpi_dyn/: a port name, each control message kind, a hello.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dynwire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t len = size - 1;
    char *b = malloc(len + 1);
    if (!b)
        return 0;
    memcpy(b, data + 1, len);
    b[len] = 0;
    switch (data[0] % 3) {
    case 0: {
        struct xm_dyn_port p;
        if (xm_dyn_port_parse(b, &p) == 0) {
            if (p.rank < 0 || p.rank >= XM_DYN_TAG_MAX || !(p.tag & 1) || p.tag <= 0 ||
                p.tag >= XM_DYN_TAG_MAX || strnlen(p.jobid, sizeof(p.jobid)) == 0)
                __builtin_trap();
            char again[XM_DYN_PORT_MAX];
            /* leading zeros are accepted but not written back: compare parsed forms */
            struct xm_dyn_port q;
            if (xm_dyn_port_format(again, sizeof(again), &p) < 0 ||
                xm_dyn_port_parse(again, &q) < 0 || q.rank != p.rank || q.tag != p.tag ||
                strcmp(q.jobid, p.jobid))
                __builtin_trap();
        }
        break;
    }
    case 1: {
        struct xm_dyn_msg m;
        if (!xm_dyn_msg_check(b, len, &m) &&
            (m.kind < XM_DYN_REQ || m.kind > XM_DYN_CONFIRM || m.tag < 0 || (m.tag & 1) ||
             m.tag >= XM_DYN_TAG_MAX))
            __builtin_trap();
        break;
    }
    default: {
        struct xm_dyn_hello h;
        if (!xm_dyn_hello_check(b, len, &h) &&
            (h.rank < 0 || h.rank >= h.size || !memchr(h.jobid, 0, sizeof(h.jobid))))
            __builtin_trap();
        break;
    }
    }
    free(b);
    return 0;
}
