/*
 * Tests of compare.h: grouping [vary] runs into load curves and finding
 * their knees.
 */
#include "compare.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

/* M/M/1's mean response time 1/(μ − λ) at μ = 1: flat, then vertical. The
 * knee is where x' − y' peaks; computed by hand for these loads. */
static void
test_compare_knee_of_a_queue(void **state)
{
    (void)state;
    const double rho[] = {0.1, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95};
    double y[G_N_ELEMENTS(rho)];
    for (guint i = 0; i < G_N_ELEMENTS(rho); i++)
        y[i] = 1.0 / (1.0 - rho[i]);
    /* x' = (ρ − 0.1)/0.85, y' = (y − 1.111)/18.889: x' − y' is 0.424 at
     * ρ = 0.5, 0.588 at 0.7, 0.618 at 0.8 and 0.471 at 0.9. The knee is
     * ρ = 0.8 (index 4). */
    assert_int_equal(compare_knee(rho, y, G_N_ELEMENTS(rho)), 4);
}

/* A straight line, a concave curve, a falling one and two points have no
 * knee. */
static void
test_compare_no_knee(void **state)
{
    (void)state;
    const double x[] = {1, 2, 3, 4};
    const double line[] = {10, 20, 30, 40};
    const double concave[] = {10, 30, 36, 40};
    const double falling[] = {40, 30, 20, 10};
    const double flat[] = {5, 5, 5, 5};
    assert_int_equal(compare_knee(x, line, 4), -1);
    assert_int_equal(compare_knee(x, concave, 4), -1);
    assert_int_equal(compare_knee(x, falling, 4), -1);
    assert_int_equal(compare_knee(x, flat, 4), -1);
    assert_int_equal(compare_knee(x, line, 2), -1);
    /* Just under COMPARE_KNEE_MIN below the chord: none; just over: one. */
    const double slight[] = {0, 1.0 / 3 - 0.09, 2.0 / 3, 1};
    const double x3[] = {0, 1.0 / 3, 2.0 / 3, 1};
    assert_int_equal(compare_knee(x3, slight, 4), -1);
    const double bent[] = {0, 1.0 / 3 - 0.11, 2.0 / 3, 1};
    assert_int_equal(compare_knee(x3, bent, 4), 1);
}

static const char *const KEYS[] = {"workload.rate", "acks"};

/* Runs varied over a rate and acks, as latency-vs-load.ini varies them: two
 * curves, labelled by acks, in the runs' order, points by rate. */
static void
test_compare_curves_by_other_keys(void **state)
{
    (void)state;
    static const char *const v[][2] = {
        {"9000", "1"}, {"9000", "all"}, {"3000", "1"},  {"3000", "all"},
        {"15000", "1"}, {"15000", "all"}, {"21000", "1"}, {"21000", "all"},
    };
    const double p99[] = {7, 31, 3, 14, 23, 965, 529, 2046};
    CompareRun runs[G_N_ELEMENTS(v)];
    for (guint i = 0; i < G_N_ELEMENTS(v); i++)
        runs[i] = (CompareRun){.label = "r", .keys = KEYS, .values = v[i], .keys_len = 2,
                               .p50_ms = p99[i] / 2, .p99_ms = p99[i]};
    Comparison *c = compare_new(runs, G_N_ELEMENTS(runs));
    assert_non_null(c);
    assert_string_equal(compare_load_key(c), "workload.rate");
    const GPtrArray *curves = compare_curves(c);
    assert_int_equal(curves->len, 2);
    const CompareCurve *one = g_ptr_array_index(curves, 0);
    const CompareCurve *all = g_ptr_array_index(curves, 1);
    assert_string_equal(one->label, "acks=1");
    assert_string_equal(all->label, "acks=all");
    assert_int_equal(one->points->len, 4);
    const double rates[] = {3000, 9000, 15000, 21000};
    const guint run_of_one[] = {2, 0, 4, 6};
    for (guint i = 0; i < 4; i++) {
        const ComparePoint *p = &g_array_index(one->points, ComparePoint, i);
        assert_true(p->x == rates[i]);
        assert_int_equal(p->run, run_of_one[i]);
    }
    /* acks=1: y' = 0, 0.0076, 0.038, 1 against x' = 0, 1/3, 2/3, 1: the
     * knee at 15000 (index 2). acks=all: y' = 0, 0.0083, 0.47, 1: at 9000. */
    assert_int_equal(one->knee, 2);
    assert_int_equal(all->knee, 1);
    compare_free(c);
}

/* A key that is not numeric, or has fewer than three values, gives no
 * curve; a single run, or runs without varied keys, no comparison. */
static void
test_compare_without_load_key(void **state)
{
    (void)state;
    static const char *const acks[][1] = {{"0"}, {"1"}, {"all"}};
    static const char *const *keys = KEYS + 1;
    CompareRun runs[3];
    for (guint i = 0; i < 3; i++)
        runs[i] = (CompareRun){.label = "r", .keys = keys, .values = acks[i], .keys_len = 1,
                               .p50_ms = 1, .p99_ms = 2};
    Comparison *c = compare_new(runs, 3);
    assert_non_null(c);
    assert_null(compare_load_key(c));
    assert_int_equal(compare_curves(c)->len, 0);
    compare_free(c);

    static const char *const two[][1] = {{"1"}, {"2"}, {"2"}};
    for (guint i = 0; i < 3; i++)
        runs[i].values = two[i];
    c = compare_new(runs, 3);
    assert_null(compare_load_key(c));
    compare_free(c);

    assert_null(compare_new(runs, 1));
    runs[0].keys_len = runs[1].keys_len = 0;
    assert_null(compare_new(runs, 2));
}

/* The only varied key numeric: one curve, "all runs"; a run without latency
 * is left out of it; "1e3" and "2.5" are numbers, "10ms" is not. */
static void
test_compare_single_key(void **state)
{
    (void)state;
    static const char *const rate[][1] = {{"1e3"}, {"2.5"}, {"40"}, {"7"}};
    static const char *const *keys = KEYS;
    CompareRun runs[4];
    for (guint i = 0; i < 4; i++)
        runs[i] = (CompareRun){.label = "r", .keys = keys, .values = rate[i], .keys_len = 1,
                               .p50_ms = 1, .p99_ms = 2 + i};
    runs[3].p50_ms = runs[3].p99_ms = -1;
    Comparison *c = compare_new(runs, 4);
    assert_string_equal(compare_load_key(c), "workload.rate");
    const CompareCurve *curve = g_ptr_array_index(compare_curves(c), 0);
    assert_string_equal(curve->label, "all runs");
    assert_int_equal(curve->points->len, 3);
    assert_true(g_array_index(curve->points, ComparePoint, 0).x == 2.5);
    assert_true(g_array_index(curve->points, ComparePoint, 2).x == 1000);
    compare_free(c);

    static const char *const durations[][1] = {{"10ms"}, {"20ms"}, {"30ms"}};
    for (guint i = 0; i < 3; i++)
        runs[i].values = durations[i];
    c = compare_new(runs, 3);
    assert_null(compare_load_key(c));
    compare_free(c);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compare_knee_of_a_queue),
        cmocka_unit_test(test_compare_no_knee),
        cmocka_unit_test(test_compare_curves_by_other_keys),
        cmocka_unit_test(test_compare_without_load_key),
        cmocka_unit_test(test_compare_single_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
