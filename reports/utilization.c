/*
 * utilization: the brokers' I/O-thread utilisation over a run (see
 * utilization.h).
 */
#include "utilization.h"

#include "sim_assert.h"

#include <math.h>

double
utilization_bucket_s(double span_s)
{
    if (!(span_s > 0))
        return 1.0;
    double target = span_s / 100.0;
    double power = pow(10.0, floor(log10(target)));
    static const double steps[] = {1, 2, 5, 10};
    for (guint i = 0; i < G_N_ELEMENTS(steps); i++) {
        /* A relative margin, so that 0.8 s / 100 = 0.008 is not rounded
         * past 0.01 by the error of the division. */
        if (steps[i] * power >= target * (1 - 1e-9))
            return steps[i] * power;
    }
    return 10 * power;
}

guint
utilization_bucket_count(double span_s)
{
    return span_s > 0 ? (guint)ceil(span_s / utilization_bucket_s(span_s) - 1e-9) : 0;
}

double
utilization_bucket_length(double span_s, guint b)
{
    double bucket_s = utilization_bucket_s(span_s);
    return MIN(bucket_s, span_s - b * bucket_s);
}

static void
broker_free(gpointer pointer)
{
    UtilizationBroker *broker = pointer;
    g_array_free(broker->share, TRUE);
    g_free(broker);
}

static UtilizationBroker *
broker_of(Utilization *u, gint32 id, guint16 io_threads)
{
    guint at = 0;
    while (at < u->brokers->len &&
           ((UtilizationBroker *)g_ptr_array_index(u->brokers, at))->broker < id)
        at++;
    if (at < u->brokers->len) {
        UtilizationBroker *found = g_ptr_array_index(u->brokers, at);
        if (found->broker == id) {
            /* A broker keeps its num.io.threads for the run. */
            KSIM_ASSERT(found->io_threads == io_threads);
            return found;
        }
    }
    UtilizationBroker *broker = g_new0(UtilizationBroker, 1);
    broker->broker = id;
    broker->io_threads = io_threads;
    broker->share = g_array_sized_new(FALSE, TRUE, sizeof(double), u->buckets);
    g_array_set_size(broker->share, u->buckets);
    g_ptr_array_insert(u->brokers, (gint)at, broker);
    return broker;
}

/* Adds `busy_ns` of thread-time spread evenly over [lo_ns, hi_ns) to the
 * buckets it overlaps, the part past the end of the run left out. A bin of
 * the history's series lies within one bucket (its length divides the
 * bucket's), so the spreading matters only for a run shorter than the bins,
 * and for the bin the run ends in. */
static void
add_busy(Utilization *u, UtilizationBroker *broker, gint64 lo_ns, gint64 hi_ns, gint64 busy_ns)
{
    double span_ns = u->span_s * 1e9, bucket_ns = u->bucket_s * 1e9;
    double lo = (double)lo_ns, hi = (double)hi_ns, length = hi - lo;
    for (guint b = (guint)(lo / bucket_ns); b < u->buckets; b++) {
        double from = MAX(lo, b * bucket_ns), to = MIN(MIN(hi, (b + 1) * bucket_ns), span_ns);
        if (from >= to)
            break;
        double share_s = (double)busy_ns * (to - from) / length / 1e9;
        g_array_index(broker->share, double, b) += share_s;
        broker->busy_s += share_s;
    }
}

Utilization *
utilization_new(const History *history, double span_s)
{
    Utilization *u = g_new0(Utilization, 1);
    u->span_s = span_s > 0 ? span_s : 0;
    u->bucket_s = utilization_bucket_s(span_s);
    u->buckets = utilization_bucket_count(span_s);
    u->brokers = g_ptr_array_new_with_free_func(broker_free);
    if (u->buckets == 0)
        return u;
    for (guint i = 0; i < history_busy_count(history); i++) {
        const HistoryBusy *busy = history_busy(history, i);
        UtilizationBroker *broker = broker_of(u, busy->broker, busy->io_threads);
        for (guint bin = 0; bin < busy->bins->len; bin++) {
            gint64 busy_ns = g_array_index(busy->bins, gint64, bin);
            gint64 lo_ns = (gint64)bin * busy->bin_ns;
            if (busy_ns > 0)
                add_busy(u, broker, lo_ns, lo_ns + busy->bin_ns, busy_ns);
        }
    }
    for (guint i = 0; i < u->brokers->len; i++) {
        UtilizationBroker *broker = g_ptr_array_index(u->brokers, i);
        broker->mean = broker->busy_s / (u->span_s * broker->io_threads);
        for (guint b = 0; b < u->buckets; b++) {
            double length = utilization_bucket_length(u->span_s, b);
            double *share = &g_array_index(broker->share, double, b);
            *share = length > 0 ? *share / (length * broker->io_threads) : 0;
            broker->peak = MAX(broker->peak, *share);
        }
    }
    return u;
}

void
utilization_free(Utilization *utilization)
{
    if (utilization == NULL)
        return;
    g_ptr_array_free(utilization->brokers, TRUE);
    g_free(utilization);
}

const UtilizationBroker *
utilization_busiest(const Utilization *utilization)
{
    const UtilizationBroker *busiest = NULL;
    for (guint i = 0; i < utilization->brokers->len; i++) {
        const UtilizationBroker *broker = g_ptr_array_index(utilization->brokers, i);
        if (busiest == NULL || broker->mean > busiest->mean)
            busiest = broker;
    }
    return busiest;
}
