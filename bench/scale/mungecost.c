/* mungecost.c - the cost of one munge credential as treenet's links spend it:
 * munge_encode of a small payload restricted to one uid, then munge_decode
 * of it, each a round trip to the local munged.  Prints the wall and CPU
 * time per encode and per decode (mean over -n credentials, after 20 warm-up
 * ones).  A tree link costs each side one encode and one decode (doc/treenet.md),
 * so a node with k links spends k of each at start-up.
 *
 * Usage: mungecost [-n COUNT] [-S SOCKET]   (SOCKET: munged's, default munge's own)
 * Build: cc -O2 -o mungecost bench/scale/mungecost.c -lmunge (bench/results/scale.md).
 */
#include <munge.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static double cpu_us(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

int main(int argc, char **argv)
{
    int n = 1000, opt;
    const char *sock = NULL;
    char payload[128];

    while ((opt = getopt(argc, argv, "n:S:")) != -1) {
        if (opt == 'n')
            n = atoi(optarg);
        else if (opt == 'S')
            sock = optarg;
        else {
            fprintf(stderr, "usage: mungecost [-n COUNT] [-S SOCKET]\n");
            return 2;
        }
    }
    if (n < 1 || n > 1000000)
        return 2;
    munge_ctx_t ctx = munge_ctx_create();
    if (!ctx || (sock && munge_ctx_set(ctx, MUNGE_OPT_SOCKET, sock) != EMUNGE_SUCCESS) ||
        munge_ctx_set(ctx, MUNGE_OPT_UID_RESTRICTION, (uid_t)geteuid()) !=
            EMUNGE_SUCCESS) {
        fprintf(stderr, "mungecost: munge context\n");
        return 2;
    }
    /* a payload of the size treenet signs: job, from, to, two nonces */
    snprintf(payload, sizeof(payload),
             "loom-tree 1 job=emu.0 from=12 to=5 n1=%016x n2=%016x", 0x1234u, 0x5678u);
    double te = 0, td = 0, ce = 0, cd = 0;
    for (int i = 0; i < n + 20; i++) {
        char *cred = NULL;
        void *out = NULL;
        int outlen = 0;
        double t0 = now_us(), c0 = cpu_us();
        munge_err_t e = munge_encode(&cred, ctx, payload, (int)strlen(payload));
        double t1 = now_us(), c1 = cpu_us();
        if (e != EMUNGE_SUCCESS) {
            fprintf(stderr, "mungecost: encode: %s\n", munge_strerror(e));
            return 1;
        }
        e = munge_decode(cred, ctx, &out, &outlen, NULL, NULL);
        double t2 = now_us(), c2 = cpu_us();
        if (e != EMUNGE_SUCCESS || outlen != (int)strlen(payload) ||
            memcmp(out, payload, (size_t)outlen) != 0) {
            fprintf(stderr, "mungecost: decode: %s\n", munge_strerror(e));
            return 1;
        }
        free(cred);
        free(out);
        if (i >= 20) {
            te += t1 - t0;
            td += t2 - t1;
            ce += c1 - c0;
            cd += c2 - c1;
        }
    }
    /* count encode_us decode_us encode_cpu_us decode_cpu_us (client side) */
    printf("%d\t%.1f\t%.1f\t%.1f\t%.1f\n", n, te / n, td / n, ce / n, cd / n);
    munge_ctx_destroy(ctx);
    return 0;
}
