/* fdio.h - small, EINTR-safe file descriptor helpers (libc only).
 *
 * Contract:
 *   Every function returns 0 (or a byte count) on success and a negative
 *   errno on failure; errno itself is left as the failing call set it.
 *   EINTR is always retried.  Nothing here keeps state.
 *
 * Notes:
 *   - fdio_read_full() stops early only at end of file, so a short count
 *     means EOF.  On a non-blocking fd it returns -EAGAIN if nothing at all
 *     could be read, or the partial count otherwise.
 *   - fdio_write_full() writes everything; on a non-blocking fd that is
 *     full it waits with poll() for writability, so it suits the final
 *     flush of a stream, not a reactor's hot path (use fdio_write there).
 */
#ifndef LOOM_FDIO_H
#define LOOM_FDIO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* One read()/write(), retried on EINTR.  Returns the count or -errno. */
ssize_t fdio_read(int fd, void *buf, size_t len);
ssize_t fdio_write(int fd, const void *buf, size_t len);

/* Read until len bytes or EOF.  Returns the count (short only at EOF). */
ssize_t fdio_read_full(int fd, void *buf, size_t len);
/* Write all len bytes.  Returns 0 or -errno (e.g. -EPIPE). */
int fdio_write_full(int fd, const void *buf, size_t len);

int fdio_set_nonblock(int fd, bool on);
int fdio_set_cloexec(int fd, bool on);

/* Grow this process's descriptor table once, so that `count` descriptors
 * above the lowest free one fit without growing it again (capped at the
 * soft RLIMIT_NOFILE).  Returns 0 or -errno; nothing stays open.
 * Why: Linux grows the table by doubling, and in a process with several
 * threads every growth waits for an RCU grace period (synchronize_rcu in
 * expand_fdtable), about 10 ms on this kind of VM.  A server about to open
 * two descriptors per task for 64 tasks paid two or three such waits on the
 * launch path; one early call pays at most one (none while the process
 * still has a single thread). */
int fdio_reserve(int count);

#endif /* LOOM_FDIO_H */
