/*
 * scenario_plan: what `ksim check` does, as functions: read a scenario,
 * apply --set assignments, validate it, expand the [vary] runs and estimate
 * their size, without simulating anything; and list the runs it would make.
 *
 * scenario_plan_check_bytes is the whole of it on a buffer of bytes, the
 * entry point of the parser's fuzz target (tests/fuzz/), so the fuzzer and
 * the command share one path from bytes to verdict.
 */
#ifndef KSIM_SCENARIO_PLAN_H
#define KSIM_SCENARIO_PLAN_H

#include "scenario.h"

#include <glib.h>

/* Loads `path` (or `length` bytes at `bytes` when `path` is NULL; then
 * `display_name` stands for the file), applies every "KEY=VALUE" of `sets` in
 * order, and unless `force`, refuses a run over run_estimate's limits. NULL
 * with a message naming file, line, group and key on bad input.
 * (transfer full) */
Scenario *scenario_plan_load(const char *path, const char *bytes, gsize length,
                             const char *display_name, char **sets, gboolean force, GError **error);

/* Appends the runs `scenario` would make to `out`: the scenario's name, file
 * hash, seed and --set assignments, then one line per run with its label,
 * each varied setting, and its estimated size. */
void scenario_plan_print(const Scenario *scenario, char **sets, GString *out);

/* The whole check on bytes: 0 when they are a valid scenario whose runs are
 * listed in `out` (which may be NULL), 2 with the message in `out` otherwise.
 * Never aborts on any input; `sets` as above. */
int scenario_plan_check_bytes(const guint8 *data, gsize size, char **sets, GString *out);

#endif
