/*
 * scenario_write: a scenario as an editable list of groups and keys, written
 * back as scenario text. `ksim shrink` edits a failing run's scenario (drops
 * faults, shortens them, lowers the workload, shrinks the cluster) and
 * writes each candidate as a file the parser reads like any other.
 *
 * A document starts from a loaded scenario: its groups and keys as the file
 * and the --set assignments wrote them, in file order, with [vary] narrowed
 * to one run's values where a value can be written alone (a value with a
 * comma cannot: its line is kept whole). Comments and blank lines are not
 * kept; scenario_doc_to_text writes a header comment instead.
 */
#ifndef KSIM_SCENARIO_WRITE_H
#define KSIM_SCENARIO_WRITE_H

#include "scenario.h"

#include <glib.h>

typedef struct ScenarioDoc ScenarioDoc;

/* The groups of `scenario`; with `variant`, [vary] narrowed to its values.
 * (transfer full) */
ScenarioDoc *scenario_doc_new(const Scenario *scenario, const ScenarioVariant *variant);
ScenarioDoc *scenario_doc_copy(const ScenarioDoc *doc);
void scenario_doc_free(ScenarioDoc *doc);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ScenarioDoc, scenario_doc_free)

/* The value of `key` in the group named `group` ("scenario", "topic orders",
 * "fault kill"), or NULL when either is absent. (transfer none) */
const char *scenario_doc_get(const ScenarioDoc *doc, const char *group, const char *key);
/* Sets `key = value` in `group`, adding the group at the end when absent. */
void scenario_doc_set(ScenarioDoc *doc, const char *group, const char *key, const char *value);
/* Removes `key` from `group`; FALSE when it was not there. */
gboolean scenario_doc_unset(ScenarioDoc *doc, const char *group, const char *key);
/* Removes the group; FALSE when there was none. */
gboolean scenario_doc_remove_group(ScenarioDoc *doc, const char *group);
/* The names of the groups whose name starts with `prefix` ("fault ",
 * "topic ", "producer "), in document order. (transfer full: free with
 * g_ptr_array_unref) */
GPtrArray *scenario_doc_groups(const ScenarioDoc *doc, const char *prefix);

/* The document as scenario text: `header` (may be NULL) as '#' comment
 * lines, then every group and its keys, a blank line between groups.
 * (transfer full) */
char *scenario_doc_to_text(const ScenarioDoc *doc, const char *header);

/* A duration as a scenario file writes it, exactly: "90s", "250ms",
 * "12345678901ns". (transfer full) */
char *scenario_doc_format_duration(gint64 ns);

#endif
