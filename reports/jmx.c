/*
 * jmx: Kafka's metrics over a run, from its history (see jmx.h). One pass
 * over the cluster events in time order keeps each partition's leader, ISR
 * size and replica count and each gauge's current value; the requests and
 * the client operations are bucketed by when they completed.
 */
#include "jmx.h"

#include "failover.h"
#include "sim_assert.h"
#include "stats.h"
#include "utilization.h"

#include <math.h>
#include <string.h>

enum {
    S_URP = 0,
    S_UNDER_MIN_ISR,
    S_OFFLINE,
    S_CONTROLLERS,
    S_SHRINKS,
    S_EXPANDS,
    S_ELECTIONS,
    S_UNCLEAN,
    S_MESSAGES_IN,
    S_BYTES_IN,
    S_FAILED_PRODUCE,
    S_TOTAL_TIME,
    S_QUEUE_TIME,
    S_LOCAL_TIME,
    S_REMOTE_TIME,
    S_RECORD_ERRORS,
    S_RECORD_RETRIES,
    S_LAG_MAX,
    S_CLUSTER,
};

static const struct {
    const char *name;
    const char *short_name;
    JmxKind kind;
    gboolean small; /* JmxSeries.small */
} CLUSTER[S_CLUSTER] = {
    [S_URP] = {"kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions",
               "UnderReplicatedPartitions", JMX_GAUGE_MAX, TRUE},
    [S_UNDER_MIN_ISR] = {"kafka.server:type=ReplicaManager,name=UnderMinIsrPartitionCount",
                         "UnderMinIsrPartitionCount", JMX_GAUGE_MAX, TRUE},
    [S_OFFLINE] = {"kafka.controller:type=KafkaController,name=OfflinePartitionsCount",
                   "OfflinePartitionsCount", JMX_GAUGE_MAX, TRUE},
    [S_CONTROLLERS] = {"kafka.controller:type=KafkaController,name=ActiveControllerCount",
                       "ActiveControllerCount", JMX_GAUGE_MIN, TRUE},
    [S_SHRINKS] = {"kafka.server:type=ReplicaManager,name=IsrShrinksPerSec", "IsrShrinksPerSec",
                   JMX_METER, TRUE},
    [S_EXPANDS] = {"kafka.server:type=ReplicaManager,name=IsrExpandsPerSec", "IsrExpandsPerSec",
                   JMX_METER, TRUE},
    [S_ELECTIONS] = {"kafka.controller:type=ControllerStats,name=LeaderElectionRateAndTimeMs",
                     "LeaderElectionRateAndTimeMs", JMX_METER, TRUE},
    [S_UNCLEAN] = {"kafka.controller:type=ControllerStats,name=UncleanLeaderElectionsPerSec",
                   "UncleanLeaderElectionsPerSec", JMX_METER, TRUE},
    [S_MESSAGES_IN] = {"kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec",
                       "MessagesInPerSec", JMX_METER, FALSE},
    [S_BYTES_IN] = {"kafka.server:type=BrokerTopicMetrics,name=BytesInPerSec", "BytesInPerSec",
                    JMX_METER, FALSE},
    [S_FAILED_PRODUCE] = {"kafka.server:type=BrokerTopicMetrics,name=FailedProduceRequestsPerSec",
                          "FailedProduceRequestsPerSec", JMX_METER, FALSE},
    [S_TOTAL_TIME] = {"kafka.network:type=RequestMetrics,name=TotalTimeMs,request=Produce",
                      "Produce TotalTimeMs p99", JMX_TIMER_P99, FALSE},
    [S_QUEUE_TIME] = {"kafka.network:type=RequestMetrics,name=RequestQueueTimeMs,request=Produce",
                      "Produce RequestQueueTimeMs p99", JMX_TIMER_P99, FALSE},
    [S_LOCAL_TIME] = {"kafka.network:type=RequestMetrics,name=LocalTimeMs,request=Produce",
                      "Produce LocalTimeMs p99", JMX_TIMER_P99, FALSE},
    [S_REMOTE_TIME] = {"kafka.network:type=RequestMetrics,name=RemoteTimeMs,request=Produce",
                       "Produce RemoteTimeMs p99", JMX_TIMER_P99, FALSE},
    [S_RECORD_ERRORS] = {"kafka.producer:type=producer-metrics,name=record-error-rate",
                         "producer record-error-rate", JMX_METER, FALSE},
    [S_RECORD_RETRIES] = {"kafka.producer:type=producer-metrics,name=record-retry-rate",
                          "producer record-retry-rate", JMX_METER, FALSE},
    [S_LAG_MAX] = {"kafka.consumer:type=consumer-fetch-manager-metrics,name=records-lag-max",
                   "consumer records-lag-max", JMX_GAUGE_MAX, FALSE},
};

typedef struct {
    gint32 leader;
    gboolean led;
    gboolean offline;
    guint replicas; /* the first election's ISR size */
    guint isr;
    gint32 min_isr; /* its topic's min.insync.replicas; 0: unknown */
} PartitionState;

typedef struct {
    JmxMetrics *m;
    const History *history;
    GArray *partitions;   /* PartitionState */
    GHashTable *index_of; /* (topic << 32 | partition) -> index + 1; looked up only */
    GArray *brokers;      /* gint32, sorted: the brokers that led a partition */
    GArray *controllers;  /* gint32: brokers that are controller now */
    double gauges[S_CLUSTER];
    GArray *broker_urp;   /* double per broker (index as `brokers`) */
    GPtrArray *urp_series; /* JmxSeries* per broker */
    GPtrArray *in_series;  /* JmxSeries* per broker: MessagesInPerSec */
    GPtrArray *bytes_series; /* JmxSeries* per broker: BytesInPerSec */
    guint bucket;          /* the bucket gauges are filled up to */
} Sweep;

static JmxSeries *
series_new(const char *name, const char *short_name, gint32 broker, JmxKind kind, gboolean small,
           guint buckets)
{
    JmxSeries *s = g_new0(JmxSeries, 1);
    s->name = g_strdup(name);
    s->short_name = g_strdup(short_name);
    s->broker = broker;
    s->kind = kind;
    s->small = small;
    s->values = g_array_sized_new(FALSE, TRUE, sizeof(double), buckets);
    g_array_set_size(s->values, buckets);
    return s;
}

static void
series_free(gpointer pointer)
{
    JmxSeries *s = pointer;
    g_free(s->name);
    g_free(s->short_name);
    g_array_free(s->values, TRUE);
    g_free(s);
}

static JmxSeries *
cluster(const Sweep *sweep, guint index)
{
    return g_ptr_array_index(sweep->m->series, index);
}

static guint
bucket_of(const JmxMetrics *m, gint64 time_ns)
{
    double t = (double)time_ns / 1e9;
    if (t <= 0)
        return 0;
    guint b = (guint)(t / m->bucket_s);
    return MIN(b, m->buckets - 1);
}

static gint
broker_index(const Sweep *sweep, gint32 broker)
{
    for (guint i = 0; i < sweep->brokers->len; i++)
        if (g_array_index(sweep->brokers, gint32, i) == broker)
            return (gint)i;
    return -1;
}

/* A gauge's worst value in bucket `b` so far, given its value now. */
static void
gauge_touch(JmxSeries *s, guint b, double value, gboolean first)
{
    double *slot = &g_array_index(s->values, double, b);
    if (first)
        *slot = value;
    else if (s->kind == JMX_GAUGE_MIN)
        *slot = MIN(*slot, value);
    else
        *slot = MAX(*slot, value);
}

static void
gauges_touch(Sweep *sweep, guint b, gboolean first)
{
    static const guint gauges[] = {S_URP, S_UNDER_MIN_ISR, S_OFFLINE, S_CONTROLLERS};
    for (guint i = 0; i < G_N_ELEMENTS(gauges); i++)
        gauge_touch(cluster(sweep, gauges[i]), b, sweep->gauges[gauges[i]], first);
    for (guint i = 0; i < sweep->brokers->len; i++)
        gauge_touch(g_ptr_array_index(sweep->urp_series, i), b,
                    g_array_index(sweep->broker_urp, double, i), first);
}

/* Fills the gauges of the buckets before `b` with their current values. */
static void
advance(Sweep *sweep, guint b)
{
    while (sweep->bucket < b) {
        sweep->bucket++;
        gauges_touch(sweep, sweep->bucket, TRUE);
    }
}

static PartitionState *
partition_of(Sweep *sweep, guint16 topic, gint32 partition)
{
    guint64 key = ((guint64)topic << 32) | (guint32)partition;
    gpointer found = g_hash_table_lookup(sweep->index_of, &key);
    if (found != NULL)
        return &g_array_index(sweep->partitions, PartitionState, GPOINTER_TO_UINT(found) - 1);
    PartitionState state = {.leader = -1,
                            .min_isr = history_topic_min_isr(sweep->history, topic)};
    g_array_append_val(sweep->partitions, state);
    g_hash_table_insert(sweep->index_of, g_memdup2(&key, sizeof key),
                        GUINT_TO_POINTER(sweep->partitions->len));
    return &g_array_index(sweep->partitions, PartitionState, sweep->partitions->len - 1);
}

/* Adds or removes a partition's contribution to the gauges its leader
 * keeps: UnderReplicatedPartitions and UnderMinIsrPartitionCount
 * (Partition.isUnderReplicated, isUnderMinIsr). */
static void
urp_count(Sweep *sweep, const PartitionState *p, double sign)
{
    if (!p->led)
        return;
    if ((gint64)p->isr < p->min_isr)
        sweep->gauges[S_UNDER_MIN_ISR] += sign;
    if (p->isr >= p->replicas)
        return;
    sweep->gauges[S_URP] += sign;
    gint i = broker_index(sweep, p->leader);
    if (i >= 0)
        g_array_index(sweep->broker_urp, double, i) += sign;
}

static guint
isr_size(const Sweep *sweep, guint32 isr)
{
    const gint32 *members = NULL;
    return isr == 0 ? 0 : history_isr_members(sweep->history, isr, &members);
}

static void
meter_add(JmxSeries *s, guint b, double n)
{
    g_array_index(s->values, double, b) += n;
}

static void
controllers_remove(Sweep *sweep, gint32 broker)
{
    for (guint i = 0; i < sweep->controllers->len; i++) {
        if (g_array_index(sweep->controllers, gint32, i) == broker) {
            g_array_remove_index(sweep->controllers, i);
            break;
        }
    }
    sweep->gauges[S_CONTROLLERS] = sweep->controllers->len;
}

static void
sweep_event(Sweep *sweep, const HistoryEvent *e, guint b)
{
    if (e->kind == HISTORY_EVENT_ELECTED && e->partition >= 0) {
        PartitionState *p = partition_of(sweep, e->topic, e->partition);
        urp_count(sweep, p, -1);
        if (p->offline)
            sweep->gauges[S_OFFLINE]--;
        guint isr = isr_size(sweep, e->isr);
        if (p->replicas == 0)
            p->replicas = isr;
        p->leader = e->broker;
        p->led = TRUE;
        p->offline = FALSE;
        p->isr = isr;
        urp_count(sweep, p, +1);
        meter_add(cluster(sweep, S_ELECTIONS), b, 1);
    } else if (e->kind == HISTORY_EVENT_ISR_CHANGED && e->partition >= 0) {
        PartitionState *p = partition_of(sweep, e->topic, e->partition);
        guint isr = isr_size(sweep, e->isr);
        if (isr < p->isr)
            meter_add(cluster(sweep, S_SHRINKS), b, 1);
        else if (isr > p->isr)
            meter_add(cluster(sweep, S_EXPANDS), b, 1);
        urp_count(sweep, p, -1);
        p->isr = isr;
        urp_count(sweep, p, +1);
    } else if (e->kind == HISTORY_EVENT_OFFLINE && e->partition >= 0) {
        PartitionState *p = partition_of(sweep, e->topic, e->partition);
        urp_count(sweep, p, -1);
        p->led = FALSE;
        if (!p->offline)
            sweep->gauges[S_OFFLINE]++;
        p->offline = TRUE;
    } else if (e->kind == HISTORY_EVENT_CONTROLLER && e->partition < 0 && e->text != NULL &&
               strstr(e->text, "became controller") != NULL) {
        controllers_remove(sweep, e->broker);
        g_array_append_val(sweep->controllers, e->broker);
        sweep->gauges[S_CONTROLLERS] = sweep->controllers->len;
    } else if (e->kind == HISTORY_EVENT_CONTROLLER_LOST) {
        controllers_remove(sweep, e->broker);
    }
    if (failover_event_stops_broker(e)) {
        /* A stopped broker's metrics are gone with it: it leads nothing
         * and controls nothing. */
        for (guint i = 0; i < sweep->partitions->len; i++) {
            PartitionState *p = &g_array_index(sweep->partitions, PartitionState, i);
            if (p->led && p->leader == e->broker) {
                urp_count(sweep, p, -1);
                p->led = FALSE;
            }
        }
        controllers_remove(sweep, e->broker);
    }
}

static gint
gint32_compare(gconstpointer a, gconstpointer b)
{
    gint32 x = *(const gint32 *)a, y = *(const gint32 *)b;
    return (x > y) - (x < y);
}

/* The brokers that ever led a partition or handled a request, sorted. */
static GArray *
brokers_of(const History *history)
{
    GArray *brokers = g_array_new(FALSE, FALSE, sizeof(gint32));
    const GArray *events = history_events(history);
    for (guint i = 0; i < events->len; i++) {
        const HistoryEvent *e = &g_array_index(events, HistoryEvent, i);
        if (e->kind != HISTORY_EVENT_ELECTED || e->partition < 0 || e->broker < 0)
            continue;
        gboolean known = FALSE;
        for (guint k = 0; k < brokers->len && !known; k++)
            known = g_array_index(brokers, gint32, k) == e->broker;
        if (!known)
            g_array_append_val(brokers, e->broker);
    }
    g_array_sort(brokers, gint32_compare);
    return brokers;
}

/* The request timers: p99 of the produce requests completed per bucket. */
static void
request_timers(Sweep *sweep)
{
    JmxMetrics *m = sweep->m;
    static const guint timers[] = {S_TOTAL_TIME, S_QUEUE_TIME, S_LOCAL_TIME, S_REMOTE_TIME};
    StatsHistogram **h = g_new0(StatsHistogram *, m->buckets * G_N_ELEMENTS(timers));
    const GArray *requests = history_requests(sweep->history);
    for (guint i = 0; i < requests->len; i++) {
        const HistoryRequest *r = &g_array_index(requests, HistoryRequest, i);
        if (r->kind != HISTORY_REQUEST_PRODUCE)
            continue;
        gint64 parts[] = {history_request_total_ns(r), MAX(r->queue_ns, 0), MAX(r->local_ns, 0),
                          MAX(r->remote_ns, 0)};
        guint b = bucket_of(m, r->time_ns + parts[0]);
        for (guint t = 0; t < G_N_ELEMENTS(timers); t++) {
            StatsHistogram **slot = &h[b * G_N_ELEMENTS(timers) + t];
            if (*slot == NULL)
                *slot = stats_histogram_new(2);
            stats_histogram_record(*slot, parts[t]);
        }
    }
    for (guint b = 0; b < m->buckets; b++) {
        for (guint t = 0; t < G_N_ELEMENTS(timers); t++) {
            StatsHistogram *slot = h[b * G_N_ELEMENTS(timers) + t];
            if (slot == NULL)
                continue;
            g_array_index(cluster(sweep, timers[t])->values, double, b) =
                (double)stats_histogram_quantile(slot, 0.99) / 1e6;
            stats_histogram_free(slot);
        }
    }
    g_free(h);
}

/* The meters and the lag counted where Kafka marks them
 * (history_metrics). records-lag-max is the largest lag recorded in the
 * bucket, or the bucket before's when none was (a consumer that stopped
 * polling reports no lag, yet still has it). */
static void
counted_metrics(Sweep *sweep)
{
    JmxMetrics *m = sweep->m;
    GArray *lag = cluster(sweep, S_LAG_MAX)->values;
    gboolean *lag_seen = g_new0(gboolean, m->buckets);
    const GArray *metrics = history_metrics(sweep->history);
    for (guint k = 0; k < metrics->len; k++) {
        const HistoryMetric *metric = &g_array_index(metrics, HistoryMetric, k);
        if ((double)metric->time_ns / 1e9 > m->span_s)
            break;
        guint b = bucket_of(m, metric->time_ns);
        switch ((HistoryMetricKind)metric->kind) {
        case HISTORY_METRIC_APPEND: {
            gint i = broker_index(sweep, metric->node);
            meter_add(cluster(sweep, S_MESSAGES_IN), b, metric->count);
            meter_add(cluster(sweep, S_BYTES_IN), b, (double)metric->value);
            if (i >= 0) {
                meter_add(g_ptr_array_index(sweep->in_series, i), b, metric->count);
                meter_add(g_ptr_array_index(sweep->bytes_series, i), b, (double)metric->value);
            }
            break;
        }
        case HISTORY_METRIC_PRODUCE_FAILED:
            meter_add(cluster(sweep, S_FAILED_PRODUCE), b, 1);
            break;
        case HISTORY_METRIC_UNCLEAN_ELECTION:
            meter_add(cluster(sweep, S_UNCLEAN), b, 1);
            break;
        case HISTORY_METRIC_RETRY:
            meter_add(cluster(sweep, S_RECORD_RETRIES), b, metric->count);
            break;
        case HISTORY_METRIC_LAG: {
            double *slot = &g_array_index(lag, double, b);
            *slot = lag_seen[b] ? MAX(*slot, (double)metric->value) : (double)metric->value;
            lag_seen[b] = TRUE;
            break;
        }
        }
    }
    for (guint b = 1; b < m->buckets; b++)
        if (!lag_seen[b])
            g_array_index(lag, double, b) = g_array_index(lag, double, b - 1);
    g_free(lag_seen);
}

static void
record_errors(Sweep *sweep)
{
    const HistoryOpArray *ops = history_ops(sweep->history);
    for (guint i = 0; i < ops->len; i++) {
        const HistoryOp *op = &ops->data[i];
        if (op->fn == HISTORY_FN_SEND && op->type == HISTORY_FAIL && op->complete_ns >= 0)
            meter_add(cluster(sweep, S_RECORD_ERRORS), bucket_of(sweep->m, op->complete_ns), 1);
    }
}

/* Meters from counts to rates. */
static void
meters_per_second(JmxMetrics *m)
{
    for (guint i = 0; i < m->series->len; i++) {
        JmxSeries *s = g_ptr_array_index(m->series, i);
        if (s->kind != JMX_METER)
            continue;
        for (guint b = 0; b < m->buckets; b++) {
            double length = utilization_bucket_length(m->span_s, b);
            double *v = &g_array_index(s->values, double, b);
            *v = length > 0 ? *v / length : 0;
        }
    }
}

/* One series of kafka.server:type=TYPE,name=NAME per broker, added to `m`
 * in broker order; returns them (transfer container). */
static GPtrArray *
broker_series(JmxMetrics *m, const GArray *brokers, const char *type, const char *name,
              JmxKind kind, gboolean small)
{
    GPtrArray *series = g_ptr_array_new();
    for (guint i = 0; i < brokers->len; i++) {
        gint32 broker = g_array_index(brokers, gint32, i);
        g_autofree char *mbean =
            g_strdup_printf("kafka.server:type=%s,name=%s;broker=%d", type, name, broker);
        g_autofree char *shown = g_strdup_printf("%s broker %d", name, broker);
        JmxSeries *s = series_new(mbean, shown, broker, kind, small, m->buckets);
        g_ptr_array_add(m->series, s);
        g_ptr_array_add(series, s);
    }
    return series;
}

JmxMetrics *
jmx_metrics_new(const History *history, double span_s)
{
    JmxMetrics *m = g_new0(JmxMetrics, 1);
    m->span_s = span_s > 0 ? span_s : 0;
    m->bucket_s = utilization_bucket_s(span_s);
    m->buckets = utilization_bucket_count(span_s);
    m->series = g_ptr_array_new_with_free_func(series_free);
    if (m->buckets == 0)
        return m;
    for (guint i = 0; i < S_CLUSTER; i++)
        g_ptr_array_add(m->series, series_new(CLUSTER[i].name, CLUSTER[i].short_name, -1,
                                              CLUSTER[i].kind, CLUSTER[i].small, m->buckets));
    Sweep sweep = {.m = m, .history = history};
    sweep.partitions = g_array_new(FALSE, FALSE, sizeof(PartitionState));
    sweep.index_of = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    sweep.brokers = brokers_of(history);
    sweep.controllers = g_array_new(FALSE, FALSE, sizeof(gint32));
    sweep.broker_urp = g_array_new(FALSE, TRUE, sizeof(double));
    g_array_set_size(sweep.broker_urp, sweep.brokers->len);
    sweep.urp_series = broker_series(m, sweep.brokers, "ReplicaManager", "UnderReplicatedPartitions",
                                     JMX_GAUGE_MAX, TRUE);
    sweep.in_series =
        broker_series(m, sweep.brokers, "BrokerTopicMetrics", "MessagesInPerSec", JMX_METER, FALSE);
    sweep.bytes_series =
        broker_series(m, sweep.brokers, "BrokerTopicMetrics", "BytesInPerSec", JMX_METER, FALSE);
    gauges_touch(&sweep, 0, TRUE);
    const GArray *events = history_events(history);
    for (guint i = 0; i < events->len; i++) {
        const HistoryEvent *e = &g_array_index(events, HistoryEvent, i);
        if ((double)e->time_ns / 1e9 > m->span_s)
            break;
        guint b = bucket_of(m, e->time_ns);
        advance(&sweep, b);
        sweep_event(&sweep, e, b);
        gauges_touch(&sweep, sweep.bucket, FALSE);
    }
    advance(&sweep, m->buckets - 1);
    request_timers(&sweep);
    counted_metrics(&sweep);
    record_errors(&sweep);
    meters_per_second(m);
    g_array_free(sweep.partitions, TRUE);
    g_hash_table_destroy(sweep.index_of);
    g_array_free(sweep.brokers, TRUE);
    g_array_free(sweep.controllers, TRUE);
    g_array_free(sweep.broker_urp, TRUE);
    g_ptr_array_free(sweep.urp_series, TRUE);
    g_ptr_array_free(sweep.in_series, TRUE);
    g_ptr_array_free(sweep.bytes_series, TRUE);
    return m;
}

void
jmx_metrics_free(JmxMetrics *metrics)
{
    if (metrics == NULL)
        return;
    g_ptr_array_free(metrics->series, TRUE);
    g_free(metrics);
}

gboolean
jmx_series_moved(const JmxSeries *series)
{
    /* The first bucket holds the cluster's start (no controller yet, the
     * first elections); movement is judged after it. */
    for (guint b = 2; b < series->values->len; b++)
        if (g_array_index(series->values, double, b) != g_array_index(series->values, double, 1))
            return TRUE;
    return FALSE;
}

/* A gauge changes when it changes; a rate or a time when it moved by half
 * its value before and by at least one (event per second, or ms), so the
 * noise of a busy series is not a change. */
static gboolean
significant(const JmxSeries *s, double before, double after)
{
    if (s->kind == JMX_GAUGE_MAX || s->kind == JMX_GAUGE_MIN)
        return after != before;
    double delta = fabs(after - before);
    return delta >= 1.0 && delta >= 0.5 * fabs(before);
}

GArray *
jmx_changes(const JmxMetrics *metrics, double start_s, double until_s)
{
    GArray *changes = g_array_new(FALSE, FALSE, sizeof(JmxChange));
    if (metrics->buckets == 0)
        return changes;
    guint first = (guint)MAX(0.0, floor(start_s / metrics->bucket_s));
    first = MIN(first, metrics->buckets - 1);
    guint last = (guint)MAX(0.0, ceil(until_s / metrics->bucket_s));
    last = MIN(MAX(last, first + 1), metrics->buckets);
    guint before_bucket = first > 0 ? first - 1 : 0;
    for (guint i = 0; i < metrics->series->len; i++) {
        const JmxSeries *s = g_ptr_array_index(metrics->series, i);
        if (s->broker >= 0)
            continue;
        double before = g_array_index(s->values, double, before_bucket);
        JmxChange change = {s, before, before, -1};
        for (guint b = first; b < last; b++) {
            double v = g_array_index(s->values, double, b);
            if (fabs(v - before) > fabs(change.after - before)) {
                change.after = v;
                change.at_s = b * metrics->bucket_s;
            }
        }
        if (change.at_s >= 0 && significant(s, before, change.after))
            g_array_append_val(changes, change);
    }
    return changes;
}
