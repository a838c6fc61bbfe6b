/*
 * Tests of jmx.h: Kafka's metrics read from hand-written histories.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "jmx.h"
#include "kafka_error.h"

#define S(x) ((gint64)((x) * 1e9))

static void
add(History *h, double t, HistoryEventKind kind, gint32 broker, gint32 partition,
    const gint32 *isr, guint n_isr, const char *text)
{
    HistoryEvent event = {0};
    event.time_ns = S(t);
    event.kind = kind;
    event.broker = broker;
    event.topic = history_topic(h, "t");
    event.partition = partition;
    event.isr = isr != NULL ? history_isr_intern(h, isr, n_isr) : 0;
    event.text = (char *)text;
    history_event(h, &event);
}

/* A leader's append of records [from, to), 1,000 bytes each, and its
 * acknowledgement. */
static void
ack(History *h, double t, gint32 broker, gint32 partition, gint64 from, gint64 to)
{
    history_metric(h, S(t), HISTORY_METRIC_APPEND, broker, (guint32)(to - from),
                   (to - from) * 1000);
    HistoryEvent event = {0};
    event.time_ns = S(t);
    event.kind = HISTORY_EVENT_ACK;
    event.broker = broker;
    event.topic = history_topic(h, "t");
    event.partition = partition;
    event.offset = from;
    event.offset_end = to;
    history_event(h, &event);
}

static const JmxSeries *
find(const JmxMetrics *m, const char *short_name)
{
    for (guint i = 0; i < m->series->len; i++) {
        const JmxSeries *s = g_ptr_array_index(m->series, i);
        if (strcmp(s->short_name, short_name) == 0)
            return s;
    }
    fail_msg("no series %s", short_name);
    return NULL;
}

static double
at(const JmxMetrics *m, const char *short_name, double t)
{
    const JmxSeries *s = find(m, short_name);
    return g_array_index(s->values, double, (guint)(t / m->bucket_s));
}

/* Three brokers, two partitions of RF 3 and min.insync.replicas 2; broker 2
 * crashes at 10 s, the leader of partition 0 shrinks its ISR at 15 s, the
 * controller (broker 1) loses its session at 30 s and broker 3 takes over
 * at 30.5 s; partition 1 goes offline at 40 s and gets a leader back at
 * 50 s, uncleanly, with an ISR of one. The producer retries 30 records at
 * 12.5 s and five of its produce requests fail at 45.5 s; a consumer lags
 * 100 records at 20.5 s and 250 at 22.5 s. The run is 100 s: one-second
 * buckets. */
/* Broker 1's acknowledgements, 10 records at each s + 0.2 s, for every
 * second before `t` not yet written: the history is in time order, as a
 * run writes it. */
static void
acks_until(History *h, int *next, double t)
{
    for (; *next < 100 && *next + 0.2 < t; (*next)++)
        ack(h, *next + 0.2, 1, 0, *next * 10, *next * 10 + 10);
}

static History *
incident(void)
{
    static const gint32 all[] = {1, 2, 3}, two[] = {1, 3}, one[] = {3};
    History *h = history_new();
    history_set_topic_min_isr(h, history_topic(h, "t"), 2);
    int next = 1;
    add(h, 0.5, HISTORY_EVENT_CONTROLLER, 1, -1, NULL, 0, "broker 1 became controller");
    add(h, 0.6, HISTORY_EVENT_ELECTED, 1, 0, all, 3, "became leader");
    add(h, 0.6, HISTORY_EVENT_ELECTED, 2, 1, all, 3, "became leader");
    acks_until(h, &next, 10.0);
    add(h, 10.0, HISTORY_EVENT_FAULT, 2, -1, NULL, 0, "10.000 s: fault began: crash broker-2");
    acks_until(h, &next, 12.0);
    add(h, 12.0, HISTORY_EVENT_ELECTED, 3, 1, two, 2, "became leader");
    acks_until(h, &next, 12.5);
    history_metric(h, S(12.5), HISTORY_METRIC_RETRY, 100, 30, 0);
    acks_until(h, &next, 15.0);
    add(h, 15.0, HISTORY_EVENT_ISR_CHANGED, 1, 0, two, 2, "shrank");
    acks_until(h, &next, 20.0);
    add(h, 20.0, HISTORY_EVENT_ISR_CHANGED, 1, 0, all, 3, "expanded");
    acks_until(h, &next, 20.5);
    history_metric(h, S(20.5), HISTORY_METRIC_LAG, 101, 1, 100);
    acks_until(h, &next, 22.5);
    history_metric(h, S(22.5), HISTORY_METRIC_LAG, 101, 1, 250);
    history_metric(h, S(22.5), HISTORY_METRIC_LAG, 101, 1, 40);
    acks_until(h, &next, 30.2);
    add(h, 30.2, HISTORY_EVENT_CONTROLLER_LOST, 1, -1, NULL, 0, "controller 1's session ended");
    add(h, 30.5, HISTORY_EVENT_CONTROLLER, 3, -1, NULL, 0, "broker 3 became controller");
    acks_until(h, &next, 40.0);
    add(h, 40.0, HISTORY_EVENT_OFFLINE, -1, 1, NULL, 0, "offline");
    acks_until(h, &next, 45.5);
    for (int i = 0; i < 5; i++)
        history_metric(h, S(45.5), HISTORY_METRIC_PRODUCE_FAILED, 1, 1,
                       KAFKA_ERROR_NOT_ENOUGH_REPLICAS);
    acks_until(h, &next, 50.0);
    history_metric(h, S(50.0), HISTORY_METRIC_UNCLEAN_ELECTION, 3, 1, 0);
    add(h, 50.0, HISTORY_EVENT_ELECTED, 3, 1, one, 1, "became leader");
    acks_until(h, &next, 100.0);
    return h;
}

static void
test_jmx_gauges(void **state)
{
    (void)state;
    History *h = incident();
    JmxMetrics *m = jmx_metrics_new(h, 100.0);
    assert_true(m->bucket_s == 1.0);
    assert_int_equal(m->buckets, 100);
    /* Broker 2, leader of partition 1, crashed: it leads nothing (its
     * metrics are gone); broker 3 leads it from 12 s with ISR {1, 3}. */
    assert_true(at(m, "UnderReplicatedPartitions", 5) == 0);
    assert_true(at(m, "UnderReplicatedPartitions", 12) == 1);
    assert_true(at(m, "UnderReplicatedPartitions", 15) == 2); /* partition 0 shrank too */
    assert_true(at(m, "UnderReplicatedPartitions broker 1", 15) == 1);
    assert_true(at(m, "UnderReplicatedPartitions broker 3", 15) == 1);
    assert_true(at(m, "UnderReplicatedPartitions", 25) == 1);
    /* Offline from 40 to 50 s: not led, so not under-replicated either. */
    assert_true(at(m, "OfflinePartitionsCount", 39) == 0);
    assert_true(at(m, "OfflinePartitionsCount", 45) == 1);
    assert_true(at(m, "UnderReplicatedPartitions", 45) == 0);
    assert_true(at(m, "OfflinePartitionsCount", 50) == 1); /* worst in the bucket */
    assert_true(at(m, "OfflinePartitionsCount", 51) == 0);
    assert_true(at(m, "UnderReplicatedPartitions", 51) == 1); /* ISR {3} of 3 replicas */
    /* ActiveControllerCount: 0 for 0.3 s inside bucket 30 (its worst). */
    assert_true(at(m, "ActiveControllerCount", 29) == 1);
    assert_true(at(m, "ActiveControllerCount", 30) == 0);
    assert_true(at(m, "ActiveControllerCount", 31) == 1);
    jmx_metrics_free(m);
    history_free(h);
}

static void
test_jmx_meters_and_changes(void **state)
{
    (void)state;
    History *h = incident();
    JmxMetrics *m = jmx_metrics_new(h, 100.0);
    assert_true(at(m, "IsrShrinksPerSec", 15) == 1);
    assert_true(at(m, "IsrShrinksPerSec", 16) == 0);
    assert_true(at(m, "IsrExpandsPerSec", 20) == 1);
    assert_true(at(m, "LeaderElectionRateAndTimeMs", 12) == 1);
    assert_true(at(m, "MessagesInPerSec", 7) == 10);
    assert_true(at(m, "MessagesInPerSec broker 1", 7) == 10);
    /* Across the crash (10 s, until 20 s): URP 0 -> 2 at 15 s, the ISR
     * shrink and the election; MessagesInPerSec did not change. */
    g_autoptr(GArray) changes = jmx_changes(m, 10.0, 20.0);
    gboolean urp = FALSE, messages = FALSE;
    for (guint i = 0; i < changes->len; i++) {
        const JmxChange *c = &g_array_index(changes, JmxChange, i);
        assert_true(c->series->broker < 0); /* the cluster's series only */
        if (strcmp(c->series->short_name, "UnderReplicatedPartitions") == 0) {
            urp = TRUE;
            assert_true(c->before == 0 && c->after == 2 && c->at_s == 15.0);
        }
        messages |= strcmp(c->series->short_name, "MessagesInPerSec") == 0;
    }
    assert_true(urp);
    assert_false(messages);
    assert_true(jmx_series_moved(find(m, "UnderReplicatedPartitions")));
    /* Ten records a second from the first bucket on: it never moved. */
    assert_false(jmx_series_moved(find(m, "MessagesInPerSec broker 1")));
    jmx_metrics_free(m);
    history_free(h);
}

/* What Kafka counts where it happens (history_metrics), and
 * UnderMinIsrPartitionCount from the topics' min.insync.replicas. */
static void
test_jmx_counted(void **state)
{
    (void)state;
    History *h = incident();
    JmxMetrics *m = jmx_metrics_new(h, 100.0);
    assert_true(at(m, "BytesInPerSec", 7) == 10000);
    assert_true(at(m, "BytesInPerSec broker 1", 7) == 10000);
    assert_true(at(m, "producer record-retry-rate", 12) == 30);
    assert_true(at(m, "producer record-retry-rate", 13) == 0);
    assert_true(at(m, "FailedProduceRequestsPerSec", 45) == 5);
    assert_true(at(m, "FailedProduceRequestsPerSec", 44) == 0);
    assert_true(at(m, "UncleanLeaderElectionsPerSec", 50) == 1);
    assert_true(at(m, "UncleanLeaderElectionsPerSec", 49) == 0);
    /* The largest lag in its bucket, held through the buckets without. */
    assert_true(at(m, "consumer records-lag-max", 19) == 0);
    assert_true(at(m, "consumer records-lag-max", 20) == 100);
    assert_true(at(m, "consumer records-lag-max", 21) == 100);
    assert_true(at(m, "consumer records-lag-max", 22) == 250);
    assert_true(at(m, "consumer records-lag-max", 90) == 250);
    /* ISR {1, 3} is not under a min.insync.replicas of 2; {3} is, once led. */
    assert_true(at(m, "UnderMinIsrPartitionCount", 15) == 0);
    assert_true(at(m, "UnderMinIsrPartitionCount", 45) == 0);
    assert_true(at(m, "UnderMinIsrPartitionCount", 51) == 1);
    jmx_metrics_free(m);
    history_free(h);
}

/* No buckets for an empty run. */
static void
test_jmx_empty(void **state)
{
    (void)state;
    History *h = history_new();
    JmxMetrics *m = jmx_metrics_new(h, 0);
    assert_int_equal(m->buckets, 0);
    assert_int_equal(m->series->len, 0);
    g_autoptr(GArray) changes = jmx_changes(m, 0, 1);
    assert_int_equal(changes->len, 0);
    jmx_metrics_free(m);
    history_free(h);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jmx_gauges),
        cmocka_unit_test(test_jmx_meters_and_changes),
        cmocka_unit_test(test_jmx_counted),
        cmocka_unit_test(test_jmx_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
