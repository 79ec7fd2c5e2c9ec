/*
 * comm_hwsplit.c - MPI-4.0 MPI_Comm_split_type with MPI_COMM_TYPE_HW_GUIDED and
 *   MPI_COMM_TYPE_HW_UNGUIDED.  Guided: "mpi_shared_memory" is congruent to
 *   MPI_COMM_TYPE_SHARED; no info, another key, or a type with no instance here give
 *   MPI_COMM_NULL (and success); for "core" and "pu" a process's group is exactly the
 *   ranks with its own CPU affinity when that affinity is one core / one PU (run with
 *   LOOM_BIND=core), MPI_COMM_NULL when it spans several (unbound on a machine with
 *   several cores); "machine" is the node for an unbound process.  Unguided: MPI_COMM_NULL,
 *   or a strict subset whose info names a type, congruent to the guided split by it.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpitest.h"

static MPI_Comm guided(const char *key, const char *value)
{
    MPI_Info info = MPI_INFO_NULL;
    if (key) {
        MPI_Info_create(&info);
        MPI_Info_set(info, key, value);
    }
    MPI_Comm c = MPI_COMM_NULL;
    int rc = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &c);
    TEST_ASSERT_MSG(rc == MPI_SUCCESS, "%s=%s: rc %d", key ? key : "(no info)",
                    value ? value : "", rc);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    return c;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* my affinity as a string of CPU numbers, and every rank's */
    cpu_set_t set;
    char mine[256] = "", *all = malloc((size_t)size * sizeof(mine));
    int ncpu = 0;
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
        for (int i = 0; i < CPU_SETSIZE && strlen(mine) < sizeof(mine) - 8; i++)
            if (CPU_ISSET(i, &set)) {
                snprintf(mine + strlen(mine), 8, "%d,", i);
                ncpu++;
            }
    MPI_Allgather(mine, (int)sizeof(mine), MPI_CHAR, all, (int)sizeof(mine), MPI_CHAR,
                  MPI_COMM_WORLD);
    long online = sysconf(_SC_NPROCESSORS_ONLN);

    MPI_Comm shared, c;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
    int res = MPI_UNEQUAL;

    c = guided("mpi_hw_resource_type", "mpi_shared_memory");
    TEST_ASSERT(c != MPI_COMM_NULL);
    if (c != MPI_COMM_NULL) {
        MPI_Comm_compare(c, shared, &res);
        TEST_ASSERT_MSG(res == MPI_CONGRUENT, "mpi_shared_memory vs SHARED: %d", res);
        MPI_Comm_free(&c);
    }
    c = guided(NULL, NULL);
    TEST_ASSERT_MSG(c == MPI_COMM_NULL, "MPI_INFO_NULL gave a communicator");
    c = guided("shmem_topo", "core");
    TEST_ASSERT_MSG(c == MPI_COMM_NULL, "another key gave a communicator");
    c = guided("mpi_hw_resource_type", "no_such_thing");
    TEST_ASSERT_MSG(c == MPI_COMM_NULL, "an unknown type gave a communicator");

    /* machine: an unbound process (affinity = every online CPU) is on its node's */
    if (ncpu == online) {
        c = guided("mpi_hw_resource_type", "machine");
        TEST_ASSERT(c != MPI_COMM_NULL);
        if (c != MPI_COMM_NULL) {
            MPI_Comm_compare(c, shared, &res);
            TEST_ASSERT_MSG(res == MPI_CONGRUENT, "machine vs SHARED: %d", res);
            MPI_Comm_free(&c);
        }
    }
    /* core / pu: with one CPU (LOOM_BIND=core on a machine without hyperthreads), my
     * group = the ranks of my node with my affinity; on several cores: none */
    const char *fine[2] = {"core", "pu"};
    for (int f = 0; f < 2; f++) {
        c = guided("mpi_hw_resource_type", fine[f]);
        if (ncpu == 1) {
            TEST_ASSERT_MSG(c != MPI_COMM_NULL, "%s: bound to one CPU, no communicator",
                            fine[f]);
            if (c == MPI_COMM_NULL)
                continue;
            MPI_Group gc, gs, gw;
            MPI_Comm_group(c, &gc);
            MPI_Comm_group(shared, &gs);
            MPI_Comm_group(MPI_COMM_WORLD, &gw);
            int n, same = 0;
            MPI_Comm_size(c, &n);
            int ns;
            MPI_Comm_size(shared, &ns);
            for (int i = 0; i < ns; i++) {
                int w, r;
                MPI_Group_translate_ranks(gs, 1, &i, gw, &w);
                MPI_Group_translate_ranks(gw, 1, &w, gc, &r);
                int match = !strcmp(all + (size_t)w * sizeof(mine), mine);
                TEST_ASSERT_MSG(match == (r != MPI_UNDEFINED),
                                "%s: world rank %d (cpus %s, mine %s) %s", fine[f], w,
                                all + (size_t)w * sizeof(mine), mine,
                                match ? "missing" : "in my group");
                same += match;
            }
            TEST_ASSERT_MSG(n == same, "%s: size %d, %d ranks share my CPU", fine[f], n,
                            same);
            MPI_Group_free(&gc);
            MPI_Group_free(&gs);
            MPI_Group_free(&gw);
        } else if (ncpu == online && online > 1) {
            TEST_ASSERT_MSG(c == MPI_COMM_NULL, "%s: spread over %d CPUs, got a communicator",
                            fine[f], ncpu);
        }
        if (c != MPI_COMM_NULL)
            MPI_Comm_free(&c);
    }

    /* unguided: a strict subset named in the info, or nothing */
    MPI_Info info;
    MPI_Info_create(&info);
    c = MPI_COMM_NULL;
    int rc = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0, info, &c);
    TEST_ASSERT(rc == MPI_SUCCESS);
    int any = c != MPI_COMM_NULL, all_have;
    MPI_Allreduce(&any, &all_have, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (c != MPI_COMM_NULL) {
        int n, flag = 0;
        char type[MPI_MAX_INFO_VAL + 1] = "";
        MPI_Comm_size(c, &n);
        TEST_ASSERT_MSG(n < size, "unguided: size %d of %d", n, size);
        MPI_Info_get(info, "mpi_hw_resource_type", MPI_MAX_INFO_VAL, type, &flag);
        TEST_ASSERT_MSG(flag && *type, "unguided: no mpi_hw_resource_type in the info");
        if (ncpu == 1 && rank == 0)
            printf("unguided split by %s\n", type);
        MPI_Comm g = guided("mpi_hw_resource_type", type);
        TEST_ASSERT(g != MPI_COMM_NULL);
        if (g != MPI_COMM_NULL) {
            MPI_Comm_compare(c, g, &res);
            TEST_ASSERT_MSG(res == MPI_CONGRUENT, "unguided vs guided %s: %d", type, res);
            MPI_Comm_free(&g);
        }
        MPI_Comm_free(&c);
    } else {
        /* the guided calls above are collective: keep the count of calls in step */
        MPI_Comm g = guided("mpi_hw_resource_type", "no_such_thing");
        (void)g;
    }
    /* bound one per CPU with more ranks than CPUs: the split must happen */
    if (ncpu == 1 && size > online)
        TEST_ASSERT_MSG(all_have, "unguided: bound ranks got MPI_COMM_NULL");
    MPI_Info_free(&info);
    MPI_Comm_free(&shared);
    free(all);
    return test_finish();
}
