/* hosts.c - host list parsing and rank placement for multi-host mpiexec.
 *
 * Contract: see hosts.h.
 *
 * Notes: the host-name check is strict on purpose: the name becomes an
 *   argument of ssh or of the user's -launcher-exec, so nothing that a shell
 *   or ssh could read as an option or a metacharacter gets through.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hosts.h"
#include "log.h"

static int valid_host(const char *s, size_t len)
{
    if (len == 0 || len > 255 || s[0] == '-' || s[0] == '.')
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '-' || c == '_'))
            return 0;
    }
    return 1;
}

static int parse_slots(const char *s, size_t len, int *out)
{
    long v = 0;

    if (len == 0 || len > 6)
        return -EINVAL;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -EINVAL;
        v = v * 10 + (s[i] - '0');
    }
    if (v < 1 || v > MPX_MAX_SLOTS)
        return -EINVAL;
    *out = (int)v;
    return 0;
}

static int push_host(struct mpx_hostlist *hl, const char *name, size_t len, int slots)
{
    struct mpx_host *h = realloc(hl->h, sizeof(*h) * (size_t)(hl->n + 1));

    if (!h)
        return -ENOMEM;
    hl->h = h;
    h[hl->n].name = strndup(name, len);
    if (!h[hl->n].name)
        return -ENOMEM;
    h[hl->n].slots = slots;
    hl->n++;
    return 0;
}

/* One "host[:n]" entry of len bytes; where: context for messages. */
static int parse_entry(const char *s, size_t len, struct mpx_hostlist *hl, const char *where,
                       char *err, size_t errlen)
{
    const char *colon = memchr(s, ':', len);
    size_t hl_len = colon ? (size_t)(colon - s) : len;
    int slots = 1;

    if (!valid_host(s, hl_len))
        return loom_errf(err, errlen, "%sbad host name '%.*s'", where, (int)hl_len, s);
    if (colon && parse_slots(colon + 1, len - hl_len - 1, &slots) < 0)
        return loom_errf(
            err, errlen, "%sbad process count '%.*s' for host '%.*s' (1..%d)", where,
            (int)(len - hl_len - 1), colon + 1, (int)hl_len, s, MPX_MAX_SLOTS);
    return push_host(hl, s, hl_len, slots);
}

int mpx_hosts_parse(const char *list, struct mpx_hostlist *hl, char *err, size_t errlen)
{
    const char *p = list;
    int rc, any = 0;

    if (!list)
        return loom_errf(err, errlen, "no host list");
    while (*p) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        if (len == 0)
            return loom_errf(err, errlen, "empty entry in host list '%s'", list);
        rc = parse_entry(p, len, hl, "", err, errlen);
        if (rc < 0)
            return rc;
        any = 1;
        if (!c)
            break;
        p = c + 1;
        if (!*p)
            return loom_errf(err, errlen, "empty entry in host list '%s'", list);
    }
    if (!any)
        return loom_errf(err, errlen, "empty host list");
    return 0;
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

int mpx_hostfile_parse(const char *text, const char *fname, struct mpx_hostlist *hl,
                       char *err, size_t errlen)
{
    const char *p = text;
    int line = 0, n0 = hl->n, rc;
    char where[300];

    while (*p) {
        const char *nl = strchr(p, '\n');
        const char *end = nl ? nl : p + strlen(p);
        const char *hash = memchr(p, '#', (size_t)(end - p));
        const char *e = hash ? hash : end;

        line++;
        snprintf(where, sizeof(where), "%s:%d: ", fname ? fname : "hostfile", line);
        while (p < e && is_space(*p))
            p++;
        while (e > p && is_space(e[-1]))
            e--;
        if (e > p) {
            /* "host[:n]" or "host slots=n" (Open MPI's spelling) */
            const char *sp = p;
            while (sp < e && !is_space(*sp))
                sp++;
            if (sp == e) {
                rc = parse_entry(p, (size_t)(e - p), hl, where, err, errlen);
            } else {
                const char *v = sp;
                int slots;
                while (v < e && is_space(*v))
                    v++;
                if ((size_t)(e - v) < 6 || strncmp(v, "slots=", 6) != 0 ||
                    memchr(p, ':', (size_t)(sp - p)) ||
                    parse_slots(v + 6, (size_t)(e - v - 6), &slots) < 0)
                    return loom_errf(err, errlen,
                                     "%sexpected 'host[:n]' or 'host slots=n', "
                                     "not '%.*s'",
                                     where, (int)(e - p), p);
                if (!valid_host(p, (size_t)(sp - p)))
                    return loom_errf(err, errlen, "%sbad host name '%.*s'", where,
                                     (int)(sp - p), p);
                rc = push_host(hl, p, (size_t)(sp - p), slots);
            }
            if (rc < 0)
                return rc;
        }
        if (!nl)
            break;
        p = nl + 1;
    }
    if (hl->n == n0)
        return loom_errf(err, errlen, "%s: no hosts in the file",
                         fname ? fname : "hostfile");
    return 0;
}

int mpx_hostfile_read(const char *path, struct mpx_hostlist *hl, char *err, size_t errlen)
{
    FILE *f = fopen(path, "re");
    char *text = NULL;
    size_t len = 0, cap = 0;
    int rc;

    if (!f) {
        rc = -errno;
        loom_errf(err, errlen, "cannot read host file %s: %s", path, strerror(errno));
        return rc;
    }
    for (;;) {
        if (cap - len < 4096) {
            if (cap > (16u << 20)) {
                fclose(f);
                free(text);
                return loom_errf(err, errlen, "host file %s is too large", path);
            }
            char *t = realloc(text, cap + 65536);
            if (!t) {
                fclose(f);
                free(text);
                return -ENOMEM;
            }
            text = t;
            cap += 65536;
        }
        size_t n = fread(text + len, 1, cap - len - 1, f);
        len += n;
        if (n == 0)
            break;
    }
    int ferr = ferror(f);
    fclose(f);
    if (ferr) {
        free(text);
        return loom_errf(err, errlen, "cannot read host file %s", path);
    }
    text[len] = '\0';
    if (strlen(text) != len) {
        free(text);
        return loom_errf(err, errlen, "host file %s contains a NUL byte", path);
    }
    rc = mpx_hostfile_parse(text, path, hl, err, errlen);
    free(text);
    return rc;
}

void mpx_hosts_free(struct mpx_hostlist *hl)
{
    if (!hl)
        return;
    for (int i = 0; i < hl->n; i++)
        free(hl->h[i].name);
    free(hl->h);
    hl->h = NULL;
    hl->n = 0;
}

long mpx_hosts_total_slots(const struct mpx_hostlist *hl, int ppn)
{
    long t = 0;

    for (int i = 0; i < hl->n; i++)
        t += ppn > 0 ? ppn : hl->h[i].slots;
    return t;
}

int mpx_hosts_layout(const struct mpx_hostlist *hl, int nranks, int ppn,
                     struct mpx_layout *ly)
{
    int *host_node = NULL;

    memset(ly, 0, sizeof(*ly));
    if (!hl || hl->n < 1 || nranks < 1)
        return -EINVAL;
    ly->size = nranks;
    ly->rank_node = malloc(sizeof(int) * (size_t)nranks);
    ly->node_host = calloc((size_t)hl->n, sizeof(char *));
    ly->node_nranks = calloc((size_t)hl->n, sizeof(int));
    host_node = malloc(sizeof(int) * (size_t)hl->n);
    if (!ly->rank_node || !ly->node_host || !ly->node_nranks || !host_node)
        goto nomem;
    /* host entry -> node: entries naming the same host share one node */
    for (int i = 0; i < hl->n; i++)
        host_node[i] = -1;

    int r = 0;
    while (r < nranks) {
        for (int i = 0; i < hl->n && r < nranks; i++) {
            int take = ppn > 0 ? ppn : hl->h[i].slots;
            if (take > nranks - r)
                take = nranks - r;
            if (host_node[i] < 0) {
                for (int j = 0; j < i; j++)
                    if (host_node[j] >= 0 && strcmp(hl->h[j].name, hl->h[i].name) == 0) {
                        host_node[i] = host_node[j];
                        break;
                    }
                if (host_node[i] < 0) {
                    ly->node_host[ly->nnodes] = strdup(hl->h[i].name);
                    if (!ly->node_host[ly->nnodes])
                        goto nomem;
                    host_node[i] = ly->nnodes++;
                }
            }
            for (int k = 0; k < take; k++)
                ly->rank_node[r++] = host_node[i];
            ly->node_nranks[host_node[i]] += take;
        }
    }
    free(host_node);
    return 0;
nomem:
    free(host_node);
    mpx_layout_free(ly);
    return -ENOMEM;
}

void mpx_layout_free(struct mpx_layout *ly)
{
    if (!ly)
        return;
    if (ly->node_host)
        for (int i = 0; i < ly->nnodes; i++)
            free(ly->node_host[i]);
    free(ly->node_host);
    free(ly->node_nranks);
    free(ly->rank_node);
    memset(ly, 0, sizeof(*ly));
}

/* one name is the other's first label: "node1" vs "node1.example.org" */
static int same_short(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);

    if (la > lb)
        return same_short(b, a);
    return !strchr(a, '.') && strncmp(a, b, la) == 0 && b[la] == '.';
}

int mpx_host_is_local(const char *host, const char *myname)
{
    if (!host || !*host)
        return 0;
    if (strcmp(host, "localhost") == 0 || strncmp(host, "localhost.", 10) == 0)
        return 1;
    if (strncmp(host, "127.", 4) == 0 && strspn(host, "0123456789.") == strlen(host))
        return 1;
    if (!myname || !*myname)
        return 0;
    if (strcmp(host, myname) == 0)
        return 1;
    /* "node1" vs "node1.example.org": a dotted IPv4 address never matches this way */
    if (strspn(host, "0123456789.") == strlen(host))
        return 0;
    return same_short(host, myname);
}
