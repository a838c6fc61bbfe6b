/*
 * `ksim check SCENARIO [--set KEY=VALUE ...] [--force]`: reads a scenario,
 * applies the assignments, validates it, expands its [vary] runs and
 * estimates their size, without simulating; prints the runs `ksim run` would
 * make (label and settings of each). Exit status 0 when the file is valid, 2
 * with the message on bad input (or a run too large, unless --force). Editors
 * and the CI of scenario libraries use it; `ksim run --check` does the same.
 */
#include "commands.h"

#include "scenario_plan.h"

#include <stdio.h>

typedef struct {
    char **sets;
    gboolean force;
    char **rest;
} CheckOptions;

static gboolean
parse_check_options(int *argc, char ***argv, CheckOptions *options)
{
    GOptionEntry entries[] = {
        {"set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &options->sets,
         "override a scenario key, as ksim run --set does", "KEY=VALUE"},
        {"force", 0, 0, G_OPTION_ARG_NONE, &options->force,
         "accept runs whose estimated size is over the limits", NULL},
        {G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &options->rest, NULL, "SCENARIO"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    GOptionContext *context =
        g_option_context_new("- validate a scenario and list its runs, without running");
    g_option_context_add_main_entries(context, entries, NULL);
    GError *error = NULL;
    gboolean ok = g_option_context_parse(context, argc, argv, &error);
    if (!ok)
        fprintf(stderr, "ksim check: %s\n", error->message);
    else if (options->rest == NULL || options->rest[0] == NULL || options->rest[1] != NULL) {
        fprintf(stderr, "ksim check: give exactly one scenario file (see 'ksim check --help')\n");
        ok = FALSE;
    }
    g_clear_error(&error);
    g_option_context_free(context);
    return ok;
}

int
cmd_check_scenario(const char *path, char **sets, gboolean force, const char *command)
{
    GError *error = NULL;
    g_autoptr(Scenario) scenario = scenario_plan_load(path, NULL, 0, NULL, sets, force, &error);
    if (scenario == NULL) {
        fprintf(stderr, "%s: %s\n", command, error->message);
        g_error_free(error);
        return 2;
    }
    g_autoptr(GString) out = g_string_new(NULL);
    scenario_plan_print(scenario, sets, out);
    fputs(out->str, stdout);
    printf("ok        %s is valid\n", path);
    return 0;
}

int
cmd_check(int argc, char **argv)
{
    CheckOptions options = {0};
    int status = 2;
    if (parse_check_options(&argc, &argv, &options))
        status = cmd_check_scenario(options.rest[0], options.sets, options.force, "ksim check");
    g_strfreev(options.sets);
    g_strfreev(options.rest);
    return status;
}
