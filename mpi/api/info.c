/*
 * info.c - the MPI_Info calls with their argument checks, and the communicator calls
 *          that take info objects (Comm_set_info ignores hints, Comm_get_info returns
 *          an empty object).  The objects themselves are core/info.c's.
 * Contract: keys up to MPI_MAX_INFO_KEY, values up to MPI_MAX_INFO_VAL characters;
 *   Info_set of an existing key replaces its value in place (order is insertion order).
 *   MPI_INFO_ENV is an empty, read-only object.
 */
#include <stdlib.h>
#include <string.h>

#include "../core/xm.h"

XM_WEAK(MPI_Info_create)
XM_WEAK(MPI_Info_dup)
XM_WEAK(MPI_Info_free)
XM_WEAK(MPI_Info_set)
XM_WEAK(MPI_Info_get)
XM_WEAK(MPI_Info_delete)
XM_WEAK(MPI_Info_get_nkeys)
XM_WEAK(MPI_Info_get_nthkey)
XM_WEAK(MPI_Info_get_valuelen)
XM_WEAK(MPI_Comm_set_info)
XM_WEAK(MPI_Comm_get_info)

#define GETI(in, h, fn)                                                                  \
    struct xm_info *in = xm_info_get(h);                                                 \
    if (!in)                                                                             \
    return xm_err(NULL, MPI_ERR_INFO, fn)

static int bad_key(const char *key)
{
    return !key || !*key || strlen(key) > MPI_MAX_INFO_KEY;
}

int PMPI_Info_create(MPI_Info *info)
{
    return xm_info_new(info) ? xm_err(NULL, MPI_ERR_NO_MEM, "MPI_Info_create")
                             : MPI_SUCCESS;
}

int PMPI_Info_set(MPI_Info info, const char *key, const char *value)
{
    GETI(in, info, "MPI_Info_set");
    if (info == MPI_INFO_ENV)
        return xm_err(NULL, MPI_ERR_INFO, "MPI_Info_set");
    if (bad_key(key))
        return xm_err(NULL, MPI_ERR_INFO_KEY, "MPI_Info_set");
    if (!value || strlen(value) > MPI_MAX_INFO_VAL)
        return xm_err(NULL, MPI_ERR_INFO_VALUE, "MPI_Info_set");
    if (xm_info_set(in, key, value))
        return xm_err(NULL, MPI_ERR_NO_MEM, "MPI_Info_set");
    return MPI_SUCCESS;
}

int PMPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
    GETI(in, info, "MPI_Info_get");
    if (bad_key(key))
        return xm_err(NULL, MPI_ERR_INFO_KEY, "MPI_Info_get");
    const char *v = xm_info_value(in, key);
    *flag = v != NULL;
    if (v && valuelen >= 0) {
        size_t n = strlen(v);
        if (n > (size_t)valuelen)
            n = (size_t)valuelen;
        memcpy(value, v, n);
        value[n] = '\0';
    }
    return MPI_SUCCESS;
}

int PMPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
    GETI(in, info, "MPI_Info_get_valuelen");
    const char *v = key ? xm_info_value(in, key) : NULL;
    *flag = v != NULL;
    if (v)
        *valuelen = (int)strlen(v);
    return MPI_SUCCESS;
}

int PMPI_Info_delete(MPI_Info info, const char *key)
{
    GETI(in, info, "MPI_Info_delete");
    if (!key || xm_info_delete(in, key))
        return xm_err(NULL, MPI_ERR_INFO_NOKEY, "MPI_Info_delete");
    return MPI_SUCCESS;
}

int PMPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
    GETI(in, info, "MPI_Info_get_nkeys");
    *nkeys = xm_info_nkeys(in);
    return MPI_SUCCESS;
}

int PMPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
    GETI(in, info, "MPI_Info_get_nthkey");
    const char *k = xm_info_nthkey(in, n);
    if (!k)
        return xm_err(NULL, MPI_ERR_ARG, "MPI_Info_get_nthkey");
    strcpy(key, k);
    return MPI_SUCCESS;
}

int PMPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
    GETI(in, info, "MPI_Info_dup");
    return xm_info_dup(in, newinfo) ? xm_err(NULL, MPI_ERR_NO_MEM, "MPI_Info_dup")
                                    : MPI_SUCCESS;
}

int PMPI_Info_free(MPI_Info *info)
{
    if (!xm_info_get(*info) || *info == MPI_INFO_ENV)
        return xm_err(NULL, MPI_ERR_INFO, "MPI_Info_free");
    xm_info_free(*info);
    *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}

int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
    if (!xm_comm_get(comm))
        return xm_err(NULL, MPI_ERR_COMM, "MPI_Comm_set_info");
    if (!xm_info_get(info))
        return xm_err(xm_comm_get(comm), MPI_ERR_INFO, "MPI_Comm_set_info");
    return MPI_SUCCESS; /* no hints are used */
}

int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info *info)
{
    if (!xm_comm_get(comm))
        return xm_err(NULL, MPI_ERR_COMM, "MPI_Comm_get_info");
    return PMPI_Info_create(info);
}

/* ---- (issue 21) MPI-4's Info_get_string ----------------
 * *buflen in: bytes of value (0: value may be NULL); out: the value's length + 1.
 * The value is cut to *buflen - 1 characters and always terminated. */
XM_WEAK(MPI_Info_get_string)
int PMPI_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag)
{
    GETI(in, info, "MPI_Info_get_string");
    if (bad_key(key))
        return xm_err(NULL, MPI_ERR_INFO_KEY, "MPI_Info_get_string");
    if (!buflen || !flag || *buflen < 0 || (*buflen > 0 && !value))
        return xm_err(NULL, MPI_ERR_ARG, "MPI_Info_get_string");
    const char *v = xm_info_value(in, key);
    *flag = v != NULL;
    if (!v)
        return MPI_SUCCESS;
    size_t n = strlen(v);
    if (*buflen > 0) {
        size_t m = n < (size_t)*buflen - 1 ? n : (size_t)*buflen - 1;
        memcpy(value, v, m);
        value[m] = '\0';
    }
    *buflen = (int)n + 1;
    return MPI_SUCCESS;
}

/* ---- (issue 22, Fortran info) MPI-4.0's MPI_Info_create_env ----------------------------
 * The keys MPI-4.0 names for the environment of this process, those Loom knows:
 *   command   argv[0] (argc/argv as given; when argv is NULL, as from Fortran, the
 *             process' own command line from /proc/self/cmdline)
 *   argv      the arguments after the command, separated by single blanks
 *   maxprocs  the size of MPI_COMM_WORLD as the launcher announced it (PMI_SIZE,
 *             OMPI_COMM_WORLD_SIZE or SLURM_NTASKS; 1 for a singleton)
 *   host      the host name;  arch  uname's machine;  wdir  the working directory
 * soft, file and thread_level are not set (nothing in a Loom launch gives them).
 * Everything is read from the process' environment, never from libmpi's state, so the
 * object is the same before MPI_Init, in between and after MPI_Finalize (MPI-4.0 lets
 * it be called at any time).  Values longer than MPI_MAX_INFO_VAL are cut. */
#include <stdio.h>
#include <unistd.h>
#include <sys/utsname.h>

XM_WEAK(MPI_Info_create_env)

/* set key to at most MPI_MAX_INFO_VAL characters of v */
static int env_set(MPI_Info info, const char *key, const char *v)
{
    char cut[MPI_MAX_INFO_VAL + 1];
    size_t n = strlen(v);
    if (n > MPI_MAX_INFO_VAL)
        n = MPI_MAX_INFO_VAL;
    memcpy(cut, v, n);
    cut[n] = '\0';
    return PMPI_Info_set(info, key, cut);
}

/* the words of argv (or of /proc/self/cmdline) from index 1 on, blank-separated */
static int env_args(MPI_Info info, int argc, char *argv[])
{
    char buf[MPI_MAX_INFO_VAL + 1], cmd[MPI_MAX_INFO_VAL + 1];
    size_t len = 0;
    int rc = MPI_SUCCESS;
    buf[0] = cmd[0] = '\0';
    if (argv && argc > 0) {
        if (argv[0])
            snprintf(cmd, sizeof cmd, "%s", argv[0]);
        for (int i = 1; i < argc && argv[i] && len < MPI_MAX_INFO_VAL; i++)
            len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", i > 1 ? " " : "",
                                    argv[i]);
    } else {
        FILE *f = fopen("/proc/self/cmdline", "r");
        if (f) {
            int c, word = 0;
            size_t clen = 0;
            while ((c = getc(f)) != EOF) {
                if (word == 0) {
                    if (c == '\0')
                        word = 1;
                    else if (clen < MPI_MAX_INFO_VAL)
                        cmd[clen++] = (char)c, cmd[clen] = '\0';
                } else if (len < MPI_MAX_INFO_VAL) {
                    buf[len++] = c == '\0' ? ' ' : (char)c;
                    buf[len] = '\0';
                }
            }
            fclose(f);
            while (len > 0 && buf[len - 1] == ' ') /* the last word's terminator */
                buf[--len] = '\0';
        }
    }
    if (len >= sizeof buf)
        len = sizeof buf - 1;
    buf[len] = '\0';
    if (cmd[0])
        rc = env_set(info, "command", cmd);
    if (rc == MPI_SUCCESS && buf[0])
        rc = env_set(info, "argv", buf);
    return rc;
}

int PMPI_Info_create_env(int argc, char *argv[], MPI_Info *info)
{
    if (!info)
        return xm_err(NULL, MPI_ERR_ARG, "MPI_Info_create_env");
    if (xm_info_new(info))
        return xm_err(NULL, MPI_ERR_NO_MEM, "MPI_Info_create_env");
    int rc = env_args(*info, argc, argv);
    const char *np = NULL;
    static const char *const sizes[] = {"PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS"};
    for (size_t i = 0; !np && i < sizeof sizes / sizeof *sizes; i++) {
        const char *v = getenv(sizes[i]);
        if (v && *v && strspn(v, "0123456789") == strlen(v) && strlen(v) < 10)
            np = v;
    }
    if (rc == MPI_SUCCESS)
        rc = env_set(*info, "maxprocs", np ? np : "1");
    char host[256];
    if (rc == MPI_SUCCESS && gethostname(host, sizeof host) == 0) {
        host[sizeof host - 1] = '\0';
        rc = env_set(*info, "host", host);
    }
    struct utsname u;
    if (rc == MPI_SUCCESS && uname(&u) == 0)
        rc = env_set(*info, "arch", u.machine);
    char *wd = rc == MPI_SUCCESS ? getcwd(NULL, 0) : NULL;
    if (wd) {
        rc = env_set(*info, "wdir", wd);
        free(wd);
    }
    if (rc != MPI_SUCCESS) {
        PMPI_Info_free(info);
        return rc; /* PMPI_Info_set has reported it */
    }
    return MPI_SUCCESS;
}
