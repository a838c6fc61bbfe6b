/*
 * scenario_write: scenario documents, edited and written as text (see
 * scenario_write.h). A document is a list of RawGroup, the parser's own
 * groups (scenario_internal.h), so every key the parser knows round-trips.
 *
 * Invariants:
 *  1. Group names are unique in a document (the parser allows each group
 *     once), and a group's keys are unique in it.
 */
#include "scenario_write.h"

#include "scenario_internal.h"
#include "sim_assert.h"

#include <string.h>

struct ScenarioDoc {
    GPtrArray *groups; /* RawGroup* */
};

static RawGroup *
find_group(const ScenarioDoc *doc, const char *name)
{
    gint index = scenario_groups_find(doc->groups, name);
    return index < 0 ? NULL : doc->groups->pdata[index];
}

/* The setting of `variant` for the [vary] key written `key`, or NULL. */
static const ScenarioSetting *
variant_setting(const ScenarioVariant *variant, const char *key)
{
    g_autofree char *normalized = scenario_normalize_space(key);
    const GPtrArray *settings = scenario_variant_settings(variant);
    for (guint i = 0; i < settings->len; i++) {
        const ScenarioSetting *setting = g_ptr_array_index(settings, i);
        g_autofree char *other = scenario_normalize_space(setting->key);
        if (strcmp(other, normalized) == 0)
            return setting;
    }
    return NULL;
}

ScenarioDoc *
scenario_doc_new(const Scenario *scenario, const ScenarioVariant *variant)
{
    ScenarioDoc *doc = g_new0(ScenarioDoc, 1);
    doc->groups = scenario_groups_copy(scenario->groups);
    RawGroup *vary = scenario_groups_find_kind(doc->groups, GROUP_VARY);
    for (guint i = 0; vary != NULL && variant != NULL && i < vary->entries->len; i++) {
        RawEntry *entry = vary->entries->pdata[i];
        const ScenarioSetting *setting = variant_setting(variant, entry->key);
        /* A value with a comma cannot be listed alone ('|' needs two). */
        if (setting == NULL || strchr(setting->value, ',') != NULL)
            continue;
        g_free(entry->value);
        entry->value = g_strdup(setting->value);
    }
    return doc;
}

ScenarioDoc *
scenario_doc_copy(const ScenarioDoc *doc)
{
    ScenarioDoc *copy = g_new0(ScenarioDoc, 1);
    copy->groups = scenario_groups_copy(doc->groups);
    return copy;
}

void
scenario_doc_free(ScenarioDoc *doc)
{
    if (doc == NULL)
        return;
    g_ptr_array_unref(doc->groups);
    g_free(doc);
}

const char *
scenario_doc_get(const ScenarioDoc *doc, const char *group, const char *key)
{
    const RawGroup *found = find_group(doc, group);
    const RawEntry *entry = found != NULL ? scenario_group_find_entry(found, key) : NULL;
    return entry != NULL ? entry->value : NULL;
}

/* A new group named `name`, of the kind its name says. */
static RawGroup *
new_group(const char *name)
{
    for (guint k = 0; k < GROUP_KIND_COUNT; k++) {
        const GroupKindInfo *info = &SCENARIO_GROUP_KINDS[k];
        gsize length = strlen(info->name);
        if (!info->named && strcmp(name, info->name) == 0)
            return scenario_raw_group_new(name, (GroupKind)k, NULL, 0);
        if (info->named && strncmp(name, info->name, length) == 0 && name[length] == ' ')
            return scenario_raw_group_new(name, (GroupKind)k, name + length + 1, 0);
    }
    /* Callers name groups the parser knows. */
    KSIM_ASSERT(FALSE);
    return NULL;
}

void
scenario_doc_set(ScenarioDoc *doc, const char *group, const char *key, const char *value)
{
    RawGroup *found = find_group(doc, group);
    if (found == NULL) {
        found = new_group(group);
        g_ptr_array_add(doc->groups, found);
    }
    scenario_group_set(found, key, value, 0, NULL);
}

gboolean
scenario_doc_unset(ScenarioDoc *doc, const char *group, const char *key)
{
    RawGroup *found = find_group(doc, group);
    RawEntry *entry = found != NULL ? scenario_group_find_entry(found, key) : NULL;
    return entry != NULL && g_ptr_array_remove(found->entries, entry);
}

gboolean
scenario_doc_remove_group(ScenarioDoc *doc, const char *group)
{
    gint index = scenario_groups_find(doc->groups, group);
    if (index < 0)
        return FALSE;
    g_ptr_array_remove_index(doc->groups, (guint)index);
    return TRUE;
}

GPtrArray *
scenario_doc_groups(const ScenarioDoc *doc, const char *prefix)
{
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < doc->groups->len; i++) {
        const RawGroup *group = doc->groups->pdata[i];
        if (g_str_has_prefix(group->name, prefix))
            g_ptr_array_add(names, g_strdup(group->name));
    }
    return names;
}

char *
scenario_doc_to_text(const ScenarioDoc *doc, const char *header)
{
    GString *text = g_string_new(NULL);
    if (header != NULL) {
        g_auto(GStrv) lines = g_strsplit(header, "\n", -1);
        for (guint i = 0; lines[i] != NULL; i++)
            g_string_append_printf(text, "#%s%s\n", lines[i][0] != '\0' ? " " : "", lines[i]);
        g_string_append_c(text, '\n');
    }
    for (guint i = 0; i < doc->groups->len; i++) {
        const RawGroup *group = doc->groups->pdata[i];
        if (group->entries->len == 0 && group->line == 0)
            continue; /* an implicit [scenario] or [cluster] the file never wrote */
        g_string_append_printf(text, "%s[%s]\n", i > 0 ? "\n" : "", group->name);
        for (guint j = 0; j < group->entries->len; j++) {
            const RawEntry *entry = group->entries->pdata[j];
            g_string_append_printf(text, "%s = %s\n", entry->key, entry->value);
        }
    }
    return g_string_free(text, FALSE);
}

char *
scenario_doc_format_duration(gint64 ns)
{
    return scenario_format_duration(ns);
}
