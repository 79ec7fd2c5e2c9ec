/* check_fdio.c - unit tests for common/fdio.c.
 *
 * Covers: fd flag helpers (set and clear), fdio_write_full through a full
 * non-blocking pipe while another thread drains it (waits, loses nothing),
 * fdio_read_full stopping short only at EOF, -EAGAIN on an empty
 * non-blocking fd, -EPIPE/-EBADF reported as negative errno, and
 * fdio_reserve: the table (FDSize in /proc/self/status) grows once to hold
 * the reserved count, no descriptor stays open, opening that many afterwards
 * does not grow it again, and the soft RLIMIT_NOFILE caps it.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "fdio.h"

START_TEST(flags)
{
    int p[2];

    ck_assert_int_eq(pipe(p), 0);
    ck_assert_int_eq(fdio_set_nonblock(p[0], true), 0);
    ck_assert(fcntl(p[0], F_GETFL) & O_NONBLOCK);
    ck_assert_int_eq(fdio_set_nonblock(p[0], false), 0);
    ck_assert(!(fcntl(p[0], F_GETFL) & O_NONBLOCK));
    ck_assert_int_eq(fdio_set_cloexec(p[1], true), 0);
    ck_assert(fcntl(p[1], F_GETFD) & FD_CLOEXEC);
    ck_assert_int_eq(fdio_set_cloexec(p[1], false), 0);
    ck_assert(!(fcntl(p[1], F_GETFD) & FD_CLOEXEC));
    close(p[0]);
    close(p[1]);
    ck_assert_int_eq(fdio_set_nonblock(p[0], true), -EBADF);
    ck_assert_int_eq(fdio_set_cloexec(p[0], true), -EBADF);
}
END_TEST

#define BIG (1024 * 1024)

struct drain {
    int fd;
    size_t got;
    unsigned long sum;
};

static void *drainer(void *arg)
{
    struct drain *d = arg;
    unsigned char buf[4096];
    ssize_t n;

    usleep(10000); /* let the writer fill the pipe first */
    while ((n = fdio_read(d->fd, buf, sizeof(buf))) > 0) {
        for (ssize_t i = 0; i < n; i++)
            d->sum += buf[i];
        d->got += (size_t)n;
    }
    return NULL;
}

START_TEST(write_full_nonblocking)
{
    unsigned char *data = malloc(BIG);
    unsigned long sum = 0;
    struct drain d = {0};
    pthread_t th;
    int p[2];

    for (size_t i = 0; i < BIG; i++) {
        data[i] = (unsigned char)(i * 7);
        sum += data[i];
    }
    ck_assert_int_eq(pipe(p), 0);
    ck_assert_int_eq(fdio_set_nonblock(p[1], true), 0);
    d.fd = p[0];
    ck_assert_int_eq(pthread_create(&th, NULL, drainer, &d), 0);
    ck_assert_int_eq(fdio_write_full(p[1], data, BIG), 0);
    close(p[1]);
    pthread_join(th, NULL);
    ck_assert_uint_eq(d.got, BIG);
    ck_assert_uint_eq(d.sum, sum);
    close(p[0]);
    free(data);
}
END_TEST

START_TEST(read_full_and_eof)
{
    char buf[16];
    int p[2];

    ck_assert_int_eq(pipe(p), 0);
    ck_assert_int_eq(fdio_write_full(p[1], "hello", 5), 0);
    close(p[1]);
    /* asks for 16, gets 5: short only because of EOF */
    ck_assert_int_eq(fdio_read_full(p[0], buf, sizeof(buf)), 5);
    ck_assert(memcmp(buf, "hello", 5) == 0);
    ck_assert_int_eq(fdio_read_full(p[0], buf, sizeof(buf)), 0);
    close(p[0]);
}
END_TEST

START_TEST(errors_are_negative_errno)
{
    char c;
    int p[2];

    ck_assert_int_eq(pipe(p), 0);
    ck_assert_int_eq(fdio_set_nonblock(p[0], true), 0);
    ck_assert_int_eq(fdio_read(p[0], &c, 1), -EAGAIN);
    ck_assert_int_eq(fdio_read_full(p[0], &c, 1), -EAGAIN);
    close(p[0]);
    signal(SIGPIPE, SIG_IGN);
    ck_assert_int_eq(fdio_write_full(p[1], "x", 1), -EPIPE);
    close(p[1]);
    ck_assert_int_eq(fdio_write(p[1], "x", 1), -EBADF);
}
END_TEST

/* The size of this process's descriptor table (FDSize in /proc/self/status). */
static int fd_table_size(void)
{
    char line[128];
    int n = -1;
    FILE *f = fopen("/proc/self/status", "r");

    ck_assert_ptr_nonnull(f);
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "FDSize: %d", &n) == 1)
            break;
    fclose(f);
    ck_assert_int_gt(n, 0);
    return n;
}

static int lowest_free_fd(void)
{
    int fd = open("/dev/null", O_RDONLY);

    ck_assert_int_ge(fd, 0);
    close(fd);
    return fd;
}

START_TEST(reserve_grows_the_table_once)
{
    int lo = lowest_free_fd();
    int want = fd_table_size() + 200;
    int fds[400], n = 0;

    ck_assert_int_eq(fdio_reserve(want), 0);
    int size = fd_table_size();
    ck_assert_int_ge(size, lo + want);
    ck_assert_int_eq(lowest_free_fd(), lo); /* nothing left open */
    /* Opening up to the reserved count does not grow the table again. */
    while (n < want && n < (int)(sizeof(fds) / sizeof(fds[0])) &&
           (fds[n] = open("/dev/null", O_RDONLY)) >= 0)
        n++;
    ck_assert_int_eq(n, want < 400 ? want : 400);
    ck_assert_int_eq(fd_table_size(), size);
    while (n > 0)
        close(fds[--n]);
    ck_assert_int_eq(fdio_reserve(0), 0);
}
END_TEST

START_TEST(reserve_is_capped_by_the_open_file_limit)
{
    struct rlimit rl;

    ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
    if (fd_table_size() > 100 || lowest_free_fd() >= 90)
        return; /* started with a large table already: nothing to see */
    rl.rlim_cur = 100;
    ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
    ck_assert_int_eq(fdio_reserve(100000), 0);
    ck_assert_int_ge(fd_table_size(), 100);
    ck_assert_int_le(fd_table_size(), 128);
}
END_TEST

static Suite *fdio_suite(void)
{
    Suite *s = suite_create("fdio");
    TCase *tc = tcase_create("io");

    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, flags);
    tcase_add_test(tc, write_full_nonblocking);
    tcase_add_test(tc, read_full_and_eof);
    tcase_add_test(tc, errors_are_negative_errno);
    tcase_add_test(tc, reserve_grows_the_table_once);
    tcase_add_test(tc, reserve_is_capped_by_the_open_file_limit);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(fdio_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
