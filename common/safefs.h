/* safefs.h - directories that root (or any process) makes and removes in places
 * another local user can reach, without ever following a symlink or adopting a
 * path someone else made first.
 *
 * Contract:
 *   - safefs_open_base() opens an existing directory to create things in.  The
 *     path (a relative one from getcwd) is walked from "/" one component at a
 *     time with openat(O_NOFOLLOW): every component must be a directory owned
 *     by root, by our euid or by `owner2` (an account as trusted as root, e.g.
 *     Slurm's SlurmUser owning SlurmdSpoolDir; (uid_t)-1: none), and no
 *     ancestor may be writable by group or
 *     others unless it is sticky (a sticky /tmp is fine above a root-owned
 *     child).  A symlink on the way is followed (by us, at most 40) only when
 *     one of those owns it; its target is walked under the same rules.
 *     With SAFEFS_STRICT the directory itself must not be writable by group or
 *     others either (sticky or not): root serving another user never creates
 *     in a world-writable place like /tmp.  Returns an O_DIRECTORY fd.
 *   - safefs_mkdtemp() makes "<prefix>.<12 random hex digits>" inside such a
 *     base with mkdirat (never accepting EEXIST: a fresh name is drawn, at most
 *     SAFEFS_MKDTEMP_TRIES times), opens it with O_DIRECTORY|O_NOFOLLOW, checks
 *     with fstat that it is the directory we just made (ours, no group/other
 *     bits), and keeps both fds.  safefs_give() hands it to another uid/gid with
 *     fchown + fchmod through the fd (never by path).
 *   - safefs_remove() removes it and everything below: see safefs_rmtree_fd.
 *     It first checks that the base's entry still names the same directory
 *     (st_dev/st_ino), so it never removes what someone put in its place.
 *   - safefs_rmtree_fd(dirfd, name) removes one entry and everything below it
 *     walking with openat(O_NOFOLLOW|O_DIRECTORY), fdopendir and unlinkat,
 *     never a path: a symlink met or swapped in at any point is unlinked as a
 *     link, never followed.  Running as root, every directory is taken back
 *     (fchown 0:0, fchmod 0700) before it is read, so the user who owned it can
 *     add nothing more (even through an fd it holds): the tree is frozen top
 *     down.  It never crosses into another filesystem (st_dev) and stops
 *     SAFEFS_MAX_DEPTH levels down; what it cannot remove stays and is counted
 *     as an error.
 *
 * Notes:
 *   - Every call is libc-only and reentrant; the error text (err, errlen) is one
 *     line naming the path and the reason, for the caller's log.
 *   - Directory fds are O_CLOEXEC.
 */
#ifndef LOOM_SAFEFS_H
#define LOOM_SAFEFS_H

#include <stddef.h>
#include <sys/types.h>

#define SAFEFS_MAX_DEPTH 32     /* levels below the removed directory */
#define SAFEFS_MKDTEMP_TRIES 16 /* fresh names drawn after EEXIST */
#define SAFEFS_RAND_HEX 12      /* random hex digits in a name (48 bits) */
#define SAFEFS_PATH_MAX 4096

/* safefs_open_base flags */
#define SAFEFS_STRICT 1 /* the base itself must not be group/other writable */

struct safefs_dir {
    int base_fd; /* the base directory, or -1 */
    int fd;      /* the directory we made, or -1 */
    dev_t dev;   /* its identity, checked before removal */
    ino_t ino;
    char name[256];             /* its name in the base */
    char path[SAFEFS_PATH_MAX]; /* base (resolved) + "/" + name */
};

/* Open base for creating entries in it (rules above).  An fd, or -1 with errno
 * (EPERM: an untrusted owner or mode or symlink, ELOOP: too many
 * symlinks, ENOTDIR, ENAMETOOLONG, and what openat gives) and a message in err.
 * resolved (SAFEFS_PATH_MAX bytes, may be NULL) receives the path walked. */
int safefs_open_base(const char *base, int flags, uid_t owner2, char *resolved, char *err,
                     size_t errlen);

/* Make a fresh private directory "<prefix>.<random>" (mode 0700, owned by our
 * euid) in base (opened with safefs_open_base(base, flags, owner2)).  0, or -1
 * with errno and a message in err; d is then closed (fds -1). */
int safefs_mkdtemp(struct safefs_dir *d, const char *base, int flags, uid_t owner2,
                   const char *prefix, char *err, size_t errlen);

/* fchown(uid, gid) (only when it changes something) and fchmod(mode) of d's
 * directory through its fd.  0, or -1 with errno and a message in err. */
int safefs_give(struct safefs_dir *d, uid_t uid, gid_t gid, mode_t mode, char *err,
                size_t errlen);

/* Remove d's directory and its tree (if its entry still names it) and close
 * d's fds.  0, or -1 with errno of the first failure (what could not be
 * removed stays) and a message in err.  Safe on a closed or zeroed d (fd < 0
 * is "nothing to do"; a zeroed d must have fds set to -1 by safefs_dir_init). */
int safefs_remove(struct safefs_dir *d, char *err, size_t errlen);

/* A struct safefs_dir that owns nothing. */
void safefs_dir_init(struct safefs_dir *d);

/* Close d's fds without removing anything. */
void safefs_close(struct safefs_dir *d);

/* Remove entry name of directory dirfd and, if it is a directory, its tree
 * (rules above).  dev: the filesystem allowed (the dirfd's st_dev is used when
 * dev == (dev_t)-1).  0, or -1 with errno of the first failure. */
int safefs_rmtree_fd(int dirfd, const char *name, dev_t dev);

#endif /* LOOM_SAFEFS_H */
