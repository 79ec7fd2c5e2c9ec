/* bind.c - hwloc binding for mpiexec: local rank i takes core
 * loom_hwcore_nth(i) (common/hwcore.h: cores alternate between packages, the
 * order libmpi's LOOM_BIND=core uses too), wrapping around.
 *
 * Contract: see bind.h.
 *
 * Notes:
 *   - The launcher binds its own thread before each spawn instead of binding
 *     the child afterwards: the child inherits the mask at creation, so there
 *     is no window in which a rank (or threads it creates) runs unbound.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bind.h"

#ifdef HAVE_HWLOC
#include <hwloc.h>

#include "hwcore.h"

struct mpx_bind {
    hwloc_topology_t topo;
    hwloc_bitmap_t saved;
    int ncores;
    int have_saved;
};

struct mpx_bind *mpx_bind_open(char *err, size_t errlen)
{
    struct mpx_bind *b = calloc(1, sizeof(*b));
    const char *xml = getenv("LOOM_HWLOC_XML");

    if (!b)
        return NULL;
    if (!xml || !*xml)
        xml = getenv("HWLOC_XMLFILE");
    if (hwloc_topology_init(&b->topo) < 0) {
        snprintf(err, errlen, "hwloc: cannot initialize a topology");
        free(b);
        errno = ENOMEM;
        return NULL;
    }
    if (xml && *xml && hwloc_topology_set_xml(b->topo, xml) < 0) {
        int e = errno;
        snprintf(err, errlen, "hwloc: cannot use topology file '%s': %s", xml,
                 strerror(e));
        hwloc_topology_destroy(b->topo);
        free(b);
        errno = e ? e : EINVAL;
        return NULL;
    }
    if (hwloc_topology_load(b->topo) < 0) {
        int e = errno;
        snprintf(err, errlen, "hwloc: cannot load the topology: %s", strerror(e));
        hwloc_topology_destroy(b->topo);
        free(b);
        errno = e ? e : EINVAL;
        return NULL;
    }
    b->ncores = hwloc_get_nbobjs_by_type(b->topo, HWLOC_OBJ_CORE);
    if (b->ncores <= 0) /* some XML files have PUs only */
        b->ncores = hwloc_get_nbobjs_by_type(b->topo, HWLOC_OBJ_PU);
    if (b->ncores <= 0) {
        snprintf(err, errlen, "hwloc: the topology has no cores");
        hwloc_topology_destroy(b->topo);
        free(b);
        errno = ENODEV;
        return NULL;
    }
    b->saved = hwloc_bitmap_alloc();
    if (b->saved && hwloc_get_cpubind(b->topo, b->saved, HWLOC_CPUBIND_THREAD) == 0)
        b->have_saved = 1;
    return b;
}

void mpx_bind_close(struct mpx_bind *b)
{
    if (!b)
        return;
    if (b->saved)
        hwloc_bitmap_free(b->saved);
    hwloc_topology_destroy(b->topo);
    free(b);
}

int mpx_bind_ncores(const struct mpx_bind *b)
{
    return b ? b->ncores : 0;
}

int mpx_bind_self(struct mpx_bind *b, int index, char *desc, size_t desclen)
{
    int i = index % b->ncores;
    hwloc_obj_t obj = loom_hwcore_nth(b->topo, i);
    char cpus[256];

    if (!obj || !obj->cpuset) {
        snprintf(desc, desclen, "core #%d (no cpuset)", i);
        return -ENODEV;
    }
    hwloc_bitmap_list_snprintf(cpus, sizeof(cpus), obj->cpuset);
    snprintf(desc, desclen, "%s L#%u (cpus %s)", obj->type == HWLOC_OBJ_PU ? "PU" : "core",
             obj->logical_index, cpus);
    if (hwloc_set_cpubind(b->topo, obj->cpuset, HWLOC_CPUBIND_THREAD) < 0)
        return errno ? -errno : -EINVAL;
    return 0;
}

int mpx_bind_restore(struct mpx_bind *b)
{
    if (!b || !b->have_saved)
        return 0;
    if (hwloc_set_cpubind(b->topo, b->saved, HWLOC_CPUBIND_THREAD) < 0)
        return errno ? -errno : -EINVAL;
    return 0;
}

#else /* !HAVE_HWLOC */

struct mpx_bind {
    int unused;
};

struct mpx_bind *mpx_bind_open(char *err, size_t errlen)
{
    snprintf(err, errlen,
             "this mpiexec was built without hwloc: binding is not available");
    errno = ENOSYS;
    return NULL;
}

void mpx_bind_close(struct mpx_bind *b)
{
}

int mpx_bind_ncores(const struct mpx_bind *b)
{
    return 0;
}

int mpx_bind_self(struct mpx_bind *b, int index, char *desc, size_t desclen)
{
    snprintf(desc, desclen, "none");
    return -ENOSYS;
}

int mpx_bind_restore(struct mpx_bind *b)
{
    return 0;
}

#endif
