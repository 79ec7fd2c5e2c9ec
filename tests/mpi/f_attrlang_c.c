/*
 * f_attrlang_c.c - the C half of f_attrlang.f90: reads and sets communicator, datatype
 *   and window attributes from C on objects whose attributes Fortran sets and reads
 *   (MPI-3.1 17.2.7): a value set by Fortran reads in C as a pointer to an MPI_Aint
 *   (MPI_xxx_SET_ATTR) or an INTEGER (MPI_ATTR_PUT); a C pointer reads in Fortran as
 *   the address.  Also a C keyval whose copy and delete callbacks see Fortran-set values
 *   in C's form.
 */
#include <mpi.h>

void c_check_(MPI_Fint *what, MPI_Fint *obj, MPI_Fint *kv, MPI_Fint *isint,
              MPI_Aint *expect, MPI_Fint *errs);
void c_set_(MPI_Fint *what, MPI_Fint *obj, MPI_Fint *kv, MPI_Aint *addr);
void c_keyval_(MPI_Fint *kv);
void c_counts_(MPI_Fint *ncopy, MPI_Fint *ndel, MPI_Fint *nbad);

static int get(int what, MPI_Fint obj, int kv, void *v, int *flag)
{
    if (what == 0)
        return MPI_Comm_get_attr(MPI_Comm_f2c(obj), kv, v, flag);
    if (what == 1)
        return MPI_Type_get_attr(MPI_Type_f2c(obj), kv, v, flag);
    return MPI_Win_get_attr(MPI_Win_f2c(obj), kv, v, flag);
}

/* what: 0 comm, 1 datatype, 2 window.  The attribute must be there and point to *expect
 * (an MPI_Aint, or an INTEGER when isint). */
void c_check_(MPI_Fint *what, MPI_Fint *obj, MPI_Fint *kv, MPI_Fint *isint,
              MPI_Aint *expect, MPI_Fint *errs)
{
    void *v = NULL;
    int flag = 0;
    if (get(*what, *obj, *kv, &v, &flag) != MPI_SUCCESS || !flag || !v) {
        (*errs)++;
        return;
    }
    if (*isint ? *(MPI_Fint *)v != (MPI_Fint)*expect : *(MPI_Aint *)v != *expect)
        (*errs)++;
}

/* set the attribute from C to the address of a C variable, handed back in *addr */
void c_set_(MPI_Fint *what, MPI_Fint *obj, MPI_Fint *kv, MPI_Aint *addr)
{
    static int cvars[3];
    void *p = &cvars[*what];
    if (*what == 0)
        MPI_Comm_set_attr(MPI_Comm_f2c(*obj), *kv, p);
    else if (*what == 1)
        MPI_Type_set_attr(MPI_Type_f2c(*obj), *kv, p);
    else
        MPI_Win_set_attr(MPI_Win_f2c(*obj), *kv, p);
    *addr = (MPI_Aint)p;
}

/* a C communicator keyval: both callbacks expect the Fortran-set value 5555 */
static int ncopy, ndel, nbad;

static int ccopy(MPI_Comm c, int kv, void *extra, void *in, void *out, int *flag)
{
    (void)c; (void)kv; (void)extra;
    if (!in || *(MPI_Aint *)in != 5555)
        nbad++;
    ncopy++;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

static int cdel(MPI_Comm c, int kv, void *val, void *extra)
{
    (void)c; (void)kv; (void)extra;
    if (!val || *(MPI_Aint *)val != 5555)
        nbad++;
    ndel++;
    return MPI_SUCCESS;
}

void c_keyval_(MPI_Fint *kv)
{
    int k = MPI_KEYVAL_INVALID;
    MPI_Comm_create_keyval(ccopy, cdel, &k, NULL);
    *kv = k;
}

void c_counts_(MPI_Fint *c, MPI_Fint *d, MPI_Fint *b)
{
    *c = ncopy;
    *d = ndel;
    *b = nbad;
}
