/*
 * attr.c - the MPI calls on keyvals and communicator attributes: Comm_create_keyval/
 *          free_keyval, Comm_set/get/delete_attr and their MPI-1 names (Keyval_*,
 *          Attr_*), with their argument checks, and the predefined attributes of
 *          MPI_COMM_WORLD (TAG_UB, UNIVERSE_SIZE, APPNUM, LASTUSEDCODE, ...).
 * Contract: the keyval table, the attribute lists and the copy/delete callbacks are
 *   core/attr.c's (its header says how freed keyvals and callbacks behave); a callback
 *   returning other than MPI_SUCCESS fails the call with that code.
 */
#include "../core/comm.h"

XM_WEAK(MPI_Comm_create_keyval)
XM_WEAK(MPI_Comm_free_keyval)
XM_WEAK(MPI_Comm_set_attr)
XM_WEAK(MPI_Comm_get_attr)
XM_WEAK(MPI_Comm_delete_attr)
XM_WEAK(MPI_Keyval_create)
XM_WEAK(MPI_Keyval_free)
XM_WEAK(MPI_Attr_put)
XM_WEAK(MPI_Attr_get)
XM_WEAK(MPI_Attr_delete)

static int predefined(int keyval)
{
    return ((unsigned)keyval & 0xff800000u) == 0x49000000u; /* kind KEYVAL, not dynamic */
}

int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *copy_fn,
                            MPI_Comm_delete_attr_function *delete_fn, int *keyval,
                            void *extra_state)
{
    int flang = xm_attr_lang_take();
    int rc = xm_keyval_create(copy_fn, delete_fn, extra_state, flang, keyval);
    return rc == MPI_SUCCESS ? rc : xm_err(NULL, rc, "MPI_Comm_create_keyval");
}

int PMPI_Comm_free_keyval(int *keyval)
{
    if (!keyval || !xm_keyval_valid(*keyval))
        return xm_err(NULL, MPI_ERR_KEYVAL, "MPI_Comm_free_keyval");
    xm_keyval_free(*keyval);
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

int PMPI_Comm_set_attr(MPI_Comm comm, int keyval, void *val)
{
    int lang = xm_attr_lang_take();
    struct xm_comm *c = xm_comm_get(comm);
    if (!c)
        return xm_err(NULL, MPI_ERR_COMM, "MPI_Comm_set_attr");
    if (!xm_keyval_valid(keyval))
        return xm_err(c, MPI_ERR_KEYVAL, "MPI_Comm_set_attr");
    int rc = xm_attr_set(c, keyval, val, lang);
    return rc == MPI_SUCCESS ? rc : xm_err(c, rc, "MPI_Comm_set_attr");
}

int PMPI_Comm_get_attr(MPI_Comm comm, int keyval, void *attr, int *flag)
{
    static int tag_ub = 0x3fffffff, universe, appnum, host = MPI_PROC_NULL,
               io = MPI_ANY_SOURCE, wtime_global = 0, lastused;
    int lang = xm_attr_lang_take();
    struct xm_comm *c = xm_comm_get(comm);
    if (!c)
        return xm_err(NULL, MPI_ERR_COMM, "MPI_Comm_get_attr");
    if (predefined(keyval)) {
        void *v = NULL;
        universe = xm_g.universe;
        appnum = xm_g.appnum;
        switch (keyval) {
        case MPI_TAG_UB:
            v = &tag_ub;
            break;
        case MPI_UNIVERSE_SIZE:
            v = &universe;
            break;
        case MPI_APPNUM:
            v = &appnum;
            break;
        case MPI_HOST:
            v = &host;
            break;
        case MPI_IO:
            v = &io;
            break;
        case MPI_WTIME_IS_GLOBAL:
            v = &wtime_global;
            break;
        case MPI_LASTUSEDCODE: /* grows with MPI_Add_error_class/code (api/env.c) */
            lastused = xm_err_last_used();
            v = &lastused;
            break;
        default:
            return xm_err(c, MPI_ERR_KEYVAL, "MPI_Comm_get_attr");
        }
        *flag = 1;
        *(void **)attr = v;
        return MPI_SUCCESS;
    }
    if (!xm_keyval_valid(keyval))
        return xm_err(c, MPI_ERR_KEYVAL, "MPI_Comm_get_attr");
    struct xm_attr *a = xm_attr_find(c, keyval);
    *flag = a != NULL;
    if (a)
        *(void **)attr = xm_attr_view(a, lang);
    return MPI_SUCCESS;
}

int PMPI_Comm_delete_attr(MPI_Comm comm, int keyval)
{
    struct xm_comm *c = xm_comm_get(comm);
    if (!c)
        return xm_err(NULL, MPI_ERR_COMM, "MPI_Comm_delete_attr");
    if (!xm_keyval_valid(keyval))
        return xm_err(c, MPI_ERR_KEYVAL, "MPI_Comm_delete_attr");
    int rc = xm_attr_delete(c, keyval);
    return rc == MPI_SUCCESS ? rc : xm_err(c, rc, "MPI_Comm_delete_attr");
}

/* ---- MPI-1 names ---------------------------------------------------------------- */
int PMPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn,
                       int *keyval, void *extra_state)
{
    return PMPI_Comm_create_keyval((MPI_Comm_copy_attr_function *)copy_fn,
                                   (MPI_Comm_delete_attr_function *)delete_fn, keyval,
                                   extra_state);
}

int PMPI_Keyval_free(int *keyval)
{
    return PMPI_Comm_free_keyval(keyval);
}

int PMPI_Attr_put(MPI_Comm comm, int keyval, void *attr)
{
    return PMPI_Comm_set_attr(comm, keyval, attr);
}

int PMPI_Attr_get(MPI_Comm comm, int keyval, void *attr, int *flag)
{
    return PMPI_Comm_get_attr(comm, keyval, attr, flag);
}

int PMPI_Attr_delete(MPI_Comm comm, int keyval)
{
    return PMPI_Comm_delete_attr(comm, keyval);
}
