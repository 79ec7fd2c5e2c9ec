/*
 * obj_err.c - error classes, codes and strings (mpi/api/env.c):
 *   - every predefined class of MPI-3.1 has its own text and is its own class;
 *   - MPI_Add_error_class/code/string: new values above MPI_ERR_LASTCODE, their class,
 *     their string ("" until one is set), MPI_LASTUSEDCODE follows them, bad arguments
 *     (a code that is not a class, a predefined code's string) are MPI_ERR_ARG;
 *   - a user error handler receives a user code through MPI_Comm_call_errhandler;
 *   - file error handlers on MPI_FILE_NULL (the default for file operations).
 */
#include <stdio.h>
#include <string.h>

#include "mpitest.h"

static const int classes[] = {
    MPI_SUCCESS, MPI_ERR_BUFFER, MPI_ERR_COUNT, MPI_ERR_TYPE, MPI_ERR_TAG, MPI_ERR_COMM,
    MPI_ERR_RANK, MPI_ERR_REQUEST, MPI_ERR_ROOT, MPI_ERR_GROUP, MPI_ERR_OP,
    MPI_ERR_TOPOLOGY, MPI_ERR_DIMS, MPI_ERR_ARG, MPI_ERR_UNKNOWN, MPI_ERR_TRUNCATE,
    MPI_ERR_OTHER, MPI_ERR_INTERN, MPI_ERR_PENDING, MPI_ERR_IN_STATUS, MPI_ERR_ACCESS,
    MPI_ERR_AMODE, MPI_ERR_ASSERT, MPI_ERR_BAD_FILE, MPI_ERR_BASE, MPI_ERR_CONVERSION,
    MPI_ERR_DISP, MPI_ERR_DUP_DATAREP, MPI_ERR_FILE_EXISTS, MPI_ERR_FILE_IN_USE,
    MPI_ERR_FILE, MPI_ERR_INFO_KEY, MPI_ERR_INFO_NOKEY, MPI_ERR_INFO_VALUE, MPI_ERR_INFO,
    MPI_ERR_IO, MPI_ERR_KEYVAL, MPI_ERR_LOCKTYPE, MPI_ERR_NAME, MPI_ERR_NO_MEM,
    MPI_ERR_NOT_SAME, MPI_ERR_NO_SPACE, MPI_ERR_NO_SUCH_FILE, MPI_ERR_PORT, MPI_ERR_QUOTA,
    MPI_ERR_READ_ONLY, MPI_ERR_RMA_ATTACH, MPI_ERR_RMA_CONFLICT, MPI_ERR_RMA_RANGE,
    MPI_ERR_RMA_SHARED, MPI_ERR_RMA_SYNC, MPI_ERR_RMA_FLAVOR, MPI_ERR_SERVICE,
    MPI_ERR_SIZE, MPI_ERR_SPAWN, MPI_ERR_UNSUPPORTED_DATAREP,
    MPI_ERR_UNSUPPORTED_OPERATION, MPI_ERR_WIN, MPI_T_ERR_MEMORY,
    MPI_T_ERR_NOT_INITIALIZED, MPI_T_ERR_CANNOT_INIT, MPI_T_ERR_INVALID_INDEX,
    MPI_T_ERR_INVALID_ITEM, MPI_T_ERR_INVALID_HANDLE, MPI_T_ERR_OUT_OF_HANDLES,
    MPI_T_ERR_OUT_OF_SESSIONS, MPI_T_ERR_INVALID_SESSION, MPI_T_ERR_CVAR_SET_NOT_NOW,
    MPI_T_ERR_CVAR_SET_NEVER, MPI_T_ERR_PVAR_NO_STARTSTOP, MPI_T_ERR_PVAR_NO_WRITE,
    MPI_T_ERR_PVAR_NO_ATOMIC, MPI_T_ERR_INVALID_NAME, MPI_T_ERR_INVALID,
};

static int handler_calls, handler_code;
static void comm_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    handler_calls++;
    handler_code = *code;
}

static int file_calls, file_code;
static void file_handler(MPI_File *f, int *code, ...)
{
    file_calls += *f == MPI_FILE_NULL;
    file_code = *code;
}

int main(int argc, char **argv)
{
    char s[MPI_MAX_ERROR_STRING], t[MPI_MAX_ERROR_STRING];
    int len, cls, *last, flag;
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    int n = (int)(sizeof(classes) / sizeof(classes[0]));
    for (int i = 0; i < n; i++) {
        TEST_ASSERT(MPI_Error_class(classes[i], &cls) == MPI_SUCCESS && cls == classes[i]);
        TEST_ASSERT(MPI_Error_string(classes[i], s, &len) == MPI_SUCCESS);
        TEST_ASSERT_MSG(len > 0 && len == (int)strlen(s) && strncmp(s, "MPI error", 9),
                        "class %d: \"%s\"", classes[i], s);
        for (int j = 0; j < i; j++)
            TEST_ASSERT_MSG(classes[j] != classes[i], "classes %d and %d are equal", i, j);
        TEST_ASSERT(classes[i] <= MPI_ERR_LASTCODE);
    }
    for (int i = 0; i < n; i++) { /* texts differ */
        MPI_Error_string(classes[i], s, &len);
        for (int j = 0; j < i; j++) {
            MPI_Error_string(classes[j], t, &len);
            TEST_ASSERT_MSG(strcmp(s, t), "classes %d and %d both say \"%s\"", classes[i],
                            classes[j], s);
        }
    }

    /* user classes and codes */
    int c1, c2, e1, e2, e3;
    TEST_ASSERT(MPI_Add_error_class(&c1) == MPI_SUCCESS);
    TEST_ASSERT(MPI_Add_error_class(&c2) == MPI_SUCCESS);
    TEST_ASSERT(c1 > MPI_ERR_LASTCODE && c2 > MPI_ERR_LASTCODE && c1 != c2);
    TEST_ASSERT(MPI_Add_error_code(c1, &e1) == MPI_SUCCESS);
    TEST_ASSERT(MPI_Add_error_code(c1, &e2) == MPI_SUCCESS);
    TEST_ASSERT(MPI_Add_error_code(MPI_ERR_ARG, &e3) == MPI_SUCCESS);
    TEST_ASSERT(e1 != e2 && e1 != c1 && e1 != c2 && e3 != MPI_ERR_ARG);
    TEST_ASSERT(MPI_Add_error_code(e1, &e2) == MPI_ERR_ARG); /* e1 is no class */
    TEST_ASSERT(MPI_Error_class(e1, &cls) == MPI_SUCCESS && cls == c1);
    TEST_ASSERT(MPI_Error_class(e2, &cls) == MPI_SUCCESS && cls == c1);
    TEST_ASSERT(MPI_Error_class(e3, &cls) == MPI_SUCCESS && cls == MPI_ERR_ARG);
    TEST_ASSERT(MPI_Error_class(c2, &cls) == MPI_SUCCESS && cls == c2);
    TEST_ASSERT(MPI_Error_string(e1, s, &len) == MPI_SUCCESS && len == 0 && !s[0]);
    TEST_ASSERT(MPI_Add_error_string(e1, "first user code") == MPI_SUCCESS);
    TEST_ASSERT(MPI_Add_error_string(c2, "second user class") == MPI_SUCCESS);
    TEST_ASSERT(MPI_Add_error_string(e1, "first user code, again") == MPI_SUCCESS);
    MPI_Error_string(e1, s, &len);
    TEST_ASSERT_MSG(!strcmp(s, "first user code, again") && len == (int)strlen(s), "%s", s);
    MPI_Error_string(c2, s, &len);
    TEST_ASSERT(!strcmp(s, "second user class"));
    TEST_ASSERT(MPI_Add_error_string(MPI_ERR_ARG, "mine") == MPI_ERR_ARG);
    TEST_ASSERT(MPI_Error_class(-5, &cls) == MPI_ERR_ARG);
    int largest = e3 > c2 ? e3 : c2;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag);
    TEST_ASSERT_MSG(flag && *last == largest, "LASTUSEDCODE %d, largest %d", *last, largest);
    TEST_ASSERT(MPI_Error_class(largest + 1, &cls) == MPI_ERR_ARG);

    /* a user handler sees the user code */
    MPI_Errhandler eh;
    MPI_Comm_create_errhandler(comm_handler, &eh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
    TEST_ASSERT(MPI_Comm_call_errhandler(MPI_COMM_WORLD, e2) == MPI_SUCCESS);
    TEST_ASSERT(handler_calls == 1 && handler_code == e2);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&eh);

    /* files: MPI_FILE_NULL's handler, ERRORS_RETURN at start */
    MPI_Errhandler feh, got;
    TEST_ASSERT(MPI_File_get_errhandler(MPI_FILE_NULL, &got) == MPI_SUCCESS &&
                got == MPI_ERRORS_RETURN);
    TEST_ASSERT(MPI_File_call_errhandler(MPI_FILE_NULL, MPI_ERR_IO) == MPI_SUCCESS);
    TEST_ASSERT(MPI_File_create_errhandler(file_handler, &feh) == MPI_SUCCESS);
    TEST_ASSERT(MPI_File_set_errhandler(MPI_FILE_NULL, feh) == MPI_SUCCESS);
    TEST_ASSERT(MPI_File_get_errhandler(MPI_FILE_NULL, &got) == MPI_SUCCESS && got == feh);
    TEST_ASSERT(MPI_File_call_errhandler(MPI_FILE_NULL, c1) == MPI_SUCCESS);
    TEST_ASSERT(file_calls == 1 && file_code == c1);
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&feh);
    TEST_ASSERT(MPI_Errhandler_c2f(MPI_ERRORS_RETURN) != 0 &&
                MPI_Errhandler_f2c(MPI_Errhandler_c2f(MPI_ERRORS_RETURN)) == MPI_ERRORS_RETURN);
    return test_finish();
}
