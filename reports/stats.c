/*
 * stats: histograms and time series (see stats.h).
 *
 * Histogram layout (HdrHistogram with a unit of 1 ns). With m the sub-bucket
 * magnitude (2^m >= 2 * 10^digits) and half = 2^(m-1):
 *   bucket 0 holds the values [0, 2^m) one per counter;
 *   bucket b >= 1 holds [half * 2^b, 2^m * 2^b) in `half` counters 2^b wide.
 * A value v lies in bucket b = (64 - m) - clz(v | (2^m - 1)), at sub-bucket
 * s = v >> b, and counter ((b + 1) << (m - 1)) + (s - half). The widest
 * counter of bucket b is 2^b wide and starts at >= half * 2^b, hence the
 * relative error 1 / half. G_MAXINT64 lies in bucket 63 - m, so
 * (65 - m) * half counters cover every non-negative gint64.
 *
 * Histogram invariants (stats_histogram_check_invariants):
 *  1. The counters sum to count_total, and every counter is >= 0.
 *  2. count_total == 0  =>  value_min_ns == G_MAXINT64, value_max_ns == 0,
 *     sum_ns == 0.
 *  3. count_total > 0  =>  value_min_ns <= value_max_ns, and the counters of
 *     value_min_ns and value_max_ns are non-zero, and no counter below the
 *     minimum's or above the maximum's is.
 *
 * Series invariants (stats_series_check_invariants):
 *  1. A window with count 0 has sum, min and max 0 and no histogram.
 *  2. A window with count > 0 has 0 <= min <= max <= sum, and, with
 *     quantiles, a histogram holding exactly `count` values.
 *  3. The last window, if any, is non-empty (windows grow only on an add).
 */
#include "stats.h"

#include "sim_assert.h"

G_STATIC_ASSERT(sizeof(unsigned long long) == sizeof(guint64));

struct StatsHistogram {
    int significant_digits;
    int sub_bucket_magnitude; /* m: bucket 0 holds 2^m values exactly */
    gsize counts_len;
    gint64 count_total;
    gint64 value_min_ns;
    gint64 value_max_ns;
    double sum_ns; /* exact below 2^53 */
    gint64 counts[];
};

static int
magnitude_for_digits(int significant_digits)
{
    gint64 single_unit_max = 2;
    for (int i = 0; i < significant_digits; i++)
        single_unit_max *= 10;
    int magnitude = 0;
    while ((G_GINT64_CONSTANT(1) << magnitude) < single_unit_max)
        magnitude++;
    KSIM_ASSERT(magnitude >= 2);
    KSIM_ASSERT(magnitude < 32);
    return magnitude;
}

static inline gint64
half_count(const StatsHistogram *h)
{
    return G_GINT64_CONSTANT(1) << (h->sub_bucket_magnitude - 1);
}

static inline int
bucket_of(const StatsHistogram *h, gint64 value_ns)
{
    guint64 mask = (G_GUINT64_CONSTANT(1) << h->sub_bucket_magnitude) - 1;
    int leading_zeros = __builtin_clzll((unsigned long long)((guint64)value_ns | mask));
    return (64 - h->sub_bucket_magnitude) - leading_zeros;
}

static gsize
index_of(const StatsHistogram *h, gint64 value_ns)
{
    KSIM_ASSERT(value_ns >= 0);
    int bucket = bucket_of(h, value_ns);
    gint64 sub_bucket = value_ns >> bucket;
    gint64 index =
        ((gint64)(bucket + 1) << (h->sub_bucket_magnitude - 1)) + (sub_bucket - half_count(h));
    KSIM_ASSERT(index >= 0);
    KSIM_ASSERT((gsize)index < h->counts_len);
    return (gsize)index;
}

/* The lowest value of counter `index`. */
static gint64
value_at_index(const StatsHistogram *h, gsize index)
{
    KSIM_ASSERT(index < h->counts_len);
    gint64 bucket = (gint64)(index >> (h->sub_bucket_magnitude - 1)) - 1;
    gint64 sub_bucket = (gint64)(index & (gsize)(half_count(h) - 1)) + half_count(h);
    if (bucket < 0) {
        sub_bucket -= half_count(h);
        bucket = 0;
    }
    return sub_bucket << bucket;
}

StatsHistogram *
stats_histogram_new(int significant_digits)
{
    KSIM_ASSERT(significant_digits >= STATS_DIGITS_MIN);
    KSIM_ASSERT(significant_digits <= STATS_DIGITS_MAX);
    int magnitude = magnitude_for_digits(significant_digits);
    gsize counts_len = (gsize)(65 - magnitude) << (magnitude - 1);
    StatsHistogram *h = g_malloc0(sizeof(StatsHistogram) + counts_len * sizeof(gint64));
    h->significant_digits = significant_digits;
    h->sub_bucket_magnitude = magnitude;
    h->counts_len = counts_len;
    h->value_min_ns = G_MAXINT64;
    h->value_max_ns = 0;
    return h;
}

void
stats_histogram_free(StatsHistogram *h)
{
    g_free(h);
}

void
stats_histogram_record_n(StatsHistogram *h, gint64 value_ns, gint64 count)
{
    KSIM_ASSERT(h != NULL);
    KSIM_ASSERT(value_ns >= 0);
    KSIM_ASSERT(count >= 0);
    if (count == 0)
        return;
    KSIM_ASSERT(h->count_total <= G_MAXINT64 - count);
    h->counts[index_of(h, value_ns)] += count;
    h->count_total += count;
    h->sum_ns += (double)value_ns * (double)count;
    h->value_min_ns = MIN(h->value_min_ns, value_ns);
    h->value_max_ns = MAX(h->value_max_ns, value_ns);
}

void
stats_histogram_record(StatsHistogram *h, gint64 value_ns)
{
    stats_histogram_record_n(h, value_ns, 1);
}

void
stats_histogram_merge(StatsHistogram *dst, const StatsHistogram *src)
{
    KSIM_ASSERT(dst != NULL);
    KSIM_ASSERT(src != NULL);
    KSIM_ASSERT(dst->significant_digits == src->significant_digits);
    KSIM_ASSERT(dst->counts_len == src->counts_len);
    if (src->count_total == 0)
        return;
    KSIM_ASSERT(dst->count_total <= G_MAXINT64 - src->count_total);
    for (gsize i = 0; i < src->counts_len; i++)
        dst->counts[i] += src->counts[i];
    dst->count_total += src->count_total;
    dst->sum_ns += src->sum_ns;
    dst->value_min_ns = MIN(dst->value_min_ns, src->value_min_ns);
    dst->value_max_ns = MAX(dst->value_max_ns, src->value_max_ns);
}

gint64
stats_histogram_count(const StatsHistogram *h)
{
    KSIM_ASSERT(h != NULL);
    return h->count_total;
}

gint64
stats_histogram_min(const StatsHistogram *h)
{
    KSIM_ASSERT(h != NULL);
    return h->count_total == 0 ? 0 : h->value_min_ns;
}

gint64
stats_histogram_max(const StatsHistogram *h)
{
    KSIM_ASSERT(h != NULL);
    return h->value_max_ns;
}

double
stats_histogram_mean(const StatsHistogram *h)
{
    KSIM_ASSERT(h != NULL);
    return h->count_total == 0 ? 0.0 : h->sum_ns / (double)h->count_total;
}

int
stats_histogram_significant_digits(const StatsHistogram *h)
{
    KSIM_ASSERT(h != NULL);
    return h->significant_digits;
}

gint64
stats_histogram_lowest_equivalent(const StatsHistogram *h, gint64 value_ns)
{
    KSIM_ASSERT(h != NULL);
    return value_at_index(h, index_of(h, value_ns));
}

gint64
stats_histogram_highest_equivalent(const StatsHistogram *h, gint64 value_ns)
{
    gint64 lowest = stats_histogram_lowest_equivalent(h, value_ns);
    gint64 width = G_GINT64_CONSTANT(1) << bucket_of(h, value_ns);
    /* lowest + width - 1 cannot overflow: for G_MAXINT64 it is G_MAXINT64. */
    return lowest + (width - 1);
}

gsize
stats_histogram_memory_bytes(const StatsHistogram *h)
{
    KSIM_ASSERT(h != NULL);
    return sizeof(StatsHistogram) + h->counts_len * sizeof(gint64);
}

void
stats_histogram_iter_init(StatsHistogramIter *iter, const StatsHistogram *h)
{
    KSIM_ASSERT(iter != NULL);
    KSIM_ASSERT(h != NULL);
    iter->h = h;
    iter->index = 0;
    iter->count_cumulative = 0;
}

gboolean
stats_histogram_iter_next(StatsHistogramIter *iter, StatsBucket *out)
{
    const StatsHistogram *h = iter->h;
    KSIM_ASSERT(out != NULL);
    KSIM_ASSERT(iter->count_cumulative <= h->count_total);
    /* Stop early once every value was seen, so iterating a histogram of
     * small values does not scan the empty high buckets. */
    while (iter->index < h->counts_len && iter->count_cumulative < h->count_total) {
        gsize index = iter->index++;
        if (h->counts[index] == 0)
            continue;
        gint64 lowest = value_at_index(h, index);
        iter->count_cumulative += h->counts[index];
        out->value_lowest_ns = lowest;
        out->value_highest_ns = MIN(stats_histogram_highest_equivalent(h, lowest), h->value_max_ns);
        out->count = h->counts[index];
        out->count_cumulative = iter->count_cumulative;
        return TRUE;
    }
    return FALSE;
}

gint64
stats_histogram_quantile(const StatsHistogram *h, double q)
{
    KSIM_ASSERT(h != NULL);
    KSIM_ASSERT(q >= 0.0);
    KSIM_ASSERT(q <= 1.0);
    if (h->count_total == 0)
        return 0;
    if (q <= 0.0)
        return h->value_min_ns;
    gint64 rank = (gint64)(q * (double)h->count_total + 0.5);
    rank = CLAMP(rank, 1, h->count_total);
    StatsHistogramIter iter;
    StatsBucket bucket;
    stats_histogram_iter_init(&iter, h);
    while (stats_histogram_iter_next(&iter, &bucket)) {
        if (bucket.count_cumulative >= rank)
            return bucket.value_highest_ns;
    }
    KSIM_ASSERT(!"the counters sum to count_total");
    return h->value_max_ns;
}

void
stats_histogram_cdf(const StatsHistogram *h, GArray *out_points)
{
    KSIM_ASSERT(h != NULL);
    KSIM_ASSERT(out_points != NULL);
    KSIM_ASSERT(g_array_get_element_size(out_points) == sizeof(StatsCdfPoint));
    StatsHistogramIter iter;
    StatsBucket bucket;
    stats_histogram_iter_init(&iter, h);
    while (stats_histogram_iter_next(&iter, &bucket)) {
        StatsCdfPoint point = {
            .value_ns = bucket.value_highest_ns,
            .fraction = (double)bucket.count_cumulative / (double)h->count_total,
        };
        g_array_append_val(out_points, point);
    }
}

void
stats_histogram_check_invariants(const StatsHistogram *h)
{
    KSIM_ASSERT(h != NULL);
    gint64 total = 0;
    for (gsize i = 0; i < h->counts_len; i++) {
        KSIM_ASSERT(h->counts[i] >= 0);
        total += h->counts[i];
    }
    KSIM_ASSERT(total == h->count_total);
    if (h->count_total == 0) {
        KSIM_ASSERT(h->value_min_ns == G_MAXINT64);
        KSIM_ASSERT(h->value_max_ns == 0);
        KSIM_ASSERT(h->sum_ns == 0.0);
        return;
    }
    gsize index_min = index_of(h, h->value_min_ns);
    gsize index_max = index_of(h, h->value_max_ns);
    KSIM_ASSERT(index_min <= index_max);
    KSIM_ASSERT(h->counts[index_min] > 0);
    KSIM_ASSERT(h->counts[index_max] > 0);
    for (gsize i = 0; i < index_min; i++)
        KSIM_ASSERT(h->counts[i] == 0);
    for (gsize i = index_max + 1; i < h->counts_len; i++)
        KSIM_ASSERT(h->counts[i] == 0);
}

/* ---- Time series ---- */

typedef struct {
    gint64 count;
    gint64 sum;
    gint64 min;
    gint64 max;
    StatsHistogram *histogram; /* owned; NULL without quantiles or events */
} SeriesWindow;

struct StatsSeries {
    gint64 window_ns;
    int significant_digits; /* 0: no per-window histograms */
    GArray *windows;        /* of SeriesWindow */
};

static void
series_window_clear(gpointer data)
{
    SeriesWindow *window = data;
    g_clear_pointer(&window->histogram, stats_histogram_free);
}

StatsSeries *
stats_series_new(gint64 window_ns)
{
    KSIM_ASSERT(window_ns > 0);
    StatsSeries *series = g_new0(StatsSeries, 1);
    series->window_ns = window_ns;
    series->windows = g_array_new(FALSE, TRUE, sizeof(SeriesWindow));
    g_array_set_clear_func(series->windows, series_window_clear);
    return series;
}

StatsSeries *
stats_series_new_with_quantiles(gint64 window_ns, int significant_digits)
{
    KSIM_ASSERT(significant_digits >= STATS_DIGITS_MIN);
    KSIM_ASSERT(significant_digits <= STATS_DIGITS_MAX);
    StatsSeries *series = stats_series_new(window_ns);
    series->significant_digits = significant_digits;
    return series;
}

void
stats_series_free(StatsSeries *series)
{
    if (series == NULL)
        return;
    g_array_unref(series->windows);
    g_free(series);
}

static SeriesWindow *
series_window(const StatsSeries *series, guint index)
{
    KSIM_ASSERT(series != NULL);
    KSIM_ASSERT(index < series->windows->len);
    return &g_array_index(series->windows, SeriesWindow, index);
}

void
stats_series_add(StatsSeries *series, gint64 time_ns, gint64 value)
{
    KSIM_ASSERT(series != NULL);
    KSIM_ASSERT(time_ns >= 0);
    KSIM_ASSERT(value >= 0);
    gint64 index = time_ns / series->window_ns;
    KSIM_ASSERT(index < (gint64)STATS_SERIES_WINDOWS_MAX);
    if ((guint)index >= series->windows->len)
        g_array_set_size(series->windows, (guint)index + 1);
    SeriesWindow *window = series_window(series, (guint)index);
    KSIM_ASSERT(window->sum <= G_MAXINT64 - value);
    window->min = window->count == 0 ? value : MIN(window->min, value);
    window->max = MAX(window->max, value);
    window->sum += value;
    window->count++;
    if (series->significant_digits == 0)
        return;
    if (window->histogram == NULL)
        window->histogram = stats_histogram_new(series->significant_digits);
    stats_histogram_record(window->histogram, value);
}

gint64
stats_series_window_ns(const StatsSeries *series)
{
    KSIM_ASSERT(series != NULL);
    return series->window_ns;
}

guint
stats_series_window_count(const StatsSeries *series)
{
    KSIM_ASSERT(series != NULL);
    return series->windows->len;
}

gint64
stats_series_window_start_ns(const StatsSeries *series, guint index)
{
    KSIM_ASSERT(series != NULL);
    KSIM_ASSERT(index < STATS_SERIES_WINDOWS_MAX);
    return (gint64)index * series->window_ns;
}

gint64
stats_series_count(const StatsSeries *series, guint index)
{
    return series_window(series, index)->count;
}

gint64
stats_series_sum(const StatsSeries *series, guint index)
{
    return series_window(series, index)->sum;
}

gint64
stats_series_min(const StatsSeries *series, guint index)
{
    return series_window(series, index)->min;
}

gint64
stats_series_max(const StatsSeries *series, guint index)
{
    return series_window(series, index)->max;
}

double
stats_series_rate_per_s(const StatsSeries *series, guint index)
{
    const SeriesWindow *window = series_window(series, index);
    return (double)window->count * 1e9 / (double)series->window_ns;
}

gint64
stats_series_quantile(const StatsSeries *series, guint index, double q)
{
    const SeriesWindow *window = series_window(series, index);
    KSIM_ASSERT(series->significant_digits != 0);
    if (window->histogram == NULL)
        return 0;
    return stats_histogram_quantile(window->histogram, q);
}

double
stats_series_availability(const StatsSeries *series, gint64 start_ns, gint64 end_ns)
{
    KSIM_ASSERT(series != NULL);
    KSIM_ASSERT(start_ns >= 0);
    KSIM_ASSERT(start_ns < end_ns);
    gint64 first = start_ns / series->window_ns;
    gint64 last = (end_ns - 1) / series->window_ns;
    gint64 recorded_end = MIN(last + 1, (gint64)series->windows->len);
    gint64 windows_ok = 0;
    for (gint64 i = first; i < recorded_end; i++) {
        if (series_window(series, (guint)i)->count > 0)
            windows_ok++;
    }
    return (double)windows_ok / (double)(last - first + 1);
}

void
stats_series_check_invariants(const StatsSeries *series)
{
    KSIM_ASSERT(series != NULL);
    KSIM_ASSERT(series->window_ns > 0);
    KSIM_ASSERT(series->windows->len <= STATS_SERIES_WINDOWS_MAX);
    for (guint i = 0; i < series->windows->len; i++) {
        const SeriesWindow *window = series_window(series, i);
        KSIM_ASSERT(window->count >= 0);
        if (window->count == 0) {
            KSIM_ASSERT(window->sum == 0);
            KSIM_ASSERT(window->min == 0);
            KSIM_ASSERT(window->max == 0);
            KSIM_ASSERT(window->histogram == NULL);
            continue;
        }
        KSIM_ASSERT(window->min <= window->max);
        KSIM_ASSERT(window->max <= window->sum);
        if (series->significant_digits != 0)
            KSIM_ASSERT(stats_histogram_count(window->histogram) == window->count);
    }
    if (series->windows->len > 0)
        KSIM_ASSERT(series_window(series, series->windows->len - 1)->count > 0);
}
