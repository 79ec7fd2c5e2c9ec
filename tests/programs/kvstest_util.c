/* kvstest_util.c - helpers shared by the PMI test programs (see kvstest_util.h). */
#include "kvstest_util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void usage(const char *prog, int maxval)
{
    fprintf(
        stderr,
        "usage: %s [-r ROUNDS] [-v VALBYTES] [-t] [-M]\n"
        "  -r N  rounds of put/fence/get-all (default 3)\n"
        "  -v N  value length in bytes, 8..%d (default 1000)\n"
        "  -t    rank 0 prints per-phase medians (init_us put_median_us ...)\n"
        "  -M    singleton-tolerant: do not require a job id nor PMI_process_mapping\n",
        prog, maxval);
    exit(2);
}

static int intarg(const char *s, int lo, int hi, const char *prog, int maxval)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < lo || v > hi)
        usage(prog, maxval);
    return (int)v;
}

void kvt_parse(struct kvt_opts *o, int argc, char **argv, const char *prog, int maxval)
{
    int c;
    o->rounds = 3;
    o->vallen = 1000;
    o->timing = 0;
    o->nomapping = 0;
    if (o->vallen > maxval)
        o->vallen = maxval;
    while ((c = getopt(argc, argv, "r:v:tMh")) != -1) {
        switch (c) {
        case 'r':
            o->rounds = intarg(optarg, 1, 100000, prog, maxval);
            break;
        case 'v':
            o->vallen = intarg(optarg, 8, maxval, prog, maxval);
            break;
        case 't':
            o->timing = 1;
            break;
        case 'M':
            o->nomapping = 1;
            break;
        default:
            usage(prog, maxval);
        }
    }
    if (optind != argc)
        usage(prog, maxval);
}

void kvt_key(char *buf, size_t len, int rank, int round)
{
    snprintf(buf, len, "k%d-%d", rank, round);
}

void kvt_value(char *buf, int vallen, int rank, int round)
{
    static const char alpha[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    int n = snprintf(buf, (size_t)vallen + 1, "r%d.%d:", rank, round);
    if (n > vallen)
        n = vallen;
    for (int i = n; i < vallen; i++) {
        unsigned h =
            (unsigned)rank * 2654435761u + (unsigned)round * 40503u + (unsigned)i * 97u;
        buf[i] = alpha[(h >> 7) % 62];
    }
    buf[vallen] = '\0';
}

uint64_t kvt_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

uint64_t kvt_median(uint64_t *v, int n)
{
    if (n <= 0)
        return 0;
    qsort(v, (size_t)n, sizeof(*v), cmp_u64);
    return (n % 2) ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Recursive-descent checker of MPICH's mapping grammar. */
struct mp {
    const char *p;
    const char *why;
};

static void skipws(struct mp *m)
{
    while (isspace((unsigned char)*m->p))
        m->p++;
}

static int num(struct mp *m, long *out)
{
    char *end;
    skipws(m);
    if (!isdigit((unsigned char)*m->p)) {
        m->why = "number expected";
        return -1;
    }
    *out = strtol(m->p, &end, 0);
    if (*out < 0 || *out > 100000000) {
        m->why = "number out of range";
        return -1;
    }
    m->p = end;
    return 0;
}

static int expect(struct mp *m, char c)
{
    skipws(m);
    if (*m->p != c) {
        m->why = "unexpected character";
        return -1;
    }
    m->p++;
    return 0;
}

static long items(struct mp *m, char close);

static long item(struct mp *m)
{
    long a, b, c;
    skipws(m);
    if (*m->p == '(') {
        m->p++;
        if (num(m, &a) || expect(m, ',') || num(m, &b) || expect(m, ',') || num(m, &c) ||
            expect(m, ')'))
            return -1;
        if (b < 1 || c < 1) {
            m->why = "block with zero nodes or ranks";
            return -1;
        }
        return b * c;
    }
    if (*m->p == '[') {
        long inner, times;
        m->p++;
        if ((inner = items(m, ']')) < 0)
            return -1;
        if (expect(m, 'x') || num(m, &times))
            return -1;
        return inner * times;
    }
    if (num(m, &a))
        return -1;
    return 1;
}

static long items(struct mp *m, char close)
{
    long total = 0, n;
    for (;;) {
        if ((n = item(m)) < 0)
            return -1;
        total += n;
        skipws(m);
        if (*m->p == ',') {
            m->p++;
            continue;
        }
        if (*m->p == close) {
            m->p++;
            return total;
        }
        m->why = "',' or closing bracket expected";
        return -1;
    }
}

long kvt_check_mapping(const char *s, const char **why)
{
    struct mp m = {s, NULL};
    long total;
    if (expect(&m, '(') < 0)
        goto bad;
    skipws(&m);
    if (strncmp(m.p, "vector", 6) != 0) {
        m.why = "does not start with (vector,";
        goto bad;
    }
    m.p += 6;
    if (expect(&m, ',') < 0)
        goto bad;
    if ((total = items(&m, ')')) < 0)
        goto bad;
    skipws(&m);
    if (*m.p != '\0') {
        m.why = "trailing characters";
        goto bad;
    }
    if (total < 1) {
        m.why = "describes no rank";
        goto bad;
    }
    return total;
bad:
    *why = m.why ? m.why : "malformed";
    return -1;
}
