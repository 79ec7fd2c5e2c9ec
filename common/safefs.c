/* safefs.c - directories made and removed through fds only (contract in
 * safefs.h).
 *
 * Notes:
 *   - Why fds: a path is resolved again by the kernel at every call, and any
 *     component that another user can write may be swapped for a symlink
 *     between two calls (nftw + remove: CVE-2023-41914's class).  An fd of a
 *     directory names that directory whatever happens to the paths above it;
 *     openat(O_NOFOLLOW) and unlinkat() act on one name inside it.
 *   - Removal as root freezes each directory (fchown 0:0, fchmod 0700) before
 *     reading it, and the walk goes top down: once a directory is frozen its
 *     entries can only change by our hand, so what we read is what we remove.
 *     A swapped-in symlink met before the freeze is unlinked as a link.
 *   - unlinkat(name, 0) is tried first for every entry (one syscall for the
 *     common file); EISDIR (Linux) / EPERM (POSIX) means a directory.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "mac.h"
#include "safefs.h"

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
#define RM_ATTEMPTS 4 /* an entry that keeps changing kind between our calls */
#define RM_PASSES 4   /* readdir passes over one directory */

/* Is this directory (st) one we may walk through or create in?  last: the
 * base itself.  0, or an errno with the reason in err. */
static int trusted(const struct stat *st, const char *path, int last, int flags,
                   uid_t owner2, char *err, size_t errlen)
{
    uid_t me = geteuid();
    mode_t w = st->st_mode & (S_IWGRP | S_IWOTH);

    if (!S_ISDIR(st->st_mode)) {
        loom_errf(err, errlen, "%s is not a directory", path);
        return ENOTDIR;
    }
    if (st->st_uid != 0 && st->st_uid != me && st->st_uid != owner2) {
        loom_errf(err, errlen, "%s belongs to uid %u, neither root nor us (uid %u)%s",
                  path, (unsigned)st->st_uid, (unsigned)me,
                  owner2 != (uid_t)-1 ? " nor the trusted account" : "");
        return EPERM;
    }
    if (w && last && (flags & SAFEFS_STRICT)) {
        loom_errf(err, errlen,
                  "%s is writable by other users (mode %04o): refusing it as root's "
                  "directory for another user",
                  path, (unsigned)(st->st_mode & 07777));
        return EPERM;
    }
    if (w && !(st->st_mode & S_ISVTX)) {
        loom_errf(err, errlen, "%s is writable by other users and not sticky (mode %04o)",
                  path, (unsigned)(st->st_mode & 07777));
        return EPERM;
    }
    return 0;
}

/* rest = a + "/" + b (b may be empty).  0, or -1 when too long. */
static int join_path(char *rest, size_t cap, const char *a, const char *b)
{
    char tmp[PATH_MAX];
    int n = snprintf(tmp, sizeof(tmp), "%s%s%s", a, *b ? "/" : "", b);
    if (n < 0 || (size_t)n >= sizeof(tmp) || (size_t)n >= cap)
        return -1;
    memcpy(rest, tmp, (size_t)n + 1);
    return 0;
}

int safefs_open_base(const char *base, int flags, uid_t owner2, char *resolved, char *err,
                     size_t errlen)
{
    char rest[PATH_MAX], walked[PATH_MAX], comp[NAME_MAX + 1], cwd[PATH_MAX];
    char tgt[PATH_MAX];
    struct stat st;
    size_t wl = 0;
    int fd = -1, e, links = 0;
    uid_t me = geteuid();

    if (!base || !*base) {
        loom_errf(err, errlen, "empty directory name");
        errno = EINVAL;
        return -1;
    }
    if (base[0] != '/' && !getcwd(cwd, sizeof(cwd))) {
        e = errno;
        loom_errf(err, errlen, "cannot resolve %s: %s", base, strerror(e));
        errno = e;
        return -1;
    }
    if (join_path(rest, sizeof(rest), base[0] == '/' ? "" : cwd, base) < 0) {
        loom_errf(err, errlen, "%s: name too long", base);
        errno = ENAMETOOLONG;
        return -1;
    }
restart:
    if (fd >= 0)
        close(fd);
    wl = 0;
    walked[0] = '\0';
    if ((fd = open("/", DIR_FLAGS)) < 0 || fstat(fd, &st) < 0) {
        e = errno;
        loom_errf(err, errlen, "cannot open /: %s", strerror(e));
        goto fail;
    }
    for (const char *p = rest;;) {
        while (*p == '/')
            p++;
        int last = *p == '\0';
        if ((e = trusted(&st, wl ? walked : "/", last, flags, owner2, err, errlen)) != 0)
            goto fail;
        if (last)
            break;
        size_t n = strcspn(p, "/");
        if (n > NAME_MAX) {
            e = ENAMETOOLONG;
            loom_errf(err, errlen, "%s: name too long", base);
            goto fail;
        }
        memcpy(comp, p, n);
        comp[n] = '\0';
        p += n;
        if (strcmp(comp, ".") == 0)
            continue;
        int nfd = openat(fd, comp, DIR_FLAGS);
        if (nfd < 0 && (errno == ELOOP || errno == ENOTDIR)) {
            /* A symlink in a directory we trust: follow it only when root or
             * we own it (nobody else could have put it there, or change it). */
            struct stat ls;
            ssize_t tl;
            if (fstatat(fd, comp, &ls, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISLNK(ls.st_mode)) {
                e = ENOTDIR;
                loom_errf(err, errlen, "%s/%s is not a directory", walked, comp);
                goto fail;
            }
            if (ls.st_uid != 0 && ls.st_uid != me && ls.st_uid != owner2) {
                e = EPERM;
                loom_errf(err, errlen, "%s/%s is a symlink of uid %u: not followed",
                          walked, comp, (unsigned)ls.st_uid);
                goto fail;
            }
            if (++links > 40 || (tl = readlinkat(fd, comp, tgt, sizeof(tgt) - 1)) <= 0) {
                e = ELOOP;
                loom_errf(err, errlen, "%s/%s: too many or unreadable symlinks", walked,
                          comp);
                goto fail;
            }
            tgt[tl] = '\0';
            char tail[PATH_MAX];
            snprintf(tail, sizeof(tail), "%s", p);
            if (tgt[0] == '/') {
                if (join_path(rest, sizeof(rest), tgt, tail) < 0) {
                    e = ENAMETOOLONG;
                    loom_errf(err, errlen, "%s: name too long", base);
                    goto fail;
                }
                goto restart;
            }
            /* relative: the rest of the walk goes on from this directory */
            if (join_path(rest, sizeof(rest), tgt, tail) < 0) {
                e = ENAMETOOLONG;
                loom_errf(err, errlen, "%s: name too long", base);
                goto fail;
            }
            p = rest;
            continue;
        }
        if (nfd < 0 || fstat(nfd, &st) < 0) {
            e = errno;
            loom_errf(err, errlen, "cannot open %s/%s: %s", walked, comp, strerror(e));
            if (nfd >= 0)
                close(nfd);
            goto fail;
        }
        close(fd);
        fd = nfd;
        if (strcmp(comp, "..") == 0) {
            char *sl = strrchr(walked, '/');
            wl = sl ? (size_t)(sl - walked) : 0;
            walked[wl] = '\0';
        } else {
            if (wl + 1 + n >= sizeof(walked)) {
                e = ENAMETOOLONG;
                loom_errf(err, errlen, "%s: name too long", base);
                goto fail;
            }
            walked[wl++] = '/';
            memcpy(walked + wl, comp, n + 1);
            wl += n;
        }
    }
    if (resolved)
        snprintf(resolved, SAFEFS_PATH_MAX, "%s", wl ? walked : "/");
    return fd;
fail:
    if (fd >= 0)
        close(fd);
    errno = e;
    return -1;
}

void safefs_dir_init(struct safefs_dir *d)
{
    memset(d, 0, sizeof(*d));
    d->base_fd = d->fd = -1;
}

void safefs_close(struct safefs_dir *d)
{
    if (d->fd >= 0)
        close(d->fd);
    if (d->base_fd >= 0)
        close(d->base_fd);
    d->fd = d->base_fd = -1;
}

int safefs_mkdtemp(struct safefs_dir *d, const char *base, int flags, uid_t owner2,
                   const char *prefix, char *err, size_t errlen)
{
    char real[SAFEFS_PATH_MAX], hex[SAFEFS_RAND_HEX + 1];
    unsigned char rnd[SAFEFS_RAND_HEX / 2];
    struct stat st;
    int e = 0, tries;

    safefs_dir_init(d);
    if (!prefix || !*prefix || strchr(prefix, '/') ||
        strlen(prefix) + 2 + SAFEFS_RAND_HEX > sizeof(d->name)) {
        loom_errf(err, errlen, "bad directory name prefix");
        errno = EINVAL;
        return -1;
    }
    if ((d->base_fd = safefs_open_base(base, flags, owner2, real, err, errlen)) < 0)
        return -1;
    if (strlen(real) + 2 + strlen(prefix) + 1 + SAFEFS_RAND_HEX > sizeof(d->path)) {
        e = ENAMETOOLONG;
        loom_errf(err, errlen, "%s: name too long", real);
        goto fail;
    }
    for (tries = 0; tries < SAFEFS_MKDTEMP_TRIES; tries++) {
        if (loom_random_bytes(rnd, sizeof(rnd)) < 0) {
            e = errno;
            loom_errf(err, errlen, "no random bytes for a directory name: %s",
                      strerror(e));
            goto fail;
        }
        loom_hex(rnd, sizeof(rnd), hex);
        snprintf(d->name, sizeof(d->name), "%s.%s", prefix, hex);
        if (mkdirat(d->base_fd, d->name, 0700) == 0)
            break;
        if (errno != EEXIST) {
            e = errno;
            loom_errf(err, errlen, "cannot create a directory in %s: %s", real,
                      strerror(e));
            goto fail;
        }
    }
    if (tries == SAFEFS_MKDTEMP_TRIES) {
        e = EEXIST;
        loom_errf(err, errlen, "%d fresh names %s/%s.* were all taken", tries, real,
                  prefix);
        goto fail;
    }
    /* The base is trusted: nobody else can rename our entry.  Still, check that
     * what we open is the directory we just made. */
    if ((d->fd = openat(d->base_fd, d->name, DIR_FLAGS)) < 0 || fstat(d->fd, &st) < 0) {
        e = errno;
        loom_errf(err, errlen, "cannot open the new %s/%s: %s", real, d->name,
                  strerror(e));
        goto fail;
    }
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)) {
        e = EPERM;
        loom_errf(err, errlen, "%s/%s is not the directory we made (uid %u, mode %04o)",
                  real, d->name, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
        goto fail; /* not ours: left alone */
    }
    if (fchmod(d->fd, 0700) < 0) { /* a umask may have taken our own bits */
        e = errno;
        loom_errf(err, errlen, "cannot chmod %s/%s: %s", real, d->name, strerror(e));
        unlinkat(d->base_fd, d->name, AT_REMOVEDIR);
        goto fail;
    }
    d->dev = st.st_dev;
    d->ino = st.st_ino;
    int n = snprintf(d->path, sizeof(d->path), "%s%s%s", real,
                     strcmp(real, "/") ? "/" : "", d->name);
    return n > 0 && (size_t)n < sizeof(d->path) ? 0 : -1; /* checked above */
fail:
    safefs_close(d);
    d->name[0] = '\0';
    errno = e;
    return -1;
}

int safefs_give(struct safefs_dir *d, uid_t uid, gid_t gid, mode_t mode, char *err,
                size_t errlen)
{
    struct stat st;
    int e;

    if (d->fd < 0) {
        loom_errf(err, errlen, "no directory");
        errno = EBADF;
        return -1;
    }
    if (fstat(d->fd, &st) < 0 ||
        ((st.st_uid != uid || st.st_gid != gid) && fchown(d->fd, uid, gid) < 0) ||
        fchmod(d->fd, mode) < 0) {
        e = errno;
        loom_errf(err, errlen, "cannot give %s to uid %u gid %u: %s", d->path,
                  (unsigned)uid, (unsigned)gid, strerror(e));
        errno = e;
        return -1;
    }
    return 0;
}

static void first_error(int *first, int e)
{
    if (!*first)
        *first = e;
}

static int rm_entry(int dirfd, const char *name, dev_t dev, int depth, int *first);

/* Empty the directory fd (closed here).  0, or -1 when something failed
 * (the first error of all goes to *first). */
static int rm_contents(int fd, dev_t dev, int depth, int *first)
{
    struct stat st;
    int failed = 0;
    DIR *dp;

    if (fstat(fd, &st) < 0) {
        first_error(first, errno);
        close(fd);
        return -1;
    }
    if (st.st_dev != dev) { /* a mount point: not ours to empty */
        first_error(first, EXDEV);
        close(fd);
        return -1;
    }
    if (depth > SAFEFS_MAX_DEPTH) {
        first_error(first, ELOOP);
        close(fd);
        return -1;
    }
    /* Freeze it: only we can change its entries from now on (root), and we
     * can write it (a directory of ours left 0500).  Without the freeze the
     * walk is still safe (fds only), so a failure here is noted, not fatal. */
    int frozen = 1;
    if (geteuid() == 0 && (st.st_uid != 0 || st.st_gid != 0) && fchown(fd, 0, 0) < 0) {
        first_error(first, errno);
        frozen = 0;
    }
    if ((st.st_mode & 07777) != 0700 && fchmod(fd, 0700) < 0) {
        first_error(first, errno);
        frozen = 0;
    }
    if (!(dp = fdopendir(fd))) {
        first_error(first, errno);
        close(fd);
        return -1;
    }
    for (int pass = 0; pass < RM_PASSES && !failed; pass++) {
        struct dirent *e;
        int seen = 0;
        if (pass)
            rewinddir(dp);
        while ((e = readdir(dp)) != NULL) {
            if (e->d_name[0] == '.' &&
                (e->d_name[1] == '\0' || (e->d_name[1] == '.' && e->d_name[2] == '\0')))
                continue;
            seen++;
            if (rm_entry(dirfd(dp), e->d_name, dev, depth + 1, first) < 0)
                failed = 1;
        }
        /* another pass only for entries readdir may have skipped while we
         * removed others; never to retry a failure (that would make the work
         * exponential in the depth) */
        if (!seen)
            break;
    }
    closedir(dp);
    return failed || !frozen ? -1 : 0;
}

/* Remove dirfd/name, whatever it is, never following it.  0 or -1. */
static int rm_entry(int dirfd, const char *name, dev_t dev, int depth, int *first)
{
    for (int attempt = 0; attempt < RM_ATTEMPTS; attempt++) {
        if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT)
            return 0;
        int uerr = errno;
        if (uerr != EISDIR && uerr != EPERM) {
            first_error(first, uerr);
            return -1;
        }
        int fd = openat(dirfd, name, DIR_FLAGS);
        if (fd < 0) {
            if (errno == ENOENT)
                return 0;
            if ((errno == ENOTDIR || errno == ELOOP) && uerr == EISDIR)
                continue; /* now a symlink or a file: unlink that */
            first_error(first, uerr == EPERM ? EPERM : errno);
            return -1;
        }
        int crc = rm_contents(fd, dev, depth, first);
        if (unlinkat(dirfd, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
            return crc;
        if (errno == ENOTDIR)
            continue; /* swapped after we emptied it */
        first_error(first, errno);
        return -1;
    }
    first_error(first, EAGAIN);
    return -1;
}

int safefs_rmtree_fd(int dirfd, const char *name, dev_t dev)
{
    struct stat st;
    int first = 0;

    if (dirfd < 0 || !name || !*name || strchr(name, '/') || strcmp(name, ".") == 0 ||
        strcmp(name, "..") == 0) {
        errno = EINVAL;
        return -1;
    }
    if (dev == (dev_t)-1) {
        if (fstat(dirfd, &st) < 0)
            return -1;
        dev = st.st_dev;
    }
    if (rm_entry(dirfd, name, dev, 0, &first) < 0 || first) {
        errno = first ? first : EIO;
        return -1;
    }
    return 0;
}

int safefs_remove(struct safefs_dir *d, char *err, size_t errlen)
{
    struct stat cur;
    int rc = 0, e = 0;

    if (d->fd < 0 || d->base_fd < 0 || !d->name[0]) {
        safefs_close(d);
        return 0;
    }
    if (fstatat(d->base_fd, d->name, &cur, AT_SYMLINK_NOFOLLOW) < 0) {
        if (errno != ENOENT) {
            e = errno;
            loom_errf(err, errlen, "cannot stat %s: %s", d->path, strerror(e));
            rc = -1;
        }
    } else if (cur.st_dev != d->dev || cur.st_ino != d->ino) {
        e = ESTALE;
        loom_errf(err, errlen, "%s no longer names the directory we made: left alone",
                  d->path);
        rc = -1;
    } else if (safefs_rmtree_fd(d->base_fd, d->name, d->dev) < 0) {
        e = errno;
        loom_errf(err, errlen, "cannot remove all of %s: %s", d->path, strerror(e));
        rc = -1;
    }
    safefs_close(d);
    errno = e;
    return rc;
}
