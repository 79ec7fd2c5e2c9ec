/* fsroot_fixrand.c - LD_PRELOAD shim for t-fsroot-shm.sh: getrandom() returns 0xab
 * bytes, so the "random" part of libmpi's shared segment name is predictable and a
 * squatter can take it first.  Built by the test itself (cc -shared).
 */
#define _GNU_SOURCE
#include <string.h>
#include <sys/types.h>

ssize_t getrandom(void *buf, size_t n, unsigned int flags);
ssize_t getrandom(void *buf, size_t n, unsigned int flags)
{
    (void)flags;
    memset(buf, 0xab, n);
    return (ssize_t)n;
}
