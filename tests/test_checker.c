/*
 * Checker tests: each anomaly class and the outcome counts on hand-made
 * histories, the choice of the committed log, example caps, statistics
 * against exactly computed quantiles, availability and recovery, and
 * explanations — of a hand-made loss, and of the KIP-101 loss of a real
 * simulated cluster.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "checker.h"
#include "cluster_fixture.h"
#include "explain.h"
#include "history.h"
#include "isr_fixture.h"
#include "kafka_error.h"
#include "sim_world.h"

#define MS(x) ((gint64)(x)*G_GINT64_CONSTANT(1000000))
#define PROCESS 7
#define MAX_LOG 8

/* ---- hand-made histories ---- */

static History *
history_make(void)
{
    History *h = history_new();
    history_topic(h, "t");
    history_set_process_name(h, PROCESS, "producer");
    return h;
}

static guint64
send(History *h, gint64 time_ms, guint32 process, guint64 value)
{
    return history_invoke(h, MS(time_ms), HISTORY_FN_SEND, process, 0, 0, 0, value);
}

static void
answer(History *h, guint64 op, gint64 time_ms, HistoryType type, gint64 offset, gint32 error)
{
    history_complete(h, op, MS(time_ms), type, 0, offset, error);
}

/* A replica of t-0 whose record at offset i holds values[i]. */
static void
replica_add(History *h, gint32 broker, gboolean leader, gboolean online, gint64 hw,
            const guint64 *values, guint n)
{
    HistoryReplica replica = {0};
    replica.topic = 0;
    replica.partition = 0;
    replica.broker = broker;
    replica.is_leader = leader;
    replica.online = online;
    replica.leo = n;
    replica.hw = hw;
    replica.records = g_array_new(FALSE, TRUE, sizeof(HistoryRecord));
    for (guint i = 0; i < n; i++) {
        HistoryRecord record = {(gint64)i, values[i]};
        g_array_append_val(replica.records, record);
    }
    /* Every record from a leader of epoch 1. */
    replica.epochs = g_array_new(FALSE, FALSE, sizeof(HistoryEpochStart));
    HistoryEpochStart epoch = {0, 1};
    g_array_append_val(replica.epochs, epoch);
    history_add_replica(h, &replica);
}

static void
event_add(History *h, gint64 time_ms, HistoryEventKind kind, gint32 broker, gint32 partition,
          const char *text)
{
    HistoryEvent event = {0};
    event.time_ns = MS(time_ms);
    event.kind = kind;
    event.broker = broker;
    event.partition = partition;
    event.offset = -1;
    event.offset_end = -1;
    event.hw = -1;
    event.text = (char *)text;
    history_event(h, &event);
}

/* ---- anomaly classes, table-driven ---- */

typedef struct {
    guint64 value;
    HistoryType type; /* HISTORY_INVOKE: never completed */
    gint64 offset;
    gint32 error;
} SendCase;

typedef struct {
    gint32 broker;
    gboolean leader;
    gboolean online;
    gint64 hw;
    guint64 values[MAX_LOG];
    guint n;
} ReplicaCase;

typedef struct {
    const char *name;
    SendCase sends[MAX_LOG];
    guint n_sends;
    ReplicaCase replicas[3];
    guint n_replicas;
    guint64 anomalies[CHECKER_ANOMALY_COUNT]; /* lost, dup, nonmono, inconsistent, failed */
    guint64 unknown_committed, unknown_absent, failed_absent;
} AnomalyCase;

/* One case per block reads better than the formatter's layout. */
/* clang-format off */
#define OK_AT(v, o) {v, HISTORY_OK, o, 0}
#define INFO_OF(v) {v, HISTORY_INFO, -1, KAFKA_ERROR_REQUEST_TIMED_OUT}
#define LEADER(b, hw, n, ...) {b, TRUE, TRUE, hw, {__VA_ARGS__}, n}
#define FOLLOWER(b, online, hw, n, ...) {b, FALSE, online, hw, {__VA_ARGS__}, n}

static const AnomalyCase anomaly_cases[] = {
    {"clean",
     {OK_AT(1, 0), OK_AT(2, 1), OK_AT(3, 2), OK_AT(4, 3)},
     4,
     {LEADER(1, 4, 4, 1, 2, 3, 4), FOLLOWER(2, TRUE, 4, 4, 1, 2, 3, 4),
      FOLLOWER(3, TRUE, 3, 3, 1, 2, 3)},
     3,
     {0, 0, 0, 0, 0},
     0, 0, 0},
    {"lost: another value at the offset",
     {OK_AT(1, 0), OK_AT(2, 1), OK_AT(3, 2)},
     3,
     {LEADER(1, 3, 3, 1, 2, 9)},
     1,
     {1, 0, 0, 0, 0},
     0, 0, 0},
    {"lost: the record is above the HW",
     {OK_AT(1, 0), OK_AT(2, 1), OK_AT(3, 2)},
     3,
     {LEADER(1, 2, 3, 1, 2, 3)},
     1,
     {1, 0, 0, 0, 0},
     0, 0, 0},
    {"duplicate: one value at two offsets",
     {OK_AT(1, 0), OK_AT(2, 1), OK_AT(3, 2)},
     3,
     {LEADER(1, 4, 4, 1, 2, 3, 2)},
     1,
     {0, 1, 0, 0, 0},
     0, 0, 0},
    {"nonmonotonic: one record after a later one",
     {INFO_OF(1), INFO_OF(2), INFO_OF(3)},
     3,
     {LEADER(1, 3, 3, 2, 1, 3)},
     1,
     {0, 0, 1, 0, 0},
     3, 0, 0},
    {"nonmonotonic: the log reversed",
     {INFO_OF(1), INFO_OF(2), INFO_OF(3)},
     3,
     {LEADER(1, 3, 3, 3, 2, 1)},
     1,
     {0, 0, 2, 0, 0},
     3, 0, 0},
    {"inconsistent: an online replica differs below both HWs",
     {OK_AT(1, 0), OK_AT(2, 1), OK_AT(3, 2)},
     3,
     {LEADER(1, 3, 3, 1, 2, 3), FOLLOWER(2, TRUE, 3, 3, 1, 5, 3),
      FOLLOWER(3, FALSE, 3, 3, 1, 6, 3)},
     3,
     {0, 0, 0, 1, 0},
     0, 0, 0},
    {"consistent: differences above a HW or on an offline replica",
     {OK_AT(1, 0), OK_AT(2, 1), OK_AT(3, 2)},
     3,
     {LEADER(1, 3, 3, 1, 2, 3), FOLLOWER(2, TRUE, 1, 3, 1, 5, 7),
      FOLLOWER(3, FALSE, 3, 3, 1, 6, 3)},
     3,
     {0, 0, 0, 0, 0},
     0, 0, 0},
    {"inconsistent: acknowledged at one offset, committed at another",
     {OK_AT(1, 0), OK_AT(2, 5)},
     2,
     {LEADER(1, 2, 2, 1, 2)},
     1,
     {0, 0, 0, 1, 0},
     0, 0, 0},
    {"duplicate only: a retried batch, the client told the retry's offset",
     {OK_AT(1, 0), OK_AT(2, 2), OK_AT(3, 3)},
     3,
     {LEADER(1, 4, 4, 1, 2, 2, 3)},
     1,
     {0, 1, 0, 0, 0},
     0, 0, 0},
    {"duplicate and misplaced: no copy where the client was told",
     {OK_AT(1, 0), OK_AT(2, 5)},
     2,
     {LEADER(1, 3, 3, 1, 2, 2)},
     1,
     {0, 1, 0, 1, 0},
     0, 0, 0},
    {"outcomes: failed, unknown, pending and acks=0",
     {OK_AT(1, 0),
      {2, HISTORY_FAIL, -1, KAFKA_ERROR_NOT_LEADER_OR_FOLLOWER},
      {3, HISTORY_FAIL, -1, KAFKA_ERROR_NOT_ENOUGH_REPLICAS},
      INFO_OF(4),
      INFO_OF(5),
      {6, HISTORY_INVOKE, -1, 0},
      {7, HISTORY_INFO, -1, 0}},
     7,
     {LEADER(1, 3, 3, 1, 2, 4)},
     1,
     {1, 0, 0, 0, 1},
     1, 2, 1},
};

/* clang-format on */

static CheckerResult *
case_run(const AnomalyCase *c, History **history_out)
{
    History *h = history_make();
    for (guint i = 0; i < c->n_sends; i++) {
        const SendCase *s = &c->sends[i];
        guint64 op = send(h, 10 * i, PROCESS, s->value);
        if (s->type != HISTORY_INVOKE)
            answer(h, op, 10 * i + 5, s->type, s->offset, s->error);
    }
    for (guint i = 0; i < c->n_replicas; i++) {
        const ReplicaCase *r = &c->replicas[i];
        replica_add(h, r->broker, r->leader, r->online, r->hw, r->values, r->n);
    }
    *history_out = h;
    CheckerResult *result = checker_run(h, NULL);
    checker_result_check_invariants(result);
    return result;
}

static void
test_checker_anomaly_classes(void **state)
{
    /* Goal: each hand-made history yields exactly its known anomalies and counts. */
    (void)state;
    for (guint i = 0; i < G_N_ELEMENTS(anomaly_cases); i++) {
        const AnomalyCase *c = &anomaly_cases[i];
        History *h = NULL;
        CheckerResult *result = case_run(c, &h);
        const CheckerCounts *counts = checker_result_counts(result);
        for (guint a = 0; a < CHECKER_ANOMALY_COUNT; a++) {
            if (counts->anomalies[a] != c->anomalies[a])
                fail_msg("%s: %s = %" G_GUINT64_FORMAT ", expected %" G_GUINT64_FORMAT, c->name,
                         checker_anomaly_name(a), counts->anomalies[a], c->anomalies[a]);
            assert_int_equal(checker_result_examples(result, a)->len, c->anomalies[a]);
        }
        assert_int_equal(counts->attempted, c->n_sends);
        assert_int_equal(counts->unknown_committed, c->unknown_committed);
        assert_int_equal(counts->unknown_absent, c->unknown_absent);
        assert_int_equal(counts->failed_absent, c->failed_absent);
        checker_result_free(result);
        history_free(h);
    }
}

static void
test_checker_outcome_counts(void **state)
{
    /* Goal: acks=0 sends count as acked without offset, and pending as unknown. */
    (void)state;
    History *h = NULL;
    const AnomalyCase *c = &anomaly_cases[G_N_ELEMENTS(anomaly_cases) - 1];
    CheckerResult *result = case_run(c, &h);
    const CheckerCounts *counts = checker_result_counts(result);
    assert_int_equal(counts->acked, 2);
    assert_int_equal(counts->acked_without_offset, 1);
    assert_int_equal(counts->acked_committed, 1);
    assert_int_equal(counts->failed, 2);
    assert_int_equal(counts->unknown, 3);
    assert_int_equal(counts->pending, 1);
    assert_int_equal(counts->committed, 3);
    const CheckerExample *lost =
        &g_array_index(checker_result_examples(result, CHECKER_LOST_WRITE), CheckerExample, 0);
    assert_int_equal(lost->value, 7);
    assert_int_equal(lost->offset, -1);
    assert_non_null(strstr(lost->summary, "acks=0"));
    const CheckerExample *failed = &g_array_index(
        checker_result_examples(result, CHECKER_FAILED_BUT_PRESENT), CheckerExample, 0);
    assert_int_equal(failed->value, 2);
    assert_int_equal(failed->offset, 1);
    assert_non_null(strstr(failed->summary, "NOT_LEADER_OR_FOLLOWER"));
    checker_result_free(result);
    history_free(h);
}

static void
test_checker_example_fields(void **state)
{
    /* Goal: examples name the right values, offsets and brokers. */
    (void)state;
    History *h = NULL;
    CheckerResult *result = case_run(&anomaly_cases[3], &h); /* duplicate */
    const CheckerExample *dup =
        &g_array_index(checker_result_examples(result, CHECKER_DUPLICATE), CheckerExample, 0);
    assert_int_equal(dup->value, 2);
    assert_int_equal(dup->offset, 1);
    assert_int_equal(dup->offset_other, 3);
    checker_result_free(result);
    history_free(h);

    result = case_run(&anomaly_cases[4], &h); /* log 2, 1, 3 */
    const CheckerExample *order = &g_array_index(
        checker_result_examples(result, CHECKER_NONMONOTONIC_SEND), CheckerExample, 0);
    assert_int_equal(order->value, 1);
    assert_int_equal(order->offset, 1);
    assert_int_equal(order->value_other, 2);
    assert_int_equal(order->offset_other, 0);
    assert_true(order->op < order->op_other);
    checker_result_free(result);
    history_free(h);

    result = case_run(&anomaly_cases[6], &h); /* follower 2 holds 5 at offset 1 */
    const CheckerExample *diverged = &g_array_index(
        checker_result_examples(result, CHECKER_INCONSISTENT_OFFSETS), CheckerExample, 0);
    assert_int_equal(diverged->broker, 2);
    assert_int_equal(diverged->offset, 1);
    assert_int_equal(diverged->value, 2);
    assert_int_equal(diverged->value_other, 5);
    checker_result_free(result);
    history_free(h);
}

static void
test_checker_nonmonotonic_per_producer(void **state)
{
    /* Goal: records of different producers never count as reordered. */
    (void)state;
    History *h = history_make();
    guint64 a = send(h, 0, 1, 10);
    guint64 b = send(h, 1, 2, 20);
    answer(h, a, 5, HISTORY_OK, 1, 0);
    answer(h, b, 6, HISTORY_OK, 0, 0);
    const guint64 log[] = {20, 10};
    replica_add(h, 1, TRUE, TRUE, 2, log, 2);
    g_autoptr(CheckerResult) result = checker_run(h, NULL);
    assert_int_equal(checker_result_counts(result)->anomalies[CHECKER_NONMONOTONIC_SEND], 0);
    assert_int_equal(checker_result_counts(result)->anomalies[CHECKER_INCONSISTENT_OFFSETS], 0);
    checker_result_free(g_steal_pointer(&result));
    history_free(h);
}

/* ---- the committed log ---- */

typedef struct {
    const char *name;
    ReplicaCase replicas[3];
    gint32 broker;
    gboolean offline;
} ChoiceCase;

/* clang-format off */
static const ChoiceCase choice_cases[] = {
    {"the online leader, even with a lower HW",
     {FOLLOWER(1, TRUE, 3, 3, 1, 2, 3), LEADER(2, 2, 3, 1, 2, 3), FOLLOWER(3, TRUE, 3, 3, 1, 2, 3)},
     2,
     FALSE},
    {"without an online leader, the online replica with the highest HW",
     {{1, TRUE, FALSE, 3, {1, 2, 3}, 3}, FOLLOWER(2, TRUE, 1, 3, 1, 2, 3),
      FOLLOWER(3, TRUE, 2, 3, 1, 2, 3)},
     3,
     FALSE},
    {"two online leaders: the one with the higher HW",
     {LEADER(1, 1, 3, 1, 2, 3), LEADER(2, 3, 3, 1, 2, 3), FOLLOWER(3, TRUE, 3, 3, 1, 2, 3)},
     2,
     FALSE},
    {"nobody online: the offline replica with the highest HW",
     {FOLLOWER(1, FALSE, 1, 3, 1, 2, 3), FOLLOWER(2, FALSE, 2, 3, 1, 2, 3),
      {3, TRUE, FALSE, 2, {1, 2, 3}, 3}},
     2,
     TRUE},
};

/* clang-format on */

static void
test_checker_committed_log_choice(void **state)
{
    /* Goal: the committed log comes from the replica the header promises. */
    (void)state;
    for (guint i = 0; i < G_N_ELEMENTS(choice_cases); i++) {
        const ChoiceCase *c = &choice_cases[i];
        History *h = history_make();
        for (guint r = 0; r < 3; r++) {
            const ReplicaCase *rc = &c->replicas[r];
            replica_add(h, rc->broker, rc->leader, rc->online, rc->hw, rc->values, rc->n);
        }
        CheckerResult *result = checker_run(h, NULL);
        const CheckerPartition *p = checker_result_partition(result, 0, 0);
        assert_non_null(p);
        if (p->broker != c->broker)
            fail_msg("%s: broker %d, expected %d", c->name, p->broker, c->broker);
        assert_int_equal(p->offline, c->offline);
        assert_int_equal(checker_result_counts(result)->partitions_offline, c->offline);
        assert_int_equal(p->records_committed, (guint)p->hw);
        assert_null(checker_result_partition(result, 0, 1));
        assert_null(checker_partition_record_at(p, p->hw));
        assert_int_equal(checker_partition_record_at(p, 0)->value, 1);
        checker_result_free(result);
        history_free(h);
    }
}

static void
test_checker_examples_capped(void **state)
{
    /* Goal: every anomaly is counted but only examples_max examples are kept. */
    (void)state;
    History *h = history_make();
    for (guint i = 0; i < 20; i++) {
        guint64 op = send(h, i, PROCESS, 100 + i);
        answer(h, op, i, HISTORY_OK, i, 0);
    }
    replica_add(h, 1, TRUE, TRUE, 0, NULL, 0);
    for (guint i = 0; i < 9; i++)
        event_add(h, 30 + i, HISTORY_EVENT_VIOLATION, 1, 0, "two leaders in epoch 3");
    CheckerOptions options;
    checker_options_init(&options);
    options.examples_max = 3;
    CheckerResult *result = checker_run(h, &options);
    checker_result_check_invariants(result);
    assert_int_equal(checker_result_counts(result)->anomalies[CHECKER_LOST_WRITE], 20);
    assert_int_equal(checker_result_examples(result, CHECKER_LOST_WRITE)->len, 3);
    assert_int_equal(checker_result_counts(result)->invariant_violations, 9);
    assert_int_equal(checker_result_violations(result)->len, 3);
    assert_string_equal(g_ptr_array_index(checker_result_violations(result), 0),
                        "two leaders in epoch 3");
    checker_result_free(result);
    history_free(h);
}

/* ---- statistics ---- */

static int
compare_gint64(gconstpointer a, gconstpointer b)
{
    gint64 x = *(const gint64 *)a, y = *(const gint64 *)b;
    return (x > y) - (x < y);
}

/* The value of rank max(1, round(q * n)) among `sorted`. */
static gint64
exact_quantile(const GArray *sorted, double q)
{
    gint64 rank = (gint64)(q * sorted->len + 0.5);
    rank = CLAMP(rank, 1, (gint64)sorted->len);
    return g_array_index(sorted, gint64, rank - 1);
}

static void
test_checker_latency_quantiles(void **state)
{
    /* Goal: latency quantiles match exactly computed ones within the
     * histogram's relative error, separately for acked and failed sends. */
    (void)state;
    static const double qs[] = {0.5, 0.9, 0.99, 0.999, 1.0};
    History *h = history_make();
    g_autoptr(GRand) rand = g_rand_new_with_seed(42);
    g_autoptr(GArray) exact = g_array_new(FALSE, FALSE, sizeof(gint64));
    gint64 now = 0;
    for (guint i = 0; i < 5000; i++) {
        gint64 latency = g_rand_int_range(rand, 1, 2000) * G_GINT64_CONSTANT(1000) +
                         (i % 100 == 0 ? MS(300) : 0);
        guint64 op = history_invoke(h, now, HISTORY_FN_SEND, PROCESS, 0, 0, 0, i + 1);
        history_complete(h, op, now + latency, i % 10 == 9 ? HISTORY_FAIL : HISTORY_OK, 0,
                         i % 10 == 9 ? -1 : (gint64)i, 0);
        now += latency;
        if (i % 10 != 9)
            g_array_append_val(exact, latency);
    }
    g_array_sort(exact, compare_gint64);
    g_autoptr(CheckerResult) result = checker_run(h, NULL);
    const StatsHistogram *acked = checker_result_latency(result, CHECKER_LATENCY_ACKED);
    assert_int_equal(stats_histogram_count(acked), exact->len);
    assert_int_equal(stats_histogram_count(checker_result_latency(result, CHECKER_LATENCY_FAILED)),
                     500);
    for (guint i = 0; i < G_N_ELEMENTS(qs); i++) {
        gint64 want = exact_quantile(exact, qs[i]);
        gint64 got = stats_histogram_quantile(acked, qs[i]);
        if (got < want || (double)got > (double)want * (1.0 + 1.0 / 1024))
            fail_msg("q %g: got %" G_GINT64_FORMAT ", exact %" G_GINT64_FORMAT, qs[i], got, want);
    }
    assert_int_equal(stats_histogram_max(acked), g_array_index(exact, gint64, exact->len - 1));
    checker_result_free(g_steal_pointer(&result));
    history_free(h);
}

/* Ten 1 s windows: acked sends in 0-2 and 6-9; in 3-5 one send is
 * outstanding and times out; the heal is at 6.2 s, and the first send
 * invoked after it is acked at 6.9 s. */
static History *
outage_history(void)
{
    History *h = history_make();
    guint64 value = 1;
    for (gint64 s = 0; s < 3; s++) {
        guint64 op = send(h, s * 1000 + 100, PROCESS, value);
        answer(h, op, s * 1000 + 110, HISTORY_OK, (gint64)value - 1, 0);
        value++;
    }
    guint64 stuck = send(h, 3100, PROCESS, value++);
    answer(h, stuck, 5900, HISTORY_INFO, -1, KAFKA_ERROR_REQUEST_TIMED_OUT);
    event_add(h, 6200, HISTORY_EVENT_FAULT, -1, -1, "the network partition was healed");
    guint64 late = send(h, 6100, PROCESS, value++);
    answer(h, late, 6700, HISTORY_OK, 3, 0);
    for (gint64 s = 6; s < 10; s++) {
        guint64 op = send(h, s * 1000 + 800, PROCESS, value);
        answer(h, op, s * 1000 + 900, HISTORY_OK, (gint64)value - 2, 0);
        value++;
    }
    return h;
}

static void
test_checker_availability_and_recovery(void **state)
{
    /* Goal: availability counts windows with an outstanding send, recovery
     * runs from the heal (given or found) to the first acked later send. */
    (void)state;
    History *h = outage_history();
    CheckerOptions options;
    checker_options_init(&options);
    options.last_heal_ns = MS(6200);
    CheckerResult *result = checker_run(h, &options);
    const CheckerStats *stats = checker_result_stats(result);
    assert_int_equal(stats->windows_attempted, 10);
    assert_int_equal(stats->windows_available, 7);
    assert_true(stats->availability > 0.69 && stats->availability < 0.71);
    assert_int_equal(stats->recovery_ns, MS(6900) - MS(6200));
    const StatsSeries *throughput = checker_result_throughput(result);
    assert_int_equal(stats_series_window_count(throughput), 10);
    assert_int_equal(stats_series_count(throughput, 6), 2);
    assert_int_equal(stats_series_count(throughput, 4), 0);
    checker_result_free(result);

    result = checker_run(h, NULL);
    assert_int_equal(checker_result_stats(result)->last_heal_ns, MS(6200));
    assert_int_equal(checker_result_stats(result)->recovery_ns, MS(700));
    checker_result_free(result);

    options.last_heal_ns = CHECKER_HEAL_NONE;
    result = checker_run(h, &options);
    assert_int_equal(checker_result_stats(result)->recovery_ns, -1);
    checker_result_free(result);
    history_free(h);
}

/* ---- explanations ---- */

static void
ack_add(History *h, gint64 time_ms, gint32 broker, gint32 epoch, gint64 base, gint64 end, gint64 hw,
        guint32 isr_mask, gint32 acks)
{
    HistoryEvent event = {0};
    event.time_ns = MS(time_ms);
    event.kind = HISTORY_EVENT_ACK;
    event.broker = broker;
    event.leader_epoch = epoch;
    event.offset = base;
    event.offset_end = end;
    event.hw = hw;
    event.isr = isr_of_mask(h, isr_mask);
    event.acks = acks;
    history_event(h, &event);
}

static void
offsets_event_add(History *h, gint64 time_ms, HistoryEventKind kind, gint32 broker, gint64 offset,
                  gint64 offset_end, const char *text)
{
    HistoryEvent event = {0};
    event.time_ns = MS(time_ms);
    event.kind = kind;
    event.broker = broker;
    event.partition = 0;
    event.offset = offset;
    event.offset_end = offset_end;
    event.leader_epoch = 2;
    event.text = (char *)text;
    history_event(h, &event);
}

static gboolean
chain_mentions(const GPtrArray *chain, const char *needle)
{
    for (guint i = 0; i < chain->len; i++) {
        if (strstr(g_ptr_array_index(chain, i), needle) != NULL)
            return TRUE;
    }
    return FALSE;
}

static void
assert_mentions(const GPtrArray *chain, const char *needle)
{
    if (chain_mentions(chain, needle))
        return;
    GString *all = g_string_new(NULL);
    for (guint i = 0; i < chain->len; i++)
        g_string_append_printf(all, "  %s\n", (char *)g_ptr_array_index(chain, i));
    fail_msg("no \"%s\" in:\n%s", needle, all->str);
}

static void
test_checker_explains_handmade_loss(void **state)
{
    /* Goal: a loss is told as ack, crash, election without the record,
     * truncation, final log — leaving out other brokers and later events. */
    (void)state;
    History *h = history_make();
    guint64 a = send(h, 0, PROCESS, 11);
    guint64 b = send(h, 1, PROCESS, 12);
    ack_add(h, 2, 1, 1, 0, 2, 1, 0xe, 1);
    answer(h, a, 3, HISTORY_OK, 0, 0);
    answer(h, b, 3, HISTORY_OK, 1, 0);
    event_add(h, 10, HISTORY_EVENT_NODE, 9, -1, "broker 9 crashed");
    event_add(h, 20, HISTORY_EVENT_NODE, 1, -1, "broker 1 crashed");
    /* The follower truncates when told of the new leader, which can be
     * before the leader records its election: the chain must go on to it. */
    offsets_event_add(h, 30, HISTORY_EVENT_TRUNCATED, 3, 1, 2,
                      "broker 3 truncated t-0 from LEO 2 to 1 (becoming follower)");
    offsets_event_add(h, 40, HISTORY_EVENT_ELECTED, 2, 1, -1,
                      "broker 2 became leader of t-0 in epoch 2 with LEO 1 and HW 1");
    event_add(h, 50, HISTORY_EVENT_NODE, 1, -1, "broker 1 restarted after the end");
    const guint64 leader_log[] = {11, 21};
    replica_add(h, 2, TRUE, TRUE, 2, leader_log, 2);
    CheckerResult *result = checker_run(h, NULL);
    assert_int_equal(checker_result_counts(result)->anomalies[CHECKER_LOST_WRITE], 1);
    Explainer *explainer = explain_new(result);
    explain_check_invariants(explainer);
    const CheckerExample *lost =
        &g_array_index(checker_result_examples(result, CHECKER_LOST_WRITE), CheckerExample, 0);
    /* A chain walks the partition's milestones (truncation, election), not
     * its acknowledgements. */
    const GArray *milestones =
        explain_partition_milestones(explainer, lost->topic, lost->partition);
    assert_non_null(milestones);
    assert_int_equal(milestones->len, 2);
    assert_int_equal(explain_partition_events(explainer, lost->topic, lost->partition)->len, 3);
    GPtrArray *chain = explain_example(explainer, lost);
    assert_mentions(chain, "producer sent value 12 to t-0");
    assert_mentions(chain, "broker 1, leader of t-0 in epoch 1, acknowledged offsets 0..1 "
                           "(acks=1) while its HW was 1 and its ISR [1,2,3]");
    assert_mentions(chain, "the HW had not reached the offset");
    assert_mentions(chain, "broker 1 crashed");
    assert_mentions(chain, "did not have the record");
    assert_mentions(chain, "removing offset 1");
    assert_mentions(chain, "holds value 21 (sent by no recorded client, epoch 1) at offset 1");
    assert_false(chain_mentions(chain, "broker 9"));
    assert_false(chain_mentions(chain, "after the end"));
    g_ptr_array_free(chain, TRUE);
    explain_free(explainer);
    checker_result_free(result);
    history_free(h);
}

static void
test_checker_explains_every_anomaly(void **state)
{
    /* Goal: every example of every class gets a non-empty chain naming its value. */
    (void)state;
    for (guint i = 0; i < G_N_ELEMENTS(anomaly_cases); i++) {
        History *h = NULL;
        CheckerResult *result = case_run(&anomaly_cases[i], &h);
        Explainer *explainer = explain_new(result);
        for (guint a = 0; a < CHECKER_ANOMALY_COUNT; a++) {
            const GArray *examples = checker_result_examples(result, a);
            for (guint e = 0; e < examples->len; e++) {
                const CheckerExample *example = &g_array_index(examples, CheckerExample, e);
                GPtrArray *chain = explain_example(explainer, example);
                assert_true(chain->len >= 2);
                g_autofree char *value =
                    g_strdup_printf("value %" G_GUINT64_FORMAT, example->value);
                assert_mentions(chain, value);
                g_ptr_array_free(chain, TRUE);
            }
        }
        explain_free(explainer);
        checker_result_free(result);
        history_free(h);
    }
}

/* ---- a real cluster: KIP-101's loss (as tests/test_cluster.c) ---- */

/* The fixture's fast cluster, but a follower stays in the ISR for 30 s, so
 * that a restarted follower is still in it when the leader fails. */
static Fixture *
kip101_fixture_new(BrokerTruncationMode mode)
{
    ClusterConfig config;
    fixture_config_fast(&config);
    config.broker.replica_lag_time_max_ms = 30000;
    config.broker.truncation_mode = mode;
    return fixture_new(11, &config, 1, -1, NULL);
}

/* As in tests/test_cluster.c: the leader's HW covers the second record. */
static gboolean
leader_acked_second(Fixture *f, gint32 leader)
{
    BrokerPartitionInfo info;
    broker_partition_info(cluster_broker(f->cluster, leader), "t", 0, &info);
    return info.hw == 2 && driver_acked(f->driver) == 2;
}

static gboolean
follows(Fixture *f, gint32 leader, gint32 follower)
{
    BrokerPartitionInfo info, lead;
    broker_partition_info(cluster_broker(f->cluster, follower), "t", 0, &info);
    broker_partition_info(cluster_broker(f->cluster, leader), "t", 0, &lead);
    return info.present && lead.present && lead.is_leader && info.leader == leader &&
           info.leader_epoch == lead.leader_epoch;
}

/* Crashes or restarts a broker and records it, as the scenario runner does. */
static void
node_event(Fixture *f, gint32 broker, gboolean crash)
{
    SimNodeId node = broker_node(cluster_broker(f->cluster, broker));
    if (crash)
        sim_node_crash(f->world, node);
    else
        sim_node_restart(f->world, node);
    g_autofree char *text =
        g_strdup_printf("broker %d %s", broker, crash ? "crashed" : "restarted");
    HistoryEvent event = {0};
    event.time_ns = sim_now_ns(f->world);
    event.kind = HISTORY_EVENT_NODE;
    event.broker = broker;
    event.partition = -1;
    event.text = text;
    history_event(f->history, &event);
}

/* The leader A acknowledges a record its followers hold without knowing the
 * HW; A crashes; X is elected, Y truncates on following X (hw mode); X
 * crashes; Y is elected without the record. Returns the leaders. */
static Fixture *
kip101_run(BrokerTruncationMode mode, gint32 *a_out, gint32 *y_out)
{
    Fixture *f = kip101_fixture_new(mode);
    gint32 a = cluster_leader(f->cluster, "t", 0);
    driver_produce(f->driver, "t", 0, 1, 1);
    run_for(f, 2 * SIM_NS_PER_S);
    driver_produce(f->driver, "t", 0, 1, 1);
    gint64 deadline = sim_now_ns(f->world) + SIM_NS_PER_S;
    while (!leader_acked_second(f, a) && sim_now_ns(f->world) < deadline)
        assert_true(sim_world_step(f->world));
    assert_true(leader_acked_second(f, a));
    node_event(f, a, TRUE);
    gint32 x = -1, y = -1;
    const GArray *replicas = cluster_replicas(f->cluster, "t", 0);
    for (guint i = 0; i < replicas->len; i++) {
        gint32 id = g_array_index(replicas, gint32, i);
        if (id != a && x < 0)
            x = id;
        else if (id != a)
            y = id;
    }
    deadline = sim_now_ns(f->world) + 30 * SIM_NS_PER_S;
    while (!follows(f, x, y) && sim_now_ns(f->world) < deadline)
        assert_true(sim_world_step(f->world));
    node_event(f, x, TRUE);
    run_for(f, 20 * SIM_NS_PER_S);
    node_event(f, a, FALSE);
    node_event(f, x, FALSE);
    run_for(f, 20 * SIM_NS_PER_S);
    cluster_record_final_state(f->cluster);
    *a_out = a;
    *y_out = y;
    return f;
}

static void
test_checker_explains_kip101_loss(void **state)
{
    /* Goal: the real two-failure loss in hw mode is found and explained by
     * its acknowledging leader, its crash, the election and the truncation. */
    (void)state;
    gint32 a, y;
    Fixture *f = kip101_run(BROKER_TRUNCATE_HW, &a, &y);
    CheckerResult *result = checker_run(f->history, NULL);
    checker_result_check_invariants(result);
    const CheckerCounts *counts = checker_result_counts(result);
    assert_int_equal(counts->acked, 2);
    assert_int_equal(counts->anomalies[CHECKER_LOST_WRITE], 1);
    Explainer *explainer = explain_new(result);
    explain_check_invariants(explainer);
    const CheckerExample *lost =
        &g_array_index(checker_result_examples(result, CHECKER_LOST_WRITE), CheckerExample, 0);
    assert_int_equal(lost->offset, 1);
    GPtrArray *chain = explain_example(explainer, lost);
    g_autofree char *acked = g_strdup_printf("broker %d, leader of t-0", a);
    g_autofree char *crashed = g_strdup_printf("broker %d crashed", a);
    g_autofree char *elected = g_strdup_printf("broker %d became leader of t-0", y);
    g_autofree char *truncated = g_strdup_printf("broker %d truncated t-0 from LEO 2 to 1", y);
    assert_mentions(chain, acked);
    assert_mentions(chain, "acknowledged offset 1 (acks=all)");
    assert_mentions(chain, crashed);
    assert_mentions(chain, truncated);
    assert_mentions(chain, elected);
    assert_mentions(chain, "did not have the record");
    assert_mentions(chain, "At the end, the committed log of t-0");
    g_ptr_array_free(chain, TRUE);
    explain_free(explainer);
    checker_result_free(result);
    fixture_free(f);
}

static void
test_checker_kip101_leader_epoch_clean(void **state)
{
    /* Goal: the same faults in leader-epoch mode leave no anomaly. */
    (void)state;
    gint32 a, y;
    Fixture *f = kip101_run(BROKER_TRUNCATE_LEADER_EPOCH, &a, &y);
    CheckerResult *result = checker_run(f->history, NULL);
    checker_result_check_invariants(result);
    const CheckerCounts *counts = checker_result_counts(result);
    for (guint i = 0; i < CHECKER_ANOMALY_COUNT; i++)
        assert_int_equal(counts->anomalies[i], 0);
    assert_int_equal(counts->acked, 2);
    assert_int_equal(counts->acked_committed, 2);
    checker_result_free(result);
    fixture_free(f);
}

/* ---- partitions no one leads at the end ---- */

typedef struct {
    AnomalyCase history; /* only its sends and replicas are read */
    guint64 lost, leaderless;
} LeaderlessCase;

/* clang-format off */
static const LeaderlessCase leaderless_cases[] = {
    {{"no leader: the followers hold the last record above their HW",
      {OK_AT(1, 0), OK_AT(2, 1), OK_AT(3, 2)}, 3,
      {FOLLOWER(2, TRUE, 2, 3, 1, 2, 3), FOLLOWER(3, TRUE, 2, 3, 1, 2, 3)}, 2,
      {0}, 0, 0, 0},
     0, 1},
    {{"a leader: above its HW is lost",
      {OK_AT(1, 0), OK_AT(2, 1), OK_AT(3, 2)}, 3,
      {LEADER(2, 2, 3, 1, 2, 3), FOLLOWER(3, TRUE, 2, 3, 1, 2, 3)}, 2,
      {0}, 0, 0, 0},
     1, 0},
    {{"no leader: no replica holds it",
      {OK_AT(1, 0), OK_AT(2, 1), OK_AT(3, 2)}, 3,
      {FOLLOWER(2, TRUE, 2, 2, 1, 2), FOLLOWER(3, TRUE, 1, 2, 1, 2)}, 2,
      {0}, 0, 0, 0},
     1, 0},
    {{"no leader: the committed log holds another value there",
      {OK_AT(1, 0), OK_AT(2, 1), OK_AT(3, 2)}, 3,
      {FOLLOWER(2, TRUE, 3, 3, 1, 2, 9), FOLLOWER(3, FALSE, 2, 3, 1, 2, 3)}, 2,
      {0}, 0, 0, 0},
     1, 0},
    {{"offline: the disk holds it above its HW",
      {OK_AT(1, 0), OK_AT(2, 1), OK_AT(3, 2)}, 3,
      {FOLLOWER(1, FALSE, 2, 3, 1, 2, 3)}, 1,
      {0}, 0, 0, 0},
     0, 1},
};
/* clang-format on */

static void
test_checker_leaderless_undecided(void **state)
{
    /* Goal: an acked record above the committed log's HW of a partition no online replica
     * leads, held by one of its replicas, is leaderless, not lost; a leader's log, a record no
     * replica holds, or one the committed log contradicts below its HW stays lost. */
    (void)state;
    for (guint i = 0; i < G_N_ELEMENTS(leaderless_cases); i++) {
        const LeaderlessCase *c = &leaderless_cases[i];
        History *h = NULL;
        CheckerResult *result = case_run(&c->history, &h);
        const CheckerCounts *counts = checker_result_counts(result);
        if (counts->anomalies[CHECKER_LOST_WRITE] != c->lost || counts->leaderless != c->leaderless)
            fail_msg("%s: lost %" G_GUINT64_FORMAT ", leaderless %" G_GUINT64_FORMAT,
                     c->history.name, counts->anomalies[CHECKER_LOST_WRITE], counts->leaderless);
        assert_int_equal(counts->acked_committed, 2);
        checker_result_free(result);
        history_free(h);
    }
}

/* ---- records retention deleted ---- */

typedef struct {
    const char *name;
    gint32 deleter;       /* broker whose retention deleted offsets 0..1 */
    gboolean deleter_led; /* it led the partition then */
    guint64 deleted[2];   /* the values the deleted segment held at 0 and 1 */
    gint64 log_start;     /* the committed log's (broker 1) start: 2, or 0 to cover them */
    guint64 expired, lost;
} ExpiryCase;

static const ExpiryCase expiry_cases[] = {
    {"the committed log's own deletion", 1, TRUE, {1, 2}, 2, 2, 0},
    {"the leader of the time, another broker", 2, TRUE, {1, 2}, 2, 2, 0},
    {"a follower's deletion proves nothing", 2, FALSE, {1, 2}, 2, 0, 2},
    {"truncated before: not in the deleted segment", 1, TRUE, {8, 9}, 2, 0, 2},
    {"one held, one truncated before", 1, TRUE, {1, 9}, 2, 1, 1},
    {"the committed log still covers the offsets", 2, TRUE, {1, 2}, 0, 0, 2},
};

/* Sends 1, 2 (offsets 0, 1) and 3 (offset 2); the committed log (broker 1)
 * holds 3 at offset 2 (and, starting at 0, other values at 0 and 1). */
static History *
expiry_history(const ExpiryCase *c)
{
    History *h = history_make();
    for (guint64 v = 1; v <= 3; v++)
        answer(h, send(h, (gint64)v, PROCESS, v), (gint64)v + 1, HISTORY_OK, (gint64)v - 1, 0);
    HistoryEvent event = {0};
    event.time_ns = MS(50);
    event.kind = HISTORY_EVENT_RETENTION;
    event.broker = c->deleter;
    event.partition = 0;
    event.offset = 0;
    event.offset_end = 2;
    event.hw = 3;
    event.isr = c->deleter_led ? isr_of_mask(h, 0x6) : 0;
    event.text = (char *)"retention deleted segment 0";
    GArray *records = g_array_new(FALSE, FALSE, sizeof(HistoryRecord));
    for (guint i = 0; i < 2; i++) {
        HistoryRecord record = {(gint64)i, c->deleted[i]};
        g_array_append_val(records, record);
    }
    history_event_with_records(h, &event, records);
    HistoryReplica replica = {0};
    replica.broker = 1;
    replica.is_leader = TRUE;
    replica.online = TRUE;
    replica.log_start = c->log_start;
    replica.leo = 3;
    replica.hw = 3;
    replica.records = g_array_new(FALSE, FALSE, sizeof(HistoryRecord));
    for (gint64 offset = c->log_start; offset < 3; offset++) {
        HistoryRecord record = {offset, offset == 2 ? 3 : 70 + (guint64)offset};
        g_array_append_val(replica.records, record);
    }
    history_add_replica(h, &replica);
    return h;
}

static void
test_checker_expired_by_retention(void **state)
{
    /* Goal: only a qualifying deletion that held the value, below the committed log's start,
     * expires it. */
    (void)state;
    for (guint i = 0; i < G_N_ELEMENTS(expiry_cases); i++) {
        const ExpiryCase *c = &expiry_cases[i];
        History *h = expiry_history(c);
        CheckerResult *result = checker_run(h, NULL);
        checker_result_check_invariants(result);
        const CheckerCounts *counts = checker_result_counts(result);
        if (counts->expired != c->expired || counts->anomalies[CHECKER_LOST_WRITE] != c->lost)
            fail_msg("%s: expired %" G_GUINT64_FORMAT ", lost %" G_GUINT64_FORMAT, c->name,
                     counts->expired, counts->anomalies[CHECKER_LOST_WRITE]);
        assert_int_equal(counts->acked_committed, 1);
        assert_int_equal(checker_result_expired_examples(result)->len, c->expired);
        checker_result_free(result);
        history_free(h);
    }
}

static void
test_checker_explains_expiry(void **state)
{
    /* Goal: an expired record's explanation names the deletion, its broker and the log start. */
    (void)state;
    History *h = expiry_history(&expiry_cases[1]);
    CheckerResult *result = checker_run(h, NULL);
    const CheckerExample *example =
        &g_array_index(checker_result_expired_examples(result), CheckerExample, 0);
    assert_int_equal(example->broker, 2);
    assert_int_equal(example->offset, 0);
    assert_int_equal(example->offset_other, 2);
    Explainer *explainer = explain_new(result);
    GPtrArray *chain = explain_expired(explainer, example);
    assert_mentions(chain, "retention deleted segment 0 — removing offset 0, which held value 1");
    assert_mentions(chain, "starts at offset 2");
    assert_mentions(chain, "expired, not lost");
    g_ptr_array_free(chain, TRUE);
    explain_free(explainer);
    checker_result_free(result);
    history_free(h);

    /* A record truncated before retention deleted its offset stays lost; its
     * chain tells the deletion too. */
    h = expiry_history(&expiry_cases[3]);
    result = checker_run(h, NULL);
    explainer = explain_new(result);
    const CheckerExample *lost =
        &g_array_index(checker_result_examples(result, CHECKER_LOST_WRITE), CheckerExample, 0);
    chain = explain_example(explainer, lost);
    assert_mentions(chain, "retention deleted segment 0 — removing offset 0");
    g_ptr_array_free(chain, TRUE);
    explain_free(explainer);
    checker_result_free(result);
    history_free(h);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_checker_anomaly_classes),
        cmocka_unit_test(test_checker_outcome_counts),
        cmocka_unit_test(test_checker_example_fields),
        cmocka_unit_test(test_checker_nonmonotonic_per_producer),
        cmocka_unit_test(test_checker_committed_log_choice),
        cmocka_unit_test(test_checker_examples_capped),
        cmocka_unit_test(test_checker_latency_quantiles),
        cmocka_unit_test(test_checker_availability_and_recovery),
        cmocka_unit_test(test_checker_explains_handmade_loss),
        cmocka_unit_test(test_checker_explains_every_anomaly),
        cmocka_unit_test(test_checker_explains_kip101_loss),
        cmocka_unit_test(test_checker_kip101_leader_epoch_clean),
        cmocka_unit_test(test_checker_leaderless_undecided),
        cmocka_unit_test(test_checker_expired_by_retention),
        cmocka_unit_test(test_checker_explains_expiry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
