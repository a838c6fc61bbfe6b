/*
 * Unit tests for plog_epoch, the leader-epoch cache: assignment, Kafka's
 * endOffsetFor, truncation from either end, and the checkpoint format.
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
        {0, -1, -1},   /* older than the earliest entry */
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
test_plog_epoch_assign_only_newer(void **state)
{
    /* Goal: only a newer epoch is assigned, and it removes entries that do
     * not start before it. */
    (void)state;
    g_autoptr(PlogEpochCache) cache = plog_epoch_cache_new();
    assert_int_equal(plog_epoch_cache_latest(cache), PLOG_UNDEFINED_EPOCH);
    assert_true(plog_epoch_cache_assign(cache, 1, 0));
    assert_false(plog_epoch_cache_assign(cache, 1, 0));
    assert_false(plog_epoch_cache_assign(cache, 1, 50));
    assert_false(plog_epoch_cache_assign(cache, 0, 60));
    assert_true(plog_epoch_cache_assign(cache, 3, 100));
    assert_true(plog_epoch_cache_assign(cache, 4, 100));
    static const Entry after_same_start[] = {{1, 0}, {4, 100}, {-1, -1}};
    assert_entries(cache, after_same_start);
    assert_true(plog_epoch_cache_assign(cache, 6, 50));
    static const Entry after_lower_start[] = {{1, 0}, {6, 50}, {-1, -1}};
    assert_entries(cache, after_lower_start);
    assert_int_equal(plog_epoch_cache_latest(cache), 6);
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
        cmocka_unit_test(test_plog_epoch_end_offset_cases),
        cmocka_unit_test(test_plog_epoch_assign_only_newer),
        cmocka_unit_test(test_plog_epoch_truncate_from_end),
        cmocka_unit_test(test_plog_epoch_truncate_from_start),
        cmocka_unit_test(test_plog_epoch_checkpoint_round_trip),
        cmocka_unit_test(test_plog_epoch_checkpoint_rejects_bad_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
