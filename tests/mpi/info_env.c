/*
 * info_env.c - MPI-4.0's MPI_Info_create_env (issue 22): callable before MPI_Init,
 * between MPI_Init and MPI_Finalize and after MPI_Finalize, giving the same keys and
 * values each time; "command" is argv[0], "argv" the rest (here: given by the test
 * itself), "maxprocs" the size of MPI_COMM_WORLD, "wdir" the working directory; keys
 * not set are absent (flag 0); a NULL info pointer is MPI_ERR_ARG.
 * Rank 0 prints "No Errors" (every rank checks; the ones after MPI_Finalize too, and a
 * rank that finds an error there exits 1).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

static const char *const keys[] = {"command", "argv", "maxprocs", "soft", "host",
                                   "arch", "wdir", "file", "thread_level"};
#define NKEYS ((int)(sizeof keys / sizeof *keys))

static int fails;
#define CHECK(c)                                                                         \
    do {                                                                                 \
        if (!(c)) {                                                                      \
            printf("FAIL: line %d: %s\n", __LINE__, #c);                                 \
            fails++;                                                                     \
        }                                                                                \
    } while (0)

/* both objects hold the same keys with the same values */
static void same(MPI_Info a, MPI_Info b)
{
    for (int i = 0; i < NKEYS; i++) {
        char va[MPI_MAX_INFO_VAL], vb[MPI_MAX_INFO_VAL];
        int la = sizeof va, lb = sizeof vb, fa = -1, fb = -1;
        CHECK(MPI_Info_get_string(a, keys[i], &la, va, &fa) == MPI_SUCCESS);
        CHECK(MPI_Info_get_string(b, keys[i], &lb, vb, &fb) == MPI_SUCCESS);
        CHECK(fa == fb);
        if (fa && fb)
            CHECK(strcmp(va, vb) == 0);
    }
}

static int get(MPI_Info info, const char *key, char *val)
{
    int len = MPI_MAX_INFO_VAL, flag = 0;
    MPI_Info_get_string(info, key, &len, val, &flag);
    return flag;
}

int main(int argc, char **argv)
{
    (void)argc;
    char *args[] = {argv[0], "one", "two words", NULL};
    MPI_Info before, with_args, during, after;
    char v[MPI_MAX_INFO_VAL], cwd[4096];

    CHECK(MPI_Info_create_env(1, argv, &before) == MPI_SUCCESS);
    CHECK(MPI_Info_create_env(3, args, &with_args) == MPI_SUCCESS);
    MPI_Init(NULL, NULL);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    CHECK(MPI_Info_create_env(1, argv, &during) == MPI_SUCCESS);
    same(before, during);
    CHECK(get(during, "command", v) && strcmp(v, argv[0]) == 0);
    CHECK(!get(during, "argv", v));
    CHECK(get(with_args, "argv", v) && strcmp(v, "one two words") == 0);
    CHECK(get(with_args, "command", v) && strcmp(v, argv[0]) == 0);
    CHECK(get(during, "maxprocs", v) && atoi(v) == size);
    CHECK(get(during, "wdir", v) && getcwd(cwd, sizeof cwd) && strcmp(v, cwd) == 0);
    CHECK(get(during, "host", v) && v[0]);
    CHECK(get(during, "arch", v) && v[0]);
    CHECK(!get(during, "soft", v) && !get(during, "file", v));
    /* an object like any other: it can be changed, duplicated and freed */
    CHECK(MPI_Info_set(during, "soft", "1:4") == MPI_SUCCESS);
    CHECK(get(during, "soft", v) && strcmp(v, "1:4") == 0);
    CHECK(MPI_Info_create_env(0, NULL, NULL) == MPI_ERR_ARG);
    /* (no arguments: "command" from the process' own command line, no "argv") */
    MPI_Info own;
    CHECK(MPI_Info_create_env(0, NULL, &own) == MPI_SUCCESS);
    CHECK(get(own, "command", v) && strcmp(v, argv[0]) == 0);
    CHECK(!get(own, "argv", v));
    MPI_Info_free(&own);
    MPI_Info_free(&during);

    int total = 0;
    MPI_Allreduce(&fails, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Finalize();

    CHECK(MPI_Info_create_env(1, argv, &after) == MPI_SUCCESS);
    same(before, after);
    MPI_Info_free(&after);
    MPI_Info_free(&before);
    MPI_Info_free(&with_args);
    CHECK(before == MPI_INFO_NULL);
    if (rank == 0) {
        if (total + fails == 0)
            printf("No Errors\n");
        else
            printf("Found %d errors\n", total + fails);
    }
    return fails || total ? 1 : 0;
}
