/* bind.h - CPU binding of ranks with hwloc (one core each, in common/hwcore.h order).
 *
 * Contract:
 *   mpx_bind_open() loads the topology (an XML file from LOOM_HWLOC_XML or
 *   HWLOC_XMLFILE if set, else this machine) and remembers the calling
 *   thread's binding.  mpx_bind_self(i) binds the calling thread to core
 *   loom_hwcore_nth(i) (packages alternate; wraps after the last core); a
 *   child spawned afterwards inherits that binding before it runs any code,
 *   so ranks never start on the wrong cores.
 *   mpx_bind_restore() puts the launcher's own binding back.
 *
 * Notes:
 *   - Without hwloc (configure --without-hwloc) mpx_bind_open() fails with
 *     ENOSYS and a message.
 *   - A topology loaded from XML describes another machine unless
 *     HWLOC_THISSYSTEM=1: binding then fails and the caller warns.
 */
#ifndef LOOM_LAUNCHER_BIND_H
#define LOOM_LAUNCHER_BIND_H

#include <stddef.h>

struct mpx_bind;

/* NULL + errno on failure, with a message in err. */
struct mpx_bind *mpx_bind_open(char *err, size_t errlen);
void mpx_bind_close(struct mpx_bind *b);
int mpx_bind_ncores(const struct mpx_bind *b);
/* Bind the calling thread to core index % ncores; describe the choice in
 * desc ("core L#3 (cpus 3,7)").  Returns 0 or -errno (desc still filled). */
int mpx_bind_self(struct mpx_bind *b, int index, char *desc, size_t desclen);
int mpx_bind_restore(struct mpx_bind *b);

#endif /* LOOM_LAUNCHER_BIND_H */
