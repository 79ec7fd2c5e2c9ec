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
 * Notes:
 *   - Levels match enum psrv_log_level numerically, so a psrv log callback
 *     can forward its level unchanged.
 *   - Lines longer than LOOM_LOG_LINE_MAX are truncated (marked with "...").
 *   - The plugin will install a sink that calls Slurm's logger.
 */
#ifndef LOOM_LOG_H
#define LOOM_LOG_H

#include <stdarg.h>

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

/* "error", "warn", "info", "debug", "trace" or a digit 0-4 -> level;
 * returns -EINVAL for anything else. */
int loom_log_level_parse(const char *s);
const char *loom_log_level_name(enum loom_log_level level);

/* The default sink, exported so custom sinks can chain to it. */
void loom_log_stderr_sink(void *arg, enum loom_log_level level, const char *ident,
                          const char *line);

#endif /* LOOM_LOG_H */
