/* iofwd.h - line assembly for forwarded rank output (no I/O inside).
 *
 * Contract:
 *   Each rank stream (stdout or stderr of one rank) has a struct
 *   iofwd_stream holding its unfinished last line.  iofwd_feed() appends to
 *   an output buffer only whole lines (each prefixed with "[rank] " when
 *   tagging), so whatever the launcher writes from that buffer never splits
 *   or interleaves lines of different ranks.  A line longer than
 *   IOFWD_MAX_PARTIAL without a newline is passed on in pieces (each piece
 *   tagged) rather than held without bound.  iofwd_eof() passes on the
 *   unfinished last line; when tagging it adds a newline so the next tag
 *   starts a line, otherwise the bytes are kept exactly.
 *
 * Notes: all functions return 0 or -ENOMEM.
 */
#ifndef LOOM_LAUNCHER_IOFWD_H
#define LOOM_LAUNCHER_IOFWD_H

#include <stddef.h>

#define IOFWD_MAX_PARTIAL (64 * 1024)

struct iobuf {
    char *p;
    size_t len, cap;
};

struct iofwd_stream {
    struct iobuf part; /* unfinished last line */
    int rank;
};

int iobuf_append(struct iobuf *b, const char *data, size_t len);
void iobuf_free(struct iobuf *b);

/* tag: prefix lines with "[rank] ". */
int iofwd_feed(struct iofwd_stream *s, const char *data, size_t len, int tag,
               struct iobuf *out);
int iofwd_eof(struct iofwd_stream *s, int tag, struct iobuf *out);

#endif /* LOOM_LAUNCHER_IOFWD_H */
