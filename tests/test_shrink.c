/*
 * shrink and scenario_write: ddmin finds a known 1-minimal cause and asks
 * the same questions whatever the tester's batch size; a scenario document
 * writes text the parser reads back to the same runs, and its edits land.
 */
#include "scenario_write.h"
#include "shrink.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

typedef struct {
    const guint *cause;
    guint cause_len;
    guint asked;
} Tester;

static gboolean
holds_cause(const Tester *t, const GArray *subset)
{
    for (guint c = 0; c < t->cause_len; c++) {
        gboolean found = FALSE;
        for (guint i = 0; i < subset->len; i++)
            found = found || g_array_index(subset, guint, i) == t->cause[c];
        if (!found)
            return FALSE;
    }
    return TRUE;
}

static gint
first_with_cause(void *user_data, const GPtrArray *candidates)
{
    Tester *t = user_data;
    for (guint i = 0; i < candidates->len; i++) {
        const GArray *subset = g_ptr_array_index(candidates, i);
        assert_true(subset->len > 0);
        t->asked++;
        if (holds_cause(t, subset))
            return (gint)i;
    }
    return -1;
}

/* The failure needs items 3 and 9 of twelve: ddmin keeps exactly those. */
static void
test_shrink_ddmin_finds_cause(void **state)
{
    (void)state;
    static const guint causes[][3] = {{3, 9, 0}, {0, 0, 0}, {11, 0, 0}, {2, 5, 7}};
    static const guint lens[] = {2, 1, 1, 3};
    for (guint c = 0; c < G_N_ELEMENTS(lens); c++) {
        Tester t = {causes[c], lens[c], 0};
        g_autoptr(GArray) kept = shrink_ddmin(12, first_with_cause, &t);
        assert_int_equal(kept->len, lens[c]);
        for (guint i = 0; i < kept->len; i++)
            assert_int_equal(g_array_index(kept, guint, i), causes[c][i]);
        assert_true(t.asked <= 12 * 12);
    }
}

/* Nothing smaller fails: ddmin returns every item. */
static void
test_shrink_ddmin_keeps_all_when_needed(void **state)
{
    (void)state;
    static const guint all[] = {0, 1, 2, 3, 4};
    Tester t = {all, 5, 0};
    g_autoptr(GArray) kept = shrink_ddmin(5, first_with_cause, &t);
    assert_int_equal(kept->len, 5);
}

static const char SCENARIO[] = "# a comment\n"
                               "[scenario]\nname = doc\nduration = 20s\n\n"
                               "[cluster]\nbrokers = 3\n\n"
                               "[topic orders]\npartitions = 2\nreplication.factor = 3\n\n"
                               "[producer writer]\ntopic = orders\n\n"
                               "[fault kill]\nat = 5s\naction = crash\ntarget = broker:1\n"
                               "duration = 1s\n\n"
                               "[vary]\nacks = 0, 1, all\n\n"
                               "[expect]\nsafe = lost_write == 0 when acks=all\n";

/* Written back, narrowed to one run and edited, the text parses again. */
static void
test_scenario_doc_round_trip(void **state)
{
    (void)state;
    GError *error = NULL;
    g_autoptr(Scenario) scenario = scenario_load_data(SCENARIO, "doc.ini", &error);
    assert_non_null(scenario);
    assert_true(scenario_apply_set(scenario, "cluster:brokers=4", &error));
    g_autoptr(GPtrArray) variants = scenario_variants(scenario);
    g_autoptr(ScenarioDoc) doc = scenario_doc_new(scenario, g_ptr_array_index(variants, 2));
    assert_string_equal(scenario_doc_get(doc, "cluster", "brokers"), "4");
    assert_string_equal(scenario_doc_get(doc, "vary", "acks"), "all");
    scenario_doc_set(doc, "fault cut", "at", "7s");
    scenario_doc_set(doc, "fault cut", "action", "isolate");
    scenario_doc_set(doc, "fault cut", "target", "broker:2");
    assert_true(scenario_doc_remove_group(doc, "fault kill"));
    assert_false(scenario_doc_remove_group(doc, "fault kill"));
    g_autoptr(GPtrArray) faults = scenario_doc_groups(doc, "fault ");
    assert_int_equal(faults->len, 1);
    assert_string_equal(g_ptr_array_index(faults, 0), "fault cut");
    g_autofree char *text = scenario_doc_to_text(doc, "made by a test\n\nsecond");
    assert_true(g_str_has_prefix(text, "# made by a test\n#\n# second\n"));
    g_autoptr(Scenario) back = scenario_load_data(text, "back.ini", &error);
    if (back == NULL)
        fail_msg("%s\n%s", error->message, text);
    g_autoptr(GPtrArray) runs = scenario_variants(back);
    assert_int_equal(runs->len, 1);
    const ScenarioVariant *run = g_ptr_array_index(runs, 0);
    assert_string_equal(scenario_variant_label(run), "acks=all");
    assert_int_equal(scenario_variant_cluster(run)->brokers, 4);
    const GPtrArray *timeline = scenario_variant_faults(run);
    assert_int_equal(timeline->len, 1);
    const ScenarioFault *cut = g_ptr_array_index(timeline, 0);
    assert_int_equal(cut->action, SCENARIO_ACTION_ISOLATE);
    assert_true(cut->time_ns == G_GINT64_CONSTANT(7000000000));
    g_autofree char *exact = scenario_doc_format_duration(G_GINT64_CONSTANT(12345678901));
    assert_string_equal(exact, "12345678901ns");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shrink_ddmin_finds_cause),
        cmocka_unit_test(test_shrink_ddmin_keeps_all_when_needed),
        cmocka_unit_test(test_scenario_doc_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
