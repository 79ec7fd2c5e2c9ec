/*
 * bind.c - bind this rank to a core or a package chosen from the hwloc topology.
 *
 * Contract: xm_bind_init() is called once by MPI_Init once the node map is known
 *   (xm_g.local_rank / xm_g.nlocal).  Policy from LOOM_BIND:
 *     none (default)  leave the affinity alone;
 *     core            local rank i gets core loom_hwcore_nth(i) (common/hwcore.h, the
 *                     order mpiexec -bind-to core uses too), which alternates between
 *                     packages (pkg0 core0, pkg1 core0, pkg0 core1, ...), wrapping around
 *                     when there are more ranks than cores;
 *     socket|package  local rank i gets package i mod npackages.
 *   A rank whose affinity is already narrower than the machine (mpiexec -bind-to, or
 *   Slurm's task plugin) is never rebound.  LOOM_REPORT_BINDINGS=1 prints one line per
 *   rank on stderr:  loom-mpi: rank R bound to core L#C (package L#P) cpus LIST
 *   (or "not bound (...)" with the reason).
 *   LOOM_HWLOC_XML (the launcher's variable) loads a topology from an XML file instead
 *   of this machine's; the choice is then only reported, not applied (the CPUs of an
 *   XML topology need not exist here).  Tests use it to get machine-independent output.
 *   Returns 0; binding failures are reported, never fatal.
 * Caveats: without hwloc at build time only `none` exists (a request is reported).
 */
#define _GNU_SOURCE
#include <config.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boot.h"
#include "xm.h"

#ifdef HAVE_HWLOC
#include <hwloc.h>

#include "../../common/hwcore.h"

static void report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void report(const char *fmt, ...)
{
    const char *e = getenv("LOOM_REPORT_BINDINGS");
    if (!e || !*e || !strcmp(e, "0"))
        return;
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    fprintf(stderr, "loom-mpi: rank %d %s\n", xm_g.rank, line);
}

int xm_bind_init(void)
{
    const char *pol = getenv("LOOM_BIND");
    if (!pol || !*pol || !strcmp(pol, "none"))
        return 0;
    int want_core = !strcmp(pol, "core");
    int want_pkg = !strcmp(pol, "socket") || !strcmp(pol, "package");
    if (!want_core && !want_pkg) {
        report("not bound (unknown LOOM_BIND=%s)", pol);
        return 0;
    }
    hwloc_topology_t t;
    if (hwloc_topology_init(&t) < 0)
        return 0;
    const char *xml = getenv("LOOM_HWLOC_XML");
    if (xml && *xml && hwloc_topology_set_xml(t, xml) < 0) {
        report("not bound (cannot read topology %s)", xml);
        hwloc_topology_destroy(t);
        return 0;
    }
    if (hwloc_topology_load(t) < 0) {
        hwloc_topology_destroy(t);
        return 0;
    }
    int dry = xml && *xml;
    if (!dry) {
        /* already bound (launcher or Slurm)?  then leave it */
        hwloc_bitmap_t cur = hwloc_bitmap_alloc();
        hwloc_const_cpuset_t all = hwloc_topology_get_topology_cpuset(t);
        int bound = cur && hwloc_get_cpubind(t, cur, HWLOC_CPUBIND_PROCESS) == 0 &&
                    !hwloc_bitmap_isincluded(all, cur);
        if (bound) {
            char *s = NULL;
            hwloc_bitmap_list_asprintf(&s, cur);
            report("not bound (already bound to cpus %s)", s ? s : "?");
            free(s);
            hwloc_bitmap_free(cur);
            hwloc_topology_destroy(t);
            return 0;
        }
        hwloc_bitmap_free(cur);
    }
    int i = xm_g.local_rank;
    hwloc_obj_t o, pk;
    if (want_core) {
        o = loom_hwcore_nth(t, i);
    } else {
        int npk = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE);
        o = npk > 0 ? hwloc_get_obj_by_type(t, HWLOC_OBJ_PACKAGE, (unsigned)(i % npk))
                    : NULL;
    }
    if (!o) {
        report("not bound (no %s in the topology)", want_core ? "core" : "package");
        hwloc_topology_destroy(t);
        return 0;
    }
    pk = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_PACKAGE, o);
    int pkidx = pk ? (int)pk->logical_index
                   : (o->type == HWLOC_OBJ_PACKAGE ? (int)o->logical_index : 0);
    char *cpus = NULL;
    hwloc_bitmap_list_asprintf(&cpus, o->cpuset);
    if (!dry && hwloc_set_cpubind(t, o->cpuset, HWLOC_CPUBIND_PROCESS) < 0) {
        report("not bound (hwloc_set_cpubind to %s failed)", cpus ? cpus : "?");
    } else if (want_core) {
        report("bound to core L#%d (package L#%d) cpus %s", (int)o->logical_index, pkidx,
               cpus ? cpus : "?");
    } else {
        report("bound to package L#%d cpus %s", pkidx, cpus ? cpus : "?");
    }
    free(cpus);
    hwloc_topology_destroy(t);
    return 0;
}

#else /* !HAVE_HWLOC */

int xm_bind_init(void)
{
    const char *pol = getenv("LOOM_BIND");
    if (pol && *pol && strcmp(pol, "none") != 0 && getenv("LOOM_REPORT_BINDINGS"))
        fprintf(stderr, "loom-mpi: rank %d not bound (built without hwloc)\n", xm_g.rank);
    return 0;
}

#endif
