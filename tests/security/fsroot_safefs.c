/* fsroot_safefs.c - common/safefs against a hostile local user, run as root.
 *
 * What it checks:
 *   - safefs_open_base: a world-writable base (/tmp) is refused in strict
 *     mode, a directory or a symlink of another uid on the way is refused and
 *     not followed (unless that uid is the one trusted account given), a
 *     root-owned symlink is followed.
 *   - safefs_mkdtemp: a fresh private directory (0700, root); with the random
 *     bytes made predictable (getrandom interposed below), a symlink or a
 *     foreign directory squatting every name is refused (EEXIST) and its
 *     target keeps its owner, mode and content; safefs_give hands the
 *     directory over by fd.
 *   - safefs_remove: symlinks inside the tree pointing out are removed as
 *     links; a mount point inside is not crossed; a depth bomb ends with an
 *     error, not a crash; an entry swapped for another directory is left alone.
 *   - The race (CVE-2023-41914's class): a racer swaps subdirectories for
 *     symlinks to a victim directory in a loop while the tree is removed; the
 *     victim's files must all survive.  Once with a root racer (the fd walk
 *     itself) and once with the tree given to uid 65534 and the racer running
 *     as that uid (the walk freezes the tree first).
 *
 * Build with -DFSROOT_OLD_RMTREE to run the race against the old removal
 * (nftw + remove by path, as pmixsrv.c had it): it must fail.
 * Exit: 0 pass, 1 fail, 77 skip (not root).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "safefs.h"

#define NOBODY 65534
#define NOTRUST ((uid_t)-1) /* no owner trusted beside root */
#define NSUB 64             /* subdirectories the racer swaps */
#define RACE_ROUNDS 30      /* trees removed under a racer */
#define RACE_ITERS 2000     /* racer swaps per round at most */
#define RACE_SECONDS 5      /* and seconds per round at most */

static int failures;
static char top[256]; /* everything this test makes is under it */

#define CHECK(cond, ...)                                                                 \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            failures++;                                                                  \
            fprintf(stderr, "FAIL: %s:%d: ", __FILE__, __LINE__);                        \
            fprintf(stderr, __VA_ARGS__);                                                \
            fputc('\n', stderr);                                                         \
        }                                                                                \
    } while (0)

/* getrandom interposed: predictable names when `fixed_random` is set */
static int fixed_random;
ssize_t getrandom(void *buf, size_t n, unsigned int flags)
{
    if (fixed_random) {
        memset(buf, 0xab, n);
        return (ssize_t)n;
    }
    return syscall(SYS_getrandom, buf, n, flags);
}

static int rm_cb(const char *p, const struct stat *sb, int f, struct FTW *w)
{
    (void)sb;
    (void)f;
    (void)w;
    remove(p);
    return 0;
}

/* the test's own cleanup of what it made under `top` (no other user acts then) */
static void rm_rf(const char *p)
{
    nftw(p, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

static void put_file(const char *path, const char *content, uid_t uid, mode_t mode)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    fputs(content, f);
    fclose(f);
    if (chown(path, uid, uid) < 0 || chmod(path, mode) < 0) {
        perror(path);
        exit(1);
    }
}

static void mk(const char *path, uid_t uid, mode_t mode)
{
    if (mkdir(path, mode) < 0 || chown(path, uid, uid) < 0 || chmod(path, mode) < 0) {
        perror(path);
        exit(1);
    }
}

/* Is the file intact: owner, mode, content? */
static int intact(const char *path, const char *content, uid_t uid, mode_t mode)
{
    char buf[256] = "";
    struct stat st;
    if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != uid ||
        (st.st_mode & 07777) != mode)
        return 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strcmp(buf, content) == 0;
}

/* ---- open_base --------------------------------------------------------------- */

static void test_open_base(void)
{
    char err[512], res[SAFEFS_PATH_MAX], p[512], q[512];
    int fd;

    fd = safefs_open_base("/tmp", SAFEFS_STRICT, NOTRUST, NULL, err, sizeof(err));
    CHECK(fd < 0 && errno == EPERM, "strict /tmp accepted");
    CHECK(fd >= 0 || strstr(err, "/tmp"), "no path in the message: %s", err);
    fd = safefs_open_base("/tmp", 0, NOTRUST, res, err, sizeof(err));
    CHECK(fd >= 0 && strcmp(res, "/tmp") == 0, "sticky /tmp refused: %s", err);
    if (fd >= 0)
        close(fd);

    /* a root-only base, then a foreign directory below it */
    snprintf(p, sizeof(p), "%s/base", top);
    mk(p, 0, 0755);
    fd = safefs_open_base(p, SAFEFS_STRICT, NOTRUST, res, err, sizeof(err));
    CHECK(fd >= 0 && strcmp(res, p) == 0, "root base refused: %s", err);
    if (fd >= 0)
        close(fd);
    snprintf(q, sizeof(q), "%s/base/theirs", top);
    mk(q, NOBODY, 0755);
    fd = safefs_open_base(q, 0, NOTRUST, NULL, err, sizeof(err));
    CHECK(fd < 0 && errno == EPERM, "a directory of uid %d accepted", NOBODY);
    fd = safefs_open_base(q, SAFEFS_STRICT, NOBODY, NULL, err, sizeof(err));
    CHECK(fd >= 0, "a directory of the trusted account refused: %s", err);
    if (fd >= 0)
        close(fd);
    snprintf(q, sizeof(q), "%s/base/theirs/sub", top);
    mk(q, 0, 0755);
    fd = safefs_open_base(q, 0, NOTRUST, NULL, err, sizeof(err));
    CHECK(fd < 0 && errno == EPERM, "a path through a directory of uid %d accepted",
          NOBODY);

    /* a symlink of another uid is not followed; one of root is */
    snprintf(q, sizeof(q), "%s/base/link", top);
    if (symlink(p, q) < 0 || lchown(q, NOBODY, NOBODY) < 0) {
        perror(q);
        exit(1);
    }
    fd = safefs_open_base(q, SAFEFS_STRICT, NOTRUST, NULL, err, sizeof(err));
    CHECK(fd < 0 && errno == EPERM, "a symlink of uid %d followed", NOBODY);
    CHECK(fd >= 0 || strstr(err, "symlink"), "message: %s", err);
    if (lchown(q, 0, 0) < 0)
        perror(q);
    fd = safefs_open_base(q, SAFEFS_STRICT, NOTRUST, res, err, sizeof(err));
    CHECK(fd >= 0 && strcmp(res, p) == 0, "root's symlink not followed: %s (%s)", err,
          res);
    if (fd >= 0)
        close(fd);

    /* group-writable, not sticky, on the way */
    snprintf(q, sizeof(q), "%s/base/gw", top);
    mk(q, 0, 0775);
    snprintf(q, sizeof(q), "%s/base/gw/sub", top);
    mk(q, 0, 0755);
    fd = safefs_open_base(q, 0, NOTRUST, NULL, err, sizeof(err));
    CHECK(fd < 0 && errno == EPERM, "a group-writable ancestor accepted");
}

/* ---- mkdtemp, give ----------------------------------------------------------- */

static void test_mkdtemp(void)
{
    char err[512], base[512], p[600], victim[600];
    struct safefs_dir d, d2;
    struct stat st;

    snprintf(base, sizeof(base), "%s/base", top);
    int rc = safefs_mkdtemp(&d, base, SAFEFS_STRICT, NOTRUST, "loom-pmix.1.0", err,
                            sizeof(err));
    CHECK(rc == 0, "mkdtemp: %s", err);
    if (rc < 0)
        return;
    CHECK(lstat(d.path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == 0 &&
              (st.st_mode & 07777) == 0700,
          "%s: not a root 0700 directory", d.path);
    CHECK(strncmp(d.name, "loom-pmix.1.0.", 14) == 0 &&
              strlen(d.name) == 14 + SAFEFS_RAND_HEX,
          "name %s", d.name);
    rc = safefs_mkdtemp(&d2, base, SAFEFS_STRICT, NOTRUST, "loom-pmix.1.0", err,
                        sizeof(err));
    CHECK(rc == 0 && strcmp(d.name, d2.name) != 0, "second name %s", d2.name);
    if (rc == 0)
        CHECK(safefs_remove(&d2, err, sizeof(err)) == 0, "remove: %s", err);

    CHECK(safefs_give(&d, NOBODY, NOBODY, 0700, err, sizeof(err)) == 0, "give: %s", err);
    CHECK(lstat(d.path, &st) == 0 && st.st_uid == NOBODY && st.st_gid == NOBODY &&
              (st.st_mode & 07777) == 0700,
          "%s not handed over", d.path);
    CHECK(safefs_remove(&d, err, sizeof(err)) == 0, "remove: %s", err);
    CHECK(lstat(d.path, &st) < 0 && errno == ENOENT, "%s left", d.path);

    /* predictable names: a squatter takes them first */
    fixed_random = 1;
    char fixed[64];
    memset(fixed, 0, sizeof(fixed));
    for (int i = 0; i < SAFEFS_RAND_HEX; i++)
        fixed[i] = i % 2 ? 'b' : 'a';
    snprintf(victim, sizeof(victim), "%s/victim", top);
    mk(victim, NOBODY, 0755);
    snprintf(p, sizeof(p), "%s/victim/file", top);
    put_file(p, "victim\n", NOBODY, 0644);
    snprintf(p, sizeof(p), "%s/squat.%s", base, fixed);
    if (symlink(victim, p) < 0) {
        perror(p);
        exit(1);
    }
    rc = safefs_mkdtemp(&d, base, SAFEFS_STRICT, NOTRUST, "squat", err, sizeof(err));
    CHECK(rc < 0 && errno == EEXIST, "a symlink at the name accepted");
    CHECK(rc == 0 || strstr(err, "taken"), "message: %s", err);
    if (rc == 0)
        safefs_close(&d);
    CHECK(lstat(victim, &st) == 0 && st.st_uid == NOBODY && (st.st_mode & 07777) == 0755,
          "the symlink's target changed");
    snprintf(p, sizeof(p), "%s/victim/file", top);
    CHECK(intact(p, "victim\n", NOBODY, 0644), "the victim's file changed");

    snprintf(p, sizeof(p), "%s/theirs.%s", base, fixed);
    mk(p, NOBODY, 0777);
    rc = safefs_mkdtemp(&d, base, SAFEFS_STRICT, NOTRUST, "theirs", err, sizeof(err));
    CHECK(rc < 0 && errno == EEXIST, "a foreign directory at the name accepted");
    if (rc == 0)
        safefs_close(&d);
    CHECK(lstat(p, &st) == 0 && st.st_uid == NOBODY && (st.st_mode & 07777) == 0777,
          "the foreign directory changed");
    fixed_random = 0;
}

/* ---- remove ------------------------------------------------------------------ */

static void make_victim(const char *victim)
{
    char p[600];
    mk(victim, NOBODY, 0755);
    for (int k = 0; k < 4; k++) {
        snprintf(p, sizeof(p), "%s/f%d", victim, k);
        put_file(p, "precious\n", NOBODY, 0644);
    }
}

static int victim_intact(const char *victim)
{
    char p[600];
    struct stat st;
    if (lstat(victim, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != NOBODY ||
        (st.st_mode & 07777) != 0755)
        return 0;
    for (int k = 0; k < 4; k++) {
        snprintf(p, sizeof(p), "%s/f%d", victim, k);
        if (!intact(p, "precious\n", NOBODY, 0644))
            return 0;
    }
    return 1;
}

static void test_remove_links(void)
{
    char err[512], base[512], p[SAFEFS_PATH_MAX + 32], victim[600];
    struct safefs_dir d;
    struct stat st;

    snprintf(base, sizeof(base), "%s/base", top);
    snprintf(victim, sizeof(victim), "%s/victim2", top);
    make_victim(victim);
    if (safefs_mkdtemp(&d, base, SAFEFS_STRICT, NOTRUST, "links", err, sizeof(err)) < 0) {
        CHECK(0, "mkdtemp: %s", err);
        return;
    }
    safefs_give(&d, NOBODY, NOBODY, 0700, err, sizeof(err));
    snprintf(p, sizeof(p), "%s/a", d.path);
    mk(p, NOBODY, 0700);
    snprintf(p, sizeof(p), "%s/a/b", d.path);
    mk(p, NOBODY, 0500); /* one its owner made unwritable */
    snprintf(p, sizeof(p), "%s/a/tovictim", d.path);
    CHECK(symlink(victim, p) == 0, "symlink");
    snprintf(p, sizeof(p), "%s/tofile", d.path);
    CHECK(symlink("../victim2/f0", p) == 0, "symlink");
    snprintf(p, sizeof(p), "%s/a/f", d.path);
    put_file(p, "x", NOBODY, 0600);
    char path[SAFEFS_PATH_MAX];
    snprintf(path, sizeof(path), "%s", d.path);
    CHECK(safefs_remove(&d, err, sizeof(err)) == 0, "remove: %s", err);
    CHECK(lstat(path, &st) < 0 && errno == ENOENT, "%s left", path);
    CHECK(victim_intact(victim), "a symlink inside was followed");
}

static void test_remove_mount(void)
{
    char err[512], base[512], p[SAFEFS_PATH_MAX + 32], path[SAFEFS_PATH_MAX];
    struct safefs_dir d;

    snprintf(base, sizeof(base), "%s/base", top);
    if (safefs_mkdtemp(&d, base, SAFEFS_STRICT, NOTRUST, "mnt", err, sizeof(err)) < 0) {
        CHECK(0, "mkdtemp: %s", err);
        return;
    }
    snprintf(p, sizeof(p), "%s/m", d.path);
    mk(p, 0, 0755);
    if (mount("fsroot", p, "tmpfs", 0, "size=64k") < 0) {
        fprintf(stderr, "note: no tmpfs mount (%s): mount point case skipped\n",
                strerror(errno));
        safefs_remove(&d, err, sizeof(err));
        return;
    }
    char f[SAFEFS_PATH_MAX + 64];
    snprintf(f, sizeof(f), "%s/keep", p);
    put_file(f, "other fs\n", NOBODY, 0644);
    snprintf(path, sizeof(path), "%s", d.path);
    int rc = safefs_remove(&d, err, sizeof(err));
    CHECK(rc < 0 && errno == EXDEV, "a mount point was not refused (rc %d): %s", rc, err);
    CHECK(intact(f, "other fs\n", NOBODY, 0644), "a file on another filesystem removed");
    umount2(p, MNT_DETACH);
    rm_rf(path);
}

static void test_remove_deep_and_stale(void)
{
    char err[512], base[512], p[SAFEFS_PATH_MAX + 8], path[SAFEFS_PATH_MAX];
    struct safefs_dir d;
    struct stat st;

    snprintf(base, sizeof(base), "%s/base", top);
    if (safefs_mkdtemp(&d, base, SAFEFS_STRICT, NOTRUST, "deep", err, sizeof(err)) < 0) {
        CHECK(0, "mkdtemp: %s", err);
        return;
    }
    snprintf(path, sizeof(path), "%s", d.path);
    /* two chains too deep: the failure of the first must not hide the second's
     * (a walk that retried what failed would take 4^depth passes) */
    for (int c = 0; c < 2; c++) {
        int fd = dup(d.fd);
        for (int i = 0; i < SAFEFS_MAX_DEPTH + 8; i++) {
            int nfd;
            const char *nm = i ? "d" : c ? "b" : "a";
            if (mkdirat(fd, nm, 0700) < 0 || (nfd = openat(fd, nm, O_RDONLY)) < 0) {
                perror("mkdirat");
                exit(1);
            }
            close(fd);
            fd = nfd;
        }
        close(fd);
    }
    time_t t0 = time(NULL);
    int rc = safefs_remove(&d, err, sizeof(err));
    CHECK(rc < 0 && errno == ELOOP, "a tree deeper than %d: rc %d errno %d",
          SAFEFS_MAX_DEPTH, rc, errno);
    CHECK(time(NULL) - t0 < 20, "a tree too deep took %ld s", (long)(time(NULL) - t0));
    rm_rf(path);

    /* the entry swapped for another directory: left alone */
    if (safefs_mkdtemp(&d, base, SAFEFS_STRICT, NOTRUST, "stale", err, sizeof(err)) < 0) {
        CHECK(0, "mkdtemp: %s", err);
        return;
    }
    snprintf(p, sizeof(p), "%s.moved", d.path);
    if (rename(d.path, p) < 0 || mkdir(d.path, 0755) < 0) {
        perror(d.path);
        exit(1);
    }
    snprintf(path, sizeof(path), "%s", d.path);
    rc = safefs_remove(&d, err, sizeof(err));
    CHECK(rc < 0 && errno == ESTALE, "a swapped entry was not refused");
    CHECK(lstat(path, &st) == 0 && S_ISDIR(st.st_mode), "the other directory removed");
    rm_rf(path);
    rm_rf(p);
}

/* ---- the race ---------------------------------------------------------------- */

#ifdef FSROOT_OLD_RMTREE
/* the removal pmixsrv.c had before safefs */
static int old_rm_entry(const char *path, const struct stat *sb, int flag,
                        struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}
#endif

static void fill_tree(const char *dir, uid_t uid)
{
    char p[SAFEFS_PATH_MAX + 32];
    for (int k = 0; k < NSUB; k++) {
        snprintf(p, sizeof(p), "%s/s%d", dir, k);
        mk(p, uid, 0700);
        for (int f = 0; f < 4; f++) {
            snprintf(p, sizeof(p), "%s/s%d/f%d", dir, k, f);
            put_file(p, "junk", uid, 0600);
        }
    }
}

/* swap s<k> for a symlink to victim and back, in a loop, until killed or done */
static void racer(const char *dir, const char *victim)
{
    char s[SAFEFS_PATH_MAX + 16], h[SAFEFS_PATH_MAX + 16];
    time_t end = time(NULL) + RACE_SECONDS;
    for (int i = 0; i < RACE_ITERS && time(NULL) <= end; i++) {
        int k = i % NSUB;
        snprintf(s, sizeof(s), "%s/s%d", dir, k);
        snprintf(h, sizeof(h), "%s/h%d", dir, k);
        if (rename(s, h) == 0) {
            if (symlink(victim, s) < 0 && errno == EACCES)
                _exit(0); /* frozen: nothing more to try */
            for (volatile int spin = 0; spin < 2000; spin++)
                ;
            unlink(s);
            rename(h, s);
        } else if (errno == EACCES || access(dir, F_OK) < 0) {
            _exit(0); /* frozen, or gone */
        }
    }
    _exit(0);
}

static void race(int as_nobody)
{
    char err[512], base[512], victim[600], path[SAFEFS_PATH_MAX];
    int lost = 0, rounds = 0;

    snprintf(base, sizeof(base), "%s/base", top);
    snprintf(victim, sizeof(victim), "%s/victim-race%d", top, as_nobody);
    for (int r = 0; r < RACE_ROUNDS; r++) {
        struct safefs_dir d;
        rm_rf(victim);
        make_victim(victim);
        /* victim files named like the tree's: f0..f3 */
        if (safefs_mkdtemp(&d, base, SAFEFS_STRICT, NOTRUST, "race", err, sizeof(err)) <
            0) {
            CHECK(0, "mkdtemp: %s", err);
            return;
        }
        uid_t u = as_nobody ? NOBODY : 0;
        safefs_give(&d, u, u, 0700, err, sizeof(err));
        fill_tree(d.path, u);
        snprintf(path, sizeof(path), "%s", d.path);
        pid_t pid = fork();
        if (pid == 0) {
            if (as_nobody &&
                (setgroups(0, NULL) < 0 || setgid(NOBODY) < 0 || setuid(NOBODY) < 0))
                _exit(2);
            racer(path, victim);
        }
        usleep(2000); /* let it get going */
#ifdef FSROOT_OLD_RMTREE
        nftw(path, old_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        safefs_close(&d);
#else
        safefs_remove(&d, err, sizeof(err));
#endif
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        rounds++;
        if (!victim_intact(victim)) {
            lost++;
            break;
        }
        rm_rf(path); /* what the racer may have put back after the removal */
    }
    CHECK(!lost, "%s racer: a file outside the tree was removed (round %d of %d)",
          as_nobody ? "uid 65534" : "root", rounds, RACE_ROUNDS);
    if (!lost)
        printf("ok: %s racer: %d rounds, victim intact\n",
               as_nobody ? "uid 65534" : "root", rounds);
    rm_rf(victim);
}

int main(void)
{
    if (geteuid() != 0) {
        printf("SKIP: fsroot_safefs must run as root (it uses a second uid)\n");
        return 77;
    }
    umask(022);
    alarm(600); /* a hang is a failure (SIGALRM ends the test) */
    snprintf(top, sizeof(top), "/tmp/fsroot-safefs.XXXXXX");
    if (!mkdtemp(top)) {
        perror("mkdtemp");
        return 1;
    }
    chmod(top, 0755);
#ifndef FSROOT_OLD_RMTREE
    test_open_base();
    test_mkdtemp();
    test_remove_links();
    test_remove_mount();
    test_remove_deep_and_stale();
#else
    char p[512];
    snprintf(p, sizeof(p), "%s/base", top);
    mk(p, 0, 0755);
#endif
    race(0);
    race(1);
    rm_rf(top);
    if (failures) {
        printf("FAIL: fsroot_safefs: %d check(s) failed\n", failures);
        return 1;
    }
    printf("PASS: fsroot_safefs\n");
    return 0;
}
