/*
 * file.c - MPI-IO engine on POSIX files: collective open/close/delete, hints, the
 *          file view (filetype flattened into sorted byte regions), the mapping of an
 *          access onto file pieces, independent access (data sieving, atomic-mode
 *          fcntl locks), external32 conversion and the shared file pointer.
 * Collective buffering (the _all calls' two-phase I/O) is in twophase.c.
 * See io.h for the contract.  One piece (just over 800 lines): open, the view mapping,
 * independent access and the shared pointer share the region tables, the fcntl lock
 * helper and the error mapping; splitting them would export those for one caller each.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io.h"
#include "../coll/coll.h"
#include "../core/comm.h"
#include "../dt/dtype.h"

int xm_io_errno_class(int e)
{
    switch (e) {
    case 0: return MPI_SUCCESS;
    case ENOENT: return MPI_ERR_NO_SUCH_FILE;
    case EEXIST: return MPI_ERR_FILE_EXISTS;
    case EACCES: case EPERM: return MPI_ERR_ACCESS;
    case EROFS: return MPI_ERR_READ_ONLY;
    case ENOSPC: case EFBIG: return MPI_ERR_NO_SPACE;
    case EDQUOT: return MPI_ERR_QUOTA;
    case EISDIR: case ENOTDIR: case ENAMETOOLONG: case ELOOP: case EINVAL:
        return MPI_ERR_BAD_FILE;
    case ETXTBSY: case EBUSY: return MPI_ERR_FILE_IN_USE;
    case ENOMEM: return MPI_ERR_NO_MEM;
    default: return MPI_ERR_IO;
    }
}

/* "ufs:/path", "nfs:/path" ...: ROMIO's file-system prefixes name the driver; there
 * is one (POSIX) here, so the prefix is dropped. */
static const char *strip_prefix(const char *name)
{
    const char *c = strchr(name, ':');
    if (!c || c - name < 2 || c[1] == '\0')
        return name;
    for (const char *p = name; p < c; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
            return name;
    return c + 1;
}

/* ---- hints -------------------------------------------------------------------------- */
static void hints_default(struct xm_io_hints *h)
{
    memset(h, 0, sizeof(*h));
    h->cb_buffer_size = 16L << 20;
    h->cb_nodes = 0;
    h->cb_write = h->cb_read = 2;
    h->ds_read = h->ds_write = 2;
    h->ind_rd_buffer_size = 4L << 20;
    h->ind_wr_buffer_size = 512L << 10;
}

static int tri(const char *v, int dflt)
{
    if (!strcmp(v, "enable") || !strcmp(v, "true"))
        return 1;
    if (!strcmp(v, "disable") || !strcmp(v, "false"))
        return 0;
    if (!strcmp(v, "automatic"))
        return 2;
    return dflt;
}

void xm_io_hints_from_info(struct xm_io_hints *h, MPI_Info info)
{
    struct xm_info *in = info == MPI_INFO_NULL ? NULL : xm_info_get(info);
    if (!in)
        return;
    const char *v;
    long x;
#define GETV(key) ((v = xm_info_value(in, key)) != NULL)
    if (GETV("cb_buffer_size") && (x = atol(v)) > 0)
        h->cb_buffer_size = x;
    if (GETV("cb_nodes") && (x = atol(v)) > 0)
        h->cb_nodes = (int)(x > INT_MAX ? INT_MAX : x);
    if (GETV("romio_cb_write"))
        h->cb_write = tri(v, h->cb_write);
    if (GETV("romio_cb_read"))
        h->cb_read = tri(v, h->cb_read);
    if (GETV("romio_no_indep_rw"))
        h->no_indep_rw = tri(v, h->no_indep_rw) == 1;
    if (GETV("romio_ds_read"))
        h->ds_read = tri(v, h->ds_read);
    if (GETV("romio_ds_write"))
        h->ds_write = tri(v, h->ds_write);
    if (GETV("ind_rd_buffer_size") && (x = atol(v)) > 0)
        h->ind_rd_buffer_size = x;
    if (GETV("ind_wr_buffer_size") && (x = atol(v)) > 0)
        h->ind_wr_buffer_size = x;
    if (GETV("striping_unit") && (x = atol(v)) > 0)
        h->striping_unit = x;
    if (GETV("striping_factor") && (x = atol(v)) > 0)
        h->striping_factor = (int)(x > INT_MAX ? INT_MAX : x);
#undef GETV
}

static const char *tri_name(int v)
{
    return v == 1 ? "enable" : v == 0 ? "disable" : "automatic";
}

int xm_io_hints_to_info(const struct xm_file *f, MPI_Info *info)
{
    const struct xm_io_hints *h = &f->hints;
    char v[64];
    if (xm_info_new(info))
        return MPI_ERR_NO_MEM;
    struct xm_info *in = xm_info_get(*info);
    int rc = 0;
#define SETV(key, ...)                                                                   \
    (snprintf(v, sizeof v, __VA_ARGS__), rc = rc ? rc : xm_info_set(in, key, v))
    SETV("cb_buffer_size", "%ld", h->cb_buffer_size);
    SETV("cb_nodes", "%d", h->cb_nodes);
    SETV("romio_cb_write", "%s", tri_name(h->cb_write));
    SETV("romio_cb_read", "%s", tri_name(h->cb_read));
    SETV("romio_no_indep_rw", "%s", h->no_indep_rw ? "true" : "false");
    SETV("romio_ds_read", "%s", tri_name(h->ds_read));
    SETV("romio_ds_write", "%s", tri_name(h->ds_write));
    SETV("ind_rd_buffer_size", "%ld", h->ind_rd_buffer_size);
    SETV("ind_wr_buffer_size", "%ld", h->ind_wr_buffer_size);
    if (h->striping_unit)
        SETV("striping_unit", "%ld", h->striping_unit);
    if (h->striping_factor)
        SETV("striping_factor", "%d", h->striping_factor);
#undef SETV
    if (rc == 0) /* a value MPI_Info_set takes: a longer name fails the call */
        rc = strlen(f->path) > MPI_MAX_INFO_VAL ? -E2BIG
                                                : xm_info_set(in, "filename", f->path);
    if (rc) {
        xm_info_free(*info);
        *info = MPI_INFO_NULL;
    }
    return rc == -E2BIG ? MPI_ERR_INFO_VALUE : rc ? MPI_ERR_NO_MEM : MPI_SUCCESS;
}

/* the default cb_nodes: two aggregators per node of c (one on a node with one rank).
 * One aggregator leaves the node's second CPU idle while it copies a round into the
 * page cache; two halve the domains and write them side by side (bench/mpi/io.sh: the
 * 2-D array write at 64 ranks went from 75 to 128 MiB/s). */
static int count_nodes(struct xm_comm *c)
{
    int n = 0;
    for (int r = 0; r < c->size; r++) {
        int node = xm_g.node_of ? xm_g.node_of[xm_comm_world_rank(c, r)] : 0, before = 0;
        for (int q = 0; q < r && before < 2; q++)
            before += (xm_g.node_of ? xm_g.node_of[xm_comm_world_rank(c, q)] : 0) == node;
        n += before < 2;
    }
    return n ? n : 1;
}

/* ---- open / close / delete ------------------------------------------------------------ */
static int open_fd(const char *path, int amode, int creat, int *readable)
{
    int fl = 0;
    if (creat && (amode & MPI_MODE_CREATE))
        fl |= O_CREAT;
    if (creat && (amode & MPI_MODE_EXCL))
        fl |= O_EXCL;
    *readable = 1;
    if (amode & MPI_MODE_RDONLY)
        return open(path, fl | O_RDONLY | O_CLOEXEC, 0666);
    int fd = open(path, fl | O_RDWR | O_CLOEXEC, 0666);
    if (fd < 0 && (amode & MPI_MODE_WRONLY) && errno == EACCES) {
        *readable = 0; /* write-only file: no read-modify-write (sieving off) */
        fd = open(path, fl | O_WRONLY | O_CLOEXEC, 0666);
    }
    return fd;
}

/* the shared pointer's side file: next to the data file so every node sees it */
static int make_shfp(const char *path, char **out)
{
    static unsigned seq;
    const char *slash = strrchr(path, '/');
    int dl = slash ? (int)(slash - path + 1) : 0;
    char *p = NULL;
    if (asprintf(&p, "%.*s.%s.shfp.%ld.%u", dl, path, slash ? slash + 1 : path,
                 (long)getpid(), seq++) < 0)
        return -ENOMEM;
    int fd = open(p, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) { /* directory not writable: a node-local side file */
        free(p);
        const char *tmp = getenv("TMPDIR");
        if (asprintf(&p, "%s/loom-mpi-shfp.%ld.%u", tmp && *tmp ? tmp : "/tmp",
                     (long)getpid(), seq++) < 0)
            return -ENOMEM;
        fd = open(p, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
        if (fd < 0) {
            free(p);
            return -errno;
        }
    }
    *out = p;
    return fd;
}

static void free_view(struct xm_file *f)
{
    free(f->roff);
    free(f->rlen);
    free(f->rpos);
    f->roff = NULL;
    f->rlen = f->rpos = NULL;
    struct xm_dtype *t;
    if (!XM_DT_IS_PREDEF(f->etype) && (t = xm_dt_get(f->etype)))
        xm_dt_unref(t);
    if (!XM_DT_IS_PREDEF(f->filetype) && (t = xm_dt_get(f->filetype)))
        xm_dt_unref(t);
    f->etype = f->filetype = MPI_BYTE;
}

static void destroy(struct xm_file *f)
{
    if (f->fd >= 0)
        close(f->fd);
    if (f->shfp_fd >= 0)
        close(f->shfp_fd);
    free_view(f);
    free(f->path);
    free(f->shfp_path);
    if (f->comm)
        xm_comm_unref(f->comm);
    free(f);
}

int xm_io_open(struct xm_comm *c, const char *name, int amode, MPI_Info info,
               struct xm_file **out)
{
    struct xm_file *f = calloc(1, sizeof(*f));
    if (!f)
        return MPI_ERR_NO_MEM;
    f->fd = f->shfp_fd = -1;
    f->etype = f->filetype = MPI_BYTE;
    /* a private communicator: the file's collectives never meet the user's traffic */
    uint32_t ctx;
    int rc = xm_ctx_alloc(c, &ctx);
    if (rc < 0) {
        free(f);
        return MPI_ERR_INTERN;
    }
    int *w = malloc((size_t)c->size * sizeof(int));
    if (w)
        for (int i = 0; i < c->size; i++)
            w[i] = xm_comm_world_rank(c, i);
    f->comm = w ? xm_comm_new(c->size, w, ctx, c) : NULL;
    if (!f->comm) {
        xm_ctx_release(ctx);
        free(f);
        return MPI_ERR_NO_MEM;
    }
    f->comm->errh = MPI_ERRORS_RETURN;
    c = f->comm;
    f->amode = amode;
    f->errh = MPI_ERRORS_RETURN;
    hints_default(&f->hints);
    xm_io_hints_from_info(&f->hints, info);
    if (!f->hints.cb_nodes)
        f->hints.cb_nodes = count_nodes(c);
    if (f->hints.cb_nodes > c->size)
        f->hints.cb_nodes = c->size;
    strncpy(f->datarep, "native", sizeof f->datarep);
    f->esize = f->fsize = 1;
    f->fextent = 1;
    f->path = strdup(strip_prefix(name));
    if (!f->path) {
        destroy(f);
        return MPI_ERR_NO_MEM;
    }

    /* rank 0 creates (and makes the shared pointer's side file), then the others open */
    int err = 0;
    char shname[PATH_MAX + 64];
    memset(shname, 0, sizeof shname);
    if (c->rank == 0) {
        f->fd = open_fd(f->path, amode, 1, &f->readable);
        if (f->fd < 0) {
            err = xm_io_errno_class(errno);
        } else {
            char *sp = NULL;
            int sfd = make_shfp(f->path, &sp);
            if (sfd < 0) {
                err = xm_io_errno_class(-sfd);
            } else {
                f->shfp_fd = sfd;
                f->shfp_path = sp;
                snprintf(shname, sizeof shname, "%s", sp);
                struct stat st;
                if ((amode & MPI_MODE_APPEND) && fstat(f->fd, &st) == 0)
                    err = xm_io_shfp_set(f, st.st_size); /* before anyone can read it */
            }
        }
    }
    rc = xm_icoll_bcast(&err, 1, MPI_INT, 0, c, NULL);
    if (rc == 0 && !err)
        rc = xm_icoll_bcast(shname, (int)sizeof shname, MPI_CHAR, 0, c, NULL);
    if (rc < 0)
        err = MPI_ERR_INTERN;
    if (!err && c->rank != 0) {
        f->fd = open_fd(f->path, amode, 0, &f->readable);
        if (f->fd < 0)
            err = xm_io_errno_class(errno);
        else if ((f->shfp_fd = open(shname, O_RDWR | O_CLOEXEC)) < 0)
            err = xm_io_errno_class(errno);
    }
    int gerr = err;
    if (xm_icoll_allreduce(&err, &gerr, 1, MPI_INT, MPI_MAX, c, NULL) < 0)
        gerr = MPI_ERR_INTERN;
    if (gerr) {
        if (c->rank == 0 && f->shfp_path)
            unlink(f->shfp_path);
        destroy(f);
        return gerr;
    }
    if (amode & MPI_MODE_APPEND) {
        struct stat st;
        if (fstat(f->fd, &st) == 0)
            f->fp = st.st_size;
    }
    *out = f;
    return MPI_SUCCESS;
}

int xm_io_close(struct xm_file *f)
{
    struct xm_comm *c = f->comm;
    if (xm_env_int("LOOM_MPI_IO_STATS", 0))
        fprintf(stderr, "loom-mpi: rank %d: MPI-IO %s: %lu write calls, %lu read calls, "
                "%lu two-phase rounds\n", xm_g.rank, f->path, f->n_write, f->n_read,
                f->n_rounds);
    int rc = xm_icoll_barrier(c, NULL) < 0 ? MPI_ERR_INTERN : MPI_SUCCESS;
    if (c->rank == 0) {
        if (f->shfp_path)
            unlink(f->shfp_path);
        if ((f->amode & MPI_MODE_DELETE_ON_CLOSE) && unlink(f->path) < 0 && !rc)
            rc = xm_io_errno_class(errno);
    }
    if (f->fd >= 0 && close(f->fd) < 0 && !rc)
        rc = MPI_ERR_IO;
    f->fd = -1;
    destroy(f);
    return rc;
}

int xm_io_delete(const char *name)
{
    return unlink(strip_prefix(name)) < 0 ? xm_io_errno_class(errno) : MPI_SUCCESS;
}

int xm_io_file_size(struct xm_file *f, MPI_Offset *size)
{
    struct stat st;
    if (fstat(f->fd, &st) < 0)
        return MPI_ERR_IO;
    *size = st.st_size;
    return MPI_SUCCESS;
}

/* ---- views ------------------------------------------------------------------------------ */
/* external32 on this (little-endian) host: every basic type whose external32 size is
 * its native size is byte-swapped in place; the others are refused. */
static int ext32_ok(void *ctx, char *addr, MPI_Datatype h)
{
    (void)ctx;
    (void)addr;
    switch (h) {
    case MPI_LONG: case MPI_UNSIGNED_LONG: case MPI_WCHAR: case MPI_LONG_DOUBLE:
    case MPI_C_LONG_DOUBLE_COMPLEX:
        return MPI_ERR_CONVERSION;
    default:
        return 0;
    }
}

struct conv {
    char *stream;
    size_t pos;
    int to_stream;
};

static int ext32_conv(void *vctx, char *addr, MPI_Datatype h)
{
    struct conv *x = vctx;
    size_t n = XM_DT_SIZE(h), unit = n;
    if (h == MPI_C_COMPLEX || h == MPI_C_FLOAT_COMPLEX || h == MPI_C_DOUBLE_COMPLEX ||
        h == MPI_COMPLEX || h == MPI_DOUBLE_COMPLEX)
        unit = n / 2;
    unsigned char *s = (unsigned char *)x->stream + x->pos, *m = (unsigned char *)addr;
    for (size_t u = 0; u < n; u += unit)
        for (size_t b = 0; b < unit; b++) {
            if (x->to_stream)
                s[u + b] = m[u + unit - 1 - b];
            else
                m[u + unit - 1 - b] = s[u + b];
        }
    x->pos += n;
    return 0;
}

static int ext32_check(const struct xm_dtype *t)
{
    return xm_dt_visit(NULL, 1, t, ext32_ok, NULL) ? MPI_ERR_CONVERSION : MPI_SUCCESS;
}

int xm_io_set_view(struct xm_file *f, MPI_Offset disp, MPI_Datatype etype,
                   MPI_Datatype filetype, const char *datarep)
{
    struct xm_dtype *et = xm_dt_get(etype), *ft = xm_dt_get(filetype);
    int ext32 = 0;
    const struct xm_datarep *udr = NULL;
    if (!strcmp(datarep, "native") || !strcmp(datarep, "internal"))
        ext32 = 0;
    else if (!strcmp(datarep, "external32"))
        ext32 = 1;
    else if (!(udr = xm_io_datarep_find(datarep)))
        return MPI_ERR_UNSUPPORTED_DATAREP;
    if (!et->size || !ft->size || ft->size % et->size || ft->extent <= 0)
        return MPI_ERR_TYPE;
    if (ext32 && (ext32_check(et) || ext32_check(ft)))
        return MPI_ERR_UNSUPPORTED_DATAREP;
    if (udr) { /* (io/datarep.c) the view's layout needs native-sized file extents */
        int rc = xm_io_datarep_check(udr, et);
        if (!rc)
            rc = xm_io_datarep_check(udr, ft);
        if (rc)
            return rc;
    }
    /* expand the flattened blocks into regions in type-map order; they must not go
     * backwards (MPI-3.1 §13.3: nonnegative, monotonically nondecreasing).  A layout
     * that breaks this is MPI_ERR_IO, the class ROMIO gives it (the type itself is a
     * valid datatype, so not MPI_ERR_TYPE) */
    size_t n = 0;
    for (int b = 0; b < ft->nblocks; b++)
        n += ft->blocks[b].count;
    if (ft->contig && ft->extent == (MPI_Aint)ft->size)
        n = 1;
    MPI_Offset *roff = malloc((n ? n : 1) * sizeof(*roff));
    size_t *rlen = malloc((n ? n : 1) * sizeof(*rlen)), *rpos = malloc((n + 1) * sizeof(*rpos));
    if (!roff || !rlen || !rpos) {
        free(roff);
        free(rlen);
        free(rpos);
        return MPI_ERR_NO_MEM;
    }
    int nreg = 0;
    size_t pos = 0;
    if (ft->contig && ft->extent == (MPI_Aint)ft->size) {
        roff[0] = ft->true_lb;
        rlen[0] = ft->size;
        rpos[0] = 0;
        nreg = 1;
        pos = ft->size;
    } else {
        for (int b = 0; b < ft->nblocks; b++) {
            const struct xm_dt_block *bl = &ft->blocks[b];
            for (size_t k = 0; k < bl->count; k++) {
                MPI_Offset o = bl->disp + (MPI_Aint)k * bl->stride;
                if (!bl->len)
                    continue;
                if (nreg && roff[nreg - 1] + (MPI_Offset)rlen[nreg - 1] == o) {
                    rlen[nreg - 1] += bl->len;
                } else {
                    if (o < 0 || (nreg && o < roff[nreg - 1] + (MPI_Offset)rlen[nreg - 1])) {
                        free(roff);
                        free(rlen);
                        free(rpos);
                        return MPI_ERR_IO;
                    }
                    roff[nreg] = o;
                    rlen[nreg] = bl->len;
                    rpos[nreg] = pos;
                    nreg++;
                }
                pos += bl->len;
            }
        }
    }
    rpos[nreg] = pos;
    if (pos != ft->size || (nreg && roff[nreg - 1] + (MPI_Offset)rlen[nreg - 1] >
                                        roff[0] + (MPI_Offset)ft->extent)) {
        /* blocks disagree with the size, or a tile would overlap the next one */
        free(roff);
        free(rlen);
        free(rpos);
        return MPI_ERR_IO;
    }
    free_view(f);
    if (!XM_DT_IS_PREDEF(etype))
        xm_dt_ref(et);
    if (!XM_DT_IS_PREDEF(filetype))
        xm_dt_ref(ft);
    f->etype = etype;
    f->filetype = filetype;
    f->disp = disp;
    f->esize = et->size;
    f->fsize = ft->size;
    f->fextent = ft->extent;
    f->nreg = nreg;
    f->roff = roff;
    f->rlen = rlen;
    f->rpos = rpos;
    f->ext32 = ext32;
    f->udr = udr;
    snprintf(f->datarep, sizeof f->datarep, "%s", datarep);
    f->fp = 0;
    return MPI_SUCCESS;
}

/* region of a packed position r inside one tile */
static int region_of(const struct xm_file *f, size_t r)
{
    int lo = 0, hi = f->nreg - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (f->rpos[mid] <= r)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

MPI_Offset xm_io_view_to_file(const struct xm_file *f, MPI_Offset pos)
{
    if (!f->roff) /* default view: bytes */
        return f->disp + pos;
    MPI_Offset tile = pos / (MPI_Offset)f->fsize;
    size_t r = (size_t)(pos % (MPI_Offset)f->fsize);
    int j = region_of(f, r);
    return f->disp + tile * f->fextent + f->roff[j] + (MPI_Offset)(r - f->rpos[j]);
}

MPI_Offset xm_io_file_to_view(const struct xm_file *f, MPI_Offset off)
{
    MPI_Offset s = off - f->disp;
    if (s <= 0)
        return 0;
    if (!f->roff)
        return s;
    MPI_Offset tile = s / f->fextent, rem = s % f->fextent, pos = tile * (MPI_Offset)f->fsize;
    for (int j = 0; j < f->nreg; j++) {
        MPI_Offset in = rem - f->roff[j];
        if (in <= 0)
            break;
        pos += in < (MPI_Offset)f->rlen[j] ? in : (MPI_Offset)f->rlen[j];
    }
    return pos;
}

/* the file pieces of packed bytes [pos0, pos0 + n) of the view, merged when adjacent */
static int make_pieces(const struct xm_file *f, MPI_Offset pos0, size_t n,
                       struct xm_io_piece **out, int *np)
{
    int cap = 16, k = 0;
    struct xm_io_piece *p = malloc((size_t)cap * sizeof(*p));
    if (!p)
        return MPI_ERR_NO_MEM;
    size_t done = 0;
    while (done < n) {
        MPI_Offset pos = pos0 + (MPI_Offset)done, off;
        size_t len;
        if (!f->roff) {
            off = f->disp + pos;
            len = n - done;
        } else {
            MPI_Offset tile = pos / (MPI_Offset)f->fsize;
            size_t r = (size_t)(pos % (MPI_Offset)f->fsize);
            int j = region_of(f, r);
            off = f->disp + tile * f->fextent + f->roff[j] + (MPI_Offset)(r - f->rpos[j]);
            len = f->rlen[j] - (r - f->rpos[j]);
            if (len > n - done)
                len = n - done;
        }
        if (k && p[k - 1].off + (MPI_Offset)p[k - 1].len == off) {
            p[k - 1].len += len;
        } else {
            if (k == cap) {
                struct xm_io_piece *q = realloc(p, (size_t)(cap *= 2) * sizeof(*p));
                if (!q) {
                    free(p);
                    return MPI_ERR_NO_MEM;
                }
                p = q;
            }
            p[k].off = off;
            p[k].len = len;
            p[k].pos = done;
            k++;
        }
        done += len;
    }
    *out = p;
    *np = k;
    return MPI_SUCCESS;
}

/* ---- independent access --------------------------------------------------------------- */
static int lock_range(int fd, int type, MPI_Offset start, MPI_Offset len)
{
    struct flock l = {.l_type = (short)type, .l_whence = SEEK_SET, .l_start = start,
                      .l_len = len};
    while (fcntl(fd, F_SETLKW, &l) < 0)
        if (errno != EINTR)
            return errno == ENOLCK || errno == EINVAL ? 0 : MPI_ERR_IO; /* no locks here */
    return 0;
}

static int full_io(struct xm_file *f, int write, char *b, size_t len, MPI_Offset off,
                   size_t *got)
{
    size_t d = 0;
    int fd = f->fd;
    while (d < len) {
        if (write)
            f->n_write++;
        else
            f->n_read++;
        ssize_t k = write ? pwrite(fd, b + d, len - d, off + (MPI_Offset)d)
                          : pread(fd, b + d, len - d, off + (MPI_Offset)d);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            if (got)
                *got = d;
            return xm_io_errno_class(errno) == MPI_ERR_BAD_FILE ? MPI_ERR_IO
                                                                 : xm_io_errno_class(errno);
        }
        if (k == 0) { /* end of file (reads) */
            memset(b + d, 0, len - d);
            break;
        }
        d += (size_t)k;
    }
    if (got)
        *got = d;
    return 0;
}

int xm_io_indep(struct xm_file *f, int write, struct xm_io_piece *p, int np, char *stream,
                size_t *moved)
{
    int rc = 0;
    *moved = 0;
    if (!np)
        return 0;
    MPI_Offset lo = p[0].off, hi = p[np - 1].off + (MPI_Offset)p[np - 1].len;
    if (f->atomic && (rc = lock_range(f->fd, write ? F_WRLCK : F_RDLCK, lo, hi - lo)))
        return rc;
    int ds = write ? f->hints.ds_write : f->hints.ds_read;
    long bufsz = write ? f->hints.ind_wr_buffer_size : f->hints.ind_rd_buffer_size;
    char *sieve = NULL;
    if (ds == 2) { /* automatic: sieve where the pieces fill at least 1/8 of the span
                    * (sparser, the extra bytes cost more than the system calls saved) */
        size_t useful = 0;
        for (int i = 0; i < np; i++)
            useful += p[i].len;
        ds = useful * 8 >= (size_t)(hi - lo);
    }
    if (np > 1 && ds && (!write || f->readable))
        sieve = malloc((size_t)bufsz);
    if (!sieve) {
        for (int i = 0; i < np && !rc; i++)
            rc = full_io(f, write, stream + p[i].pos, p[i].len, p[i].off, NULL);
    } else {
        /* data sieving: one read (and for writes one write, under a write lock) of a
         * window of the file covering many pieces */
        int i = 0;
        size_t skip = 0; /* bytes of p[i] done in earlier windows */
        while (i < np && !rc) {
            MPI_Offset ws = p[i].off + (MPI_Offset)skip;
            if (p[i].len - skip >= (size_t)bufsz) { /* large piece: straight through */
                rc = full_io(f, write, stream + p[i].pos + skip, p[i].len - skip, ws, NULL);
                i++;
                skip = 0;
                continue;
            }
            MPI_Offset we = ws + bufsz;
            int j = i;
            while (j < np && p[j].off + (MPI_Offset)p[j].len <= we)
                j++;
            MPI_Offset wend = j < np && p[j].off < we ? we : p[j - 1].off + (MPI_Offset)p[j - 1].len;
            size_t wl = (size_t)(wend - ws);
            if (write && !f->atomic && (rc = lock_range(f->fd, F_WRLCK, ws, (MPI_Offset)wl)))
                break;
            rc = full_io(f, 0, sieve, wl, ws, NULL);
            for (int k = i; k <= j && k < np && !rc; k++) {
                MPI_Offset a = k == i ? ws : p[k].off, e = p[k].off + (MPI_Offset)p[k].len;
                if (e > wend)
                    e = wend;
                if (a >= e)
                    continue;
                char *s = stream + p[k].pos + (size_t)(a - p[k].off);
                if (write)
                    memcpy(sieve + (a - ws), s, (size_t)(e - a));
                else
                    memcpy(s, sieve + (a - ws), (size_t)(e - a));
            }
            if (write && !rc)
                rc = full_io(f, 1, sieve, wl, ws, NULL);
            if (write && !f->atomic)
                lock_range(f->fd, F_UNLCK, ws, (MPI_Offset)wl);
            if (j < np && p[j].off < wend) { /* p[j] continues in the next window */
                skip = (size_t)(wend - p[j].off);
                i = j;
            } else {
                i = j;
                skip = 0;
            }
        }
        free(sieve);
    }
    if (f->atomic)
        lock_range(f->fd, F_UNLCK, lo, hi - lo);
    if (!rc)
        for (int i = 0; i < np; i++)
            *moved += p[i].len;
    return rc;
}

/* ---- the access entry point ------------------------------------------------------------ */
int xm_io_access(struct xm_file *f, int write, MPI_Offset etoff, void *buf, int count,
                 MPI_Datatype dt, int coll, size_t *bytes)
{
    struct xm_dtype *t = xm_dt_get(dt);
    size_t n = t->size * (size_t)count;
    int rc = 0;
    *bytes = 0;
    if (f->ext32 && count && ext32_check(t))
        rc = MPI_ERR_CONVERSION;
    /* a user data representation's conversion function for this direction (a
     * MPI_CONVERSION_FN_NULL one moves native bytes) */
    MPI_Datarep_conversion_function *conv = f->udr ? (write ? f->udr->wr : f->udr->rd) : NULL;
    if (!rc && f->udr && count)
        rc = xm_io_datarep_check(f->udr, t);
    char *stream = NULL, *tmp = NULL;
    int direct = !f->ext32 && !conv && t->contig && t->extent == (MPI_Aint)t->size;
    if (!rc && n) {
        if (direct) {
            stream = (char *)buf + t->true_lb;
        } else if (!(stream = tmp = malloc(n))) {
            rc = MPI_ERR_NO_MEM;
        } else if (write) {
            size_t items = 0;
            if (conv) {
                rc = xm_io_datarep_items(t, n, &items);
                if (!rc)
                    rc = conv(buf, dt, (int)items, stream, 0, f->udr->extra);
            } else if (f->ext32) {
                struct conv x = {stream, 0, 1};
                xm_dt_visit(buf, count, t, ext32_conv, &x);
            } else {
                xm_dt_pack(buf, count, t, 0, stream, n);
            }
        }
    }
    struct xm_io_piece *p = NULL;
    int np = 0;
    if (!rc && n)
        rc = make_pieces(f, etoff * (MPI_Offset)f->esize, n, &p, &np);
    if (!rc && !write && np) { /* reads end at the end of the file */
        MPI_Offset size;
        rc = xm_io_file_size(f, &size);
        int k = 0;
        while (!rc && k < np && p[k].off < size) {
            if (p[k].off + (MPI_Offset)p[k].len > size)
                p[k].len = (size_t)(size - p[k].off);
            k++;
        }
        np = k;
    }
    if (coll && !f->atomic) {
        /* every rank takes part, also one whose arguments failed (with nothing) */
        int r2 = xm_io_twophase(f, write, rc ? NULL : p, rc ? 0 : np, stream);
        if (r2 == 1)
            r2 = rc ? 0 : xm_io_indep(f, write, p, np, stream, bytes);
        else if (r2 == 0 && !rc)
            for (int i = 0; i < np; i++)
                *bytes += p[i].len;
        if (!rc)
            rc = r2;
    } else if (!rc) {
        rc = xm_io_indep(f, write, p, np, stream, bytes);
    }
    if (!rc && !write && !direct && n) {
        size_t items = 0;
        if (conv) {
            /* the typemap entries read whole are converted; the rest stays */
            rc = xm_io_datarep_items(t, *bytes, &items);
            if (!rc && items)
                rc = conv(buf, dt, (int)items, stream, 0, f->udr->extra);
        } else if (f->ext32) {
            struct conv x = {stream, 0, 0};
            /* only whole elements that were read are converted; the rest stays */
            int whole = (int)(*bytes / t->size);
            xm_dt_visit(buf, whole, t, ext32_conv, &x);
        } else {
            xm_dt_unpack(buf, count, t, 0, stream, *bytes);
        }
    }
    free(p);
    free(tmp);
    return rc;
}

/* ---- shared file pointer ------------------------------------------------------------- */
static int shfp_rw(struct xm_file *f, int write, MPI_Offset *v)
{
    ssize_t k = write ? pwrite(f->shfp_fd, v, sizeof *v, 0) : pread(f->shfp_fd, v, sizeof *v, 0);
    if (!write && k == 0)
        *v = 0;
    else if (k != (ssize_t)sizeof *v)
        return MPI_ERR_IO;
    return 0;
}

int xm_io_shfp_fetch_add(struct xm_file *f, MPI_Offset delta, MPI_Offset *old)
{
    int rc = lock_range(f->shfp_fd, F_WRLCK, 0, 0);
    if (rc)
        return rc;
    rc = shfp_rw(f, 0, old);
    if (!rc && delta) {
        MPI_Offset nv = *old + delta;
        rc = shfp_rw(f, 1, &nv);
    }
    lock_range(f->shfp_fd, F_UNLCK, 0, 0);
    return rc;
}

int xm_io_shfp_set(struct xm_file *f, MPI_Offset val)
{
    int rc = lock_range(f->shfp_fd, F_WRLCK, 0, 0);
    if (rc)
        return rc;
    rc = shfp_rw(f, 1, &val);
    lock_range(f->shfp_fd, F_UNLCK, 0, 0);
    return rc;
}
