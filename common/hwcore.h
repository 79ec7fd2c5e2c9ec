/* hwcore.h - the one order in which ranks of a node take cores (hwloc).
 *
 * Contract: loom_hwcore_nth(t, i) is the core local rank i is bound to, for
 *   mpiexec's -bind-to core (launcher/bind.c) and libmpi's LOOM_BIND=core
 *   (mpi/core/bind.c) alike, so a job lands on the same cores whoever binds it.
 *   Cores alternate between packages (pkg0 core0, pkg1 core0, pkg0 core1, ...;
 *   a package that ran out is skipped) and wrap around after the last core.
 *   That is Slurm's default distribution inside a node (block:cyclic: tasks
 *   cyclic over sockets, Slurm's srun(1) --distribution) and Open MPI's mapping
 *   by package; it spreads ranks over sockets and their caches and memory.
 *   A topology without core objects (some XML files list PUs only) uses PUs in
 *   the same order.  NULL only if the topology has neither.  O(i + packages).
 *
 *   Header only: it needs hwloc, which libloomcommon (libc only) does not link;
 *   include it only where <hwloc.h> is available.
 */
#ifndef LOOM_HWCORE_H
#define LOOM_HWCORE_H

#include <hwloc.h>
#include <stdlib.h>

static inline hwloc_obj_t loom_hwcore_nth(hwloc_topology_t t, int i)
{
    hwloc_obj_type_t ty = HWLOC_OBJ_CORE;
    int n = hwloc_get_nbobjs_by_type(t, ty);
    if (n <= 0) {
        ty = HWLOC_OBJ_PU;
        n = hwloc_get_nbobjs_by_type(t, ty);
    }
    if (n <= 0 || i < 0)
        return NULL;
    i %= n;
    int npk = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE);
    if (npk <= 1)
        return hwloc_get_obj_by_type(t, ty, (unsigned)i);
    int *next = calloc((size_t)npk, sizeof(int));
    if (!next)
        return hwloc_get_obj_by_type(t, ty, (unsigned)i);
    hwloc_obj_t found = NULL;
    /* k counts cores handed out; every round hands out >= 1 while k < n */
    for (int k = 0, p = 0, idle = 0; !found && idle < npk; p = (p + 1) % npk) {
        hwloc_obj_t pk = hwloc_get_obj_by_type(t, HWLOC_OBJ_PACKAGE, (unsigned)p);
        int in = pk ? hwloc_get_nbobjs_inside_cpuset_by_type(t, pk->cpuset, ty) : 0;
        if (next[p] >= in) {
            idle++;
            continue;
        }
        idle = 0;
        hwloc_obj_t c = hwloc_get_obj_inside_cpuset_by_type(t, pk->cpuset, ty,
                                                            (unsigned)next[p]++);
        if (k++ == i)
            found = c;
    }
    free(next);
    /* cores outside every package (none in practice): plain index order */
    return found ? found : hwloc_get_obj_by_type(t, ty, (unsigned)i);
}

#endif /* LOOM_HWCORE_H */
