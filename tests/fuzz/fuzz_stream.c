/* fuzz_stream.c - libFuzzer target: common/stream.c's frame parser (staging buffer,
 * frames split across deliveries, large-frame assembly, the length limits), the
 * receive side shared by treenet's links and mpiexec's proxy connections, as a hostile
 * peer drives it.
 *
 * fuzz-sources:
 * fuzz-cflags: -Icommon
 * fuzz-options: -max_len=300000
 *
 * Contract: the target includes common/stream.c (to walk the output queue).  Input
 * byte 0 picks the limit (bits 0-1: 0, 16, 70000 or 64 MiB) and LOOM_STREAM_NONEMPTY
 * (bit 2); byte 1 the size of each delivery (1..256 bytes, or everything the stream
 * takes when 0); the rest is the peer's byte stream, fed with loom_stream_feed().
 * Invariants (a trap is a finding):
 *   - every frame handed out is within the limit (and not empty with NONEMPTY), and
 *     readable to its end (ASan: a large frame's buffer has exactly its size);
 *   - the stream never holds a frame buffer larger than the limit;
 *   - nothing is lost or invented: the frames handed out (4 + length each) plus the
 *     bytes held (loom_stream_partial) are exactly the bytes fed, until an error;
 *   - re-sent through a second stream, the frames queue byte for byte as they came.
 * Everything is freed per input.
 * Seeds: corpus/stream/: two small frames, an empty frame, a 69 904-byte frame, a
 * length of 4 GiB, a frame cut in its header.
 */
#include "../../common/stream.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint32_t limits[4] = {0, 16, 70000, 64u << 20};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct loom_stream s, out;
    uint32_t lim;
    unsigned flags;
    size_t chunk, off, done = 0;
    int rc = 0;

    if (size < 2 || size > 300000)
        return 0;
    lim = limits[data[0] & 3];
    flags = (data[0] & 4) ? LOOM_STREAM_NONEMPTY : 0;
    chunk = data[1];
    data += 2;
    size -= 2;
    loom_stream_init(&s, -1, lim, 0, flags);
    loom_stream_init(&out, -1, lim, (size_t)1 << 30, 0);
    for (off = 0; off < size && rc >= 0;) {
        size_t want = chunk ? chunk : size - off;
        long took;
        int got = 0;
        const uint8_t *p;
        size_t len;

        if (want > size - off)
            want = size - off;
        took = loom_stream_feed(&s, data + off, want);
        if (took < 0)
            break;
        off += (size_t)took;
        if (s.big && s.big_len > lim)
            __builtin_trap();
        while ((rc = loom_stream_next(&s, &p, &len)) == 1) {
            volatile uint8_t sink = 0;
            struct iovec iov = {.iov_base = (void *)p, .iov_len = len};
            got++;
            if (len > lim || (len == 0 && flags))
                __builtin_trap();
            for (size_t i = 0; i < len; i++)
                sink ^= p[i];
            (void)sink;
            done += 4 + len;
            if (loom_stream_queue(&out, &iov, 1, false) < 0)
                __builtin_trap();
        }
        if (rc == 0 && done + loom_stream_partial(&s) != off)
            __builtin_trap();
        if (rc == 0 && took == 0 && !got)
            __builtin_trap(); /* the stream took nothing and handed out nothing: stuck */
    }
    /* what was handed out, queued again, is the prefix of the input */
    {
        size_t pos = 0;
        for (struct loom_stream_msg *m = out.qhead; m; m = m->next) {
            if (pos + m->len > size || memcmp(m->data, data + pos, m->len) != 0)
                __builtin_trap();
            pos += m->len;
        }
        if (pos != done || out.queued != done)
            __builtin_trap();
    }
    loom_stream_free(&s, 0);
    loom_stream_free(&out, 0);
    return 0;
}
