/*
 * utilization: how busy each broker's I/O threads were over a run, from the
 * busy series the history keeps of the requests it handled (HistoryBusy,
 * history.h): a request occupied one I/O thread
 * from the end of its queue wait to the end of its local time, so a broker's
 * utilisation in a time bucket is the thread-time its requests spent there
 * divided by the bucket's length times its num.io.threads — Kafka's
 * RequestHandlerAvgIdlePercent, turned around (1 − idle).
 *
 * The buckets: a run of S virtual seconds is cut into buckets of S/100
 * rounded up to 1, 2 or 5 times a power of ten seconds (80 s: 1 s buckets;
 * 5 s: 0.05 s), so a plot has about a hundred points whatever the length.
 */
#ifndef UTILIZATION_H
#define UTILIZATION_H

#include <glib.h>

#include "history.h"

typedef struct {
    gint32 broker;
    guint16 io_threads;
    double busy_s; /* thread-seconds its requests held I/O threads */
    double mean;   /* busy_s / (span × io_threads) */
    double peak;   /* the largest bucket's share */
    GArray *share; /* double per bucket, in [0, 1] */
} UtilizationBroker;

typedef struct {
    double span_s;
    double bucket_s;
    guint buckets;
    GPtrArray *brokers; /* UtilizationBroker*, by broker id */
} Utilization;

/* The bucket length for a run of `span_s` seconds (see above). */
double utilization_bucket_s(double span_s);
/* How many of them cover [0, span_s]: 0 when span_s is not positive. */
guint utilization_bucket_count(double span_s);
/* The length of bucket `b` of a run of `span_s` seconds: a whole bucket but
 * the last, which ends with the run. */
double utilization_bucket_length(double span_s, guint b);

/* The utilisation of the brokers that handled requests in `history`, over
 * [0, span_s]; none when span_s is not positive. */
Utilization *utilization_new(const History *history, double span_s);
void utilization_free(Utilization *utilization);

/* The broker with the highest mean, or NULL when none handled a request.
 * (transfer none) */
const UtilizationBroker *utilization_busiest(const Utilization *utilization);

#endif
