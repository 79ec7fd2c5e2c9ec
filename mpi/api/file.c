/*
 * file.c - the MPI_File_* entry points (MPI-3.1 chapter 13): argument and access-mode
 *          checks, the file handle table (validity, Fortran handles), file error
 *          handlers, file pointers, and the blocking / nonblocking / split-collective
 *          forms, all of which reach the engine in mpi/io/ (xm_io_access).
 * Contract: errors go through the file's error handler (default MPI_ERRORS_RETURN,
 *   settable for MPI_FILE_NULL, which new files inherit, as the standard says).
 *   Nonblocking calls do their I/O when posted and return a completed request;
 *   split collectives do the collective at _begin and hand its status out at _end.
 *   Ordered mode: an exclusive scan of the sizes places each rank after the lower ones,
 *   rank 0 moves the shared pointer by the total, and the access is collective
 *   (two-phase).
 * Notes: the sixty-odd data-access entry points are one line each over the helpers
 *   rw() (independent), rw_coll() (collective), irw() and begin()/end().
 *
 * One piece (just over 800 lines): the entry points are one line each over the
 *   helpers above and share the handle table and the file error handler; the I/O
 *   itself is in mpi/io/.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../coll/coll.h"
#include "../core/comm.h"
#include "../dt/dtype.h"
#include "../io/io.h"

XM_WEAK(MPI_File_open)
XM_WEAK(MPI_File_close)
XM_WEAK(MPI_File_delete)
XM_WEAK(MPI_File_set_size)
XM_WEAK(MPI_File_preallocate)
XM_WEAK(MPI_File_get_size)
XM_WEAK(MPI_File_get_group)
XM_WEAK(MPI_File_get_amode)
XM_WEAK(MPI_File_set_info)
XM_WEAK(MPI_File_get_info)
XM_WEAK(MPI_File_set_view)
XM_WEAK(MPI_File_get_view)
XM_WEAK(MPI_File_read_at)
XM_WEAK(MPI_File_read_at_all)
XM_WEAK(MPI_File_write_at)
XM_WEAK(MPI_File_write_at_all)
XM_WEAK(MPI_File_iread_at)
XM_WEAK(MPI_File_iwrite_at)
XM_WEAK(MPI_File_iread_at_all)
XM_WEAK(MPI_File_iwrite_at_all)
XM_WEAK(MPI_File_read)
XM_WEAK(MPI_File_read_all)
XM_WEAK(MPI_File_write)
XM_WEAK(MPI_File_write_all)
XM_WEAK(MPI_File_iread)
XM_WEAK(MPI_File_iwrite)
XM_WEAK(MPI_File_iread_all)
XM_WEAK(MPI_File_iwrite_all)
XM_WEAK(MPI_File_seek)
XM_WEAK(MPI_File_get_position)
XM_WEAK(MPI_File_get_byte_offset)
XM_WEAK(MPI_File_read_shared)
XM_WEAK(MPI_File_write_shared)
XM_WEAK(MPI_File_iread_shared)
XM_WEAK(MPI_File_iwrite_shared)
XM_WEAK(MPI_File_read_ordered)
XM_WEAK(MPI_File_write_ordered)
XM_WEAK(MPI_File_seek_shared)
XM_WEAK(MPI_File_get_position_shared)
XM_WEAK(MPI_File_read_at_all_begin)
XM_WEAK(MPI_File_read_at_all_end)
XM_WEAK(MPI_File_write_at_all_begin)
XM_WEAK(MPI_File_write_at_all_end)
XM_WEAK(MPI_File_read_all_begin)
XM_WEAK(MPI_File_read_all_end)
XM_WEAK(MPI_File_write_all_begin)
XM_WEAK(MPI_File_write_all_end)
XM_WEAK(MPI_File_read_ordered_begin)
XM_WEAK(MPI_File_read_ordered_end)
XM_WEAK(MPI_File_write_ordered_begin)
XM_WEAK(MPI_File_write_ordered_end)
XM_WEAK(MPI_File_get_type_extent)
XM_WEAK(MPI_File_set_atomicity)
XM_WEAK(MPI_File_get_atomicity)
XM_WEAK(MPI_File_sync)
XM_WEAK(MPI_File_create_errhandler)
XM_WEAK(MPI_File_set_errhandler)
XM_WEAK(MPI_File_get_errhandler)
XM_WEAK(MPI_File_call_errhandler)
XM_WEAK(MPI_File_c2f)
XM_WEAK(MPI_File_f2c)
XM_WEAK(MPI_Register_datarep)

/* ---- handle table and error handlers --------------------------------------------------- */
static struct xm_file **files; /* index + 1 = Fortran handle */
static int nfiles;
static MPI_Errhandler null_errh = MPI_ERRORS_RETURN; /* MPI_FILE_NULL's handler */

/* File error handlers: handles of kind ERRH with index bit 22, so they never name a
 * communicator handler (api/env.c) and are refused by Comm_set_errhandler. */
#define FEH_BIT 0x400000
static MPI_File_errhandler_function **feh;
static unsigned char *feh_fortran; /* 1: a Fortran procedure (file handle by index) */
static int nfeh;

/* Set by libmpifort (bindings/gen_fortran.py) around MPI_FILE_CREATE_ERRHANDLER: the
 * handler being created is a Fortran procedure, called with (INTEGER file, INTEGER
 * error) by reference, the file being MPI_File_c2f's index. */
__thread int mpipriv_file_errh_lang __attribute__((visibility("default")));

static MPI_File_errhandler_function *feh_fn(MPI_Errhandler eh)
{
    if (!(eh & XM_H_VALID) || XM_H_KIND(eh) != XM_K_ERRH || !(eh & XM_H_DYN) ||
        !(XM_H_INDEX(eh) & FEH_BIT))
        return NULL;
    int i = (int)(XM_H_INDEX(eh) & ~FEH_BIT);
    return i < nfeh ? feh[i] : NULL;
}

static struct xm_file *fget(MPI_File fh)
{
    if (!fh)
        return NULL;
    for (int i = 0; i < nfiles; i++) /* compare pointers: a stale handle is not read */
        if (files[i] == fh)
            return fh;
    return NULL;
}

static int ferr(struct xm_file *f, int cls, const char *fn)
{
    if (cls == MPI_SUCCESS)
        return MPI_SUCCESS;
    MPI_Errhandler eh = f ? f->errh : null_errh;
    if (eh == MPI_ERRORS_RETURN)
        return cls;
    MPI_File_errhandler_function *uf = feh_fn(eh);
    if (uf) {
        MPI_File h = f;
        int code = cls;
        int i = (int)(XM_H_INDEX(eh) & ~FEH_BIT);
        if (feh_fortran[i]) {
            MPI_Fint fh = f ? (MPI_Fint)f->index : 0;   /* MPI_FILE_NULL is 0 */
            ((void (*)(MPI_Fint *, int *))(void (*)(void))uf)(&fh, &code);
        } else {
            uf(&h, &code, fn);
        }
        return cls;
    }
    char s[MPI_MAX_ERROR_STRING];
    int len;
    PMPI_Error_string(cls, s, &len);
    xm_die("%s: %s", fn, s);
}

#define GETF(f, fh, fn)                           \
    struct xm_file *f = fget(fh);                 \
    if (!f)                                       \
        return ferr(NULL, MPI_ERR_FILE, fn)

static int add_file(struct xm_file *f)
{
    int i;
    for (i = 0; i < nfiles; i++)
        if (!files[i])
            break;
    if (i == nfiles) {
        struct xm_file **n = realloc(files, (size_t)(nfiles + 16) * sizeof(*n));
        if (!n)
            return MPI_ERR_NO_MEM;
        files = n;
        memset(files + nfiles, 0, 16 * sizeof(*n));
        nfiles += 16;
    }
    files[i] = f;
    f->index = i + 1;
    return MPI_SUCCESS;
}

/* ---- open, close, delete ------------------------------------------------------------- */
static int amode_ok(int amode)
{
    int acc = !!(amode & MPI_MODE_RDONLY) + !!(amode & MPI_MODE_WRONLY) +
              !!(amode & MPI_MODE_RDWR);
    const int known = MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR | MPI_MODE_CREATE |
                      MPI_MODE_EXCL | MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_UNIQUE_OPEN |
                      MPI_MODE_APPEND | MPI_MODE_SEQUENTIAL;
    if (acc != 1 || (amode & ~known))
        return 0;
    if ((amode & MPI_MODE_RDONLY) && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)))
        return 0;
    if ((amode & MPI_MODE_RDWR) && (amode & MPI_MODE_SEQUENTIAL))
        return 0;
    return 1;
}

int PMPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info,
                   MPI_File *fh)
{
    const char *fn = "MPI_File_open";
    struct xm_comm *c = xm_comm_get(comm);
    if (!c)
        return xm_err(NULL, MPI_ERR_COMM, fn);
    if (!fh)
        return ferr(NULL, MPI_ERR_ARG, fn);
    *fh = MPI_FILE_NULL;
    /* local checks, then one agreement: a bad name or amode anywhere fails everywhere */
    int err = !filename || !*filename ? MPI_ERR_BAD_FILE : !amode_ok(amode) ? MPI_ERR_AMODE : 0;
    if (!err && info != MPI_INFO_NULL) {
        int nk;
        if (PMPI_Info_get_nkeys(info, &nk) != MPI_SUCCESS)
            err = MPI_ERR_INFO;
    }
    int v[3] = {err, amode, -amode}, g[3];
    if (xm_icoll_allreduce(v, g, 3, MPI_INT, MPI_MAX, c, NULL) < 0)
        return ferr(NULL, MPI_ERR_INTERN, fn);
    if (g[0])
        return ferr(NULL, g[0], fn);
    if (g[1] != -g[2])
        return ferr(NULL, MPI_ERR_NOT_SAME, fn);
    struct xm_file *f;
    int rc = xm_io_open(c, filename, amode, info, &f);
    if (rc)
        return ferr(NULL, rc, fn);
    f->errh = null_errh;
    if ((rc = add_file(f))) {
        xm_io_close(f);
        return ferr(NULL, rc, fn);
    }
    *fh = f;
    return MPI_SUCCESS;
}

int PMPI_File_close(MPI_File *fh)
{
    const char *fn = "MPI_File_close";
    if (!fh)
        return ferr(NULL, MPI_ERR_ARG, fn);
    GETF(f, *fh, fn);
    files[f->index - 1] = NULL;
    MPI_Errhandler eh = f->errh;
    int rc = xm_io_close(f);
    *fh = MPI_FILE_NULL;
    if (rc) { /* the object is gone: report through its handler as it was */
        if (eh == MPI_ERRORS_RETURN || feh_fn(eh))
            return rc;
        return ferr(NULL, rc, fn);
    }
    return MPI_SUCCESS;
}

int PMPI_File_delete(const char *filename, MPI_Info info)
{
    (void)info;
    if (!filename)
        return ferr(NULL, MPI_ERR_ARG, "MPI_File_delete");
    return ferr(NULL, xm_io_delete(filename), "MPI_File_delete");
}

/* ---- size, group, amode, info ------------------------------------------------------- */
static int resize(MPI_File fh, MPI_Offset size, int grow_only, const char *fn)
{
    GETF(f, fh, fn);
    if (size < 0)
        return ferr(f, MPI_ERR_ARG, fn);
    if (f->amode & MPI_MODE_RDONLY)
        return ferr(f, MPI_ERR_READ_ONLY, fn);
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return ferr(f, MPI_ERR_UNSUPPORTED_OPERATION, fn);
    int err = 0;
    if (f->comm->rank == 0) {
        MPI_Offset cur = 0;
        err = xm_io_file_size(f, &cur);
        if (!err && (!grow_only || size > cur) && ftruncate(f->fd, size) < 0)
            err = xm_io_errno_class(errno);
    }
    if (xm_icoll_bcast(&err, 1, MPI_INT, 0, f->comm, NULL) < 0)
        err = MPI_ERR_INTERN;
    return ferr(f, err, fn);
}

int PMPI_File_set_size(MPI_File fh, MPI_Offset size)
{
    return resize(fh, size, 0, "MPI_File_set_size");
}

int PMPI_File_preallocate(MPI_File fh, MPI_Offset size)
{
    return resize(fh, size, 1, "MPI_File_preallocate");
}

int PMPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
    GETF(f, fh, "MPI_File_get_size");
    if (!size)
        return ferr(f, MPI_ERR_ARG, "MPI_File_get_size");
    return ferr(f, xm_io_file_size(f, size), "MPI_File_get_size");
}

int PMPI_File_get_group(MPI_File fh, MPI_Group *group)
{
    GETF(f, fh, "MPI_File_get_group");
    if (!group)
        return ferr(f, MPI_ERR_ARG, "MPI_File_get_group");
    int *w = malloc((size_t)f->comm->size * sizeof(int));
    if (w)
        for (int i = 0; i < f->comm->size; i++)
            w[i] = xm_comm_world_rank(f->comm, i);
    struct xm_group *g = w ? xm_group_new(f->comm->size, w) : NULL;
    if (!g)
        return ferr(f, MPI_ERR_NO_MEM, "MPI_File_get_group");
    *group = g->handle;
    return MPI_SUCCESS;
}

int PMPI_File_get_amode(MPI_File fh, int *amode)
{
    GETF(f, fh, "MPI_File_get_amode");
    if (!amode)
        return ferr(f, MPI_ERR_ARG, "MPI_File_get_amode");
    *amode = f->amode;
    return MPI_SUCCESS;
}

/* hints come from a valid info object only: a bad handle is reported through the
 * default error handler and the call goes on without hints (io/file.c reads them from
 * core/info.c, which reports nothing) */
static void check_info(MPI_Info info, const char *fn)
{
    if (info != MPI_INFO_NULL && !xm_info_get(info))
        xm_err(NULL, MPI_ERR_INFO, fn);
}

int PMPI_File_set_info(MPI_File fh, MPI_Info info)
{
    GETF(f, fh, "MPI_File_set_info");
    check_info(info, "MPI_File_set_info");
    int cbn = f->hints.cb_nodes;
    xm_io_hints_from_info(&f->hints, info);
    if (f->hints.cb_nodes > f->comm->size || f->hints.cb_nodes < 1)
        f->hints.cb_nodes = cbn;
    return MPI_SUCCESS;
}

int PMPI_File_get_info(MPI_File fh, MPI_Info *info)
{
    GETF(f, fh, "MPI_File_get_info");
    if (!info)
        return ferr(f, MPI_ERR_ARG, "MPI_File_get_info");
    return ferr(f, xm_io_hints_to_info(f, info), "MPI_File_get_info");
}

/* ---- views ----------------------------------------------------------------------------- */
static int type_ok(MPI_Datatype dt)
{
    struct xm_dtype *t = xm_dt_get(dt);
    return t && (t->committed || XM_DT_IS_PREDEF(dt));
}

int PMPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                       const char *datarep, MPI_Info info)
{
    const char *fn = "MPI_File_set_view";
    GETF(f, fh, fn);
    int err = 0;
    if (!type_ok(etype) || !type_ok(filetype))
        err = MPI_ERR_TYPE;
    else if (!datarep)
        err = MPI_ERR_ARG;
    else if (disp == MPI_DISPLACEMENT_CURRENT && !(f->amode & MPI_MODE_SEQUENTIAL))
        err = MPI_ERR_ARG;
    else if (disp < 0 && disp != MPI_DISPLACEMENT_CURRENT)
        err = MPI_ERR_ARG;
    if (!err && disp == MPI_DISPLACEMENT_CURRENT) { /* sequential: where the shared pointer is */
        MPI_Offset sh = 0;
        err = xm_io_shfp_fetch_add(f, 0, &sh);
        disp = xm_io_view_to_file(f, sh * (MPI_Offset)f->esize);
    }
    if (!err)
        err = xm_io_set_view(f, disp, etype, filetype, datarep);
    if (!err) {
        check_info(info, fn);
        xm_io_hints_from_info(&f->hints, info);
    }
    /* collective: the view and the shared pointer (reset to 0) change together */
    int g = err;
    if (xm_icoll_allreduce(&err, &g, 1, MPI_INT, MPI_MAX, f->comm, NULL) < 0)
        g = MPI_ERR_INTERN;
    if (!g && f->comm->rank == 0)
        g = xm_io_shfp_set(f, 0);
    if (xm_icoll_barrier(f->comm, NULL) < 0 && !g)
        g = MPI_ERR_INTERN;
    return ferr(f, g, fn);
}

int PMPI_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype,
                       MPI_Datatype *filetype, char *datarep)
{
    GETF(f, fh, "MPI_File_get_view");
    if (!disp || !etype || !filetype || !datarep)
        return ferr(f, MPI_ERR_ARG, "MPI_File_get_view");
    *disp = f->disp;
    /* derived types come back as new handles the caller frees (a reference each) */
    struct xm_dtype *t;
    if (!XM_DT_IS_PREDEF(f->etype) && (t = xm_dt_get(f->etype)))
        xm_dt_ref(t);
    if (!XM_DT_IS_PREDEF(f->filetype) && (t = xm_dt_get(f->filetype)))
        xm_dt_ref(t);
    *etype = f->etype;
    *filetype = f->filetype;
    strcpy(datarep, f->datarep);
    return MPI_SUCCESS;
}

/* ---- data access --------------------------------------------------------------------- */
enum { PTR_EXPLICIT, PTR_INDIV, PTR_SHARED };

static int check_rw(struct xm_file *f, int write, int ptr, MPI_Offset off, const void *buf,
                    int count, MPI_Datatype dt)
{
    if (count < 0)
        return MPI_ERR_COUNT;
    if (!type_ok(dt))
        return MPI_ERR_TYPE;
    if (count > 0 && !buf && xm_dt_get(dt)->size)
        return MPI_ERR_BUFFER;
    if (write && (f->amode & MPI_MODE_RDONLY))
        return MPI_ERR_READ_ONLY;
    if (!write && (f->amode & MPI_MODE_WRONLY))
        return MPI_ERR_ACCESS;
    if (ptr != PTR_SHARED && (f->amode & MPI_MODE_SEQUENTIAL))
        return MPI_ERR_UNSUPPORTED_OPERATION;
    if (ptr == PTR_EXPLICIT && off < 0)
        return MPI_ERR_ARG;
    if ((xm_dt_get(dt)->size * (size_t)count) % f->esize)
        return MPI_ERR_TYPE; /* the access must be whole etypes */
    return 0;
}

static void set_status(MPI_Status *st, size_t bytes)
{
    if (st && st != MPI_STATUS_IGNORE)
        xm_status_set(st, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, bytes);
}

/* independent access through an explicit offset, the individual or the shared pointer */
static int rw(MPI_File fh, int write, int ptr, MPI_Offset off, void *buf, int count,
              MPI_Datatype dt, MPI_Status *st, const char *fn)
{
    GETF(f, fh, fn);
    int rc = check_rw(f, write, ptr, off, buf, count, dt);
    if (rc)
        return ferr(f, rc, fn);
    size_t want = xm_dt_get(dt)->size * (size_t)count, got = 0;
    MPI_Offset et = (MPI_Offset)(want / f->esize);
    if (ptr == PTR_INDIV)
        off = f->fp;
    else if (ptr == PTR_SHARED && (rc = xm_io_shfp_fetch_add(f, et, &off)))
        return ferr(f, rc, fn);
    rc = xm_io_access(f, write, off, buf, count, dt, 0, &got);
    if (ptr == PTR_INDIV)
        f->fp += (MPI_Offset)(got / f->esize);
    if (rc)
        return ferr(f, rc, fn);
    set_status(st, got);
    return MPI_SUCCESS;
}

/* collective access: explicit offset, individual pointer, or ordered (shared pointer) */
static int rw_coll(struct xm_file *f, int write, int ptr, MPI_Offset off, void *buf, int count,
                   MPI_Datatype dt, MPI_Status *st, const char *fn)
{
    int rc = check_rw(f, write, ptr, off, buf, count, dt);
    size_t want = rc ? 0 : xm_dt_get(dt)->size * (size_t)count, got = 0;
    if (ptr == PTR_INDIV)
        off = f->fp;
    if (ptr == PTR_SHARED) {
        long long mine = rc ? 0 : (long long)(want / f->esize), before = 0, total = 0;
        MPI_Offset base = 0;
        int r2 = 0;
        if (xm_icoll_scan(&mine, &before, 1, MPI_LONG_LONG, MPI_SUM, 1, f->comm, NULL) < 0 ||
            xm_icoll_allreduce(&mine, &total, 1, MPI_LONG_LONG, MPI_SUM, f->comm, NULL) < 0)
            r2 = MPI_ERR_INTERN;
        if (f->comm->rank == 0) {
            before = 0;
            if (!r2)
                r2 = xm_io_shfp_fetch_add(f, total, &base);
        }
        if (xm_icoll_bcast(&base, 1, MPI_LONG_LONG, 0, f->comm, NULL) < 0 && !r2)
            r2 = MPI_ERR_INTERN;
        off = base + before;
        if (!rc)
            rc = r2;
    }
    /* every rank enters the collective, one with bad arguments with nothing to move */
    int r3 = xm_io_access(f, write, off, buf, rc ? 0 : count, dt, 1, &got);
    if (!rc)
        rc = r3;
    if (ptr == PTR_INDIV)
        f->fp += (MPI_Offset)(got / f->esize);
    if (rc)
        return rc;
    set_status(st, got);
    return MPI_SUCCESS;
}

static int rwc(MPI_File fh, int write, int ptr, MPI_Offset off, void *buf, int count,
               MPI_Datatype dt, MPI_Status *st, const char *fn)
{
    GETF(f, fh, fn);
    return ferr(f, rw_coll(f, write, ptr, off, buf, count, dt, st, fn), fn);
}

/* nonblocking forms: the I/O is done now, the request is complete when returned */
static int irw(MPI_File fh, int write, int ptr, int coll, MPI_Offset off, void *buf, int count,
               MPI_Datatype dt, MPI_Request *req, const char *fn)
{
    GETF(f, fh, fn);
    if (!req)
        return ferr(f, MPI_ERR_ARG, fn);
    MPI_Status st;
    int rc = coll ? rwc(fh, write, ptr, off, buf, count, dt, &st, fn)
                  : rw(fh, write, ptr, off, buf, count, dt, &st, fn);
    if (rc)
        return rc; /* already through the handler */
    struct xm_req *r = xm_req_new(XM_REQ_GREQ);
    if (!r)
        return ferr(f, MPI_ERR_NO_MEM, fn);
    r->status = st;
    xm_req_complete(r);
    *req = r->handle;
    return MPI_SUCCESS;
}

/* split collectives: the collective runs at _begin, _end hands out its status */
static int begin(MPI_File fh, int write, int ptr, MPI_Offset off, void *buf, int count,
                 MPI_Datatype dt, const char *fn)
{
    GETF(f, fh, fn);
    if (f->split_active)
        return ferr(f, MPI_ERR_OTHER, fn);
    f->split_rc = rw_coll(f, write, ptr, off, buf, count, dt, &f->split_status, fn);
    f->split_active = 1;
    return ferr(f, f->split_rc, fn);
}

static int end(MPI_File fh, MPI_Status *st, const char *fn)
{
    GETF(f, fh, fn);
    if (!f->split_active)
        return ferr(f, MPI_ERR_OTHER, fn);
    f->split_active = 0;
    if (f->split_rc)
        return ferr(f, f->split_rc, fn);
    if (st && st != MPI_STATUS_IGNORE)
        *st = f->split_status;
    return MPI_SUCCESS;
}

#define VB (void *)
int PMPI_File_read_at(MPI_File fh, MPI_Offset o, void *b, int n, MPI_Datatype d, MPI_Status *s)
{ return rw(fh, 0, PTR_EXPLICIT, o, b, n, d, s, "MPI_File_read_at"); }
int PMPI_File_write_at(MPI_File fh, MPI_Offset o, const void *b, int n, MPI_Datatype d,
                       MPI_Status *s)
{ return rw(fh, 1, PTR_EXPLICIT, o, VB b, n, d, s, "MPI_File_write_at"); }
int PMPI_File_read_at_all(MPI_File fh, MPI_Offset o, void *b, int n, MPI_Datatype d,
                          MPI_Status *s)
{ return rwc(fh, 0, PTR_EXPLICIT, o, b, n, d, s, "MPI_File_read_at_all"); }
int PMPI_File_write_at_all(MPI_File fh, MPI_Offset o, const void *b, int n, MPI_Datatype d,
                           MPI_Status *s)
{ return rwc(fh, 1, PTR_EXPLICIT, o, VB b, n, d, s, "MPI_File_write_at_all"); }
int PMPI_File_iread_at(MPI_File fh, MPI_Offset o, void *b, int n, MPI_Datatype d, MPI_Request *r)
{ return irw(fh, 0, PTR_EXPLICIT, 0, o, b, n, d, r, "MPI_File_iread_at"); }
int PMPI_File_iwrite_at(MPI_File fh, MPI_Offset o, const void *b, int n, MPI_Datatype d,
                        MPI_Request *r)
{ return irw(fh, 1, PTR_EXPLICIT, 0, o, VB b, n, d, r, "MPI_File_iwrite_at"); }
int PMPI_File_iread_at_all(MPI_File fh, MPI_Offset o, void *b, int n, MPI_Datatype d,
                           MPI_Request *r)
{ return irw(fh, 0, PTR_EXPLICIT, 1, o, b, n, d, r, "MPI_File_iread_at_all"); }
int PMPI_File_iwrite_at_all(MPI_File fh, MPI_Offset o, const void *b, int n, MPI_Datatype d,
                            MPI_Request *r)
{ return irw(fh, 1, PTR_EXPLICIT, 1, o, VB b, n, d, r, "MPI_File_iwrite_at_all"); }
int PMPI_File_read(MPI_File fh, void *b, int n, MPI_Datatype d, MPI_Status *s)
{ return rw(fh, 0, PTR_INDIV, 0, b, n, d, s, "MPI_File_read"); }
int PMPI_File_write(MPI_File fh, const void *b, int n, MPI_Datatype d, MPI_Status *s)
{ return rw(fh, 1, PTR_INDIV, 0, VB b, n, d, s, "MPI_File_write"); }
int PMPI_File_read_all(MPI_File fh, void *b, int n, MPI_Datatype d, MPI_Status *s)
{ return rwc(fh, 0, PTR_INDIV, 0, b, n, d, s, "MPI_File_read_all"); }
int PMPI_File_write_all(MPI_File fh, const void *b, int n, MPI_Datatype d, MPI_Status *s)
{ return rwc(fh, 1, PTR_INDIV, 0, VB b, n, d, s, "MPI_File_write_all"); }
int PMPI_File_iread(MPI_File fh, void *b, int n, MPI_Datatype d, MPI_Request *r)
{ return irw(fh, 0, PTR_INDIV, 0, 0, b, n, d, r, "MPI_File_iread"); }
int PMPI_File_iwrite(MPI_File fh, const void *b, int n, MPI_Datatype d, MPI_Request *r)
{ return irw(fh, 1, PTR_INDIV, 0, 0, VB b, n, d, r, "MPI_File_iwrite"); }
int PMPI_File_iread_all(MPI_File fh, void *b, int n, MPI_Datatype d, MPI_Request *r)
{ return irw(fh, 0, PTR_INDIV, 1, 0, b, n, d, r, "MPI_File_iread_all"); }
int PMPI_File_iwrite_all(MPI_File fh, const void *b, int n, MPI_Datatype d, MPI_Request *r)
{ return irw(fh, 1, PTR_INDIV, 1, 0, VB b, n, d, r, "MPI_File_iwrite_all"); }
int PMPI_File_read_shared(MPI_File fh, void *b, int n, MPI_Datatype d, MPI_Status *s)
{ return rw(fh, 0, PTR_SHARED, 0, b, n, d, s, "MPI_File_read_shared"); }
int PMPI_File_write_shared(MPI_File fh, const void *b, int n, MPI_Datatype d, MPI_Status *s)
{ return rw(fh, 1, PTR_SHARED, 0, VB b, n, d, s, "MPI_File_write_shared"); }
int PMPI_File_iread_shared(MPI_File fh, void *b, int n, MPI_Datatype d, MPI_Request *r)
{ return irw(fh, 0, PTR_SHARED, 0, 0, b, n, d, r, "MPI_File_iread_shared"); }
int PMPI_File_iwrite_shared(MPI_File fh, const void *b, int n, MPI_Datatype d, MPI_Request *r)
{ return irw(fh, 1, PTR_SHARED, 0, 0, VB b, n, d, r, "MPI_File_iwrite_shared"); }
int PMPI_File_read_ordered(MPI_File fh, void *b, int n, MPI_Datatype d, MPI_Status *s)
{ return rwc(fh, 0, PTR_SHARED, 0, b, n, d, s, "MPI_File_read_ordered"); }
int PMPI_File_write_ordered(MPI_File fh, const void *b, int n, MPI_Datatype d, MPI_Status *s)
{ return rwc(fh, 1, PTR_SHARED, 0, VB b, n, d, s, "MPI_File_write_ordered"); }
int PMPI_File_read_at_all_begin(MPI_File fh, MPI_Offset o, void *b, int n, MPI_Datatype d)
{ return begin(fh, 0, PTR_EXPLICIT, o, b, n, d, "MPI_File_read_at_all_begin"); }
int PMPI_File_read_at_all_end(MPI_File fh, void *b, MPI_Status *s)
{ (void)b; return end(fh, s, "MPI_File_read_at_all_end"); }
int PMPI_File_write_at_all_begin(MPI_File fh, MPI_Offset o, const void *b, int n, MPI_Datatype d)
{ return begin(fh, 1, PTR_EXPLICIT, o, VB b, n, d, "MPI_File_write_at_all_begin"); }
int PMPI_File_write_at_all_end(MPI_File fh, const void *b, MPI_Status *s)
{ (void)b; return end(fh, s, "MPI_File_write_at_all_end"); }
int PMPI_File_read_all_begin(MPI_File fh, void *b, int n, MPI_Datatype d)
{ return begin(fh, 0, PTR_INDIV, 0, b, n, d, "MPI_File_read_all_begin"); }
int PMPI_File_read_all_end(MPI_File fh, void *b, MPI_Status *s)
{ (void)b; return end(fh, s, "MPI_File_read_all_end"); }
int PMPI_File_write_all_begin(MPI_File fh, const void *b, int n, MPI_Datatype d)
{ return begin(fh, 1, PTR_INDIV, 0, VB b, n, d, "MPI_File_write_all_begin"); }
int PMPI_File_write_all_end(MPI_File fh, const void *b, MPI_Status *s)
{ (void)b; return end(fh, s, "MPI_File_write_all_end"); }
int PMPI_File_read_ordered_begin(MPI_File fh, void *b, int n, MPI_Datatype d)
{ return begin(fh, 0, PTR_SHARED, 0, b, n, d, "MPI_File_read_ordered_begin"); }
int PMPI_File_read_ordered_end(MPI_File fh, void *b, MPI_Status *s)
{ (void)b; return end(fh, s, "MPI_File_read_ordered_end"); }
int PMPI_File_write_ordered_begin(MPI_File fh, const void *b, int n, MPI_Datatype d)
{ return begin(fh, 1, PTR_SHARED, 0, VB b, n, d, "MPI_File_write_ordered_begin"); }
int PMPI_File_write_ordered_end(MPI_File fh, const void *b, MPI_Status *s)
{ (void)b; return end(fh, s, "MPI_File_write_ordered_end"); }

/* ---- file pointers -------------------------------------------------------------------- */
static int seek_target(struct xm_file *f, MPI_Offset cur, MPI_Offset off, int whence,
                       MPI_Offset *out)
{
    MPI_Offset base;
    if (whence == MPI_SEEK_SET) {
        base = 0;
    } else if (whence == MPI_SEEK_CUR) {
        base = cur;
    } else if (whence == MPI_SEEK_END) {
        MPI_Offset size;
        int rc = xm_io_file_size(f, &size);
        if (rc)
            return rc;
        MPI_Offset v = xm_io_file_to_view(f, size);
        base = (v + (MPI_Offset)f->esize - 1) / (MPI_Offset)f->esize;
    } else {
        return MPI_ERR_ARG;
    }
    if (base + off < 0)
        return MPI_ERR_ARG;
    *out = base + off;
    return 0;
}

int PMPI_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
    GETF(f, fh, "MPI_File_seek");
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return ferr(f, MPI_ERR_UNSUPPORTED_OPERATION, "MPI_File_seek");
    return ferr(f, seek_target(f, f->fp, offset, whence, &f->fp), "MPI_File_seek");
}

int PMPI_File_get_position(MPI_File fh, MPI_Offset *offset)
{
    GETF(f, fh, "MPI_File_get_position");
    if (!offset)
        return ferr(f, MPI_ERR_ARG, "MPI_File_get_position");
    *offset = f->fp;
    return MPI_SUCCESS;
}

int PMPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp)
{
    GETF(f, fh, "MPI_File_get_byte_offset");
    if (!disp || offset < 0)
        return ferr(f, MPI_ERR_ARG, "MPI_File_get_byte_offset");
    *disp = xm_io_view_to_file(f, offset * (MPI_Offset)f->esize);
    return MPI_SUCCESS;
}

/* collective: every rank passes the same offset and whence; rank 0 moves the pointer */
int PMPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence)
{
    const char *fn = "MPI_File_seek_shared";
    GETF(f, fh, fn);
    long long v[3] = {offset, whence, -offset}, g[3];
    int err = 0;
    if (xm_icoll_allreduce(v, g, 3, MPI_LONG_LONG, MPI_MAX, f->comm, NULL) < 0)
        return ferr(f, MPI_ERR_INTERN, fn);
    if (g[0] != -g[2])
        err = MPI_ERR_NOT_SAME;
    if (!err && f->comm->rank == 0) {
        MPI_Offset cur = 0, to = 0;
        err = xm_io_shfp_fetch_add(f, 0, &cur);
        if (!err)
            err = seek_target(f, cur, offset, whence, &to);
        if (!err)
            err = xm_io_shfp_set(f, to);
    }
    if (xm_icoll_bcast(&err, 1, MPI_INT, 0, f->comm, NULL) < 0)
        err = MPI_ERR_INTERN;
    return ferr(f, err, fn);
}

int PMPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset)
{
    GETF(f, fh, "MPI_File_get_position_shared");
    if (!offset)
        return ferr(f, MPI_ERR_ARG, "MPI_File_get_position_shared");
    return ferr(f, xm_io_shfp_fetch_add(f, 0, offset), "MPI_File_get_position_shared");
}

/* ---- misc ------------------------------------------------------------------------------- */
int PMPI_File_get_type_extent(MPI_File fh, MPI_Datatype dt, MPI_Aint *extent)
{
    GETF(f, fh, "MPI_File_get_type_extent");
    struct xm_dtype *t = xm_dt_get(dt);
    if (!t)
        return ferr(f, MPI_ERR_TYPE, "MPI_File_get_type_extent");
    if (!extent)
        return ferr(f, MPI_ERR_ARG, "MPI_File_get_type_extent");
    /* native and the accepted external32 types have the same sizes (io/file.c); a
     * user data representation answers for its basic types (io/datarep.c) */
    if (f->udr && XM_DT_IS_PREDEF(dt)) {
        int rc = xm_io_datarep_extent(f->udr, dt, extent);
        return rc ? ferr(f, rc, "MPI_File_get_type_extent") : MPI_SUCCESS;
    }
    *extent = t->extent;
    return MPI_SUCCESS;
}

int PMPI_File_set_atomicity(MPI_File fh, int flag)
{
    GETF(f, fh, "MPI_File_set_atomicity");
    int v[2] = {!!flag, -!!flag}, g[2];
    if (xm_icoll_allreduce(v, g, 2, MPI_INT, MPI_MAX, f->comm, NULL) < 0)
        return ferr(f, MPI_ERR_INTERN, "MPI_File_set_atomicity");
    if (g[0] != -g[1])
        return ferr(f, MPI_ERR_NOT_SAME, "MPI_File_set_atomicity");
    f->atomic = !!flag;
    return MPI_SUCCESS;
}

int PMPI_File_get_atomicity(MPI_File fh, int *flag)
{
    GETF(f, fh, "MPI_File_get_atomicity");
    if (!flag)
        return ferr(f, MPI_ERR_ARG, "MPI_File_get_atomicity");
    *flag = f->atomic;
    return MPI_SUCCESS;
}

int PMPI_File_sync(MPI_File fh)
{
    GETF(f, fh, "MPI_File_sync");
    int err = fsync(f->fd) < 0 ? MPI_ERR_IO : 0, g = err;
    if (xm_icoll_allreduce(&err, &g, 1, MPI_INT, MPI_MAX, f->comm, NULL) < 0)
        g = MPI_ERR_INTERN;
    return ferr(f, g, "MPI_File_sync");
}

int PMPI_File_create_errhandler(MPI_File_errhandler_function *fn, MPI_Errhandler *eh)
{
    if (!fn || !eh)
        return ferr(NULL, MPI_ERR_ARG, "MPI_File_create_errhandler");
    MPI_File_errhandler_function **n = realloc(feh, (size_t)(nfeh + 1) * sizeof(*n));
    if (!n)
        return ferr(NULL, MPI_ERR_NO_MEM, "MPI_File_create_errhandler");
    feh = n;
    unsigned char *lang = realloc(feh_fortran, (size_t)(nfeh + 1));
    if (!lang)
        return ferr(NULL, MPI_ERR_NO_MEM, "MPI_File_create_errhandler");
    feh_fortran = lang;
    feh[nfeh] = fn;
    feh_fortran[nfeh] = mpipriv_file_errh_lang != 0;
    mpipriv_file_errh_lang = 0;
    *eh = XM_H_MAKE(XM_K_ERRH, 1, FEH_BIT | (unsigned)nfeh);
    nfeh++;
    return MPI_SUCCESS;
}

int PMPI_File_set_errhandler(MPI_File fh, MPI_Errhandler eh)
{
    struct xm_file *f = fget(fh);
    if (!f && fh != MPI_FILE_NULL)
        return ferr(NULL, MPI_ERR_FILE, "MPI_File_set_errhandler");
    if (eh != MPI_ERRORS_ARE_FATAL && eh != MPI_ERRORS_RETURN && !feh_fn(eh))
        return ferr(f, MPI_ERR_ARG, "MPI_File_set_errhandler");
    if (f)
        f->errh = eh;
    else
        null_errh = eh;
    return MPI_SUCCESS;
}

int PMPI_File_get_errhandler(MPI_File fh, MPI_Errhandler *eh)
{
    struct xm_file *f = fget(fh);
    if (!f && fh != MPI_FILE_NULL)
        return ferr(NULL, MPI_ERR_FILE, "MPI_File_get_errhandler");
    if (!eh)
        return ferr(f, MPI_ERR_ARG, "MPI_File_get_errhandler");
    *eh = f ? f->errh : null_errh;
    return MPI_SUCCESS;
}

int PMPI_File_call_errhandler(MPI_File fh, int errorcode)
{
    struct xm_file *f = fget(fh);
    if (!f && fh != MPI_FILE_NULL)
        return ferr(NULL, MPI_ERR_FILE, "MPI_File_call_errhandler");
    ferr(f, errorcode, "MPI_File_call_errhandler");
    return MPI_SUCCESS;
}

MPI_Fint PMPI_File_c2f(MPI_File fh)
{
    struct xm_file *f = fget(fh);
    return f ? (MPI_Fint)f->index : 0;
}

MPI_File PMPI_File_f2c(MPI_Fint fh)
{
    return fh >= 1 && fh <= nfiles ? files[fh - 1] : MPI_FILE_NULL;
}

/* ---- user data representations (MPI-3.1 13.5.3; io/datarep.c) ---------------------- */
/* Errors go to MPI_FILE_NULL's handler: no file is involved. */
int PMPI_Register_datarep(const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
                          MPI_Datarep_conversion_function *write_conversion_fn,
                          MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    if (!datarep)
        return ferr(NULL, MPI_ERR_ARG, "MPI_Register_datarep");
    return ferr(NULL, xm_io_datarep_register(datarep, read_conversion_fn, write_conversion_fn,
                                             dtype_file_extent_fn, extra_state),
                "MPI_Register_datarep");
}
