/* auth.c - the credentials that open every treenet connection.
 *
 * Contract: see tn_int.h.  A credential proves "the owner of the job (or
 * root) on some host of this munge realm sent this, for job <jobkey>, from
 * <from> to <to>, on the connection where <to> sent this nonce", once:
 * munged refuses to decode the same credential twice, and only the uid it
 * is restricted to can decode it at all.
 *
 * Notes:
 *   - munge_decode() is a blocking round trip to the local munged (a few
 *     tens of microseconds); it happens once per connection, never on the
 *     message path.
 *   - A credential whose munge status is an error is refused even when
 *     libmunge hands back a payload (e.g. a replay).
 *   - Munge failing on this host (munged stopped or frozen: socket error or
 *     timeout, out of memory) is -ENOKEY, a bad peer credential -EACCES; both
 *     come with a reason naming munge and libmunge's own message (which names
 *     the socket and the errno), escaped.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_MUNGE
#include <munge.h>
#endif

#include "mac.h"
#include "tn_int.h"

int tn_jobkey_ok(const char *jobkey)
{
    if (!jobkey || !*jobkey || strlen(jobkey) > TN_JOBKEY_MAX)
        return -EINVAL;
    for (const char *p = jobkey; *p; p++)
        if (*p <= ' ' || *p == 0x7f)
            return -EINVAL;
    return 0;
}

int tn_auth_supported(enum treenet_auth auth)
{
    if (auth == TREENET_AUTH_NONE || auth == TREENET_AUTH_COOKIE)
        return 0;
    if (auth != TREENET_AUTH_MUNGE)
        return -EINVAL;
#ifdef HAVE_MUNGE
    return 0;
#else
    return -ENOTSUP;
#endif
}

int tn_nonce_new(char out[TN_NONCE_HEX + 1])
{
    unsigned char b[TN_NONCE_LEN];

#ifdef LOOM_FUZZ
    /* fuzz targets: a fixed nonce, so that an input can carry a matching answer */
    memset(out, '0', TN_NONCE_HEX);
    out[TN_NONCE_HEX] = '\0';
    return 0;
#endif

    if (loom_random_bytes(b, sizeof(b)) < 0)
        return -errno;
    loom_hex(b, sizeof(b), out);
    return 0;
}

size_t tn_nonce_frame(const char *nonce, char *buf)
{
    return (size_t)sprintf(buf, "loom2 %s", nonce);
}

static int nonce_ok(const char *s, size_t len)
{
    if (len != TN_NONCE_HEX)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return 1;
}

int tn_nonce_parse(const void *p, size_t len, char nonce[TN_NONCE_HEX + 1])
{
    const char *s = p;

    if (len != 6 + TN_NONCE_HEX || memcmp(s, "loom2 ", 6) != 0 ||
        !nonce_ok(s + 6, TN_NONCE_HEX))
        return -EPROTO;
    memcpy(nonce, s + 6, TN_NONCE_HEX);
    nonce[TN_NONCE_HEX] = '\0';
    return 0;
}

void tn_escape(const char *s, size_t len, char *out, size_t outlen)
{
    size_t o = 0;

    if (!outlen)
        return;
    for (size_t i = 0; i < len && o + 5 < outlen; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch >= 0x20 && ch < 0x7f && ch != '\\')
            out[o++] = (char)ch;
        else
            o += (size_t)snprintf(out + o, outlen - o, "\\x%02x", ch);
    }
    out[o] = '\0';
}

static int make_payload(const char *jobkey, const char *from, const char *to,
                        const char *rnonce, const char *snonce, char *buf, size_t len)
{
    int n;

    if (!nonce_ok(rnonce, strlen(rnonce)) || !nonce_ok(snonce, strlen(snonce)))
        return -EINVAL;
    n = snprintf(buf, len, "loom2 %s %s %s %s %s", jobkey, from, to, rnonce, snonce);
    return (n < 0 || (size_t)n >= len) ? -EINVAL : n;
}

/* why may be NULL (the caller only wants the code) */
static void tn_why(char *why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tn_why(char *why, const char *fmt, ...)
{
    va_list ap;

    if (!why)
        return;
    va_start(ap, fmt);
    vsnprintf(why, TN_WHY_MAX, fmt, ap);
    va_end(ap);
}

#ifdef HAVE_MUNGE
/* "munge: cannot <op> a credential: <munge's own reason>", escaped: libmunge's
 * context message names the socket and the errno ("Failed to connect to
 * \"/run/munge/munge.socket.2\": Connection refused"), which munge_strerror
 * does not. */
static void munge_why(char *why, const char *op, munge_err_t e, munge_ctx_t ctx)
{
    const char *m = ctx ? munge_ctx_strerror(ctx) : NULL;
    char esc[TN_WHY_MAX];

    if (!why)
        return;
    if (!m || !*m)
        m = munge_strerror(e);
    tn_escape(m, strlen(m), esc, sizeof(esc));
    tn_why(why, "munge: cannot %s a credential: %.190s", op, esc);
}

/* A decode error that is this host's munge failing (munged down, frozen, out
 * of memory), not the peer's credential being bad. */
static int munge_local_err(munge_err_t e)
{
    return e == EMUNGE_SOCKET || e == EMUNGE_TIMEOUT || e == EMUNGE_NO_MEMORY ||
           e == EMUNGE_SNAFU;
}
#endif

int tn_cookie_ok(const char *cookie)
{
    size_t n = cookie ? strlen(cookie) : 0;

    return n >= TN_COOKIE_MIN && n <= TN_COOKIE_MAX ? 0 : -EINVAL;
}

/* The cookie mode's tag: HMAC-SHA256(cookie, domain || payload).  The domain
 * string keeps a tag of this protocol from meaning anything to another user
 * of the same cookie (mpiexec's own handshake proofs and frame tags). */
static void cookie_tag(const char *cookie, const char *payload, size_t len,
                       unsigned char tag[LOOM_MAC_LEN])
{
    static const char dom[] = "loom2 treenet cookie\n";
    char buf[sizeof(dom) + TN_JOBKEY_MAX + 128];

    memcpy(buf, dom, sizeof(dom) - 1);
    memcpy(buf + sizeof(dom) - 1, payload, len);
    loom_hmac_sha256(cookie, strlen(cookie), buf, sizeof(dom) - 1 + len, tag);
    memset(buf, 0, sizeof(buf));
}

int tn_cred_make(enum treenet_auth auth, const char *jobkey, const char *from,
                 const char *to, const char *rnonce, const char *snonce, uid_t reader,
                 char **cred, char *why)
{
    return tn_cred_make_k(auth, NULL, jobkey, from, to, rnonce, snonce, reader, cred,
                          why);
}

int tn_cred_make_k(enum treenet_auth auth, const char *cookie, const char *jobkey,
                   const char *from, const char *to, const char *rnonce,
                   const char *snonce, uid_t reader, char **cred, char *why)
{
    char payload[TN_JOBKEY_MAX + 128];
    int n = make_payload(jobkey, from, to, rnonce, snonce, payload, sizeof(payload));

    *cred = NULL;
    if (n < 0) {
        tn_why(why, "cannot make a credential: bad job key, node or nonce");
        return n;
    }
    if (auth == TREENET_AUTH_COOKIE) {
        unsigned char tag[LOOM_MAC_LEN];
        char *c;

        if (tn_cookie_ok(cookie) < 0) {
            tn_why(why, "cannot make a credential: no job cookie");
            return -EINVAL;
        }
        c = malloc((size_t)n + 1 + 2 * LOOM_MAC_LEN + 1);
        if (!c) {
            tn_why(why, "cannot make a credential: out of memory");
            return -ENOMEM;
        }
        cookie_tag(cookie, payload, (size_t)n, tag);
        memcpy(c, payload, (size_t)n);
        c[n] = ' ';
        loom_hex(tag, sizeof(tag), c + n + 1);
        *cred = c;
        return 0;
    }
    if (auth == TREENET_AUTH_NONE) {
        *cred = strdup(payload);
        if (!*cred)
            tn_why(why, "cannot make a credential: out of memory");
        return *cred ? 0 : -ENOMEM;
    }
#ifdef HAVE_MUNGE
    if (auth == TREENET_AUTH_MUNGE) {
        char *c = NULL;
        munge_ctx_t ctx = munge_ctx_create();
        munge_err_t e;

        if (!ctx) {
            tn_why(why, "munge: cannot encode a credential: out of memory");
            return -ENOMEM;
        }
        /* only `reader` can decode it: a process of another uid that gets
         * hold of it (a user's fake listener) learns nothing and cannot
         * hand it to a service that trusts munge */
        e = EMUNGE_SUCCESS;
        if (reader != TN_UID_ANY)
            e = munge_ctx_set(ctx, MUNGE_OPT_UID_RESTRICTION, reader);
        if (e == EMUNGE_SUCCESS)
            e = munge_encode(&c, ctx, payload, n);
        if (e != EMUNGE_SUCCESS) {
            /* every encode failure is local (munged down, frozen, or out of
             * resources): name munge and its own reason, not EACCES */
            munge_why(why, "encode", e, ctx);
            munge_ctx_destroy(ctx);
            free(c);
            return -ENOKEY;
        }
        munge_ctx_destroy(ctx);
        *cred = c;
        return 0;
    }
#endif
    tn_why(why, "cannot make a credential: authentication not supported");
    return -ENOTSUP;
}

/* Compare the decoded payload with what this receiver expects. */
int tn_payload_check(const char *p, size_t len, const char *jobkey, const char *to,
                     const char *my_nonce, char *from, size_t fromlen,
                     char peer_nonce[TN_NONCE_HEX + 1], char *why)
{
    char buf[TN_JOBKEY_MAX + 128], esc[80];
    char *save = NULL, *tok[7] = {0};
    int n = 0;

    if (len >= sizeof(buf) || memchr(p, '\0', len)) {
        snprintf(why, TN_WHY_MAX, "malformed payload");
        return -EACCES;
    }
    memcpy(buf, p, len);
    buf[len] = '\0';
    for (char *t = strtok_r(buf, " ", &save); t && n < 7; t = strtok_r(NULL, " ", &save))
        tok[n++] = t;
    if (n != 6 || strcmp(tok[0], "loom2") != 0) {
        snprintf(why, TN_WHY_MAX, "malformed payload (not a loom2 credential)");
        return -EACCES;
    }
    if (strcmp(tok[1], jobkey) != 0) {
        tn_escape(tok[1], strlen(tok[1]), esc, sizeof(esc));
        snprintf(why, TN_WHY_MAX, "credential for another job (%.64s)", esc);
        return -EACCES;
    }
    if (strcmp(tok[3], to) != 0) {
        tn_escape(tok[3], strlen(tok[3]), esc, sizeof(esc));
        snprintf(why, TN_WHY_MAX, "credential for another node (%.32s, I am %s)", esc,
                 to);
        return -EACCES;
    }
    if (strcmp(tok[4], my_nonce) != 0) {
        snprintf(why, TN_WHY_MAX, "credential bound to another connection (nonce)");
        return -EACCES;
    }
    if (strlen(tok[2]) >= fromlen || !nonce_ok(tok[5], strlen(tok[5]))) {
        snprintf(why, TN_WHY_MAX, "malformed sender");
        return -EACCES;
    }
    strcpy(from, tok[2]);
    memcpy(peer_nonce, tok[5], TN_NONCE_HEX + 1);
    return 0;
}

int tn_cred_check(enum treenet_auth auth, const void *cred, size_t len, uid_t want_uid,
                  const char *jobkey, const char *to, const char *my_nonce, char *from,
                  size_t fromlen, char peer_nonce[TN_NONCE_HEX + 1], uid_t *uidp,
                  char *why)
{
    return tn_cred_check_k(auth, NULL, cred, len, want_uid, jobkey, to, my_nonce, from,
                           fromlen, peer_nonce, uidp, why);
}

/* Cookie mode: "<payload> <hex tag>"; the tag is checked (in constant time)
 * before a byte of the payload is looked at. */
static int cookie_check(const char *cookie, const char *cred, size_t len,
                        const char *jobkey, const char *to, const char *my_nonce,
                        char *from, size_t fromlen, char peer_nonce[TN_NONCE_HEX + 1],
                        char *why)
{
    unsigned char want[LOOM_MAC_LEN], got[LOOM_MAC_LEN];
    char hex[2 * LOOM_MAC_LEN + 1];
    size_t plen;
    int ok;

    if (tn_cookie_ok(cookie) < 0) {
        snprintf(why, TN_WHY_MAX, "no job cookie to check a credential with");
        return -EACCES;
    }
    if (len < 2 * LOOM_MAC_LEN + 2 || cred[len - 2 * LOOM_MAC_LEN - 1] != ' ') {
        snprintf(why, TN_WHY_MAX, "not a cookie credential");
        return -EACCES;
    }
    plen = len - 2 * LOOM_MAC_LEN - 1;
    if (plen > TN_JOBKEY_MAX + 127) {
        snprintf(why, TN_WHY_MAX, "malformed payload");
        return -EACCES;
    }
    memcpy(hex, cred + plen + 1, 2 * LOOM_MAC_LEN);
    hex[2 * LOOM_MAC_LEN] = '\0';
    if (loom_unhex(hex, got, sizeof(got)) < 0) {
        snprintf(why, TN_WHY_MAX, "not a cookie credential (tag)");
        return -EACCES;
    }
    cookie_tag(cookie, cred, plen, want);
    ok = loom_ct_equal(want, got, sizeof(want));
    memset(want, 0, sizeof(want));
    if (!ok) {
        snprintf(why, TN_WHY_MAX, "wrong proof of the job cookie");
        return -EACCES;
    }
    return tn_payload_check(cred, plen, jobkey, to, my_nonce, from, fromlen, peer_nonce,
                            why);
}

int tn_cred_check_k(enum treenet_auth auth, const char *cookie, const void *cred,
                    size_t len, uid_t want_uid, const char *jobkey, const char *to,
                    const char *my_nonce, char *from, size_t fromlen,
                    char peer_nonce[TN_NONCE_HEX + 1], uid_t *uidp, char *why)
{
    if (len == 0 || len > TN_CRED_MAX) {
        snprintf(why, TN_WHY_MAX, "bad credential length %zu", len);
        return -EACCES;
    }
    if (uidp)
        *uidp = TN_UID_ANY;
    if (auth == TREENET_AUTH_COOKIE)
        return cookie_check(cookie, cred, len, jobkey, to, my_nonce, from, fromlen,
                            peer_nonce, why);
    if (auth == TREENET_AUTH_NONE)
        return tn_payload_check(cred, len, jobkey, to, my_nonce, from, fromlen,
                                peer_nonce, why);
#ifdef HAVE_MUNGE
    if (auth == TREENET_AUTH_MUNGE) {
        char str[TN_CRED_MAX + 1];
        void *payload = NULL;
        int plen = 0, rc;
        uid_t uid = (uid_t)-1;
        gid_t gid = (gid_t)-1;
        munge_ctx_t ctx;
        munge_err_t e;

        if (memchr(cred, '\0', len)) {
            snprintf(why, TN_WHY_MAX, "not a munge credential");
            return -EACCES;
        }
        memcpy(str, cred, len);
        str[len] = '\0';
        ctx = munge_ctx_create();
        if (!ctx) {
            snprintf(why, TN_WHY_MAX, "munge: cannot decode a credential: out of memory");
            return -ENOMEM;
        }
        e = munge_decode(str, ctx, &payload, &plen, &uid, &gid);
        if (e != EMUNGE_SUCCESS) {
            rc = -EACCES;
            if (e == EMUNGE_CRED_REPLAYED)
                snprintf(why, TN_WHY_MAX, "replayed munge credential");
            else if (munge_local_err(e))
                rc = -ENOKEY;
            if (e != EMUNGE_CRED_REPLAYED)
                munge_why(why, "decode", e, ctx);
            munge_ctx_destroy(ctx);
            free(payload);
            return rc;
        }
        munge_ctx_destroy(ctx);
        if (want_uid != TN_UID_ANY && uid != want_uid && uid != 0) {
            snprintf(why, TN_WHY_MAX, "credential of uid %u, job belongs to uid %u",
                     (unsigned)uid, (unsigned)want_uid);
            free(payload);
            return -EACCES;
        }
        if (uidp)
            *uidp = uid;
        rc = tn_payload_check(payload ? payload : "", payload ? (size_t)plen : 0, jobkey,
                              to, my_nonce, from, fromlen, peer_nonce, why);
        free(payload);
        return rc;
    }
#endif
    snprintf(why, TN_WHY_MAX, "authentication not supported");
    return -EACCES;
}
