/* spawnmsg.c - a spawn request on its way from a proxy to the front end of a
 * multi-host mpiexec (MPX_P_SPAWN, conn.h): packed from the server core's parsed
 * request, and read back with the core's own bounds (PSRV_SPAWN_MAX_*), since
 * the front end runs what it says.  See spawn.h.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pack.h"
#include "spawn.h"

int mpx_spawn_pack(struct pack *pk, const struct psrv_spawn *req)
{
    size_t start = pk->len;

    pack_i32(pk, req->rank);
    pack_i32(pk, req->ncmds);
    for (int i = 0; i < req->ncmds; i++) {
        const struct psrv_spawn_cmd *c = &req->cmds[i];
        pack_str(pk, c->cmd);
        pack_i32(pk, c->maxprocs);
        pack_i32(pk, c->argc);
        for (int k = 0; k < c->argc; k++)
            pack_str(pk, c->argv[k]);
        pack_i32(pk, c->ninfo);
        for (int k = 0; k < c->ninfo; k++) {
            pack_str(pk, c->info[k].key);
            pack_str(pk, c->info[k].val);
        }
    }
    pack_i32(pk, req->npreput);
    for (int k = 0; k < req->npreput; k++) {
        pack_str(pk, req->preput[k].key);
        pack_str(pk, req->preput[k].val);
    }
    if (pack_error(pk))
        return pack_error(pk);
    return pk->len - start > MPX_SPAWN_MSG_MAX ? -E2BIG : 0;
}

/* Keep p (freed with m); on failure p is freed and -ENOMEM returned. */
static int msg_keep(struct mpx_spawn_msg *m, void *p)
{
    if (!p)
        return -ENOMEM;
    if (m->nstrs == m->capstrs) {
        int nc = m->capstrs ? m->capstrs * 2 : 64;
        void **nv = realloc(m->strs, sizeof(void *) * (size_t)nc);
        if (!nv) {
            free(p);
            return -ENOMEM;
        }
        m->strs = nv;
        m->capstrs = nc;
    }
    m->strs[m->nstrs++] = p;
    return 0;
}

/* One string of at most PSRV_SPAWN_MAX_STR bytes, kept in m. */
static const char *msg_str(struct unpack *u, struct mpx_spawn_msg *m, int *rc)
{
    if (*rc)
        return NULL;
    char *s = unpack_strdup(u);
    if (!s || strlen(s) > PSRV_SPAWN_MAX_STR) {
        free(s);
        *rc = -EPROTO;
        return NULL;
    }
    if ((*rc = msg_keep(m, s)) < 0)
        return NULL;
    return s;
}

static int count_in(struct unpack *u, int lo, int hi, int *rc)
{
    int v = unpack_i32(u);
    if (!*rc && (unpack_error(u) || v < lo || v > hi))
        *rc = -EPROTO;
    return *rc ? 0 : v;
}

int mpx_spawn_unpack(struct unpack *u, struct mpx_spawn_msg *m)
{
    int rc = 0;

    memset(m, 0, sizeof(*m));
    m->req.rank = count_in(u, 0, 1 << 30, &rc);
    m->req.ncmds = count_in(u, 1, PSRV_SPAWN_MAX_CMDS, &rc);
    if (rc)
        return rc;
    m->cmds = calloc((size_t)m->req.ncmds, sizeof(*m->cmds));
    if (!m->cmds)
        return -ENOMEM;
    m->req.cmds = m->cmds;
    for (int i = 0; i < m->req.ncmds && !rc; i++) {
        struct psrv_spawn_cmd *c = &m->cmds[i];
        c->cmd = msg_str(u, m, &rc);
        c->maxprocs = count_in(u, 0, PSRV_SPAWN_MAX_PROCS, &rc);
        c->argc = count_in(u, 0, PSRV_SPAWN_MAX_ARGS, &rc);
        if (rc)
            break;
        const char **av = calloc((size_t)c->argc + 1, sizeof(char *));
        if ((rc = msg_keep(m, av)) < 0)
            break;
        c->argv = av;
        for (int k = 0; k < c->argc && !rc; k++)
            av[k] = msg_str(u, m, &rc);
        c->ninfo = count_in(u, 0, PSRV_SPAWN_MAX_INFO, &rc);
        if (rc)
            break;
        struct psrv_kv *kv = calloc((size_t)c->ninfo + 1, sizeof(*kv));
        if ((rc = msg_keep(m, kv)) < 0)
            break;
        c->info = kv;
        for (int k = 0; k < c->ninfo && !rc; k++) {
            kv[k].key = msg_str(u, m, &rc);
            kv[k].val = msg_str(u, m, &rc);
        }
        m->req.total += c->maxprocs;
    }
    m->req.npreput = count_in(u, 0, PSRV_SPAWN_MAX_PREPUT, &rc);
    if (rc)
        return rc;
    m->preput = calloc((size_t)m->req.npreput + 1, sizeof(*m->preput));
    if (!m->preput)
        return -ENOMEM;
    m->req.preput = m->preput;
    for (int k = 0; k < m->req.npreput && !rc; k++) {
        m->preput[k].key = msg_str(u, m, &rc);
        m->preput[k].val = msg_str(u, m, &rc);
    }
    if (!rc && (unpack_error(u) || unpack_remaining(u) != 0 || m->req.total < 1 ||
                m->req.total > PSRV_SPAWN_MAX_PROCS))
        rc = -EPROTO;
    return rc;
}

void mpx_spawn_msg_free(struct mpx_spawn_msg *m)
{
    for (int i = 0; i < m->nstrs; i++)
        free(m->strs[i]);
    free(m->strs);
    free(m->cmds);
    free(m->preput);
    memset(m, 0, sizeof(*m));
}
