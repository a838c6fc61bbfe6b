/* Tests of src/harness/run_estimate: the estimate grows with what a run
 * simulates, the library's scenarios fit well within the limits, and the
 * runs the parser accepts but no machine can run are refused with the
 * estimate and --force named. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "run_estimate.h"
#include "scenario.h"

#ifndef KSIM_SOURCE_DIR
#error "KSIM_SOURCE_DIR must name the source tree (CMake defines it for tests)"
#endif

#define assert_string_contains(haystack, needle)                                                   \
    do {                                                                                           \
        const char *haystack_ = (haystack);                                                        \
        if (strstr(haystack_, (needle)) == NULL)                                                   \
            fail_msg("'%s' does not contain '%s'", haystack_, (needle));                           \
    } while (0)

/* Topics besides t that a case adds, each with WIDE_PARTITIONS partitions:
 * one topic's assignment znode must fit ZooKeeper's 1 MiB limit, so a run
 * of millions of partitions spreads them over topics. */
#define WIDE_PARTITIONS 65536

/* A scenario with topic t (the given lines), `extra` more topics of
 * WIDE_PARTITIONS partitions, and the producer lines. */
static Scenario *
scenario_with_topics(const char *duration, const char *topic, const char *producer, guint extra)
{
    GString *extras = g_string_new(NULL);
    for (guint i = 0; i < extra; i++)
        g_string_append_printf(extras, "[topic wide%u]\nreplication.factor = 3\npartitions = %u\n",
                               i, WIDE_PARTITIONS);
    g_autofree char *text =
        g_strdup_printf("[scenario]\nduration = %s\nquiet = 0s\n[cluster]\nbrokers = 3\n"
                        "[topic t]\nreplication.factor = 3\n%s\n%s[producer p]\ntopic = t\n%s\n",
                        duration, topic, extras->str, producer);
    g_string_free(extras, TRUE);
    g_autoptr(GError) error = NULL;
    Scenario *scenario = scenario_load_data(text, "estimate.ini", &error);
    if (scenario == NULL)
        fail_msg("%s", error->message);
    return scenario;
}

/* A one-topic scenario with the given cluster, topic and producer lines. */
static Scenario *
scenario_with(const char *duration, const char *topic, const char *producer)
{
    return scenario_with_topics(duration, topic, producer, 0);
}

static RunEstimate
estimate_of(const Scenario *scenario)
{
    g_autoptr(GPtrArray) variants = scenario_variants(scenario);
    assert_int_equal(variants->len, 1);
    return run_estimate_variant(g_ptr_array_index(variants, 0));
}

typedef struct {
    const char *duration;
    const char *topic;
    const char *producer;
    double replicas;
    double records;
    gboolean fits;
    guint extra_topics; /* of WIDE_PARTITIONS partitions each */
} EstimateCase;

static const EstimateCase estimate_cases[] = {
    {"10s", "partitions = 1", "workload.rate = 100", 3, 1000, TRUE, 0},
    {"10s", "partitions = 4", "workload.rate = 100\ninstances = 2", 12, 2000, TRUE, 0},
    {"10s", "partitions = 1", "workload.rate = 100\nworkload.start = 5s", 3, 500, TRUE, 0},
    {"10s", "partitions = 1",
     "workload.rate = 100\nworkload.arrival = bursts\nworkload.burst = 100ms,300ms", 3, 250, TRUE, 0},
    /* The cases: 16 Mi partitions for 2 s (over 256 topics), and 60
     * hours at a high rate. */
    {"2s", "partitions = 65536", "workload.rate = 100", 3.0 * 16777216, 200, FALSE, 255},
    {"60h", "partitions = 1", "workload.rate = 10000", 3, 60.0 * 3600 * 10000, FALSE, 0},
    /* A long run with nothing to send still has brokers ticking. */
    {"100000h", "partitions = 1", "workload.rate = 0", 3, 0, FALSE, 0},
};

/* Replicas and records are counted exactly; the limits split the cases. */
static void
test_run_estimate_counts_replicas_and_records(void **state)
{
    (void)state;
    for (guint i = 0; i < G_N_ELEMENTS(estimate_cases); i++) {
        const EstimateCase *c = &estimate_cases[i];
        g_autoptr(Scenario) scenario =
            scenario_with_topics(c->duration, c->topic, c->producer, c->extra_topics);
        RunEstimate e = estimate_of(scenario);
        assert_float_equal(e.replicas, c->replicas, 1e-6);
        assert_float_equal(e.records, c->records, 1e-6);
        if (run_estimate_fits(&e) != c->fits)
            fail_msg("case %u: %.3g bytes, %.3g events, expected %s", i, e.bytes, e.events,
                     c->fits ? "to fit" : "not to fit");
    }
}

/* More of anything simulated never makes the estimate smaller. */
static void
test_run_estimate_is_monotonic(void **state)
{
    (void)state;
    g_autoptr(Scenario) small = scenario_with("10s", "partitions = 2", "workload.rate = 100");
    g_autoptr(Scenario) more_partitions =
        scenario_with("10s", "partitions = 20", "workload.rate = 100");
    g_autoptr(Scenario) more_rate = scenario_with("10s", "partitions = 2", "workload.rate = 1000");
    g_autoptr(Scenario) longer = scenario_with("100s", "partitions = 2", "workload.rate = 100");
    RunEstimate base = estimate_of(small);
    const Scenario *bigger[] = {more_partitions, more_rate, longer};
    for (guint i = 0; i < G_N_ELEMENTS(bigger); i++) {
        RunEstimate e = estimate_of(bigger[i]);
        assert_true(e.events > base.events);
        assert_true(e.bytes >= base.bytes);
    }
}

/* The message gives the run, the estimate, the limits and --force. */
static void
test_run_estimate_check_names_estimate_and_force(void **state)
{
    (void)state;
    g_autoptr(Scenario) scenario = scenario_with_topics("2s", "partitions = 65536", "", 255);
    g_autoptr(GError) error = NULL;
    assert_false(run_estimate_check(scenario, "big.ini", &error));
    assert_true(g_error_matches(error, KSIM_RUN_ESTIMATE_ERROR, KSIM_RUN_ESTIMATE_ERROR_TOO_LARGE));
    assert_string_contains(error->message, "big.ini: run 1 (default) is too large");
    assert_string_contains(error->message, "384.0 GiB of memory");
    assert_string_contains(error->message, "limits of 8.0 GiB and 1e+09 events");
    assert_string_contains(error->message, "--force runs it anyway");
}

/* The machine's memory: a run estimated above it is warned of, a sweep's
 * jobs are counted together and told how many fit, and a machine of
 * unknown memory warns of nothing. */
static void
test_run_estimate_memory_warning(void **state)
{
    (void)state;
    /* 10 topics of 65536 partitions, RF 3: about 15 GiB. */
    g_autoptr(Scenario) scenario = scenario_with_topics("2s", "partitions = 65536", "", 9);
    double bytes = estimate_of(scenario).bytes;
    assert_true(bytes > 14.0 * (1 << 30) && bytes < 16.0 * (1 << 30));
    gint64 gib = G_GINT64_CONSTANT(1) << 30;
    assert_null(run_estimate_memory_warning(scenario, "big.ini", 1, 24 * gib));
    assert_null(run_estimate_memory_warning(scenario, "big.ini", 1, 0));
    g_autofree char *one = run_estimate_memory_warning(scenario, "big.ini", 1, 8 * gib);
    assert_non_null(one);
    assert_string_contains(one, "big.ini: warning: run 1 (default) is estimated to need");
    assert_string_contains(one, "more than this machine's 8.0 GiB");
    g_autofree char *jobs = run_estimate_memory_warning(scenario, "big.ini", 4, 48 * gib);
    assert_non_null(jobs);
    assert_string_contains(jobs, "4 runs at once may need");
    assert_string_contains(jobs, "more than this machine's 48.0 GiB: --jobs 3 fits");
    assert_null(run_estimate_memory_warning(scenario, "big.ini", 3, 48 * gib));
}

/* Every library scenario's every run is far (ten times) below both limits. */
static void
test_run_estimate_library_fits(void **state)
{
    (void)state;
    g_autofree char *dir_path = g_build_filename(KSIM_SOURCE_DIR, "scenarios", NULL);
    g_autoptr(GDir) dir = g_dir_open(dir_path, 0, NULL);
    assert_non_null(dir);
    guint checked = 0;
    for (const char *name; (name = g_dir_read_name(dir)) != NULL;) {
        if (!g_str_has_suffix(name, ".ini"))
            continue;
        g_autofree char *path = g_build_filename(dir_path, name, NULL);
        g_autoptr(GError) error = NULL;
        g_autoptr(Scenario) scenario = scenario_load(path, &error);
        if (scenario == NULL)
            fail_msg("%s: %s", name, error->message);
        g_autoptr(GPtrArray) variants = scenario_variants(scenario);
        for (guint i = 0; i < variants->len; i++) {
            RunEstimate e = run_estimate_variant(g_ptr_array_index(variants, i));
            assert_true(e.bytes * 10 < (double)RUN_ESTIMATE_BYTES_MAX);
            assert_true(e.events * 10 < RUN_ESTIMATE_EVENTS_MAX);
        }
        assert_true(run_estimate_check(scenario, name, NULL));
        checked++;
    }
    assert_true(checked >= 10);
}

/* Sizes print in binary units. */
static void
test_run_estimate_format_bytes(void **state)
{
    (void)state;
    static const struct {
        double bytes;
        const char *text;
    } cases[] = {
        {12, "12 bytes"},
        {2048, "2.0 KiB"},
        {1.5 * 1024 * 1024, "1.5 MiB"},
        {8.0 * 1024 * 1024 * 1024, "8.0 GiB"},
        {3.0 * 1024 * 1024 * 1024 * 1024, "3.0 TiB"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *text = run_estimate_format_bytes(cases[i].bytes);
        assert_string_equal(text, cases[i].text);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_estimate_counts_replicas_and_records),
        cmocka_unit_test(test_run_estimate_is_monotonic),
        cmocka_unit_test(test_run_estimate_check_names_estimate_and_force),
        cmocka_unit_test(test_run_estimate_memory_warning),
        cmocka_unit_test(test_run_estimate_library_fits),
        cmocka_unit_test(test_run_estimate_format_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
