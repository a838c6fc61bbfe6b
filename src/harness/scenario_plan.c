/*
 * scenario_plan: parse, validate and expand without simulating (see
 * scenario_plan.h). No state of its own.
 */
#include "scenario_plan.h"

#include "run_estimate.h"
#include "sim_assert.h"

Scenario *
scenario_plan_load(const char *path, const char *bytes, gsize length, const char *display_name,
                   char **sets, gboolean force, GError **error)
{
    KSIM_ASSERT(path != NULL || display_name != NULL);
    g_autoptr(Scenario) scenario = path != NULL
                                       ? scenario_load(path, error)
                                       : scenario_load_bytes(bytes, length, display_name, error);
    if (scenario == NULL)
        return NULL;
    for (guint i = 0; sets != NULL && sets[i] != NULL; i++) {
        if (!scenario_apply_set(scenario, sets[i], error))
            return NULL;
    }
    if (!force && !run_estimate_check(scenario, path != NULL ? path : display_name, error))
        return NULL;
    return g_steal_pointer(&scenario);
}

static void
print_run(const ScenarioVariant *variant, guint n_runs, GString *out)
{
    RunEstimate e = run_estimate_variant(variant);
    g_autofree char *bytes = run_estimate_format_bytes(e.bytes);
    g_string_append_printf(out, "run %u/%u  %s  (estimate: %s, %.3g events)\n",
                           scenario_variant_index(variant) + 1, n_runs,
                           scenario_variant_label(variant), bytes, e.events);
    const GPtrArray *settings = scenario_variant_settings(variant);
    for (guint i = 0; i < settings->len; i++) {
        const ScenarioSetting *setting = g_ptr_array_index(settings, i);
        g_string_append_printf(out, "    %s = %s\n", setting->key, setting->value);
    }
}

void
scenario_plan_print(const Scenario *scenario, char **sets, GString *out)
{
    KSIM_ASSERT(scenario != NULL);
    KSIM_ASSERT(out != NULL);
    const char *path = scenario_path(scenario);
    g_string_append_printf(out, "scenario  %s (%s)\n", scenario_name(scenario),
                           path != NULL ? path : "-");
    g_string_append_printf(out, "sha256    %s\n", scenario_sha256(scenario));
    g_string_append_printf(out, "seed      %" G_GUINT64_FORMAT "\n", scenario_seed(scenario));
    for (guint i = 0; sets != NULL && sets[i] != NULL; i++)
        g_string_append_printf(out, "set       %s\n", sets[i]);
    g_autoptr(GPtrArray) variants = scenario_variants(scenario);
    g_string_append_printf(out, "runs      %u\n", variants->len);
    for (guint i = 0; i < variants->len; i++)
        print_run(g_ptr_array_index(variants, i), variants->len, out);
}

int
scenario_plan_check_bytes(const guint8 *data, gsize size, char **sets, GString *out)
{
    KSIM_ASSERT(data != NULL || size == 0);
    GError *error = NULL;
    g_autoptr(Scenario) scenario =
        scenario_plan_load(NULL, (const char *)data, size, "input.ini", sets, FALSE, &error);
    if (scenario == NULL) {
        KSIM_ASSERT(error != NULL);
        if (out != NULL)
            g_string_append_printf(out, "%s\n", error->message);
        g_error_free(error);
        return 2;
    }
    scenario_check_invariants(scenario);
    GString *listing = out != NULL ? out : g_string_new(NULL);
    scenario_plan_print(scenario, sets, listing);
    if (out == NULL)
        g_string_free(listing, TRUE);
    return 0;
}
