/* fuzz_launch_env.c - libFuzzer target: libmpi's choice of process-manager interface
 * from the environment a launcher (or a user) left (mpi/core/boot_launch.c).
 *
 * fuzz-sources: mpi/core/boot_launch.c
 * fuzz-cflags: -Impi/core
 *
 * Contract: input = "NAME=value" entries separated by newlines (at most 64 entries,
 * 4 KiB in all).  xm_launch_detect must return one of the four kinds, and the message
 * it writes must be terminated inside its buffer and hold printable ASCII only (every
 * value it quotes is escaped): the message goes to a terminal and to logs.  A refusal
 * always has a message; PMI-2 and singleton never carry one unless forced.
 * Seeds: corpus/launch_env/ (the environments of srun --mpi=loom/pmi2/pmix/none,
 * Open MPI's mpirun, Hydra, a batch script; LOOM_MPI_PMI values).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "boot_launch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct env {
    const char *e[65];
};

static const char *get(const char *name, void *ctx)
{
    struct env *v = ctx;
    size_t n = strlen(name);
    for (int i = 0; v->e[i]; i++)
        if (strncmp(v->e[i], name, n) == 0 && v->e[i][n] == '=')
            return v->e[i] + n + 1;
    return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = 0;
    struct env v = {{0}};
    int n = 0;
    for (char *p = s; *p && n < 64;) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = 0;
        v.e[n++] = p;
        if (!nl)
            break;
        p = nl + 1;
    }
    struct xm_launch *l = malloc(sizeof(*l));
    if (!l) {
        free(s);
        return 0;
    }
    xm_launch_detect(get, &v, l);
    if (l->kind != XM_LAUNCH_PMI2 && l->kind != XM_LAUNCH_PMIX &&
        l->kind != XM_LAUNCH_SINGLETON && l->kind != XM_LAUNCH_REFUSE)
        __builtin_trap();
    size_t len = strnlen(l->why, sizeof(l->why));
    if (len == sizeof(l->why))
        __builtin_trap();
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)l->why[i] < 0x20 || (unsigned char)l->why[i] > 0x7e)
            __builtin_trap();
    if (l->kind == XM_LAUNCH_REFUSE && len == 0)
        __builtin_trap();
    if ((l->kind == XM_LAUNCH_PMI2 || l->kind == XM_LAUNCH_SINGLETON) && len != 0)
        __builtin_trap();
    free(l);
    free(s);
    return 0;
}
