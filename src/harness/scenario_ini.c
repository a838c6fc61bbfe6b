/*
 * scenario_ini: a scenario file's text into groups, entries and lines (see
 * scenario_internal.h), and the located messages every stage of reading uses.
 *
 * One parser, written here; GKeyFile is not used. The dialect is GKeyFile's,
 * but GKeyFile cannot serve alone: its API gives no line numbers, and every
 * message here names the line; it silently merges a group written twice and
 * keeps the last value of a key written twice, both mistakes a user wants to
 * be told of; and its only comments are '#' lines. What else it knows ksim
 * never used: values are taken as written (no escapes), and a bracket in a
 * key (GKeyFile's key[locale]) is refused. ksim once scanned the text here for
 * lines, duplicates and comments and then had GKeyFile read the cleaned text
 * again, which was the same work twice.
 *
 * The grammar (each rule is pinned by tests/test_scenario.c):
 *  - Lines end at '\n'. White space around a line is ignored, a '\r' before
 *    the '\n' included. There are no continuation lines: a '\' at the end
 *    of a line is part of the value, and the next line stands alone.
 *  - A comment starts with ';' or '#' at the start of a line or after white
 *    space and runs to the end of the line; "a#b" holds none. Blank and
 *    comment lines are skipped, and still counted for line numbers.
 *  - "[NAME]" opens a group. Runs of spaces and tabs inside are one space
 *    ("[topic \t orders]" is [topic orders]); NAME is not empty and has no
 *    bracket and no control character. A group appears once.
 *  - "KEY = VALUE" sets a key of the group above it. The first '=' separates
 *    them, so a value may hold '='; both are trimmed, and VALUE may be empty.
 *    KEY is not empty and has no bracket. A key appears once in a group.
 *  - Any other line is an error, and so is a key before the first group.
 *
 * Reading happens in two passes, each of which may stop with one error:
 *
 *   text --scan_text--> TextGroup list, (group, key) -> line   (syntax, duplicates)
 *        --read_groups--> RawGroup list, file order            (group kinds, known keys)
 *
 * The whole text is scanned before any group is classified, so a syntax
 * error anywhere is reported before an unknown group or key.
 */
#include "scenario_internal.h"

#include "cluster.h"
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
    /* A bare [vary] or --set key sets the cluster-wide default in [cluster];
     * a broker's own value is reached as "broker N:KEY". */
    [GROUP_BROKER] = {"broker", TRUE, KCONFIG_SCOPE_BROKER, FALSE, "[broker N]"},
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

RawGroup *
scenario_raw_group_new(const char *name, GroupKind kind, const char *object, guint line)
{
    return raw_group_new(name, kind, object, line);
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

void
scenario_groups_add_broker(GPtrArray *groups, guint id)
{
    g_autofree char *object = g_strdup_printf("%u", id);
    g_autofree char *name = g_strdup_printf("broker %u", id);
    KSIM_ASSERT(scenario_broker_group_id(object) == id);
    KSIM_ASSERT(scenario_groups_find(groups, name) < 0);
    g_ptr_array_add(groups, raw_group_new(name, GROUP_BROKER, object, 0));
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
    if (loc->origin != NULL) {
        g_autofree char *origin = kconfig_echo(loc->origin);
        g_string_append_printf(out, ": %s", origin);
    }
    else if (loc->line != 0)
        g_string_append_printf(out, ":%u", loc->line);
    g_string_append(out, ": ");
    if (loc->group != NULL)
        g_string_append_printf(out, "[%s] ", loc->group);
    if (loc->key != NULL) {
        g_autofree char *key = kconfig_echo(loc->key);
        g_string_append_printf(out, "%s: ", key);
    }
    g_autofree char *shown = kconfig_echo_quoted(message);
    g_string_append(out, shown);
    g_set_error_literal(error, KSIM_SCENARIO_ERROR, code, out->str);
    g_string_free(out, TRUE);
}

static Loc
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

guint
scenario_broker_group_id(const char *object)
{
    guint64 id = 0;
    if (object[0] == '0' ||
        !g_ascii_string_to_unsigned(object, 10, 1, CLUSTER_BROKERS_MAX, &id, NULL))
        return 0;
    return (guint)id;
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

/* ---- Pass 1: the text, line by line, into groups of entries ---- */

/* A group as the text writes it, before its kind is known. */
typedef struct {
    char *name; /* white space normalized */
    guint line;
    GPtrArray *entries; /* RawEntry*, file order */
} TextGroup;

typedef struct {
    const Scenario *scenario;
    GPtrArray *groups; /* TextGroup*, file order */
    GHashTable *lines; /* "group" and "group\037key" -> line; looked up, never iterated */
} Scan;

static void
text_group_free(gpointer data)
{
    TextGroup *group = data;
    g_free(group->name);
    if (group->entries != NULL)
        g_ptr_array_unref(group->entries);
    g_free(group);
}

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

/* Not empty, and neither a bracket nor a control character: a '\v' or '\r'
 * inside a group line would make a name no message could show. */
static gboolean
group_name_is_valid(const char *name)
{
    if (*name == '\0')
        return FALSE;
    for (const char *p = name; *p != '\0'; p++) {
        if (*p == '[' || *p == ']' || g_ascii_iscntrl(*p))
            return FALSE;
    }
    return TRUE;
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
    if (!group_name_is_valid(name)) {
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
    TextGroup *group = g_new0(TextGroup, 1);
    group->name = g_steal_pointer(&name);
    group->line = line;
    group->entries = g_ptr_array_new_with_free_func(raw_entry_free);
    g_ptr_array_add(scan->groups, group);
    return TRUE;
}

static gboolean
scan_key(Scan *scan, const char *text, guint line, GError **error)
{
    Loc loc = scenario_loc_line(scan->scenario, line);
    if (scan->groups->len == 0) {
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_SYNTAX, &loc,
                           "'%s' comes before any [group] line", text);
        return FALSE;
    }
    TextGroup *group = g_ptr_array_index(scan->groups, scan->groups->len - 1);
    loc.group = group->name;
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
    char *where = line_key(group->name, key);
    gpointer first = g_hash_table_lookup(scan->lines, where);
    if (first != NULL) {
        g_free(where);
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_SYNTAX, &loc, "set twice (first at line %u)",
                           GPOINTER_TO_UINT(first));
        return FALSE;
    }
    g_hash_table_insert(scan->lines, where, GUINT_TO_POINTER(line));
    g_ptr_array_add(group->entries, raw_entry_new(key, value, line, NULL));
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
        if (*content == '[')
            ok = scan_group(scan, content, line, error);
        else if (*content != '\0')
            ok = scan_key(scan, content, line, error);
        if (!ok)
            return FALSE;
    }
    return TRUE;
}

/* ---- Pass 2: each group's kind and keys ---- */

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
    if (found == GROUP_BROKER && scenario_broker_group_id(words[1]) == 0) {
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_VALUE, &loc,
                           "'%s' is not a broker id: expected [broker N] with N from 1 to %u "
                           "(no leading zeros), e.g. [broker 2]",
                           words[1], CLUSTER_BROKERS_MAX);
        return FALSE;
    }
    *kind = (GroupKind)found;
    *object = info->named ? g_strdup(words[1]) : NULL;
    return TRUE;
}

/* Every key of a group that takes configuration keys must be one of its
 * scopes'; [vary] and [expect] take any key. */
static gboolean
check_group_keys(const Scenario *s, const RawGroup *group, GError **error)
{
    guint scopes = SCENARIO_GROUP_KINDS[group->kind].scopes;
    for (guint i = 0; scopes != 0 && i < group->entries->len; i++) {
        const RawEntry *entry = group->entries->pdata[i];
        if (kconfig_lookup(entry->key, scopes) != NULL)
            continue;
        Loc loc = scenario_loc_entry(s, group, entry);
        g_autofree char *why = scenario_unknown_key_message(entry->key, scopes);
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_UNKNOWN, &loc, "%s", why);
        return FALSE;
    }
    return TRUE;
}

static gboolean
read_groups(Scenario *s, GPtrArray *text_groups, GError **error)
{
    for (guint i = 0; i < text_groups->len; i++) {
        TextGroup *text_group = text_groups->pdata[i];
        GroupKind kind;
        g_autofree char *object = NULL;
        if (!classify_group(s, text_group->name, text_group->line, &kind, &object, error))
            return FALSE;
        RawGroup *group = raw_group_new(text_group->name, kind, object, text_group->line);
        g_ptr_array_unref(group->entries);
        group->entries = g_steal_pointer(&text_group->entries);
        g_ptr_array_add(s->groups, group);
        if (!check_group_keys(s, group, error))
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
    g_autoptr(GPtrArray) text_groups = g_ptr_array_new_with_free_func(text_group_free);
    Scan scan = {s, text_groups, lines};
    return scan_text(&scan, text, error) && read_groups(s, text_groups, error);
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
