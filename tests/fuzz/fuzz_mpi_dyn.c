/* fuzz_mpi_dyn.c - libFuzzer target: what the dynamic-process code reads from outside
 * (mpi/core/dynwire.c): port names (any string a user, a name service or another
 * process hands over), accept/connect control messages and the Comm_join hello read
 * from a user's socket.
 *
 * fuzz-sources: mpi/core/dynwire.c
 * fuzz-cflags: -Impi/core
 * fuzz-options: -max_len=2048
 *
 * Contract: input byte 0 picks the parser (0: port name, NUL-terminated copy of the
 * rest in an exact-size block; 1: control message; 2: join hello; 3: TCP address card
 * (the rest, not NUL-terminated: the parser gets its length); 4: the roots' card list;
 * 5: the TCP netmod's cross-job hello; 6: Comm_join's port message between jobs; the
 * others get the rest in an exact-size block, any length).
 * Invariants (a trap is a finding): an accepted port name has a rank and an odd tag in
 * range and a job id, and formats back to a name that parses to the same (version 2:
 * same secret and card too); an accepted card has 1..XM_DYN_ADDRS addresses with
 * non-zero ports, consumed no more than it was given, and formats back to the same
 * card; an accepted card list has a count in range and every entry decodes with
 * a job id, a rank and an address count in range and encodes back to the same bytes;
 * an accepted control
 * message has a known kind and an even tag in range; an accepted hello has 0 <= rank <
 * size and a NUL-terminated job id; an accepted cross-job hello has ranks and port tag
 * in range, a card that could travel, and encodes back to the same bytes; an accepted
 * join port message holds a version-2 name that parses to the same port and encodes
 * back to the same bytes.
 * Seeds: corpus/mpi_dyn/: a port name of each version, each control message kind, a
 * hello, a card, a card list of three, a cross-job hello, a join port message.
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
    switch (data[0] % 7) {
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
                strcmp(q.jobid, p.jobid) || q.version != p.version ||
                memcmp(q.secret, p.secret, sizeof(p.secret)) ||
                q.addrs.naddr != p.addrs.naddr ||
                memcmp(q.addrs.ip, p.addrs.ip, sizeof(p.addrs.ip)) ||
                memcmp(q.addrs.port, p.addrs.port, sizeof(p.addrs.port)))
                __builtin_trap();
            if (p.version == 2 && (p.addrs.naddr < 1 || p.addrs.naddr > XM_DYN_ADDRS))
                __builtin_trap();
        }
        break;
    }
    case 3: {
        struct xm_dyn_addrs a, a2;
        size_t used, used2;
        char txt[XM_DYN_ADDRS * 22];
        if (xm_dyn_addrs_parse(b, len, &a, &used) == 0) {
            if (used > len || a.naddr < 1 || a.naddr > XM_DYN_ADDRS)
                __builtin_trap();
            for (int i = 0; i < a.naddr; i++)
                if (a.port[i] == 0)
                    __builtin_trap();
            if (xm_dyn_addrs_format(txt, sizeof(txt), &a) < 0 ||
                xm_dyn_addrs_parse(txt, strlen(txt), &a2, &used2) < 0 ||
                used2 != strlen(txt) || a2.naddr != a.naddr ||
                memcmp(a2.ip, a.ip, sizeof(a.ip)) || memcmp(a2.port, a.port, sizeof(a.port)))
                __builtin_trap();
        }
        break;
    }
    case 4: {
        int n = 0;
        if (!xm_dyn_cards_check(b, len, &n)) {
            if (n < 1 || n > XM_DYN_CARDS_MAX || len != xm_dyn_cards_len(n))
                __builtin_trap();
            struct xm_dyn_card *c = malloc((size_t)n * sizeof(*c));
            void *again = malloc(len);
            if (c && again) {
                for (int i = 0; i < n; i++) {
                    xm_dyn_cards_get(b, i, &c[i]);
                    if (c[i].rank < 0 || c[i].addrs.naddr < 1 ||
                        c[i].addrs.naddr > XM_DYN_ADDRS || !c[i].jobid[0])
                        __builtin_trap();
                }
                if (xm_dyn_cards_encode(c, n, again, len) != (long)len ||
                    memcmp(again, b, len))
                    __builtin_trap();
            }
            free(c);
            free(again);
        }
        break;
    }
    case 5: {
        struct xm_dyn_xhello h;
        if (!xm_dyn_xhello_check(b, len, &h)) {
            unsigned char again[XM_DYN_XHELLO_WIRE];
            if (h.rank < 0 || h.to < 0 || h.port_tag < 0 || h.port_tag >= XM_DYN_TAG_MAX ||
                h.from.addrs.naddr < 1 || h.from.addrs.naddr > XM_DYN_ADDRS ||
                !memchr(h.tojob, 0, sizeof(h.tojob)) || !h.from.jobid[0] ||
                xm_dyn_xhello_encode(&h, again) < 0 || memcmp(again, b, len))
                __builtin_trap();
        }
        break;
    }
    case 6: {
        struct xm_dyn_port p, q;
        char name[XM_DYN_PORT_MAX];
        if (!xm_dyn_joinport_check(b, len, &p, name)) {
            unsigned char again[XM_DYN_JOINPORT_WIRE];
            if (p.version != 2 || !memchr(name, 0, sizeof(name)) ||
                xm_dyn_port_parse(name, &q) < 0 || q.rank != p.rank || q.tag != p.tag ||
                strcmp(q.jobid, p.jobid) ||
                memcmp(q.secret, p.secret, sizeof(p.secret)) ||
                xm_dyn_joinport_encode(name, again) < 0 || memcmp(again, b, len))
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
