/*
 * check_shm_queue.c - unit tests of the MPSC queue in mpi/shm/shm_queue.h.
 *
 * The queue lives in a plain malloc'ed arena addressed by offsets (as in the shared
 * segment).  Producers are threads; the consumer is the test thread.  Checks: empty
 * queue, single-thread FIFO, and with 8 producers x 20000 cells: every cell arrives
 * exactly once and each producer's cells arrive in the order they were enqueued.
 */
#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shm_queue.h"

struct tcell {
    struct xm_cell_link link;
    uint32_t producer;
    uint32_t seq;
};

#define NPROD 8
#define PER 20000

static char *arena;
static struct xm_q q;

static uint64_t off_of(int producer, int i)
{
    /* offset 0 is "none": cells start one cell in */
    return (uint64_t)(1 + producer * PER + i) * sizeof(struct tcell);
}

static void setup(void)
{
    arena = calloc((size_t)(1 + NPROD * PER), sizeof(struct tcell));
    ck_assert_ptr_nonnull(arena);
    xm_q_init(&q);
}

static void teardown(void)
{
    free(arena);
}

START_TEST(test_empty)
{
    ck_assert_int_eq(xm_q_empty(&q), 1);
    ck_assert_uint_eq(xm_q_deq(&q, arena), 0);
}
END_TEST

START_TEST(test_fifo_single)
{
    for (int i = 0; i < 100; i++)
        xm_q_enq(&q, arena, off_of(0, i));
    ck_assert_int_eq(xm_q_empty(&q), 0);
    for (int i = 0; i < 100; i++)
        ck_assert_uint_eq(xm_q_deq(&q, arena), off_of(0, i));
    ck_assert_uint_eq(xm_q_deq(&q, arena), 0);
    /* reuse after draining (tail was reset to empty) */
    xm_q_enq(&q, arena, off_of(0, 5));
    ck_assert_uint_eq(xm_q_deq(&q, arena), off_of(0, 5));
    ck_assert_uint_eq(xm_q_deq(&q, arena), 0);
}
END_TEST

static void *producer(void *arg)
{
    int p = (int)(intptr_t)arg;
    for (int i = 0; i < PER; i++) {
        struct tcell *c = (struct tcell *)(arena + off_of(p, i));
        c->producer = (uint32_t)p;
        c->seq = (uint32_t)i;
        xm_q_enq(&q, arena, off_of(p, i));
    }
    return NULL;
}

START_TEST(test_many_producers)
{
    pthread_t th[NPROD];
    uint32_t next[NPROD] = {0};
    for (int p = 0; p < NPROD; p++)
        ck_assert_int_eq(pthread_create(&th[p], NULL, producer, (void *)(intptr_t)p), 0);
    long got = 0;
    while (got < (long)NPROD * PER) {
        uint64_t off = xm_q_deq(&q, arena);
        if (!off) {
            sched_yield();
            continue;
        }
        struct tcell *c = (struct tcell *)(arena + off);
        ck_assert_uint_lt(c->producer, NPROD);
        ck_assert_uint_eq(c->seq, next[c->producer]); /* FIFO per producer, no dup */
        ck_assert_uint_eq(off, off_of((int)c->producer, (int)c->seq));
        next[c->producer]++;
        got++;
    }
    for (int p = 0; p < NPROD; p++) {
        pthread_join(th[p], NULL);
        ck_assert_uint_eq(next[p], PER);
    }
    ck_assert_uint_eq(xm_q_deq(&q, arena), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("shm_queue");
    TCase *tc = tcase_create("mpsc");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_empty);
    tcase_add_test(tc, test_fifo_single);
    tcase_add_test(tc, test_many_producers);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
