/* iofwd.c - assemble whole lines of rank output (see iofwd.h).
 *
 * Notes:
 *   - Without tagging and without a held partial line, the complete part of
 *     a chunk is appended in one copy; the common case (ranks printing whole
 *     lines) therefore costs one memcpy per read.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iofwd.h"

int iobuf_append(struct iobuf *b, const char *data, size_t len)
{
    if (len == 0)
        return 0;
    if (b->len + len > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + len)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p)
            return -ENOMEM;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, data, len);
    b->len += len;
    return 0;
}

void iobuf_free(struct iobuf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

static int put_tag(int rank, struct iobuf *out)
{
    char tag[32];
    int n = snprintf(tag, sizeof(tag), "[%d] ", rank);

    return iobuf_append(out, tag, (size_t)n);
}

/* Emit held partial + data[0..len) as one line (data ends with '\n' or is a
 * forced piece). */
static int emit(struct iofwd_stream *s, const char *data, size_t len, int tag,
                struct iobuf *out)
{
    if (tag && put_tag(s->rank, out) < 0)
        return -ENOMEM;
    if (iobuf_append(out, s->part.p, s->part.len) < 0)
        return -ENOMEM;
    s->part.len = 0;
    return iobuf_append(out, data, len);
}

int iofwd_feed(struct iofwd_stream *s, const char *data, size_t len, int tag,
               struct iobuf *out)
{
    const char *end = data + len;
    const char *p = data;

    if (!tag && s->part.len == 0) {
        /* Fast path: copy everything up to the last newline at once. */
        const char *last = NULL;
        for (const char *q = end; q > p; q--)
            if (q[-1] == '\n') {
                last = q;
                break;
            }
        if (last) {
            if (iobuf_append(out, p, (size_t)(last - p)) < 0)
                return -ENOMEM;
            p = last;
        }
    }
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            break;
        if (emit(s, p, (size_t)(nl + 1 - p), tag, out) < 0)
            return -ENOMEM;
        p = nl + 1;
    }
    if (p < end) {
        if (iobuf_append(&s->part, p, (size_t)(end - p)) < 0)
            return -ENOMEM;
        if (s->part.len >= IOFWD_MAX_PARTIAL) {
            if (emit(s, NULL, 0, tag, out) < 0)
                return -ENOMEM;
            if (tag && iobuf_append(out, "\n", 1) < 0)
                return -ENOMEM;
        }
    }
    return 0;
}

int iofwd_eof(struct iofwd_stream *s, int tag, struct iobuf *out)
{
    int rc = 0;

    if (s->part.len > 0) {
        rc = emit(s, NULL, 0, tag, out);
        if (rc == 0 && tag)
            rc = iobuf_append(out, "\n", 1);
    }
    iobuf_free(&s->part);
    return rc;
}
