/* proto_pmi2.c - PMI-2 (2.0): struct proto_ops proto_pmi2, its request
 * handlers and the wording of its deferred answers.
 *
 * Contract: a table of {command, handler}; every request gets one
 * "<cmd>-response" record with rc= (abort: none; kvs-fence, ring, name
 * service and info-getnodeattr wait=TRUE: later), errmsg= on failure, and
 * the request's thrid echoed (doc/wire.md, doc/clients.md).
 *
 * Notes:
 *   - fullinit accepts any subset of pmijobid/pmirank/threaded/srcid: the
 *     rank always comes from the connection (Slurm 22.05 demands all three
 *     and answers rc=3 to MPICH >= 4.1).
 *   - kvs-get of an absent key is rc=0;found=FALSE (Slurm's answer, which
 *     both Slurm's libpmi2 and MPICH accept; MPICH's barrier idiom gets
 *     "-NONEXIST-KEY" this way).
 *   - kvs-get of a key this node lacks may wait for other nodes (on-demand
 *     KVS, kvsroute.h); srcid names the rank that put it (-1: unknown).
 *   - name-lookup answers the port in both "value" (Slurm's libpmi2) and
 *     "port" (the PMI-2 spec text).
 *   - abort kills the job with or without isworld (MPICH >= 4.1 omits it).
 *   - spawn goes to the host (spawn.c); fullinit of a spawned job's task
 *     carries spawner-jobid, which is how PMI2_Init learns it was spawned.
 *   - job-connect and job-disconnect are answered rc=-1 with errmsg:
 *     Slurm 22.05 leaves job-connect unanswered and the caller hangs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attrs.h"
#include "fence.h"
#include "kvs.h"
#include "kvsroute.h"
#include "nameserv.h"
#include "psrv_int.h"
#include "ring.h"
#include "spawn.h"

typedef int (*pmi2_fn)(struct psrv *s, struct client *c, const struct pmi_msg *m);

#define simple reply_simple /* rc=, and errmsg= on failure */

static void found_reply(struct psrv *s, struct client *c, const char *cmd,
                        const char *thrid, const char *val)
{
    struct pmi_out o;
    reply_begin(s, c, &o, cmd, thrid);
    pmi_out_add(&o, "rc", "0");
    pmi_out_add(&o, "found", val ? "TRUE" : "FALSE");
    if (val)
        pmi_out_add(&o, "value", val);
    reply_send(s, c, &o);
}

static int h_fullinit(struct psrv *s, struct client *c, const struct pmi_msg *m)
{
    struct pmi_out o;
    int r;
    const char *jobid = pmi_msg_get(m, "pmijobid");

    if (pmi_msg_get_int(m, "pmirank", &r) == 0 && r != c->rank && r != -1)
        srv_warn(s, c, SRV_W_INIT, "rank %d: fullinit claims pmirank=%d (ignored)",
                 c->rank, r);
    if (jobid && *jobid && strcmp(jobid, s->jobid) != 0)
        srv_warn(s, c, SRV_W_INIT, "rank %d: fullinit claims pmijobid=%s, job is %s",
                 c->rank, jobid, s->jobid);
    reply_begin(s, c, &o, "fullinit-response", s->cur_thrid);
    pmi_out_add(&o, "rc", "0");
    pmi_out_add(&o, "pmi-version", "2");
    pmi_out_add(&o, "pmi-subversion", "0");
    pmi_out_addint(&o, "rank", c->rank);
    pmi_out_addint(&o, "size", s->cfg.size);
    pmi_out_addint(&o, "appnum", s->rank_appnum ? s->rank_appnum[c->rank] : 0);
    pmi_out_add(&o, "debugged", "FALSE");
    pmi_out_add(&o, "pmiverbose", "FALSE");
    if (s->spawner_jobid)
        pmi_out_add(&o, "spawner-jobid", s->spawner_jobid);
    reply_send(s, c, &o);
    return 0;
}

static int h_getid(struct psrv *s, struct client *c, const struct pmi_msg *m)
{
    struct pmi_out o;
    reply_begin(s, c, &o, "job-getid-response", s->cur_thrid);
    pmi_out_add(&o, "rc", "0");
    pmi_out_add(&o, "jobid", s->jobid);
    reply_send(s, c, &o);
    return 0;
}

static int h_connect(struct psrv *s, struct client *c, const struct pmi_msg *m)
{
    struct pmi_out o;
    reply_begin(s, c, &o, "job-connect-response", s->cur_thrid);
    pmi_out_add(&o, "rc", "-1");
    pmi_out_add(&o, "kvscopy", "FALSE");
    pmi_out_add(&o, "errmsg", "job-connect is not supported by this server");
    reply_send(s, c, &o);
    return 0;
}

static int h_disconnect(struct psrv *s, struct client *c, const struct pmi_msg *m)
{
    reply_unsupported(s, c, "job-disconnect-response", "job-disconnect");
    return 0;
}

static int h_put(struct psrv *s, struct client *c, const struct pmi_msg *m)
{
    const char *err = NULL;
    int rc = srv_put(s, c, pmi_msg_get(m, "key"), pmi_msg_get(m, "value"), false, &err);
    if (rc != 0 && rc != 2) /* 2: a quota (logged once by srv_quota) or ENOMEM */
        srv_warn(s, c, SRV_W_PUT, "rank %d: kvs-put refused: %s", c->rank, err);
    simple(s, c, "kvs-put-response", rc, err);
    return 0;
}

static int h_fence(struct psrv *s, struct client *c, const struct pmi_msg *m)
{
    fence_enter(s, c, s->cur_thrid);
    return 0;
}

static void fence_done(struct psrv *s, struct client *c, const char *thrid, int rc,
                       const char *msg)
{
    struct pmi_out o;
    reply_begin(s, c, &o, "kvs-fence-response", thrid);
    pmi_out_addint(&o, "rc", rc);
    if (rc != 0)
        pmi_out_add(&o, "errmsg", msg ? msg : "fence failed");
    reply_send(s, c, &o);
}

static int h_get(struct psrv *s, struct client *c, const struct pmi_msg *m)
{
    const char *key = pmi_msg_get(m, "key");
    if (!key || !*key) {
        simple(s, c, "kvs-get-response", 3, "missing key");
        return 0;
    }
    const char *val = kvs_get(s->kvs, key);
    if (!val)
        val = kr_cached(s, key);
    if (!val) {
        int srcid = -1;
        if (pmi_msg_get_int(m, "srcid", &srcid) < 0)
            srcid = -1;
        if (kr_get(s, c, key, srcid, s->cur_thrid))
            return 0; /* answered by get_done */
    }
    found_reply(s, c, "kvs-get-response", s->cur_thrid, val);
    return 0;
}

static void get_done(struct psrv *s, struct client *c, const char *thrid, int rc,
                     const char *val, const char *msg)
{
    struct pmi_out o;

    if (rc == 0) {
        found_reply(s, c, "kvs-get-response", thrid, val);
        return;
    }
    reply_begin(s, c, &o, "kvs-get-response", thrid);
    pmi_out_addint(&o, "rc", rc);
    pmi_out_add(&o, "errmsg", msg ? msg : "get failed");
    reply_send(s, c, &o);
}

static int h_putnodeattr(struct psrv *s, struct client *c, const struct pmi_msg *m)
{
    const char *key = pmi_msg_get(m, "key");
    const char *val = pmi_msg_get(m, "value");
    const char *err = NULL;
    int rc;

    if (!key || !*key || !val) {
        rc = 3;
        err = "missing key or value";
    } else if (strlen(key) > PMI_MAX_KEYLEN) {
        rc = 5;
        err = "key longer than 64 bytes";
    } else if (strlen(val) > PMI_MAX_VALLEN) {
        rc = 7;
        err = "value longer than 1024 bytes";
    } else {
        /* Waiters (other clients) are answered inside nodeattrs_put. */
        rc = nodeattrs_put(s, c, key, val, &err);
    }
    simple(s, c, "info-putnodeattr-response", rc, err);
    return 0;
}

static int h_getnodeattr(struct psrv *s, struct client *c, const struct pmi_msg *m)
{
    const char *key = pmi_msg_get(m, "key");
    bool wait = false;

    if (!key || !*key) {
        simple(s, c, "info-getnodeattr-response", 3, "missing key");
        return 0;
    }
    if (pmi_msg_get_bool(m, "wait", &wait) < 0)
        wait = false;
    const char *val = nodeattrs_get(s, key);
    if (val || !wait) {
        found_reply(s, c, "info-getnodeattr-response", s->cur_thrid, val);
        return 0;
    }
    if (nodeattrs_waiting(s, c)) {
        simple(s, c, "info-getnodeattr-response", -1,
               "this rank is already waiting for a node attribute");
        return 0;
    }
    if (nodeattrs_wait(s, c, key, s->cur_thrid) < 0)
        simple(s, c, "info-getnodeattr-response", 2, "out of memory");
    return 0;
}

static void nodeattr_done(struct psrv *s, struct client *c, const char *thrid, int rc,
                          const char *val, const char *msg)
{
    if (rc == 0) {
        found_reply(s, c, "info-getnodeattr-response", thrid, val);
        return;
    }
    struct pmi_out o;
    reply_begin(s, c, &o, "info-getnodeattr-response", thrid);
    pmi_out_addint(&o, "rc", rc);
    pmi_out_add(&o, "found", "FALSE");
    pmi_out_add(&o, "errmsg", msg ? msg : "failed");
    reply_send(s, c, &o);
}

static int h_getjobattr(struct psrv *s, struct client *c, const struct pmi_msg *m)
{
    const char *key = pmi_msg_get(m, "key");
    if (!key || !*key) {
        simple(s, c, "info-getjobattr-response", 3, "missing key");
        return 0;
    }
    found_reply(s, c, "info-getjobattr-response", s->cur_thrid, attrs_job_get(s, key));
    return 0;
}

static const char *ns_reply_name(int op)
{
    return op == NS_PUBLISH     ? "name-publish-response"
           : op == NS_UNPUBLISH ? "name-unpublish-response"
                                : "name-lookup-response";
}

static void ns_done(struct psrv *s, struct client *c, const char *thrid, int op, int rc,
                    const char *port, const char *msg)
{
    struct pmi_out o;
    reply_begin(s, c, &o, ns_reply_name(op), thrid);
    pmi_out_addint(&o, "rc", rc);
    if (rc == 0 && op == NS_LOOKUP) {
        pmi_out_add(&o, "value", port ? port : "");
        pmi_out_add(&o, "port", port ? port : "");
    }
    if (rc != 0)
        pmi_out_add(&o, "errmsg", msg ? msg : "failed");
    reply_send(s, c, &o);
}

static int ns_common(struct psrv *s, struct client *c, const struct pmi_msg *m, int op)
{
    const char *name = pmi_msg_get(m, "name");
    const char *port = pmi_msg_get(m, "port");
    char bad[96];

    if (ns_check(op, name, port, "name", bad, sizeof(bad))) {
        simple(s, c, ns_reply_name(op), 3, bad);
        return 0;
    }
    ns_request(s, c, op, name, port, s->cur_thrid);
    return 0;
}

static int h_publish(struct psrv *s, struct client *c, const struct pmi_msg *m)
{
    return ns_common(s, c, m, NS_PUBLISH);
}

static int h_unpublish(struct psrv *s, struct client *c, const struct pmi_msg *m)
{
    return ns_common(s, c, m, NS_UNPUBLISH);
}

static int h_lookup(struct psrv *s, struct client *c, const struct pmi_msg *m)
{
    return ns_common(s, c, m, NS_LOOKUP);
}

static int h_spawn(struct psrv *s, struct client *c, const struct pmi_msg *m)
{
    char err[256];
    struct spawn_req *r = spawn_parse_v2(m, err, sizeof(err));

    if (!r) {
        srv_warn(s, c, SRV_W_SPAWN, "rank %d: %s", c->rank, err);
        spawn_reply_error(s, c, s->cur_thrid, -1, err);
        return 0;
    }
    spawn_handle(s, c, r); /* answered now or by psrv_spawn_done */
    return 0;
}

static void spawn_done(struct psrv *s, struct client *c, const char *thrid, int rc,
                       const char *jobid, const int *errcodes, int n, const char *msg)
{
    struct pmi_out o;
    reply_begin(s, c, &o, "spawn-response", thrid);
    pmi_out_addint(&o, "rc", rc);
    if (rc == 0) {
        pmi_out_add(&o, "jobid", jobid ? jobid : "");
        spawn_add_errcodes(&o, errcodes, n);
    } else {
        pmi_out_add(&o, "errmsg", msg ? msg : "spawn failed");
    }
    reply_send(s, c, &o);
}

static int h_ring(struct psrv *s, struct client *c, const struct pmi_msg *m)
{
    const char *left = pmi_msg_get(m, "ring-left");
    const char *right = pmi_msg_get(m, "ring-right");
    int count = 1;

    if (pmi_msg_get_int(m, "ring-count", &count) < 0)
        count = 1;
    if (!left || !right || count != 1) {
        simple(s, c, "ring-response", 3,
               "ring needs ring-count=1, ring-left, ring-right");
        return 0;
    }
    if (strlen(left) > PMI_MAX_VALLEN || strlen(right) > PMI_MAX_VALLEN) {
        simple(s, c, "ring-response", 7, "ring value longer than 1024 bytes");
        return 0;
    }
    ring_enter(s, c, left, right, s->cur_thrid);
    return 0;
}

static void ring_done(struct psrv *s, struct client *c, const char *thrid, int rc,
                      int count, const char *left, const char *right, const char *msg)
{
    struct pmi_out o;
    reply_begin(s, c, &o, "ring-response", thrid);
    pmi_out_addint(&o, "rc", rc);
    if (rc == 0) {
        pmi_out_addint(&o, "ring-count", count);
        pmi_out_add(&o, "ring-left", left ? left : "");
        pmi_out_add(&o, "ring-right", right ? right : "");
    } else {
        pmi_out_add(&o, "errmsg", msg ? msg : "ring failed");
    }
    reply_send(s, c, &o);
}

static int h_abort(struct psrv *s, struct client *c, const struct pmi_msg *m)
{
    int code = 1;
    bool world = true;
    const char *msg = pmi_msg_get(m, "message");
    if (!msg)
        msg = pmi_msg_get(m, "msg");
    if (pmi_msg_get_int(m, "exitcode", &code) < 0)
        code = 1;
    if (pmi_msg_get_bool(m, "isworld", &world) < 0)
        world = true;
    srv_abort(s, c->rank, code, "rank %d called PMI abort (exit code %d%s)%s%s", c->rank,
              code, world ? "" : ", isworld=FALSE treated as world",
              msg && *msg ? ": " : "", msg ? msg : "");
    return 0;
}

static int h_finalize(struct psrv *s, struct client *c, const struct pmi_msg *m)
{
    simple(s, c, "finalize-response", 0, NULL);
    c->finalized = true;
    s->nfinalized++;
    return 1;
}

static const struct {
    const char *cmd;
    pmi2_fn fn;
} table[] = {
    {"fullinit", h_fullinit},
    {"job-getid", h_getid},
    {"job-connect", h_connect},
    {"job-disconnect", h_disconnect},
    {"kvs-put", h_put},
    {"kvs-fence", h_fence},
    {"kvs-get", h_get},
    {"info-putnodeattr", h_putnodeattr},
    {"info-getnodeattr", h_getnodeattr},
    {"info-getjobattr", h_getjobattr},
    {"name-publish", h_publish},
    {"name-unpublish", h_unpublish},
    {"name-lookup", h_lookup},
    {"spawn", h_spawn},
    {"ring", h_ring},
    {"abort", h_abort},
    {"finalize", h_finalize},
};

static int dispatch(struct psrv *s, struct client *c, const struct pmi_msg *m)
{
    const char *cmd = pmi_msg_cmd(m);

    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
        if (strcmp(table[i].cmd, cmd) == 0)
            return table[i].fn(s, c, m);
    srv_warn(s, c, SRV_W_UNKNOWN, "rank %d: unknown PMI-2 command '%s'", c->rank, cmd);
    char name[96];
    snprintf(name, sizeof(name), "%.80s-response", *cmd ? cmd : "unknown");
    struct pmi_out o;
    reply_begin(s, c, &o, name, s->cur_thrid);
    pmi_out_add(&o, "rc", "-1");
    pmi_out_addf(&o, "errmsg", "unknown command %s", cmd);
    reply_send(s, c, &o);
    return 0;
}

const struct proto_ops proto_pmi2 = {
    .v = PMI_V2,
    .errkey = "errmsg",
    .framing = " (PMI-2 length field)",
    .parse = pmi_msg_parse_v2,
    .dispatch = dispatch,
    .fence_done = fence_done,
    .nodeattr_done = nodeattr_done,
    .ns_done = ns_done,
    .get_done = get_done,
    .ring_done = ring_done,
    .spawn_done = spawn_done,
};
