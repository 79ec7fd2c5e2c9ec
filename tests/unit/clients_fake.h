/* clients_fake.h - a scripted fake PMI server for the client library tests.
 *
 * Contract:
 *   fake_new() makes a socketpair, exports its client end as PMI_FD (Check
 *   runs every test in its own forked process, so the environment change is
 *   private to the test) and returns a script.  The test appends actions:
 *   expect exact bytes from the client, send bytes, pause, or hang up; then
 *   fake_start() runs the script in a thread while the test calls the
 *   library, and fake_join() waits for the thread and returns how it went.
 *
 * Notes:
 *   - Each expected chunk must arrive within FAKE_WAIT_MS, so a client that
 *     sends less than expected fails the test instead of hanging it; on any
 *     mismatch the fake closes its end, which the client sees as EOF.
 *   - fake_listen() instead exports PMI_PORT=127.0.0.1:<port> and the thread
 *     accepts one connection before running the script.
 *   - fake_rec() frames a PMI-2 body left-justified the way Slurm does
 *     ("%-6d" length then body), so expectations pin that exact framing.
 */
#ifndef LOOM_CLIENTS_FAKE_H
#define LOOM_CLIENTS_FAKE_H

#include <stddef.h>

#define FAKE_WAIT_MS 5000

struct fake;

struct fake *fake_new(void);                            /* socketpair + PMI_FD */
struct fake *fake_listen(void);                         /* TCP listener + PMI_PORT */
void fake_expect(struct fake *f, const char *bytes);    /* raw bytes */
void fake_expect_rec(struct fake *f, const char *body); /* framed PMI-2 */
void fake_send(struct fake *f, const char *bytes);
void fake_send_rec(struct fake *f, const char *body);
void fake_pause_ms(struct fake *f, int ms);
void fake_hangup(struct fake *f); /* close the server end here */
void fake_notify(struct fake *f, int fd); /* write one byte to fd (a pipe) */
void fake_start(struct fake *f);
/* Wait for the script to end.  Returns 0 if every expectation matched, else
 * the 1-based index of the failing action; *why then describes it. */
int fake_join(struct fake *f, const char **why);
void fake_free(struct fake *f);

/* Convenience for Check tests: join and fail the test with the reason. */
#define FAKE_JOIN_OK(f)                                                                  \
    do {                                                                                 \
        const char *why_ = "";                                                           \
        int bad_ = fake_join((f), &why_);                                                \
        ck_assert_msg(bad_ == 0, "fake server, action %d: %s", bad_, why_);              \
    } while (0)

/* The PMI-2 handshake of a client with PMI_RANK=rank (and no PMI_JOBID),
 * answered with the given size. */
void fake_pmi2_init(struct fake *f, int rank, int size);
/* The PMI-1 handshake (init + get_maxes) answered with 256/64/1024. */
void fake_pmi1_init(struct fake *f);

#endif /* LOOM_CLIENTS_FAKE_H */
