/*
 * Consumer checker tests: each consumer anomaly on hand-made histories of one
 * partition, none in a clean history, what ends a continuous assignment,
 * which commit is final, counts, end-to-end latency, examples and their
 * explanations.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "checker.h"
#include "checker_consumer.h"
#include "explain.h"
#include "history.h"
#include "kafka_error.h"

#define MS(x) ((gint64)(x)*G_GINT64_CONSTANT(1000000))
#define PRODUCER 7
#define MEMBER_A 20
#define MEMBER_B 21
#define OTHER_GROUP 30
#define NO_GROUP 40
#define RECORDS 6

/* ---- hand-made histories ---- */

static guint64
value_at(gint64 offset)
{
    return HISTORY_VALUE(PRODUCER, offset + 1);
}

/* Topic t, partition 0: RECORDS values sent at 0..5 ms, acknowledged at
 * offsets 0..5, all committed; members A and B in group g, one member of
 * group h, one consumer in no group. Consumer ops follow at 100 ms on. */
static History *
history_make(void)
{
    History *h = history_new();
    history_topic(h, "t");
    history_set_process_name(h, PRODUCER, "producer");
    history_set_process_name(h, MEMBER_A, "consumer-a");
    history_set_process_name(h, MEMBER_B, "consumer-b");
    history_set_process_name(h, OTHER_GROUP, "consumer-h");
    history_set_process_name(h, NO_GROUP, "consumer-alone");
    history_set_process_group(h, MEMBER_A, "g");
    history_set_process_group(h, MEMBER_B, "g");
    history_set_process_group(h, OTHER_GROUP, "h");
    for (gint64 i = 0; i < RECORDS; i++) {
        guint64 op = history_invoke(h, MS(i), HISTORY_FN_SEND, PRODUCER, 0, 0, 0, value_at(i));
        history_complete(h, op, MS(i) + 500000, HISTORY_OK, 0, i, 0);
    }
    HistoryReplica replica = {0};
    replica.broker = 1;
    replica.is_leader = TRUE;
    replica.online = TRUE;
    replica.leo = RECORDS;
    replica.hw = RECORDS;
    replica.records = g_array_new(FALSE, TRUE, sizeof(HistoryRecord));
    for (gint64 i = 0; i < RECORDS; i++) {
        HistoryRecord record = {i, value_at(i)};
        g_array_append_val(replica.records, record);
    }
    history_add_replica(h, &replica);
    return h;
}

static void
assign(History *h, gint64 ms, guint32 process, gint64 offset)
{
    history_record(h, MS(ms), HISTORY_FN_ASSIGN, process, 0, 0, offset, 0, 0);
}

static void
poll_at(History *h, gint64 ms, guint32 process, gint64 offset)
{
    history_record(h, MS(ms), HISTORY_FN_POLL, process, 0, 0, offset, 0, value_at(offset));
}

static void
process_at(History *h, gint64 ms, guint32 process, gint64 offset)
{
    history_record(h, MS(ms), HISTORY_FN_PROCESS, process, 0, 0, offset, 0, value_at(offset));
}

/* Polls and processes offsets [from, to) one per ms from `ms`; returns the
 * next free ms. */
static gint64
consume(History *h, gint64 ms, guint32 process, gint64 from, gint64 to)
{
    for (gint64 o = from; o < to; o++) {
        poll_at(h, ms++, process, o);
        process_at(h, ms++, process, o);
    }
    return ms;
}

static void
commit(History *h, gint64 ms, gint64 done_ms, guint32 process, gint64 offset, HistoryType type)
{
    guint64 op = history_invoke(h, MS(ms), HISTORY_FN_COMMIT, process, 0, 0, 0, (guint64)offset);
    if (type != HISTORY_INVOKE)
        history_complete(h, op, MS(done_ms), type, 0, offset, type == HISTORY_OK ? 0 : 1);
}

typedef struct {
    History *history;
    CheckerResult *producer;
    ConsumerCheck *check;
} Checked;

static Checked
check_of(History *h)
{
    Checked c = {h, checker_run(h, NULL), NULL};
    c.check = checker_consumer_run(h, c.producer, NULL);
    checker_consumer_check_invariants(c.check);
    return c;
}

static void
checked_free(Checked *c)
{
    checker_consumer_free(c->check);
    checker_result_free(c->producer);
    history_free(c->history);
}

static const ConsumerCounts *
group_g(const Checked *c)
{
    const ConsumerGroupResult *g = checker_consumer_find_group(c->check, "g");
    assert_non_null(g);
    return &g->counts;
}

/* Every anomaly of group g but `except` is zero. */
static void
assert_only(const Checked *c, ConsumerAnomaly except, guint64 count)
{
    const ConsumerCounts *counts = group_g(c);
    for (guint a = 0; a < CONSUMER_ANOMALY_COUNT; a++)
        assert_int_equal(counts->anomalies[a], a == except ? count : 0);
}

/* ---- tests ---- */

/* A member that reads, processes and commits everything: no anomaly. */
static void
test_checker_consumer_clean(void **state)
{
    (void)state;
    History *h = history_make();
    assign(h, 100, MEMBER_A, 0);
    gint64 ms = consume(h, 101, MEMBER_A, 0, RECORDS);
    commit(h, ms, ms + 1, MEMBER_A, RECORDS, HISTORY_OK);
    Checked c = check_of(h);
    assert_only(&c, CONSUMER_ANOMALY_COUNT, 0);
    const ConsumerCounts *counts = group_g(&c);
    assert_int_equal(counts->members, 2);
    assert_int_equal(counts->polled, RECORDS);
    assert_int_equal(counts->processed, RECORDS);
    assert_int_equal(counts->unique, RECORDS);
    assert_int_equal(counts->delivered, RECORDS);
    assert_int_equal(counts->judged, RECORDS);
    assert_int_equal(counts->commits_ok, 1);
    const ConsumerGroupResult *g = checker_consumer_find_group(c.check, "g");
    assert_int_equal(stats_histogram_count(g->e2e), RECORDS);
    /* Value 0 sent at 0 ms, processed at 102 ms. */
    assert_int_equal(stats_histogram_min(g->e2e), MS(102));
    assert_int_equal(checker_consumer_group_count(c.check), 2);
    assert_string_equal(checker_consumer_group(c.check, 0)->group, "g");
    assert_string_equal(checker_consumer_group(c.check, 1)->group, "h");
    checked_free(&c);
}

/* Commit before processing, then a crash: the records polled but not
 * processed are below the final commit: lost_consumption, and only that. */
static void
test_checker_consumer_lost(void **state)
{
    (void)state;
    History *h = history_make();
    assign(h, 100, MEMBER_A, 0);
    for (gint64 o = 0; o < RECORDS; o++)
        poll_at(h, 101 + o, MEMBER_A, o);
    commit(h, 110, 111, MEMBER_A, RECORDS, HISTORY_OK);
    for (gint64 o = 0; o < 3; o++)
        process_at(h, 120 + o, MEMBER_A, o);
    Checked c = check_of(h);
    assert_only(&c, CONSUMER_LOST_CONSUMPTION, 3);
    const ConsumerGroupResult *g = checker_consumer_find_group(c.check, "g");
    const GArray *examples = g->examples[CONSUMER_LOST_CONSUMPTION];
    assert_int_equal(examples->len, 3);
    const ConsumerExample *e = &g_array_index(examples, ConsumerExample, 0);
    assert_int_equal(e->offset, 3);
    assert_int_equal(e->value, value_at(3));
    assert_int_equal(e->offset_other, RECORDS);
    assert_non_null(strstr(e->summary, "no member processed"));
    GPtrArray *chain = explain_consumer_example(NULL, c.check, g, e);
    assert_true(chain->len >= 3);
    gboolean polled = FALSE, committed = FALSE;
    for (guint i = 0; i < chain->len; i++) {
        const char *s = g_ptr_array_index(chain, i);
        polled |= strstr(s, "consumer-a polled offset 3") != NULL;
        committed |= strstr(s, "committed offset 6") != NULL;
    }
    assert_true(polled);
    assert_true(committed);
    g_ptr_array_free(chain, TRUE);
    checked_free(&c);
}

/* Records at or above the final committed offset are not lost: the group
 * will read them; and the final commit is the one that completed last, even
 * when its offset is lower. */
static void
test_checker_consumer_lost_bounds(void **state)
{
    (void)state;
    History *h = history_make();
    assign(h, 100, MEMBER_A, 0);
    gint64 ms = consume(h, 101, MEMBER_A, 0, 2);
    commit(h, ms, ms + 50, MEMBER_A, 5, HISTORY_OK); /* completes last */
    commit(h, ms + 1, ms + 2, MEMBER_A, 2, HISTORY_OK);
    commit(h, ms + 3, ms + 4, MEMBER_A, 6, HISTORY_FAIL);
    Checked c = check_of(h);
    assert_only(&c, CONSUMER_LOST_CONSUMPTION, 3); /* offsets 2, 3, 4 */
    assert_int_equal(group_g(&c)->commits_ok, 2);
    assert_int_equal(group_g(&c)->commits_failed, 1);
    checked_free(&c);

    h = history_make();
    assign(h, 100, MEMBER_A, 0);
    ms = consume(h, 101, MEMBER_A, 0, 2);
    commit(h, ms, ms + 1, MEMBER_A, 5, HISTORY_OK);
    commit(h, ms + 2, ms + 3, MEMBER_A, 2, HISTORY_OK); /* completes last */
    commit(h, ms + 4, -1, MEMBER_A, 6, HISTORY_INVOKE);
    c = check_of(h);
    assert_only(&c, CONSUMER_ANOMALY_COUNT, 0);
    assert_int_equal(group_g(&c)->commits_unknown, 1);
    checked_free(&c);
}

/* A group that starts reading at offset 3 (auto.offset.reset) is not
 * judged for offsets below it. */
static void
test_checker_consumer_lost_from_start(void **state)
{
    (void)state;
    History *h = history_make();
    assign(h, 100, MEMBER_A, 3);
    gint64 ms = consume(h, 101, MEMBER_A, 3, RECORDS);
    commit(h, ms, ms + 1, MEMBER_A, RECORDS, HISTORY_OK);
    Checked c = check_of(h);
    assert_only(&c, CONSUMER_ANOMALY_COUNT, 0);
    assert_int_equal(group_g(&c)->judged, 3);
    checked_free(&c);
}

/* Process then commit, a crash before the commit: the next member starts at
 * the last commit and processes records again: duplicate_consumption. */
static void
test_checker_consumer_duplicate(void **state)
{
    (void)state;
    History *h = history_make();
    assign(h, 100, MEMBER_A, 0);
    gint64 ms = consume(h, 101, MEMBER_A, 0, 2);
    commit(h, ms, ms + 1, MEMBER_A, 2, HISTORY_OK);
    ms = consume(h, ms + 2, MEMBER_A, 2, 4); /* crash before committing 4 */
    assign(h, ms + 10, MEMBER_B, 2);
    ms = consume(h, ms + 11, MEMBER_B, 2, RECORDS);
    commit(h, ms, ms + 1, MEMBER_B, RECORDS, HISTORY_OK);
    Checked c = check_of(h);
    assert_only(&c, CONSUMER_DUPLICATE_CONSUMPTION, 2);
    const ConsumerGroupResult *g = checker_consumer_find_group(c.check, "g");
    assert_int_equal(g->counts.processed, RECORDS + 2);
    assert_int_equal(g->counts.unique, RECORDS);
    const ConsumerExample *e =
        &g_array_index(g->examples[CONSUMER_DUPLICATE_CONSUMPTION], ConsumerExample, 0);
    assert_int_equal(e->offset, 2);
    assert_int_equal(e->process, MEMBER_B);
    assert_int_equal(e->process_other, MEMBER_A);
    GPtrArray *chain = explain_consumer_example(NULL, c.check, g, e);
    gboolean reassigned = FALSE;
    for (guint i = 0; i < chain->len; i++)
        reassigned |= strstr(g_ptr_array_index(chain, i), "consumer-b was assigned") != NULL;
    assert_true(reassigned);
    g_ptr_array_free(chain, TRUE);
    checked_free(&c);
}

/* Two groups reading the same records is publish/subscribe, not a
 * duplicate; a consumer in no group is not judged. */
static void
test_checker_consumer_groups_apart(void **state)
{
    (void)state;
    History *h = history_make();
    assign(h, 100, MEMBER_A, 0);
    assign(h, 100, OTHER_GROUP, 0);
    gint64 ms = consume(h, 101, MEMBER_A, 0, RECORDS);
    ms = consume(h, ms, OTHER_GROUP, 0, RECORDS);
    ms = consume(h, ms, NO_GROUP, 0, RECORDS);
    ms = consume(h, ms, NO_GROUP, 0, RECORDS);
    Checked c = check_of(h);
    assert_only(&c, CONSUMER_ANOMALY_COUNT, 0);
    ConsumerCounts totals;
    checker_consumer_totals(c.check, &totals);
    assert_int_equal(totals.processed, 2 * RECORDS);
    assert_int_equal(totals.delivered, 2 * RECORDS);
    for (guint a = 0; a < CONSUMER_ANOMALY_COUNT; a++)
        assert_int_equal(totals.anomalies[a], 0);
    checked_free(&c);
}

/* Within one assignment a poll jumping over committed offsets is a
 * poll_skip, also for the first poll after the assignment's position. */
static void
test_checker_consumer_poll_skip(void **state)
{
    (void)state;
    History *h = history_make();
    assign(h, 100, MEMBER_A, 0);
    poll_at(h, 101, MEMBER_A, 0);
    poll_at(h, 102, MEMBER_A, 1);
    poll_at(h, 103, MEMBER_A, 4);
    Checked c = check_of(h);
    assert_only(&c, CONSUMER_POLL_SKIP, 1);
    const ConsumerGroupResult *g = checker_consumer_find_group(c.check, "g");
    const ConsumerExample *e = &g_array_index(g->examples[CONSUMER_POLL_SKIP], ConsumerExample, 0);
    assert_int_equal(e->offset, 4);
    assert_int_equal(e->offset_other, 1);
    assert_int_equal(e->skipped, 2);
    assert_int_equal(e->value, value_at(2));
    checked_free(&c);

    h = history_make();
    assign(h, 100, MEMBER_A, 1);
    poll_at(h, 101, MEMBER_A, 3);
    c = check_of(h);
    assert_only(&c, CONSUMER_POLL_SKIP, 1);
    checked_free(&c);
}

/* A poll at or below an offset polled before in the same assignment is a
 * nonmonotonic_poll. */
static void
test_checker_consumer_nonmonotonic(void **state)
{
    (void)state;
    History *h = history_make();
    assign(h, 100, MEMBER_A, 0);
    poll_at(h, 101, MEMBER_A, 0);
    poll_at(h, 102, MEMBER_A, 1);
    poll_at(h, 103, MEMBER_A, 2);
    poll_at(h, 104, MEMBER_A, 1);
    poll_at(h, 105, MEMBER_A, 2);
    Checked c = check_of(h);
    assert_only(&c, CONSUMER_NONMONOTONIC_POLL, 2);
    const ConsumerGroupResult *g = checker_consumer_find_group(c.check, "g");
    const ConsumerExample *e =
        &g_array_index(g->examples[CONSUMER_NONMONOTONIC_POLL], ConsumerExample, 0);
    assert_int_equal(e->offset, 1);
    assert_int_equal(e->offset_other, 2);
    assert_int_equal(e->time_other_ns, MS(103));
    checked_free(&c);
}

/* A new ASSIGN (restart, rebalance, seek) starts a new continuous
 * assignment: going back or jumping ahead with it is no anomaly; another
 * member's polls are another assignment. */
static void
test_checker_consumer_continuity_resets(void **state)
{
    (void)state;
    History *h = history_make();
    assign(h, 100, MEMBER_A, 0);
    poll_at(h, 101, MEMBER_A, 0);
    poll_at(h, 102, MEMBER_A, 1);
    poll_at(h, 103, MEMBER_A, 2);
    assign(h, 110, MEMBER_A, 1); /* restarted from the committed offset 1 */
    poll_at(h, 111, MEMBER_A, 1);
    assign(h, 120, MEMBER_A, 4); /* reassigned at 4 */
    poll_at(h, 121, MEMBER_A, 4);
    assign(h, 130, MEMBER_B, 0);
    poll_at(h, 131, MEMBER_B, 0); /* below A's offsets: another member */
    Checked c = check_of(h);
    assert_only(&c, CONSUMER_ANOMALY_COUNT, 0);
    checked_free(&c);
}

/* Offsets the committed log does not hold (a gap, or beyond the HW) are not
 * skipped. */
static void
test_checker_consumer_skip_needs_committed(void **state)
{
    (void)state;
    History *h = history_new();
    history_topic(h, "t");
    history_set_process_group(h, MEMBER_A, "g");
    HistoryReplica replica = {0};
    replica.broker = 1;
    replica.is_leader = TRUE;
    replica.online = TRUE;
    replica.leo = 8;
    replica.hw = 5;
    replica.records = g_array_new(FALSE, TRUE, sizeof(HistoryRecord));
    static const gint64 offsets[] = {0, 1, 4, 5, 6, 7};
    for (guint i = 0; i < G_N_ELEMENTS(offsets); i++) {
        HistoryRecord record = {offsets[i], value_at(offsets[i])};
        g_array_append_val(replica.records, record);
    }
    history_add_replica(h, &replica);
    assign(h, 100, MEMBER_A, 0);
    poll_at(h, 101, MEMBER_A, 0);
    poll_at(h, 102, MEMBER_A, 1);
    poll_at(h, 103, MEMBER_A, 4); /* 2 and 3 are not in the log */
    poll_at(h, 104, MEMBER_A, 7); /* 5 and 6 are above the HW */
    Checked c = check_of(h);
    assert_only(&c, CONSUMER_ANOMALY_COUNT, 0);
    checked_free(&c);
}

/* Examples stop at examples_max; counts do not. */
static void
test_checker_consumer_example_cap(void **state)
{
    (void)state;
    History *h = history_make();
    assign(h, 100, MEMBER_A, 0);
    for (gint64 o = 0; o < RECORDS; o++)
        poll_at(h, 101 + o, MEMBER_A, o);
    commit(h, 110, 111, MEMBER_A, RECORDS, HISTORY_OK);
    CheckerResult *producer = checker_run(h, NULL);
    CheckerOptions options;
    checker_options_init(&options);
    options.examples_max = 2;
    ConsumerCheck *check = checker_consumer_run(h, producer, &options);
    checker_consumer_check_invariants(check);
    const ConsumerGroupResult *g = checker_consumer_find_group(check, "g");
    assert_int_equal(g->counts.anomalies[CONSUMER_LOST_CONSUMPTION], RECORDS);
    assert_int_equal(g->examples[CONSUMER_LOST_CONSUMPTION]->len, 2);
    assert_string_equal(checker_consumer_anomaly_name(CONSUMER_POLL_SKIP), "poll_skip");
    checker_consumer_free(check);
    checker_result_free(producer);
    history_free(h);
}

/* history_groups: distinct, sorted. */
static void
test_checker_consumer_history_groups(void **state)
{
    (void)state;
    History *h = history_make();
    history_set_process_group(h, 50, "a");
    g_autoptr(GPtrArray) groups = history_groups(h);
    assert_int_equal(groups->len, 3);
    assert_string_equal(g_ptr_array_index(groups, 0), "a");
    assert_string_equal(g_ptr_array_index(groups, 1), "g");
    assert_string_equal(g_ptr_array_index(groups, 2), "h");
    assert_int_equal(history_process_group_bound(h), 51);
    assert_null(history_process_group(h, NO_GROUP));
    history_free(h);
}

/* ---- resets ---- */

#define RESET_RECORDS 10

typedef struct {
    const char *name;
    gboolean retention;   /* a leader's retention deleted offsets 0..4 before the reset */
    gint64 reset_to;      /* 5: earliest (the log start), 8: latest (the HW then) */
    guint64 poll_skip, lost, reset_skipped;
} ResetCase;

static const ResetCase reset_cases[] = {
    {"earliest after retention", TRUE, 5, 0, 0, 3},
    {"latest after retention: records in the log skipped too", TRUE, 8, 0, 0, 6},
    {"latest with no deletion recorded: judged as before", FALSE, 8, 1, 3, 0},
};

/* Ten records at offsets 0..9; member A reads 0 and 1, then its fetch at 2
 * is answered OFFSET_OUT_OF_RANGE (log start 5) and it resets to reset_to,
 * reads to the end and commits 10. The committed log starts at 5. */
static History *
reset_history(const ResetCase *c)
{
    History *h = history_new();
    history_topic(h, "t");
    history_set_process_name(h, MEMBER_A, "consumer-a");
    history_set_process_group(h, MEMBER_A, "g");
    for (gint64 i = 0; i < RESET_RECORDS; i++) {
        guint64 op = history_invoke(h, MS(i), HISTORY_FN_SEND, PRODUCER, 0, 0, 0, value_at(i));
        history_complete(h, op, MS(i) + 500000, HISTORY_OK, 0, i, 0);
    }
    assign(h, 100, MEMBER_A, 0);
    gint64 ms = consume(h, 101, MEMBER_A, 0, 2);
    if (c->retention) {
        HistoryEvent event = {0};
        event.time_ns = MS(ms);
        event.kind = HISTORY_EVENT_RETENTION;
        event.broker = 1;
        event.offset = 0;
        event.offset_end = 5;
        event.hw = RESET_RECORDS;
        event.isr = history_isr_intern(h, (const gint32[]){1}, 1);
        event.text = (char *)"broker 1's retention deleted segment 0";
        GArray *records = g_array_new(FALSE, FALSE, sizeof(HistoryRecord));
        for (gint64 i = 0; i < 5; i++) {
            HistoryRecord record = {i, value_at(i)};
            g_array_append_val(records, record);
        }
        history_event_with_records(h, &event, records);
    }
    guint64 reset = history_invoke(h, MS(ms + 1), HISTORY_FN_RESET, MEMBER_A, 0, 0, 5, 2);
    history_complete(h, reset, MS(ms + 1), HISTORY_OK, -1, c->reset_to, 1);
    ms = consume(h, ms + 2, MEMBER_A, c->reset_to, RESET_RECORDS);
    commit(h, ms, ms + 1, MEMBER_A, RESET_RECORDS, HISTORY_OK);
    HistoryReplica replica = {0};
    replica.broker = 1;
    replica.is_leader = TRUE;
    replica.online = TRUE;
    replica.log_start = 5;
    replica.leo = RESET_RECORDS;
    replica.hw = RESET_RECORDS;
    replica.records = g_array_new(FALSE, TRUE, sizeof(HistoryRecord));
    for (gint64 i = 5; i < RESET_RECORDS; i++) {
        HistoryRecord record = {i, value_at(i)};
        g_array_append_val(replica.records, record);
    }
    history_add_replica(h, &replica);
    return h;
}

static void
test_checker_consumer_reset_by_retention(void **state)
{
    /* Goal: a reset past what retention deleted is counted apart, not as a skip or a loss. */
    (void)state;
    for (guint i = 0; i < G_N_ELEMENTS(reset_cases); i++) {
        const ResetCase *rc = &reset_cases[i];
        Checked c = check_of(reset_history(rc));
        const ConsumerCounts *counts = group_g(&c);
        if (counts->anomalies[CONSUMER_POLL_SKIP] != rc->poll_skip ||
            counts->anomalies[CONSUMER_LOST_CONSUMPTION] != rc->lost ||
            counts->reset_skipped != rc->reset_skipped)
            fail_msg("%s: poll_skip %" G_GUINT64_FORMAT ", lost %" G_GUINT64_FORMAT
                     ", reset_skipped %" G_GUINT64_FORMAT,
                     rc->name, counts->anomalies[CONSUMER_POLL_SKIP],
                     counts->anomalies[CONSUMER_LOST_CONSUMPTION], counts->reset_skipped);
        assert_int_equal(counts->resets, 1);
        assert_int_equal(counts->anomalies[CONSUMER_NONMONOTONIC_POLL], 0);
        const ConsumerGroupResult *g = checker_consumer_find_group(c.check, "g");
        assert_int_equal(g->reset_examples->len, rc->retention ? 1 : 0);
        if (rc->retention) {
            const ConsumerExample *e = &g_array_index(g->reset_examples, ConsumerExample, 0);
            assert_int_equal(e->offset_other, 2);
            assert_int_equal(e->offset, rc->reset_to);
            assert_int_equal(e->value, 5);
            GPtrArray *chain = explain_consumer_reset(c.check, e);
            g_autoptr(GString) all = g_string_new(NULL);
            for (guint k = 0; k < chain->len; k++)
                g_string_append_printf(all, "%s | ", (char *)g_ptr_array_index(chain, k));
            assert_non_null(strstr(all->str, "retention deleted segment 0"));
            assert_non_null(strstr(all->str, "OFFSET_OUT_OF_RANGE"));
            assert_non_null(strstr(all->str, "skipped by the reset"));
            g_ptr_array_free(chain, TRUE);
        }
        checked_free(&c);
    }
}

static void
test_checker_consumer_reset_failure_counted(void **state)
{
    /* Goal: a FAILed reset (auto.offset.reset=none) counts as a reset failure, not a reset. */
    (void)state;
    History *h = history_make();
    assign(h, 100, MEMBER_A, 0);
    consume(h, 101, MEMBER_A, 0, 2);
    guint64 reset = history_invoke(h, MS(200), HISTORY_FN_RESET, MEMBER_A, 0, 0, 0, 2);
    history_complete(h, reset, MS(200), HISTORY_FAIL, -1, -1, 1);
    Checked c = check_of(h);
    assert_int_equal(group_g(&c)->reset_failures, 1);
    assert_int_equal(group_g(&c)->resets, 0);
    checked_free(&c);
}

/* A poll of a record the final log no longer holds at its offset (another
 * value there, or nothing: above the final HW) is a truncated_read. */
static void
test_checker_consumer_truncated_read(void **state)
{
    (void)state;
    History *h = history_make();
    assign(h, 100, MEMBER_A, 0);
    gint64 ms = consume(h, 101, MEMBER_A, 0, 2);
    guint64 gone = HISTORY_VALUE(PRODUCER, 99);
    history_record(h, MS(ms++), HISTORY_FN_POLL, MEMBER_A, 0, 0, 2, 0, gone);
    history_record(h, MS(ms++), HISTORY_FN_POLL, MEMBER_A, 0, 0, RECORDS + 1, 0,
                   HISTORY_VALUE(PRODUCER, 98));
    Checked c = check_of(h);
    const ConsumerCounts *counts = group_g(&c);
    assert_int_equal(counts->anomalies[CONSUMER_TRUNCATED_READ], 2);
    const ConsumerGroupResult *g = checker_consumer_find_group(c.check, "g");
    const ConsumerExample *e =
        &g_array_index(g->examples[CONSUMER_TRUNCATED_READ], ConsumerExample, 0);
    assert_int_equal(e->offset, 2);
    assert_true(e->value == gone);
    assert_non_null(strstr(e->summary, "no longer exists"));
    assert_string_equal(checker_consumer_anomaly_name(CONSUMER_TRUNCATED_READ), "truncated_read");
    checked_free(&c);
}

/* A RESET with LOG_TRUNCATION (KIP-320's move back) starts a new continuous
 * reading: polling the offsets again is not a nonmonotonic_poll. */
static void
test_checker_consumer_truncation_reset_restarts_reading(void **state)
{
    (void)state;
    History *h = history_make();
    assign(h, 100, MEMBER_A, 0);
    gint64 ms = consume(h, 101, MEMBER_A, 0, 4);
    guint64 op = history_invoke(h, MS(ms), HISTORY_FN_RESET, MEMBER_A, 0, 0, 2, 4);
    history_complete(h, op, MS(ms), HISTORY_OK, -1, 2, KAFKA_ERROR_CLIENT_LOG_TRUNCATION);
    ms = consume(h, ms + 1, MEMBER_A, 2, RECORDS);
    Checked c = check_of(h);
    const ConsumerCounts *counts = group_g(&c);
    assert_int_equal(counts->anomalies[CONSUMER_NONMONOTONIC_POLL], 0);
    assert_int_equal(counts->anomalies[CONSUMER_POLL_SKIP], 0);
    assert_int_equal(counts->resets, 1);
    checked_free(&c);

    /* Without the truncation error the same jump back is judged. */
    h = history_make();
    assign(h, 100, MEMBER_A, 0);
    ms = consume(h, 101, MEMBER_A, 0, 4);
    op = history_invoke(h, MS(ms), HISTORY_FN_RESET, MEMBER_A, 0, 0, 0, 4);
    history_complete(h, op, MS(ms), HISTORY_OK, -1, 2, KAFKA_ERROR_OFFSET_OUT_OF_RANGE);
    consume(h, ms + 1, MEMBER_A, 2, RECORDS);
    c = check_of(h);
    assert_int_equal(group_g(&c)->anomalies[CONSUMER_NONMONOTONIC_POLL], 2);
    checked_free(&c);
}

static void
revoke_at(History *h, gint64 ms, guint32 process, gint32 partition)
{
    history_record(h, MS(ms), HISTORY_FN_REVOKE, process, 0, partition, -1, 0, 0);
}

/* Rebalance pauses: a revoked partition waits from its REVOKE to the
 * group's next ASSIGN of it (by any member); a member left with no partition
 * is idle until its next ASSIGN; a pause still open at the end counts in
 * revocations only. */
static void
test_checker_consumer_rebalance_pauses(void **state)
{
    (void)state;
    History *h = history_make();
    /* A owns partitions 0 and 1, B nothing. */
    history_record(h, MS(100), HISTORY_FN_ASSIGN, MEMBER_A, 0, 0, 0, 0, 0);
    history_record(h, MS(100), HISTORY_FN_ASSIGN, MEMBER_A, 0, 1, 0, 0, 0);
    /* Partition 1 moves to B: paused 300 ms; A keeps 0 (not idle). */
    revoke_at(h, 200, MEMBER_A, 1);
    history_record(h, MS(500), HISTORY_FN_ASSIGN, MEMBER_B, 0, 1, 0, 0, 0);
    /* An eager rebalance: both revoke everything; A gets 0 again after
     * 1000 ms (idle 1000), B gets 1 again after 400 ms (idle 400). */
    revoke_at(h, 1000, MEMBER_A, 0);
    revoke_at(h, 1000, MEMBER_B, 1);
    history_record(h, MS(1400), HISTORY_FN_ASSIGN, MEMBER_B, 0, 1, 0, 0, 0);
    history_record(h, MS(2000), HISTORY_FN_ASSIGN, MEMBER_A, 0, 0, 0, 0, 0);
    /* A leaves at the end: open. */
    revoke_at(h, 3000, MEMBER_A, 0);
    Checked c = check_of(h);
    const ConsumerCounts *counts = group_g(&c);
    assert_int_equal(counts->revocations, 4);
    assert_int_equal(counts->pauses, 3);
    assert_int_equal(counts->pause_ns_total, MS(300) + MS(400) + MS(1000));
    assert_int_equal(counts->pause_ns_max, MS(1000));
    assert_int_equal(counts->member_idle_ns_total, MS(1000) + MS(400));
    assert_int_equal(counts->member_idle_ns_max, MS(1000));
    ConsumerCounts totals;
    checker_consumer_totals(c.check, &totals);
    assert_int_equal(totals.pause_ns_total, counts->pause_ns_total);
    checked_free(&c);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_checker_consumer_clean),
        cmocka_unit_test(test_checker_consumer_lost),
        cmocka_unit_test(test_checker_consumer_lost_bounds),
        cmocka_unit_test(test_checker_consumer_lost_from_start),
        cmocka_unit_test(test_checker_consumer_duplicate),
        cmocka_unit_test(test_checker_consumer_groups_apart),
        cmocka_unit_test(test_checker_consumer_poll_skip),
        cmocka_unit_test(test_checker_consumer_nonmonotonic),
        cmocka_unit_test(test_checker_consumer_continuity_resets),
        cmocka_unit_test(test_checker_consumer_skip_needs_committed),
        cmocka_unit_test(test_checker_consumer_example_cap),
        cmocka_unit_test(test_checker_consumer_history_groups),
        cmocka_unit_test(test_checker_consumer_reset_by_retention),
        cmocka_unit_test(test_checker_consumer_reset_failure_counted),
        cmocka_unit_test(test_checker_consumer_truncated_read),
        cmocka_unit_test(test_checker_consumer_truncation_reset_restarts_reading),
        cmocka_unit_test(test_checker_consumer_rebalance_pauses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
