/* fuzz_pmi_wire.c - libFuzzer target: the PMI wire codec on a client's byte stream.
 *
 * fuzz-sources: common/pmi_wire.c
 * fuzz-cflags: -Icommon
 *
 * Contract: the input is what a task writes to its PMI fd, from the first byte.  It is
 * cut into requests the way the server does (pmi_frame_next, version unknown until an
 * init line asks for PMI-2, then PMI-2 records), and every request is parsed
 * (pmi_msg_parse_v1 / _v2) and read through every accessor.  Invariants checked on top
 * of the sanitizers (an abort is a finding):
 *   - a frame lies inside the data (frame_len <= len, body inside the frame);
 *   - framing is prefix-stable: the same bytes cut one byte short of the frame never
 *     yield a complete frame (a request is never acted on before it is complete);
 *   - a parsed PMI-2 message rebuilt with pmi_out is one record that frames to its full
 *     length and parses back to the same pairs (the builder and the parser agree).
 *   - a parsed PMI-1 message rebuilt (pmi_out, PMI_V1) is one line that parses back to
 *     the same keys.
 * Seeds: corpus/pmi_wire/ (the client streams of tests/unit/fixtures: MPICH 4.0.2's
 * PMI-1 and Slurm 22.05.8's libpmi2, plus loom's own clients).
 */
#include <assert.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pmi_wire.h"

/* abort() even under NDEBUG: these are the target's findings */
#define CHECK(c)                                                                         \
    do {                                                                                 \
        if (!(c))                                                                        \
            __builtin_trap();                                                            \
    } while (0)

static void touch_accessors(const struct pmi_msg *m)
{
    int iv, pos = 0;
    bool bv;

    (void)pmi_msg_cmd(m);
    for (int i = 0; i < m->n; i++) {
        CHECK(m->kv[i].key != NULL && m->kv[i].val != NULL);
        (void)strlen(m->kv[i].key);
        (void)strlen(m->kv[i].val);
        (void)pmi_msg_get_int(m, m->kv[i].key, &iv);
        (void)pmi_msg_get_bool(m, m->kv[i].key, &bv);
    }
    while (m->n > 0 && pmi_msg_next(m, m->kv[0].key, &pos))
        CHECK(pos <= m->n);
    (void)pmi_msg_get(m, "cmd");
    (void)pmi_msg_get(m, "");
}

static void roundtrip(const struct pmi_msg *m, enum pmi_version v)
{
    struct pmi_out o;
    struct pmi_msg back;
    size_t flen, blen;
    const char *body;

    if (m->n < 1 || strcmp(m->kv[0].key, "cmd") != 0)
        return; /* spawn blocks ("mcmd") are not rebuilt */
    pmi_out_begin(&o, v, m->kv[0].val);
    for (int i = 1; i < m->n; i++)
        pmi_out_add(&o, m->kv[i].key, m->kv[i].val);
    if (pmi_out_end(&o) != 0) {
        pmi_out_free(&o); /* a key the builder refuses: fine, it is sticky and clear */
        return;
    }
    int r = pmi_frame_next(v, o.buf, o.len, &flen, &body, &blen);
    CHECK(r == 1);
    CHECK(flen == o.len);
    r = v == PMI_V2 ? pmi_msg_parse_v2(&back, body, blen) : pmi_msg_parse_v1(&back, body, blen);
    CHECK(r == 0);
    CHECK(back.n == m->n);
    for (int i = 0; i < m->n; i++) {
        CHECK(strcmp(back.kv[i].key, m->kv[i].key) == 0);
        if (v == PMI_V2)
            CHECK(strcmp(back.kv[i].val, m->kv[i].val) == 0);
    }
    pmi_msg_free(&back);
    pmi_out_free(&o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *buf = (const char *)data;
    enum pmi_version v = PMI_V_UNKNOWN;
    size_t off = 0;
    int guard = 0;

    while (off < size && guard++ < 10000) {
        size_t flen = 0, blen = 0;
        const char *body = NULL;
        int r = pmi_frame_next(v, buf + off, size - off, &flen, &body, &blen);
        if (r <= 0)
            break; /* incomplete or a protocol error: the server drops the client */
        CHECK(flen > 0 && flen <= size - off);
        CHECK(body >= buf + off && body + blen <= buf + off + flen);

        size_t f2, b2;
        const char *bd2;
        int r2 = pmi_frame_next(v, buf + off, flen - 1, &f2, &bd2, &b2);
        CHECK(r2 != 1);
        r2 = pmi_frame_next(v, buf + off, flen, &f2, &bd2, &b2);
        CHECK(r2 == 1 && f2 == flen && bd2 == body && b2 == blen);

        struct pmi_msg m;
        r = v == PMI_V2 ? pmi_msg_parse_v2(&m, body, blen) : pmi_msg_parse_v1(&m, body, blen);
        if (r == 0) {
            CHECK(m.n >= 1);
            touch_accessors(&m);
            roundtrip(&m, v == PMI_V2 ? PMI_V2 : PMI_V1);
            int pv;
            if (v == PMI_V_UNKNOWN && strcmp(pmi_msg_cmd(&m), "init") == 0 &&
                pmi_msg_get_int(&m, "pmi_version", &pv) == 0)
                v = pv == 2 ? PMI_V2 : PMI_V1;
            pmi_msg_free(&m);
        }
        off += flen;
    }
    return 0;
}
