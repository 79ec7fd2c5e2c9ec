/* fuzz_log_escape.c - libFuzzer target: the escaping every host log line goes
 * through (common/log.c loom_log_escape, loom_logf), fed task- and peer-provided text.
 *
 * fuzz-sources: common/log.c common/fdio.c
 * fuzz-cflags: -Icommon
 *
 * Contract: input = 1 byte of output size (1 + value) then the text (NUL-terminated
 * copy).  loom_log_escape into an exact-size heap buffer must return the length it
 * wrote, below the size, NUL-terminated; the output has no byte below 0x20, no DEL,
 * no C1 control and only well-formed UTF-8; escaping the output again changes nothing
 * (lines pass through several hosts).  A whole line through loom_logf reaches a sink
 * under the same rules, below LOOM_LOG_LINE_MAX.
 * Seeds: corpus/log_escape/ (abort messages with newlines, ESC and OSC sequences,
 * C1 bytes, truncated and overlong UTF-8).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Traps unless s is clean: no control bytes, only well-formed UTF-8 without C1. */
static void check_clean(const unsigned char *s, size_t len)
{
    for (size_t i = 0; i < len;) {
        unsigned char c = s[i];
        size_t n = 1;
        if (c < 0x20 || c == 0x7f)
            __builtin_trap();
        if (c >= 0x80) {
            if (c >= 0xc2 && c <= 0xdf)
                n = 2;
            else if (c >= 0xe0 && c <= 0xef)
                n = 3;
            else if (c >= 0xf0 && c <= 0xf4)
                n = 4;
            else
                __builtin_trap();
            if (i + n > len)
                __builtin_trap();
            for (size_t k = 1; k < n; k++)
                if (s[i + k] < 0x80 || s[i + k] > 0xbf)
                    __builtin_trap();
            if (c == 0xc2 && s[i + 1] < 0xa0)
                __builtin_trap(); /* C1 */
        }
        i += n;
    }
}

static size_t sink_calls;

static void sink(void *arg, enum loom_log_level level, const char *ident,
                 const char *line)
{
    size_t len = strlen(line);

    (void)arg;
    (void)level;
    (void)ident;
    if (len >= LOOM_LOG_LINE_MAX)
        __builtin_trap();
    check_clean((const unsigned char *)line, len);
    sink_calls++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 16384)
        return 0;
    size_t outlen = 1 + (size_t)data[0] * 8;
    char *in = malloc(size);
    char *out = malloc(outlen);
    char *again = malloc(outlen);
    if (!in || !out || !again)
        goto done;
    memcpy(in, data + 1, size - 1);
    in[size - 1] = '\0';

    size_t n = loom_log_escape(out, outlen, in);
    if (n >= outlen || out[n] != '\0' || strlen(out) != n)
        __builtin_trap();
    check_clean((const unsigned char *)out, n);
    /* idempotent: the escaped text fits its own size and comes back unchanged */
    size_t m = loom_log_escape(again, outlen, out);
    if (m != n || memcmp(again, out, n + 1) != 0)
        __builtin_trap();

    struct loom_log lg;
    loom_log_init(&lg, "fuzz", LOOM_LOG_TRACE);
    loom_log_set_sink(&lg, sink, NULL);
    sink_calls = 0;
    loom_logf(&lg, LOOM_LOG_ERROR, "abort: %s", in);
    if (sink_calls != 1)
        __builtin_trap();
done:
    free(in);
    free(out);
    free(again);
    return 0;
}
