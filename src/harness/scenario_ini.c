/*
 * scenario_ini: a scenario file's text into groups, entries and lines (see
 * scenario_internal.h), and the located messages every stage of reading uses.
 *
 * Reading happens in passes, each of which may stop with one error:
 *
 *   text --scan_text--> clean text + (group, key) -> line      (syntax, duplicates)
 *        --GKeyFile--> RawGroup list, file order               (group kinds, known keys)
 *
 * GKeyFile does not report line numbers, so scan_text reads the text once
 * itself to map each group and key to its line, to catch what GKeyFile would
 * silently merge (a group or key written twice), and to strip ';' and inline
 * comments, which GKeyFile does not know. GKeyFile then reads the cleaned text,
 * which keeps every line in place.
 */
#include "scenario_internal.h"

#include "sim_assert.h"

#include <stdarg.h>
#include <string.h>

/* ---- Group kinds ---- */

const GroupKindInfo SCENARIO_GROUP_KINDS[GROUP_KIND_COUNT] = {
    [GROUP_SCENARIO] = {"scenario", FALSE, KCONFIG_SCOPE_SCENARIO, TRUE, "[scenario]"},
    [GROUP_CLUSTER] = {"cluster", FALSE, KCONFIG_SCOPE_CLUSTER | KCONFIG_SCOPE_BROKER, TRUE,
                       "[cluster]"},
    [GROUP_TOPIC] = {"topic", TRUE, KCONFIG_SCOPE_TOPIC, TRUE, "[topic NAME]"},
    [GROUP_PRODUCER] = {"producer", TRUE, KCONFIG_SCOPE_PRODUCER | KCONFIG_SCOPE_WORKLOAD, TRUE,
                        "[producer NAME]"},
    [GROUP_CONSUMER_GROUP] = {"consumer-group", TRUE,
                              KCONFIG_SCOPE_CONSUMER | KCONFIG_SCOPE_CONSUMER_GROUP, TRUE,
                              "[consumer-group NAME]"},
    [GROUP_FAULT] = {"fault", TRUE, KCONFIG_SCOPE_FAULT, FALSE, "[fault NAME]"},
    [GROUP_RANDOM_FAULTS] = {"random-faults", FALSE, KCONFIG_SCOPE_RANDOM_FAULTS, FALSE,
                             "[random-faults]"},
    [GROUP_VARY] = {"vary", FALSE, 0, FALSE, "[vary]"},
    [GROUP_EXPECT] = {"expect", FALSE, 0, FALSE, "[expect]"},
};

/* ---- Raw groups ---- */

static RawEntry *
raw_entry_new(const char *key, const char *value, guint line, const char *origin)
{
    KSIM_ASSERT(key != NULL);
    KSIM_ASSERT(value != NULL);
    RawEntry *entry = g_new0(RawEntry, 1);
    entry->key = g_strdup(key);
    entry->value = g_strdup(value);
    entry->line = line;
    entry->origin = g_strdup(origin);
    return entry;
}

static void
raw_entry_free(gpointer data)
{
    RawEntry *entry = data;
    g_free(entry->key);
    g_free(entry->value);
    g_free(entry->origin);
    g_free(entry);
}

static RawGroup *
raw_group_new(const char *name, GroupKind kind, const char *object, guint line)
{
    KSIM_ASSERT(name != NULL);
    KSIM_ASSERT((object != NULL) == SCENARIO_GROUP_KINDS[kind].named);
    RawGroup *group = g_new0(RawGroup, 1);
    group->name = g_strdup(name);
    group->kind = kind;
    group->object = g_strdup(object);
    group->line = line;
    group->entries = g_ptr_array_new_with_free_func(raw_entry_free);
    return group;
}

void
scenario_raw_group_free(gpointer data)
{
    RawGroup *group = data;
    g_free(group->name);
    g_free(group->object);
    g_ptr_array_unref(group->entries);
    g_free(group);
}

GPtrArray *
scenario_groups_copy(const GPtrArray *groups)
{
    GPtrArray *copy = g_ptr_array_new_with_free_func(scenario_raw_group_free);
    for (guint i = 0; i < groups->len; i++) {
        const RawGroup *group = groups->pdata[i];
        RawGroup *dup = raw_group_new(group->name, group->kind, group->object, group->line);
        for (guint j = 0; j < group->entries->len; j++) {
            const RawEntry *e = group->entries->pdata[j];
            g_ptr_array_add(dup->entries, raw_entry_new(e->key, e->value, e->line, e->origin));
        }
        g_ptr_array_add(copy, dup);
    }
    KSIM_ASSERT(copy->len == groups->len);
    return copy;
}

RawEntry *
scenario_group_find_entry(const RawGroup *group, const char *key)
{
    for (guint i = 0; i < group->entries->len; i++) {
        RawEntry *entry = group->entries->pdata[i];
        if (strcmp(entry->key, key) == 0)
            return entry;
    }
    return NULL;
}

/* Writes `key = value` into a group as if the file said so at `line`. */
void
scenario_group_set(RawGroup *group, const char *key, const char *value, guint line,
                   const char *origin)
{
    RawEntry *entry = scenario_group_find_entry(group, key);
    if (entry == NULL) {
        g_ptr_array_add(group->entries, raw_entry_new(key, value, line, origin));
        return;
    }
    g_free(entry->value);
    g_free(entry->origin);
    entry->value = g_strdup(value);
    entry->origin = g_strdup(origin);
    entry->line = line;
}

gint
scenario_groups_find(const GPtrArray *groups, const char *name)
{
    for (guint i = 0; i < groups->len; i++) {
        const RawGroup *group = groups->pdata[i];
        if (strcmp(group->name, name) == 0)
            return (gint)i;
    }
    return -1;
}

RawGroup *
scenario_groups_find_kind(const GPtrArray *groups, GroupKind kind)
{
    KSIM_ASSERT(!SCENARIO_GROUP_KINDS[kind].named);
    for (guint i = 0; i < groups->len; i++) {
        RawGroup *group = groups->pdata[i];
        if (group->kind == kind)
            return group;
    }
    return NULL;
}

/* ---- Locations and messages ---- */

void
scenario_loc_error(GError **error, KsimScenarioErrorCode code, const Loc *loc, const char *format,
                   ...)
{
    KSIM_ASSERT(loc != NULL);
    KSIM_ASSERT(loc->file != NULL);
    va_list args;
    va_start(args, format);
    g_autofree char *message = g_strdup_vprintf(format, args);
    va_end(args);
    GString *out = g_string_new(loc->file);
    if (loc->origin != NULL)
        g_string_append_printf(out, ": %s", loc->origin);
    else if (loc->line != 0)
        g_string_append_printf(out, ":%u", loc->line);
    g_string_append(out, ": ");
    if (loc->group != NULL)
        g_string_append_printf(out, "[%s] ", loc->group);
    if (loc->key != NULL)
        g_string_append_printf(out, "%s: ", loc->key);
    g_string_append(out, message);
    g_set_error_literal(error, KSIM_SCENARIO_ERROR, code, out->str);
    g_string_free(out, TRUE);
}

Loc
scenario_loc_line(const Scenario *s, guint line)
{
    return (Loc){s->display_name, line, NULL, NULL, NULL};
}

Loc
scenario_loc_group(const Scenario *s, const RawGroup *group)
{
    return (Loc){s->display_name, group->line, NULL, group->name, NULL};
}

Loc
scenario_loc_entry(const Scenario *s, const RawGroup *group, const RawEntry *entry)
{
    return (Loc){s->display_name, entry->line, entry->origin, group->name, entry->key};
}

/* Where `key` of `group` was set, or the group itself (naming the key) when
 * the value is a default. */
Loc
scenario_loc_key(const Scenario *s, const RawGroup *group, const char *key)
{
    const RawEntry *entry = scenario_group_find_entry(group, key);
    if (entry != NULL)
        return scenario_loc_entry(s, group, entry);
    Loc loc = scenario_loc_group(s, group);
    loc.key = key;
    return loc;
}

/* " (did you mean 'X'?)" or "". (transfer full) */
char *
scenario_did_you_mean(const char *suggestion)
{
    if (suggestion == NULL)
        return g_strdup("");
    return g_strdup_printf("; did you mean '%s'?", suggestion);
}

/* The group a scope's keys go in: "[cluster]", "[topic NAME]", ... */
const char *
scenario_scope_home(KConfigScope scope)
{
    switch (scope) {
    case KCONFIG_SCOPE_BROKER:
    case KCONFIG_SCOPE_CLUSTER:
        return "[cluster]";
    case KCONFIG_SCOPE_TOPIC:
        return "[topic NAME]";
    case KCONFIG_SCOPE_PRODUCER:
    case KCONFIG_SCOPE_WORKLOAD:
        return "[producer NAME]";
    case KCONFIG_SCOPE_CONSUMER:
    case KCONFIG_SCOPE_CONSUMER_GROUP:
        return "[consumer-group NAME]";
    case KCONFIG_SCOPE_SCENARIO:
        return "[scenario]";
    case KCONFIG_SCOPE_FAULT:
        return "[fault NAME]";
    case KCONFIG_SCOPE_RANDOM_FAULTS:
        return "[random-faults]";
    }
    KSIM_ASSERT(!"unknown scope");
    return NULL;
}

/* Why `key` is not a key of `scopes`: it belongs elsewhere, or it is
 * misspelt. (transfer full) */
char *
scenario_unknown_key_message(const char *key, guint scopes)
{
    guint elsewhere = kconfig_scopes_of(key) & ~scopes;
    if (elsewhere != 0) {
        KConfigScope scope = (KConfigScope)(elsewhere & (~elsewhere + 1u));
        return g_strdup_printf("not valid here: it is a %s key, for %s", kconfig_scope_name(scope),
                               scenario_scope_home(scope));
    }
    g_autofree char *hint = scenario_did_you_mean(kconfig_suggest(key, scopes));
    return g_strdup_printf("unknown key%s", hint);
}

/* A NAME of a group: Kafka's legal topic characters, so that targets such as
 * producer:NAME and leader(NAME-0) parse unambiguously. */
static gboolean
name_is_valid(const char *name)
{
    gsize length = strlen(name);
    if (length == 0 || length > SCENARIO_NAME_LENGTH_MAX)
        return FALSE;
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return FALSE;
    for (const char *p = name; *p != '\0'; p++) {
        if (!g_ascii_isalnum(*p) && *p != '.' && *p != '_' && *p != '-')
            return FALSE;
    }
    return TRUE;
}

/* "a  b\t c" -> "a b c". (transfer full) */
char *
scenario_normalize_space(const char *text)
{
    g_auto(GStrv) words = g_strsplit_set(text, " \t", -1);
    GString *out = g_string_new(NULL);
    for (guint i = 0; words[i] != NULL; i++) {
        if (words[i][0] == '\0')
            continue;
        if (out->len > 0)
            g_string_append_c(out, ' ');
        g_string_append(out, words[i]);
    }
    return g_string_free(out, FALSE);
}

/* ---- Pass 1: scanning the text for lines, duplicates and comments ---- */

typedef struct {
    const Scenario *scenario;
    GString *clean;    /* the text GKeyFile reads: one line per input line */
    GHashTable *lines; /* "group" and "group\037key" -> line; looked up, never iterated */
    char *group;       /* the current group's normalized name */
} Scan;

static char *
line_key(const char *group, const char *key)
{
    return g_strdup_printf("%s\037%s", group, key);
}

/* Cuts a comment: ';' or '#' at the start or after white space. */
static char *
strip_comment(char *line)
{
    for (char *p = line; *p != '\0'; p++) {
        if ((*p == ';' || *p == '#') && (p == line || g_ascii_isspace(p[-1]))) {
            *p = '\0';
            break;
        }
    }
    return g_strstrip(line);
}

static gboolean
scan_group(Scan *scan, const char *text, guint line, GError **error)
{
    Loc loc = scenario_loc_line(scan->scenario, line);
    gsize length = strlen(text);
    if (length < 2 || text[length - 1] != ']') {
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_SYNTAX, &loc,
                           "'%s' is not a group line "
                           "(expected '[group]')",
                           text);
        return FALSE;
    }
    g_autofree char *inner = g_strndup(text + 1, length - 2);
    g_autofree char *name = scenario_normalize_space(inner);
    if (*name == '\0' || strpbrk(name, "[]") != NULL) {
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_SYNTAX, &loc,
                           "'%s' is not a valid group name", text);
        return FALSE;
    }
    gpointer first = g_hash_table_lookup(scan->lines, name);
    if (first != NULL) {
        loc.group = name;
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_SYNTAX, &loc,
                           "appears twice (first at line %u)", GPOINTER_TO_UINT(first));
        return FALSE;
    }
    g_hash_table_insert(scan->lines, g_strdup(name), GUINT_TO_POINTER(line));
    g_string_append_printf(scan->clean, "[%s]\n", name);
    g_free(scan->group);
    scan->group = g_steal_pointer(&name);
    return TRUE;
}

static gboolean
scan_key(Scan *scan, const char *text, guint line, GError **error)
{
    Loc loc = scenario_loc_line(scan->scenario, line);
    if (scan->group == NULL) {
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_SYNTAX, &loc,
                           "'%s' comes before any [group] line", text);
        return FALSE;
    }
    loc.group = scan->group;
    const char *equals = strchr(text, '=');
    if (equals == NULL) {
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_SYNTAX, &loc,
                           "expected 'key = value', found '%s'", text);
        return FALSE;
    }
    g_autofree char *key = g_strstrip(g_strndup(text, (gsize)(equals - text)));
    g_autofree char *value = g_strstrip(g_strdup(equals + 1));
    if (*key == '\0' || strpbrk(key, "[]") != NULL) {
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_SYNTAX, &loc,
                           "'%s' has no valid key before '='", text);
        return FALSE;
    }
    loc.key = key;
    char *where = line_key(scan->group, key);
    gpointer first = g_hash_table_lookup(scan->lines, where);
    if (first != NULL) {
        g_free(where);
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_SYNTAX, &loc, "set twice (first at line %u)",
                           GPOINTER_TO_UINT(first));
        return FALSE;
    }
    g_hash_table_insert(scan->lines, where, GUINT_TO_POINTER(line));
    g_string_append_printf(scan->clean, "%s=%s\n", key, value);
    return TRUE;
}

static gboolean
scan_text(Scan *scan, const char *text, GError **error)
{
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (guint i = 0; lines[i] != NULL; i++) {
        char *content = strip_comment(lines[i]);
        guint line = i + 1;
        gboolean ok = TRUE;
        if (*content == '\0')
            g_string_append_c(scan->clean, '\n');
        else if (*content == '[')
            ok = scan_group(scan, content, line, error);
        else
            ok = scan_key(scan, content, line, error);
        if (!ok)
            return FALSE;
    }
    return TRUE;
}

/* ---- Pass 2: groups and keys ---- */

static gboolean
classify_group(const Scenario *s, const char *name, guint line, GroupKind *kind, char **object,
               GError **error)
{
    Loc loc = scenario_loc_line(s, line);
    loc.group = name;
    g_auto(GStrv) words = g_strsplit(name, " ", -1);
    guint n_words = g_strv_length(words);
    const char *kinds[G_N_ELEMENTS(SCENARIO_GROUP_KINDS)];
    for (guint i = 0; i < G_N_ELEMENTS(SCENARIO_GROUP_KINDS); i++)
        kinds[i] = SCENARIO_GROUP_KINDS[i].name;
    gint found = -1;
    for (guint i = 0; i < G_N_ELEMENTS(SCENARIO_GROUP_KINDS); i++) {
        if (strcmp(words[0], kinds[i]) == 0)
            found = (gint)i;
    }
    if (found < 0) {
        g_autofree char *hint =
            scenario_did_you_mean(kconfig_suggest_among(words[0], kinds, G_N_ELEMENTS(kinds)));
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_UNKNOWN, &loc, "unknown group '%s'%s",
                           words[0], hint);
        return FALSE;
    }
    const GroupKindInfo *info = &SCENARIO_GROUP_KINDS[found];
    if (n_words != (info->named ? 2u : 1u)) {
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_SYNTAX, &loc, "expected %s", info->example);
        return FALSE;
    }
    if (info->named && !name_is_valid(words[1])) {
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_VALUE, &loc,
                           "'%s' is not a valid name (letters, "
                           "digits, '.', '_' and '-', at most %u)",
                           words[1], SCENARIO_NAME_LENGTH_MAX);
        return FALSE;
    }
    *kind = (GroupKind)found;
    *object = info->named ? g_strdup(words[1]) : NULL;
    return TRUE;
}

static gboolean
read_group_keys(Scenario *s, GKeyFile *key_file, GHashTable *lines, RawGroup *group, GError **error)
{
    gsize n_keys = 0;
    g_auto(GStrv) keys = g_key_file_get_keys(key_file, group->name, &n_keys, NULL);
    KSIM_ASSERT(keys != NULL);
    guint scopes = SCENARIO_GROUP_KINDS[group->kind].scopes;
    for (gsize i = 0; i < n_keys; i++) {
        g_autofree char *where = line_key(group->name, keys[i]);
        guint line = GPOINTER_TO_UINT(g_hash_table_lookup(lines, where));
        KSIM_ASSERT(line != 0);
        if (scopes != 0 && kconfig_lookup(keys[i], scopes) == NULL) {
            Loc loc = {s->display_name, line, NULL, group->name, keys[i]};
            g_autofree char *why = scenario_unknown_key_message(keys[i], scopes);
            scenario_loc_error(error, KSIM_SCENARIO_ERROR_UNKNOWN, &loc, "%s", why);
            return FALSE;
        }
        g_autofree char *value = g_key_file_get_value(key_file, group->name, keys[i], NULL);
        KSIM_ASSERT(value != NULL);
        g_ptr_array_add(group->entries, raw_entry_new(keys[i], g_strstrip(value), line, NULL));
    }
    return TRUE;
}

static gboolean
read_groups(Scenario *s, GKeyFile *key_file, GHashTable *lines, GError **error)
{
    gsize n_groups = 0;
    g_auto(GStrv) names = g_key_file_get_groups(key_file, &n_groups);
    for (gsize i = 0; i < n_groups; i++) {
        guint line = GPOINTER_TO_UINT(g_hash_table_lookup(lines, names[i]));
        KSIM_ASSERT(line != 0);
        GroupKind kind;
        g_autofree char *object = NULL;
        if (!classify_group(s, names[i], line, &kind, &object, error))
            return FALSE;
        RawGroup *group = raw_group_new(names[i], kind, object, line);
        g_ptr_array_add(s->groups, group);
        if (!read_group_keys(s, key_file, lines, group, error))
            return FALSE;
    }
    /* [scenario] and [cluster] always exist, so --set and [vary] can reach
     * them even when the file relies on their defaults. */
    if (scenario_groups_find_kind(s->groups, GROUP_CLUSTER) == NULL)
        g_ptr_array_insert(s->groups, 0, raw_group_new("cluster", GROUP_CLUSTER, NULL, 0));
    if (scenario_groups_find_kind(s->groups, GROUP_SCENARIO) == NULL)
        g_ptr_array_insert(s->groups, 0, raw_group_new("scenario", GROUP_SCENARIO, NULL, 0));
    return TRUE;
}

gboolean
scenario_ini_parse(Scenario *s, const char *text, GError **error)
{
    g_autoptr(GHashTable) lines = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    Scan scan = {s, g_string_new(NULL), lines, NULL};
    gboolean ok = scan_text(&scan, text, error);
    g_free(scan.group);
    g_autoptr(GString) clean = scan.clean;
    if (!ok)
        return FALSE;
    g_autoptr(GKeyFile) key_file = g_key_file_new();
    g_autoptr(GError) local = NULL;
    if (!g_key_file_load_from_data(key_file, clean->str, clean->len, G_KEY_FILE_NONE, &local)) {
        Loc loc = scenario_loc_line(s, 0);
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_SYNTAX, &loc, "%s", local->message);
        return FALSE;
    }
    return read_groups(s, key_file, lines, error);
}

/* ---- Checks on the bytes ---- */

gboolean
scenario_ini_check_text(const char *text, gsize length, const char *display_name, GError **error)
{
    Loc loc = {display_name, 0, NULL, NULL, NULL};
    if (length > SCENARIO_FILE_BYTES_MAX) {
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_IO, &loc, "larger than %u bytes",
                           SCENARIO_FILE_BYTES_MAX);
        return FALSE;
    }
    if (memchr(text, '\0', length) != NULL) {
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_SYNTAX, &loc,
                           "contains a NUL byte: not a text file");
        return FALSE;
    }
    const char *end = NULL;
    if (!g_utf8_validate_len(text, length, &end)) {
        loc.line = 1;
        for (const char *p = text; p < end; p++)
            loc.line += *p == '\n';
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_SYNTAX, &loc, "not valid UTF-8 text");
        return FALSE;
    }
    return TRUE;
}
