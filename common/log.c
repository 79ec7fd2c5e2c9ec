/* log.c - leveled logging with a pluggable sink.
 *
 * Contract: see log.h.  The stderr sink builds the whole line first and
 * writes it with one write() so that it is never interleaved with output
 * of other processes sharing the same stderr.
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
    char line[LOOM_LOG_LINE_MAX];
    int n;

    if (!lg || level > lg->level)
        return;
    n = vsnprintf(line, sizeof(line), fmt, ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof(line))
        memcpy(line + sizeof(line) - 4, "...", 4);
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
