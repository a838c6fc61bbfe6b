/*
 * stats: latency histograms with a fixed relative error, and per-window time
 * series, for the reports of a run.
 *
 * StatsHistogram follows HdrHistogram: a value v >= 0 falls in a bucket whose
 * width is a power of two, chosen so that every value is known to within a
 * relative error of 10^-significant_digits. Values below 2^m (m the sub-bucket
 * magnitude, e.g. 256 for two digits) are recorded exactly. The histogram
 * covers every non-negative gint64 (0 ns .. 292 years) with one fixed array of
 * counters, so its memory does not depend on how many values it records:
 *
 *   significant_digits  relative error  counters  memory
 *   1                   1/16            960        ~8 KiB
 *   2                   1/128           7296       ~57 KiB
 *   3                   1/1024          55296      ~432 KiB
 *
 * Count, minimum and maximum are exact; the mean is exact while the sum of all
 * recorded values stays below 2^53 (about 104 days of latency in nanoseconds),
 * because it is kept in a double. Quantiles are HdrHistogram's: the value at
 * quantile q is the highest value equivalent to the recorded value of rank
 * max(1, round(q * count)) in ascending order, never above the exact maximum.
 * It is therefore at least the exact quantile and at most the exact quantile
 * plus its relative error.
 *
 * StatsSeries buckets (time_ns, value) pairs into fixed windows of virtual
 * time, keeping count, sum, min and max per window, and optionally a small
 * histogram per window for per-window quantiles. Events may arrive in any
 * order. Memory is proportional to the number of windows up to the latest
 * event, which is bounded by STATS_SERIES_WINDOWS_MAX.
 *
 * Nothing here reads a clock or draws randomness.
 */
#ifndef STATS_H
#define STATS_H

#include <glib.h>

/* ---- Histogram ---- */

typedef struct StatsHistogram StatsHistogram;

/* The accepted range of significant decimal digits; three digits already cost
 * 432 KiB per histogram, so more is refused. */
#define STATS_DIGITS_MIN 1
#define STATS_DIGITS_MAX 3

/* Returns a new empty histogram (transfer full). `significant_digits` is in
 * [STATS_DIGITS_MIN, STATS_DIGITS_MAX]; out of range is a programming error. */
StatsHistogram *stats_histogram_new(int significant_digits);

/* Frees the histogram; accepts NULL. */
void stats_histogram_free(StatsHistogram *h);

/* Records one value (value_ns >= 0). */
void stats_histogram_record(StatsHistogram *h, gint64 value_ns);

/* Records `count` (>= 0) occurrences of one value. */
void stats_histogram_record_n(StatsHistogram *h, gint64 value_ns, gint64 count);

/* Adds every value of `src` to `dst`; both must have the same
 * significant_digits. `src` is unchanged. */
void stats_histogram_merge(StatsHistogram *dst, const StatsHistogram *src);

/* Number of values recorded. */
gint64 stats_histogram_count(const StatsHistogram *h);

/* Exact smallest and largest recorded values; 0 when empty. */
gint64 stats_histogram_min(const StatsHistogram *h);
gint64 stats_histogram_max(const StatsHistogram *h);

/* Mean of the recorded values; 0.0 when empty. */
double stats_histogram_mean(const StatsHistogram *h);

/* The value at quantile q in [0, 1]: the highest value equivalent to the
 * recorded value of rank max(1, round(q * count)), clamped to the exact max.
 * q == 0 gives the exact min and q == 1 the exact max; 0 when empty. */
gint64 stats_histogram_quantile(const StatsHistogram *h, double q);

/* The significant digits the histogram was created with. */
int stats_histogram_significant_digits(const StatsHistogram *h);

/* The smallest and largest values that share value_ns's bucket: any recorded
 * value is reported as somewhere in [lowest, highest]. */
gint64 stats_histogram_lowest_equivalent(const StatsHistogram *h, gint64 value_ns);
gint64 stats_histogram_highest_equivalent(const StatsHistogram *h, gint64 value_ns);

/* Bytes owned by the histogram; constant for a given significant_digits. */
gsize stats_histogram_memory_bytes(const StatsHistogram *h);

/* One non-empty bucket, as the iterator yields it. */
typedef struct {
    gint64 value_lowest_ns;  /* lowest value of the bucket */
    gint64 value_highest_ns; /* highest value of the bucket, clamped to the exact max */
    gint64 count;            /* values in this bucket */
    gint64 count_cumulative; /* values in this bucket and every lower one */
} StatsBucket;

/* Iterates the non-empty buckets in ascending value order:
 *
 *   StatsHistogramIter iter;
 *   StatsBucket bucket;
 *   stats_histogram_iter_init(&iter, h);
 *   while (stats_histogram_iter_next(&iter, &bucket))
 *       ...
 *
 * The histogram must not change during the iteration. */
typedef struct {
    const StatsHistogram *h;
    gsize index;
    gint64 count_cumulative;
} StatsHistogramIter;

void stats_histogram_iter_init(StatsHistogramIter *iter, const StatsHistogram *h);
gboolean stats_histogram_iter_next(StatsHistogramIter *iter, StatsBucket *out);

/* One point of a cumulative distribution. */
typedef struct {
    gint64 value_ns; /* highest value of a bucket, clamped to the exact max */
    double fraction; /* share of values <= value_ns, in (0, 1] */
} StatsCdfPoint;

/* Appends one StatsCdfPoint per non-empty bucket to `out_points` (a GArray of
 * StatsCdfPoint, caller-owned), in ascending value order; the last point has
 * fraction 1.0. Appends nothing when the histogram is empty. */
void stats_histogram_cdf(const StatsHistogram *h, GArray *out_points);

/* Checks the counters against count, min and max; O(counters), for tests. */
void stats_histogram_check_invariants(const StatsHistogram *h);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(StatsHistogram, stats_histogram_free)

/* ---- Time series ---- */

typedef struct StatsSeries StatsSeries;

/* The most windows a series holds; an event past it is a programming error
 * (e.g. one hour of 1 ms windows is 3.6 million). */
#define STATS_SERIES_WINDOWS_MAX (1u << 23)

/* Returns a new series of windows of `window_ns` (> 0) nanoseconds each:
 * window i covers [i * window_ns, (i + 1) * window_ns). Transfer full. */
StatsSeries *stats_series_new(gint64 window_ns);

/* Like stats_series_new, and also keeps a histogram of `significant_digits`
 * per non-empty window so stats_series_quantile works. Each such window costs
 * the memory of one histogram (see the table above). */
StatsSeries *stats_series_new_with_quantiles(gint64 window_ns, int significant_digits);

/* Frees the series; accepts NULL. */
void stats_series_free(StatsSeries *series);

/* Adds one event with `value` (>= 0) at time_ns (>= 0), e.g. value 1 per
 * acknowledged record, or the record's latency in ns. */
void stats_series_add(StatsSeries *series, gint64 time_ns, gint64 value);

/* The window length given at creation. */
gint64 stats_series_window_ns(const StatsSeries *series);

/* Number of windows from time 0 up to and including the latest event's
 * window; 0 while empty. Windows without events in between count. */
guint stats_series_window_count(const StatsSeries *series);

/* The start of window `index` in ns. */
gint64 stats_series_window_start_ns(const StatsSeries *series, guint index);

/* Per-window figures; `index` < stats_series_window_count. Min and max are 0
 * for a window without events. */
gint64 stats_series_count(const StatsSeries *series, guint index);
gint64 stats_series_sum(const StatsSeries *series, guint index);
gint64 stats_series_min(const StatsSeries *series, guint index);
gint64 stats_series_max(const StatsSeries *series, guint index);

/* The window's count per virtual second, e.g. acknowledged records/s. */
double stats_series_rate_per_s(const StatsSeries *series, guint index);

/* The window's value at quantile q (see stats_histogram_quantile); 0 for an
 * empty window. The series must have been made with quantiles. */
gint64 stats_series_quantile(const StatsSeries *series, guint index, double q);

/* Availability over [start_ns, end_ns): the share, in [0, 1], of the windows
 * overlapping that span which hold at least one event. With one event per
 * successful produce, it is the share of time in which produces succeeded.
 * Windows past the latest event count as empty. Requires start_ns < end_ns. */
double stats_series_availability(const StatsSeries *series, gint64 start_ns, gint64 end_ns);

/* Checks per-window consistency; O(windows), for tests. */
void stats_series_check_invariants(const StatsSeries *series);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(StatsSeries, stats_series_free)

#endif
