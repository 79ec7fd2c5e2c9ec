/* pmap.c - the one parser of PMI_process_mapping.
 *
 * Contract: loom_pmap_parse() in pmap.h.  Turns MPICH's mapping string into
 * the node index of every rank: libpmi uses it for PMI_Get_clique_*, libmpi
 * (mpi/core/pmap.c compiles this file in) for its node map.
 *
 * Notes:
 *   Grammar (doc/clients.md, "PMI_process_mapping"):
 *     mapping = "(" "vector" "," item { "," item } ")"
 *     item    = block | "[" block { "," block } "]x" number
 *     block   = number | "(" number "," number "," number ")"
 *   (X,Y,Z): nodes X..X+Y-1 each receive Z consecutive ranks; a bare X is
 *   (X,1,1).  Whitespace is skipped; numbers use base prefixes (0x..).
 *   When the list ends before every rank has a node, assignment resumes at
 *   the first block whose start node is 0 (the legacy wrap-around rule), so
 *   "(vector,(0,4,1))" over 8 ranks is cyclic over 4 nodes.  A longer list
 *   than needed is fine.  Non-zero start nodes and several blocks are
 *   handled (Open MPI once got these wrong, ompi-release PR 309).
 *
 *   Cost is O(length + blocks + size) whatever the server sends.  At most
 *   PMAP_MAX_BLOCKS blocks (counted after [..]xN expansion, empty ones too).
 *   A block that places no rank (Y or Z is 0) is dropped at parse time, so
 *   every block the walk visits places a rank or fails the parse: otherwise
 *   "[(0,0,0)]x9500,0" made each rank a pass over 9501 blocks.  The restart
 *   point is remembered while parsing (an empty first start-0 block restarts
 *   at the block after it, as the walk over it did).  An empty block whose
 *   nodes would pass INT_MAX is kept: reaching it is an error, as before.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pmap.h"

#define PMAP_MAX_BLOCKS (1 << 20) /* bound on expanded [..]xN repeats */

struct pmap_block {
    long start, count, ppn;
};

struct pmap {
    const char *p;
    struct pmap_block *b;
    size_t n, cap; /* kept blocks */
    size_t seen;   /* blocks parsed, dropped ones too (<= PMAP_MAX_BLOCKS) */
    size_t wrap;   /* restart index (first start-0 block); SIZE_MAX: none yet */
    long ranks;    /* ranks covered so far (saturating) */
    int size;
};

static void ws(struct pmap *m)
{
    while (isspace((unsigned char)*m->p))
        m->p++;
}

static int eat(struct pmap *m, char ch)
{
    ws(m);
    if (*m->p != ch)
        return -EINVAL;
    m->p++;
    return 0;
}

static int number(struct pmap *m, long *out)
{
    char *end;

    ws(m);
    errno = 0;
    long v = strtol(m->p, &end, 0);
    if (end == m->p || errno || v < 0 || v > INT_MAX)
        return -EINVAL;
    m->p = end;
    *out = v;
    return 0;
}

static int push(struct pmap *m, struct pmap_block blk)
{
    if (m->seen >= PMAP_MAX_BLOCKS)
        return -E2BIG;
    m->seen++;
    if (blk.start == 0 && m->wrap == SIZE_MAX)
        m->wrap = m->n; /* this block, or the next kept one if it is dropped */
    /* Places no rank and cannot fail the walk: drop it. */
    if (blk.count == 0 || (blk.ppn == 0 && blk.start + blk.count - 1 <= INT_MAX))
        return 0;
    if (m->n == m->cap) {
        size_t ncap = m->cap ? m->cap * 2 : 16;
        if (ncap > PMAP_MAX_BLOCKS)
            return -E2BIG;
        struct pmap_block *nb = realloc(m->b, ncap * sizeof(*nb));
        if (!nb)
            return -ENOMEM;
        m->b = nb;
        m->cap = ncap;
    }
    m->b[m->n++] = blk;
    long add = blk.count * blk.ppn; /* both <= INT_MAX: fits in 64 bits */
    m->ranks = m->ranks + add > LONG_MAX / 4 ? LONG_MAX / 4 : m->ranks + add;
    return 0;
}

static int block(struct pmap *m)
{
    struct pmap_block blk;
    int r;

    ws(m);
    if (*m->p == '(') {
        m->p++;
        if ((r = number(m, &blk.start)) < 0 || (r = eat(m, ',')) < 0 ||
            (r = number(m, &blk.count)) < 0 || (r = eat(m, ',')) < 0 ||
            (r = number(m, &blk.ppn)) < 0 || (r = eat(m, ')')) < 0)
            return r;
    } else {
        if ((r = number(m, &blk.start)) < 0)
            return r;
        blk.count = blk.ppn = 1;
    }
    return push(m, blk);
}

static int item(struct pmap *m)
{
    int r;

    ws(m);
    if (*m->p != '[')
        return block(m);
    m->p++;
    size_t first = m->n, seen_before = m->seen, wrap_before = m->wrap;
    long ranks_before = m->ranks;
    for (;;) {
        if ((r = block(m)) < 0)
            return r;
        ws(m);
        if (*m->p == ',') {
            m->p++;
            continue;
        }
        if ((r = eat(m, ']')) < 0)
            return r;
        break;
    }
    ws(m);
    if (*m->p != 'x')
        return -EINVAL;
    m->p++;
    long times;
    if ((r = number(m, &times)) < 0)
        return r;
    size_t last = m->n, dropped = (m->seen - seen_before) - (last - first);
    /* The bracketed blocks are there once; add times-1 more copies, but no
     * more than needed to cover every rank.  Dropped blocks count against
     * the cap in every copy; each pass adds >= 1 to seen, so this loop runs
     * at most PMAP_MAX_BLOCKS times in a whole parse.  Copies never move the
     * restart point (the first copy set it if the bracket has one). */
    for (long t = 1; t < times && m->ranks < m->size; t++) {
        if (dropped > PMAP_MAX_BLOCKS - m->seen)
            return -E2BIG;
        m->seen += dropped;
        for (size_t i = first; i < last; i++)
            if ((r = push(m, m->b[i])) < 0)
                return r;
    }
    if (times == 0) { /* "[...]x0": nothing */
        m->n = first;
        m->seen = seen_before;
        m->wrap = wrap_before;
        m->ranks = ranks_before;
    }
    return 0;
}

static int parse(struct pmap *m)
{
    int r;

    if ((r = eat(m, '(')) < 0)
        return r;
    ws(m);
    if (strncmp(m->p, "vector", 6) != 0)
        return -EINVAL;
    m->p += 6;
    for (;;) {
        ws(m);
        if (*m->p == ')') {
            m->p++;
            break;
        }
        if ((r = eat(m, ',')) < 0 || (r = item(m)) < 0)
            return r;
    }
    ws(m);
    return *m->p == '\0' ? 0 : -EINVAL;
}

int loom_pmap_parse(const char *s, int size, int *rank_node)
{
    struct pmap m = {.p = s, .size = size, .wrap = SIZE_MAX};
    int r;

    if (!s || size <= 0)
        return -EINVAL;
    r = parse(&m);
    if (r == 0 && m.n == 0)
        r = -EINVAL;
    if (r < 0)
        goto out;

    /* Every kept block places >= 1 rank or fails: at most size steps. */
    int assigned = 0;
    size_t i = 0;
    while (assigned < size) {
        if (i == m.n) {
            if (m.wrap >= m.n) { /* no restart point, or nothing placeable after it */
                r = -EINVAL;
                goto out;
            }
            i = m.wrap;
        }
        const struct pmap_block *b = &m.b[i++];
        if (b->count > 0 && b->start + b->count - 1 > INT_MAX) {
            r = -EINVAL;
            goto out;
        }
        for (long nd = 0; nd < b->count && assigned < size; nd++)
            for (long k = 0; k < b->ppn && assigned < size; k++)
                rank_node[assigned++] = (int)(b->start + nd);
    }
out:
    free(m.b);
    return r < 0 ? -EINVAL : 0;
}
