/* pmi_wire.c - the PMI-1 and PMI-2 wire codec: framing, parsing, building.
 *
 * Contract: see pmi_wire.h.  Pure functions over caller buffers; no I/O, no
 * global state.  Parsers copy their input into one owned block and cut it in
 * place, so a struct pmi_msg costs two allocations whatever its size.
 *
 * Notes:
 *   - Framing is strict about things that can never become a request (a
 *     line that does not begin like "cmd=" or "mcmd=", a NUL byte in a PMI-1
 *     line, a malformed PMI-2 length field) so that garbage on a PMI fd is
 *     reported at once instead of after 64 KiB.
 *   - PMI-2 parsing stops at the first thing that is not a complete
 *     "key=value;" pair and ignores the rest: MPICH <= 4.0's simple2pmi
 *     counted its own 6-byte length field into the body length and sent 6
 *     uninitialised bytes after the last ';'.  The "cmd=" pair itself must
 *     be complete.
 *   - ";;" inside a PMI-2 value is a literal ';' (Slurm's libpmi2 and the
 *     original simple2pmi escape that way).  Keys never contain ';' or '='.
 *
 * Caveats:
 *   - A value that ends in ';' followed by trailing junk that starts with
 *     ';' is ambiguous; we read it as an escaped ';'.  Only the broken
 *     MPICH <= 4.0 writer produces junk, and its values are hex.
 *
 * See also: doc/wire.md.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmi_wire.h"

/* ---- framing ---------------------------------------------------------- */

/* Could buf[0..len) still be the beginning of a PMI-1 line?  Leading spaces
 * are skipped; what follows must agree with "cmd=" or "mcmd=" as far as it
 * goes. */
static bool v1_prefix_ok(const char *buf, size_t len)
{
    size_t i = 0;

    while (i < len && buf[i] == ' ')
        i++;
    const char *p = buf + i;
    size_t n = len - i;
    if (n == 0)
        return true;
    if (p[0] == '\n')
        return true; /* empty line: the parser reports it */
    size_t c1 = n < 4 ? n : 4, c2 = n < 5 ? n : 5;
    return memcmp(p, "cmd=", c1) == 0 || memcmp(p, "mcmd=", c2) == 0;
}

static bool starts_with_mcmd(const char *buf, size_t len)
{
    size_t i = 0;

    while (i < len && buf[i] == ' ')
        i++;
    return len - i >= 5 && memcmp(buf + i, "mcmd=", 5) == 0;
}

static int frame_v1(const char *buf, size_t len, size_t *frame_len, const char **body,
                    size_t *body_len)
{
    size_t lim = len < PMI_WIRE_MAX_LINE ? len : PMI_WIRE_MAX_LINE;

    if (!v1_prefix_ok(buf, lim))
        return -EPROTO;
    const char *nl = memchr(buf, '\n', lim);
    if (memchr(buf, '\0', nl ? (size_t)(nl - buf) : lim))
        return -EPROTO;
    if (!nl)
        return len >= PMI_WIRE_MAX_LINE ? -EMSGSIZE : 0;

    size_t end = (size_t)(nl - buf) + 1; /* just after the first '\n' */
    if (starts_with_mcmd(buf, end - 1)) {
        /* spawn block: lines up to and including one that is "endcmd" */
        for (;;) {
            const char *line = buf + end;
            size_t left = lim - end;
            nl = memchr(line, '\n', left);
            if (memchr(line, '\0', nl ? (size_t)(nl - line) : left))
                return -EPROTO;
            if (!nl)
                return len >= PMI_WIRE_MAX_LINE ? -EMSGSIZE : 0;
            size_t llen = (size_t)(nl - line);
            end += llen + 1;
            if (llen == 6 && memcmp(line, "endcmd", 6) == 0)
                break;
        }
    }
    *frame_len = end;
    *body = buf;
    *body_len = end - 1; /* without the final '\n' */
    return 1;
}

/* Decode the 6-byte PMI-2 length field: digits, optionally surrounded by
 * spaces (Slurm pads on the right, MPICH >= 4.1 on the left), zeros allowed. */
static int v2_length(const char *f, size_t *out)
{
    size_t i = 0, val = 0;
    int ndig = 0;

    while (i < PMI_WIRE_LENFIELD && f[i] == ' ')
        i++;
    while (i < PMI_WIRE_LENFIELD && f[i] >= '0' && f[i] <= '9') {
        val = val * 10 + (size_t)(f[i] - '0');
        ndig++;
        i++;
    }
    while (i < PMI_WIRE_LENFIELD && f[i] == ' ')
        i++;
    if (i != PMI_WIRE_LENFIELD || ndig == 0 || val == 0)
        return -EPROTO;
    if (val > PMI_WIRE_MAX_BODY)
        return -EMSGSIZE;
    *out = val;
    return 0;
}

int pmi_frame_next(enum pmi_version v, const char *buf, size_t len, size_t *frame_len,
                   const char **body, size_t *body_len)
{
    if (!buf && len > 0)
        return -EINVAL;
    if (v != PMI_V2)
        return frame_v1(buf, len, frame_len, body, body_len);

    /* Reject a bad length field as soon as the bytes seen so far prove it. */
    size_t n = len < PMI_WIRE_LENFIELD ? len : PMI_WIRE_LENFIELD;
    for (size_t i = 0; i < n; i++) {
        if (buf[i] != ' ' && (buf[i] < '0' || buf[i] > '9'))
            return -EPROTO;
    }
    if (len < PMI_WIRE_LENFIELD)
        return 0;
    size_t blen;
    int rc = v2_length(buf, &blen);
    if (rc < 0)
        return rc;
    if (len - PMI_WIRE_LENFIELD < blen)
        return 0;
    *frame_len = PMI_WIRE_LENFIELD + blen;
    *body = buf + PMI_WIRE_LENFIELD;
    *body_len = blen;
    return 1;
}

/* ---- parsed messages -------------------------------------------------- */

static void msg_clear(struct pmi_msg *m)
{
    m->n = 0;
    m->kv = NULL;
    m->store = NULL;
}

void pmi_msg_free(struct pmi_msg *m)
{
    if (!m)
        return;
    free(m->kv);
    free(m->store);
    msg_clear(m);
}

/* Copy s into m->store and allocate room for up to max_pairs pairs. */
static int msg_alloc(struct pmi_msg *m, const char *s, size_t len, size_t max_pairs)
{
    msg_clear(m);
    if (max_pairs > INT_MAX)
        return -EMSGSIZE;
    m->store = malloc(len + 1);
    m->kv = calloc(max_pairs ? max_pairs : 1, sizeof(*m->kv));
    if (!m->store || !m->kv) {
        pmi_msg_free(m);
        return -ENOMEM;
    }
    memcpy(m->store, s, len);
    m->store[len] = '\0';
    return 0;
}

static size_t count_char(const char *s, size_t len, char c)
{
    size_t n = 0;

    for (size_t i = 0; i < len; i++)
        n += s[i] == c;
    return n;
}

/* Error before anything was allocated: leave m empty (safe to free). */
static int reject(struct pmi_msg *m, int rc)
{
    msg_clear(m);
    return rc;
}

/* Error after msg_alloc: release and leave m empty. */
static int fail(struct pmi_msg *m, int rc)
{
    pmi_msg_free(m);
    return rc;
}

/* Spawn block: one "key=value" per line (value up to the end of the line),
 * first line "mcmd=...", last line "endcmd".  Empty lines are skipped. */
static int parse_mcmd(struct pmi_msg *m, char *p, char *end)
{
    bool ended = false;

    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *eol = nl ? nl : end;
        *eol = '\0';
        if (ended) {
            if (eol != p)
                return -EPROTO; /* something after endcmd */
        } else if (strcmp(p, "endcmd") == 0) {
            ended = true;
        } else if (eol != p) {
            char *eq = strchr(p, '=');
            if (!eq || eq == p)
                return -EPROTO;
            *eq = '\0';
            m->kv[m->n].key = p;
            m->kv[m->n].val = eq + 1;
            m->n++;
        }
        p = eol + 1;
    }
    return ended ? 0 : -EPROTO;
}

int pmi_msg_parse_v1(struct pmi_msg *m, const char *s, size_t len)
{
    int rc;

    if (!m || (!s && len > 0))
        return -EINVAL;
    if (len > PMI_WIRE_MAX_LINE)
        return reject(m, -EMSGSIZE);
    if (memchr(s, '\0', len))
        return reject(m, -EPROTO);
    if (len > 0 && s[len - 1] == '\n')
        len--;
    if ((rc = msg_alloc(m, s, len, count_char(s, len, '=') + 1)) < 0)
        return rc;

    char *p = m->store, *end = m->store + len;
    while (p < end && *p == ' ')
        p++;
    if ((size_t)(end - p) >= 5 && memcmp(p, "mcmd=", 5) == 0) {
        if ((rc = parse_mcmd(m, p, end)) < 0)
            return fail(m, rc);
        return 0;
    }
    if (memchr(p, '\n', (size_t)(end - p)))
        return fail(m, -EPROTO);
    while (p < end) {
        char *tok = p;
        while (p < end && *p != ' ')
            p++;
        *p = '\0'; /* p == end writes the terminator already there */
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok)
            return fail(m, -EPROTO);
        *eq = '\0';
        m->kv[m->n].key = tok;
        m->kv[m->n].val = eq + 1;
        m->n++;
        p++;
        while (p < end && *p == ' ')
            p++;
    }
    if (m->n == 0 || strcmp(m->kv[0].key, "cmd") != 0)
        return fail(m, -EPROTO);
    return 0;
}

int pmi_msg_parse_v2(struct pmi_msg *m, const char *s, size_t len)
{
    int rc;

    if (!m || (!s && len > 0))
        return -EINVAL;
    if (len == 0 || len < 4 || memcmp(s, "cmd=", 4) != 0)
        return reject(m, -EPROTO);
    if (len > PMI_WIRE_MAX_BODY)
        return reject(m, -EPROTO); /* no length field can announce it */
    if ((rc = msg_alloc(m, s, len, count_char(s, len, '='))) < 0)
        return rc;

    /* Values are unescaped in place: w trails r. */
    char *r = m->store, *end = m->store + len;
    while (r < end) {
        char *key = r;
        while (r < end && *r != '=' && *r != ';' && *r != '\0')
            r++;
        if (r == end || *r != '=' || r == key)
            break; /* not a pair: trailing junk */
        char *eq = r++;
        char *val = r, *w = r;
        bool done = false;
        while (r < end && *r != '\0') {
            if (*r == ';') {
                if (r + 1 < end && r[1] == ';') {
                    *w++ = ';';
                    r += 2;
                    continue;
                }
                done = true;
                break;
            }
            *w++ = *r++;
        }
        if (!done)
            break; /* unterminated or NUL inside: trailing junk */
        *eq = '\0';
        *w = '\0';
        r++; /* past the terminating ';' */
        m->kv[m->n].key = key;
        m->kv[m->n].val = val;
        m->n++;
    }
    if (m->n == 0)
        return fail(m, -EPROTO); /* "cmd=" pair incomplete */
    return 0;
}

const char *pmi_msg_cmd(const struct pmi_msg *m)
{
    return m && m->n > 0 ? m->kv[0].val : "";
}

const char *pmi_msg_next(const struct pmi_msg *m, const char *key, int *pos)
{
    if (!m || !key || !pos || *pos < 0)
        return NULL;
    for (int i = *pos; i < m->n; i++) {
        if (strcmp(m->kv[i].key, key) == 0) {
            *pos = i + 1;
            return m->kv[i].val;
        }
    }
    *pos = m->n;
    return NULL;
}

const char *pmi_msg_get(const struct pmi_msg *m, const char *key)
{
    int pos = 0;

    return pmi_msg_next(m, key, &pos);
}

int pmi_msg_get_int(const struct pmi_msg *m, const char *key, int *out)
{
    const char *v = pmi_msg_get(m, key);
    char *e;

    if (!v)
        return -ENOENT;
    if (*v == '\0' || *v == ' ')
        return -EINVAL;
    errno = 0;
    long l = strtol(v, &e, 10);
    if (errno != 0 || *e != '\0' || l < INT_MIN || l > INT_MAX)
        return -EINVAL;
    *out = (int)l;
    return 0;
}

int pmi_msg_get_bool(const struct pmi_msg *m, const char *key, bool *out)
{
    static const char *const yes[] = {"TRUE", "true", "yes", "1"};
    static const char *const no[] = {"FALSE", "false", "no", "0"};
    const char *v = pmi_msg_get(m, key);

    if (!v)
        return -ENOENT;
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        if (strcmp(v, yes[i]) == 0) {
            *out = true;
            return 0;
        }
        if (strcmp(v, no[i]) == 0) {
            *out = false;
            return 0;
        }
    }
    return -EINVAL;
}

/* ---- builder ---------------------------------------------------------- */

static void out_reserve(struct pmi_out *o, size_t more)
{
    if (o->err)
        return;
    if (o->len + more + 1 <= o->cap)
        return;
    size_t cap = o->cap ? o->cap : 256;
    while (cap < o->len + more + 1)
        cap *= 2;
    char *b = realloc(o->buf, cap);
    if (!b) {
        o->err = -ENOMEM;
        return;
    }
    o->buf = b;
    o->cap = cap;
}

static void out_put(struct pmi_out *o, const char *s, size_t n)
{
    out_reserve(o, n);
    if (o->err)
        return;
    memcpy(o->buf + o->len, s, n);
    o->len += n;
    o->buf[o->len] = '\0';
}

static bool key_ok(enum pmi_version v, const char *key)
{
    if (!key || !*key)
        return false;
    const char *bad = v == PMI_V2 ? "=;" : "= \n";
    return strpbrk(key, bad) == NULL;
}

/* Append a value: PMI-2 doubles ';', PMI-1 turns ' ' and '\n' into '_'.
 * Runs of ordinary bytes are copied in one piece: replies carrying 1 KiB
 * values are on the fence's critical path. */
static void out_value(struct pmi_out *o, const char *val)
{
    const char *special = o->v == PMI_V2 ? ";" : " \n";
    const char *p = val;
    while (*p && !o->err) {
        size_t run = strcspn(p, special);
        if (run)
            out_put(o, p, run);
        p += run;
        if (!*p)
            break;
        if (o->v == PMI_V2)
            out_put(o, ";;", 2);
        else
            out_put(o, "_", 1);
        p++;
    }
}

static void out_pair(struct pmi_out *o, const char *key, const char *val)
{
    if (o->err)
        return;
    if (!key_ok(o->v, key) || !val) {
        o->err = -EINVAL;
        return;
    }
    if (o->v == PMI_V2) {
        out_put(o, key, strlen(key));
        out_put(o, "=", 1);
        out_value(o, val);
        out_put(o, ";", 1);
    } else {
        if (o->len > 0)
            out_put(o, " ", 1);
        out_put(o, key, strlen(key));
        out_put(o, "=", 1);
        out_value(o, val);
    }
}

void pmi_out_begin(struct pmi_out *o, enum pmi_version v, const char *cmd)
{
    o->v = v;
    o->buf = NULL;
    o->len = o->cap = 0;
    o->err = 0;
    if (v != PMI_V1 && v != PMI_V2) {
        o->err = -EINVAL;
        return;
    }
    if (v == PMI_V2)
        out_put(o, "      ", PMI_WIRE_LENFIELD);
    out_pair(o, "cmd", cmd ? cmd : "");
    if (!o->err && (!cmd || !*cmd))
        o->err = -EINVAL;
}

void pmi_out_add(struct pmi_out *o, const char *key, const char *val)
{
    out_pair(o, key, val);
}

/* Decimal digits of u ending just before end (no terminator); returns the first.
 * Every reply carries integers (rc=, the PMI-2 length prefix); this keeps printf
 * off the server's reply path. */
static char *ulong_digits(char *end, unsigned long u)
{
    do {
        *--end = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    return end;
}

void pmi_out_addint(struct pmi_out *o, const char *key, long v)
{
    char b[24];
    b[sizeof(b) - 1] = '\0';
    char *p = ulong_digits(b + sizeof(b) - 1, v < 0 ? 0UL - (unsigned long)v : (unsigned long)v);
    if (v < 0)
        *--p = '-';
    out_pair(o, key, p);
}

void pmi_out_addf(struct pmi_out *o, const char *key, const char *fmt, ...)
{
    char small[128];
    va_list ap;

    if (o->err)
        return;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof(small), fmt, ap);
    va_end(ap);
    if (n < 0) {
        o->err = -EINVAL;
        return;
    }
    if ((size_t)n < sizeof(small)) {
        out_pair(o, key, small);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        o->err = -ENOMEM;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    out_pair(o, key, big);
    free(big);
}

int pmi_out_end(struct pmi_out *o)
{
    if (o->err)
        return o->err;
    if (o->v == PMI_V2) {
        size_t body = o->len - PMI_WIRE_LENFIELD;
        if (body > PMI_WIRE_MAX_BODY)
            return o->err = -EMSGSIZE;
        char f[PMI_WIRE_LENFIELD];
        char *d = ulong_digits(f + sizeof(f), body); /* fits: body <= MAX_BODY */
        size_t nd = (size_t)(f + sizeof(f) - d);
        /* left-justified, space padded, as Slurm writes it */
        memcpy(o->buf, d, nd);
        memset(o->buf + nd, ' ', PMI_WIRE_LENFIELD - nd);
    } else {
        if (o->len + 1 > PMI_WIRE_MAX_LINE)
            return o->err = -EMSGSIZE;
        out_put(o, "\n", 1);
    }
    return o->err;
}

void pmi_out_free(struct pmi_out *o)
{
    if (!o)
        return;
    free(o->buf);
    o->buf = NULL;
    o->len = o->cap = 0;
}
