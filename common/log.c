/* log.c - leveled logging with a pluggable sink.
 *
 * Contract: see log.h.  The stderr sink builds the whole line first and
 * writes it with one write() so that it is never interleaved with output
 * of other processes sharing the same stderr.  loom_vlogf escapes every
 * line (loom_log_escape) before any sink sees it.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "fdio.h"
#include "log.h"

static const char *const level_names[] = {"error", "warn", "info", "debug", "trace"};

void loom_log_init(struct loom_log *lg, const char *ident, enum loom_log_level level)
{
    lg->level = level;
    lg->sink = NULL;
    lg->sink_arg = NULL;
    lg->ident = ident;
}

void loom_log_set_sink(struct loom_log *lg, loom_log_sink_f sink, void *arg)
{
    lg->sink = sink;
    lg->sink_arg = arg;
}

const char *loom_log_level_name(enum loom_log_level level)
{
    if ((int)level < 0 || (int)level > LOOM_LOG_TRACE)
        return "?";
    return level_names[level];
}

int loom_log_level_parse(const char *s)
{
    if (!s)
        return -EINVAL;
    if (s[0] >= '0' && s[0] <= '4' && s[1] == '\0')
        return s[0] - '0';
    for (int i = 0; i <= LOOM_LOG_TRACE; i++)
        if (strcasecmp(s, level_names[i]) == 0)
            return i;
    if (strcasecmp(s, "warning") == 0)
        return LOOM_LOG_WARN;
    return -EINVAL;
}

/* Length of the well-formed UTF-8 sequence at p (2-4), or 0. */
static size_t utf8_seq(const unsigned char *p)
{
    unsigned char c = p[0];
    size_t n;
    unsigned char lo = 0x80, hi = 0xbf; /* range of the second byte */

    if (c >= 0xc2 && c <= 0xdf)
        n = 2;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4;
    else
        return 0;
    if (c == 0xe0)
        lo = 0xa0; /* overlong */
    else if (c == 0xed)
        hi = 0x9f; /* surrogates */
    else if (c == 0xf0)
        lo = 0x90; /* overlong */
    else if (c == 0xf4)
        hi = 0x8f; /* above U+10FFFF */
    if (p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xbf)
            return 0;
    return n;
}

/* loom_log_escape; *all: whether the whole of src fit. */
static size_t escape(char *dst, size_t dstlen, const char *src, int *all)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)src;
    size_t o = 0;

    *all = 1;
    if (dstlen == 0) {
        *all = !*src;
        return 0;
    }
    while (*p) {
        size_t n = 1, out;
        int esc;
        if (*p < 0x20 || *p == 0x7f) {
            esc = 1;
        } else if (*p < 0x80) {
            esc = 0;
        } else if ((n = utf8_seq(p)) == 0) {
            n = 1; /* a stray byte */
            esc = 1;
        } else {
            esc = n == 2 && p[0] == 0xc2 && p[1] < 0xa0; /* C1 control */
        }
        out = esc ? 4 * n : n;
        if (o + out >= dstlen) {
            *all = 0;
            break;
        }
        for (size_t i = 0; i < n; i++) {
            if (esc) {
                dst[o++] = '\\';
                dst[o++] = 'x';
                dst[o++] = hex[p[i] >> 4];
                dst[o++] = hex[p[i] & 15];
            } else {
                dst[o++] = (char)p[i];
            }
        }
        p += n;
    }
    dst[o] = '\0';
    return o;
}

size_t loom_log_escape(char *dst, size_t dstlen, const char *src)
{
    int all;

    return escape(dst, dstlen, src, &all);
}

void loom_ratelimit_init(struct loom_ratelimit *rl, unsigned burst, unsigned per_s)
{
    rl->burst = burst;
    rl->per_s = per_s;
    rl->milli = (uint64_t)burst * 1000;
    rl->last_ms = 0;
    rl->dropped = 0;
}

int loom_ratelimit_take(struct loom_ratelimit *rl, uint64_t now_ms)
{
    uint64_t cap = (uint64_t)rl->burst * 1000;

    if (now_ms > rl->last_ms) {
        uint64_t dt = now_ms - rl->last_ms;
        /* per_s tokens a second are per_s milli-tokens a millisecond */
        if (dt > cap) /* more than enough (and no overflow below) */
            dt = cap;
        rl->milli += dt * rl->per_s;
        if (rl->milli > cap)
            rl->milli = cap;
        rl->last_ms = now_ms;
    }
    if (rl->milli >= 1000) {
        rl->milli -= 1000;
        return 1;
    }
    rl->dropped++;
    return 0;
}

unsigned long loom_ratelimit_dropped(struct loom_ratelimit *rl)
{
    unsigned long n = rl->dropped;

    rl->dropped = 0;
    return n;
}

void loom_log_stderr_sink(void *arg, enum loom_log_level level, const char *ident,
                          const char *line)
{
    char buf[LOOM_LOG_LINE_MAX + 128];
    int n;

    if (ident)
        n = snprintf(buf, sizeof(buf), "%s: %s\n", ident, line);
    else
        n = snprintf(buf, sizeof(buf), "%s\n", line);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof(buf)) {
        n = sizeof(buf) - 1;
        buf[n - 1] = '\n';
    }
    (void)fdio_write_full(2, buf, (size_t)n);
}

void loom_vlogf(const struct loom_log *lg, enum loom_log_level level, const char *fmt,
                va_list ap)
{
    char raw[LOOM_LOG_LINE_MAX], line[LOOM_LOG_LINE_MAX];
    int n, all;

    if (!lg || level > lg->level)
        return;
    n = vsnprintf(raw, sizeof(raw), fmt, ap);
    if (n < 0)
        return;
    size_t len = escape(line, sizeof(line), raw, &all);
    if (!all || (size_t)n >= sizeof(raw)) {
        len = escape(line, sizeof(line) - 3, raw, &all);
        memcpy(line + len, "...", 4);
    }
    if (lg->sink)
        lg->sink(lg->sink_arg, level, lg->ident, line);
    else
        loom_log_stderr_sink(NULL, level, lg->ident, line);
}

void loom_logf(const struct loom_log *lg, enum loom_log_level level, const char *fmt, ...)
{
    va_list ap;
    int saved = errno;

    va_start(ap, fmt);
    loom_vlogf(lg, level, fmt, ap);
    va_end(ap);
    errno = saved;
}

int loom_errf(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    if (err && errlen) {
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -EINVAL;
}
