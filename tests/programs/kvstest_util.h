/* kvstest_util.h - helpers shared by the PMI test programs (no PMI in here).
 *
 * Contract: option parsing for the kvstest programs, deterministic key/value contents
 * derived from (rank, round) so every reader can verify what it got, a monotonic clock,
 * medians, and a checker for MPICH's PMI_process_mapping grammar.
 *
 * Notes: values use only [A-Za-z0-9] so they are legal in PMI-1 (no spaces) and PMI-2
 *   (no ';') on every server we know.
 */
#ifndef LOOM_KVSTEST_UTIL_H
#define LOOM_KVSTEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

struct kvt_opts {
    int rounds;    /* -r: put/fence/get rounds (default 3) */
    int vallen;    /* -v: value length in bytes, without the NUL (default 1000) */
    int timing;    /* -t: rank 0 prints per-phase medians */
    int nomapping; /* -M: job id and PMI_process_mapping optional (singleton use) */
};

/* Parse argv; prints usage and exits 2 on bad options. maxval is the largest -v. */
void kvt_parse(struct kvt_opts *o, int argc, char **argv, const char *prog, int maxval);

/* key "k<rank>-<round>" */
void kvt_key(char *buf, size_t len, int rank, int round);

/* Value of exactly vallen bytes plus NUL: "r<rank>.<round>:" then derived characters. */
void kvt_value(char *buf, int vallen, int rank, int round);

uint64_t kvt_now_us(void);

/* Median of n samples (sorts the array in place). 0 when n == 0. */
uint64_t kvt_median(uint64_t *v, int n);

/* Check a PMI_process_mapping string: "(vector,...)" with blocks (start,count,ppn),
 * bare numbers and "[...]xN" repeats, covering at least one rank; returns the number of
 * ranks the string describes (before wrap-around) or -1 with *why set. */
long kvt_check_mapping(const char *s, const char **why);

#endif
