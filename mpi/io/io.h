/*
 * io.h - the MPI-IO engine (mpi/io/): open files, views, data access on POSIX files.
 *
 * Owns: struct xm_file (the object behind MPI_File), the file view (displacement,
 * etype, filetype flattened into byte regions, data representation), hints, the
 * individual and shared file pointers, atomic-mode locking, data sieving and the
 * two-phase collective buffering.
 * Contract (what api/file.c relies on):
 *   - Functions return 0 or an MPI error class (never -errno); api/file.c passes that
 *     through the file's error handler.
 *   - Positions handed to xm_io_access() are in etypes relative to the current view;
 *     the engine maps them through the flattened filetype to file byte offsets.
 *   - A collective call (coll != 0) must be made by every rank of the file's group in
 *     the same order; the file owns a private duplicate communicator for that.
 *   - The shared file pointer lives in a small side file next to the data file
 *     (".<name>.shfp.<id>"), read and updated under an fcntl write lock: it works for
 *     ranks on several nodes of a file system with POSIX locks and needs no rank to
 *     answer messages.
 * Caveats: single-threaded like the rest of libmpi.  User data representations
 *   (MPI_Register_datarep, io/datarep.c) must keep every basic type's size.
 */
#ifndef XM_IO_H
#define XM_IO_H

#include "../core/xm.h"

struct xm_io_hints {
    long cb_buffer_size;   /* bytes an aggregator moves per round (16 MiB) */
    int cb_nodes;          /* aggregators (default: two per node of the file's group) */
    int cb_write, cb_read; /* 0 disable, 1 enable, 2 automatic */
    int no_indep_rw;       /* romio_no_indep_rw: accepted, reported */
    int ds_read, ds_write; /* data sieving: 0 disable, 1 enable, 2 automatic */
    long ind_rd_buffer_size, ind_wr_buffer_size;
    long striping_unit;    /* accepted and reported (0 = not set) */
    int striping_factor;
};

/* a data representation registered by MPI_Register_datarep (io/datarep.c) */
struct xm_datarep {
    char name[MPI_MAX_DATAREP_STRING];
    MPI_Datarep_conversion_function *rd, *wr;
    MPI_Datarep_extent_function *ext;
    void *extra;
};

struct xm_file {
    int fd;
    int amode;
    int readable;          /* fd was opened with read access (data sieving may read) */
    struct xm_comm *comm;  /* private duplicate of the opening communicator */
    char *path;            /* as opened (prefix like "ufs:" removed) */
    char *shfp_path;       /* side file holding the shared pointer */
    int shfp_fd;
    int atomic;
    MPI_Errhandler errh;
    int index;             /* Fortran handle */
    struct xm_io_hints hints;
    /* view */
    MPI_Offset disp;
    MPI_Datatype etype, filetype;
    size_t esize;          /* bytes of one etype */
    size_t fsize;          /* packed bytes of one filetype */
    MPI_Aint fextent;      /* extent of one filetype (file bytes per tile) */
    int nreg;              /* regions of one filetype tile, sorted by offset */
    MPI_Offset *roff;      /* region offsets from the tile's origin */
    size_t *rlen;
    size_t *rpos;          /* packed position of each region (nreg + 1 entries) */
    int ext32;             /* data representation external32 */
    char datarep[MPI_MAX_DATAREP_STRING];
    const struct xm_datarep *udr; /* a user data representation, else NULL */
    MPI_Offset fp;         /* individual file pointer, in etypes */
    /* split collective in progress */
    int split_active;
    MPI_Status split_status;
    int split_rc;
    /* LOOM_MPI_IO_STATS=1: system calls and rounds, printed at close */
    unsigned long n_write, n_read, n_rounds;
};

/* a piece of an access: file bytes [off, off+len) hold packed bytes [pos, pos+len) */
struct xm_io_piece {
    MPI_Offset off;
    size_t len;
    size_t pos;
};

/* open.c-like part (file.c) */
int xm_io_open(struct xm_comm *c, const char *name, int amode, MPI_Info info,
               struct xm_file **out);
int xm_io_close(struct xm_file *f);
int xm_io_delete(const char *name);
int xm_io_errno_class(int e);
void xm_io_hints_from_info(struct xm_io_hints *h, MPI_Info info);
int xm_io_hints_to_info(const struct xm_file *f, MPI_Info *info);
int xm_io_set_view(struct xm_file *f, MPI_Offset disp, MPI_Datatype etype,
                   MPI_Datatype filetype, const char *datarep);
/* file byte offset of view position `pos` (bytes of filetype data) */
MPI_Offset xm_io_view_to_file(const struct xm_file *f, MPI_Offset pos);
/* view position (bytes) of the first byte at or after file offset `off` */
MPI_Offset xm_io_file_to_view(const struct xm_file *f, MPI_Offset off);
int xm_io_file_size(struct xm_file *f, MPI_Offset *size);

/* Data access: (buf, count, dt) at view position `etoff` (etypes).  *bytes gets the
 * packed bytes moved (reads stop at end of file).  coll: every rank of the file
 * calls it (two-phase I/O when the hints allow). */
int xm_io_access(struct xm_file *f, int write, MPI_Offset etoff, void *buf, int count,
                 MPI_Datatype dt, int coll, size_t *bytes);

/* shared file pointer (etypes): atomic fetch-and-add, read, set */
int xm_io_shfp_fetch_add(struct xm_file *f, MPI_Offset delta, MPI_Offset *old);
int xm_io_shfp_set(struct xm_file *f, MPI_Offset val);

/* twophase.c: collective buffering over pieces sorted by offset.  0 or class. */
int xm_io_twophase(struct xm_file *f, int write, struct xm_io_piece *p, int np,
                   char *stream);
/* independent access of a piece list (sieving, atomic locks): file.c */
int xm_io_indep(struct xm_file *f, int write, struct xm_io_piece *p, int np, char *stream,
                size_t *moved);

/* datarep.c: the registry of user data representations.  0 or an error class. */
int xm_io_datarep_register(const char *name, MPI_Datarep_conversion_function *rd,
                           MPI_Datarep_conversion_function *wr,
                           MPI_Datarep_extent_function *ext, void *extra);
const struct xm_datarep *xm_io_datarep_find(const char *name);
/* every basic type of t has a file extent equal to its native size (else the
 * extent function's error, or MPI_ERR_UNSUPPORTED_DATAREP) */
int xm_io_datarep_check(const struct xm_datarep *r, const struct xm_dtype *t);
int xm_io_datarep_extent(const struct xm_datarep *r, MPI_Datatype dt, MPI_Aint *extent);
/* typemap entries (conversion `count`) in the first `bytes` packed bytes of a stream
 * of t: whole entries only */
int xm_io_datarep_items(const struct xm_dtype *t, size_t bytes, size_t *items);

#endif
