/*
 * session.c - MPI-4.0 sessions (11.3): the session handles, their process sets and
 *             info, groups from process sets, communicators from groups, session
 *             error handlers.
 *
 * Owns: the session table (handle kind XM_K_SESSION; slots never reused, so a
 * finalized session's handle stays invalid), the two process sets, and the checks of
 * every session call.  Contract:
 *   - MPI_Session_init starts the engine if nothing did (api/env.c: it boots once and
 *     stays up while the world model or any session may use it); a session's thread
 *     level is asked with the info key "thread_level" (MPI_THREAD_SINGLE ...
 *     MPI_THREAD_MULTIPLE) and read back with MPI_Session_get_info.
 *   - Process sets: "mpi://WORLD" (every process of the job) and "mpi://SELF", names
 *     compared without case; their info has "mpi_size".  Another name is MPI_ERR_ARG.
 *   - MPI_Comm_create_from_group: the context id is agreed among the group's members
 *     keyed by the full string tag (core/sessboot.h), so concurrent creations with
 *     different tags never mix; the new communicator has the given error handler.
 *   - Errors of a session call go to the session's handler (MPI_Session_init: the one
 *     it was given); an invalid session handle (MPI_SESSION_NULL, a finalized one) is
 *     MPI_ERR_SESSION (MPI-4.0) through the default one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../core/comm.h"
#include "../core/sessboot.h"
#include "../core/xm.h"

XM_WEAK(MPI_Session_init)
XM_WEAK(MPI_Session_finalize)
XM_WEAK(MPI_Session_get_num_psets)
XM_WEAK(MPI_Session_get_nth_pset)
XM_WEAK(MPI_Session_get_info)
XM_WEAK(MPI_Session_get_pset_info)
XM_WEAK(MPI_Group_from_session_pset)
XM_WEAK(MPI_Comm_create_from_group)
XM_WEAK(MPI_Session_create_errhandler)
XM_WEAK(MPI_Session_set_errhandler)
XM_WEAK(MPI_Session_get_errhandler)
XM_WEAK(MPI_Session_call_errhandler)
XM_WEAK(MPI_Session_c2f)
XM_WEAK(MPI_Session_f2c)

struct sess {
    int live;
    int level;            /* thread level given */
    MPI_Errhandler errh;
};
static struct sess *tab;
static int ntab;

static const char *const psets[] = {"mpi://WORLD", "mpi://SELF"};
#define NPSETS 2
static const char *const level_names[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                          "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};

static struct sess *get(MPI_Session h)
{
    if (!(h & XM_H_VALID) || XM_H_KIND(h) != XM_K_SESSION || !(h & XM_H_DYN))
        return NULL;
    unsigned i = XM_H_INDEX(h);
    return i < (unsigned)ntab && tab[i].live ? &tab[i] : NULL;
}

static int errh_ok(MPI_Errhandler eh)
{
    return eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_RETURN || xm_errh_user_fn(eh);
}

/* run handler eh for an error of class cls in fn; *obj is the handle it is called with */
static int raise_on(MPI_Errhandler eh, int obj, int cls, const char *fn)
{
    if (cls == MPI_SUCCESS || eh == MPI_ERRORS_RETURN)
        return cls;
    MPI_Comm_errhandler_function *uf = xm_errh_user_fn(eh);
    if (uf) {
        int code = cls;
        uf(&obj, &code, fn);
        return cls;
    }
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (PMPI_Error_string(cls, s, &len) != MPI_SUCCESS)
        snprintf(s, sizeof(s), "MPI error %d", cls);
    xm_die("%s: %s", fn, s);
}

static int sess_err(MPI_Session h, struct sess *s, int cls, const char *fn)
{
    return raise_on(s->errh, h, cls, fn);
}

/* the session of handle h, or return MPI_ERR_SESSION through the default handler */
#define GET(s, h, fn)                                                                    \
    struct sess *s = get(h);                                                             \
    if (!s)                                                                              \
        return xm_err(NULL, MPI_ERR_SESSION, fn);

static int level_of(MPI_Info info, int *level)
{
    *level = MPI_THREAD_SINGLE;
    if (info == MPI_INFO_NULL)
        return MPI_SUCCESS;
    char v[64];
    int flag = 0;
    int rc = PMPI_Info_get(info, "thread_level", (int)sizeof(v) - 1, v, &flag);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!flag)
        return MPI_SUCCESS;
    for (int i = 0; i < 4; i++)
        if (strcasecmp(v, level_names[i]) == 0)
            *level = MPI_THREAD_SINGLE + i;
    return MPI_SUCCESS; /* an unknown value is ignored, as info values may be */
}

int PMPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session)
{
    const char *fn = "MPI_Session_init";
    if (!errh_ok(errhandler))
        return xm_err(NULL, MPI_ERR_ARG, fn);
    if (!session)
        return raise_on(errhandler, MPI_SESSION_NULL, MPI_ERR_ARG, fn);
    int level, rc = level_of(info, &level);
    if (rc != MPI_SUCCESS)
        return raise_on(errhandler, MPI_SESSION_NULL, MPI_ERR_INFO, fn);
    if (ntab >= (int)XM_H_INDEX(~0u))
        return raise_on(errhandler, MPI_SESSION_NULL, MPI_ERR_OTHER, fn);
    struct sess *n = realloc(tab, (size_t)(ntab + 1) * sizeof(*n));
    if (!n)
        return raise_on(errhandler, MPI_SESSION_NULL, MPI_ERR_NO_MEM, fn);
    tab = n;
    int given;
    rc = xm_engine_session_start(level, &given);
    if (rc != MPI_SUCCESS) {
        if (xm_g.finalized)
            fprintf(stderr, "loom-mpi: MPI_Session_init: the engine ended in MPI_Finalize "
                            "and cannot start again in this process\n");
        return raise_on(errhandler, MPI_SESSION_NULL, rc, fn);
    }
    tab[ntab] = (struct sess){.live = 1, .level = given, .errh = errhandler};
    *session = XM_H_MAKE(XM_K_SESSION, 1, ntab);
    ntab++;
    return MPI_SUCCESS;
}

int PMPI_Session_finalize(MPI_Session *session)
{
    if (!session)
        return xm_err(NULL, MPI_ERR_ARG, "MPI_Session_finalize");
    GET(s, *session, "MPI_Session_finalize");
    s->live = 0;
    xm_engine_session_end();
    *session = MPI_SESSION_NULL;
    return MPI_SUCCESS;
}

int PMPI_Session_get_num_psets(MPI_Session session, MPI_Info info, int *npset_names)
{
    GET(s, session, "MPI_Session_get_num_psets");
    if (!npset_names)
        return sess_err(session, s, MPI_ERR_ARG, "MPI_Session_get_num_psets");
    *npset_names = NPSETS;
    return MPI_SUCCESS;
}

int PMPI_Session_get_nth_pset(MPI_Session session, MPI_Info info, int n, int *pset_len,
                              char *pset_name)
{
    GET(s, session, "MPI_Session_get_nth_pset");
    if (n < 0 || n >= NPSETS || !pset_len || *pset_len < 0)
        return sess_err(session, s, MPI_ERR_ARG, "MPI_Session_get_nth_pset");
    /* MPI-4.0 11.3.2: pset_len 0 asks for the length (with the terminating null);
     * otherwise at most pset_len - 1 characters and a null are written */
    int need = (int)strlen(psets[n]) + 1;
    if (*pset_len > 0 && pset_name)
        snprintf(pset_name, (size_t)*pset_len, "%s", psets[n]);
    *pset_len = need;
    return MPI_SUCCESS;
}

static int pset_index(const char *name)
{
    for (int i = 0; name && i < NPSETS; i++)
        if (strcasecmp(name, psets[i]) == 0)
            return i;
    return -1;
}

static int new_info(const char *key, const char *val, MPI_Info *out)
{
    int rc = PMPI_Info_create(out);
    if (rc == MPI_SUCCESS && (rc = PMPI_Info_set(*out, key, val)) != MPI_SUCCESS)
        PMPI_Info_free(out);
    return rc;
}

int PMPI_Session_get_info(MPI_Session session, MPI_Info *info_used)
{
    GET(s, session, "MPI_Session_get_info");
    if (!info_used)
        return sess_err(session, s, MPI_ERR_ARG, "MPI_Session_get_info");
    int rc = new_info("thread_level", level_names[s->level - MPI_THREAD_SINGLE], info_used);
    return rc ? sess_err(session, s, rc, "MPI_Session_get_info") : MPI_SUCCESS;
}

int PMPI_Session_get_pset_info(MPI_Session session, const char *pset_name, MPI_Info *info)
{
    GET(s, session, "MPI_Session_get_pset_info");
    int k = pset_index(pset_name);
    if (k < 0 || !info)
        return sess_err(session, s, MPI_ERR_ARG, "MPI_Session_get_pset_info");
    char v[16];
    snprintf(v, sizeof(v), "%d", k == 0 ? xm_g.size : 1);
    int rc = new_info("mpi_size", v, info);
    return rc ? sess_err(session, s, rc, "MPI_Session_get_pset_info") : MPI_SUCCESS;
}

int PMPI_Group_from_session_pset(MPI_Session session, const char *pset_name,
                                 MPI_Group *newgroup)
{
    GET(s, session, "MPI_Group_from_session_pset");
    int k = pset_index(pset_name);
    if (k < 0 || !newgroup)
        return sess_err(session, s, MPI_ERR_ARG, "MPI_Group_from_session_pset");
    int n = k == 0 ? xm_g.size : 1;
    int *w = malloc((size_t)n * sizeof(int));
    if (!w)
        return sess_err(session, s, MPI_ERR_NO_MEM, "MPI_Group_from_session_pset");
    for (int i = 0; i < n; i++)
        w[i] = k == 0 ? i : xm_g.rank;
    struct xm_group *g = xm_group_new(n, w);
    if (!g)
        return sess_err(session, s, MPI_ERR_NO_MEM, "MPI_Group_from_session_pset");
    *newgroup = g->handle;
    return MPI_SUCCESS;
}

int PMPI_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info,
                                MPI_Errhandler errhandler, MPI_Comm *newcomm)
{
    const char *fn = "MPI_Comm_create_from_group";
    if (!errh_ok(errhandler))
        return xm_err(NULL, MPI_ERR_ARG, fn);
    struct xm_group *g = xm_group_get(group);
    if (!g || g->size == 0 || g->rank == MPI_UNDEFINED)
        return raise_on(errhandler, MPI_COMM_NULL, MPI_ERR_GROUP, fn);
    if (!stringtag || strlen(stringtag) >= MPI_MAX_STRINGTAG_LEN || !newcomm)
        return raise_on(errhandler, MPI_COMM_NULL, MPI_ERR_ARG, fn);
    uint32_t ctx;
    int rc = xm_sb_agree(stringtag, g->size, g->w, g->rank, &ctx);
    if (rc < 0)
        return raise_on(errhandler, MPI_COMM_NULL,
                        rc == -EINVAL    ? MPI_ERR_GROUP
                        : rc == -ENOSPC ? MPI_ERR_INTERN
                                         : xm_errno_to_class(rc),
                        fn);
    int *w = malloc((size_t)g->size * sizeof(int));
    if (w)
        memcpy(w, g->w, (size_t)g->size * sizeof(int));
    struct xm_comm *c = w ? xm_comm_new(g->size, w, ctx, NULL) : NULL;
    if (!c) {
        xm_ctx_release(ctx);
        return raise_on(errhandler, MPI_COMM_NULL, MPI_ERR_NO_MEM, fn);
    }
    c->errh = errhandler;
    *newcomm = c->handle;
    return MPI_SUCCESS;
}

int PMPI_Session_create_errhandler(MPI_Session_errhandler_function *session_errhandler_fn,
                                   MPI_Errhandler *errhandler)
{
    if (!session_errhandler_fn || !errhandler)
        return xm_err(NULL, MPI_ERR_ARG, "MPI_Session_create_errhandler");
    int rc = xm_errh_create(session_errhandler_fn, errhandler);
    return rc ? xm_err(NULL, rc, "MPI_Session_create_errhandler") : MPI_SUCCESS;
}

int PMPI_Session_set_errhandler(MPI_Session session, MPI_Errhandler errhandler)
{
    GET(s, session, "MPI_Session_set_errhandler");
    if (!errh_ok(errhandler))
        return sess_err(session, s, MPI_ERR_ARG, "MPI_Session_set_errhandler");
    s->errh = errhandler;
    return MPI_SUCCESS;
}

int PMPI_Session_get_errhandler(MPI_Session session, MPI_Errhandler *errhandler)
{
    GET(s, session, "MPI_Session_get_errhandler");
    if (!errhandler)
        return sess_err(session, s, MPI_ERR_ARG, "MPI_Session_get_errhandler");
    *errhandler = s->errh;
    return MPI_SUCCESS;
}

int PMPI_Session_call_errhandler(MPI_Session session, int errorcode)
{
    GET(s, session, "MPI_Session_call_errhandler");
    sess_err(session, s, errorcode, "MPI_Session_call_errhandler");
    return MPI_SUCCESS;
}

MPI_Fint PMPI_Session_c2f(MPI_Session session) { return session; }
MPI_Session PMPI_Session_f2c(MPI_Fint session) { return session; }
