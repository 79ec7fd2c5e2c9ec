/*
 * datarep.c - user-defined data representations (MPI-3.1 13.5.3): the registry behind
 *             MPI_Register_datarep and the checks and conversions that file views and
 *             data accesses with such a representation go through (io/file.c).
 *
 * Owns: the process-wide table of registered representations (a name, the read and
 *   write conversion functions, the file-extent function, extra_state).  Entries live
 *   until the process ends: MPI has no call that removes a data representation.
 * Contract:
 *   - A name registered twice, or one of the predefined "native", "internal",
 *     "external32", is MPI_ERR_DUP_DATAREP.
 *   - Conversion functions are called once per access with the user's buffer and
 *     datatype, `count` basic data items (typemap entries of the datatype tiled over
 *     the buffer) and position 0, as the standard words it (count and position are
 *     counted in typemap entries, not whole datatypes nor bytes).
 *   - MPI_CONVERSION_FN_NULL for a direction: the data moves in the native
 *     representation, as for "native".
 * Caveat: the file layout of a view is computed with the native type sizes, so every
 *   basic type of the etype, the filetype and the access datatype must have a file
 *   extent (dtype_file_extent_fn) equal to its native size; a different one is
 *   MPI_ERR_UNSUPPORTED_DATAREP at MPI_File_set_view or at the access.  Conversions
 *   that keep sizes (byte order, encodings, scaling, checksums in place) work.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "io.h"
#include "../dt/dtype.h"

static struct xm_datarep **reps;
static int nreps;

int xm_io_datarep_register(const char *name, MPI_Datarep_conversion_function *rd,
                           MPI_Datarep_conversion_function *wr,
                           MPI_Datarep_extent_function *ext, void *extra)
{
    size_t len = strnlen(name, MPI_MAX_DATAREP_STRING);
    if (!len || len >= MPI_MAX_DATAREP_STRING || !ext)
        return MPI_ERR_ARG;
    if (!strcmp(name, "native") || !strcmp(name, "internal") ||
        !strcmp(name, "external32") || xm_io_datarep_find(name))
        return MPI_ERR_DUP_DATAREP;
    struct xm_datarep **n = realloc(reps, (size_t)(nreps + 1) * sizeof(*n));
    if (!n)
        return MPI_ERR_NO_MEM;
    reps = n;
    struct xm_datarep *r = calloc(1, sizeof(*r));
    if (!r)
        return MPI_ERR_NO_MEM;
    memcpy(r->name, name, len + 1);
    r->rd = rd;
    r->wr = wr;
    r->ext = ext;
    r->extra = extra;
    reps[nreps++] = r;
    return MPI_SUCCESS;
}

const struct xm_datarep *xm_io_datarep_find(const char *name)
{
    for (int i = 0; i < nreps; i++)
        if (!strcmp(reps[i]->name, name))
            return reps[i];
    return NULL;
}

/* the basic types of one datatype, each asked once for its file extent */
struct extcheck {
    const struct xm_datarep *r;
    MPI_Datatype seen[32];
    int nseen;
    int rc;
};

static int ext_one(void *vctx, char *addr, MPI_Datatype h)
{
    (void)addr;
    struct extcheck *x = vctx;
    for (int i = 0; i < x->nseen; i++)
        if (x->seen[i] == h)
            return 0;
    MPI_Aint e = -1;
    int rc = x->r->ext(h, &e, x->r->extra);
    if (rc != MPI_SUCCESS) {
        x->rc = rc;
        return 1;
    }
    if (e != (MPI_Aint)XM_DT_SIZE(h)) {
        x->rc = MPI_ERR_UNSUPPORTED_DATAREP;
        return 1;
    }
    if (x->nseen < (int)(sizeof x->seen / sizeof x->seen[0]))
        x->seen[x->nseen++] = h;
    return 0;
}

int xm_io_datarep_check(const struct xm_datarep *r, const struct xm_dtype *t)
{
    struct extcheck x = {r, {0}, 0, MPI_SUCCESS};
    xm_dt_visit(NULL, 1, t, ext_one, &x);
    return x.rc;
}

int xm_io_datarep_extent(const struct xm_datarep *r, MPI_Datatype dt, MPI_Aint *extent)
{
    return r->ext(dt, extent, r->extra);
}

int xm_io_datarep_items(const struct xm_dtype *t, size_t bytes, size_t *items)
{
    size_t per = 0;
    if (t->size && xm_dt_bytes_to_elems(t, t->size, &per))
        return MPI_ERR_TYPE;
    size_t whole = t->size ? bytes / t->size : 0, part = 0;
    if (t->size && bytes % t->size && xm_dt_bytes_to_elems(t, bytes % t->size, &part))
        part = 0;   /* a read that ends inside an element: that element is not converted */
    *items = whole * per + part;
    return *items > INT_MAX ? MPI_ERR_COUNT : MPI_SUCCESS;
}
