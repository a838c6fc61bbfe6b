/*
 * scenario_expect: [vary] and [expect] (see scenario.h), and the keys both
 * they and --set write bare ("acks") or qualified by a group
 * ("topic orders:min.insync.replicas").
 *
 *   [vary] entries --scenario_parse_vary--> VaryDim list   (targets, values)
 *   [expect] entries --scenario_parse_expects--> ScenarioExpect list
 *                                                (metrics, `when` conditions)
 *
 * An expectation's metric is one of reports/metrics.h, the table `ksim run`
 * also evaluates them from, so a name the parser accepts always has a value.
 */
#include "scenario_internal.h"

#include "metrics.h"
#include "sim_assert.h"

#include <math.h>
#include <string.h>

/* ---- [vary] dimensions ---- */

void
scenario_vary_dim_free(gpointer data)
{
    VaryDim *dim = data;
    g_free(dim->key);
    g_free(dim->group);
    g_free(dim->name);
    g_ptr_array_unref(dim->values);
    g_array_unref(dim->targets);
    g_free(dim);
}

static VaryDim *
vary_dim_copy(const VaryDim *dim)
{
    VaryDim *copy = g_new0(VaryDim, 1);
    copy->key = g_strdup(dim->key);
    copy->group = g_strdup(dim->group);
    copy->name = g_strdup(dim->name);
    copy->values = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < dim->values->len; i++)
        g_ptr_array_add(copy->values, g_strdup(dim->values->pdata[i]));
    copy->line = dim->line;
    copy->targets = g_array_copy(dim->targets);
    return copy;
}

GPtrArray *
scenario_vary_copy(const GPtrArray *vary)
{
    GPtrArray *copy = g_ptr_array_new_with_free_func(scenario_vary_dim_free);
    for (guint i = 0; i < vary->len; i++)
        g_ptr_array_add(copy, vary_dim_copy(vary->pdata[i]));
    return copy;
}

/* ---- Keys in [vary], --set and `when`: bare or GROUP:key ---- */

/* Splits "topic orders:min.insync.replicas" at its last ':'. */
gboolean
scenario_split_qualified_key(const char *text, char **group, char **name)
{
    const char *colon = strrchr(text, ':');
    g_autofree char *group_part = colon != NULL ? g_strndup(text, (gsize)(colon - text)) : NULL;
    *group = group_part != NULL ? scenario_normalize_space(group_part) : NULL;
    *name = g_strstrip(g_strdup(colon != NULL ? colon + 1 : text));
    if (**name != '\0' && (*group == NULL || **group != '\0'))
        return TRUE;
    g_clear_pointer(group, g_free);
    g_clear_pointer(name, g_free);
    return FALSE;
}

char *
scenario_qualified_key(const char *group, const char *name)
{
    return group != NULL ? g_strdup_printf("%s:%s", group, name) : g_strdup(name);
}

static gboolean
resolve_qualified(const Scenario *s, const GPtrArray *groups, const Loc *loc, const char *group,
                  const char *name, GArray *targets, GError **error)
{
    gint index = scenario_groups_find(groups, group);
    if (index < 0) {
        g_autoptr(GPtrArray) names = g_ptr_array_new();
        for (guint i = 0; i < groups->len; i++)
            g_ptr_array_add(names, ((RawGroup *)groups->pdata[i])->name);
        const char *suggestion =
            kconfig_suggest_among(group, (const char *const *)names->pdata, names->len);
        g_autofree char *hint = scenario_did_you_mean(suggestion);
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_UNKNOWN, loc, "no group [%s] in %s%s", group,
                           s->display_name, hint);
        return FALSE;
    }
    const RawGroup *target = groups->pdata[index];
    guint scopes = SCENARIO_GROUP_KINDS[target->kind].scopes;
    if (scopes == 0) {
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_UNKNOWN, loc,
                           "[%s] cannot be changed this way", group);
        return FALSE;
    }
    if (kconfig_lookup(name, scopes) == NULL) {
        g_autofree char *why = scenario_unknown_key_message(name, scopes);
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_UNKNOWN, loc, "%s in [%s]", why, group);
        return FALSE;
    }
    guint value = (guint)index;
    g_array_append_val(targets, value);
    return TRUE;
}

/* The groups a key reaches: the named group, or for a bare key every group
 * among [scenario], [cluster], topics, producers and consumer groups where it
 * is valid. */
gboolean
scenario_resolve_targets(const Scenario *s, const GPtrArray *groups, const Loc *loc,
                         const char *group, const char *name, GArray *targets, GError **error)
{
    if (group != NULL)
        return resolve_qualified(s, groups, loc, group, name, targets, error);
    guint bare_scopes = 0;
    for (guint i = 0; i < groups->len; i++) {
        const RawGroup *candidate = groups->pdata[i];
        const GroupKindInfo *info = &SCENARIO_GROUP_KINDS[candidate->kind];
        if (!info->bare_vary)
            continue;
        bare_scopes |= info->scopes;
        if (kconfig_lookup(name, info->scopes) != NULL)
            g_array_append_val(targets, i);
    }
    if (targets->len > 0)
        return TRUE;
    guint scopes = kconfig_scopes_of(name);
    if (scopes == 0) {
        g_autofree char *why = scenario_unknown_key_message(name, bare_scopes);
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_UNKNOWN, loc, "%s", why);
        return FALSE;
    }
    KConfigScope scope = (KConfigScope)(scopes & (~scopes + 1u));
    if (scope == KCONFIG_SCOPE_FAULT || scope == KCONFIG_SCOPE_RANDOM_FAULTS)
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_UNKNOWN, loc,
                           "a %s key must name its group, e.g. 'fault NAME:%s'",
                           kconfig_scope_name(scope), name);
    else
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_UNKNOWN, loc,
                           "no group takes it: it is a %s key, for %s, and the scenario has none",
                           kconfig_scope_name(scope), scenario_scope_home(scope));
    return FALSE;
}

/* Checks `value` for `name` in every target group. */
gboolean
scenario_check_target_values(const GPtrArray *groups, const GArray *targets, const char *name,
                             const char *value, const Loc *loc, GError **error)
{
    for (guint i = 0; i < targets->len; i++) {
        const RawGroup *group = groups->pdata[g_array_index(targets, guint, i)];
        const KConfigKey *key = kconfig_lookup(name, SCENARIO_GROUP_KINDS[group->kind].scopes);
        KSIM_ASSERT(key != NULL);
        g_autoptr(GError) local = NULL;
        if (!kconfig_check_value(key, value, &local)) {
            scenario_loc_error(error, KSIM_SCENARIO_ERROR_VALUE, loc, "%s", local->message);
            return FALSE;
        }
    }
    return TRUE;
}

gboolean
scenario_targets_intersect(const GArray *a, const GArray *b)
{
    for (guint i = 0; i < a->len; i++) {
        for (guint j = 0; j < b->len; j++) {
            if (g_array_index(a, guint, i) == g_array_index(b, guint, j))
                return TRUE;
        }
    }
    return FALSE;
}

gboolean
scenario_targets_equal(const GArray *a, const GArray *b)
{
    if (a->len != b->len)
        return FALSE;
    return memcmp(a->data, b->data, a->len * sizeof(guint)) == 0;
}

/* ---- [vary] ---- */

/* Values are separated by '|' when there is one (distributions contain
 * commas), else by ','. */
static gboolean
split_values(const char *text, GPtrArray *values, const Loc *loc, GError **error)
{
    const char *separator = strchr(text, '|') != NULL ? "|" : ",";
    if (*text == '\0') {
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_VALUE, loc, "lists no values");
        return FALSE;
    }
    g_auto(GStrv) parts = g_strsplit(text, separator, -1);
    for (guint i = 0; parts[i] != NULL; i++) {
        const char *value = g_strstrip(parts[i]);
        if (*value == '\0') {
            scenario_loc_error(error, KSIM_SCENARIO_ERROR_VALUE, loc, "empty value in '%s'", text);
            return FALSE;
        }
        for (guint j = 0; j < values->len; j++) {
            if (strcmp(values->pdata[j], value) != 0)
                continue;
            scenario_loc_error(error, KSIM_SCENARIO_ERROR_VALUE, loc, "'%s' is listed twice",
                               value);
            return FALSE;
        }
        if (values->len == SCENARIO_VARY_VALUES_MAX) {
            scenario_loc_error(error, KSIM_SCENARIO_ERROR_VALUE, loc, "more than %u values",
                               SCENARIO_VARY_VALUES_MAX);
            return FALSE;
        }
        g_ptr_array_add(values, g_strdup(value));
    }
    return TRUE;
}

static gboolean
check_vary_overlap(const GPtrArray *vary, const VaryDim *dim, const Loc *loc, GError **error)
{
    for (guint i = 0; i < vary->len; i++) {
        const VaryDim *other = vary->pdata[i];
        if (other == dim)
            continue;
        if (strcmp(other->name, dim->name) != 0 ||
            !scenario_targets_intersect(other->targets, dim->targets))
            continue;
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, loc,
                           "varies the same setting as '%s' (line %u)", other->key, other->line);
        return FALSE;
    }
    return TRUE;
}

static gboolean
parse_vary_entry(Scenario *s, const RawGroup *group, const RawEntry *entry, guint *runs,
                 GError **error)
{
    Loc loc = scenario_loc_entry(s, group, entry);
    g_autofree char *group_name = NULL;
    g_autofree char *name = NULL;
    if (!scenario_split_qualified_key(entry->key, &group_name, &name)) {
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_SYNTAX, &loc, "expected KEY or GROUP:KEY");
        return FALSE;
    }
    VaryDim *dim = g_new0(VaryDim, 1);
    dim->key = scenario_qualified_key(group_name, name);
    dim->group = g_steal_pointer(&group_name);
    dim->name = g_steal_pointer(&name);
    dim->values = g_ptr_array_new_with_free_func(g_free);
    dim->line = entry->line;
    dim->targets = g_array_new(FALSE, FALSE, sizeof(guint));
    /* Added before its checks, so that a dimension that fails is freed with
     * the scenario. */
    g_ptr_array_add(s->vary, dim);
    if (!scenario_resolve_targets(s, s->groups, &loc, dim->group, dim->name, dim->targets, error) ||
        !check_vary_overlap(s->vary, dim, &loc, error) ||
        !split_values(entry->value, dim->values, &loc, error))
        return FALSE;
    for (guint i = 0; i < dim->values->len; i++) {
        if (!scenario_check_target_values(s->groups, dim->targets, dim->name, dim->values->pdata[i],
                                          &loc, error))
            return FALSE;
    }
    *runs *= dim->values->len;
    if (*runs > SCENARIO_VARIANTS_MAX) {
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_VALUE, &loc, "[vary] makes more than %u runs",
                           SCENARIO_VARIANTS_MAX);
        return FALSE;
    }
    return TRUE;
}

gboolean
scenario_parse_vary(Scenario *s, GError **error)
{
    s->variant_count = 1;
    const RawGroup *group = scenario_groups_find_kind(s->groups, GROUP_VARY);
    if (group == NULL)
        return TRUE;
    for (guint i = 0; i < group->entries->len; i++) {
        if (!parse_vary_entry(s, group, group->entries->pdata[i], &s->variant_count, error))
            return FALSE;
    }
    return TRUE;
}

/* ---- [expect] ---- */

static void
condition_free(gpointer data)
{
    ScenarioCondition *condition = data;
    g_free(condition->key);
    g_free(condition->value);
    g_free(condition);
}

void
scenario_expect_free(gpointer data)
{
    ScenarioExpect *expect = data;
    g_free(expect->name);
    g_free(expect->metric);
    g_free(expect->text);
    g_ptr_array_unref(expect->when);
    g_free(expect);
}

static const char *const OP_SYMBOLS[] = {
    [SCENARIO_OP_EQ] = "==", [SCENARIO_OP_NE] = "!=", [SCENARIO_OP_LT] = "<",
    [SCENARIO_OP_LE] = "<=", [SCENARIO_OP_GT] = ">",  [SCENARIO_OP_GE] = ">=",
};

/* Finds the comparison in "METRIC OP NUMBER": two-character operators first. */
static gboolean
find_op(const char *text, ScenarioOp *op, const char **at, gsize *length)
{
    static const ScenarioOp order[] = {SCENARIO_OP_EQ, SCENARIO_OP_NE, SCENARIO_OP_LE,
                                       SCENARIO_OP_GE, SCENARIO_OP_LT, SCENARIO_OP_GT};
    for (guint i = 0; i < G_N_ELEMENTS(order); i++) {
        const char *found = strstr(text, OP_SYMBOLS[order[i]]);
        if (found == NULL)
            continue;
        *op = order[i];
        *at = found;
        *length = strlen(OP_SYMBOLS[order[i]]);
        return TRUE;
    }
    return FALSE;
}

/* "; did you mean 'lost_write'?" for a misspelt metric, or "". (transfer full) */
static char *
metric_hint(const char *metric)
{
    guint n_metrics = metrics_count();
    g_autofree const char **names = g_new0(const char *, n_metrics);
    for (guint i = 0; i < n_metrics; i++)
        names[i] = metrics_name(metrics_at(i));
    return scenario_did_you_mean(kconfig_suggest_among(metric, names, n_metrics));
}

static gboolean
parse_comparison(const char *text, ScenarioExpect *expect, const Loc *loc, GError **error)
{
    const char *at = NULL;
    gsize length = 0;
    if (!find_op(text, &expect->op, &at, &length)) {
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_SYNTAX, loc,
                           "expected METRIC OP NUMBER (OP: == != < <= > >=), found '%s'", text);
        return FALSE;
    }
    expect->metric = g_strstrip(g_strndup(text, (gsize)(at - text)));
    if (metrics_find(expect->metric) == NULL) {
        g_autofree char *hint = metric_hint(expect->metric);
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_UNKNOWN, loc, "unknown metric '%s'%s",
                           expect->metric, hint);
        return FALSE;
    }
    g_autofree char *number = g_strstrip(g_strdup(at + length));
    char *end = NULL;
    expect->value = g_ascii_strtod(number, &end);
    if (*number == '\0' || *end != '\0' || !isfinite(expect->value)) {
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_VALUE, loc, "'%s' is not a number", number);
        return FALSE;
    }
    return TRUE;
}

/* The dimension a `when` key names: as [vary] writes it, or bare when one
 * dimension varies that key. */
const VaryDim *
scenario_vary_find_dim(const GPtrArray *vary, const char *key, guint *matches)
{
    g_autofree char *group = NULL;
    g_autofree char *name = NULL;
    *matches = 0;
    if (!scenario_split_qualified_key(key, &group, &name))
        return NULL;
    g_autofree char *canonical = scenario_qualified_key(group, name);
    const VaryDim *found = NULL;
    for (guint i = 0; i < vary->len; i++) {
        const VaryDim *dim = vary->pdata[i];
        if (strcmp(dim->key, canonical) == 0) {
            *matches = 1;
            return dim;
        }
        if (group == NULL && strcmp(dim->name, name) == 0) {
            found = dim;
            (*matches)++;
        }
    }
    return *matches == 1 ? found : NULL;
}

static gboolean
check_condition_value(const VaryDim *dim, const char *value, const Loc *loc, GError **error)
{
    for (guint i = 0; i < dim->values->len; i++) {
        if (strcmp(dim->values->pdata[i], value) == 0)
            return TRUE;
    }
    GString *listed = g_string_new(NULL);
    for (guint i = 0; i < dim->values->len; i++)
        g_string_append_printf(listed, "%s%s", i ? ", " : "", (const char *)dim->values->pdata[i]);
    scenario_loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, loc,
                       "'when %s=%s': %s is not among the varied values of %s (%s)", dim->key,
                       value, value, dim->key, listed->str);
    g_string_free(listed, TRUE);
    return FALSE;
}

static gboolean
parse_condition(const Scenario *s, const char *text, ScenarioExpect *expect, const Loc *loc,
                GError **error)
{
    const char *equals = strchr(text, '=');
    if (equals == NULL || equals == text) {
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_SYNTAX, loc,
                           "'when %s': expected KEY=VALUE or KEY!=VALUE", text);
        return FALSE;
    }
    gboolean negated = equals[-1] == '!';
    g_autofree char *key = g_strstrip(g_strndup(text, (gsize)(equals - text - (negated ? 1 : 0))));
    g_autofree char *value = g_strstrip(g_strdup(equals + 1));
    guint matches = 0;
    const VaryDim *dim = scenario_vary_find_dim(s->vary, key, &matches);
    if (dim == NULL) {
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, loc,
                           matches > 1
                               ? "'when %s': several [vary] keys vary %s; write it as [vary] does"
                               : "'when %s': %s is not varied in [vary]",
                           text, key);
        return FALSE;
    }
    if (!check_condition_value(dim, value, loc, error))
        return FALSE;
    ScenarioCondition *condition = g_new0(ScenarioCondition, 1);
    condition->key = g_strdup(dim->key);
    condition->value = g_steal_pointer(&value);
    condition->negated = negated;
    g_ptr_array_add(expect->when, condition);
    return TRUE;
}

static gboolean
parse_expect_entry(Scenario *s, const RawGroup *group, const RawEntry *entry, GError **error)
{
    Loc loc = scenario_loc_entry(s, group, entry);
    ScenarioExpect *expect = g_new0(ScenarioExpect, 1);
    expect->name = g_strdup(entry->key);
    expect->text = g_strdup(entry->value);
    expect->line = entry->line;
    expect->when = g_ptr_array_new_with_free_func(condition_free);
    g_ptr_array_add(s->expects, expect);
    g_auto(GStrv) parts = g_regex_split_simple("\\s+when\\s+", entry->value, 0, 0);
    if (g_strv_length(parts) > 2 || g_strv_length(parts) == 0) {
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_SYNTAX, &loc,
                           "expected METRIC OP NUMBER [when KEY=VALUE [and ...]]");
        return FALSE;
    }
    if (!parse_comparison(parts[0], expect, &loc, error))
        return FALSE;
    if (parts[1] == NULL)
        return TRUE;
    /* A comma separates conditions only before the next KEY= or KEY!=, so
     * a value may hold commas (when process.roles=broker,controller). */
    g_auto(GStrv) conditions =
        g_regex_split_simple("\\s*,\\s*(?=[^,=]*!?=)|\\s+and\\s+", parts[1], 0, 0);
    for (guint i = 0; conditions[i] != NULL; i++) {
        if (!parse_condition(s, g_strstrip(conditions[i]), expect, &loc, error))
            return FALSE;
    }
    return TRUE;
}

gboolean
scenario_parse_expects(Scenario *s, GError **error)
{
    const RawGroup *group = scenario_groups_find_kind(s->groups, GROUP_EXPECT);
    if (group == NULL)
        return TRUE;
    for (guint i = 0; i < group->entries->len; i++) {
        if (!parse_expect_entry(s, group, group->entries->pdata[i], error))
            return FALSE;
    }
    return TRUE;
}

/* ---- Expectations: public ---- */

gboolean
scenario_expect_applies(const ScenarioExpect *expect, const ScenarioVariant *variant)
{
    KSIM_ASSERT(expect != NULL);
    KSIM_ASSERT(variant != NULL);
    for (guint i = 0; i < expect->when->len; i++) {
        const ScenarioCondition *condition = expect->when->pdata[i];
        const ScenarioSetting *setting = NULL;
        for (guint j = 0; j < variant->settings->len && setting == NULL; j++) {
            const ScenarioSetting *candidate = variant->settings->pdata[j];
            if (strcmp(candidate->key, condition->key) == 0)
                setting = candidate;
        }
        if (setting == NULL)
            return FALSE;
        gboolean equal = strcmp(setting->value, condition->value) == 0;
        if (equal == condition->negated)
            return FALSE;
    }
    return TRUE;
}

gboolean
scenario_expect_holds(const ScenarioExpect *expect, double measured)
{
    KSIM_ASSERT(expect != NULL);
    switch (expect->op) {
    case SCENARIO_OP_EQ:
        return measured == expect->value;
    case SCENARIO_OP_NE:
        return measured != expect->value;
    case SCENARIO_OP_LT:
        return measured < expect->value;
    case SCENARIO_OP_LE:
        return measured <= expect->value;
    case SCENARIO_OP_GT:
        return measured > expect->value;
    case SCENARIO_OP_GE:
        return measured >= expect->value;
    }
    KSIM_ASSERT(!"unknown operator");
    return FALSE;
}

const char *
scenario_op_symbol(ScenarioOp op)
{
    KSIM_ASSERT((guint)op < G_N_ELEMENTS(OP_SYMBOLS));
    return OP_SYMBOLS[op];
}
