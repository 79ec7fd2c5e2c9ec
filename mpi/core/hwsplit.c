/*
 * hwsplit.c - which instance of a hardware resource type (package, NUMA node, cache,
 *   core, PU) this process runs on, from its CPU binding and the hwloc topology, for
 *   MPI_Comm_split_type's HW_GUIDED/HW_UNGUIDED split types (contract in hwsplit.h).
 *   Owns the process's loaded topology (loaded on first use, kept: a split type call
 *   asks for several levels).
 *
 * An instance counts as "mine" when my CPU set (the binding; the whole machine when
 * the binding cannot be read) lies inside its CPU set: instances of one type are
 * disjoint, so there is at most one.  A process spread over several instances gets
 * MPI_UNDEFINED (MPI-4.0 7.4.2: a process in a resource's communicator uses that
 * instance and no other of the type).  Colour = node * 65536 + the instance's logical
 * index, so instances on different nodes (or pretend nodes) never share a colour.
 */
#include <config.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hwsplit.h"
#include "xm.h"

const char *const xm_hw_levels[XM_HW_LEVELS] = {
    "mpi_shared_memory", "package", "numanode", "l3cache",
    "l2cache",           "l1cache", "core",     "pu",
};

static int node_color(int idx)
{
    int node = xm_g.node_of ? xm_g.node_of[xm_g.rank] : 0;
    if (idx < 0 || idx >= 65536 || node < 0 || node >= 32768)
        return MPI_UNDEFINED;
    return node * 65536 + idx;
}

#ifdef HAVE_HWLOC
#include <hwloc.h>

static hwloc_topology_t topo;
static hwloc_bitmap_t mine;
static int state; /* 0 not tried, 1 loaded, -1 failed */

static int load(void)
{
    if (state)
        return state > 0;
    state = -1;
    if (hwloc_topology_init(&topo) < 0)
        return 0;
    if (hwloc_topology_load(topo) < 0 || !(mine = hwloc_bitmap_alloc())) {
        hwloc_topology_destroy(topo);
        return 0;
    }
    hwloc_const_cpuset_t all = hwloc_topology_get_topology_cpuset(topo);
    if (hwloc_get_cpubind(topo, mine, HWLOC_CPUBIND_PROCESS) < 0)
        hwloc_bitmap_copy(mine, all);
    hwloc_bitmap_and(mine, mine, all);
    if (hwloc_bitmap_iszero(mine))
        hwloc_bitmap_copy(mine, all);
    state = 1;
    return 1;
}

/* name -> hwloc type; 0 = unknown */
static int parse(const char *s, hwloc_obj_type_t *t)
{
    static const struct {
        const char *name;
        hwloc_obj_type_t type;
    } names[] = {
        {"machine", HWLOC_OBJ_MACHINE},   {"package", HWLOC_OBJ_PACKAGE},
        {"socket", HWLOC_OBJ_PACKAGE},    {"numanode", HWLOC_OBJ_NUMANODE},
        {"numa", HWLOC_OBJ_NUMANODE},     {"core", HWLOC_OBJ_CORE},
        {"pu", HWLOC_OBJ_PU},             {"hwthread", HWLOC_OBJ_PU},
        {"l1cache", HWLOC_OBJ_L1CACHE},   {"l1dcache", HWLOC_OBJ_L1CACHE},
        {"l1ucache", HWLOC_OBJ_L1CACHE},  {"l1icache", HWLOC_OBJ_L1ICACHE},
        {"l2cache", HWLOC_OBJ_L2CACHE},   {"l2dcache", HWLOC_OBJ_L2CACHE},
        {"l2ucache", HWLOC_OBJ_L2CACHE},  {"l2icache", HWLOC_OBJ_L2ICACHE},
        {"l3cache", HWLOC_OBJ_L3CACHE},   {"l3dcache", HWLOC_OBJ_L3CACHE},
        {"l3ucache", HWLOC_OBJ_L3CACHE},  {"l3icache", HWLOC_OBJ_L3ICACHE},
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (!strcasecmp(s, names[i].name)) {
            *t = names[i].type;
            return 1;
        }
    return 0;
}

int xm_hw_color(const char *type)
{
    if (!type)
        return MPI_UNDEFINED;
    if (!strcasecmp(type, "mpi_shared_memory"))
        return node_color(0);
    hwloc_obj_type_t t;
    if (!parse(type, &t) || !load())
        return MPI_UNDEFINED;
    hwloc_obj_t o = NULL;
    while ((o = hwloc_get_next_obj_by_type(topo, t, o)))
        if (o->cpuset && hwloc_bitmap_isincluded(mine, o->cpuset))
            return node_color((int)o->logical_index);
    return MPI_UNDEFINED;
}

#else /* without hwloc only the node is known */

int xm_hw_color(const char *type)
{
    if (type && (!strcasecmp(type, "mpi_shared_memory") || !strcasecmp(type, "machine")))
        return node_color(0);
    return MPI_UNDEFINED;
}

#endif
