/*
 * failover: what leadership cost a run, from its history: each controller
 * failover (the old controller's loss is noticed → a new controller has
 * taken over and every partition that can be led is led again) and, per
 * partition, how long it had no leader serving produce. The start is the
 * history's HISTORY_EVENT_CONTROLLER_LOST, which the cluster records
 * (cluster.h): in ZooKeeper mode the old controller's session ending; in
 * KRaft mode the first voter standing for election against it, or, with a
 * single voter (nobody to stand), the first broker whose request to it fails
 * while no controller is active. The new controller of a single-voter
 * quorum is the same voter, once restarted: "a new controller" is a new
 * activation, in a new epoch.
 *
 * A partition is led from the moment a broker became its leader
 * (HISTORY_EVENT_ELECTED) until that broker stops (a crash or power-loss
 * fault on it, or a clean stop) or the controller takes it offline
 * (HISTORY_EVENT_OFFLINE); it is unavailable from then until a broker next
 * becomes its leader. Time before a partition's first leader is not counted
 * (the topic is being created), nor is a partition offline for want of a
 * live in-sync replica counted as pending by a failover: a failover is over
 * once the new controller claimed its epoch and every partition that has
 * been led before is led again or offline.
 */
#ifndef FAILOVER_H
#define FAILOVER_H

#include <glib.h>

#include "history.h"

typedef struct {
    gint32 old_controller;
    gint64 lost_ns;    /* the loss was noticed (HISTORY_EVENT_CONTROLLER_LOST) */
    gint64 claimed_ns; /* a new controller claimed its epoch; -1: none by the end */
    gint64 led_ns;     /* every partition led again; -1: not by the end */
} FailoverWindow;

typedef struct {
    guint16 topic;
    gint32 partition;
    gint64 unavailable_ns; /* total time without a serving leader */
    guint outages;         /* how many times it lost its leader */
} FailoverPartition;

/* One stretch of time a partition had no leader serving produce. */
typedef struct {
    guint16 topic;
    gint32 partition;
    gint64 start_ns;
    gint64 end_ns; /* its next leader; the end of the history if none came */
} FailoverOutage;

typedef struct FailoverResult FailoverResult;

/* Reads `history` (borrowed, only during the call). (transfer full) */
FailoverResult *failover_run(const History *history);
void failover_result_free(FailoverResult *result);

/* The failovers in time order (GArray of FailoverWindow; transfer none). */
const GArray *failover_result_windows(const FailoverResult *result);
/* Every partition ever led, sorted by (topic, partition) (GArray of
 * FailoverPartition; transfer none). */
const GArray *failover_result_partitions(const FailoverResult *result);
/* Every outage, in the order they began (GArray of FailoverOutage;
 * transfer none); each partition's add up to its unavailable_ns. */
const GArray *failover_result_outages(const FailoverResult *result);

/* The time a failover took: lost → led again, or lost → the end of the
 * history when it never finished. */
gint64 failover_window_ns(const FailoverResult *result, const FailoverWindow *window);
/* The longest failover, in ms; 0 without one. */
double failover_result_longest_ms(const FailoverResult *result);
/* The sum of every partition's unavailability, in ns. */
gint64 failover_result_unavailable_ns(const FailoverResult *result);
/* The partitions the controller had taken offline (no eligible leader) and
 * nobody led again by the end of the history. */
guint failover_result_offline_at_end(const FailoverResult *result);
/* Up to `n` partitions with the most unavailability, worst first, ties by
 * (topic, partition) (transfer full; a GArray of FailoverPartition). */
GArray *failover_result_worst(const FailoverResult *result, guint n);

/* TRUE for an event that stops broker event->broker's process: a crash or
 * power-loss fault on it, or its clean stop. */
gboolean failover_event_stops_broker(const HistoryEvent *event);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(FailoverResult, failover_result_free)

#endif
