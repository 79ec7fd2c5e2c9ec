/* fuzz_iofwd.c - libFuzzer target: mpiexec's line assembly of a rank's stdout/stderr
 * (launcher/iofwd.c), the bytes a task writes, cut into arbitrary reads.
 *
 * fuzz-sources: launcher/iofwd.c
 * fuzz-cflags: -Ilauncher -Icommon
 *
 * Contract: input = 1 byte of flags (bit 0: tag lines; the rest seeds the read sizes)
 * then the rank's output.  The output is fed in reads of 1..4096 bytes, then EOF.
 * Invariants (a violation is a trap): the held partial line never exceeds
 * IOFWD_MAX_PARTIAL; without tagging the forwarded bytes are exactly the input; with
 * tagging every forwarded line starts with "[7] ", the output ends with '\n', and
 * removing the tags gives back the input (plus newlines where a line was cut or the
 * last one was unfinished) - no byte lost, added or reordered.
 * Seeds: corpus/iofwd/ (ordinary program output, long lines, no final newline).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "iofwd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int tag = data[0] & 1;
    uint32_t seed = data[0] * 2654435761u + 1;
    const char *in = (const char *)data + 1;
    size_t n = size - 1, off = 0;
    struct iofwd_stream s;
    struct iobuf out = {0};

    memset(&s, 0, sizeof(s));
    s.rank = 7;
    while (off < n) {
        seed = seed * 1103515245u + 12345u;
        size_t k = 1 + (seed >> 8) % 4096;
        if (k > n - off)
            k = n - off;
        if (iofwd_feed(&s, in + off, k, tag, &out) < 0)
            goto done; /* -ENOMEM: fine */
        if (s.part.len > IOFWD_MAX_PARTIAL)
            __builtin_trap();
        off += k;
    }
    if (iofwd_eof(&s, tag, &out) < 0)
        goto done;
    if (!tag) {
        if (out.len != n || (n && memcmp(out.p, in, n) != 0))
            __builtin_trap();
    } else if (out.len > 0) {
        static const char pfx[] = "[7] ";
        size_t i = 0, j = 0;
        if (out.p[out.len - 1] != '\n')
            __builtin_trap();
        while (i < out.len) {
            if (out.len - i < 4 || memcmp(out.p + i, pfx, 4) != 0)
                __builtin_trap();
            i += 4;
            const char *nl = memchr(out.p + i, '\n', out.len - i);
            size_t l = (size_t)(nl - (out.p + i));
            /* the line's bytes are the next input bytes */
            if (l > n - j || memcmp(out.p + i, in + j, l) != 0)
                __builtin_trap();
            j += l;
            if (j < n && in[j] == '\n')
                j++; /* the input's own newline */
            i += l + 1;
        }
        if (j != n)
            __builtin_trap();
    } else if (n != 0) {
        __builtin_trap();
    }
done:
    iobuf_free(&out);
    iobuf_free(&s.part);
    return 0;
}
