/*
 * largecount.h - helpers of the MPI-4.0 large-count bindings (api/largecount.c), used by
 * the generated api/largecount_gen.c.  Each returns MPI_SUCCESS or an MPI error class;
 * none calls the error handler (lc_fail does, once, for the binding's name).
 */
#ifndef LOOM_API_LARGECOUNT_H
#define LOOM_API_LARGECOUNT_H

#include <stdlib.h>

#include "../core/xm.h"

/* v fits in an int: *out = v; else MPI_ERR_COUNT (negative values are passed on: the
 * int form reports them as it always did). */
int lc_int(MPI_Count v, int *out);
/* n entries of v as a malloc'd int array (*out NULL when v is NULL or n <= 0, which the
 * int form treats as it always did); MPI_ERR_COUNT if one does not fit. */
int lc_ints(const MPI_Count *v, int n, int **out);
/* count elements of t: an int count, or, above INT_MAX, count 1 of *big, a committed
 * type of count elements of t (same extent per element) that the caller frees. */
int lc_count_or_type(MPI_Count count, MPI_Datatype t, int *out, MPI_Datatype *big);
/* How many entries a collective's count arrays have: the group the data goes to or
 * comes from (the remote group of an intercommunicator), the local group, the root's
 * (0 where the arrays are not significant), or the topology's in (0) / out (1) degree.
 * 0 for an invalid communicator: the int form then reports it. */
int lc_group_n(MPI_Comm comm);
int lc_local_n(MPI_Comm comm);
int lc_root_n(MPI_Comm comm, int root);
int lc_degree(MPI_Comm comm, int out);
/* The error handler of comm (MPI_COMM_NULL: MPI_COMM_WORLD's) for rc, named fn. */
int lc_fail(MPI_Comm comm, int rc, const char *fn);

#endif /* LOOM_API_LARGECOUNT_H */
