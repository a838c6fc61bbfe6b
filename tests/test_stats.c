/* Tests of reports/stats: histogram quantiles against exactly computed ones,
 * merging, edge cases, CDF points, and the per-window time series. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>

#include "stats.h"

#define HOUR_NS (G_GINT64_CONSTANT(3600) * G_GINT64_CONSTANT(1000000000))
#define SAMPLES 20000

/* cmocka 1.1.5 has no assert_double_equal. */
#define assert_close(got, expected, tolerance)                                                     \
    do {                                                                                           \
        double got_ = (got), expected_ = (expected);                                               \
        if (!(fabs(got_ - expected_) <= (tolerance)))                                              \
            fail_msg("%.17g is not within %g of %.17g", got_, (double)(tolerance), expected_);     \
    } while (0)

static const double quantiles[] = {0.0,  0.0001, 0.001, 0.01,  0.1,    0.25,    0.5,
                                   0.75, 0.9,    0.99,  0.999, 0.9999, 0.99999, 1.0};

typedef gint64 (*DrawFn)(GRand *rand);

static gint64
draw_uniform_small(GRand *rand)
{
    return g_rand_int_range(rand, 0, 1000);
}

static gint64
draw_uniform_wide(GRand *rand)
{
    return (gint64)g_rand_double_range(rand, 1e3, 1e10);
}

static gint64
draw_log_uniform(GRand *rand)
{
    return (gint64)exp(g_rand_double_range(rand, log(1.0), log((double)HOUR_NS)));
}

static gint64
draw_exponential(GRand *rand)
{
    return (gint64)(-5e6 * log(1.0 - g_rand_double(rand)));
}

static gint64
draw_bimodal(GRand *rand)
{
    if (g_rand_int_range(rand, 0, 10) == 0)
        return g_rand_int_range(rand, 400000000, 600000000);
    return g_rand_int_range(rand, 1900000, 2100000);
}

static gint64
draw_constant(GRand *rand)
{
    (void)rand;
    return 12345678;
}

typedef struct {
    const char *name;
    DrawFn draw;
} Distribution;

static const Distribution distributions[] = {
    {"uniform_small", draw_uniform_small},
    {"uniform_wide", draw_uniform_wide},
    {"log_uniform", draw_log_uniform},
    {"exponential", draw_exponential},
    {"bimodal", draw_bimodal},
    {"constant", draw_constant},
};

static gint
compare_gint64(gconstpointer a, gconstpointer b)
{
    gint64 x = *(const gint64 *)a;
    gint64 y = *(const gint64 *)b;
    return (x > y) - (x < y);
}

/* Draws SAMPLES values into a new array, sorted. */
static GArray *
draw_sorted(const Distribution *distribution, guint32 seed)
{
    g_autoptr(GRand) rand = g_rand_new_with_seed(seed);
    GArray *values = g_array_sized_new(FALSE, FALSE, sizeof(gint64), SAMPLES);
    for (guint i = 0; i < SAMPLES; i++) {
        gint64 value = distribution->draw(rand);
        g_array_append_val(values, value);
    }
    g_array_sort(values, compare_gint64);
    return values;
}

/* The exact value HdrHistogram's quantile q stands for: rank max(1, round(q n)). */
static gint64
exact_quantile(const GArray *sorted, double q)
{
    gint64 n = sorted->len;
    if (q == 0.0)
        return g_array_index(sorted, gint64, 0);
    gint64 rank = CLAMP((gint64)(q * (double)n + 0.5), 1, n);
    return g_array_index(sorted, gint64, rank - 1);
}

static void
check_quantile(const StatsHistogram *h, const GArray *sorted, double q, const char *name)
{
    gint64 exact = exact_quantile(sorted, q);
    gint64 got = stats_histogram_quantile(h, q);
    double bound = pow(10.0, -stats_histogram_significant_digits(h));
    if (got < exact || (double)(got - exact) > (double)exact * bound)
        fail_msg("%s digits=%d q=%g: got %" G_GINT64_FORMAT " exact %" G_GINT64_FORMAT, name,
                 stats_histogram_significant_digits(h), q, got, exact);
    assert_true(got <= stats_histogram_max(h));
    gint64 expected = MIN(stats_histogram_highest_equivalent(h, exact), stats_histogram_max(h));
    if (q == 0.0)
        expected = exact;
    assert_int_equal(got, expected);
}

static void
check_against_sorted(const StatsHistogram *h, const GArray *sorted, const char *name)
{
    gint64 n = sorted->len;
    assert_int_equal(stats_histogram_count(h), n);
    assert_int_equal(stats_histogram_min(h), g_array_index(sorted, gint64, 0));
    assert_int_equal(stats_histogram_max(h), g_array_index(sorted, gint64, n - 1));
    for (gsize i = 0; i < G_N_ELEMENTS(quantiles); i++)
        check_quantile(h, sorted, quantiles[i], name);
    stats_histogram_check_invariants(h);
}

static void
test_stats_quantiles_match_exact(void **state)
{
    /* Goal: every quantile of every distribution is within the relative error
     * above the exactly computed one, for each number of digits. */
    (void)state;
    for (gsize d = 0; d < G_N_ELEMENTS(distributions); d++) {
        g_autoptr(GArray) sorted = draw_sorted(&distributions[d], 1000 + (guint32)d);
        for (int digits = STATS_DIGITS_MIN; digits <= STATS_DIGITS_MAX; digits++) {
            g_autoptr(StatsHistogram) h = stats_histogram_new(digits);
            double sum = 0.0;
            for (guint i = 0; i < sorted->len; i++) {
                stats_histogram_record(h, g_array_index(sorted, gint64, i));
                sum += (double)g_array_index(sorted, gint64, i);
            }
            check_against_sorted(h, sorted, distributions[d].name);
            assert_close(stats_histogram_mean(h), sum / SAMPLES, 1e-6 * sum / SAMPLES);
        }
    }
}

static void
test_stats_equivalent_range_is_within_relative_error(void **state)
{
    /* Goal: each value's bucket contains it, is exact below 2 * 10^digits, and is no
     * wider than the relative error allows, across the whole gint64 range. */
    (void)state;
    g_autoptr(GRand) rand = g_rand_new_with_seed(7);
    for (int digits = STATS_DIGITS_MIN; digits <= STATS_DIGITS_MAX; digits++) {
        g_autoptr(StatsHistogram) h = stats_histogram_new(digits);
        double bound = pow(10.0, -digits);
        for (int i = 0; i < 200000; i++) {
            int shift = g_rand_int_range(rand, 0, 63);
            guint64 high = g_rand_int(rand);
            guint64 low = g_rand_int(rand);
            gint64 value = (gint64)(((high << 32) | low) >> (1 + shift));
            gint64 lowest = stats_histogram_lowest_equivalent(h, value);
            gint64 highest = stats_histogram_highest_equivalent(h, value);
            assert_true(lowest <= value);
            assert_true(value <= highest);
            if ((double)value < 2.0 / bound)
                assert_int_equal(lowest, highest);
            assert_true((double)(highest - lowest) <= (double)lowest * bound);
        }
        assert_int_equal(stats_histogram_highest_equivalent(h, G_MAXINT64), G_MAXINT64);
        assert_int_equal(stats_histogram_lowest_equivalent(h, 0), 0);
    }
}

static void
test_stats_merge_equals_recording_all(void **state)
{
    /* Goal: merging two halves gives the same counters as recording everything
     * into one histogram, and merging an empty histogram changes nothing. */
    (void)state;
    g_autoptr(GArray) sorted = draw_sorted(&distributions[2], 42);
    g_autoptr(StatsHistogram) whole = stats_histogram_new(2);
    g_autoptr(StatsHistogram) odd = stats_histogram_new(2);
    g_autoptr(StatsHistogram) even = stats_histogram_new(2);
    g_autoptr(StatsHistogram) empty = stats_histogram_new(2);
    for (guint i = 0; i < sorted->len; i++) {
        gint64 value = g_array_index(sorted, gint64, i);
        stats_histogram_record(whole, value);
        stats_histogram_record(i % 2 ? odd : even, value);
    }
    stats_histogram_merge(empty, odd);
    stats_histogram_merge(empty, even);
    stats_histogram_merge(odd, even);
    g_autoptr(StatsHistogram) nothing = stats_histogram_new(2);
    stats_histogram_merge(odd, nothing);
    const StatsHistogram *merged[] = {empty, odd};
    for (gsize m = 0; m < G_N_ELEMENTS(merged); m++) {
        check_against_sorted(merged[m], sorted, "merged");
        for (gsize i = 0; i < G_N_ELEMENTS(quantiles); i++)
            assert_int_equal(stats_histogram_quantile(merged[m], quantiles[i]),
                             stats_histogram_quantile(whole, quantiles[i]));
        assert_close(stats_histogram_mean(merged[m]), stats_histogram_mean(whole),
                     1e-9 * stats_histogram_mean(whole));
    }
    assert_int_equal(stats_histogram_count(even), SAMPLES / 2);
}

static void
test_stats_empty_histogram(void **state)
{
    /* Goal: an empty histogram answers zeros and an empty CDF. */
    (void)state;
    g_autoptr(StatsHistogram) h = stats_histogram_new(2);
    g_autoptr(GArray) points = g_array_new(FALSE, FALSE, sizeof(StatsCdfPoint));
    assert_int_equal(stats_histogram_count(h), 0);
    assert_int_equal(stats_histogram_min(h), 0);
    assert_int_equal(stats_histogram_max(h), 0);
    assert_true(stats_histogram_mean(h) == 0.0);
    assert_int_equal(stats_histogram_quantile(h, 0.0), 0);
    assert_int_equal(stats_histogram_quantile(h, 0.5), 0);
    assert_int_equal(stats_histogram_quantile(h, 1.0), 0);
    stats_histogram_cdf(h, points);
    assert_int_equal(points->len, 0);
    stats_histogram_check_invariants(h);
    stats_histogram_free(NULL);
}

static void
test_stats_single_value_is_exact(void **state)
{
    /* Goal: with one value, from zero to G_MAXINT64, every figure is that value. */
    (void)state;
    static const gint64 values[] = {
        0,         1, 127, 255, 256, 1000001, HOUR_NS, G_GINT64_CONSTANT(1) << 62, G_MAXINT64 - 1,
        G_MAXINT64};
    for (gsize i = 0; i < G_N_ELEMENTS(values); i++) {
        g_autoptr(StatsHistogram) h = stats_histogram_new(2);
        g_autoptr(GArray) points = g_array_new(FALSE, FALSE, sizeof(StatsCdfPoint));
        stats_histogram_record(h, values[i]);
        assert_int_equal(stats_histogram_count(h), 1);
        assert_int_equal(stats_histogram_min(h), values[i]);
        assert_int_equal(stats_histogram_max(h), values[i]);
        assert_true(stats_histogram_mean(h) == (double)values[i]);
        for (gsize q = 0; q < G_N_ELEMENTS(quantiles); q++)
            assert_int_equal(stats_histogram_quantile(h, quantiles[q]), values[i]);
        stats_histogram_cdf(h, points);
        assert_int_equal(points->len, 1);
        assert_int_equal(g_array_index(points, StatsCdfPoint, 0).value_ns, values[i]);
        assert_true(g_array_index(points, StatsCdfPoint, 0).fraction == 1.0);
        stats_histogram_check_invariants(h);
    }
}

static void
test_stats_zeros_and_huge_values(void **state)
{
    /* Goal: zeros and values up to G_MAXINT64 share one histogram correctly. */
    (void)state;
    g_autoptr(StatsHistogram) h = stats_histogram_new(1);
    stats_histogram_record_n(h, 0, 98);
    stats_histogram_record(h, HOUR_NS);
    stats_histogram_record(h, G_MAXINT64);
    assert_int_equal(stats_histogram_count(h), 100);
    assert_int_equal(stats_histogram_min(h), 0);
    assert_int_equal(stats_histogram_quantile(h, 0.5), 0);
    assert_int_equal(stats_histogram_quantile(h, 0.98), 0);
    gint64 p99 = stats_histogram_quantile(h, 0.99);
    assert_true(p99 >= HOUR_NS);
    assert_true((double)(p99 - HOUR_NS) <= (double)HOUR_NS * 0.1);
    assert_int_equal(stats_histogram_quantile(h, 1.0), G_MAXINT64);
    stats_histogram_check_invariants(h);
}

static void
test_stats_record_n_equals_repeated_record(void **state)
{
    /* Goal: record_n(v, n) is n times record(v); record_n(v, 0) does nothing. */
    (void)state;
    g_autoptr(StatsHistogram) bulk = stats_histogram_new(2);
    g_autoptr(StatsHistogram) single = stats_histogram_new(2);
    static const gint64 values[] = {5, 3000, 77777777};
    for (gsize i = 0; i < G_N_ELEMENTS(values); i++) {
        stats_histogram_record_n(bulk, values[i], (gint64)(i + 1) * 100);
        stats_histogram_record_n(bulk, values[i] + 1, 0);
        for (gsize k = 0; k < (i + 1) * 100; k++)
            stats_histogram_record(single, values[i]);
    }
    assert_int_equal(stats_histogram_count(bulk), 600);
    assert_int_equal(stats_histogram_max(bulk), 77777777);
    for (gsize q = 0; q < G_N_ELEMENTS(quantiles); q++)
        assert_int_equal(stats_histogram_quantile(bulk, quantiles[q]),
                         stats_histogram_quantile(single, quantiles[q]));
    assert_true(stats_histogram_mean(bulk) == stats_histogram_mean(single));
    stats_histogram_check_invariants(bulk);
}

static void
test_stats_cdf_points(void **state)
{
    /* Goal: the CDF of exact small values is exact; on random values it rises
     * strictly in value, never falls in fraction, and ends at 1. */
    (void)state;
    g_autoptr(StatsHistogram) h = stats_histogram_new(2);
    g_autoptr(GArray) points = g_array_new(FALSE, FALSE, sizeof(StatsCdfPoint));
    static const gint64 values[] = {3, 1, 2, 1};
    for (gsize i = 0; i < G_N_ELEMENTS(values); i++)
        stats_histogram_record(h, values[i]);
    stats_histogram_cdf(h, points);
    static const StatsCdfPoint expected[] = {{1, 0.5}, {2, 0.75}, {3, 1.0}};
    assert_int_equal(points->len, G_N_ELEMENTS(expected));
    for (gsize i = 0; i < G_N_ELEMENTS(expected); i++) {
        assert_int_equal(g_array_index(points, StatsCdfPoint, i).value_ns, expected[i].value_ns);
        assert_true(g_array_index(points, StatsCdfPoint, i).fraction == expected[i].fraction);
    }
    g_autoptr(GArray) sorted = draw_sorted(&distributions[3], 9);
    g_autoptr(StatsHistogram) random = stats_histogram_new(2);
    for (guint i = 0; i < sorted->len; i++)
        stats_histogram_record(random, g_array_index(sorted, gint64, i));
    g_array_set_size(points, 0);
    stats_histogram_cdf(random, points);
    assert_true(points->len > 10);
    for (guint i = 1; i < points->len; i++) {
        const StatsCdfPoint *prev = &g_array_index(points, StatsCdfPoint, i - 1);
        const StatsCdfPoint *point = &g_array_index(points, StatsCdfPoint, i);
        assert_true(prev->value_ns < point->value_ns);
        assert_true(prev->fraction < point->fraction);
    }
    assert_true(g_array_index(points, StatsCdfPoint, points->len - 1).fraction == 1.0);
    assert_int_equal(g_array_index(points, StatsCdfPoint, points->len - 1).value_ns,
                     stats_histogram_max(random));
}

static void
test_stats_iterator_covers_every_value(void **state)
{
    /* Goal: the bucket iterator visits non-empty buckets in order, and its
     * counts add up to the histogram's count. */
    (void)state;
    g_autoptr(GArray) sorted = draw_sorted(&distributions[4], 3);
    g_autoptr(StatsHistogram) h = stats_histogram_new(2);
    for (guint i = 0; i < sorted->len; i++)
        stats_histogram_record(h, g_array_index(sorted, gint64, i));
    StatsHistogramIter iter;
    StatsBucket bucket;
    gint64 total = 0;
    gint64 previous_highest = -1;
    stats_histogram_iter_init(&iter, h);
    while (stats_histogram_iter_next(&iter, &bucket)) {
        assert_true(bucket.count > 0);
        assert_true(bucket.value_lowest_ns > previous_highest);
        assert_true(bucket.value_lowest_ns <= bucket.value_highest_ns);
        total += bucket.count;
        assert_int_equal(bucket.count_cumulative, total);
        previous_highest = bucket.value_highest_ns;
    }
    assert_int_equal(total, SAMPLES);
    assert_false(stats_histogram_iter_next(&iter, &bucket));
}

static void
test_stats_memory_is_bounded(void **state)
{
    /* Goal: a histogram's memory is fixed by its digits, whatever it records. */
    (void)state;
    static const gsize bytes_max[] = {0, 10 * 1024, 64 * 1024, 512 * 1024};
    for (int digits = STATS_DIGITS_MIN; digits <= STATS_DIGITS_MAX; digits++) {
        g_autoptr(StatsHistogram) h = stats_histogram_new(digits);
        gsize before = stats_histogram_memory_bytes(h);
        assert_true(before <= bytes_max[digits]);
        for (gint64 v = 1; v > 0 && v < G_MAXINT64 / 3; v = v * 3 + 1)
            stats_histogram_record_n(h, v, 1000);
        assert_int_equal(stats_histogram_memory_bytes(h), before);
    }
}

typedef struct {
    gint64 time_ns;
    gint64 value;
} SeriesEvent;

static void
test_stats_series_windows(void **state)
{
    /* Goal: events land in the window of their time, in any order, and each
     * window reports its count, sum, min, max and rate. */
    (void)state;
    static const SeriesEvent events[] = {
        {250000000, 7}, {0, 5}, {99999999, 1}, {100000000, 3}, {260000000, 2}, {50000000, 9},
    };
    static const struct {
        gint64 count, sum, min, max;
    } expected[] = {{3, 15, 1, 9}, {1, 3, 3, 3}, {2, 9, 2, 7}};
    g_autoptr(StatsSeries) series = stats_series_new(100000000);
    assert_int_equal(stats_series_window_count(series), 0);
    for (gsize i = 0; i < G_N_ELEMENTS(events); i++)
        stats_series_add(series, events[i].time_ns, events[i].value);
    stats_series_check_invariants(series);
    assert_int_equal(stats_series_window_count(series), G_N_ELEMENTS(expected));
    for (guint i = 0; i < G_N_ELEMENTS(expected); i++) {
        assert_int_equal(stats_series_window_start_ns(series, i), (gint64)i * 100000000);
        assert_int_equal(stats_series_count(series, i), expected[i].count);
        assert_int_equal(stats_series_sum(series, i), expected[i].sum);
        assert_int_equal(stats_series_min(series, i), expected[i].min);
        assert_int_equal(stats_series_max(series, i), expected[i].max);
        assert_close(stats_series_rate_per_s(series, i), expected[i].count * 10.0, 1e-9);
    }
    assert_int_equal(stats_series_window_ns(series), 100000000);
}

static void
test_stats_series_availability(void **state)
{
    /* Goal: availability is the share of windows in a span holding an event,
     * with windows past the last event counted as empty. */
    (void)state;
    g_autoptr(StatsSeries) series = stats_series_new(1000);
    static const gint64 times[] = {10, 1500, 3999};
    for (gsize i = 0; i < G_N_ELEMENTS(times); i++)
        stats_series_add(series, times[i], 1);
    static const struct {
        gint64 start_ns, end_ns;
        double expected;
    } cases[] = {
        {0, 4000, 0.75}, {0, 5000, 0.6},  {2000, 3000, 0.0}, {1999, 2001, 0.5},
        {0, 1, 1.0},     {0, 10000, 0.3}, {5000, 6000, 0.0}, {3000, 4000, 1.0},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++)
        assert_close(stats_series_availability(series, cases[i].start_ns, cases[i].end_ns),
                     cases[i].expected, 1e-12);
    assert_int_equal(stats_series_count(series, 2), 0);
    assert_int_equal(stats_series_max(series, 2), 0);
    stats_series_check_invariants(series);
}

static void
test_stats_series_quantiles_per_window(void **state)
{
    /* Goal: per-window quantiles equal those of a histogram of that window's
     * values alone. */
    (void)state;
    g_autoptr(GRand) rand = g_rand_new_with_seed(11);
    g_autoptr(StatsSeries) series = stats_series_new_with_quantiles(1000000, 2);
    g_autoptr(StatsHistogram) window1 = stats_histogram_new(2);
    for (int i = 0; i < 5000; i++) {
        gint64 time_ns = g_rand_int_range(rand, 0, 3000000);
        gint64 latency_ns = draw_exponential(rand);
        stats_series_add(series, time_ns, latency_ns);
        if (time_ns / 1000000 == 1)
            stats_histogram_record(window1, latency_ns);
    }
    stats_series_check_invariants(series);
    assert_int_equal(stats_series_count(series, 1), stats_histogram_count(window1));
    for (gsize q = 0; q < G_N_ELEMENTS(quantiles); q++)
        assert_int_equal(stats_series_quantile(series, 1, quantiles[q]),
                         stats_histogram_quantile(window1, quantiles[q]));
    g_autoptr(StatsSeries) sparse = stats_series_new_with_quantiles(10, 1);
    stats_series_add(sparse, 35, 4);
    assert_int_equal(stats_series_quantile(sparse, 0, 0.99), 0);
    assert_int_equal(stats_series_quantile(sparse, 3, 0.99), 4);
    stats_series_free(NULL);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stats_quantiles_match_exact),
        cmocka_unit_test(test_stats_equivalent_range_is_within_relative_error),
        cmocka_unit_test(test_stats_merge_equals_recording_all),
        cmocka_unit_test(test_stats_empty_histogram),
        cmocka_unit_test(test_stats_single_value_is_exact),
        cmocka_unit_test(test_stats_zeros_and_huge_values),
        cmocka_unit_test(test_stats_record_n_equals_repeated_record),
        cmocka_unit_test(test_stats_cdf_points),
        cmocka_unit_test(test_stats_iterator_covers_every_value),
        cmocka_unit_test(test_stats_memory_is_bounded),
        cmocka_unit_test(test_stats_series_windows),
        cmocka_unit_test(test_stats_series_availability),
        cmocka_unit_test(test_stats_series_quantiles_per_window),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
