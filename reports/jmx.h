/*
 * jmx: a run's Kafka broker and client metrics, under the JMX names an
 * operator's dashboards use, as time series read from its history — so a
 * simulated incident looks the way it would on a real cluster's graphs.
 *
 * Every series has one value per time bucket (utilization_bucket_s: about a
 * hundred per run). Gauges take their worst value in the bucket — the
 * largest UnderReplicatedPartitions, the smallest ActiveControllerCount —
 * so a blip shorter than a bucket still shows, where a dashboard sampling
 * once a minute could miss it. Meters are events per second over the bucket,
 * and request times the p99 of the requests completed in it (0 when none).
 *
 * Where each comes from:
 *   UnderReplicatedPartitions (per leader broker, and their sum) — led
 *     partitions whose ISR is smaller than their replica set, as
 *     Partition.isUnderReplicated counts them on the leader. The replica
 *     set is the ISR of a partition's first election (a new topic's first
 *     ISR is all its assigned replicas), the ISR that of its latest
 *     election or ISR change.
 *   OfflinePartitionsCount — partitions the controller took offline
 *     (HISTORY_EVENT_OFFLINE) and has not elected a leader for since.
 *   ActiveControllerCount — the cluster's sum: 0 from the end of the
 *     controller's coordination session to the new controller claiming its
 *     epoch (failover.h), else 1.
 *   IsrShrinksPerSec, IsrExpandsPerSec — ISR changes that shrank or grew an
 *     ISR; LeaderElectionRateAndTimeMs — elections per second.
 *   UnderMinIsrPartitionCount — led partitions whose ISR is smaller than
 *     their topic's min.insync.replicas (Partition.isUnderMinIsr).
 *   UncleanLeaderElectionsPerSec — the controller's elections from outside
 *     the ISR (HISTORY_METRIC_UNCLEAN_ELECTION).
 *   MessagesInPerSec, BytesInPerSec (per leader broker, and their sum) —
 *     records and bytes leaders appended for producers and coordinators,
 *     as ReplicaManager.appendToLocalLog marks them (HISTORY_METRIC_APPEND);
 *   FailedProduceRequestsPerSec — the appends it counts as failed
 *     (HISTORY_METRIC_PRODUCE_FAILED).
 *   Produce TotalTimeMs, RequestQueueTimeMs, LocalTimeMs, RemoteTimeMs —
 *     the produce requests' own timings (HistoryRequest).
 *   producer record-error-rate — sends that failed, per second; producer
 *     record-retry-rate — records sent again (HISTORY_METRIC_RETRY).
 *   consumer records-lag-max — the largest lag a consumer recorded for a
 *     partition in the bucket (HISTORY_METRIC_LAG), or the bucket before's
 *     when none did.
 */
#ifndef JMX_H
#define JMX_H

#include <glib.h>

#include "history.h"

typedef enum {
    JMX_GAUGE_MAX = 0, /* worst is largest */
    JMX_GAUGE_MIN,     /* worst is smallest */
    JMX_METER,         /* per second */
    JMX_TIMER_P99,     /* ms */
} JmxKind;

typedef struct {
    char *name;      /* the MBean and attribute, e.g. "kafka.server:type=ReplicaManager,..." */
    char *short_name; /* "UnderReplicatedPartitions", with " broker N" for a broker's */
    gint32 broker;   /* -1: the cluster's */
    JmxKind kind;
    /* Its values are counts of partitions or controllers, or rates of ISR
     * changes or elections: a few, on one axis with each other. */
    gboolean small;
    GArray *values;  /* double per bucket */
} JmxSeries;

typedef struct {
    double span_s;
    double bucket_s;
    guint buckets;
    GPtrArray *series; /* JmxSeries*, the cluster's first, then per broker by id */
} JmxMetrics;

JmxMetrics *jmx_metrics_new(const History *history, double span_s);
void jmx_metrics_free(JmxMetrics *metrics);

/* A cluster series that moved across a fault: its value in the bucket
 * before `start_s`, and its most distant value from `start_s` until
 * `until_s`, with when. */
typedef struct {
    const JmxSeries *series;
    double before;
    double after;
    double at_s;
} JmxChange;

/* The cluster series that changed over [start_s, until_s), in the order of
 * the series (GArray of JmxChange; transfer full). A gauge changes when its
 * value does; a rate or a request time when it moved by at least half its
 * value before and by at least 1 (per second, or ms). */
GArray *jmx_changes(const JmxMetrics *metrics, double start_s, double until_s);

/* TRUE when the series ever leaves its first value. */
gboolean jmx_series_moved(const JmxSeries *series);

#endif
