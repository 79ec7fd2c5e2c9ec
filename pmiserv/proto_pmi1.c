/* proto_pmi1.c - PMI-1 ("simple PMI" 1.1): struct proto_ops proto_pmi1,
 * its request handlers and the wording of its deferred answers.
 *
 * Contract: a table of {command, handler}; every request gets exactly one
 * reply line (abort: none; barrier_in and the name service: later), with
 * rc= always present and msg= on failure.  Reply names and keys follow
 * MPICH's simple PMI (doc/wire.md, doc/clients.md).
 *
 * Notes:
 *   - get of PMI_process_mapping, universeSize and other PMI_* keys is
 *     answered from the job attributes (MPICH asks for the mapping through
 *     a KVS get); other PMI_* keys are not found, and put of PMI_* keys is
 *     refused (Hydra does the same; Slurm 22.05 accepts them).
 *   - Name service replies carry both rc= (MPICH >= 4.1) and info=ok|fail
 *     (older clients, Slurm's answers).
 *   - spawn (mcmd blocks) is answered once the last block arrived, by the
 *     host through spawn.c, or rc=-1 with msg= for a refused request (its
 *     remaining blocks, as totspawns announced them, are read first);
 *     create_kvs/destroy_kvs get rc=-1: no host supports them yet.
 *   - get of a key this node lacks may wait for other nodes (on-demand KVS,
 *     kvsroute.h); getbyidx lists this node's store only, which after an
 *     on-demand fence lacks other nodes' own keys.
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
#include "spawn.h"

typedef int (*pmi1_fn)(struct psrv *s, struct client *c, const struct pmi_msg *m);

#define simple reply_simple /* rc=, and msg= on failure */

static int h_init(struct psrv *s, struct client *c, const struct pmi_msg *m)
{
    struct pmi_out o;
    reply_begin(s, c, &o, "response_to_init", s->cur_thrid);
    pmi_out_add(&o, "rc", "0");
    pmi_out_add(&o, "pmi_version", "1");
    pmi_out_add(&o, "pmi_subversion", "1");
    reply_send(s, c, &o);
    return 0;
}

static int h_maxes(struct psrv *s, struct client *c, const struct pmi_msg *m)
{
    struct pmi_out o;
    reply_begin(s, c, &o, "maxes", s->cur_thrid);
    pmi_out_add(&o, "rc", "0");
    pmi_out_addint(&o, "kvsname_max", PMI_MAX_KVSNAME);
    pmi_out_addint(&o, "keylen_max", PMI_MAX_KEYLEN);
    pmi_out_addint(&o, "vallen_max", PMI_MAX_VALLEN);
    reply_send(s, c, &o);
    return 0;
}

static int h_appnum(struct psrv *s, struct client *c, const struct pmi_msg *m)
{
    struct pmi_out o;
    reply_begin(s, c, &o, "appnum", s->cur_thrid);
    pmi_out_add(&o, "rc", "0");
    pmi_out_addint(&o, "appnum", s->rank_appnum ? s->rank_appnum[c->rank] : 0);
    reply_send(s, c, &o);
    return 0;
}

static int h_universe(struct psrv *s, struct client *c, const struct pmi_msg *m)
{
    struct pmi_out o;
    reply_begin(s, c, &o, "universe_size", s->cur_thrid);
    pmi_out_add(&o, "rc", "0");
    pmi_out_add(&o, "size", s->universe);
    reply_send(s, c, &o);
    return 0;
}

static int h_kvsname(struct psrv *s, struct client *c, const struct pmi_msg *m)
{
    struct pmi_out o;
    reply_begin(s, c, &o, "my_kvsname", s->cur_thrid);
    pmi_out_add(&o, "rc", "0");
    pmi_out_add(&o, "kvsname", s->jobid);
    reply_send(s, c, &o);
    return 0;
}

static int h_put(struct psrv *s, struct client *c, const struct pmi_msg *m)
{
    const char *err = NULL;
    int rc = srv_put(s, c, pmi_msg_get(m, "key"), pmi_msg_get(m, "value"), true, &err);
    if (rc != 0 && rc != 2) /* 2: a quota (logged once by srv_quota) or ENOMEM */
        srv_warn(s, c, SRV_W_PUT, "rank %d: put refused: %s", c->rank, err);
    simple(s, c, "put_result", rc, err);
    return 0;
}

static int h_get(struct psrv *s, struct client *c, const struct pmi_msg *m)
{
    const char *key = pmi_msg_get(m, "key");
    const char *val = NULL;
    struct pmi_out o;

    if (!key || !*key) {
        simple(s, c, "get_result", 3, "missing key");
        return 0;
    }
    if (strncmp(key, "PMI_", 4) == 0 || strcmp(key, "universeSize") == 0)
        val = attrs_job_get(s, key);
    else if (!(val = kvs_get(s->kvs, key)) && !(val = kr_cached(s, key)) &&
             kr_get(s, c, key, -1, s->cur_thrid))
        return 0; /* answered by get_done */
    if (!val) {
        simple(s, c, "get_result", 1, "key_not_found");
        return 0;
    }
    reply_begin(s, c, &o, "get_result", s->cur_thrid);
    pmi_out_add(&o, "rc", "0");
    pmi_out_add(&o, "value", val);
    reply_send(s, c, &o);
    return 0;
}

static void get_done(struct psrv *s, struct client *c, const char *thrid, int rc,
                     const char *val, const char *msg)
{
    struct pmi_out o;

    reply_begin(s, c, &o, "get_result", thrid);
    if (rc == 0 && val) {
        pmi_out_add(&o, "rc", "0");
        pmi_out_add(&o, "value", val);
    } else if (rc == 0) {
        pmi_out_add(&o, "rc", "1");
        pmi_out_add(&o, "msg", "key_not_found");
    } else {
        pmi_out_addint(&o, "rc", rc);
        pmi_out_add(&o, "msg", msg ? msg : "get failed");
    }
    reply_send(s, c, &o);
}

static int h_getbyidx(struct psrv *s, struct client *c, const struct pmi_msg *m)
{
    int idx = -1;
    const char *key, *val;
    struct pmi_out o;

    reply_begin(s, c, &o, "getbyidx_results", s->cur_thrid);
    if (pmi_msg_get_int(m, "idx", &idx) < 0 || idx < 0) {
        pmi_out_add(&o, "rc", "-1");
        pmi_out_add(&o, "reason", "invalid_idx");
    } else if (kvs_get_byidx(s->kvs, idx, &key, &val) < 0) {
        pmi_out_add(&o, "rc", "-1");
        pmi_out_add(&o, "reason", "no_more_keyvals");
    } else {
        pmi_out_add(&o, "rc", "0");
        pmi_out_addint(&o, "nextidx", idx + 1);
        pmi_out_add(&o, "key", key);
        pmi_out_add(&o, "val", val);
    }
    reply_send(s, c, &o);
    return 0;
}

static int h_barrier(struct psrv *s, struct client *c, const struct pmi_msg *m)
{
    fence_enter(s, c, s->cur_thrid);
    return 0;
}

static void fence_done(struct psrv *s, struct client *c, const char *thrid, int rc,
                       const char *msg)
{
    struct pmi_out o;
    reply_begin(s, c, &o, "barrier_out", thrid);
    pmi_out_addint(&o, "rc", rc);
    if (rc != 0)
        pmi_out_add(&o, "msg", msg ? msg : "barrier failed");
    reply_send(s, c, &o);
}

static const char *ns_reply_name(int op)
{
    return op == NS_PUBLISH     ? "publish_result"
           : op == NS_UNPUBLISH ? "unpublish_result"
                                : "lookup_result";
}

static void ns_done(struct psrv *s, struct client *c, const char *thrid, int op, int rc,
                    const char *port, const char *msg)
{
    struct pmi_out o;
    reply_begin(s, c, &o, ns_reply_name(op), thrid);
    pmi_out_addint(&o, "rc", rc);
    pmi_out_add(&o, "info", rc == 0 ? "ok" : "fail");
    if (rc == 0 && op == NS_LOOKUP)
        pmi_out_add(&o, "port", port ? port : "");
    if (rc != 0)
        pmi_out_add(&o, "msg", msg ? msg : "failed");
    reply_send(s, c, &o);
}

static int ns_common(struct psrv *s, struct client *c, const struct pmi_msg *m, int op)
{
    const char *name = pmi_msg_get(m, "service");
    const char *port = pmi_msg_get(m, "port");
    char bad[96];

    if (ns_check(op, name, port, "service", bad, sizeof(bad))) {
        struct pmi_out o;
        reply_begin(s, c, &o, ns_reply_name(op), s->cur_thrid);
        pmi_out_add(&o, "rc", "3");
        pmi_out_add(&o, "info", "fail");
        pmi_out_add(&o, "msg", bad);
        reply_send(s, c, &o);
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

static int h_create_kvs(struct psrv *s, struct client *c, const struct pmi_msg *m)
{
    reply_unsupported(s, c, "newkvs", "create_kvs");
    return 0;
}

static int h_destroy_kvs(struct psrv *s, struct client *c, const struct pmi_msg *m)
{
    reply_unsupported(s, c, "kvs_destroyed", "destroy_kvs");
    return 0;
}

/* One mcmd=spawn block; the reply comes once, after the last (spawn.c). */
static int h_spawn(struct psrv *s, struct client *c, const struct pmi_msg *m)
{
    char err[256];
    int tot, sofar;
    struct spawn_wait *w = spawn_wait_of(s, c);

    if (w->skip > 0) { /* the rest of a refused request: one reply at its end */
        if (--w->skip == 0)
            spawn_reply_error(s, c, s->cur_thrid, -1, w->err);
        return 0;
    }
    int rc = spawn_add_v1_block(&w->build, m, err, sizeof(err));
    if (rc == 0)
        return 0; /* more blocks follow */
    if (rc < 0) {
        srv_warn(s, c, SRV_W_SPAWN, "rank %d: %s", c->rank, err);
        /* The task writes every block before it reads: its other blocks
         * are swallowed so that it gets exactly one reply. */
        if (pmi_msg_get_int(m, "totspawns", &tot) == 0 &&
            pmi_msg_get_int(m, "spawnssofar", &sofar) == 0 && tot <= PSRV_SPAWN_MAX_CMDS &&
            sofar >= 1 && sofar < tot) {
            snprintf(w->err, sizeof(w->err), "%s", err);
            w->skip = tot - sofar;
            return 0;
        }
        spawn_reply_error(s, c, s->cur_thrid, -1, err);
        return 0;
    }
    struct spawn_req *r = w->build;
    w->build = NULL;
    spawn_handle(s, c, r);
    return 0;
}

static void spawn_done(struct psrv *s, struct client *c, const char *thrid, int rc,
                       const char *jobid, const int *errcodes, int n, const char *msg)
{
    struct pmi_out o;
    reply_begin(s, c, &o, "spawn_result", thrid);
    pmi_out_addint(&o, "rc", rc);
    if (rc == 0) {
        pmi_out_add(&o, "jobid", jobid ? jobid : "");
        spawn_add_errcodes(&o, errcodes, n);
    } else {
        pmi_out_add(&o, "msg", msg ? msg : "spawn failed");
    }
    reply_send(s, c, &o);
}

static int h_abort(struct psrv *s, struct client *c, const struct pmi_msg *m)
{
    int code = 1;
    const char *msg = pmi_msg_get(m, "message");
    if (!msg)
        msg = pmi_msg_get(m, "msg");
    if (pmi_msg_get_int(m, "exitcode", &code) < 0)
        code = 1;
    srv_abort(s, c->rank, code, "rank %d called PMI abort (exit code %d)%s%s", c->rank,
              code, msg && *msg ? ": " : "", msg ? msg : "");
    return 0;
}

static int h_finalize(struct psrv *s, struct client *c, const struct pmi_msg *m)
{
    simple(s, c, "finalize_ack", 0, NULL);
    c->finalized = true;
    s->nfinalized++;
    return 1;
}

static const struct {
    const char *cmd;
    pmi1_fn fn;
} table[] = {
    {"init", h_init},
    {"get_maxes", h_maxes},
    {"get_appnum", h_appnum},
    {"get_universe_size", h_universe},
    {"get_my_kvsname", h_kvsname},
    {"put", h_put},
    {"get", h_get},
    {"getbyidx", h_getbyidx},
    {"barrier_in", h_barrier},
    {"publish_name", h_publish},
    {"unpublish_name", h_unpublish},
    {"lookup_name", h_lookup},
    {"create_kvs", h_create_kvs},
    {"destroy_kvs", h_destroy_kvs},
    {"spawn", h_spawn},
    {"abort", h_abort},
    {"finalize", h_finalize},
};

static int dispatch(struct psrv *s, struct client *c, const struct pmi_msg *m)
{
    const char *cmd = pmi_msg_cmd(m);
    bool mcmd = strcmp(m->kv[0].key, "mcmd") == 0;

    if (mcmd != (strcmp(cmd, "spawn") == 0)) {
        simple(s, c, "error", -1, "unknown command");
        return 0;
    }
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
        if (strcmp(table[i].cmd, cmd) == 0)
            return table[i].fn(s, c, m);
    srv_warn(s, c, SRV_W_UNKNOWN, "rank %d: unknown PMI-1 command '%s'", c->rank, cmd);
    struct pmi_out o;
    reply_begin(s, c, &o, "error", s->cur_thrid);
    pmi_out_add(&o, "rc", "-1");
    pmi_out_addf(&o, "msg", "unknown command %s", cmd);
    reply_send(s, c, &o);
    return 0;
}

const struct proto_ops proto_pmi1 = {
    .v = PMI_V1,
    .errkey = "msg",
    .framing = " (PMI-1 line)",
    .parse = pmi_msg_parse_v1,
    .dispatch = dispatch,
    .fence_done = fence_done,
    .ns_done = ns_done,
    .get_done = get_done,
    .spawn_done = spawn_done,
    /* no node attributes, no ring in PMI-1 */
};
