/*
 * mpibench.c - micro-benchmarks of an MPI library, plain MPI-1 calls only, so the same
 * source is compiled unchanged by Loom's, MPICH's and Open MPI's mpicc.
 *
 * Usage: mpiexec -n N mpibench [-T SECONDS] [-r REPS] TEST...
 *   TEST is one of
 *     lat       ping-pong between ranks 0 and 1, half round trip (us),
 *               sizes 0 B, 8 B, 1 KiB, 64 KiB, 1 MiB
 *     bw        streaming bandwidth 0 -> 1: a window of MPI_Isend, matched by a window
 *               of MPI_Irecv, then a 0-byte acknowledgement (MB/s, 1 MB = 1e6 B),
 *               sizes 64 KiB, 256 KiB, 1 MiB, 4 MiB
 *     allreduce MPI_Allreduce (MPI_SUM of doubles), 8 B and 64 KiB (us per call)
 *     barrier   MPI_Barrier (us per call)
 *     bcast     MPI_Bcast from rank 0, 8 B and 64 KiB (us per call)
 *     reduce    MPI_Reduce (MPI_SUM of doubles) to rank 0, 8 B and 64 KiB (us per call)
 *     reduce_scatter  MPI_Reduce_scatter_block (MPI_SUM of doubles); the size is each
 *               rank's whole input vector, every rank gets size / np of it (us per call)
 *     allgather MPI_Allgather of doubles; the size is the gathered vector, every rank
 *               contributes size / np of it (us per call)
 *   -T  time budget per repetition of one case, default 0.02 s
 *   -r  repetitions per case, default 5; the printed value is their median
 *   -s  comma-separated sizes in bytes for the collectives, replacing their defaults
 *       (e.g. -s 4096,65536,1048576; rounded down to whole doubles per rank)
 * Output (rank 0, stdout), one line per case:
 *     RESULT <test> <np> <bytes> <value> <unit> <iterations> <min> <max>
 *
 * Method (the OSU micro-benchmarks' documented method, written from scratch here):
 * every case starts with a warm-up; rank 0 then times a short calibration loop and
 * broadcasts an iteration count so that one repetition lasts about -T seconds (so
 * iterations scale with message size and with how slow the library is: an
 * oversubscribed spinning library gets few iterations instead of a run that never
 * ends), and re-picks it after every repetition from the last one's time; a
 * point-to-point repetition that overruns its budget 5-fold stops early (rank 0 tags
 * the last message), so a loaded machine cannot stretch one case into minutes. Each
 * repetition is timed with MPI_Wtime; collectives report the mean over ranks of each
 * rank's time per call. The printed iteration count is the first repetition's.
 *
 * Caveats: timing only, no data checks (the test suite checks data). Point-to-point
 * tests use ranks 0 and 1; other ranks only join the calibration broadcasts.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXREPS 32
#define BW_MAXBYTES (64L << 20) /* receive buffers of one bandwidth window */

static int rank, np;
static double budget = 0.02;
static int reps = 5;
static char *sbuf, *rbuf;
#define MAXSIZES 16
static long usize[MAXSIZES]; /* -s */
static int usizes;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void report(const char *test, long bytes, double *v, int n, const char *unit,
                   long iters)
{
    if (rank != 0)
        return;
    qsort(v, n, sizeof *v, cmp_double);
    double med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    printf("RESULT %s %d %ld %.3f %s %ld %.3f %.3f\n", test, np, bytes, med, unit, iters,
           v[0], v[n - 1]);
    fflush(stdout);
}

/* Rank 0's per-iteration estimate -> iteration count every rank agrees on. */
static long pick_iters(double per_iter, long maxit)
{
    long it = 1;
    if (rank == 0) {
        if (per_iter <= 0)
            per_iter = 1e-9;
        double want = budget / per_iter;
        it = want > maxit ? maxit : want < 1 ? 1 : (long)want;
    }
    MPI_Bcast(&it, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    return it;
}

/* The timed loops stop early, all ranks agreeing, when a repetition overruns its budget
 * by STOP_FACTOR (a calibration taken in a quiet moment of a loaded machine would
 * otherwise ask for minutes): rank 0 then marks the last message with TAG_LAST. */
#define STOP_FACTOR 5.0
#define TAG_DATA 1
#define TAG_LAST 2

static int overrun(double t0, long i)
{
    return (i & 15) == 15 && MPI_Wtime() - t0 > STOP_FACTOR * budget;
}

/* n round trips between ranks 0 and 1 (fewer if overrun); returns how many ran */
static long pingpong(long bytes, long n)
{
    long i = 0;
    double t0 = MPI_Wtime();
    MPI_Status st;
    if (rank == 0) {
        for (i = 0; i < n; i++) {
            int last = i == n - 1 || overrun(t0, i);
            MPI_Send(sbuf, (int)bytes, MPI_CHAR, 1, last ? TAG_LAST : TAG_DATA,
                     MPI_COMM_WORLD);
            MPI_Recv(rbuf, (int)bytes, MPI_CHAR, 1, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            if (last)
                return i + 1;
        }
    } else if (rank == 1) {
        for (i = 0; i < n; i++) {
            MPI_Recv(rbuf, (int)bytes, MPI_CHAR, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            MPI_Send(sbuf, (int)bytes, MPI_CHAR, 0, st.MPI_TAG, MPI_COMM_WORLD);
            if (st.MPI_TAG == TAG_LAST)
                return i + 1;
        }
    }
    return n;
}

static void bench_lat(void)
{
    static const long sizes[] = {0, 8, 1024, 64 << 10, 1 << 20};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        long b = sizes[k], maxit = b <= 1024 ? 100000 : b <= (64 << 10) ? 20000 : 2000;
        double v[MAXREPS];
        pingpong(b, b <= 1024 ? 1000 : 50); /* warm-up */
        MPI_Barrier(MPI_COMM_WORLD);
        double t = MPI_Wtime();
        long done = pingpong(b, 20), it0;
        long it = it0 = pick_iters((MPI_Wtime() - t) / done, maxit);
        for (int r = 0; r < reps; r++) {
            MPI_Barrier(MPI_COMM_WORLD);
            t = MPI_Wtime();
            done = pingpong(b, it);
            t = MPI_Wtime() - t;
            v[r] = t * 1e6 / (2.0 * done);
            it = pick_iters(t / done, maxit); /* follow the machine's load */
        }
        report("lat", b, v, reps, "us", it0);
    }
}

/* n windows from rank 0 to rank 1 (fewer if overrun, see pingpong); returns how many */
static long stream(long bytes, int window, long n)
{
    MPI_Request req[64];
    MPI_Status st[64]; /* not MPI_STATUSES_IGNORE: gcc's -Wstringop-overflow trips on it */
    double t0 = MPI_Wtime();
    for (long i = 0; i < n; i++) {
        if (rank == 0) {
            int last = i == n - 1 || MPI_Wtime() - t0 > STOP_FACTOR * budget;
            for (int w = 0; w < window; w++)
                MPI_Isend(sbuf, (int)bytes, MPI_CHAR, 1, last ? TAG_LAST : TAG_DATA,
                          MPI_COMM_WORLD, &req[w]);
            MPI_Waitall(window, req, st);
            MPI_Recv(NULL, 0, MPI_CHAR, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (last)
                return i + 1;
        } else if (rank == 1) {
            for (int w = 0; w < window; w++)
                MPI_Irecv(rbuf + (long)w * bytes, (int)bytes, MPI_CHAR, 0, MPI_ANY_TAG,
                          MPI_COMM_WORLD, &req[w]);
            MPI_Waitall(window, req, st);
            MPI_Send(NULL, 0, MPI_CHAR, 0, 3, MPI_COMM_WORLD);
            if (st[window - 1].MPI_TAG == TAG_LAST)
                return i + 1;
        }
    }
    return n;
}

static void bench_bw(void)
{
    static const long sizes[] = {64 << 10, 256 << 10, 1 << 20, 4 << 20};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        long b = sizes[k];
        int window = 64;
        while ((long)window * b > BW_MAXBYTES && window > 8)
            window /= 2;
        double v[MAXREPS];
        stream(b, window, 2);
        MPI_Barrier(MPI_COMM_WORLD);
        double t = MPI_Wtime();
        long done = stream(b, window, 3), it0;
        long it = it0 = pick_iters((MPI_Wtime() - t) / done, 2000);
        for (int r = 0; r < reps; r++) {
            MPI_Barrier(MPI_COMM_WORLD);
            t = MPI_Wtime();
            done = stream(b, window, it);
            t = MPI_Wtime() - t;
            v[r] = (double)b * window * done / t / 1e6;
            it = pick_iters(t / done, 2000);
        }
        report("bw", b, v, reps, "MB/s", it0);
    }
}

enum coll { C_ALLREDUCE, C_BARRIER, C_BCAST, C_REDUCE, C_REDSCAT, C_ALLGATHER };

static void coll(enum coll c, long bytes, long n)
{
    for (long i = 0; i < n; i++) {
        switch (c) {
        case C_ALLREDUCE:
            MPI_Allreduce(sbuf, rbuf, (int)(bytes / sizeof(double)), MPI_DOUBLE, MPI_SUM,
                          MPI_COMM_WORLD);
            break;
        case C_BARRIER:
            MPI_Barrier(MPI_COMM_WORLD);
            break;
        case C_BCAST:
            MPI_Bcast(sbuf, (int)bytes, MPI_CHAR, 0, MPI_COMM_WORLD);
            break;
        case C_REDUCE:
            MPI_Reduce(sbuf, rbuf, (int)(bytes / sizeof(double)), MPI_DOUBLE, MPI_SUM, 0,
                       MPI_COMM_WORLD);
            break;
        case C_REDSCAT:
            MPI_Reduce_scatter_block(sbuf, rbuf, (int)(bytes / sizeof(double) / np),
                                     MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            break;
        case C_ALLGATHER:
            MPI_Allgather(sbuf, (int)(bytes / sizeof(double) / np), MPI_DOUBLE, rbuf,
                          (int)(bytes / sizeof(double) / np), MPI_DOUBLE, MPI_COMM_WORLD);
            break;
        }
    }
}

static void bench_coll(enum coll c, const char *name, const long *sizes, int nsizes)
{
    for (int k = 0; k < nsizes; k++) {
        long b = sizes[k];
        double v[MAXREPS];
        coll(c, b, 3); /* warm-up (few: oversubscribed spinning libraries are slow) */
        MPI_Barrier(MPI_COMM_WORLD);
        double t = MPI_Wtime();
        coll(c, b, 5);
        long it = pick_iters((MPI_Wtime() - t) / 5, b <= 1024 ? 100000 : 10000), it0 = it;
        for (int r = 0; r < reps; r++) {
            MPI_Barrier(MPI_COMM_WORLD);
            t = MPI_Wtime();
            coll(c, b, it);
            double mine = (MPI_Wtime() - t) * 1e6 / it, sum = 0;
            MPI_Reduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
            v[r] = sum / np;
            if (r + 1 < reps) /* follow the machine's load (rank 0's view) */
                it = pick_iters(mine * 1e-6, b <= 1024 ? 100000 : 10000);
        }
        report(name, b, v, reps, "us", it0);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);

    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "-T") && i + 1 < argc)
            budget = atof(argv[++i]);
        else if (!strcmp(argv[i], "-r") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-s") && i + 1 < argc)
            for (char *p = argv[++i]; *p && usizes < MAXSIZES; p += *p == ',') {
                char *end;
                long b = strtol(p, &end, 10);
                if (end == p || b < 0 || b > (4L << 20))
                    break;
                usize[usizes++] = b;
                p = end;
            }
        else
            break;
    }
    if (reps < 1)
        reps = 1;
    if (reps > MAXREPS)
        reps = MAXREPS;

    sbuf = malloc(4L << 20);
    rbuf = malloc(BW_MAXBYTES);
    if (!sbuf || !rbuf) {
        fprintf(stderr, "mpibench: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(sbuf, 1, 4L << 20);
    memset(rbuf, 0, BW_MAXBYTES);

    static const long two[] = {8, 64 << 10}, zero[] = {0};
    const long *sizes = two;
    int nsizes = 2;
    if (usizes > 0) {
        sizes = usize;
        nsizes = usizes;
    }
    int bad = 0;
    for (; i < argc; i++) {
        const char *t = argv[i];
        if (!strcmp(t, "lat") || !strcmp(t, "bw")) {
            if (np < 2) {
                if (rank == 0)
                    fprintf(stderr, "mpibench: %s needs 2 ranks\n", t);
                bad = 1;
                break;
            }
            if (!strcmp(t, "lat"))
                bench_lat();
            else
                bench_bw();
        } else if (!strcmp(t, "allreduce")) {
            bench_coll(C_ALLREDUCE, t, sizes, nsizes);
        } else if (!strcmp(t, "reduce")) {
            bench_coll(C_REDUCE, t, sizes, nsizes);
        } else if (!strcmp(t, "reduce_scatter")) {
            bench_coll(C_REDSCAT, t, sizes, nsizes);
        } else if (!strcmp(t, "allgather")) {
            bench_coll(C_ALLGATHER, t, sizes, nsizes);
        } else if (!strcmp(t, "barrier")) {
            bench_coll(C_BARRIER, t, zero, 1);
        } else if (!strcmp(t, "bcast")) {
            bench_coll(C_BCAST, t, sizes, nsizes);
        } else {
            if (rank == 0)
                fprintf(stderr, "mpibench: unknown test '%s'\n", t);
            bad = 1;
            break;
        }
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return bad;
}
