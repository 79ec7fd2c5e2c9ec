/*
 * obj_mpit.c - the MPI tool information interface (mpi/api/mpit.c), 2 or more ranks:
 *   - MPI_T_init_thread before MPI_Init and nested; calls outside it fail with
 *     MPI_T_ERR_NOT_INITIALIZED;
 *   - control variables: names, descriptions, lengths (the *len = 0 query), the
 *     LOOM_MPI_NETMOD enumeration, values equal to the environment, writes refused;
 *   - categories: every variable in exactly one, lookups by name;
 *   - performance variables: rank 1 sends 3 messages rank 0 has not asked for, then a
 *     4th on another tag; once rank 0 has the 4th (same source: the 3 arrived first)
 *     loom_unexpected_messages counts 3 and loom_unexpected_bytes their bytes; after
 *     receiving them both are 0 again; start/write/reset are refused;
 *   - bad indices, names and handles give the MPI_T error classes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

int main(int argc, char **argv)
{
    int provided, num, rank, rc;
    char name[256], desc[1024];
    int nlen, dlen, verb, bind, scope, count;
    MPI_Datatype dt;
    MPI_T_enum en;

    TEST_ASSERT(MPI_T_cvar_get_num(&num) == MPI_T_ERR_NOT_INITIALIZED);
    TEST_ASSERT(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS);
    TEST_ASSERT(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS);
    TEST_ASSERT(provided == MPI_THREAD_SINGLE);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    /* control variables */
    int ncvar = 0, netmod = -1;
    TEST_ASSERT(MPI_T_cvar_get_num(&ncvar) == MPI_SUCCESS && ncvar >= 10);
    for (int i = 0; i < ncvar; i++) {
        nlen = 0;
        TEST_ASSERT(MPI_T_cvar_get_info(i, NULL, &nlen, NULL, NULL, NULL, NULL, NULL, NULL,
                                        NULL) == MPI_SUCCESS);
        int want = nlen;
        nlen = sizeof(name);
        dlen = sizeof(desc);
        rc = MPI_T_cvar_get_info(i, name, &nlen, &verb, &dt, &en, desc, &dlen, &bind, &scope);
        TEST_ASSERT(rc == MPI_SUCCESS && nlen == want && nlen == (int)strlen(name) + 1);
        TEST_ASSERT_MSG(!strncmp(name, "LOOM_", 5) && dlen > 1, "cvar %d: %s", i, name);
        TEST_ASSERT(bind == MPI_T_BIND_NO_OBJECT && scope == MPI_T_SCOPE_READONLY);
        TEST_ASSERT(verb >= MPI_T_VERBOSITY_USER_BASIC && verb <= MPI_T_VERBOSITY_MPIDEV_ALL);
        int idx = -1;
        TEST_ASSERT(MPI_T_cvar_get_index(name, &idx) == MPI_SUCCESS && idx == i);
        MPI_T_cvar_handle h;
        TEST_ASSERT(MPI_T_cvar_handle_alloc(i, NULL, &h, &count) == MPI_SUCCESS);
        if (dt == MPI_INT) {
            int v = -1;
            TEST_ASSERT(count == 1 && MPI_T_cvar_read(h, &v) == MPI_SUCCESS);
            if (!strcmp(name, "LOOM_MPI_NETMOD")) {
                netmod = v;
                TEST_ASSERT(en != MPI_T_ENUM_NULL);
                const char *e = getenv("LOOM_MPI_NETMOD");
                TEST_ASSERT(v == (e && !strcmp(e, "tcp")));
            }
        } else {
            TEST_ASSERT(dt == MPI_CHAR && count > 1 && en == MPI_T_ENUM_NULL);
            char *v = malloc((size_t)count);
            TEST_ASSERT(MPI_T_cvar_read(h, v) == MPI_SUCCESS);
            const char *e = getenv(name);
            TEST_ASSERT_MSG(!strcmp(v, e ? e : ""), "%s reads \"%s\"", name, v);
            free(v);
        }
        TEST_ASSERT(MPI_T_cvar_write(h, &count) == MPI_T_ERR_CVAR_SET_NEVER);
        TEST_ASSERT(MPI_T_cvar_handle_free(&h) == MPI_SUCCESS && h == MPI_T_CVAR_HANDLE_NULL);
    }
    TEST_ASSERT(netmod == 0 || netmod == 1);
    int idx;
    TEST_ASSERT(MPI_T_cvar_get_index("LOOM_MPI_TCP_IF", &idx) == MPI_SUCCESS);
    TEST_ASSERT(MPI_T_cvar_get_index("NO_SUCH_VARIABLE", &idx) == MPI_T_ERR_INVALID_NAME);
    TEST_ASSERT(MPI_T_cvar_get_info(ncvar, name, &nlen, NULL, NULL, NULL, NULL, NULL, NULL,
                                    NULL) == MPI_T_ERR_INVALID_INDEX);
    /* the enumeration */
    MPI_T_cvar_get_index("LOOM_MPI_NETMOD", &idx);
    MPI_T_cvar_get_info(idx, NULL, NULL, NULL, &dt, &en, NULL, NULL, NULL, NULL);
    int nitems, val;
    nlen = sizeof(name);
    TEST_ASSERT(MPI_T_enum_get_info(en, &nitems, name, &nlen) == MPI_SUCCESS && nitems == 2);
    nlen = sizeof(name);
    TEST_ASSERT(MPI_T_enum_get_item(en, 1, &val, name, &nlen) == MPI_SUCCESS && val == 1 &&
                !strcmp(name, "tcp"));
    TEST_ASSERT(MPI_T_enum_get_item(en, 2, &val, name, &nlen) == MPI_T_ERR_INVALID_ITEM);

    /* categories: every variable in exactly one */
    int ncat, npvar, seen_c = 0, seen_p = 0;
    MPI_T_category_get_num(&ncat);
    MPI_T_pvar_get_num(&npvar);
    TEST_ASSERT(ncat >= 1 && npvar >= 3);
    for (int c = 0; c < ncat; c++) {
        int nc, np, nsub;
        nlen = sizeof(name);
        TEST_ASSERT(MPI_T_category_get_info(c, name, &nlen, NULL, NULL, &nc, &np, &nsub) ==
                    MPI_SUCCESS);
        int ci = -1;
        TEST_ASSERT(MPI_T_category_get_index(name, &ci) == MPI_SUCCESS && ci == c);
        int *ix = malloc(sizeof(int) * (size_t)(nc + np + 1));
        TEST_ASSERT(MPI_T_category_get_cvars(c, nc, ix) == MPI_SUCCESS);
        for (int k = 0; k < nc; k++)
            TEST_ASSERT(ix[k] >= 0 && ix[k] < ncvar);
        MPI_T_category_get_pvars(c, np, ix);
        for (int k = 0; k < np; k++)
            TEST_ASSERT(ix[k] >= 0 && ix[k] < npvar);
        free(ix);
        seen_c += nc;
        seen_p += np;
    }
    TEST_ASSERT(seen_c == ncvar && seen_p == npvar);

    /* performance variables */
    MPI_T_pvar_session ses;
    MPI_T_pvar_handle hm, hb;
    int pm, pb, cls, ro, cont, atomic;
    TEST_ASSERT(MPI_T_pvar_get_index("loom_unexpected_messages", MPI_T_PVAR_CLASS_LEVEL,
                                     &pm) == MPI_SUCCESS);
    TEST_ASSERT(MPI_T_pvar_get_index("loom_unexpected_bytes", MPI_T_PVAR_CLASS_SIZE, &pb) ==
                MPI_SUCCESS);
    TEST_ASSERT(MPI_T_pvar_get_index("loom_unexpected_messages", MPI_T_PVAR_CLASS_COUNTER,
                                     &idx) == MPI_T_ERR_INVALID_NAME);
    TEST_ASSERT(MPI_T_pvar_get_info(pm, NULL, NULL, NULL, &cls, &dt, NULL, NULL, NULL, NULL,
                                    &ro, &cont, &atomic) == MPI_SUCCESS);
    TEST_ASSERT(cls == MPI_T_PVAR_CLASS_LEVEL && dt == MPI_UNSIGNED_LONG_LONG && ro && cont);
    TEST_ASSERT(MPI_T_pvar_session_create(&ses) == MPI_SUCCESS);
    TEST_ASSERT(MPI_T_pvar_handle_alloc(ses, pm, NULL, &hm, &count) == MPI_SUCCESS &&
                count == 1);
    TEST_ASSERT(MPI_T_pvar_handle_alloc(ses, pb, NULL, &hb, &count) == MPI_SUCCESS);
    unsigned long long msgs = 99, bytes = 99, zero = 0;
    int buf[4][100], size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    memset(buf, 0, sizeof(buf));
    /* the other ranks wait for rank 0's "go" before they go on to collectives, whose
     * messages to rank 0 would be unexpected ones too */
    if (rank == 1) {
        for (int k = 0; k < 3; k++)
            MPI_Send(buf[k], 100, MPI_INT, 0, 5, MPI_COMM_WORLD);
        MPI_Send(buf[3], 1, MPI_INT, 0, 6, MPI_COMM_WORLD);
    }
    if (rank != 0) {
        MPI_Recv(buf[3], 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(buf[3], 1, MPI_INT, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        TEST_ASSERT(MPI_T_pvar_read(ses, hm, &msgs) == MPI_SUCCESS);
        TEST_ASSERT(MPI_T_pvar_read(ses, hb, &bytes) == MPI_SUCCESS);
        TEST_ASSERT_MSG(msgs == 3 && bytes == 3 * 100 * sizeof(int), "%llu messages, %llu bytes",
                        msgs, bytes);
        for (int k = 0; k < 3; k++)
            MPI_Recv(buf[k], 100, MPI_INT, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_T_pvar_read(ses, hm, &msgs);
        MPI_T_pvar_read(ses, hb, &bytes);
        TEST_ASSERT(msgs == 0 && bytes == 0);
        for (int r = 1; r < size; r++)
            MPI_Send(buf[3], 1, MPI_INT, r, 7, MPI_COMM_WORLD);
    }
    TEST_ASSERT(MPI_T_pvar_start(ses, hm) == MPI_T_ERR_PVAR_NO_STARTSTOP);
    TEST_ASSERT(MPI_T_pvar_start(ses, MPI_T_PVAR_ALL_HANDLES) == MPI_SUCCESS);
    TEST_ASSERT(MPI_T_pvar_write(ses, hm, &zero) == MPI_T_ERR_PVAR_NO_WRITE);
    TEST_ASSERT(MPI_T_pvar_reset(ses, hm) == MPI_T_ERR_PVAR_NO_WRITE);
    TEST_ASSERT(MPI_T_pvar_read(MPI_T_PVAR_SESSION_NULL, hm, &msgs) ==
                MPI_T_ERR_INVALID_SESSION);
    TEST_ASSERT(MPI_T_pvar_handle_free(ses, &hm) == MPI_SUCCESS &&
                hm == MPI_T_PVAR_HANDLE_NULL);
    TEST_ASSERT(MPI_T_pvar_read(ses, hm, &msgs) == MPI_T_ERR_INVALID_HANDLE);
    TEST_ASSERT(MPI_T_pvar_session_free(&ses) == MPI_SUCCESS);

    TEST_ASSERT(MPI_T_finalize() == MPI_SUCCESS);
    TEST_ASSERT(MPI_T_cvar_get_num(&num) == MPI_SUCCESS); /* still once initialized */
    TEST_ASSERT(MPI_T_finalize() == MPI_SUCCESS);
    TEST_ASSERT(MPI_T_cvar_get_num(&num) == MPI_T_ERR_NOT_INITIALIZED);
    TEST_ASSERT(MPI_T_finalize() == MPI_T_ERR_NOT_INITIALIZED);
    return test_finish();
}
