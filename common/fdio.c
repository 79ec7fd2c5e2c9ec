/* fdio.c - EINTR-safe read/write loops and fd flag helpers.
 *
 * Contract: see fdio.h.  All functions are async-signal-safe except for
 * their use of errno, which they leave as the failing system call set it.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <unistd.h>

#include "fdio.h"

ssize_t fdio_read(int fd, void *buf, size_t len)
{
    ssize_t n;

    do {
        n = read(fd, buf, len);
    } while (n < 0 && errno == EINTR);
    return n < 0 ? -errno : n;
}

ssize_t fdio_write(int fd, const void *buf, size_t len)
{
    ssize_t n;

    do {
        n = write(fd, buf, len);
    } while (n < 0 && errno == EINTR);
    return n < 0 ? -errno : n;
}

ssize_t fdio_read_full(int fd, void *buf, size_t len)
{
    size_t got = 0;

    while (got < len) {
        ssize_t n = fdio_read(fd, (char *)buf + got, len - got);
        if (n == 0)
            break;
        if (n < 0) {
            if (got > 0 && n == -EAGAIN)
                break;
            return n;
        }
        got += (size_t)n;
    }
    return (ssize_t)got;
}

/* Wait until fd can take more bytes (only reached for non-blocking fds). */
static int wait_writable(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    int rc;

    do {
        rc = poll(&p, 1, -1);
    } while (rc < 0 && errno == EINTR);
    if (rc < 0)
        return -errno;
    if (p.revents & POLLNVAL)
        return -EBADF;
    return 0;
}

int fdio_write_full(int fd, const void *buf, size_t len)
{
    const char *p = buf;

    while (len > 0) {
        ssize_t n = fdio_write(fd, p, len);
        if (n == -EAGAIN) {
            int rc = wait_writable(fd);
            if (rc < 0)
                return rc;
            continue;
        }
        if (n < 0)
            return (int)n;
        if (n == 0)
            return -EIO;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int fdio_set_nonblock(int fd, bool on)
{
    int fl = fcntl(fd, F_GETFL);

    if (fl < 0)
        return -errno;
    fl = on ? (fl | O_NONBLOCK) : (fl & ~O_NONBLOCK);
    if (fcntl(fd, F_SETFL, fl) < 0)
        return -errno;
    return 0;
}

int fdio_set_cloexec(int fd, bool on)
{
    int fl = fcntl(fd, F_GETFD);

    if (fl < 0)
        return -errno;
    fl = on ? (fl | FD_CLOEXEC) : (fl & ~FD_CLOEXEC);
    if (fcntl(fd, F_SETFD, fl) < 0)
        return -errno;
    return 0;
}

int fdio_reserve(int count)
{
    struct rlimit rl;
    int lo, hi, rc = 0;
    long top;

    if (count < 1)
        return 0;
    lo = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (lo < 0)
        return -errno;
    top = (long)lo + count;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (rlim_t)top >= rl.rlim_cur)
        top = (long)rl.rlim_cur - 1;
    if (top > lo) {
        hi = fcntl(lo, F_DUPFD_CLOEXEC, (int)top);
        if (hi < 0)
            rc = -errno;
        else
            close(hi);
    }
    close(lo);
    return rc;
}
