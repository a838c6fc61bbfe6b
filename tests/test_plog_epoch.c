/*
 * Unit tests for plog_epoch, the leader-epoch cache: assignment, Kafka's
 * endOffsetFor, truncation from either end, and the checkpoint format. The
 * first test ports Kafka's own LeaderEpochFileCacheTest (core, trunk / 3.x)
 * case by case.
 */
#include "plog_epoch.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

typedef struct {
    gint32 epoch;
    gint64 start_offset;
} Entry; /* {-1, -1} ends a list */

static PlogEpochCache *
cache_with(const Entry *entries)
{
    PlogEpochCache *cache = plog_epoch_cache_new();
    for (guint i = 0; entries[i].epoch >= 0; i++)
        assert_true(plog_epoch_cache_assign(cache, entries[i].epoch, entries[i].start_offset));
    return cache;
}

static void
assert_entries(const PlogEpochCache *cache, const Entry *expected)
{
    const GArray *entries = plog_epoch_cache_entries(cache);
    guint count = 0;
    while (expected[count].epoch >= 0)
        count++;
    assert_int_equal(entries->len, count);
    for (guint i = 0; i < count; i++) {
        const PlogEpochEntry *entry = &g_array_index(entries, PlogEpochEntry, i);
        assert_int_equal(entry->epoch, expected[i].epoch);
        assert_int_equal(entry->start_offset, expected[i].start_offset);
    }
    plog_epoch_cache_check_invariants(cache, -1, -1);
}

/* ---- Kafka's LeaderEpochFileCacheTest, as a table ----
 *
 * Each case is one test of Kafka's suite: a script of operations on a fresh
 * cache, each query with the answer Kafka's test expects, then the entries
 * Kafka's test expects at the end. Not ported: testPreviousEpoch,
 * testFindPreviousEpoch, testFindPreviousEntry, testFindNextEpoch,
 * testGetEpochEntry and shouldFetchEpochForGivenOffset test lookups ksim
 * has no caller for (previousEpoch, nextEpoch, epochEntry, epochForOffset);
 * shouldPersistEpochsBetweenInstances and shouldWriteCheckpointOnTruncation
 * are the serialize/parse round trip every case ends with. */

typedef enum {
    OP_END = 0,
    OP_ASSIGN,               /* assign(a, b) */
    OP_TRUNCATE_FROM_END,    /* truncateFromEndAsyncFlush(b) */
    OP_TRUNCATE_FROM_START,  /* truncateFromStartAsyncFlush(b) */
    OP_CLEAR,                /* clearAndFlush() */
    OP_END_OFFSET_FOR,       /* endOffsetFor(a, b) == (want_epoch, want_offset) */
    OP_LATEST_EPOCH,         /* latestEpoch == want_epoch (-1: empty) */
} OpKind;

typedef struct {
    OpKind kind;
    gint32 a;
    gint64 b;
    gint32 want_epoch;
    gint64 want_offset;
} Op;

#define ASSIGN(epoch, offset) {OP_ASSIGN, (epoch), (offset), 0, 0}
#define TRUNCATE_END(offset) {OP_TRUNCATE_FROM_END, 0, (offset), 0, 0}
#define TRUNCATE_START(offset) {OP_TRUNCATE_FROM_START, 0, (offset), 0, 0}
#define CLEAR() {OP_CLEAR, 0, 0, 0, 0}
#define END_OFFSET_FOR(epoch, leo, want_epoch, want_offset)                                        \
    {OP_END_OFFSET_FOR, (epoch), (leo), (want_epoch), (want_offset)}
#define LATEST(epoch) {OP_LATEST_EPOCH, 0, 0, (epoch), 0}
#define THREE_EPOCHS ASSIGN(2, 6), ASSIGN(3, 8), ASSIGN(4, 11)
#define END_OFFSET_UNDEFINED(epoch, leo)                                                          \
    END_OFFSET_FOR((epoch), (leo), PLOG_UNDEFINED_EPOCH, PLOG_UNDEFINED_EPOCH_OFFSET)

typedef struct {
    const char *kafka_test;
    Op ops[16];        /* up to OP_END */
    Entry expected[4]; /* up to {-1, -1} */
} KafkaCase;

static const KafkaCase KAFKA_CASES[] = {
    {"shouldAddEpochAndMessageOffsetToCache",
     {ASSIGN(2, 10), LATEST(2), END_OFFSET_FOR(2, 11, 2, 11)},
     {{2, 10}, {-1, -1}}},
    {"shouldReturnLogEndOffsetIfLatestEpochRequested",
     {ASSIGN(2, 11), ASSIGN(2, 12), END_OFFSET_FOR(2, 14, 2, 14)},
     {{2, 11}, {-1, -1}}},
    {"shouldReturnUndefinedOffsetIfUndefinedEpochRequested",
     {ASSIGN(2, 11), ASSIGN(3, 12), END_OFFSET_UNDEFINED(-1, 0)},
     {{2, 11}, {3, 12}, {-1, -1}}},
    {"shouldNotOverwriteLogEndOffsetForALeaderEpochOnceItHasBeenAssigned",
     {ASSIGN(2, 9), ASSIGN(2, 10)},
     {{2, 9}, {-1, -1}}},
    {"shouldEnforceMonotonicallyIncreasingStartOffsets",
     {ASSIGN(2, 9), ASSIGN(3, 9)},
     {{3, 9}, {-1, -1}}},
    {"shouldNotOverwriteOffsetForALeaderEpochOnceItHasBeenAssigned",
     {ASSIGN(2, 6), ASSIGN(2, 10)},
     {{2, 6}, {-1, -1}}},
    {"shouldReturnUnsupportedIfNoEpochRecorded", {END_OFFSET_UNDEFINED(0, 0)}, {{-1, -1}}},
    {"shouldReturnUnsupportedIfNoEpochRecordedAndUndefinedEpochRequested",
     {END_OFFSET_UNDEFINED(-1, 73)},
     {{-1, -1}}},
    {"shouldReturnFirstEpochIfRequestedEpochLessThanFirstEpoch",
     {ASSIGN(5, 11), ASSIGN(6, 12), ASSIGN(7, 13), END_OFFSET_FOR(4, 0, 4, 11)},
     {{5, 11}, {6, 12}, {7, 13}, {-1, -1}}},
    {"shouldTruncateIfMatchingEpochButEarlierStartingOffset",
     {ASSIGN(5, 11), ASSIGN(6, 12), ASSIGN(7, 13), ASSIGN(7, 12), END_OFFSET_FOR(5, 0, 5, 12),
      END_OFFSET_FOR(6, 0, 5, 12)},
     {{5, 11}, {7, 12}, {-1, -1}}},
    {"shouldGetFirstOffsetOfSubsequentEpochWhenOffsetRequestedForPreviousEpoch",
     {ASSIGN(1, 11), ASSIGN(1, 12), ASSIGN(2, 13), ASSIGN(2, 14), ASSIGN(3, 15), ASSIGN(3, 16),
      END_OFFSET_FOR(2, 17, 2, 15)},
     {{1, 11}, {2, 13}, {3, 15}, {-1, -1}}},
    {"shouldReturnNextAvailableEpochIfThereIsNoExactEpochForTheOneRequested",
     {ASSIGN(0, 10), ASSIGN(2, 13), ASSIGN(4, 17), END_OFFSET_FOR(1, 0, 0, 13),
      END_OFFSET_FOR(2, 0, 2, 17), END_OFFSET_FOR(3, 0, 2, 17)},
     {{0, 10}, {2, 13}, {4, 17}, {-1, -1}}},
    {"shouldNotUpdateEpochAndStartOffsetIfItDidNotChange",
     {ASSIGN(2, 6), ASSIGN(2, 7)},
     {{2, 6}, {-1, -1}}},
    {"shouldReturnInvalidOffsetIfEpochIsRequestedWhichIsNotCurrentlyTracked",
     {ASSIGN(2, 100), END_OFFSET_UNDEFINED(3, 100)},
     {{2, 100}, {-1, -1}}},
    {"shouldSupportEpochsThatDoNotStartFromZero",
     {ASSIGN(2, 6), END_OFFSET_FOR(2, 7, 2, 7)},
     {{2, 6}, {-1, -1}}},
    {"shouldEnforceMonotonicallyIncreasingEpochs",
     {ASSIGN(1, 5), ASSIGN(2, 6), ASSIGN(1, 7), LATEST(1), END_OFFSET_FOR(1, 8, 1, 8),
      END_OFFSET_UNDEFINED(2, 8)},
     {{1, 7}, {-1, -1}}},
    {"shouldEnforceOffsetsIncreaseMonotonically",
     {ASSIGN(2, 6), ASSIGN(3, 5)},
     {{3, 5}, {-1, -1}}},
    {"shouldIncreaseAndTrackEpochsAsLeadersChangeManyTimes",
     {ASSIGN(0, 0), ASSIGN(1, 0), LATEST(1), END_OFFSET_FOR(1, 0, 1, 0),
      END_OFFSET_FOR(0, 0, 0, 0), END_OFFSET_FOR(1, 5, 1, 5), END_OFFSET_FOR(0, 5, 0, 0),
      ASSIGN(2, 5), END_OFFSET_FOR(2, 10, 2, 10), END_OFFSET_FOR(1, 10, 1, 5),
      END_OFFSET_FOR(0, 10, 0, 0)},
     {{1, 0}, {2, 5}, {-1, -1}}},
    {"shouldIncreaseAndTrackEpochsAsFollowerReceivesManyMessages",
     {ASSIGN(0, 0), ASSIGN(0, 1), ASSIGN(0, 2), LATEST(0), END_OFFSET_FOR(0, 3, 0, 3),
      ASSIGN(1, 3), ASSIGN(1, 4), ASSIGN(1, 5), END_OFFSET_FOR(1, 6, 1, 6), ASSIGN(2, 6),
      ASSIGN(2, 7), ASSIGN(2, 8), END_OFFSET_FOR(2, 9, 2, 9), END_OFFSET_FOR(0, 9, 0, 3),
      END_OFFSET_FOR(1, 9, 1, 6)},
     {{0, 0}, {1, 3}, {2, 6}, {-1, -1}}},
    {"shouldDropEntriesOnEpochBoundaryWhenRemovingLatestEntries",
     {THREE_EPOCHS, TRUNCATE_END(8)},
     {{2, 6}, {-1, -1}}},
    {"shouldPreserveResetOffsetOnClearEarliestIfOneExists",
     {THREE_EPOCHS, TRUNCATE_START(8)},
     {{3, 8}, {4, 11}, {-1, -1}}},
    {"shouldUpdateSavedOffsetWhenOffsetToClearToIsBetweenEpochs",
     {THREE_EPOCHS, TRUNCATE_START(9)},
     {{3, 9}, {4, 11}, {-1, -1}}},
    {"shouldNotClearAnythingIfOffsetToEarly",
     {THREE_EPOCHS, TRUNCATE_START(1)},
     {{2, 6}, {3, 8}, {4, 11}, {-1, -1}}},
    {"shouldNotClearAnythingIfOffsetToFirstOffset",
     {THREE_EPOCHS, TRUNCATE_START(6)},
     {{2, 6}, {3, 8}, {4, 11}, {-1, -1}}},
    {"shouldRetainLatestEpochOnClearAllEarliest",
     {THREE_EPOCHS, TRUNCATE_START(11)},
     {{4, 11}, {-1, -1}}},
    {"shouldUpdateOffsetBetweenEpochBoundariesOnClearEarliest",
     {THREE_EPOCHS, TRUNCATE_START(9)},
     {{3, 9}, {4, 11}, {-1, -1}}},
    {"shouldUpdateOffsetBetweenEpochBoundariesOnClearEarliest2",
     {ASSIGN(0, 0), ASSIGN(1, 7), ASSIGN(2, 10), TRUNCATE_START(5)},
     {{0, 5}, {1, 7}, {2, 10}, {-1, -1}}},
    {"shouldRetainLatestEpochOnClearAllEarliestAndUpdateItsOffset",
     {THREE_EPOCHS, TRUNCATE_START(15)},
     {{4, 15}, {-1, -1}}},
    {"shouldDropEntriesBetweenEpochBoundaryWhenRemovingNewest",
     {THREE_EPOCHS, TRUNCATE_END(9), LATEST(3)},
     {{2, 6}, {3, 8}, {-1, -1}}},
    {"shouldClearAllEntries", {THREE_EPOCHS, CLEAR()}, {{-1, -1}}},
    {"shouldNotResetEpochHistoryHeadIfUndefinedPassed",
     {THREE_EPOCHS, TRUNCATE_START(PLOG_UNDEFINED_EPOCH_OFFSET)},
     {{2, 6}, {3, 8}, {4, 11}, {-1, -1}}},
    {"shouldNotResetEpochHistoryTailIfUndefinedPassed",
     {THREE_EPOCHS, TRUNCATE_END(PLOG_UNDEFINED_EPOCH_OFFSET)},
     {{2, 6}, {3, 8}, {4, 11}, {-1, -1}}},
    {"shouldFetchLatestEpochOfEmptyCache", {LATEST(-1)}, {{-1, -1}}},
    {"shouldFetchEndOffsetOfEmptyCache", {END_OFFSET_UNDEFINED(7, 0)}, {{-1, -1}}},
    {"shouldClearEarliestOnEmptyCache", {TRUNCATE_START(7)}, {{-1, -1}}},
    {"shouldClearLatestOnEmptyCache", {TRUNCATE_END(7)}, {{-1, -1}}},
    {"shouldWriteCheckpointOnTruncation",
     {THREE_EPOCHS, TRUNCATE_END(11), TRUNCATE_START(8)},
     {{3, 8}, {-1, -1}}},
};

/* TRUE when the cache holds other entries than `before`. */
static gboolean
entries_differ(const PlogEpochCache *cache, const GArray *before)
{
    const GArray *now = plog_epoch_cache_entries(cache);
    if (now->len != before->len)
        return TRUE;
    if (now->len == 0)
        return FALSE;
    return memcmp(now->data, before->data, now->len * sizeof(PlogEpochEntry)) != 0;
}

/* Runs one mutating operation and checks that its result says whether the
 * cache changed. */
static void
apply_mutation(PlogEpochCache *cache, const Op *op)
{
    const GArray *entries = plog_epoch_cache_entries(cache);
    g_autoptr(GArray) before = g_array_sized_new(FALSE, FALSE, sizeof(PlogEpochEntry), entries->len);
    g_array_append_vals(before, entries->data, entries->len);
    gboolean changed = FALSE;
    if (op->kind == OP_ASSIGN)
        changed = plog_epoch_cache_assign(cache, op->a, op->b);
    else if (op->kind == OP_TRUNCATE_FROM_END)
        changed = plog_epoch_cache_truncate_from_end(cache, op->b);
    else if (op->kind == OP_TRUNCATE_FROM_START)
        changed = plog_epoch_cache_truncate_from_start(cache, op->b);
    else
        plog_epoch_cache_clear(cache);
    if (op->kind != OP_CLEAR)
        assert_int_equal(changed, entries_differ(cache, before));
}

static void
run_op(PlogEpochCache *cache, const Op *op)
{
    if (op->kind == OP_LATEST_EPOCH) {
        assert_int_equal(plog_epoch_cache_latest(cache), op->want_epoch);
        return;
    }
    if (op->kind == OP_END_OFFSET_FOR) {
        gint32 epoch = 99;
        gint64 end_offset = 99;
        plog_epoch_cache_end_offset(cache, op->a, op->b, &epoch, &end_offset);
        assert_int_equal(epoch, op->want_epoch);
        assert_int_equal(end_offset, op->want_offset);
        return;
    }
    apply_mutation(cache, op);
    plog_epoch_cache_check_invariants(cache, -1, -1);
}

static void
test_plog_epoch_kafka_cases(void **state)
{
    /* Goal: the cache answers every case of Kafka's LeaderEpochFileCacheTest
     * as Kafka's LeaderEpochFileCache does, and each state round-trips
     * through the checkpoint. */
    (void)state;
    for (gsize c = 0; c < G_N_ELEMENTS(KAFKA_CASES); c++) {
        const KafkaCase *kc = &KAFKA_CASES[c];
        print_message("case: %s\n", kc->kafka_test);
        g_autoptr(PlogEpochCache) cache = plog_epoch_cache_new();
        for (guint i = 0; i < G_N_ELEMENTS(kc->ops) && kc->ops[i].kind != OP_END; i++)
            run_op(cache, &kc->ops[i]);
        assert_entries(cache, kc->expected);
        g_autoptr(GString) text = plog_epoch_cache_serialize(cache);
        g_autoptr(PlogEpochCache) parsed = plog_epoch_cache_new();
        assert_true(plog_epoch_cache_parse(parsed, text->str, text->len));
        assert_entries(parsed, kc->expected);
    }
}

static const Entry three_epochs[] = {{1, 0}, {3, 100}, {5, 250}, {-1, -1}};

static void
test_plog_epoch_end_offset_cases(void **state)
{
    /* Goal: endOffsetFor follows Kafka for present, missing, older, newer and
     * latest epochs. */
    (void)state;
    g_autoptr(PlogEpochCache) cache = cache_with(three_epochs);
    static const struct {
        gint32 requested;
        gint32 epoch;
        gint64 end_offset;
    } cases[] = {
        {-1, -1, -1},  /* undefined epoch */
        {0, 0, 0},     /* older than the earliest entry: where it starts */
        {1, 1, 100},   /* present: the start of the next epoch */
        {2, 1, 100},   /* missing: the largest epoch below it */
        {3, 3, 250},   /* present */
        {4, 3, 250},   /* missing */
        {5, 5, 400},   /* latest: the LEO */
        {6, -1, -1},   /* newer than the latest */
        {100, -1, -1}, /* far newer */
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        gint32 epoch = 99;
        gint64 end_offset = 99;
        plog_epoch_cache_end_offset(cache, cases[i].requested, 400, &epoch, &end_offset);
        assert_int_equal(epoch, cases[i].epoch);
        assert_int_equal(end_offset, cases[i].end_offset);
    }
    g_autoptr(PlogEpochCache) empty = plog_epoch_cache_new();
    gint32 epoch = 99;
    gint64 end_offset = 99;
    plog_epoch_cache_end_offset(empty, 0, 400, &epoch, &end_offset);
    assert_int_equal(epoch, PLOG_UNDEFINED_EPOCH);
    assert_int_equal(end_offset, PLOG_UNDEFINED_EPOCH_OFFSET);
}

static void
test_plog_epoch_truncate_from_end(void **state)
{
    /* Goal: truncating the log removes the epochs that start at or after it. */
    (void)state;
    static const struct {
        gint64 end_offset;
        gboolean changed;
        Entry expected[4];
    } cases[] = {
        {400, FALSE, {{1, 0}, {3, 100}, {5, 250}, {-1, -1}}},
        {251, FALSE, {{1, 0}, {3, 100}, {5, 250}, {-1, -1}}},
        {250, TRUE, {{1, 0}, {3, 100}, {-1, -1}}},
        {101, TRUE, {{1, 0}, {3, 100}, {-1, -1}}},
        {100, TRUE, {{1, 0}, {-1, -1}}},
        {0, TRUE, {{-1, -1}}},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(PlogEpochCache) cache = cache_with(three_epochs);
        assert_int_equal(plog_epoch_cache_truncate_from_end(cache, cases[i].end_offset),
                         cases[i].changed);
        assert_entries(cache, cases[i].expected);
    }
}

static void
test_plog_epoch_truncate_from_start(void **state)
{
    /* Goal: retention removes older epochs and moves the first kept epoch's
     * start to the new log start offset. */
    (void)state;
    static const struct {
        gint64 start_offset;
        gboolean changed;
        Entry expected[4];
    } cases[] = {
        {0, FALSE, {{1, 0}, {3, 100}, {5, 250}, {-1, -1}}},
        {50, TRUE, {{1, 50}, {3, 100}, {5, 250}, {-1, -1}}},
        {100, TRUE, {{3, 100}, {5, 250}, {-1, -1}}},
        {150, TRUE, {{3, 150}, {5, 250}, {-1, -1}}},
        {250, TRUE, {{5, 250}, {-1, -1}}},
        {300, TRUE, {{5, 300}, {-1, -1}}},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(PlogEpochCache) cache = cache_with(three_epochs);
        assert_int_equal(plog_epoch_cache_truncate_from_start(cache, cases[i].start_offset),
                         cases[i].changed);
        assert_entries(cache, cases[i].expected);
        plog_epoch_cache_check_invariants(cache, cases[i].start_offset, 400);
    }
}

static void
test_plog_epoch_checkpoint_round_trip(void **state)
{
    /* Goal: a serialized cache parses back to the same entries. */
    (void)state;
    g_autoptr(PlogEpochCache) cache = cache_with(three_epochs);
    g_autoptr(GString) text = plog_epoch_cache_serialize(cache);
    assert_string_equal(text->str, "0\n3\n1 0\n3 100\n5 250\n");
    g_autoptr(PlogEpochCache) parsed = plog_epoch_cache_new();
    assert_true(plog_epoch_cache_parse(parsed, text->str, text->len));
    assert_entries(parsed, three_epochs);
    g_autoptr(PlogEpochCache) empty = plog_epoch_cache_new();
    g_autoptr(GString) empty_text = plog_epoch_cache_serialize(empty);
    assert_true(plog_epoch_cache_parse(parsed, empty_text->str, empty_text->len));
    assert_int_equal(plog_epoch_cache_entries(parsed)->len, 0);
}

static void
test_plog_epoch_checkpoint_rejects_bad_files(void **state)
{
    /* Goal: incomplete or inconsistent checkpoints are refused, leaving the
     * cache empty. */
    (void)state;
    static const char *const bad[] = {
        "",
        "0\n",
        "0\n2\n1 0\n",          /* fewer entries than counted */
        "0\n1\n1 0\n3 100\n",   /* more entries than counted */
        "0\n1\n1 0",            /* torn: no final newline */
        "1\n1\n1 0\n",          /* unknown version */
        "0\n2\n3 0\n1 100\n",   /* epochs out of order */
        "0\n2\n1 100\n3 100\n", /* start offsets not increasing */
        "0\n1\n1 -5\n",         /* negative offset */
        "0\n1\n1 0 7\n",        /* extra field */
        "0\n1\nx 0\n",          /* not a number */
    };
    for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autoptr(PlogEpochCache) cache = cache_with(three_epochs);
        assert_false(plog_epoch_cache_parse(cache, bad[i], strlen(bad[i])));
        assert_int_equal(plog_epoch_cache_entries(cache)->len, 0);
    }
    g_autoptr(PlogEpochCache) cache = plog_epoch_cache_new();
    assert_false(plog_epoch_cache_parse(cache, "0\n0\n\0", 5));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plog_epoch_kafka_cases),
        cmocka_unit_test(test_plog_epoch_end_offset_cases),
        cmocka_unit_test(test_plog_epoch_truncate_from_end),
        cmocka_unit_test(test_plog_epoch_truncate_from_start),
        cmocka_unit_test(test_plog_epoch_checkpoint_round_trip),
        cmocka_unit_test(test_plog_epoch_checkpoint_rejects_bad_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
