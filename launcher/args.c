/* args.c - parse the mpiexec command line into struct mpx_opts.
 *
 * Contract: see args.h.  The parser is a table of option names with their
 * kind (flag, one value, two values) and scope (global or per app), so the
 * one- and two-dash spellings and "--opt=value" are handled in one place.
 *
 * Notes:
 *   - Option names follow hydra (-n, -np, -env, -genv, -genvlist, -envlist,
 *     -wdir, -gwdir, -l, -prepend-rank, -bind-to) and Open MPI (-x,
 *     --tag-output, --report-bindings, --timeout, -wd).
 *   - argv strings are not copied: struct mpx_opts points into argv.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "log.h"

#define MPX_MAX_RANKS 65536

enum opt_id {
    O_NP,
    O_ENV,
    O_ENVLIST,
    O_WDIR,
    O_GENV,
    O_GENVLIST,
    O_X,
    O_GWDIR,
    O_TAG,
    O_BIND,
    O_REPORT,
    O_TIMEOUT,
    O_FENCE_TIMEOUT,
    O_VERBOSE,
    O_HELP,
    O_VERSION,
    O_GENVALL,
    O_GENVNONE,
    O_LAUNCHER,
    O_NO_SLURM,
    O_MPI,
    O_HOSTS,
    O_HOSTFILE,
    O_PPN,
    O_LAUNCHER_EXEC,
};

struct opt_def {
    const char *name;
    enum opt_id id;
    int nvals; /* 0, 1 or 2 */
};

static const struct opt_def opts[] = {
    {"n", O_NP, 1},
    {"np", O_NP, 1},
    {"env", O_ENV, 2},
    {"envlist", O_ENVLIST, 1},
    {"wdir", O_WDIR, 1},
    {"wd", O_WDIR, 1},
    {"genv", O_GENV, 2},
    {"genvlist", O_GENVLIST, 1},
    {"x", O_X, 1},
    {"genvall", O_GENVALL, 0},
    {"genvnone", O_GENVNONE, 0},
    {"gwdir", O_GWDIR, 1},
    {"l", O_TAG, 0},
    {"prepend-rank", O_TAG, 0},
    {"tag-output", O_TAG, 0},
    {"bind-to", O_BIND, 1},
    {"binding", O_BIND, 1},
    {"report-bindings", O_REPORT, 0},
    {"timeout", O_TIMEOUT, 1},
    {"fence-timeout", O_FENCE_TIMEOUT, 1},
    {"v", O_VERBOSE, 0},
    {"verbose", O_VERBOSE, 0},
    {"h", O_HELP, 0},
    {"help", O_HELP, 0},
    {"version", O_VERSION, 0},
    {"launcher", O_LAUNCHER, 1},
    {"bootstrap", O_LAUNCHER, 1},
    {"no-slurm", O_NO_SLURM, 0},
    {"mpi", O_MPI, 1},
    {"hosts", O_HOSTS, 1},
    {"host", O_HOSTS, 1},
    {"f", O_HOSTFILE, 1},
    {"hostfile", O_HOSTFILE, 1},
    {"machinefile", O_HOSTFILE, 1},
    {"ppn", O_PPN, 1},
    {"launcher-exec", O_LAUNCHER_EXEC, 1},
    {"bootstrap-exec", O_LAUNCHER_EXEC, 1},
};

static const char usage[] =
    "Usage: mpiexec [global options] [-n N] [app options] PROGRAM [ARGS...]\n"
    "               [: [-n N] [app options] PROGRAM2 [ARGS...] ...]\n"
    "\n"
    "Run N copies of PROGRAM on this host (or on the hosts of -hosts/-f),\n"
    "serving PMI-1 and PMI-2 to them; inside a Slurm allocation, run them\n"
    "with srun --mpi=loom instead.\n"
    "\n"
    "Per-application options (apply to the segment they appear in):\n"
    "  -n, -np N             number of ranks (default 1)\n"
    "  -env NAME VALUE       set NAME=VALUE for this application's ranks\n"
    "  -envlist A,B,...      pass these variables with mpiexec's values\n"
    "  -wdir, -wd DIR        working directory of the ranks\n"
    "Global options:\n"
    "  -genv NAME VALUE      set NAME=VALUE for all ranks\n"
    "  -x NAME[=VALUE]       export NAME (with VALUE, or mpiexec's value)\n"
    "  -genvlist A,B,...     export these variables to all ranks\n"
    "  -genvall, -genvnone   ranks inherit mpiexec's environment (default), or not\n"
    "  -gwdir DIR            default working directory\n"
    "  -l, --tag-output      prefix every output line with \"[rank] \"\n"
    "  -bind-to core|none    bind each rank to one core, round-robin (hwloc)\n"
    "  --report-bindings     print each rank's binding to stderr\n"
    "  --timeout SECS        kill the job after SECS seconds (exit 255)\n"
    "  --fence-timeout SECS  fail a PMI fence that takes longer than SECS\n"
    "  -hosts H1[:N],H2...   run on these hosts (N ranks per block, default 1)\n"
    "  -f, -hostfile FILE    hosts from FILE, one 'host[:N]' per line\n"
    "  -ppn N                N ranks per host (overrides the hosts' N)\n"
    "  -launcher ssh|rsh|fork|slurm   how to start the proxies (default ssh;\n"
    "                        fork starts every host's proxy on this machine)\n"
    "  -launcher-exec CMD    command to reach a host (run as CMD HOST COMMAND...)\n"
    "  -v, --verbose         report launcher progress on stderr\n"
    "  -h, --help            show this help\n"
    "  --version             show the version\n"
    "\n"
    "Ranks inherit mpiexec's environment.  Environment: MPIEXEC_TIMEOUT,\n"
    "LOOM_PMI_TRACE=1, LOOM_PMI_LOGLEVEL, LOOM_PMI_MAX_* (quotas, see mpiexec(1)),\n"
    "LOOM_HWLOC_XML, HWLOC_XMLFILE.\n"
    "See mpiexec(1).\n";

const char *mpx_args_usage(void)
{
    return usage;
}

static int strv_push(struct mpx_strv *sv, char *s)
{
    char **v = realloc(sv->v, sizeof(*v) * (size_t)(sv->n + 2));

    if (!v)
        return -ENOMEM;
    sv->v = v;
    v[sv->n++] = s;
    v[sv->n] = NULL;
    return 0;
}

static void strv_free(struct mpx_strv *sv, int owned)
{
    if (owned)
        for (int i = 0; i < sv->n; i++)
            free(sv->v[i]);
    free(sv->v);
    sv->v = NULL;
    sv->n = 0;
}

/* Strict decimal in [lo, hi]. */
static int parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    long v;

    if (!s || !*s)
        return -EINVAL;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -EINVAL;
    *out = (int)v;
    return 0;
}

static int valid_name(const char *s, size_t len)
{
    if (len == 0)
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (!(c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
              (i > 0 && c >= '0' && c <= '9')))
            return 0;
    }
    return 1;
}

/* Push "K=V" (allocated) onto sv. */
static int push_kv(struct mpx_strv *sv, const char *k, const char *v)
{
    size_t kl = strlen(k), vl = strlen(v);
    char *s = malloc(kl + vl + 2);

    if (!s)
        return -ENOMEM;
    memcpy(s, k, kl);
    s[kl] = '=';
    memcpy(s + kl + 1, v, vl + 1);
    if (strv_push(sv, s) < 0) {
        free(s);
        return -ENOMEM;
    }
    return 0;
}

/* "A,B,C" -> "A", "B", "C" (each allocated; resolved by the launcher). */
static int push_list(struct mpx_strv *sv, const char *list, const char *opt, char *err,
                     size_t errlen)
{
    const char *p = list;

    while (*p) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        if (len > 0) {
            if (!valid_name(p, len))
                return loom_errf(err, errlen, "option '%s': bad variable name '%.*s'",
                                 opt, (int)len, p);
            char *s = strndup(p, len);
            if (!s || strv_push(sv, s) < 0) {
                free(s);
                return -ENOMEM;
            }
        }
        if (!c)
            break;
        p = c + 1;
    }
    return 0;
}

static const struct opt_def *lookup(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
        if (strlen(opts[i].name) == len && strncmp(opts[i].name, name, len) == 0)
            return &opts[i];
    return NULL;
}

static struct mpx_app *new_app(struct mpx_opts *o)
{
    struct mpx_app *a = realloc(o->apps, sizeof(*a) * (size_t)(o->napps + 1));

    if (!a)
        return NULL;
    o->apps = a;
    a = &o->apps[o->napps++];
    memset(a, 0, sizeof(*a));
    a->np = -1;
    return a;
}

int mpx_args_parse(int argc, char **argv, struct mpx_opts *o, char *err, size_t errlen)
{
    struct mpx_app *app;
    int i = 1, rc;

    memset(o, 0, sizeof(*o));
    if (err && errlen)
        err[0] = '\0';
    app = new_app(o);
    if (!app)
        return -ENOMEM;

    while (i < argc) {
        const char *arg = argv[i];

        if (strcmp(arg, ":") == 0) {
            if (!app->argv)
                return loom_errf(err, errlen, "':' without a program before it");
            app = new_app(o);
            if (!app)
                return -ENOMEM;
            i++;
            continue;
        }
        if (app->argv) {
            /* Arguments of the program, up to the next ":". */
            app->argc++;
            i++;
            continue;
        }
        if (arg[0] != '-' || arg[1] == '\0') {
            /* The program: it and its arguments are argv[i..next ":"). */
            app->argv = &argv[i];
            app->argc = 1;
            i++;
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            if (i + 1 >= argc || strcmp(argv[i + 1], ":") == 0)
                return loom_errf(err, errlen, "no program after '--'");
            app->argv = &argv[i + 1];
            app->argc = 1;
            i += 2;
            continue;
        }

        const char *name = arg + 1;
        if (*name == '-')
            name++;
        const char *eq = strchr(name, '=');
        size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
        const struct opt_def *d = lookup(name, nlen);
        if (!d)
            return loom_errf(err, errlen, "unknown option '%s' (see mpiexec --help)",
                             arg);
        const char *v1 = NULL, *v2 = NULL;
        if (eq && d->nvals != 1)
            return loom_errf(err, errlen, "option '%.*s' does not take '=VALUE'",
                             (int)(eq - arg), arg);
        if (d->nvals >= 1) {
            if (eq) {
                v1 = eq + 1;
            } else {
                if (i + 1 >= argc)
                    return loom_errf(err, errlen, "option '%s' needs a value", arg);
                v1 = argv[++i];
            }
        }
        if (d->nvals == 2) {
            if (i + 1 >= argc)
                return loom_errf(err, errlen, "option '%s' needs a name and a value",
                                 arg);
            v2 = argv[++i];
        }
        i++;

        switch (d->id) {
        case O_NP:
            if (parse_int(v1, 1, MPX_MAX_RANKS, &app->np) < 0)
                return loom_errf(err, errlen,
                                 "option '%s': '%s' is not a number of ranks (1..%d)",
                                 arg, v1, MPX_MAX_RANKS);
            app->np_set = 1;
            break;
        case O_ENV:
        case O_GENV:
            if (!valid_name(v1, strlen(v1)))
                return loom_errf(err, errlen, "option '%s': bad variable name '%s'", arg,
                                 v1);
            rc = push_kv(d->id == O_ENV ? &app->env : &o->genv, v1, v2);
            if (rc < 0)
                return rc;
            break;
        case O_ENVLIST:
        case O_GENVLIST:
            rc = push_list(d->id == O_ENVLIST ? &app->env : &o->genv, v1, arg, err,
                           errlen);
            if (rc < 0)
                return rc;
            break;
        case O_X: {
            const char *e = strchr(v1, '=');
            size_t kl = e ? (size_t)(e - v1) : strlen(v1);
            if (!valid_name(v1, kl))
                return loom_errf(err, errlen, "option '%s': bad variable name '%.*s'",
                                 arg, (int)kl, v1);
            char *s = strdup(v1);
            if (!s || strv_push(&o->genv, s) < 0) {
                free(s);
                return -ENOMEM;
            }
            break;
        }
        case O_WDIR:
            if (!*v1)
                return loom_errf(err, errlen, "option '%s': empty directory", arg);
            app->wdir = v1;
            break;
        case O_GWDIR:
            if (!*v1)
                return loom_errf(err, errlen, "option '%s': empty directory", arg);
            o->gwdir = v1;
            break;
        case O_TAG:
            o->tag_output = 1;
            break;
        case O_BIND:
            if (strcmp(v1, "core") == 0 || strcmp(v1, "cores") == 0)
                o->bind = MPX_BIND_CORE;
            else if (strcmp(v1, "none") == 0)
                o->bind = MPX_BIND_NONE;
            else
                return loom_errf(
                    err, errlen,
                    "option '%s': unsupported binding '%s' (use core or none)", arg, v1);
            o->bind_set = 1;
            break;
        case O_REPORT:
            o->report_bindings = 1;
            break;
        case O_TIMEOUT:
            if (parse_int(v1, 0, INT_MAX / 1000, &o->timeout_s) < 0)
                return loom_errf(err, errlen,
                                 "option '%s': '%s' is not a number of seconds", arg, v1);
            break;
        case O_FENCE_TIMEOUT:
            if (parse_int(v1, 0, INT_MAX / 1000, &o->fence_timeout_s) < 0)
                return loom_errf(err, errlen,
                                 "option '%s': '%s' is not a number of seconds", arg, v1);
            break;
        case O_GENVALL:
            o->genv_none = 0;
            break;
        case O_GENVNONE:
            o->genv_none = 1;
            break;
        case O_LAUNCHER:
            if (strcmp(v1, "fork") == 0)
                o->launcher = MPX_LAUNCHER_FORK;
            else if (strcmp(v1, "slurm") == 0)
                o->launcher = MPX_LAUNCHER_SLURM;
            else if (strcmp(v1, "ssh") == 0)
                o->launcher = MPX_LAUNCHER_SSH;
            else if (strcmp(v1, "rsh") == 0)
                o->launcher = MPX_LAUNCHER_RSH;
            else
                return loom_errf(
                    err, errlen,
                    "option '%s': unknown launcher '%s' (use ssh, rsh, fork or "
                    "slurm)",
                    arg, v1);
            break;
        case O_NO_SLURM:
            o->launcher = MPX_LAUNCHER_FORK;
            break;
        case O_MPI:
            if (!*v1 || strpbrk(v1, " \t,="))
                return loom_errf(err, errlen, "option '%s': bad MPI type '%s'", arg, v1);
            o->mpi_type = v1;
            break;
        case O_HOSTS:
            if (!*v1)
                return loom_errf(err, errlen, "option '%s': empty host list", arg);
            o->hosts = v1;
            break;
        case O_HOSTFILE:
            if (!*v1)
                return loom_errf(err, errlen, "option '%s': empty file name", arg);
            o->hostfile = v1;
            break;
        case O_PPN:
            if (parse_int(v1, 1, MPX_MAX_RANKS, &o->ppn) < 0)
                return loom_errf(
                    err, errlen,
                    "option '%s': '%s' is not a number of ranks per host (1..%d)", arg,
                    v1, MPX_MAX_RANKS);
            break;
        case O_LAUNCHER_EXEC:
            if (!*v1 || strspn(v1, " \t") == strlen(v1))
                return loom_errf(err, errlen, "option '%s': empty command", arg);
            o->launcher_exec = v1;
            break;
        case O_VERBOSE:
            o->verbose = 1;
            break;
        case O_HELP:
            o->help = 1;
            break;
        case O_VERSION:
            o->version = 1;
            break;
        }
    }

    if (o->help || o->version)
        return 0;
    if (!app->argv) {
        if (o->napps > 1)
            return loom_errf(err, errlen, "no program after the last ':'");
        return loom_errf(err, errlen, "no program given (see mpiexec --help)");
    }
    o->nranks = 0;
    for (int k = 0; k < o->napps; k++) {
        struct mpx_app *a = &o->apps[k];
        if (a->np < 0)
            a->np = 1;
        char **v = malloc(sizeof(*v) * (size_t)(a->argc + 1));
        if (!v)
            return -ENOMEM;
        memcpy(v, a->argv, sizeof(*v) * (size_t)a->argc);
        v[a->argc] = NULL;
        a->argv = v;
        a->owns_argv = 1;
        if (o->nranks + a->np > MPX_MAX_RANKS)
            return loom_errf(err, errlen, "too many ranks (at most %d)", MPX_MAX_RANKS);
        o->nranks += a->np;
    }
    return 0;
}

void mpx_args_free(struct mpx_opts *o)
{
    if (!o)
        return;
    for (int k = 0; k < o->napps; k++) {
        strv_free(&o->apps[k].env, 1);
        if (o->apps[k].owns_argv)
            free(o->apps[k].argv);
    }
    free(o->apps);
    strv_free(&o->genv, 1);
    memset(o, 0, sizeof(*o));
}
