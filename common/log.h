/* log.h - leveled logging with a pluggable sink, no global state.
 *
 * Contract:
 *   A struct loom_log is a small value owned by its user (the launcher's
 *   main, the plugin's agent): a threshold level, a sink and an ident.
 *   loom_logf() formats one line (no trailing newline needed) and hands it
 *   to the sink when level <= threshold.  The default sink (sink == NULL)
 *   writes "ident: line\n" to stderr with a single write(), so lines from
 *   concurrent writers do not interleave.
 *
 *   Every line reaches its sink escaped (loom_log_escape): text that came
 *   from a task, another user or the network (abort messages, command names,
 *   job ids, host names) can neither start a line of its own nor send escape
 *   sequences to a terminal or a log reader.  This holds for every sink, so
 *   a host logs such text through loom_logf and the whole class is closed.
 *
 * Notes:
 *   - Levels match enum psrv_log_level numerically, so a psrv log callback
 *     can forward its level unchanged.
 *   - Lines longer than LOOM_LOG_LINE_MAX are truncated (marked with "...").
 *   - The plugin installs sinks that call Slurm's logger (plugin/mpi_loom.c).
 *   - struct loom_ratelimit is a token bucket for a sink that a hostile
 *     party can make busy (a root daemon's log): a burst, then a steady rate,
 *     and a count of what it dropped for the next line that passes.
 */
#ifndef LOOM_LOG_H
#define LOOM_LOG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

enum loom_log_level {
    LOOM_LOG_ERROR = 0,
    LOOM_LOG_WARN = 1,
    LOOM_LOG_INFO = 2,
    LOOM_LOG_DEBUG = 3,
    LOOM_LOG_TRACE = 4,
};

#define LOOM_LOG_LINE_MAX 2048

typedef void (*loom_log_sink_f)(void *arg, enum loom_log_level level, const char *ident,
                                const char *line);

struct loom_log {
    enum loom_log_level level; /* lines above this level are dropped */
    loom_log_sink_f sink;      /* NULL: stderr */
    void *sink_arg;
    const char *ident; /* prefix, e.g. "mpiexec"; may be NULL */
};

void loom_log_init(struct loom_log *lg, const char *ident, enum loom_log_level level);
void loom_log_set_sink(struct loom_log *lg, loom_log_sink_f sink, void *arg);

#if defined(__GNUC__)
#define LOOM_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define LOOM_PRINTF(a, b)
#endif

void loom_logf(const struct loom_log *lg, enum loom_log_level level, const char *fmt, ...)
    LOOM_PRINTF(3, 4);
void loom_vlogf(const struct loom_log *lg, enum loom_log_level level, const char *fmt,
                va_list ap);

/* An error message for a caller's buffer: formats into err (errlen bytes, when
 * err is not NULL and errlen > 0) and returns -EINVAL, so a parser can
 * `return loom_errf(err, errlen, "...", ...)`. */
int loom_errf(char *err, size_t errlen, const char *fmt, ...) LOOM_PRINTF(3, 4);

/* "error", "warn", "info", "debug", "trace" or a digit 0-4 -> level;
 * returns -EINVAL for anything else. */
int loom_log_level_parse(const char *s);
const char *loom_log_level_name(enum loom_log_level level);

/* Copy src into dst (dstlen bytes, always NUL-terminated when dstlen > 0)
 * with every byte that could act on a terminal or a log reader written as
 * \xNN: bytes below 0x20 (newline, carriage return, ESC, ...), DEL, bytes
 * that are not part of well-formed UTF-8 and the C1 controls U+0080-U+009F.
 * Valid UTF-8 text stays as it is; backslashes are kept, so escaping twice
 * changes nothing (a line may pass through several hosts).  An escape or a
 * character that does not fit is left out whole.  Returns the length of dst. */
size_t loom_log_escape(char *dst, size_t dstlen, const char *src);

struct loom_ratelimit {
    unsigned burst;   /* lines let through at once */
    unsigned per_s;   /* lines a second after the burst */
    uint64_t milli;   /* tokens x 1000 */
    uint64_t last_ms; /* time of the last refill */
    unsigned long dropped;
};

void loom_ratelimit_init(struct loom_ratelimit *rl, unsigned burst, unsigned per_s);
/* 1: log this line; 0: drop it (counted).  now_ms: a monotonic clock.  Not
 * thread safe: the caller serializes. */
int loom_ratelimit_take(struct loom_ratelimit *rl, uint64_t now_ms);
/* Lines dropped since the last call (then reset to 0). */
unsigned long loom_ratelimit_dropped(struct loom_ratelimit *rl);

/* The default sink, exported so custom sinks can chain to it. */
void loom_log_stderr_sink(void *arg, enum loom_log_level level, const char *ident,
                          const char *line);

#endif /* LOOM_LOG_H */
