/*
 * Unit tests for plog_producer: idempotent-producer checks (duplicates, gaps,
 * fencing, new epochs, wrapping sequences), the five-batch memory, and
 * eviction below the log start offset.
 */
#include "plog_producer.h"

#include "plog_batch.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

/* Producer 7, epoch 2: sequences 0-4 at offsets 0-4, 5-9 at 5-9, 10-14 at
 * 10-14. */
static PlogProducerState *
state_with_three_batches(void)
{
    PlogProducerState *state = plog_producer_state_new();
    for (gint32 i = 0; i < 3; i++)
        plog_producer_state_update(state, 7, 2, i * 5, 5, i * 5);
    plog_producer_state_check_invariants(state, 0, 15);
    return state;
}

static void
test_plog_producer_check_cases(void **state)
{
    /* Goal: each kind of incoming batch gets Kafka's verdict. */
    (void)state;
    g_autoptr(PlogProducerState) producers = state_with_three_batches();
    static const struct {
        gint64 producer_id;
        gint16 epoch;
        gint32 base_sequence;
        gint32 count;
        PlogProducerStatus status;
        gint64 duplicate_base_offset;
    } cases[] = {
        {7, 2, 15, 5, PLOG_PRODUCER_OK, -1},                     /* next in sequence */
        {7, 2, 15, 1, PLOG_PRODUCER_OK, -1},                     /* any size */
        {7, 2, 10, 5, PLOG_PRODUCER_DUPLICATE, 10},              /* retry of the last */
        {7, 2, 0, 5, PLOG_PRODUCER_DUPLICATE, 0},                /* retry of the first */
        {7, 2, 5, 3, PLOG_PRODUCER_OUT_OF_ORDER_SEQUENCE, -1},   /* same start, other end */
        {7, 2, 16, 1, PLOG_PRODUCER_OUT_OF_ORDER_SEQUENCE, -1},  /* a gap */
        {7, 2, 14, 2, PLOG_PRODUCER_OUT_OF_ORDER_SEQUENCE, -1},  /* an overlap */
        {7, 1, 15, 5, PLOG_PRODUCER_INVALID_PRODUCER_EPOCH, -1}, /* fenced */
        {7, 1, 10, 5, PLOG_PRODUCER_INVALID_PRODUCER_EPOCH, -1}, /* fenced, not a dup */
        {7, 3, 0, 5, PLOG_PRODUCER_OK, -1},                      /* new epoch from 0 */
        {7, 3, 15, 5, PLOG_PRODUCER_OUT_OF_ORDER_SEQUENCE, -1},  /* new epoch not at 0 */
        {8, 0, 42, 1, PLOG_PRODUCER_OK, -1},                     /* unknown producer */
        {-1, -1, -1, 3, PLOG_PRODUCER_OK, -1},                   /* not idempotent */
        {7, 2, -1, 3, PLOG_PRODUCER_OK, -1},                     /* no sequence */
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        PlogProducerVerdict verdict;
        PlogProducerStatus status =
            plog_producer_state_check(producers, cases[i].producer_id, cases[i].epoch,
                                      cases[i].base_sequence, cases[i].count, &verdict);
        assert_int_equal(status, cases[i].status);
        assert_int_equal(verdict.status, cases[i].status);
        assert_int_equal(verdict.duplicate_base_offset, cases[i].duplicate_base_offset);
        if (status == PLOG_PRODUCER_DUPLICATE)
            assert_int_equal(verdict.duplicate_last_offset, cases[i].duplicate_base_offset + 4);
    }
}

static void
test_plog_producer_remembers_five_batches(void **state)
{
    /* Goal: only the last five batches are duplicates; older retries are out
     * of order, as in Kafka. */
    (void)state;
    g_autoptr(PlogProducerState) producers = plog_producer_state_new();
    for (gint32 i = 0; i < 7; i++)
        plog_producer_state_update(producers, 1, 0, i, 1, 100 + i);
    const GArray *batches = NULL;
    gint16 epoch = -5;
    assert_true(plog_producer_state_lookup(producers, 1, &epoch, &batches));
    assert_int_equal(epoch, 0);
    assert_int_equal(batches->len, PLOG_PRODUCER_BATCHES_MAX);
    for (gint32 seq = 0; seq < 7; seq++) {
        PlogProducerVerdict verdict;
        PlogProducerStatus status = plog_producer_state_check(producers, 1, 0, seq, 1, &verdict);
        if (seq < 2) {
            assert_int_equal(status, PLOG_PRODUCER_OUT_OF_ORDER_SEQUENCE);
        } else {
            assert_int_equal(status, PLOG_PRODUCER_DUPLICATE);
            assert_int_equal(verdict.duplicate_base_offset, 100 + seq);
        }
    }
}

static void
test_plog_producer_sequence_wraps(void **state)
{
    /* Goal: a batch crossing G_MAXINT32 continues at 0, and its retry is a
     * duplicate. */
    (void)state;
    g_autoptr(PlogProducerState) producers = plog_producer_state_new();
    plog_producer_state_update(producers, 3, 0, G_MAXINT32 - 4, 3, 0);
    PlogProducerVerdict verdict;
    assert_int_equal(plog_producer_state_check(producers, 3, 0, G_MAXINT32 - 1, 3, &verdict),
                     PLOG_PRODUCER_OK);
    plog_producer_state_update(producers, 3, 0, G_MAXINT32 - 1, 3, 3);
    assert_int_equal(plog_producer_state_check(producers, 3, 0, G_MAXINT32 - 1, 3, &verdict),
                     PLOG_PRODUCER_DUPLICATE);
    assert_int_equal(verdict.duplicate_base_offset, 3);
    /* The batch held G_MAXINT32 - 1, G_MAXINT32 and 0: the next is 1. */
    assert_int_equal(plog_producer_state_check(producers, 3, 0, 1, 1, &verdict), PLOG_PRODUCER_OK);
    assert_int_equal(plog_producer_state_check(producers, 3, 0, 2, 1, &verdict),
                     PLOG_PRODUCER_OUT_OF_ORDER_SEQUENCE);
    assert_int_equal(plog_producer_state_check(producers, 3, 0, 0, 1, &verdict),
                     PLOG_PRODUCER_OUT_OF_ORDER_SEQUENCE);
    plog_producer_state_check_invariants(producers, 0, 6);
}

static void
test_plog_producer_new_epoch_forgets_batches(void **state)
{
    /* Goal: a batch with a new epoch replaces the producer's epoch and its
     * remembered batches; after a marker without sequence, data restarts at 0. */
    (void)state;
    g_autoptr(PlogProducerState) producers = state_with_three_batches();
    plog_producer_state_update(producers, 7, 3, PLOG_NO_SEQUENCE, 1, 15);
    const GArray *batches = NULL;
    gint16 epoch = 0;
    assert_true(plog_producer_state_lookup(producers, 7, &epoch, &batches));
    assert_int_equal(epoch, 3);
    assert_int_equal(batches->len, 0);
    PlogProducerVerdict verdict;
    assert_int_equal(plog_producer_state_check(producers, 7, 2, 10, 5, &verdict),
                     PLOG_PRODUCER_INVALID_PRODUCER_EPOCH);
    assert_int_equal(plog_producer_state_check(producers, 7, 3, 0, 5, &verdict), PLOG_PRODUCER_OK);
    assert_int_equal(plog_producer_state_check(producers, 7, 3, 1, 5, &verdict),
                     PLOG_PRODUCER_OUT_OF_ORDER_SEQUENCE);
}

static void
test_plog_producer_evict_before_log_start(void **state)
{
    /* Goal: retention forgets producers whose batches are all gone and the
     * gone batches of the others, giving the state a rebuild would. */
    (void)state;
    g_autoptr(PlogProducerState) producers = plog_producer_state_new();
    plog_producer_state_update(producers, 1, 0, 0, 10, 0);
    plog_producer_state_update(producers, 2, 0, 0, 10, 10);
    plog_producer_state_update(producers, 2, 0, 10, 10, 30);
    plog_producer_state_update(producers, 1, 0, 10, 5, 20);
    plog_producer_state_update(producers, 3, 0, 0, 5, 40);
    plog_producer_state_evict_before(producers, 25);
    assert_int_equal(plog_producer_state_count(producers), 2);
    assert_false(plog_producer_state_lookup(producers, 1, NULL, NULL));
    g_autoptr(PlogProducerState) rebuilt = plog_producer_state_new();
    plog_producer_state_update(rebuilt, 2, 0, 10, 10, 30);
    plog_producer_state_update(rebuilt, 3, 0, 0, 5, 40);
    assert_true(plog_producer_state_equal(producers, rebuilt));
    plog_producer_state_check_invariants(producers, 25, 45);
    plog_producer_state_update(rebuilt, 3, 0, 5, 5, 45);
    assert_false(plog_producer_state_equal(producers, rebuilt));
    plog_producer_state_clear(producers);
    assert_int_equal(plog_producer_state_count(producers), 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plog_producer_check_cases),
        cmocka_unit_test(test_plog_producer_remembers_five_batches),
        cmocka_unit_test(test_plog_producer_sequence_wraps),
        cmocka_unit_test(test_plog_producer_new_epoch_forgets_batches),
        cmocka_unit_test(test_plog_producer_evict_before_log_start),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
