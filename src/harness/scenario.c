/*
 * scenario: reading, validating and resolving scenario files (see scenario.h).
 *
 * Reading happens in passes, each of which may stop with one error:
 *
 *   text --scan_text--> clean text + (group, key) -> line      (syntax, duplicates)
 *        --GKeyFile--> RawGroup list, file order               (group kinds, known keys)
 *        --parse_vary / parse_expects--> VaryDim, ScenarioExpect (targets, values, metrics)
 *        --validate_runs--> every run built once, then dropped (values, targets, consistency)
 *
 * GKeyFile does not report line numbers, so scan_text reads the text once
 * itself to map each group and key to its line, to catch what GKeyFile would
 * silently merge (a group or key written twice), and to strip ';' and inline
 * comments, which GKeyFile does not know. GKeyFile then reads the cleaned text,
 * which keeps every line in place.
 *
 * A run (ScenarioVariant) is built from a copy of the raw groups with the
 * run's [vary] values written into them, exactly as if the file said so; the
 * values carry the [vary] line, so errors point there. Every run is built
 * when the file is read (and again after each --set), so a scenario that
 * loads has only valid runs, and scenario_variants() cannot fail.
 *
 * Invariants (checked by scenario_check_invariants):
 *  1. `groups` holds exactly one [scenario] and one [cluster] group (added
 *     empty, at line 0, when the file has none), and no group name twice.
 *  2. Every entry of a group that takes configuration keys is a key of the
 *     group's scopes, and no key appears twice in a group.
 *  3. Each vary dimension has 1..SCENARIO_VARY_VALUES_MAX distinct values and
 *     at least one target group; two dimensions of the same key share no
 *     target; variant_count is the product of the value counts and at most
 *     SCENARIO_VARIANTS_MAX.
 *  4. Every expectation's conditions name a vary dimension's key.
 *  5. sha256 is 64 hexadecimal digits.
 *
 * The only transition after loading is scenario_apply_set, which builds the
 * changed groups and dimensions on copies, validates every run, and swaps them
 * in only on success.
 */
#include "scenario.h"

#include "sim_assert.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#define SCENARIO_FILE_BYTES_MAX (4u << 20)
#define SCENARIO_VARIANTS_MAX 1024u
#define SCENARIO_VARY_VALUES_MAX 256u
/* Kafka's limit on topic names; used for every NAME. */
#define SCENARIO_NAME_LENGTH_MAX 249u
#define SCENARIO_BROKER_FAULT_GROUPS_MAX 64u

GQuark
ksim_scenario_error_quark(void)
{
    return g_quark_from_static_string("ksim-scenario-error-quark");
}

/* ---- Group kinds ---- */

typedef enum {
    GROUP_SCENARIO,
    GROUP_CLUSTER,
    GROUP_TOPIC,
    GROUP_PRODUCER,
    GROUP_CONSUMER_GROUP,
    GROUP_FAULT,
    GROUP_RANDOM_FAULTS,
    GROUP_VARY,
    GROUP_EXPECT,
} GroupKind;

typedef struct {
    const char *name;
    gboolean named;     /* [KIND NAME] rather than [KIND] */
    guint scopes;       /* configuration keys it takes; 0: free-form keys */
    gboolean bare_vary; /* a bare [vary] or --set key reaches it */
    const char *example;
} GroupKindInfo;

static const GroupKindInfo GROUP_KINDS[] = {
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

/* The counters of a run summary an expectation may test (summary.json). */
static const char *const METRICS[] = {
    "lost_write",
    "duplicate",
    "nonmonotonic_send",
    "inconsistent_offsets",
    "invariant_violations",
    "produce.attempted",
    "produce.acked",
    "produce.failed",
    "produce.unknown",
    "latency_ms.produce.p50",
    "latency_ms.produce.p90",
    "latency_ms.produce.p99",
    "latency_ms.produce.p999",
    "latency_ms.produce.max",
    "lost_consumption",
    "duplicate_consumption",
    "poll_skip",
    "nonmonotonic_poll",
    "consumer.groups",
    "consumed.processed",
    "consumed.unique",
    "consumed.fanout",
    "consumer.commits_ok",
    "consumer.commits_failed",
    "consumer.commits_unknown",
    "latency_ms.e2e.p50",
    "latency_ms.e2e.p99",
    "G1a",
    "uncommitted_read",
    "partial_commit",
    "zombie_write",
    "int_send_skip",
    "int_nonmonotonic_send",
    "pipeline_duplicate",
    "pipeline_lost",
    "aborted_read_uncommitted",
    "txn.committed",
    "txn.aborted",
    "txn.unknown",
    "txn.fenced_instances",
    "txn.resumed",
    "pipeline.inputs",
    "pipeline.outputs",
};

/* ---- Raw groups: the file's text, group by group ---- */

typedef struct {
    char *key;
    char *value;
    guint line;   /* 1-based; 0 when it did not come from a file line */
    char *origin; /* NULL: the file; else the --set assignment that wrote it */
} RawEntry;

typedef struct {
    char *name; /* "topic orders", white space normalized */
    GroupKind kind;
    char *object;       /* "orders"; NULL for unnamed kinds */
    guint line;         /* 0 for an implicit [scenario] or [cluster] */
    GPtrArray *entries; /* RawEntry*, file order */
} RawGroup;

typedef struct {
    char *key;         /* as canonical text: "acks" or "topic orders:min.insync.replicas" */
    char *group;       /* NULL for a bare key */
    char *name;        /* the configuration key */
    GPtrArray *values; /* char* */
    guint line;
    GArray *targets; /* guint indexes into the groups */
} VaryDim;

struct Scenario {
    char *path;
    char *display_name;
    char *sha256;
    char *name;
    char *description;
    guint64 seed;
    GPtrArray *groups;    /* RawGroup* */
    GPtrArray *vary;      /* VaryDim* */
    GPtrArray *expects;   /* ScenarioExpect* */
    GPtrArray *overrides; /* char* */
    guint variant_count;
};

struct ScenarioVariant {
    guint index;
    char *label;
    GPtrArray *settings; /* ScenarioSetting* */
    char *name;
    char *description;
    gint64 duration_ns;
    gint64 quiet_ns;
    guint64 seed;
    gboolean paranoid;
    ScenarioCluster cluster;
    GPtrArray *topics;          /* ScenarioTopic* */
    GPtrArray *producers;       /* ScenarioProducer* */
    GPtrArray *consumer_groups; /* ScenarioConsumerGroup* */
    GPtrArray *faults;          /* ScenarioFault* */
    ScenarioRandomFaults *random_faults;
};

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
    KSIM_ASSERT((object != NULL) == GROUP_KINDS[kind].named);
    RawGroup *group = g_new0(RawGroup, 1);
    group->name = g_strdup(name);
    group->kind = kind;
    group->object = g_strdup(object);
    group->line = line;
    group->entries = g_ptr_array_new_with_free_func(raw_entry_free);
    return group;
}

static void
raw_group_free(gpointer data)
{
    RawGroup *group = data;
    g_free(group->name);
    g_free(group->object);
    g_ptr_array_unref(group->entries);
    g_free(group);
}

static GPtrArray *
groups_copy(const GPtrArray *groups)
{
    GPtrArray *copy = g_ptr_array_new_with_free_func(raw_group_free);
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

static RawEntry *
group_find_entry(const RawGroup *group, const char *key)
{
    for (guint i = 0; i < group->entries->len; i++) {
        RawEntry *entry = group->entries->pdata[i];
        if (strcmp(entry->key, key) == 0)
            return entry;
    }
    return NULL;
}

/* Writes `key = value` into a group as if the file said so at `line`. */
static void
group_set(RawGroup *group, const char *key, const char *value, guint line, const char *origin)
{
    RawEntry *entry = group_find_entry(group, key);
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

static gint
groups_find(const GPtrArray *groups, const char *name)
{
    for (guint i = 0; i < groups->len; i++) {
        const RawGroup *group = groups->pdata[i];
        if (strcmp(group->name, name) == 0)
            return (gint)i;
    }
    return -1;
}

static RawGroup *
groups_find_kind(const GPtrArray *groups, GroupKind kind)
{
    KSIM_ASSERT(!GROUP_KINDS[kind].named);
    for (guint i = 0; i < groups->len; i++) {
        RawGroup *group = groups->pdata[i];
        if (group->kind == kind)
            return group;
    }
    return NULL;
}

static void
vary_dim_free(gpointer data)
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

static GPtrArray *
vary_copy(const GPtrArray *vary)
{
    GPtrArray *copy = g_ptr_array_new_with_free_func(vary_dim_free);
    for (guint i = 0; i < vary->len; i++)
        g_ptr_array_add(copy, vary_dim_copy(vary->pdata[i]));
    return copy;
}

/* ---- Locations and messages ---- */

typedef struct {
    const char *file;
    guint line;         /* 0: no line */
    const char *origin; /* a --set assignment, shown in place of the line */
    const char *group;
    const char *key;
} Loc;

static void G_GNUC_PRINTF(4, 5)
    loc_error(GError **error, KsimScenarioErrorCode code, const Loc *loc, const char *format, ...)
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

static Loc
loc_line(const Scenario *s, guint line)
{
    return (Loc){s->display_name, line, NULL, NULL, NULL};
}

static Loc
loc_group(const Scenario *s, const RawGroup *group)
{
    return (Loc){s->display_name, group->line, NULL, group->name, NULL};
}

static Loc
loc_entry(const Scenario *s, const RawGroup *group, const RawEntry *entry)
{
    return (Loc){s->display_name, entry->line, entry->origin, group->name, entry->key};
}

/* Where `key` of `group` was set, or the group itself (naming the key) when
 * the value is a default. */
static Loc
loc_key(const Scenario *s, const RawGroup *group, const char *key)
{
    const RawEntry *entry = group_find_entry(group, key);
    if (entry != NULL)
        return loc_entry(s, group, entry);
    Loc loc = loc_group(s, group);
    loc.key = key;
    return loc;
}

/* " (did you mean 'X'?)" or "". (transfer full) */
static char *
did_you_mean(const char *suggestion)
{
    if (suggestion == NULL)
        return g_strdup("");
    return g_strdup_printf("; did you mean '%s'?", suggestion);
}

static const char *
scope_home(KConfigScope scope)
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
static char *
unknown_key_message(const char *key, guint scopes)
{
    guint elsewhere = kconfig_scopes_of(key) & ~scopes;
    if (elsewhere != 0) {
        KConfigScope scope = (KConfigScope)(elsewhere & (~elsewhere + 1u));
        return g_strdup_printf("not valid here: it is a %s key, for %s", kconfig_scope_name(scope),
                               scope_home(scope));
    }
    g_autofree char *hint = did_you_mean(kconfig_suggest(key, scopes));
    return g_strdup_printf("unknown key%s", hint);
}

/* A duration as a user would write it, in the largest of s, ms, us, ns that
 * divides it (seconds rather than minutes: files mostly say "60s"). */
static char *
format_duration(gint64 ns)
{
    static const struct {
        const char *suffix;
        gint64 factor;
    } units[] = {{"s", 1000000000}, {"ms", 1000000}, {"us", 1000}};
    for (guint i = 0; i < G_N_ELEMENTS(units); i++) {
        if (ns != 0 && ns % units[i].factor == 0)
            return g_strdup_printf("%" G_GINT64_FORMAT "%s", ns / units[i].factor, units[i].suffix);
    }
    return g_strdup_printf("%" G_GINT64_FORMAT "ns", ns);
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
static char *
normalize_space(const char *text)
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
    Loc loc = loc_line(scan->scenario, line);
    gsize length = strlen(text);
    if (length < 2 || text[length - 1] != ']') {
        loc_error(error, KSIM_SCENARIO_ERROR_SYNTAX, &loc,
                  "'%s' is not a group line "
                  "(expected '[group]')",
                  text);
        return FALSE;
    }
    g_autofree char *inner = g_strndup(text + 1, length - 2);
    g_autofree char *name = normalize_space(inner);
    if (*name == '\0' || strpbrk(name, "[]") != NULL) {
        loc_error(error, KSIM_SCENARIO_ERROR_SYNTAX, &loc, "'%s' is not a valid group name", text);
        return FALSE;
    }
    gpointer first = g_hash_table_lookup(scan->lines, name);
    if (first != NULL) {
        loc.group = name;
        loc_error(error, KSIM_SCENARIO_ERROR_SYNTAX, &loc, "appears twice (first at line %u)",
                  GPOINTER_TO_UINT(first));
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
    Loc loc = loc_line(scan->scenario, line);
    if (scan->group == NULL) {
        loc_error(error, KSIM_SCENARIO_ERROR_SYNTAX, &loc, "'%s' comes before any [group] line",
                  text);
        return FALSE;
    }
    loc.group = scan->group;
    const char *equals = strchr(text, '=');
    if (equals == NULL) {
        loc_error(error, KSIM_SCENARIO_ERROR_SYNTAX, &loc, "expected 'key = value', found '%s'",
                  text);
        return FALSE;
    }
    g_autofree char *key = g_strstrip(g_strndup(text, (gsize)(equals - text)));
    g_autofree char *value = g_strstrip(g_strdup(equals + 1));
    if (*key == '\0' || strpbrk(key, "[]") != NULL) {
        loc_error(error, KSIM_SCENARIO_ERROR_SYNTAX, &loc, "'%s' has no valid key before '='",
                  text);
        return FALSE;
    }
    loc.key = key;
    char *where = line_key(scan->group, key);
    gpointer first = g_hash_table_lookup(scan->lines, where);
    if (first != NULL) {
        g_free(where);
        loc_error(error, KSIM_SCENARIO_ERROR_SYNTAX, &loc, "set twice (first at line %u)",
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
    Loc loc = loc_line(s, line);
    loc.group = name;
    g_auto(GStrv) words = g_strsplit(name, " ", -1);
    guint n_words = g_strv_length(words);
    const char *kinds[G_N_ELEMENTS(GROUP_KINDS)];
    for (guint i = 0; i < G_N_ELEMENTS(GROUP_KINDS); i++)
        kinds[i] = GROUP_KINDS[i].name;
    gint found = -1;
    for (guint i = 0; i < G_N_ELEMENTS(GROUP_KINDS); i++) {
        if (strcmp(words[0], kinds[i]) == 0)
            found = (gint)i;
    }
    if (found < 0) {
        g_autofree char *hint =
            did_you_mean(kconfig_suggest_among(words[0], kinds, G_N_ELEMENTS(kinds)));
        loc_error(error, KSIM_SCENARIO_ERROR_UNKNOWN, &loc, "unknown group '%s'%s", words[0], hint);
        return FALSE;
    }
    const GroupKindInfo *info = &GROUP_KINDS[found];
    if (n_words != (info->named ? 2u : 1u)) {
        loc_error(error, KSIM_SCENARIO_ERROR_SYNTAX, &loc, "expected %s", info->example);
        return FALSE;
    }
    if (info->named && !name_is_valid(words[1])) {
        loc_error(error, KSIM_SCENARIO_ERROR_VALUE, &loc,
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
    guint scopes = GROUP_KINDS[group->kind].scopes;
    for (gsize i = 0; i < n_keys; i++) {
        g_autofree char *where = line_key(group->name, keys[i]);
        guint line = GPOINTER_TO_UINT(g_hash_table_lookup(lines, where));
        KSIM_ASSERT(line != 0);
        if (scopes != 0 && kconfig_lookup(keys[i], scopes) == NULL) {
            Loc loc = {s->display_name, line, NULL, group->name, keys[i]};
            g_autofree char *why = unknown_key_message(keys[i], scopes);
            loc_error(error, KSIM_SCENARIO_ERROR_UNKNOWN, &loc, "%s", why);
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
    if (groups_find_kind(s->groups, GROUP_CLUSTER) == NULL)
        g_ptr_array_insert(s->groups, 0, raw_group_new("cluster", GROUP_CLUSTER, NULL, 0));
    if (groups_find_kind(s->groups, GROUP_SCENARIO) == NULL)
        g_ptr_array_insert(s->groups, 0, raw_group_new("scenario", GROUP_SCENARIO, NULL, 0));
    return TRUE;
}

static gboolean
parse_text(Scenario *s, const char *text, GError **error)
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
        Loc loc = loc_line(s, 0);
        loc_error(error, KSIM_SCENARIO_ERROR_SYNTAX, &loc, "%s", local->message);
        return FALSE;
    }
    return read_groups(s, key_file, lines, error);
}

/* ---- Keys in [vary], --set and `when`: bare or GROUP:key ---- */

/* Splits "topic orders:min.insync.replicas" at its last ':'. */
static gboolean
split_qualified_key(const char *text, char **group, char **name)
{
    const char *colon = strrchr(text, ':');
    g_autofree char *group_part = colon != NULL ? g_strndup(text, (gsize)(colon - text)) : NULL;
    *group = group_part != NULL ? normalize_space(group_part) : NULL;
    *name = g_strstrip(g_strdup(colon != NULL ? colon + 1 : text));
    if (**name != '\0' && (*group == NULL || **group != '\0'))
        return TRUE;
    g_clear_pointer(group, g_free);
    g_clear_pointer(name, g_free);
    return FALSE;
}

static char *
qualified_key(const char *group, const char *name)
{
    return group != NULL ? g_strdup_printf("%s:%s", group, name) : g_strdup(name);
}

static gboolean
resolve_qualified(const Scenario *s, const GPtrArray *groups, const Loc *loc, const char *group,
                  const char *name, GArray *targets, GError **error)
{
    gint index = groups_find(groups, group);
    if (index < 0) {
        g_autoptr(GPtrArray) names = g_ptr_array_new();
        for (guint i = 0; i < groups->len; i++)
            g_ptr_array_add(names, ((RawGroup *)groups->pdata[i])->name);
        const char *suggestion =
            kconfig_suggest_among(group, (const char *const *)names->pdata, names->len);
        g_autofree char *hint = did_you_mean(suggestion);
        loc_error(error, KSIM_SCENARIO_ERROR_UNKNOWN, loc, "no group [%s] in %s%s", group,
                  s->display_name, hint);
        return FALSE;
    }
    const RawGroup *target = groups->pdata[index];
    guint scopes = GROUP_KINDS[target->kind].scopes;
    if (scopes == 0) {
        loc_error(error, KSIM_SCENARIO_ERROR_UNKNOWN, loc, "[%s] cannot be changed this way",
                  group);
        return FALSE;
    }
    if (kconfig_lookup(name, scopes) == NULL) {
        g_autofree char *why = unknown_key_message(name, scopes);
        loc_error(error, KSIM_SCENARIO_ERROR_UNKNOWN, loc, "%s in [%s]", why, group);
        return FALSE;
    }
    guint value = (guint)index;
    g_array_append_val(targets, value);
    return TRUE;
}

/* The groups a key reaches: the named group, or for a bare key every group
 * among [scenario], [cluster], topics, producers and consumer groups where it
 * is valid. */
static gboolean
resolve_targets(const Scenario *s, const GPtrArray *groups, const Loc *loc, const char *group,
                const char *name, GArray *targets, GError **error)
{
    if (group != NULL)
        return resolve_qualified(s, groups, loc, group, name, targets, error);
    guint bare_scopes = 0;
    for (guint i = 0; i < groups->len; i++) {
        const RawGroup *candidate = groups->pdata[i];
        const GroupKindInfo *info = &GROUP_KINDS[candidate->kind];
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
        g_autofree char *why = unknown_key_message(name, bare_scopes);
        loc_error(error, KSIM_SCENARIO_ERROR_UNKNOWN, loc, "%s", why);
        return FALSE;
    }
    KConfigScope scope = (KConfigScope)(scopes & (~scopes + 1u));
    if (scope == KCONFIG_SCOPE_FAULT || scope == KCONFIG_SCOPE_RANDOM_FAULTS)
        loc_error(error, KSIM_SCENARIO_ERROR_UNKNOWN, loc,
                  "a %s key must name its group, e.g. 'fault NAME:%s'", kconfig_scope_name(scope),
                  name);
    else
        loc_error(error, KSIM_SCENARIO_ERROR_UNKNOWN, loc,
                  "no group takes it: it is a %s key, for %s, and the scenario has none",
                  kconfig_scope_name(scope), scope_home(scope));
    return FALSE;
}

/* Checks `value` for `name` in every target group. */
static gboolean
check_target_values(const GPtrArray *groups, const GArray *targets, const char *name,
                    const char *value, const Loc *loc, GError **error)
{
    for (guint i = 0; i < targets->len; i++) {
        const RawGroup *group = groups->pdata[g_array_index(targets, guint, i)];
        const KConfigKey *key = kconfig_lookup(name, GROUP_KINDS[group->kind].scopes);
        KSIM_ASSERT(key != NULL);
        g_autoptr(GError) local = NULL;
        if (!kconfig_check_value(key, value, &local)) {
            loc_error(error, KSIM_SCENARIO_ERROR_VALUE, loc, "%s", local->message);
            return FALSE;
        }
    }
    return TRUE;
}

static gboolean
targets_intersect(const GArray *a, const GArray *b)
{
    for (guint i = 0; i < a->len; i++) {
        for (guint j = 0; j < b->len; j++) {
            if (g_array_index(a, guint, i) == g_array_index(b, guint, j))
                return TRUE;
        }
    }
    return FALSE;
}

static gboolean
targets_equal(const GArray *a, const GArray *b)
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
        loc_error(error, KSIM_SCENARIO_ERROR_VALUE, loc, "lists no values");
        return FALSE;
    }
    g_auto(GStrv) parts = g_strsplit(text, separator, -1);
    for (guint i = 0; parts[i] != NULL; i++) {
        const char *value = g_strstrip(parts[i]);
        if (*value == '\0') {
            loc_error(error, KSIM_SCENARIO_ERROR_VALUE, loc, "empty value in '%s'", text);
            return FALSE;
        }
        for (guint j = 0; j < values->len; j++) {
            if (strcmp(values->pdata[j], value) != 0)
                continue;
            loc_error(error, KSIM_SCENARIO_ERROR_VALUE, loc, "'%s' is listed twice", value);
            return FALSE;
        }
        if (values->len == SCENARIO_VARY_VALUES_MAX) {
            loc_error(error, KSIM_SCENARIO_ERROR_VALUE, loc, "more than %u values",
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
        if (strcmp(other->name, dim->name) != 0 || !targets_intersect(other->targets, dim->targets))
            continue;
        loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, loc,
                  "varies the same setting as '%s' (line %u)", other->key, other->line);
        return FALSE;
    }
    return TRUE;
}

static gboolean
parse_vary_entry(Scenario *s, const RawGroup *group, const RawEntry *entry, guint *runs,
                 GError **error)
{
    Loc loc = loc_entry(s, group, entry);
    g_autofree char *group_name = NULL;
    g_autofree char *name = NULL;
    if (!split_qualified_key(entry->key, &group_name, &name)) {
        loc_error(error, KSIM_SCENARIO_ERROR_SYNTAX, &loc, "expected KEY or GROUP:KEY");
        return FALSE;
    }
    VaryDim *dim = g_new0(VaryDim, 1);
    dim->key = qualified_key(group_name, name);
    dim->group = g_steal_pointer(&group_name);
    dim->name = g_steal_pointer(&name);
    dim->values = g_ptr_array_new_with_free_func(g_free);
    dim->line = entry->line;
    dim->targets = g_array_new(FALSE, FALSE, sizeof(guint));
    /* Added before its checks, so that a dimension that fails is freed with
     * the scenario. */
    g_ptr_array_add(s->vary, dim);
    if (!resolve_targets(s, s->groups, &loc, dim->group, dim->name, dim->targets, error) ||
        !check_vary_overlap(s->vary, dim, &loc, error) ||
        !split_values(entry->value, dim->values, &loc, error))
        return FALSE;
    for (guint i = 0; i < dim->values->len; i++) {
        if (!check_target_values(s->groups, dim->targets, dim->name, dim->values->pdata[i], &loc,
                                 error))
            return FALSE;
    }
    *runs *= dim->values->len;
    if (*runs > SCENARIO_VARIANTS_MAX) {
        loc_error(error, KSIM_SCENARIO_ERROR_VALUE, &loc, "[vary] makes more than %u runs",
                  SCENARIO_VARIANTS_MAX);
        return FALSE;
    }
    return TRUE;
}

static gboolean
parse_vary(Scenario *s, GError **error)
{
    s->variant_count = 1;
    const RawGroup *group = groups_find_kind(s->groups, GROUP_VARY);
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

static void
expect_free(gpointer data)
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

static gboolean
metric_is_known(const char *metric)
{
    for (guint i = 0; i < G_N_ELEMENTS(METRICS); i++) {
        if (strcmp(METRICS[i], metric) == 0)
            return TRUE;
    }
    return FALSE;
}

static gboolean
parse_comparison(const char *text, ScenarioExpect *expect, const Loc *loc, GError **error)
{
    const char *at = NULL;
    gsize length = 0;
    if (!find_op(text, &expect->op, &at, &length)) {
        loc_error(error, KSIM_SCENARIO_ERROR_SYNTAX, loc,
                  "expected METRIC OP NUMBER (OP: == != < <= > >=), found '%s'", text);
        return FALSE;
    }
    expect->metric = g_strstrip(g_strndup(text, (gsize)(at - text)));
    if (!metric_is_known(expect->metric)) {
        g_autofree char *hint =
            did_you_mean(kconfig_suggest_among(expect->metric, METRICS, G_N_ELEMENTS(METRICS)));
        loc_error(error, KSIM_SCENARIO_ERROR_UNKNOWN, loc, "unknown metric '%s'%s", expect->metric,
                  hint);
        return FALSE;
    }
    g_autofree char *number = g_strstrip(g_strdup(at + length));
    char *end = NULL;
    expect->value = g_ascii_strtod(number, &end);
    if (*number == '\0' || *end != '\0' || !isfinite(expect->value)) {
        loc_error(error, KSIM_SCENARIO_ERROR_VALUE, loc, "'%s' is not a number", number);
        return FALSE;
    }
    return TRUE;
}

/* The dimension a `when` key names: as [vary] writes it, or bare when one
 * dimension varies that key. */
static const VaryDim *
find_dim(const GPtrArray *vary, const char *key, guint *matches)
{
    g_autofree char *group = NULL;
    g_autofree char *name = NULL;
    *matches = 0;
    if (!split_qualified_key(key, &group, &name))
        return NULL;
    g_autofree char *canonical = qualified_key(group, name);
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
    loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, loc,
              "'when %s=%s': %s is not among the varied values of %s (%s)", dim->key, value, value,
              dim->key, listed->str);
    g_string_free(listed, TRUE);
    return FALSE;
}

static gboolean
parse_condition(const Scenario *s, const char *text, ScenarioExpect *expect, const Loc *loc,
                GError **error)
{
    const char *equals = strchr(text, '=');
    if (equals == NULL || equals == text) {
        loc_error(error, KSIM_SCENARIO_ERROR_SYNTAX, loc,
                  "'when %s': expected KEY=VALUE or KEY!=VALUE", text);
        return FALSE;
    }
    gboolean negated = equals[-1] == '!';
    g_autofree char *key = g_strstrip(g_strndup(text, (gsize)(equals - text - (negated ? 1 : 0))));
    g_autofree char *value = g_strstrip(g_strdup(equals + 1));
    guint matches = 0;
    const VaryDim *dim = find_dim(s->vary, key, &matches);
    if (dim == NULL) {
        loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, loc,
                  matches > 1 ? "'when %s': several [vary] keys vary %s; write it as [vary] does"
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
    Loc loc = loc_entry(s, group, entry);
    ScenarioExpect *expect = g_new0(ScenarioExpect, 1);
    expect->name = g_strdup(entry->key);
    expect->text = g_strdup(entry->value);
    expect->line = entry->line;
    expect->when = g_ptr_array_new_with_free_func(condition_free);
    g_ptr_array_add(s->expects, expect);
    g_auto(GStrv) parts = g_regex_split_simple("\\s+when\\s+", entry->value, 0, 0);
    if (g_strv_length(parts) > 2 || g_strv_length(parts) == 0) {
        loc_error(error, KSIM_SCENARIO_ERROR_SYNTAX, &loc,
                  "expected METRIC OP NUMBER [when KEY=VALUE [and ...]]");
        return FALSE;
    }
    if (!parse_comparison(parts[0], expect, &loc, error))
        return FALSE;
    if (parts[1] == NULL)
        return TRUE;
    g_auto(GStrv) conditions = g_regex_split_simple("\\s*,\\s*|\\s+and\\s+", parts[1], 0, 0);
    for (guint i = 0; conditions[i] != NULL; i++) {
        if (!parse_condition(s, g_strstrip(conditions[i]), expect, &loc, error))
            return FALSE;
    }
    return TRUE;
}

static gboolean
parse_expects(Scenario *s, GError **error)
{
    const RawGroup *group = groups_find_kind(s->groups, GROUP_EXPECT);
    if (group == NULL)
        return TRUE;
    for (guint i = 0; i < group->entries->len; i++) {
        if (!parse_expect_entry(s, group, group->entries->pdata[i], error))
            return FALSE;
    }
    return TRUE;
}

/* ---- Pass 3: building one run ---- */

typedef struct {
    const Scenario *scenario;
    GPtrArray *groups; /* RawGroup*, with the run's values written in */
    ScenarioVariant *variant;
} Build;

/* Topics, producers and consumer groups start with their name, so messages
 * about them can list and suggest names with one helper. */
G_STATIC_ASSERT(G_STRUCT_OFFSET(ScenarioTopic, name) == 0);
G_STATIC_ASSERT(G_STRUCT_OFFSET(ScenarioProducer, name) == 0);

static GPtrArray *
object_names(const GPtrArray *objects)
{
    GPtrArray *names = g_ptr_array_new();
    for (guint i = 0; i < objects->len; i++)
        g_ptr_array_add(names, *(char **)objects->pdata[i]);
    return names;
}

static gpointer
find_object(const GPtrArray *objects, const char *name)
{
    for (guint i = 0; i < objects->len; i++) {
        if (strcmp(*(char **)objects->pdata[i], name) == 0)
            return objects->pdata[i];
    }
    return NULL;
}

/* "there is no topic 'x'; did you mean 'orders'?" (transfer full) */
static char *
no_such_message(const char *what, const char *name, const GPtrArray *objects)
{
    g_autoptr(GPtrArray) names = object_names(objects);
    const char *suggestion =
        kconfig_suggest_among(name, (const char *const *)names->pdata, names->len);
    if (suggestion != NULL)
        return g_strdup_printf("there is no %s '%s'; did you mean '%s'?", what, name, suggestion);
    if (names->len == 0)
        return g_strdup_printf("there is no %s '%s' (the scenario has none)", what, name);
    g_ptr_array_add(names, NULL);
    g_autofree char *listed = g_strjoinv(", ", (char **)names->pdata);
    return g_strdup_printf("there is no %s '%s' (there are: %s)", what, name, listed);
}

static KConfig *
config_for_scope(KConfig *const *configs, guint n_configs, KConfigScope scope)
{
    for (guint i = 0; i < n_configs; i++) {
        if ((kconfig_scope_mask(configs[i]) & scope) != 0)
            return configs[i];
    }
    KSIM_ASSERT(!"no configuration takes the scope");
    return NULL;
}

static gboolean
check_required(const Build *b, const RawGroup *group, KConfig *const *configs, guint n_configs,
               GError **error)
{
    guint n_keys = 0;
    const KConfigKey *keys = kconfig_registry(&n_keys);
    for (guint c = 0; c < n_configs; c++) {
        for (guint i = 0; i < n_keys; i++) {
            if ((keys[i].flags & KCONFIG_FLAG_REQUIRED) == 0 ||
                (keys[i].scope & kconfig_scope_mask(configs[c])) == 0 ||
                kconfig_is_set(configs[c], keys[i].name))
                continue;
            Loc loc = loc_key(b->scenario, group, keys[i].name);
            loc_error(error, KSIM_SCENARIO_ERROR_MISSING, &loc, "is required");
            return FALSE;
        }
    }
    return TRUE;
}

/* Sets every entry of `group` in the configuration of its key's scope. */
static gboolean
fill_configs(const Build *b, const RawGroup *group, KConfig *const *configs, guint n_configs,
             GError **error)
{
    guint scopes = GROUP_KINDS[group->kind].scopes;
    for (guint i = 0; i < group->entries->len; i++) {
        const RawEntry *entry = group->entries->pdata[i];
        const KConfigKey *key = kconfig_lookup(entry->key, scopes);
        KSIM_ASSERT(key != NULL);
        g_autoptr(GError) local = NULL;
        if (!kconfig_check_value(key, entry->value, &local)) {
            Loc loc = loc_entry(b->scenario, group, entry);
            loc_error(error, KSIM_SCENARIO_ERROR_VALUE, &loc, "%s", local->message);
            return FALSE;
        }
        KConfig *cfg = config_for_scope(configs, n_configs, key->scope);
        gboolean ok = kconfig_set(cfg, entry->key, entry->value, NULL);
        KSIM_ASSERT(ok);
    }
    return check_required(b, group, configs, n_configs, error);
}

/* "dir/acks-durability.ini" -> "acks-durability". (transfer full) */
static char *
default_name(const char *display_name)
{
    char *base = g_path_get_basename(display_name);
    if (g_str_has_suffix(base, ".ini"))
        base[strlen(base) - 4] = '\0';
    return base;
}

static gboolean
build_scenario(Build *b, GError **error)
{
    const RawGroup *group = groups_find_kind(b->groups, GROUP_SCENARIO);
    KSIM_ASSERT(group != NULL);
    g_autoptr(KConfig) cfg = kconfig_new(KCONFIG_SCOPE_SCENARIO);
    if (!fill_configs(b, group, &cfg, 1, error))
        return FALSE;
    ScenarioVariant *v = b->variant;
    v->name = kconfig_is_null(cfg, "name") ? default_name(b->scenario->display_name)
                                           : g_strdup(kconfig_get_string(cfg, "name"));
    v->description = g_strdup(kconfig_get_string(cfg, "description"));
    v->duration_ns = kconfig_get_duration_ns(cfg, "duration");
    v->quiet_ns = kconfig_get_duration_ns(cfg, "quiet");
    v->seed = (guint64)kconfig_get_int64(cfg, "seed");
    v->paranoid = kconfig_get_bool(cfg, "paranoid");
    KSIM_ASSERT(v->duration_ns > 0);
    return TRUE;
}

static gboolean
check_broker_config(const Build *b, const RawGroup *group, const KConfig *cfg, GError **error)
{
    gint64 wait_ns = kconfig_get_duration_ns(cfg, "replica.fetch.wait.max.ms");
    gint64 lag_ns = kconfig_get_duration_ns(cfg, "replica.lag.time.max.ms");
    if (wait_ns > lag_ns) {
        /* Kafka refuses this too: followers would drop out of the ISR while
         * their fetches wait. */
        g_autofree char *lag = format_duration(lag_ns);
        Loc loc = loc_key(b->scenario, group, "replica.fetch.wait.max.ms");
        loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                  "must not exceed replica.lag.time.max.ms (%s), as Kafka requires", lag);
        return FALSE;
    }
    gint64 min_ns = kconfig_get_duration_ns(cfg, "group.min.session.timeout.ms");
    gint64 max_ns = kconfig_get_duration_ns(cfg, "group.max.session.timeout.ms");
    if (min_ns > max_ns) {
        Loc loc = loc_key(b->scenario, group, "group.min.session.timeout.ms");
        loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                  "is above group.max.session.timeout.ms");
        return FALSE;
    }
    return TRUE;
}

static gboolean
build_cluster(Build *b, GError **error)
{
    const RawGroup *group = groups_find_kind(b->groups, GROUP_CLUSTER);
    KSIM_ASSERT(group != NULL);
    ScenarioCluster *cluster = &b->variant->cluster;
    g_autoptr(KConfig) hardware = kconfig_new(KCONFIG_SCOPE_CLUSTER);
    cluster->config = kconfig_new(KCONFIG_SCOPE_BROKER);
    KConfig *configs[] = {hardware, cluster->config};
    if (!fill_configs(b, group, configs, G_N_ELEMENTS(configs), error))
        return FALSE;
    cluster->brokers = (guint)kconfig_get_int64(hardware, "brokers");
    cluster->network_latency = kconfig_get_dist(hardware, "network.latency");
    cluster->network_bandwidth_bytes_per_s = kconfig_get_bytes(hardware, "network.bandwidth");
    cluster->disk_fsync_latency = kconfig_get_dist(hardware, "disk.fsync.latency");
    KSIM_ASSERT(cluster->brokers >= 1);
    return check_broker_config(b, group, cluster->config, error);
}

/* Where a topic's effective value of `topic_key` came from: the topic, else
 * the cluster's `broker_key`, else the topic group (a default). */
static Loc
loc_topic_key(const Build *b, const RawGroup *group, const char *topic_key, const char *broker_key)
{
    if (group_find_entry(group, topic_key) != NULL)
        return loc_key(b->scenario, group, topic_key);
    const RawGroup *cluster = groups_find_kind(b->groups, GROUP_CLUSTER);
    if (group_find_entry(cluster, broker_key) != NULL)
        return loc_key(b->scenario, cluster, broker_key);
    return loc_key(b->scenario, group, topic_key);
}

static void
topic_free(gpointer data)
{
    ScenarioTopic *topic = data;
    g_free(topic->name);
    kconfig_free(topic->config);
    g_free(topic);
}

static gboolean
build_topic(Build *b, const RawGroup *group, GError **error)
{
    const ScenarioCluster *cluster = &b->variant->cluster;
    ScenarioTopic *topic = g_new0(ScenarioTopic, 1);
    topic->name = g_strdup(group->object);
    topic->config = kconfig_new_topic(cluster->config);
    g_ptr_array_add(b->variant->topics, topic);
    if (!fill_configs(b, group, &topic->config, 1, error))
        return FALSE;
    topic->partitions = (guint)kconfig_get_int64(topic->config, "partitions");
    topic->replication_factor = (guint)kconfig_get_int64(topic->config, "replication.factor");
    if (topic->replication_factor > cluster->brokers) {
        Loc loc = loc_topic_key(b, group, "replication.factor", "default.replication.factor");
        loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                  "replication factor %u of topic %s is above the number of brokers (%u)",
                  topic->replication_factor, topic->name, cluster->brokers);
        return FALSE;
    }
    gint64 min_isr = kconfig_get_int64(topic->config, "min.insync.replicas");
    if (min_isr > (gint64)topic->replication_factor) {
        Loc loc = loc_topic_key(b, group, "min.insync.replicas", "min.insync.replicas");
        loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                  "%" G_GINT64_FORMAT " is above the replication factor %u of topic %s "
                  "(acks=all writes could never succeed)",
                  min_isr, topic->replication_factor, topic->name);
        return FALSE;
    }
    return TRUE;
}

/* ---- Producers and their workload ---- */

static void
producer_free(gpointer data)
{
    ScenarioProducer *producer = data;
    g_free(producer->name);
    g_free(producer->topic);
    kconfig_free(producer->config);
    g_free(producer);
}

static gboolean
has_unit(const char *text)
{
    for (const char *p = text; *p != '\0'; p++) {
        if (g_ascii_isalpha(*p))
            return TRUE;
    }
    return FALSE;
}

/* NULL, or why `text` is not ON,OFF. (transfer full) */
static char *
parse_burst(const char *text, gint64 *on_ns, gint64 *off_ns)
{
    g_auto(GStrv) parts = g_strsplit(text, ",", -1);
    gint64 *outs[] = {on_ns, off_ns};
    gboolean ok = g_strv_length(parts) == 2;
    for (guint i = 0; ok && i < 2; i++) {
        const char *part = g_strstrip(parts[i]);
        ok = has_unit(part) && sim_parse_duration_ns(part, 1, outs[i], NULL) && *outs[i] > 0;
    }
    if (ok)
        return NULL;
    return g_strdup_printf("'%s' is not ON,OFF: two positive durations with units, "
                           "e.g. 100ms,900ms",
                           text);
}

/* NULL, or why `text` is not none, uniform:K or zipf:K,S. (transfer full) */
static char *
parse_keys(const char *text, ScenarioWorkload *workload)
{
    workload->keys = SCENARIO_KEYS_NONE;
    if (strcmp(text, "none") == 0)
        return NULL;
    /* g_strsplit gives an empty vector for "", so parts[0] may be NULL. */
    g_auto(GStrv) parts = g_strsplit(text, ":", 2);
    const char *kind = parts[0] != NULL ? parts[0] : "";
    const char *body = parts[0] != NULL ? parts[1] : NULL;
    g_auto(GStrv) params = body != NULL ? g_strsplit(body, ",", -1) : NULL;
    guint n_params = params != NULL ? g_strv_length(params) : 0;
    gboolean uniform = strcmp(kind, "uniform") == 0 && n_params == 1;
    gboolean zipf = strcmp(kind, "zipf") == 0 && n_params == 2;
    gboolean ok =
        (uniform || zipf) && g_ascii_string_to_unsigned(g_strstrip(params[0]), 10, 1, G_MAXUINT32,
                                                        &workload->key_count, NULL);
    if (ok && zipf) {
        char *end = NULL;
        const char *s_text = g_strstrip(params[1]);
        workload->zipf_s = g_ascii_strtod(s_text, &end);
        ok = end != s_text && *end == '\0' && isfinite(workload->zipf_s) && workload->zipf_s > 0;
    }
    if (!ok)
        return g_strdup_printf("'%s' is not none, uniform:K or zipf:K,S (K keys, at least 1; "
                               "S > 0)",
                               text);
    workload->keys = uniform ? SCENARIO_KEYS_UNIFORM : SCENARIO_KEYS_ZIPF;
    return NULL;
}

static ScenarioArrival
arrival_of(const char *text)
{
    if (strcmp(text, "poisson") == 0)
        return SCENARIO_ARRIVAL_POISSON;
    if (strcmp(text, "bursts") == 0)
        return SCENARIO_ARRIVAL_BURSTS;
    KSIM_ASSERT(strcmp(text, "constant") == 0);
    return SCENARIO_ARRIVAL_CONSTANT;
}

static gboolean
workload_shapes(const Build *b, const RawGroup *group, const KConfig *cfg, ScenarioWorkload *w,
                GError **error)
{
    const Scenario *s = b->scenario;
    if (w->arrival != SCENARIO_ARRIVAL_BURSTS && kconfig_is_set(cfg, "workload.burst")) {
        Loc loc = loc_key(s, group, "workload.burst");
        loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                  "applies only with workload.arrival = bursts");
        return FALSE;
    }
    g_autofree char *why =
        parse_burst(kconfig_get_string(cfg, "workload.burst"), &w->burst_on_ns, &w->burst_off_ns);
    if (why == NULL)
        why = parse_keys(kconfig_get_string(cfg, "workload.keys"), w);
    else {
        Loc loc = loc_key(s, group, "workload.burst");
        loc_error(error, KSIM_SCENARIO_ERROR_VALUE, &loc, "%s", why);
        return FALSE;
    }
    if (why != NULL) {
        Loc loc = loc_key(s, group, "workload.keys");
        loc_error(error, KSIM_SCENARIO_ERROR_VALUE, &loc, "%s", why);
        return FALSE;
    }
    return TRUE;
}

static gboolean
workload_bounds(const Build *b, const RawGroup *group, const ScenarioTopic *topic,
                const ScenarioWorkload *w, GError **error)
{
    const Scenario *s = b->scenario;
    gint64 duration_ns = b->variant->duration_ns;
    if (w->partition >= 0 && (guint)w->partition >= topic->partitions) {
        Loc loc = loc_key(s, group, "workload.partition");
        loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                  "partition %d does not exist: topic %s has %u partitions (0..%u)", w->partition,
                  topic->name, topic->partitions, topic->partitions - 1);
        return FALSE;
    }
    g_autofree char *stop = format_duration(w->stop_ns);
    g_autofree char *end = format_duration(duration_ns);
    if (w->stop_ns > duration_ns) {
        Loc loc = loc_key(s, group, "workload.stop");
        loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                  "%s is past the end of the scenario (duration %s)", stop, end);
        return FALSE;
    }
    if (w->start_ns >= w->stop_ns) {
        g_autofree char *start = format_duration(w->start_ns);
        Loc loc = loc_key(s, group, "workload.start");
        loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                  "%s is not before workload.stop (%s)", start, stop);
        return FALSE;
    }
    return TRUE;
}

static gboolean
build_workload(const Build *b, const RawGroup *group, const KConfig *cfg,
               const ScenarioTopic *topic, ScenarioWorkload *w, GError **error)
{
    w->rate_per_s = kconfig_get_double(cfg, "workload.rate");
    w->arrival = arrival_of(kconfig_get_string(cfg, "workload.arrival"));
    w->record_size = kconfig_get_dist(cfg, "workload.record.size");
    w->partition = (gint32)kconfig_get_int64(cfg, "workload.partition");
    w->send_sync = strcmp(kconfig_get_string(cfg, "workload.send"), "sync") == 0;
    w->start_ns = kconfig_get_duration_ns(cfg, "workload.start");
    w->stop_ns = kconfig_is_null(cfg, "workload.stop")
                     ? b->variant->duration_ns
                     : kconfig_get_duration_ns(cfg, "workload.stop");
    w->txn_records = kconfig_is_null(cfg, "transaction.records")
                         ? 10
                         : (guint32)kconfig_get_int64(cfg, "transaction.records");
    w->txn_abort_ratio = kconfig_get_double(cfg, "transaction.abort.ratio");
    return workload_shapes(b, group, cfg, w, error) && workload_bounds(b, group, topic, w, error);
}

static gboolean
idempotence_error(const Build *b, const RawGroup *group, const char *key, const char *rule,
                  GError **error)
{
    Loc loc = loc_key(b->scenario, group, key);
    loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
              "conflicts with enable.idempotence = true: %s, as Kafka requires", rule);
    return FALSE;
}

/* Kafka's checks (ProducerConfig), which apply when enable.idempotence is set
 * explicitly; left at its default, Kafka quietly turns idempotence off
 * instead, which is the producer model's business. */
static gboolean
check_idempotence(const Build *b, const RawGroup *group, const KConfig *cfg, GError **error)
{
    if (!kconfig_is_set(cfg, "enable.idempotence"))
        return TRUE;
    if (!kconfig_get_bool(cfg, "enable.idempotence")) {
        if (kconfig_is_null(cfg, "transactional.id"))
            return TRUE;
        Loc loc = loc_key(b->scenario, group, "enable.idempotence");
        loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                  "must be true when transactional.id is set, as Kafka requires");
        return FALSE;
    }
    if (strcmp(kconfig_get_string(cfg, "acks"), "all") != 0)
        return idempotence_error(b, group, "acks", "the idempotent producer needs acks = all",
                                 error);
    if (kconfig_get_int64(cfg, "retries") == 0)
        return idempotence_error(b, group, "retries", "the idempotent producer needs retries > 0",
                                 error);
    if (kconfig_get_int64(cfg, "max.in.flight.requests.per.connection") > 5)
        return idempotence_error(b, group, "max.in.flight.requests.per.connection",
                                 "the idempotent producer allows at most 5", error);
    return TRUE;
}

static gboolean
check_delivery_timeout(const Build *b, const RawGroup *group, const KConfig *cfg, GError **error)
{
    if (!kconfig_is_set(cfg, "delivery.timeout.ms"))
        return TRUE;
    gint64 delivery_ns = kconfig_get_duration_ns(cfg, "delivery.timeout.ms");
    gint64 floor_ns = kconfig_get_duration_ns(cfg, "linger.ms") +
                      kconfig_get_duration_ns(cfg, "request.timeout.ms");
    if (delivery_ns >= floor_ns)
        return TRUE;
    g_autofree char *floor_text = format_duration(floor_ns);
    Loc loc = loc_key(b->scenario, group, "delivery.timeout.ms");
    loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
              "must be at least linger.ms + request.timeout.ms (%s), as Kafka requires",
              floor_text);
    return FALSE;
}

static const ScenarioTopic *
producer_topic(const Build *b, const RawGroup *group, const KConfig *workload, GError **error)
{
    const GPtrArray *topics = b->variant->topics;
    Loc loc = loc_key(b->scenario, group, "topic");
    if (kconfig_is_null(workload, "topic")) {
        if (topics->len == 1)
            return topics->pdata[0];
        loc_error(error, KSIM_SCENARIO_ERROR_MISSING, &loc,
                  topics->len == 0 ? "the scenario has no [topic NAME] group"
                                   : "is required when the scenario has several topics");
        return NULL;
    }
    const char *name = kconfig_get_string(workload, "topic");
    const ScenarioTopic *topic = find_object(topics, name);
    if (topic == NULL) {
        g_autofree char *why = no_such_message("topic", name, topics);
        loc_error(error, KSIM_SCENARIO_ERROR_UNKNOWN, &loc, "%s", why);
    }
    return topic;
}

/* The transactional workload keys need transactional.id, and a
 * transactional producer needs idempotence's settings (Kafka enables
 * idempotence for it and refuses contradicting keys). */
static gboolean
check_transactional(const Build *b, const RawGroup *group, const KConfig *cfg,
                    const KConfig *workload, GError **error)
{
    static const char *const keys[] = {"transaction.records", "transaction.abort.ratio"};
    gboolean transactional = !kconfig_is_null(cfg, "transactional.id");
    for (guint i = 0; i < G_N_ELEMENTS(keys) && !transactional; i++) {
        if (!kconfig_is_set(workload, keys[i]))
            continue;
        Loc loc = loc_key(b->scenario, group, keys[i]);
        loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                  "applies only to a transactional producer: set transactional.id");
        return FALSE;
    }
    if (!transactional)
        return TRUE;
    const char *id = kconfig_get_string(cfg, "transactional.id");
    if (strlen(id) == 0 || strlen(id) > SCENARIO_NAME_LENGTH_MAX) {
        Loc loc = loc_key(b->scenario, group, "transactional.id");
        loc_error(error, KSIM_SCENARIO_ERROR_VALUE, &loc, "must be 1 to %u characters",
                  SCENARIO_NAME_LENGTH_MAX);
        return FALSE;
    }
    if (strcmp(kconfig_get_string(cfg, "acks"), "all") != 0 && kconfig_is_set(cfg, "acks"))
        return idempotence_error(b, group, "acks", "a transactional producer needs acks = all",
                                 error);
    return TRUE;
}

static gboolean
build_producer(Build *b, const RawGroup *group, GError **error)
{
    ScenarioProducer *producer = g_new0(ScenarioProducer, 1);
    producer->name = g_strdup(group->object);
    producer->config = kconfig_new(KCONFIG_SCOPE_PRODUCER);
    g_ptr_array_add(b->variant->producers, producer);
    g_autoptr(KConfig) workload = kconfig_new(KCONFIG_SCOPE_WORKLOAD);
    KConfig *configs[] = {producer->config, workload};
    if (!fill_configs(b, group, configs, G_N_ELEMENTS(configs), error))
        return FALSE;
    const ScenarioTopic *topic = producer_topic(b, group, workload, error);
    if (topic == NULL)
        return FALSE;
    producer->topic = g_strdup(topic->name);
    producer->instances = (guint)kconfig_get_int64(workload, "instances");
    if (!build_workload(b, group, workload, topic, &producer->workload, error) ||
        !check_transactional(b, group, producer->config, workload, error))
        return FALSE;
    if (kconfig_is_null(producer->config, "transactional.id"))
        producer->workload.txn_records = 0;
    return check_idempotence(b, group, producer->config, error) &&
           check_delivery_timeout(b, group, producer->config, error);
}

/* ---- Consumer groups ---- */

static gboolean check_not_past_end(const Build *b, const RawGroup *group, const char *key,
                                   gint64 time_ns, GError **error);

static void
consumer_group_free(gpointer data)
{
    ScenarioConsumerGroup *group = data;
    g_free(group->name);
    g_free(group->group_id);
    g_free(group->pipeline_output);
    g_strfreev(group->topics);
    kconfig_free(group->config);
    g_free(group);
}

static gboolean
check_consumer_timeouts(const Build *b, const RawGroup *group, const KConfig *cfg, GError **error)
{
    gint64 session_ns = kconfig_get_duration_ns(cfg, "session.timeout.ms");
    gint64 heartbeat_ns = kconfig_get_duration_ns(cfg, "heartbeat.interval.ms");
    g_autofree char *session = format_duration(session_ns);
    if (heartbeat_ns >= session_ns) {
        Loc loc = loc_key(b->scenario, group, "heartbeat.interval.ms");
        loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                  "must be lower than session.timeout.ms (%s), as Kafka requires", session);
        return FALSE;
    }
    const KConfig *broker = b->variant->cluster.config;
    gint64 min_ns = kconfig_get_duration_ns(broker, "group.min.session.timeout.ms");
    gint64 max_ns = kconfig_get_duration_ns(broker, "group.max.session.timeout.ms");
    if (session_ns < min_ns || session_ns > max_ns) {
        g_autofree char *min = format_duration(min_ns);
        g_autofree char *max = format_duration(max_ns);
        Loc loc = loc_key(b->scenario, group, "session.timeout.ms");
        loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                  "%s is outside the brokers' group session bounds (%s..%s): the coordinator "
                  "would refuse every join",
                  session, min, max);
        return FALSE;
    }
    return TRUE;
}

/* The consumer model runs the eager rebalance protocol only. */
static gboolean
check_assignors(const Build *b, const RawGroup *group, const KConfig *cfg, GError **error)
{
    g_auto(GStrv) strategies = kconfig_get_list(cfg, "partition.assignment.strategy");
    if (!g_strv_contains((const char *const *)strategies, "cooperative-sticky"))
        return TRUE;
    Loc loc = loc_key(b->scenario, group, "partition.assignment.strategy");
    loc_error(error, KSIM_SCENARIO_ERROR_VALUE, &loc,
              "cooperative-sticky needs the incremental rebalance protocol, which ksim does not "
              "model; use range, roundrobin or sticky");
    return FALSE;
}

static gboolean
check_consumer_group_id(const Build *b, const RawGroup *group,
                        const ScenarioConsumerGroup *consumers, GError **error)
{
    gsize length = strlen(consumers->group_id);
    if (length > 0 && length <= SCENARIO_NAME_LENGTH_MAX)
        return TRUE;
    Loc loc = loc_key(b->scenario, group, "group.id");
    loc_error(error, KSIM_SCENARIO_ERROR_VALUE, &loc,
              "must be 1 to %u characters (or null: the group's name)", SCENARIO_NAME_LENGTH_MAX);
    return FALSE;
}

static gboolean
check_consumer_times(const Build *b, const RawGroup *group,
                     const ScenarioConsumerGroup *consumers, GError **error)
{
    if (!check_not_past_end(b, group, "members.start", consumers->start_ns, error) ||
        (consumers->stop_ns >= 0 &&
         !check_not_past_end(b, group, "members.stop", consumers->stop_ns, error)))
        return FALSE;
    if (consumers->stop_ns < 0 || consumers->start_ns < consumers->stop_ns)
        return TRUE;
    g_autofree char *start = format_duration(consumers->start_ns);
    g_autofree char *stop = format_duration(consumers->stop_ns);
    Loc loc = loc_key(b->scenario, group, "members.start");
    loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
              "%s is not before members.stop (%s)", start, stop);
    return FALSE;
}

/* pipeline.output names a topic the group does not read; exactly.once
 * needs a pipeline. */
static gboolean
check_pipeline(const Build *b, const RawGroup *group, const ScenarioConsumerGroup *consumers,
               const KConfig *members, GError **error)
{
    const char *output = consumers->pipeline_output;
    if (output == NULL) {
        if (!kconfig_is_set(members, "exactly.once"))
            return TRUE;
        Loc loc = loc_key(b->scenario, group, "exactly.once");
        loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                  "applies only to a pipeline: set pipeline.output");
        return FALSE;
    }
    Loc loc = loc_key(b->scenario, group, "pipeline.output");
    if (find_object(b->variant->topics, output) == NULL) {
        g_autofree char *why = no_such_message("topic", output, b->variant->topics);
        loc_error(error, KSIM_SCENARIO_ERROR_UNKNOWN, &loc, "%s", why);
        return FALSE;
    }
    if (g_strv_contains((const char *const *)consumers->topics, output)) {
        loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                  "%s is also an input of the group (topics): a pipeline would consume its own "
                  "output",
                  output);
        return FALSE;
    }
    return TRUE;
}

static gboolean
build_consumer_group(Build *b, const RawGroup *group, GError **error)
{
    ScenarioConsumerGroup *consumers = g_new0(ScenarioConsumerGroup, 1);
    consumers->name = g_strdup(group->object);
    consumers->config = kconfig_new(KCONFIG_SCOPE_CONSUMER);
    g_ptr_array_add(b->variant->consumer_groups, consumers);
    g_autoptr(KConfig) members = kconfig_new(KCONFIG_SCOPE_CONSUMER_GROUP);
    KConfig *configs[] = {consumers->config, members};
    if (!fill_configs(b, group, configs, G_N_ELEMENTS(configs), error))
        return FALSE;
    consumers->topics = kconfig_get_list(members, "topics");
    consumers->members = (guint)kconfig_get_int64(members, "members");
    consumers->group_id = kconfig_is_null(consumers->config, "group.id")
                              ? g_strdup(consumers->name)
                              : g_strdup(kconfig_get_string(consumers->config, "group.id"));
    const char *mode = kconfig_get_string(members, "processing.mode");
    consumers->processing_mode =
        strcmp(mode, "commit-before-processing") == 0 ? SCENARIO_PROCESSING_COMMIT_BEFORE_PROCESSING
        : strcmp(mode, "process-then-commit") == 0    ? SCENARIO_PROCESSING_PROCESS_THEN_COMMIT
                                                      : SCENARIO_PROCESSING_AUTO;
    consumers->processing_time = kconfig_get_dist(members, "processing.time");
    consumers->poll_interval = kconfig_get_dist(members, "poll.interval");
    consumers->start_ns = kconfig_get_duration_ns(members, "members.start");
    consumers->stop_ns = kconfig_is_null(members, "members.stop")
                             ? -1
                             : kconfig_get_duration_ns(members, "members.stop");
    consumers->exactly_once = kconfig_get_bool(members, "exactly.once");
    if (!kconfig_is_null(members, "pipeline.output"))
        consumers->pipeline_output = g_strdup(kconfig_get_string(members, "pipeline.output"));
    if (!check_assignors(b, group, consumers->config, error) ||
        !check_consumer_group_id(b, group, consumers, error) ||
        !check_consumer_times(b, group, consumers, error) ||
        !check_pipeline(b, group, consumers, members, error))
        return FALSE;
    for (guint i = 0; consumers->topics[i] != NULL; i++) {
        if (find_object(b->variant->topics, consumers->topics[i]) != NULL)
            continue;
        g_autofree char *why = no_such_message("topic", consumers->topics[i], b->variant->topics);
        Loc loc = loc_key(b->scenario, group, "topics");
        loc_error(error, KSIM_SCENARIO_ERROR_UNKNOWN, &loc, "%s", why);
        return FALSE;
    }
    return check_consumer_timeouts(b, group, consumers->config, error);
}

/* ---- Faults ---- */

enum {
    FAULT_KEY_TARGET = 1u << 0,
    FAULT_KEY_DURATION = 1u << 1,
    FAULT_KEY_GROUPS = 1u << 2,
    FAULT_KEY_TO = 1u << 3,
    FAULT_KEY_COUNT = 1u << 4,
    FAULT_KEY_DELAY = 1u << 5,
    FAULT_KEY_FACTOR = 1u << 6,
    FAULT_KEY_TOPIC = 1u << 7,
    FAULT_KEY_PARTITIONS = 1u << 8,
};

static const struct {
    const char *key;
    guint flag;
} FAULT_KEYS[] = {
    {"target", FAULT_KEY_TARGET}, {"duration", FAULT_KEY_DURATION}, {"groups", FAULT_KEY_GROUPS},
    {"to", FAULT_KEY_TO},         {"count", FAULT_KEY_COUNT},       {"delay", FAULT_KEY_DELAY},
    {"factor", FAULT_KEY_FACTOR}, {"topic", FAULT_KEY_TOPIC},         {"partitions", FAULT_KEY_PARTITIONS},
};

#define TARGET_BIT(kind) (1u << (kind))
#define TARGETS_BROKERS                                                                            \
    (TARGET_BIT(SCENARIO_TARGET_BROKER) | TARGET_BIT(SCENARIO_TARGET_LEADER) |                     \
     TARGET_BIT(SCENARIO_TARGET_FOLLOWER) | TARGET_BIT(SCENARIO_TARGET_CONTROLLER) |               \
     TARGET_BIT(SCENARIO_TARGET_RANDOM))
#define TARGETS_DISKS (TARGETS_BROKERS | TARGET_BIT(SCENARIO_TARGET_ZK))
#define TARGETS_CLIENTS (TARGET_BIT(SCENARIO_TARGET_PRODUCER) | TARGET_BIT(SCENARIO_TARGET_CONSUMER))
#define TARGETS_NODES (TARGETS_DISKS | TARGETS_CLIENTS)
/* A node that is down or paused is named by id: "the leader" has changed. */
#define TARGETS_FIXED                                                                              \
    (TARGET_BIT(SCENARIO_TARGET_BROKER) | TARGET_BIT(SCENARIO_TARGET_ZK) | TARGETS_CLIENTS)

typedef struct {
    const char *name;
    guint targets;  /* the target kinds allowed; 0: no target */
    guint required; /* FAULT_KEY_* */
    guint optional; /* FAULT_KEY_* */
} ActionInfo;

static const ActionInfo ACTIONS[] = {
    [SCENARIO_ACTION_CRASH] = {"crash", TARGETS_NODES, FAULT_KEY_TARGET, FAULT_KEY_DURATION},
    [SCENARIO_ACTION_POWER_LOSS] = {"power-loss", TARGETS_DISKS, FAULT_KEY_TARGET,
                                    FAULT_KEY_DURATION},
    [SCENARIO_ACTION_RESTART] = {"restart", TARGETS_FIXED, FAULT_KEY_TARGET, 0},
    [SCENARIO_ACTION_PAUSE] = {"pause", TARGETS_NODES, FAULT_KEY_TARGET, FAULT_KEY_DURATION},
    [SCENARIO_ACTION_RESUME] = {"resume", TARGETS_FIXED, FAULT_KEY_TARGET, 0},
    [SCENARIO_ACTION_PARTITION] = {"partition", 0, FAULT_KEY_GROUPS, FAULT_KEY_DURATION},
    [SCENARIO_ACTION_ONE_WAY] = {"one-way", TARGETS_NODES, FAULT_KEY_TARGET | FAULT_KEY_TO,
                                 FAULT_KEY_DURATION},
    [SCENARIO_ACTION_ISOLATE] = {"isolate", TARGETS_NODES, FAULT_KEY_TARGET, FAULT_KEY_DURATION},
    [SCENARIO_ACTION_HEAL] = {"heal", 0, 0, 0},
    [SCENARIO_ACTION_DISK_SLOW] = {"disk-slow", TARGETS_DISKS, FAULT_KEY_TARGET | FAULT_KEY_FACTOR,
                                   FAULT_KEY_DURATION},
    [SCENARIO_ACTION_DISK_FULL] = {"disk-full", TARGETS_DISKS, FAULT_KEY_TARGET,
                                   FAULT_KEY_DURATION},
    [SCENARIO_ACTION_LOSE] = {"lose", TARGETS_NODES, FAULT_KEY_TARGET | FAULT_KEY_TO,
                              FAULT_KEY_COUNT},
    [SCENARIO_ACTION_DELAY] = {"delay", TARGETS_NODES,
                               FAULT_KEY_TARGET | FAULT_KEY_TO | FAULT_KEY_DELAY, FAULT_KEY_COUNT},
    [SCENARIO_ACTION_DUPLICATE] = {"duplicate", TARGETS_NODES, FAULT_KEY_TARGET | FAULT_KEY_TO,
                                   FAULT_KEY_COUNT},
    [SCENARIO_ACTION_EXPIRE_SESSION] = {"expire-session", TARGETS_BROKERS, FAULT_KEY_TARGET, 0},
    [SCENARIO_ACTION_CRASH_ZK] = {"crash-zk", 0, 0, FAULT_KEY_DURATION},
    [SCENARIO_ACTION_RESTART_ZK] = {"restart-zk", 0, 0, 0},
    [SCENARIO_ACTION_ADD_PARTITIONS] = {"add-partitions", 0,
                                        FAULT_KEY_TOPIC | FAULT_KEY_PARTITIONS, 0},
};

static const char *const TARGET_FORMS[] = {
    [SCENARIO_TARGET_NONE] = "none",
    [SCENARIO_TARGET_BROKER] = "broker:N",
    [SCENARIO_TARGET_LEADER] = "leader(TOPIC-P)",
    [SCENARIO_TARGET_FOLLOWER] = "follower(TOPIC-P)",
    [SCENARIO_TARGET_CONTROLLER] = "controller",
    [SCENARIO_TARGET_RANDOM] = "random",
    [SCENARIO_TARGET_ZK] = "zk",
    [SCENARIO_TARGET_PRODUCER] = "producer:NAME",
    [SCENARIO_TARGET_REST] = "*",
    [SCENARIO_TARGET_CONSUMER] = "consumer:NAME[-K]",
};

const char *
scenario_action_name(ScenarioAction action)
{
    KSIM_ASSERT((guint)action < G_N_ELEMENTS(ACTIONS));
    KSIM_ASSERT(ACTIONS[action].name != NULL);
    return ACTIONS[action].name;
}

static ScenarioAction
action_of(const char *name)
{
    for (guint i = 0; i < G_N_ELEMENTS(ACTIONS); i++) {
        if (strcmp(ACTIONS[i].name, name) == 0)
            return (ScenarioAction)i;
    }
    KSIM_ASSERT(!"an action the registry accepts but scenario does not know");
    return SCENARIO_ACTION_HEAL;
}

char *
scenario_target_format(const ScenarioTarget *target)
{
    KSIM_ASSERT(target != NULL);
    switch (target->kind) {
    case SCENARIO_TARGET_BROKER:
        return g_strdup_printf("broker:%u", target->broker);
    case SCENARIO_TARGET_LEADER:
        return g_strdup_printf("leader(%s-%u)", target->topic, target->partition);
    case SCENARIO_TARGET_FOLLOWER:
        return g_strdup_printf("follower(%s-%u)", target->topic, target->partition);
    case SCENARIO_TARGET_PRODUCER:
        return g_strdup_printf("producer:%s", target->producer);
    case SCENARIO_TARGET_CONSUMER:
        if (target->instance > 0)
            return g_strdup_printf("consumer:%s-%u", target->consumer, target->instance);
        return g_strdup_printf("consumer:%s", target->consumer);
    case SCENARIO_TARGET_NONE:
    case SCENARIO_TARGET_CONTROLLER:
    case SCENARIO_TARGET_RANDOM:
    case SCENARIO_TARGET_ZK:
    case SCENARIO_TARGET_REST:
        return g_strdup(TARGET_FORMS[target->kind]);
    }
    KSIM_ASSERT(!"unknown target kind");
    return NULL;
}

static void
target_clear(ScenarioTarget *target)
{
    g_clear_pointer(&target->topic, g_free);
    g_clear_pointer(&target->producer, g_free);
    g_clear_pointer(&target->consumer, g_free);
    *target = (ScenarioTarget){0};
}

static void
target_clear_cb(gpointer data)
{
    target_clear(data);
}

static char *
allowed_forms(guint targets)
{
    GString *out = g_string_new(NULL);
    for (guint kind = 0; kind < G_N_ELEMENTS(TARGET_FORMS); kind++) {
        if ((targets & TARGET_BIT(kind)) != 0)
            g_string_append_printf(out, "%s%s", out->len ? ", " : "", TARGET_FORMS[kind]);
    }
    return g_string_free(out, FALSE);
}

static char *
parse_broker_target(const Build *b, const char *text, const char *number, ScenarioTarget *out)
{
    guint brokers = b->variant->cluster.brokers;
    guint64 id = 0;
    if (!g_ascii_string_to_unsigned(number, 10, 0, G_MAXUINT32, &id, NULL))
        return g_strdup_printf("'%s' is not broker:N with N a broker id (1..%u)", text, brokers);
    if (id < 1 || id > brokers)
        return g_strdup_printf("'%s' does not exist: the cluster has %u brokers "
                               "(broker:1 .. broker:%u)",
                               text, brokers, brokers);
    out->kind = SCENARIO_TARGET_BROKER;
    out->broker = (guint)id;
    return NULL;
}

/* leader(TOPIC-P) and follower(TOPIC-P); topic names may contain '-'. */
static char *
parse_partition_target(const Build *b, const char *text, const char *inner, ScenarioTarget *out)
{
    const char *dash = strrchr(inner, '-');
    guint64 partition = 0;
    if (dash == NULL || dash == inner ||
        !g_ascii_string_to_unsigned(dash + 1, 10, 0, G_MAXUINT32, &partition, NULL))
        return g_strdup_printf("'%s' is not leader(TOPIC-P) or follower(TOPIC-P), "
                               "e.g. leader(orders-0)",
                               text);
    g_autofree char *name = g_strndup(inner, (gsize)(dash - inner));
    /* The coordinators' internal topics, created when first needed. */
    static const struct {
        const char *topic, *partitions_key;
    } internal[] = {{"__consumer_offsets", "offsets.topic.num.partitions"},
                    {"__transaction_state", "transaction.state.log.num.partitions"}};
    for (guint i = 0; i < G_N_ELEMENTS(internal); i++) {
        if (strcmp(name, internal[i].topic) != 0)
            continue;
        gint64 count = kconfig_get_int64(b->variant->cluster.config, internal[i].partitions_key);
        if ((gint64)partition >= count)
            return g_strdup_printf("'%s' does not exist: %s has %" G_GINT64_FORMAT
                                   " partitions (%s)",
                                   text, name, count, internal[i].partitions_key);
        out->topic = g_steal_pointer(&name);
        out->partition = (guint)partition;
        return NULL;
    }
    const ScenarioTopic *topic = find_object(b->variant->topics, name);
    if (topic == NULL) {
        g_autofree char *why = no_such_message("topic", name, b->variant->topics);
        return g_strdup_printf("'%s': %s", text, why);
    }
    if (partition >= topic->partitions)
        return g_strdup_printf("'%s' does not exist: topic %s has %u partitions (0..%u)", text,
                               topic->name, topic->partitions, topic->partitions - 1);
    out->topic = g_steal_pointer(&name);
    out->partition = (guint)partition;
    return NULL;
}

/* consumer:NAME (every member) or consumer:NAME-K (the K-th); a section
 * called NAME-K itself wins. */
static char *
parse_consumer_target(const Build *b, const char *name, ScenarioTarget *out)
{
    const GPtrArray *groups = b->variant->consumer_groups;
    out->kind = SCENARIO_TARGET_CONSUMER;
    if (find_object(groups, name) != NULL) {
        out->consumer = g_strdup(name);
        return NULL;
    }
    const char *dash = strrchr(name, '-');
    guint64 instance = 0;
    if (dash != NULL && dash != name &&
        g_ascii_string_to_unsigned(dash + 1, 10, 1, G_MAXUINT32, &instance, NULL)) {
        g_autofree char *section = g_strndup(name, (gsize)(dash - name));
        const ScenarioConsumerGroup *group = find_object(groups, section);
        if (group != NULL && instance <= group->members) {
            out->consumer = g_steal_pointer(&section);
            out->instance = (guint)instance;
            return NULL;
        }
        if (group != NULL)
            return g_strdup_printf("'consumer:%s' does not exist: [consumer-group %s] has %u "
                                   "member%s (consumer:%s-1 .. consumer:%s-%u)",
                                   name, group->name, group->members,
                                   group->members == 1 ? "" : "s", group->name, group->name,
                                   group->members);
    }
    return no_such_message("consumer group", name, groups);
}

static char *
parse_target_kind(const Build *b, const char *text, ScenarioTarget *out)
{
    static const ScenarioTargetKind words[] = {SCENARIO_TARGET_CONTROLLER, SCENARIO_TARGET_RANDOM,
                                               SCENARIO_TARGET_ZK, SCENARIO_TARGET_REST};
    for (guint i = 0; i < G_N_ELEMENTS(words); i++) {
        if (strcmp(text, TARGET_FORMS[words[i]]) == 0) {
            out->kind = words[i];
            return NULL;
        }
    }
    if (g_str_has_prefix(text, "broker:"))
        return parse_broker_target(b, text, text + strlen("broker:"), out);
    if (g_str_has_prefix(text, "producer:")) {
        const char *name = text + strlen("producer:");
        if (find_object(b->variant->producers, name) == NULL)
            return no_such_message("producer", name, b->variant->producers);
        out->kind = SCENARIO_TARGET_PRODUCER;
        out->producer = g_strdup(name);
        return NULL;
    }
    if (g_str_has_prefix(text, "consumer:"))
        return parse_consumer_target(b, text + strlen("consumer:"), out);
    gboolean leader = g_str_has_prefix(text, "leader(");
    if ((leader || g_str_has_prefix(text, "follower(")) && g_str_has_suffix(text, ")")) {
        gsize open = leader ? strlen("leader(") : strlen("follower(");
        g_autofree char *inner = g_strndup(text + open, strlen(text) - open - 1);
        out->kind = leader ? SCENARIO_TARGET_LEADER : SCENARIO_TARGET_FOLLOWER;
        return parse_partition_target(b, text, inner, out);
    }
    g_autofree char *forms = allowed_forms(TARGETS_NODES);
    return g_strdup_printf("'%s' is not a target; expected %s", text, forms);
}

static gboolean
is_number(const char *text)
{
    if (*text == '\0')
        return FALSE;
    for (const char *p = text; *p != '\0'; p++) {
        if (!g_ascii_isdigit(*p))
            return FALSE;
    }
    return TRUE;
}

/* NULL and `out` filled, or why `text` is not a target of `allowed` kinds;
 * `used_by` names the user in messages. (transfer full) */
static char *
parse_target(const Build *b, const char *text, guint allowed, const char *used_by,
             gboolean bare_broker, ScenarioTarget *out)
{
    g_autofree char *trimmed = g_strstrip(g_strdup(text));
    g_autofree char *spelled = bare_broker && is_number(trimmed)
                                   ? g_strdup_printf("broker:%s", trimmed)
                                   : g_strdup(trimmed);
    *out = (ScenarioTarget){0};
    char *why = parse_target_kind(b, spelled, out);
    if (why == NULL && (allowed & TARGET_BIT(out->kind)) == 0) {
        g_autofree char *forms = allowed_forms(allowed);
        why = g_strdup_printf("'%s' cannot be used with %s (it takes %s)", trimmed, used_by, forms);
    }
    if (why != NULL)
        target_clear(out);
    return why;
}

static char *
parse_group_members(const Build *b, const char *part, GArray *members, GHashTable *seen)
{
    g_auto(GStrv) items = g_strsplit(part, ",", -1);
    for (guint i = 0; items[i] != NULL; i++) {
        const char *item = g_strstrip(items[i]);
        if (*item == '\0')
            return g_strdup_printf("group '%s' has an empty member", g_strstrip((char *)part));
        ScenarioTarget target;
        char *why = parse_target(b, item, TARGETS_NODES | TARGET_BIT(SCENARIO_TARGET_REST),
                                 "partition groups", TRUE, &target);
        if (why != NULL)
            return why;
        g_array_append_val(members, target);
        char *spelled = scenario_target_format(&target);
        if (!g_hash_table_add(seen, spelled))
            return g_strdup_printf("'%s' is in more than one group", item);
    }
    if (members->len == 0)
        return g_strdup("a group is empty");
    return NULL;
}

/* "1,2 | 3" into groups of targets. (transfer full) */
static char *
parse_groups(const Build *b, const char *text, GPtrArray *groups)
{
    g_auto(GStrv) parts = g_strsplit(text, "|", -1);
    guint n_parts = g_strv_length(parts);
    if (n_parts < 2 || n_parts > SCENARIO_BROKER_FAULT_GROUPS_MAX)
        return g_strdup_printf("'%s' is not a partition: two to %u groups separated by '|', "
                               "e.g. 1,2 | 3",
                               text, SCENARIO_BROKER_FAULT_GROUPS_MAX);
    g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (guint i = 0; i < n_parts; i++) {
        GArray *members = g_array_new(FALSE, TRUE, sizeof(ScenarioTarget));
        g_array_set_clear_func(members, target_clear_cb);
        g_ptr_array_add(groups, members);
        char *why = parse_group_members(b, parts[i], members, seen);
        if (why != NULL)
            return why;
    }
    return NULL;
}

static void
fault_free(gpointer data)
{
    ScenarioFault *fault = data;
    g_free(fault->name);
    target_clear(&fault->target);
    target_clear(&fault->to);
    g_ptr_array_unref(fault->groups);
    g_free(fault->topic);
    g_free(fault);
}

static gboolean
check_fault_keys(const Build *b, const RawGroup *group, const ActionInfo *info, GError **error)
{
    for (guint i = 0; i < G_N_ELEMENTS(FAULT_KEYS); i++) {
        guint flag = FAULT_KEYS[i].flag;
        gboolean present = group_find_entry(group, FAULT_KEYS[i].key) != NULL;
        Loc loc = loc_key(b->scenario, group, FAULT_KEYS[i].key);
        if (present && ((info->required | info->optional) & flag) == 0) {
            loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                      "does not apply to action '%s'", info->name);
            return FALSE;
        }
        if (!present && (info->required & flag) != 0) {
            loc_error(error, KSIM_SCENARIO_ERROR_MISSING, &loc, "is required by action '%s'",
                      info->name);
            return FALSE;
        }
    }
    return TRUE;
}

static gboolean
fault_targets(const Build *b, const RawGroup *group, const KConfig *cfg, const ActionInfo *info,
              ScenarioFault *fault, GError **error)
{
    g_autofree char *used_by = g_strdup_printf("action '%s'", info->name);
    char *why = NULL;
    const char *key = NULL;
    if (!kconfig_is_null(cfg, "target")) {
        key = "target";
        why = parse_target(b, kconfig_get_string(cfg, key), info->targets, used_by, FALSE,
                           &fault->target);
    }
    if (why == NULL && !kconfig_is_null(cfg, "to")) {
        key = "to";
        why = parse_target(b, kconfig_get_string(cfg, key), TARGETS_NODES, used_by, FALSE,
                           &fault->to);
    }
    if (why == NULL && !kconfig_is_null(cfg, "groups")) {
        key = "groups";
        why = parse_groups(b, kconfig_get_string(cfg, key), fault->groups);
    }
    if (why == NULL)
        return TRUE;
    Loc loc = loc_key(b->scenario, group, key);
    loc_error(error, KSIM_SCENARIO_ERROR_VALUE, &loc, "%s", why);
    g_free(why);
    return FALSE;
}

static gboolean
check_not_past_end(const Build *b, const RawGroup *group, const char *key, gint64 time_ns,
                   GError **error)
{
    gint64 duration_ns = b->variant->duration_ns;
    if (time_ns <= duration_ns)
        return TRUE;
    g_autofree char *time = format_duration(time_ns);
    g_autofree char *end = format_duration(duration_ns);
    Loc loc = loc_key(b->scenario, group, key);
    loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
              "%s is past the end of the scenario (duration %s)", time, end);
    return FALSE;
}

/* add-partitions: an existing topic and more partitions than it has. */
static gboolean
fault_add_partitions(const Build *b, const RawGroup *group, const KConfig *cfg,
                     ScenarioFault *fault, GError **error)
{
    const char *name = kconfig_get_string(cfg, "topic");
    const ScenarioTopic *topic = find_object(b->variant->topics, name);
    if (topic == NULL) {
        g_autofree char *why = no_such_message("topic", name, b->variant->topics);
        Loc loc = loc_key(b->scenario, group, "topic");
        loc_error(error, KSIM_SCENARIO_ERROR_UNKNOWN, &loc, "%s", why);
        return FALSE;
    }
    fault->topic = g_strdup(topic->name);
    fault->partitions = (guint)kconfig_get_int64(cfg, "partitions");
    if (fault->partitions > topic->partitions)
        return TRUE;
    Loc loc = loc_key(b->scenario, group, "partitions");
    loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
              "%u is not more than topic %s's %u partitions: Kafka only adds partitions",
              fault->partitions, topic->name, topic->partitions);
    return FALSE;
}

static gboolean
build_fault(Build *b, const RawGroup *group, GError **error)
{
    ScenarioFault *fault = g_new0(ScenarioFault, 1);
    fault->name = g_strdup(group->object);
    fault->index = b->variant->faults->len;
    fault->groups = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
    g_ptr_array_add(b->variant->faults, fault);
    g_autoptr(KConfig) cfg = kconfig_new(KCONFIG_SCOPE_FAULT);
    if (!fill_configs(b, group, &cfg, 1, error))
        return FALSE;
    fault->action = action_of(kconfig_get_string(cfg, "action"));
    const ActionInfo *info = &ACTIONS[fault->action];
    if (!check_fault_keys(b, group, info, error))
        return FALSE;
    fault->time_ns = kconfig_get_duration_ns(cfg, "at");
    if (!check_not_past_end(b, group, "at", fault->time_ns, error))
        return FALSE;
    if (!kconfig_is_null(cfg, "duration"))
        fault->duration_ns = kconfig_get_duration_ns(cfg, "duration");
    if (((info->required | info->optional) & FAULT_KEY_COUNT) != 0)
        fault->count = (guint)kconfig_get_int64(cfg, "count");
    if (!kconfig_is_null(cfg, "delay"))
        fault->delay_ns = kconfig_get_duration_ns(cfg, "delay");
    if (!kconfig_is_null(cfg, "factor"))
        fault->factor = kconfig_get_double(cfg, "factor");
    if (fault->action == SCENARIO_ACTION_ADD_PARTITIONS &&
        !fault_add_partitions(b, group, cfg, fault, error))
        return FALSE;
    return fault_targets(b, group, cfg, info, fault, error);
}

static gint
compare_faults(gconstpointer a, gconstpointer b)
{
    const ScenarioFault *fa = *(ScenarioFault *const *)a;
    const ScenarioFault *fb = *(ScenarioFault *const *)b;
    if (fa->time_ns != fb->time_ns)
        return fa->time_ns < fb->time_ns ? -1 : 1;
    return fa->index < fb->index ? -1 : (fa->index > fb->index ? 1 : 0);
}

static void
random_faults_free(ScenarioRandomFaults *random)
{
    if (random == NULL)
        return;
    g_array_unref(random->kinds);
    g_free(random);
}

static gboolean
random_faults_bounds(const Build *b, const RawGroup *group, const ScenarioRandomFaults *random,
                     GError **error)
{
    const char *dists[] = {"interval", "duration"};
    const SimDist *values[] = {&random->interval, &random->duration};
    for (guint i = 0; i < G_N_ELEMENTS(dists); i++) {
        if (sim_dist_mean(values[i]) > 0.0)
            continue;
        Loc loc = loc_key(b->scenario, group, dists[i]);
        loc_error(error, KSIM_SCENARIO_ERROR_VALUE, &loc, "must have a positive mean");
        return FALSE;
    }
    if (!check_not_past_end(b, group, "stop", random->stop_ns, error))
        return FALSE;
    if (random->start_ns < random->stop_ns)
        return TRUE;
    g_autofree char *start = format_duration(random->start_ns);
    g_autofree char *stop = format_duration(random->stop_ns);
    Loc loc = loc_key(b->scenario, group, "start");
    loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc, "%s is not before stop (%s)", start,
              stop);
    return FALSE;
}

static gboolean
build_random_faults(Build *b, const RawGroup *group, GError **error)
{
    ScenarioRandomFaults *random = g_new0(ScenarioRandomFaults, 1);
    random->kinds = g_array_new(FALSE, FALSE, sizeof(ScenarioAction));
    b->variant->random_faults = random;
    g_autoptr(KConfig) cfg = kconfig_new(KCONFIG_SCOPE_RANDOM_FAULTS);
    if (!fill_configs(b, group, &cfg, 1, error))
        return FALSE;
    g_auto(GStrv) kinds = kconfig_get_list(cfg, "kinds");
    for (guint i = 0; kinds[i] != NULL; i++) {
        ScenarioAction action = action_of(kinds[i]);
        g_array_append_val(random->kinds, action);
    }
    random->interval = kconfig_get_dist(cfg, "interval");
    random->duration = kconfig_get_dist(cfg, "duration");
    random->concurrent_max = (guint)kconfig_get_int64(cfg, "max.concurrent");
    random->start_ns = kconfig_get_duration_ns(cfg, "start");
    random->stop_ns = kconfig_is_null(cfg, "stop") ? b->variant->duration_ns
                                                   : kconfig_get_duration_ns(cfg, "stop");
    return random_faults_bounds(b, group, random, error);
}

/* ---- Runs ---- */

static void
setting_free(gpointer data)
{
    ScenarioSetting *setting = data;
    g_free(setting->key);
    g_free(setting->value);
    g_free(setting);
}

static ScenarioVariant *
variant_new(guint index)
{
    ScenarioVariant *v = g_new0(ScenarioVariant, 1);
    v->index = index;
    v->settings = g_ptr_array_new_with_free_func(setting_free);
    v->topics = g_ptr_array_new_with_free_func(topic_free);
    v->producers = g_ptr_array_new_with_free_func(producer_free);
    v->consumer_groups = g_ptr_array_new_with_free_func(consumer_group_free);
    v->faults = g_ptr_array_new_with_free_func(fault_free);
    return v;
}

void
scenario_variant_free(ScenarioVariant *variant)
{
    if (variant == NULL)
        return;
    g_free(variant->label);
    g_ptr_array_unref(variant->settings);
    g_free(variant->name);
    g_free(variant->description);
    kconfig_free(variant->cluster.config);
    g_ptr_array_unref(variant->topics);
    g_ptr_array_unref(variant->producers);
    g_ptr_array_unref(variant->consumer_groups);
    g_ptr_array_unref(variant->faults);
    random_faults_free(variant->random_faults);
    g_free(variant);
}

/* Writes run `index`'s [vary] values into `groups` and names the run. Runs
 * count in mixed radix, the last dimension fastest. */
static void
apply_run_settings(const GPtrArray *vary, guint index, GPtrArray *groups, ScenarioVariant *v)
{
    g_autofree guint *choice = g_new0(guint, vary->len + 1);
    guint rest = index;
    for (guint i = vary->len; i-- > 0;) {
        const VaryDim *dim = vary->pdata[i];
        choice[i] = rest % dim->values->len;
        rest /= dim->values->len;
    }
    KSIM_ASSERT(rest == 0);
    GString *label = g_string_new(NULL);
    for (guint i = 0; i < vary->len; i++) {
        const VaryDim *dim = vary->pdata[i];
        const char *value = dim->values->pdata[choice[i]];
        for (guint t = 0; t < dim->targets->len; t++)
            group_set(groups->pdata[g_array_index(dim->targets, guint, t)], dim->name, value,
                      dim->line, NULL);
        ScenarioSetting *setting = g_new0(ScenarioSetting, 1);
        setting->key = g_strdup(dim->key);
        setting->value = g_strdup(value);
        g_ptr_array_add(v->settings, setting);
        g_string_append_printf(label, "%s%s=%s", i ? "," : "", dim->key, value);
    }
    if (label->len == 0)
        g_string_append(label, "default");
    v->label = g_string_free(label, FALSE);
}

typedef gboolean (*BuildGroupFn)(Build *b, const RawGroup *group, GError **error);

static gboolean
build_groups_of(Build *b, GroupKind kind, BuildGroupFn build_fn, GError **error)
{
    for (guint i = 0; i < b->groups->len; i++) {
        const RawGroup *group = b->groups->pdata[i];
        if (group->kind == kind && !build_fn(b, group, error))
            return FALSE;
    }
    return TRUE;
}

static gboolean
build_run(Build *b, GError **error)
{
    /* The order matters: topics need the cluster, producers the topics,
     * and fault targets the topics and producers. */
    if (!build_scenario(b, error) || !build_cluster(b, error) ||
        !build_groups_of(b, GROUP_TOPIC, build_topic, error) ||
        !build_groups_of(b, GROUP_PRODUCER, build_producer, error) ||
        !build_groups_of(b, GROUP_CONSUMER_GROUP, build_consumer_group, error) ||
        !build_groups_of(b, GROUP_FAULT, build_fault, error))
        return FALSE;
    const RawGroup *random = groups_find_kind(b->groups, GROUP_RANDOM_FAULTS);
    if (random != NULL && !build_random_faults(b, random, error))
        return FALSE;
    g_ptr_array_sort(b->variant->faults, compare_faults);
    return TRUE;
}

/* Adds " (context)" to an error's message. */
static void
error_append(GError **error, const char *what, const char *detail)
{
    if (error == NULL || *error == NULL)
        return;
    char *message = g_strdup_printf("%s (%s %s)", (*error)->message, what, detail);
    g_free((*error)->message);
    (*error)->message = message;
}

/* Names the run in which an error happened, when there are several. */
static void
error_add_run(GError **error, const ScenarioVariant *v)
{
    if (v->settings->len == 0)
        return;
    g_autofree char *quoted = g_strdup_printf("'%s'", v->label);
    error_append(error, "in the run", quoted);
}

static ScenarioVariant *
variant_build(const Scenario *s, const GPtrArray *groups, const GPtrArray *vary, guint index,
              GError **error)
{
    ScenarioVariant *v = variant_new(index);
    g_autoptr(GPtrArray) run_groups = groups_copy(groups);
    apply_run_settings(vary, index, run_groups, v);
    Build b = {s, run_groups, v};
    if (!build_run(&b, error)) {
        error_add_run(error, v);
        scenario_variant_free(v);
        return NULL;
    }
    return v;
}

static guint
count_runs(const GPtrArray *vary)
{
    guint runs = 1;
    for (guint i = 0; i < vary->len; i++)
        runs *= ((const VaryDim *)vary->pdata[i])->values->len;
    KSIM_ASSERT(runs >= 1 && runs <= SCENARIO_VARIANTS_MAX);
    return runs;
}

/* Builds and drops every run: a scenario that passes has only valid runs. */
static gboolean
validate_runs(const Scenario *s, const GPtrArray *groups, const GPtrArray *vary, GError **error)
{
    guint runs = count_runs(vary);
    for (guint i = 0; i < runs; i++) {
        ScenarioVariant *v = variant_build(s, groups, vary, i, error);
        if (v == NULL)
            return FALSE;
        scenario_variant_free(v);
    }
    return TRUE;
}

/* The name, description and seed shown for the scenario: the first run's. */
static void
refresh_summary(Scenario *s)
{
    s->variant_count = count_runs(s->vary);
    ScenarioVariant *first = variant_build(s, s->groups, s->vary, 0, NULL);
    KSIM_ASSERT(first != NULL);
    g_free(s->name);
    g_free(s->description);
    s->name = g_strdup(first->name);
    s->description = g_strdup(first->description);
    s->seed = first->seed;
    scenario_variant_free(first);
}

/* ---- Scenario: public ---- */

static Scenario *
scenario_new(const char *text, gsize length, const char *display_name, const char *path)
{
    Scenario *s = g_new0(Scenario, 1);
    s->path = g_strdup(path);
    s->display_name = g_strdup(display_name);
    s->sha256 = g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *)text, length);
    s->groups = g_ptr_array_new_with_free_func(raw_group_free);
    s->vary = g_ptr_array_new_with_free_func(vary_dim_free);
    s->expects = g_ptr_array_new_with_free_func(expect_free);
    s->overrides = g_ptr_array_new_with_free_func(g_free);
    s->variant_count = 1;
    return s;
}

void
scenario_free(Scenario *scenario)
{
    if (scenario == NULL)
        return;
    g_free(scenario->path);
    g_free(scenario->display_name);
    g_free(scenario->sha256);
    g_free(scenario->name);
    g_free(scenario->description);
    g_ptr_array_unref(scenario->groups);
    g_ptr_array_unref(scenario->vary);
    g_ptr_array_unref(scenario->expects);
    g_ptr_array_unref(scenario->overrides);
    g_free(scenario);
}

static gboolean
check_text(const char *text, gsize length, const char *display_name, GError **error)
{
    Loc loc = {display_name, 0, NULL, NULL, NULL};
    if (length > SCENARIO_FILE_BYTES_MAX) {
        loc_error(error, KSIM_SCENARIO_ERROR_IO, &loc, "larger than %u bytes",
                  SCENARIO_FILE_BYTES_MAX);
        return FALSE;
    }
    if (memchr(text, '\0', length) != NULL) {
        loc_error(error, KSIM_SCENARIO_ERROR_SYNTAX, &loc, "contains a NUL byte: not a text file");
        return FALSE;
    }
    const char *end = NULL;
    if (!g_utf8_validate_len(text, length, &end)) {
        loc.line = 1;
        for (const char *p = text; p < end; p++)
            loc.line += *p == '\n';
        loc_error(error, KSIM_SCENARIO_ERROR_SYNTAX, &loc, "not valid UTF-8 text");
        return FALSE;
    }
    return TRUE;
}

static Scenario *
scenario_read(const char *text, gsize length, const char *display_name, const char *path,
              GError **error)
{
    KSIM_ASSERT(text[length] == '\0');
    if (!check_text(text, length, display_name, error))
        return NULL;
    g_autoptr(Scenario) s = scenario_new(text, length, display_name, path);
    if (!parse_text(s, text, error) || !parse_vary(s, error) || !parse_expects(s, error) ||
        !validate_runs(s, s->groups, s->vary, error))
        return NULL;
    refresh_summary(s);
    scenario_check_invariants(s);
    return g_steal_pointer(&s);
}

Scenario *
scenario_load(const char *path, GError **error)
{
    KSIM_ASSERT(path != NULL);
    g_autofree char *text = NULL;
    gsize length = 0;
    g_autoptr(GError) local = NULL;
    if (!g_file_get_contents(path, &text, &length, &local)) {
        Loc loc = {path, 0, NULL, NULL, NULL};
        loc_error(error, KSIM_SCENARIO_ERROR_IO, &loc, "cannot read: %s", local->message);
        return NULL;
    }
    return scenario_read(text, length, path, path, error);
}

Scenario *
scenario_load_data(const char *text, const char *display_name, GError **error)
{
    KSIM_ASSERT(text != NULL);
    KSIM_ASSERT(display_name != NULL);
    return scenario_read(text, strlen(text), display_name, NULL, error);
}

const char *
scenario_name(const Scenario *scenario)
{
    KSIM_ASSERT(scenario != NULL);
    return scenario->name;
}

const char *
scenario_description(const Scenario *scenario)
{
    KSIM_ASSERT(scenario != NULL);
    return scenario->description;
}

const char *
scenario_path(const Scenario *scenario)
{
    KSIM_ASSERT(scenario != NULL);
    return scenario->path;
}

const char *
scenario_sha256(const Scenario *scenario)
{
    KSIM_ASSERT(scenario != NULL);
    return scenario->sha256;
}

guint64
scenario_seed(const Scenario *scenario)
{
    KSIM_ASSERT(scenario != NULL);
    return scenario->seed;
}

const GPtrArray *
scenario_overrides(const Scenario *scenario)
{
    KSIM_ASSERT(scenario != NULL);
    return scenario->overrides;
}

/* --set on a key that [vary] varies: the same targets narrow the runs to the
 * value; overlapping but different targets are ambiguous. Returns TRUE with
 * `*narrowed` when the value went into [vary]. */
static gboolean
narrow_vary(GPtrArray *vary, const char *name, const GArray *targets, const char *value,
            const Loc *loc, gboolean *narrowed, GError **error)
{
    *narrowed = FALSE;
    for (guint i = 0; i < vary->len; i++) {
        VaryDim *dim = vary->pdata[i];
        if (strcmp(dim->name, name) != 0 || !targets_intersect(dim->targets, targets))
            continue;
        if (!targets_equal(dim->targets, targets)) {
            loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, loc,
                      "overlaps [vary] %s (line %u); --set %s=VALUE to choose its value", dim->key,
                      dim->line, dim->key);
            return FALSE;
        }
        g_ptr_array_set_size(dim->values, 0);
        g_ptr_array_add(dim->values, g_strdup(value));
        *narrowed = TRUE;
    }
    return TRUE;
}

static gboolean
parse_assignment(const char *assignment, char **group, char **name, char **value)
{
    const char *equals = strchr(assignment, '=');
    if (equals == NULL)
        return FALSE;
    g_autofree char *key = g_strndup(assignment, (gsize)(equals - assignment));
    if (!split_qualified_key(key, group, name))
        return FALSE;
    *value = g_strstrip(g_strdup(equals + 1));
    return TRUE;
}

gboolean
scenario_apply_set(Scenario *scenario, const char *assignment, GError **error)
{
    KSIM_ASSERT(scenario != NULL);
    KSIM_ASSERT(assignment != NULL);
    g_autofree char *origin = g_strdup_printf("--set %s", assignment);
    Loc loc = {scenario->display_name, 0, origin, NULL, NULL};
    g_autofree char *group = NULL, *name = NULL, *value = NULL;
    if (!parse_assignment(assignment, &group, &name, &value)) {
        loc_error(error, KSIM_SCENARIO_ERROR_SYNTAX, &loc, "expected KEY=VALUE or GROUP:KEY=VALUE");
        return FALSE;
    }
    g_autofree char *key = qualified_key(group, name);
    loc.key = key;
    g_autoptr(GArray) targets = g_array_new(FALSE, FALSE, sizeof(guint));
    if (!resolve_targets(scenario, scenario->groups, &loc, group, name, targets, error) ||
        !check_target_values(scenario->groups, targets, name, value, &loc, error))
        return FALSE;
    g_autoptr(GPtrArray) groups = groups_copy(scenario->groups);
    g_autoptr(GPtrArray) vary = vary_copy(scenario->vary);
    gboolean narrowed = FALSE;
    if (!narrow_vary(vary, name, targets, value, &loc, &narrowed, error))
        return FALSE;
    for (guint i = 0; !narrowed && i < targets->len; i++)
        group_set(groups->pdata[g_array_index(targets, guint, i)], name, value, 0, origin);
    if (!validate_runs(scenario, groups, vary, error)) {
        error_append(error, "after", origin);
        return FALSE;
    }
    g_ptr_array_unref(scenario->groups);
    g_ptr_array_unref(scenario->vary);
    scenario->groups = g_steal_pointer(&groups);
    scenario->vary = g_steal_pointer(&vary);
    g_ptr_array_add(scenario->overrides, g_strdup(assignment));
    refresh_summary(scenario);
    scenario_check_invariants(scenario);
    return TRUE;
}

guint
scenario_variant_count(const Scenario *scenario)
{
    KSIM_ASSERT(scenario != NULL);
    return scenario->variant_count;
}

GPtrArray *
scenario_variants(const Scenario *scenario)
{
    KSIM_ASSERT(scenario != NULL);
    GPtrArray *variants = g_ptr_array_new_with_free_func((GDestroyNotify)scenario_variant_free);
    for (guint i = 0; i < scenario->variant_count; i++) {
        ScenarioVariant *v = variant_build(scenario, scenario->groups, scenario->vary, i, NULL);
        /* Every run was built once when the scenario was validated. */
        KSIM_ASSERT(v != NULL);
        g_ptr_array_add(variants, v);
    }
    return variants;
}

const GPtrArray *
scenario_expects(const Scenario *scenario)
{
    KSIM_ASSERT(scenario != NULL);
    return scenario->expects;
}

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

const char *const *
scenario_metric_names(guint *n_names)
{
    KSIM_ASSERT(n_names != NULL);
    *n_names = G_N_ELEMENTS(METRICS);
    return METRICS;
}

static void
check_group_invariants(const RawGroup *group)
{
    KSIM_ASSERT(group->name != NULL);
    KSIM_ASSERT((group->object != NULL) == GROUP_KINDS[group->kind].named);
    guint scopes = GROUP_KINDS[group->kind].scopes;
    for (guint j = 0; j < group->entries->len; j++) {
        const RawEntry *entry = group->entries->pdata[j];
        if (scopes != 0)
            KSIM_ASSERT(kconfig_lookup(entry->key, scopes) != NULL);
        KSIM_ASSERT(group_find_entry(group, entry->key) == entry);
    }
}

static void
check_vary_invariants(const Scenario *s)
{
    for (guint i = 0; i < s->vary->len; i++) {
        const VaryDim *dim = s->vary->pdata[i];
        KSIM_ASSERT(dim->values->len >= 1);
        KSIM_ASSERT(dim->values->len <= SCENARIO_VARY_VALUES_MAX);
        KSIM_ASSERT(dim->targets->len >= 1);
        for (guint j = 0; j < i; j++) {
            const VaryDim *other = s->vary->pdata[j];
            if (strcmp(other->name, dim->name) == 0)
                KSIM_ASSERT(!targets_intersect(other->targets, dim->targets));
        }
    }
    KSIM_ASSERT(s->variant_count == count_runs(s->vary));
    for (guint i = 0; i < s->expects->len; i++) {
        const ScenarioExpect *expect = s->expects->pdata[i];
        for (guint j = 0; j < expect->when->len; j++) {
            guint matches = 0;
            const ScenarioCondition *condition = expect->when->pdata[j];
            KSIM_ASSERT(find_dim(s->vary, condition->key, &matches) != NULL);
        }
    }
}

void
scenario_check_invariants(const Scenario *scenario)
{
    KSIM_ASSERT(scenario != NULL);
    KSIM_ASSERT(groups_find_kind(scenario->groups, GROUP_SCENARIO) != NULL);
    KSIM_ASSERT(groups_find_kind(scenario->groups, GROUP_CLUSTER) != NULL);
    for (guint i = 0; i < scenario->groups->len; i++) {
        const RawGroup *group = scenario->groups->pdata[i];
        KSIM_ASSERT(groups_find(scenario->groups, group->name) == (gint)i);
        check_group_invariants(group);
    }
    check_vary_invariants(scenario);
    KSIM_ASSERT(strlen(scenario->sha256) == 64);
}

/* ---- One run: public ---- */

guint
scenario_variant_index(const ScenarioVariant *variant)
{
    KSIM_ASSERT(variant != NULL);
    return variant->index;
}

const char *
scenario_variant_label(const ScenarioVariant *variant)
{
    KSIM_ASSERT(variant != NULL);
    return variant->label;
}

const GPtrArray *
scenario_variant_settings(const ScenarioVariant *variant)
{
    KSIM_ASSERT(variant != NULL);
    return variant->settings;
}

gint64
scenario_variant_duration_ns(const ScenarioVariant *variant)
{
    KSIM_ASSERT(variant != NULL);
    return variant->duration_ns;
}

gint64
scenario_variant_quiet_ns(const ScenarioVariant *variant)
{
    KSIM_ASSERT(variant != NULL);
    return variant->quiet_ns;
}

guint64
scenario_variant_seed(const ScenarioVariant *variant)
{
    KSIM_ASSERT(variant != NULL);
    return variant->seed;
}

gboolean
scenario_variant_paranoid(const ScenarioVariant *variant)
{
    KSIM_ASSERT(variant != NULL);
    return variant->paranoid;
}

const ScenarioCluster *
scenario_variant_cluster(const ScenarioVariant *variant)
{
    KSIM_ASSERT(variant != NULL);
    return &variant->cluster;
}

const KConfig *
scenario_variant_broker_config(const ScenarioVariant *variant)
{
    KSIM_ASSERT(variant != NULL);
    KSIM_ASSERT(variant->cluster.config != NULL);
    return variant->cluster.config;
}

const GPtrArray *
scenario_variant_topics(const ScenarioVariant *variant)
{
    KSIM_ASSERT(variant != NULL);
    return variant->topics;
}

const ScenarioTopic *
scenario_variant_find_topic(const ScenarioVariant *variant, const char *name)
{
    KSIM_ASSERT(variant != NULL);
    KSIM_ASSERT(name != NULL);
    return find_object(variant->topics, name);
}

const GPtrArray *
scenario_variant_producers(const ScenarioVariant *variant)
{
    KSIM_ASSERT(variant != NULL);
    return variant->producers;
}

const GPtrArray *
scenario_variant_consumer_groups(const ScenarioVariant *variant)
{
    KSIM_ASSERT(variant != NULL);
    return variant->consumer_groups;
}

const GPtrArray *
scenario_variant_faults(const ScenarioVariant *variant)
{
    KSIM_ASSERT(variant != NULL);
    return variant->faults;
}

const ScenarioRandomFaults *
scenario_variant_random_faults(const ScenarioVariant *variant)
{
    KSIM_ASSERT(variant != NULL);
    return variant->random_faults;
}
