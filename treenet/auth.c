/* auth.c - the credentials that open every treenet connection.
 *
 * Contract: see tn_int.h.  A credential proves "the owner of the job (or
 * root) on some host of this munge realm sent this, for job <jobkey>, from
 * <from> to <to>", once: munged refuses to decode the same credential twice.
 *
 * Notes:
 *   - munge_decode() is a blocking round trip to the local munged (a few
 *     tens of microseconds); it happens once per connection, never on the
 *     message path.
 *   - A credential whose munge status is an error is refused even when
 *     libmunge hands back a payload (e.g. a replay).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_MUNGE
#include <munge.h>
#endif

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
    if (auth == TREENET_AUTH_NONE)
        return 0;
    if (auth != TREENET_AUTH_MUNGE)
        return -EINVAL;
#ifdef HAVE_MUNGE
    return 0;
#else
    return -ENOTSUP;
#endif
}

static int make_payload(const char *jobkey, const char *from, const char *to, char *buf,
                        size_t len)
{
    int n = snprintf(buf, len, "loom1 %s %s %s", jobkey, from, to);
    return (n < 0 || (size_t)n >= len) ? -EINVAL : n;
}

int tn_cred_make(enum treenet_auth auth, const char *jobkey, const char *from,
                 const char *to, char **cred)
{
    char payload[TN_JOBKEY_MAX + 64];
    int n = make_payload(jobkey, from, to, payload, sizeof(payload));

    *cred = NULL;
    if (n < 0)
        return n;
    if (auth == TREENET_AUTH_NONE) {
        *cred = strdup(payload);
        return *cred ? 0 : -ENOMEM;
    }
#ifdef HAVE_MUNGE
    if (auth == TREENET_AUTH_MUNGE) {
        char *c = NULL;
        munge_err_t e = munge_encode(&c, NULL, payload, n);
        if (e != EMUNGE_SUCCESS) {
            free(c);
            return -EACCES;
        }
        *cred = c;
        return 0;
    }
#endif
    return -ENOTSUP;
}

/* Compare the decoded payload with what this receiver expects. */
static int check_payload(const char *p, size_t len, const char *jobkey, const char *to,
                         char *from, size_t fromlen, char *why)
{
    char buf[TN_JOBKEY_MAX + 64];
    char *save = NULL, *tok[5] = {0};
    int n = 0;

    if (len >= sizeof(buf) || memchr(p, '\0', len)) {
        snprintf(why, TN_WHY_MAX, "malformed payload");
        return -EACCES;
    }
    memcpy(buf, p, len);
    buf[len] = '\0';
    for (char *t = strtok_r(buf, " ", &save); t && n < 5; t = strtok_r(NULL, " ", &save))
        tok[n++] = t;
    if (n != 4 || strcmp(tok[0], "loom1") != 0) {
        snprintf(why, TN_WHY_MAX, "malformed payload");
        return -EACCES;
    }
    if (strcmp(tok[1], jobkey) != 0) {
        snprintf(why, TN_WHY_MAX, "credential for another job (%.64s)", tok[1]);
        return -EACCES;
    }
    if (strcmp(tok[3], to) != 0) {
        snprintf(why, TN_WHY_MAX, "credential for another node (%.32s, I am %s)", tok[3],
                 to);
        return -EACCES;
    }
    if (strlen(tok[2]) >= fromlen) {
        snprintf(why, TN_WHY_MAX, "malformed sender");
        return -EACCES;
    }
    strcpy(from, tok[2]);
    return 0;
}

int tn_cred_check(enum treenet_auth auth, const void *cred, size_t len, uid_t want_uid,
                  const char *jobkey, const char *to, char *from, size_t fromlen,
                  char *why)
{
    if (len == 0 || len > TN_CRED_MAX) {
        snprintf(why, TN_WHY_MAX, "bad credential length %zu", len);
        return -EACCES;
    }
    if (auth == TREENET_AUTH_NONE)
        return check_payload(cred, len, jobkey, to, from, fromlen, why);
#ifdef HAVE_MUNGE
    if (auth == TREENET_AUTH_MUNGE) {
        char str[TN_CRED_MAX + 1];
        void *payload = NULL;
        int plen = 0, rc;
        uid_t uid = (uid_t)-1;
        gid_t gid = (gid_t)-1;
        munge_err_t e;

        if (memchr(cred, '\0', len)) {
            snprintf(why, TN_WHY_MAX, "not a munge credential");
            return -EACCES;
        }
        memcpy(str, cred, len);
        str[len] = '\0';
        e = munge_decode(str, NULL, &payload, &plen, &uid, &gid);
        if (e != EMUNGE_SUCCESS) {
            if (e == EMUNGE_CRED_REPLAYED)
                snprintf(why, TN_WHY_MAX, "replayed munge credential");
            else
                snprintf(why, TN_WHY_MAX, "munge: %s", munge_strerror(e));
            free(payload);
            return -EACCES;
        }
        if (want_uid != TN_UID_ANY && uid != want_uid && uid != 0) {
            snprintf(why, TN_WHY_MAX, "credential of uid %u, job belongs to uid %u",
                     (unsigned)uid, (unsigned)want_uid);
            free(payload);
            return -EACCES;
        }
        rc = check_payload(payload ? payload : "", payload ? (size_t)plen : 0, jobkey, to,
                           from, fromlen, why);
        free(payload);
        return rc;
    }
#endif
    snprintf(why, TN_WHY_MAX, "authentication not supported");
    return -EACCES;
}
