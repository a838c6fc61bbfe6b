/*
 * kconfig: the key registry and layered configurations (see kconfig.h).
 *
 * The registry is one static, immutable table. A KConfig holds the values set
 * explicitly in a GTree keyed by the registry's own name strings, so its keys
 * come out sorted without ever iterating a hash table.
 *
 * Invariants (checked by kconfig_check_invariants):
 *  1. Every key in `values` is the `name` pointer of a registry entry whose
 *     scope is in `scope_mask`.
 *  2. Every stored value passes kconfig_check_value for its key.
 *  3. A parent exists only for a topic configuration: its own mask is
 *     KCONFIG_SCOPE_TOPIC, the parent's is KCONFIG_SCOPE_BROKER, and the parent
 *     has no parent.
 *
 * A KConfig has no state machine: kconfig_set and kconfig_unset are the only
 * transitions, and each keeps the invariants.
 */
#include "kconfig_internal.h"

#include "sim_assert.h"

#include <math.h>
#include <string.h>

/* Layering follows at most: topic -> broker override -> fallback -> fallback. */
#define RESOLVE_HOPS_MAX 6
/* Names longer than this get no suggestion (and cost no quadratic work). */
#define SUGGEST_LENGTH_MAX 256

GQuark
ksim_kconfig_error_quark(void)
{
    return g_quark_from_static_string("ksim-kconfig-error-quark");
}

struct KConfig {
    guint scope_mask;
    GTree *values; /* registry name (not owned) -> value as written (owned) */
    KConfig *parent;
};

/* ---- Registry lookups ---- */

const KConfigKey *
kconfig_registry(guint *n_keys)
{
    KSIM_ASSERT(n_keys != NULL);
    *n_keys = kconfig_registry_len;
    return kconfig_registry_table;
}

const KConfigKey *
kconfig_lookup(const char *name, guint scope_mask)
{
    KSIM_ASSERT(name != NULL);
    KSIM_ASSERT((scope_mask & ~KCONFIG_SCOPES_ALL) == 0);
    for (guint i = 0; i < kconfig_registry_len; i++) {
        if ((kconfig_registry_table[i].scope & scope_mask) != 0 &&
            strcmp(kconfig_registry_table[i].name, name) == 0)
            return &kconfig_registry_table[i];
    }
    return NULL;
}

guint
kconfig_scopes_of(const char *name)
{
    KSIM_ASSERT(name != NULL);
    guint scopes = 0;
    for (guint i = 0; i < kconfig_registry_len; i++) {
        if (strcmp(kconfig_registry_table[i].name, name) == 0)
            scopes |= kconfig_registry_table[i].scope;
    }
    KSIM_ASSERT((scopes & ~KCONFIG_SCOPES_ALL) == 0);
    return scopes;
}

const char *
kconfig_scope_name(KConfigScope scope)
{
    switch (scope) {
    case KCONFIG_SCOPE_BROKER:
        return "broker";
    case KCONFIG_SCOPE_TOPIC:
        return "topic";
    case KCONFIG_SCOPE_PRODUCER:
        return "producer";
    case KCONFIG_SCOPE_CONSUMER:
        return "consumer";
    case KCONFIG_SCOPE_SCENARIO:
        return "scenario";
    case KCONFIG_SCOPE_CLUSTER:
        return "cluster";
    case KCONFIG_SCOPE_WORKLOAD:
        return "workload";
    case KCONFIG_SCOPE_CONSUMER_GROUP:
        return "consumer group";
    case KCONFIG_SCOPE_FAULT:
        return "fault";
    case KCONFIG_SCOPE_RANDOM_FAULTS:
        return "random faults";
    }
    KSIM_ASSERT(!"unknown scope");
    return NULL;
}

/* ---- Suggestions ---- */

guint
kconfig_edit_distance(const char *a, const char *b)
{
    KSIM_ASSERT(a != NULL);
    KSIM_ASSERT(b != NULL);
    gsize len_a = strlen(a), len_b = strlen(b);
    /* Two rows of the classic dynamic programme: row[j] is the distance
     * between the first i characters of a and the first j of b. */
    g_autofree guint *previous = g_new(guint, len_b + 1);
    g_autofree guint *current = g_new(guint, len_b + 1);
    for (gsize j = 0; j <= len_b; j++)
        previous[j] = (guint)j;
    for (gsize i = 1; i <= len_a; i++) {
        current[0] = (guint)i;
        for (gsize j = 1; j <= len_b; j++) {
            guint cost = g_ascii_tolower(a[i - 1]) == g_ascii_tolower(b[j - 1]) ? 0 : 1;
            guint best = MIN(previous[j] + 1, current[j - 1] + 1);
            current[j] = MIN(best, previous[j - 1] + cost);
        }
        memcpy(previous, current, (len_b + 1) * sizeof(guint));
    }
    return previous[len_b];
}

static guint
suggest_threshold(const char *unknown)
{
    return MAX(2u, (guint)(strlen(unknown) / 4));
}

const char *
kconfig_suggest_among(const char *unknown, const char *const *candidates, guint n_candidates)
{
    KSIM_ASSERT(unknown != NULL);
    KSIM_ASSERT(candidates != NULL || n_candidates == 0);
    if (strlen(unknown) > SUGGEST_LENGTH_MAX)
        return NULL;
    const char *best = NULL;
    guint best_distance = suggest_threshold(unknown) + 1;
    for (guint i = 0; i < n_candidates; i++) {
        if (strlen(candidates[i]) > SUGGEST_LENGTH_MAX)
            continue;
        guint distance = kconfig_edit_distance(unknown, candidates[i]);
        if (distance < best_distance) {
            best = candidates[i];
            best_distance = distance;
        }
    }
    return best;
}

const char *
kconfig_suggest(const char *unknown, guint scope_mask)
{
    KSIM_ASSERT(unknown != NULL);
    g_autoptr(GPtrArray) names = g_ptr_array_new();
    for (guint i = 0; i < kconfig_registry_len; i++) {
        if ((kconfig_registry_table[i].scope & scope_mask) != 0)
            g_ptr_array_add(names, (gpointer)kconfig_registry_table[i].name);
    }
    return kconfig_suggest_among(unknown, (const char *const *)names->pdata, names->len);
}

/* ---- Value forms ---- */

static gboolean
is_null_text(const char *value)
{
    return value == NULL || g_ascii_strcasecmp(value, "null") == 0;
}

static gboolean
key_accepts_null(const KConfigKey *key)
{
    return key->default_value == NULL && (key->flags & KCONFIG_FLAG_REQUIRED) == 0;
}

static const char *
unit_name(gint64 unit_ns)
{
    switch (unit_ns) {
    case MS:
        return "milliseconds";
    case SECOND:
        return "seconds";
    case MINUTE:
        return "minutes";
    case HOUR:
        return "hours";
    }
    KSIM_ASSERT(!"a duration key with an unnamed unit");
    return NULL;
}

static void
append_range(GString *out, const KConfigKey *key, gint64 type_max)
{
    if (key->max >= type_max)
        g_string_append_printf(out, " of at least %" G_GINT64_FORMAT, key->min);
    else
        g_string_append_printf(out, " from %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT, key->min,
                               key->max);
}

/* Kafka's "never" for a duration: Long.MAX_VALUE in the key's unit. */
#define NEVER_TEXT "9223372036854775807"
/* KCONFIG_TIME_NS_MAX as a user writes it. */
#define TIME_MAX_TEXT "100000h"

/* TRUE when `key` takes Kafka's Long.MAX_VALUE as "never": its default (or
 * the default it falls back on or overrides) is that value, and the models
 * read it as never. Any other key's value must be a time a run represents. */
static gboolean
never_allowed(const KConfigKey *key)
{
    for (guint hop = 0; key != NULL && hop < RESOLVE_HOPS_MAX; hop++) {
        if (key->default_value != NULL)
            return strcmp(key->default_value, NEVER_TEXT) == 0;
        const char *next = key->fallback != NULL ? key->fallback : key->overrides;
        key = next != NULL ? kconfig_lookup(next, KCONFIG_SCOPE_BROKER) : NULL;
    }
    return FALSE;
}

/* The largest count a DURATION key accepts (in its unit, ns for ksim's own
 * keys) other than "never": the registry's maximum, capped so the value is
 * at most KCONFIG_TIME_NS_MAX. */
static gint64
duration_count_max(const KConfigKey *key)
{
    KSIM_ASSERT(key->type == KCONFIG_TYPE_DURATION);
    gint64 unit_ns = key->unit_ns != 0 ? key->unit_ns : 1;
    return MIN(key->max, KCONFIG_TIME_NS_MAX / unit_ns);
}

static void
append_duration_form(GString *out, const KConfigKey *key)
{
    const char *with_unit = "a duration with a unit (ns, us, ms, s, m, h), e.g. 30s";
    if (key->unit_ns == 0 && key->max < KCONFIG_TIME_NS_MAX) {
        g_string_append_printf(out, "%s, of at most %" G_GINT64_FORMAT "ns", with_unit, key->max);
        return;
    }
    if (key->unit_ns == 0) {
        g_string_append_printf(out, "%s, of at most %s", with_unit, TIME_MAX_TEXT);
        return;
    }
    g_string_append_printf(out, "a number of %s from %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT,
                           unit_name(key->unit_ns), key->min, duration_count_max(key));
    if (never_allowed(key))
        g_string_append(out, " or " NEVER_TEXT " (never)");
    g_string_append_printf(out, ", or %s", with_unit);
}

static void
append_choices(GString *out, const KConfigChoice *choices)
{
    for (guint i = 0; choices[i].value != NULL; i++)
        g_string_append_printf(out, "%s%s", i ? ", " : "", choices[i].value);
}

char *
kconfig_describe_form(const KConfigKey *key)
{
    KSIM_ASSERT(key != NULL);
    GString *out = g_string_new(NULL);
    switch (key->type) {
    case KCONFIG_TYPE_INT:
    case KCONFIG_TYPE_LONG:
        g_string_append(out, "an integer");
        append_range(out, key, key->type == KCONFIG_TYPE_INT ? I32 : I64);
        break;
    case KCONFIG_TYPE_DOUBLE:
        g_string_append(out, "a number");
        append_range(out, key, I64);
        break;
    case KCONFIG_TYPE_BOOL:
        g_string_append(out, "true or false");
        break;
    case KCONFIG_TYPE_STRING:
        g_string_append(out, "text");
        if (key->max > 0)
            g_string_append_printf(out, " of at most %" G_GINT64_FORMAT " characters", key->max);
        break;
    case KCONFIG_TYPE_ENUM:
        g_string_append(out, "one of: ");
        append_choices(out, key->choices);
        break;
    case KCONFIG_TYPE_LIST:
        g_string_append(out, "a comma-separated list");
        if (key->choices != NULL) {
            g_string_append(out, " of: ");
            append_choices(out, key->choices);
        }
        break;
    case KCONFIG_TYPE_DURATION:
        append_duration_form(out, key);
        break;
    case KCONFIG_TYPE_SIZE:
        g_string_append(out, "a number of bytes");
        append_range(out, key, I64);
        g_string_append(out, ", or a size with a unit (KiB, MiB, GiB, KB, MB, GB), e.g. 16KiB");
        break;
    case KCONFIG_TYPE_TIME_DIST:
        g_string_append(out, "a distribution of durations: 2ms, const:2ms, uniform:1ms..3ms, "
                             "exp:1ms+2ms, normal:5ms,1ms, lognormal:2ms,0.5 or pareto:1ms,1.5");
        g_string_append_printf(out, ", each time with a unit and at most %s", TIME_MAX_TEXT);
        break;
    case KCONFIG_TYPE_SIZE_DIST:
        g_string_append(out, "a distribution of sizes in bytes: 100, const:100, uniform:10..1KiB, "
                             "exp:100+50, normal:100,10, lognormal:100,0.5 or pareto:100,1.5");
        g_string_append_printf(out, ", each size at most %" G_GINT64_FORMAT " bytes",
                               KCONFIG_SIZE_DIST_MAX);
        break;
    }
    return g_string_free(out, FALSE);
}

/* ---- Value checks ---- */

char *
kconfig_echo_quoted(const char *message)
{
    GString *out = g_string_new(NULL);
    const char *at = message;
    for (const char *open; (open = strchr(at, '\'')) != NULL;) {
        const char *close = strchr(open + 1, '\'');
        if (close == NULL)
            break;
        g_string_append_len(out, at, open + 1 - at);
        g_autofree char *inside = g_strndup(open + 1, (gsize)(close - open - 1));
        if (strchr(inside, ' ') == NULL) {
            g_autofree char *shown = kconfig_echo(inside);
            g_string_append(out, shown);
        } else {
            g_string_append(out, inside);
        }
        g_string_append_c(out, '\'');
        at = close + 1;
    }
    g_string_append(out, at);
    return g_string_free(out, FALSE);
}

char *
kconfig_echo(const char *text)
{
    KSIM_ASSERT(text != NULL);
    if (!g_utf8_validate(text, -1, NULL) || g_utf8_strlen(text, -1) <= KCONFIG_ECHO_CHARS_MAX)
        return g_strdup(text);
    g_autofree char *start = g_utf8_substring(text, 0, KCONFIG_ECHO_CHARS_MAX);
    return g_strconcat(start, "\xE2\x80\xA6", NULL); /* … */
}

static gboolean
bad_value(GError **error, const KConfigKey *key, const char *value, const char *why)
{
    g_autofree char *form = kconfig_describe_form(key);
    g_autofree char *shown = kconfig_echo(value);
    g_set_error(error, KSIM_KCONFIG_ERROR, KSIM_KCONFIG_ERROR_BAD_VALUE, "'%s' %s; expected %s",
                shown, why, form);
    return FALSE;
}

/* The same, for a reason that already quotes the value (sim's parsers). */
static gboolean
bad_value_because(GError **error, const KConfigKey *key, const char *reason)
{
    g_autofree char *form = kconfig_describe_form(key);
    g_set_error(error, KSIM_KCONFIG_ERROR, KSIM_KCONFIG_ERROR_BAD_VALUE, "%s; expected %s", reason,
                form);
    return FALSE;
}

static gboolean
parse_integer(const char *text, gint64 *out)
{
    return g_ascii_string_to_signed(text, 10, G_MININT64, G_MAXINT64, out, NULL);
}

static gboolean
check_range(const KConfigKey *key, const char *value, gint64 number, GError **error)
{
    if (number < key->min || number > key->max)
        return bad_value(error, key, value, "is out of range");
    return TRUE;
}

/* TRUE when `text` is a number and nothing more: no unit follows it. */
static gboolean
is_bare_number(const char *text)
{
    char *end = NULL;
    g_ascii_strtod(text, &end);
    return end != text && *end == '\0';
}

/* A duration's range is the registry's, capped at KCONFIG_TIME_NS_MAX; Kafka's
 * "never" stays allowed where the key means it (see never_allowed). */
static gboolean
check_duration_range(const KConfigKey *key, const char *value, gint64 count, GError **error)
{
    if (count == G_MAXINT64 && never_allowed(key))
        return TRUE;
    if (count < key->min || count > duration_count_max(key))
        return bad_value(error, key, value, "is out of range");
    return TRUE;
}

/* A duration's count in the key's unit (ns for ksim's own keys). */
static gboolean
duration_count(const KConfigKey *key, const char *value, gint64 *count, GError **error)
{
    if (is_bare_number(value)) {
        if (key->unit_ns == 0 && g_ascii_strtod(value, NULL) != 0.0)
            return bad_value(error, key, value, "needs a unit");
        if (!parse_integer(value, count))
            return bad_value(error, key, value, "is not a whole number (with a unit, it may be)");
        if (key->unit_ns == 0 && *count != 0)
            return bad_value(error, key, value, "needs a unit");
        return TRUE;
    }
    gint64 ns = 0;
    g_autoptr(GError) local = NULL;
    if (!sim_parse_duration_ns(value, 1, &ns, &local))
        return bad_value_because(error, key, local->message);
    if (key->unit_ns == 0) {
        *count = ns;
        return TRUE;
    }
    if (ns % key->unit_ns != 0) {
        g_autofree char *why =
            g_strdup_printf("is not a whole number of %s", unit_name(key->unit_ns));
        return bad_value(error, key, value, why);
    }
    *count = ns / key->unit_ns;
    return TRUE;
}

static gboolean
size_bytes(const KConfigKey *key, const char *value, gint64 *bytes, GError **error)
{
    if (parse_integer(value, bytes))
        return TRUE;
    if (is_bare_number(value))
        return bad_value(error, key, value,
                         "is not a whole number of bytes (with a unit, it may be)");
    g_autoptr(GError) local = NULL;
    if (!sim_parse_bytes(value, bytes, &local))
        return bad_value_because(error, key, local->message);
    return TRUE;
}

/* Every time in a time distribution must carry a unit, so that "5" is never
 * silently read as 5 ns. Lognormal's sigma and Pareto's shape are plain. */
static gboolean
check_dist_units(const KConfigKey *key, const char *value, GError **error)
{
    const char *colon = strchr(value, ':');
    const char *body = colon != NULL ? colon + 1 : value;
    gboolean first_only = g_str_has_prefix(value, "lognormal") || g_str_has_prefix(value, "pareto");
    g_auto(GStrv) pieces = g_strsplit_set(body, "+,", -1);
    for (guint i = 0; pieces[i] != NULL; i++) {
        g_auto(GStrv) parts = g_strsplit(pieces[i], "..", -1);
        for (guint j = 0; parts[j] != NULL; j++) {
            const char *part = g_strstrip(parts[j]);
            if (is_bare_number(part) && g_ascii_strtod(part, NULL) != 0.0)
                return bad_value(error, key, value, "has a time without a unit");
            if (first_only)
                return TRUE;
        }
    }
    return TRUE;
}

/* Every value of the distribution a sample can reach must be one a run
 * represents: a constant and a uniform range are sampled as written (the
 * heavy-tailed kinds are capped at a day by sim_dist_sample). Lognormal's
 * sigma and Pareto's shape are plain numbers, not times or sizes. */
static gboolean
check_dist_bounds(const KConfigKey *key, const char *value, const SimDist *dist, GError **error)
{
    gboolean time = key->type == KCONFIG_TYPE_TIME_DIST;
    double max = time ? (double)KCONFIG_TIME_NS_MAX : (double)KCONFIG_SIZE_DIST_MAX;
    gboolean b_plain = dist->kind == SIM_DIST_LOGNORMAL || dist->kind == SIM_DIST_PARETO;
    if (dist->a > max || (!b_plain && dist->b > max))
        return bad_value(error, key, value,
                         time ? "has a time above " TIME_MAX_TEXT
                              : "has a size above 2147483647 bytes");
    return TRUE;
}

static gboolean
check_dist(const KConfigKey *key, const char *value, GError **error)
{
    SimDist dist;
    g_autoptr(GError) local = NULL;
    gboolean time = key->type == KCONFIG_TYPE_TIME_DIST;
    if (!sim_dist_parse(value, time, &dist, &local))
        return bad_value_because(error, key, local->message);
    if (time && !check_dist_units(key, value, error))
        return FALSE;
    return check_dist_bounds(key, value, &dist, error);
}

gboolean
kconfig_parse_time_ns(const char *text, gint64 *out_ns, GError **error)
{
    KSIM_ASSERT(text != NULL);
    KSIM_ASSERT(out_ns != NULL);
    /* The [scenario] duration key stands for every ksim duration. */
    const KConfigKey *key = kconfig_lookup("duration", KCONFIG_SCOPE_SCENARIO);
    KSIM_ASSERT(key != NULL && key->unit_ns == 0);
    g_autofree char *trimmed = g_strstrip(g_strdup(text));
    gint64 ns = 0;
    if (!duration_count(key, trimmed, &ns, error))
        return FALSE;
    if (ns < 0 || ns > KCONFIG_TIME_NS_MAX)
        return bad_value(error, key, trimmed, "is out of range");
    *out_ns = ns;
    return TRUE;
}

const char *
kconfig_choice_canonical(const KConfigKey *key, const char *value)
{
    KSIM_ASSERT(key != NULL);
    KSIM_ASSERT(key->choices != NULL);
    for (guint i = 0; key->choices[i].value != NULL; i++) {
        const KConfigChoice *choice = &key->choices[i];
        if (g_ascii_strcasecmp(choice->value, value) == 0)
            return choice->canonical != NULL ? choice->canonical : choice->value;
    }
    return NULL;
}

static gboolean
check_list(const KConfigKey *key, const char *value, GError **error)
{
    g_auto(GStrv) items = g_strsplit(value, ",", -1);
    if (items[0] == NULL)
        return bad_value(error, key, value, "is an empty list");
    for (guint i = 0; items[i] != NULL; i++) {
        const char *item = g_strstrip(items[i]);
        if (*item == '\0')
            return bad_value(error, key, value, "has an empty item");
        if (key->choices != NULL && kconfig_choice_canonical(key, item) == NULL) {
            g_autofree char *why = g_strdup_printf("has '%s', which is not allowed", item);
            return bad_value(error, key, value, why);
        }
    }
    return TRUE;
}

static gboolean
check_double(const KConfigKey *key, const char *value, GError **error)
{
    char *end = NULL;
    double number = g_ascii_strtod(value, &end);
    if (end == value || *end != '\0' || !isfinite(number))
        return bad_value(error, key, value, "is not a number");
    if (number < (double)key->min || number > (double)key->max)
        return bad_value(error, key, value, "is out of range");
    return TRUE;
}

static gboolean
check_typed(const KConfigKey *key, const char *value, GError **error)
{
    gint64 number = 0;
    switch (key->type) {
    case KCONFIG_TYPE_INT:
    case KCONFIG_TYPE_LONG:
        if (!parse_integer(value, &number))
            return bad_value(error, key, value, "is not an integer");
        return check_range(key, value, number, error);
    case KCONFIG_TYPE_DOUBLE:
        return check_double(key, value, error);
    case KCONFIG_TYPE_BOOL:
        if (g_ascii_strcasecmp(value, "true") != 0 && g_ascii_strcasecmp(value, "false") != 0)
            return bad_value(error, key, value, "is not a boolean");
        return TRUE;
    case KCONFIG_TYPE_STRING:
        /* A positive max bounds the length (a model's fixed field). */
        if (key->max > 0 && (gint64)strlen(value) > key->max)
            return bad_value(error, key, value, "is too long");
        return TRUE;
    case KCONFIG_TYPE_ENUM:
        if (kconfig_choice_canonical(key, value) == NULL)
            return bad_value(error, key, value, "is not allowed");
        return TRUE;
    case KCONFIG_TYPE_LIST:
        return check_list(key, value, error);
    case KCONFIG_TYPE_DURATION:
        return duration_count(key, value, &number, error) &&
               check_duration_range(key, value, number, error);
    case KCONFIG_TYPE_SIZE:
        return size_bytes(key, value, &number, error) && check_range(key, value, number, error);
    case KCONFIG_TYPE_TIME_DIST:
    case KCONFIG_TYPE_SIZE_DIST:
        return check_dist(key, value, error);
    }
    KSIM_ASSERT(!"unknown key type");
    return FALSE;
}

static gboolean value_is_default(const KConfigKey *key, const char *value);

gboolean
kconfig_check_value(const KConfigKey *key, const char *value, GError **error)
{
    KSIM_ASSERT(key != NULL);
    KSIM_ASSERT(value != NULL);
    g_autofree char *trimmed = g_strstrip(g_strdup(value));
    if (key->refused != NULL) {
        g_set_error(error, KSIM_KCONFIG_ERROR, KSIM_KCONFIG_ERROR_BAD_VALUE,
                    "'%s': a scenario does not set %s: %s", trimmed, key->name, key->refused);
        return FALSE;
    }
    if (is_null_text(trimmed)) {
        if (key_accepts_null(key))
            return TRUE;
        return bad_value(error, key, trimmed, "is not allowed here (the key has no null)");
    }
    if (!check_typed(key, trimmed, error))
        return FALSE;
    if (key->only_default != NULL && !value_is_default(key, trimmed)) {
        g_set_error(error, KSIM_KCONFIG_ERROR, KSIM_KCONFIG_ERROR_BAD_VALUE,
                    "'%s': ksim models only the default (%s): %s", trimmed, key->default_value,
                    key->only_default);
        return FALSE;
    }
    return TRUE;
}

/* ---- KConfig ---- */

/* TRUE when `value` (valid for `key`) means the key's default. */
static gboolean
value_is_default(const KConfigKey *key, const char *value)
{
    if (key->default_value == NULL)
        return FALSE; /* the default is null, and null was handled before */
    /* Both values passed check_typed: they go in without kconfig_set,
     * whose check would come back here. */
    g_autoptr(KConfig) given = kconfig_new(key->scope);
    g_autoptr(KConfig) fallback = kconfig_new(key->scope);
    g_tree_insert(given->values, (gpointer)key->name, g_strdup(value));
    g_tree_insert(fallback->values, (gpointer)key->name, g_strdup(key->default_value));
    switch (key->type) {
    case KCONFIG_TYPE_INT:
    case KCONFIG_TYPE_LONG:
        return kconfig_get_int64(given, key->name) == kconfig_get_int64(fallback, key->name);
    case KCONFIG_TYPE_BOOL:
        return kconfig_get_bool(given, key->name) == kconfig_get_bool(fallback, key->name);
    case KCONFIG_TYPE_DURATION:
        return kconfig_get_duration_ns(given, key->name) ==
               kconfig_get_duration_ns(fallback, key->name);
    case KCONFIG_TYPE_SIZE:
        return kconfig_get_bytes(given, key->name) == kconfig_get_bytes(fallback, key->name);
    case KCONFIG_TYPE_ENUM:
        return strcmp(kconfig_get_string(given, key->name),
                      kconfig_get_string(fallback, key->name)) == 0;
    case KCONFIG_TYPE_LIST: {
        g_auto(GStrv) a = kconfig_get_list(given, key->name);
        g_auto(GStrv) b = kconfig_get_list(fallback, key->name);
        return g_strv_equal((const char *const *)a, (const char *const *)b);
    }
    default:
        return strcmp(value, key->default_value) == 0;
    }
}

static gint
compare_names(gconstpointer a, gconstpointer b, gpointer user_data)
{
    (void)user_data;
    return strcmp(a, b);
}

KConfig *
kconfig_new(guint scope_mask)
{
    KSIM_ASSERT(scope_mask != 0);
    KSIM_ASSERT((scope_mask & ~KCONFIG_SCOPES_ALL) == 0);
    KConfig *cfg = g_new0(KConfig, 1);
    cfg->scope_mask = scope_mask;
    cfg->values = g_tree_new_full(compare_names, NULL, NULL, g_free);
    return cfg;
}

KConfig *
kconfig_new_topic(const KConfig *broker)
{
    KSIM_ASSERT(broker != NULL);
    KSIM_ASSERT(broker->scope_mask == KCONFIG_SCOPE_BROKER);
    KConfig *cfg = kconfig_new(KCONFIG_SCOPE_TOPIC);
    cfg->parent = kconfig_copy(broker);
    return cfg;
}

void
kconfig_free(KConfig *cfg)
{
    if (cfg == NULL)
        return;
    kconfig_free(cfg->parent);
    g_tree_destroy(cfg->values);
    g_free(cfg);
}

static gboolean
copy_value_cb(gpointer key, gpointer value, gpointer user_data)
{
    GTree *target = user_data;
    g_tree_insert(target, key, g_strdup(value));
    return FALSE;
}

KConfig *
kconfig_copy(const KConfig *cfg)
{
    KSIM_ASSERT(cfg != NULL);
    KConfig *copy = kconfig_new(cfg->scope_mask);
    g_tree_foreach(cfg->values, copy_value_cb, copy->values);
    if (cfg->parent != NULL)
        copy->parent = kconfig_copy(cfg->parent);
    KSIM_ASSERT(g_tree_nnodes(copy->values) == g_tree_nnodes(cfg->values));
    return copy;
}

guint
kconfig_scope_mask(const KConfig *cfg)
{
    KSIM_ASSERT(cfg != NULL);
    return cfg->scope_mask;
}

static void
set_unknown_key_error(const KConfig *cfg, const char *name, GError **error)
{
    guint elsewhere = kconfig_scopes_of(name);
    g_autofree char *shown = kconfig_echo(name);
    const char *suggestion = kconfig_suggest(name, cfg->scope_mask);
    if (elsewhere != 0) {
        KConfigScope scope = (KConfigScope)(elsewhere & -elsewhere);
        g_set_error(error, KSIM_KCONFIG_ERROR, KSIM_KCONFIG_ERROR_UNKNOWN_KEY,
                    "%s: not valid here (it is a %s key)", shown, kconfig_scope_name(scope));
    } else if (suggestion != NULL) {
        g_set_error(error, KSIM_KCONFIG_ERROR, KSIM_KCONFIG_ERROR_UNKNOWN_KEY,
                    "%s: unknown key; did you mean '%s'?", shown, suggestion);
    } else {
        g_set_error(error, KSIM_KCONFIG_ERROR, KSIM_KCONFIG_ERROR_UNKNOWN_KEY, "%s: unknown key",
                    shown);
    }
}

gboolean
kconfig_set(KConfig *cfg, const char *key, const char *value, GError **error)
{
    KSIM_ASSERT(cfg != NULL);
    KSIM_ASSERT(key != NULL && value != NULL);
    const KConfigKey *entry = kconfig_lookup(key, cfg->scope_mask);
    if (entry == NULL) {
        set_unknown_key_error(cfg, key, error);
        return FALSE;
    }
    g_autoptr(GError) local = NULL;
    if (!kconfig_check_value(entry, value, &local)) {
        g_set_error(error, KSIM_KCONFIG_ERROR, KSIM_KCONFIG_ERROR_BAD_VALUE, "%s: %s", key,
                    local->message);
        return FALSE;
    }
    g_tree_insert(cfg->values, (gpointer)entry->name, g_strstrip(g_strdup(value)));
    return TRUE;
}

static const KConfigKey *
config_key(const KConfig *cfg, const char *name)
{
    KSIM_ASSERT(cfg != NULL);
    KSIM_ASSERT(name != NULL);
    const KConfigKey *key = kconfig_lookup(name, cfg->scope_mask);
    KSIM_ASSERT(key != NULL);
    return key;
}

void
kconfig_unset(KConfig *cfg, const char *key)
{
    const KConfigKey *entry = config_key(cfg, key);
    g_tree_remove(cfg->values, entry->name);
    KSIM_ASSERT(g_tree_lookup(cfg->values, entry->name) == NULL);
}

gboolean
kconfig_is_set(const KConfig *cfg, const char *key)
{
    const KConfigKey *entry = config_key(cfg, key);
    return g_tree_lookup(cfg->values, entry->name) != NULL;
}

/* The effective value of `key` in `cfg` after layering and fallbacks, NULL
 * for null; `source` is the registry entry whose value it is (the fallback's,
 * when a fallback was followed), which gives its type and unit. */
static const char *
resolve(const KConfig *cfg, const KConfigKey *key, const KConfigKey **source)
{
    for (guint hop = 0; hop < RESOLVE_HOPS_MAX; hop++) {
        const char *value = g_tree_lookup(cfg->values, key->name);
        if (value == NULL && key->overrides != NULL && cfg->parent != NULL) {
            cfg = cfg->parent;
            key = kconfig_lookup(key->overrides, KCONFIG_SCOPE_BROKER);
            KSIM_ASSERT(key != NULL);
            continue;
        }
        if (value == NULL)
            value = key->default_value;
        if (is_null_text(value) && key->fallback != NULL) {
            key = kconfig_lookup(key->fallback, key->scope);
            KSIM_ASSERT(key != NULL);
            continue;
        }
        *source = key;
        return is_null_text(value) ? NULL : value;
    }
    KSIM_ASSERT(!"configuration layering deeper than RESOLVE_HOPS_MAX");
    return NULL;
}

gboolean
kconfig_is_null(const KConfig *cfg, const char *key)
{
    const KConfigKey *source = NULL;
    return resolve(cfg, config_key(cfg, key), &source) == NULL;
}

const char *
kconfig_get_value(const KConfig *cfg, const char *key)
{
    const KConfigKey *source = NULL;
    return resolve(cfg, config_key(cfg, key), &source);
}

/* The effective value, asserting that it is not null and that its type is
 * one of the two given. */
static const char *
typed_value(const KConfig *cfg, const char *key, KConfigType type_a, KConfigType type_b,
            const KConfigKey **source)
{
    const char *value = resolve(cfg, config_key(cfg, key), source);
    KSIM_ASSERT((*source)->type == type_a || (*source)->type == type_b);
    KSIM_ASSERT(value != NULL);
    return value;
}

gint64
kconfig_get_int64(const KConfig *cfg, const char *key)
{
    const KConfigKey *source = NULL;
    const char *value = resolve(cfg, config_key(cfg, key), &source);
    KSIM_ASSERT(value != NULL);
    gint64 number = 0;
    if (source->type == KCONFIG_TYPE_SIZE) {
        gboolean parsed = size_bytes(source, value, &number, NULL);
        KSIM_ASSERT(parsed);
        return number;
    }
    KSIM_ASSERT(source->type == KCONFIG_TYPE_INT || source->type == KCONFIG_TYPE_LONG);
    gboolean parsed = parse_integer(value, &number);
    KSIM_ASSERT(parsed);
    return number;
}

gboolean
kconfig_get_bool(const KConfig *cfg, const char *key)
{
    const KConfigKey *source = NULL;
    const char *value = typed_value(cfg, key, KCONFIG_TYPE_BOOL, KCONFIG_TYPE_BOOL, &source);
    return g_ascii_strcasecmp(value, "true") == 0;
}

double
kconfig_get_double(const KConfig *cfg, const char *key)
{
    const KConfigKey *source = NULL;
    const char *value = resolve(cfg, config_key(cfg, key), &source);
    KSIM_ASSERT(value != NULL);
    KSIM_ASSERT(source->type == KCONFIG_TYPE_DOUBLE || source->type == KCONFIG_TYPE_INT ||
                source->type == KCONFIG_TYPE_LONG);
    return g_ascii_strtod(value, NULL);
}

const char *
kconfig_get_string(const KConfig *cfg, const char *key)
{
    const KConfigKey *source = NULL;
    const char *value = resolve(cfg, config_key(cfg, key), &source);
    KSIM_ASSERT(source->type == KCONFIG_TYPE_STRING || source->type == KCONFIG_TYPE_ENUM);
    if (value == NULL || source->type == KCONFIG_TYPE_STRING)
        return value;
    const char *canonical = kconfig_choice_canonical(source, value);
    KSIM_ASSERT(canonical != NULL);
    return canonical;
}

GStrv
kconfig_get_list(const KConfig *cfg, const char *key)
{
    const KConfigKey *source = NULL;
    const char *value = typed_value(cfg, key, KCONFIG_TYPE_LIST, KCONFIG_TYPE_LIST, &source);
    GStrv items = g_strsplit(value, ",", -1);
    for (guint i = 0; items[i] != NULL; i++) {
        g_strstrip(items[i]);
        if (source->choices == NULL)
            continue;
        const char *canonical = kconfig_choice_canonical(source, items[i]);
        KSIM_ASSERT(canonical != NULL);
        g_free(items[i]);
        items[i] = g_strdup(canonical);
    }
    return items;
}

gint64
kconfig_get_duration_ns(const KConfig *cfg, const char *key)
{
    const KConfigKey *source = NULL;
    const char *value =
        typed_value(cfg, key, KCONFIG_TYPE_DURATION, KCONFIG_TYPE_DURATION, &source);
    gint64 count = 0;
    gboolean parsed = duration_count(source, value, &count, NULL);
    KSIM_ASSERT(parsed);
    if (count < 0)
        return -1;
    gint64 unit_ns = source->unit_ns != 0 ? source->unit_ns : 1;
    if (count > G_MAXINT64 / unit_ns)
        return G_MAXINT64;
    return count * unit_ns;
}

gint64
kconfig_get_duration_ms(const KConfig *cfg, const char *key)
{
    const KConfigKey *source = NULL;
    const char *value =
        typed_value(cfg, key, KCONFIG_TYPE_DURATION, KCONFIG_TYPE_DURATION, &source);
    gint64 count = 0;
    gboolean parsed = duration_count(source, value, &count, NULL);
    KSIM_ASSERT(parsed);
    if (count < 0)
        return -1;
    if (source->unit_ns == 0)
        return count / MS;
    /* Every Kafka duration unit is a whole number of milliseconds. */
    KSIM_ASSERT(source->unit_ns % MS == 0);
    gint64 unit_ms = source->unit_ns / MS;
    if (count > G_MAXINT64 / unit_ms)
        return G_MAXINT64;
    return count * unit_ms;
}

gint64
kconfig_get_bytes(const KConfig *cfg, const char *key)
{
    const KConfigKey *source = NULL;
    const char *value = typed_value(cfg, key, KCONFIG_TYPE_SIZE, KCONFIG_TYPE_SIZE, &source);
    gint64 bytes = 0;
    gboolean parsed = size_bytes(source, value, &bytes, NULL);
    KSIM_ASSERT(parsed);
    return bytes;
}

SimDist
kconfig_get_dist(const KConfig *cfg, const char *key)
{
    const KConfigKey *source = NULL;
    const char *value =
        typed_value(cfg, key, KCONFIG_TYPE_TIME_DIST, KCONFIG_TYPE_SIZE_DIST, &source);
    SimDist dist = SIM_DIST_CONST(0);
    gboolean parsed = sim_dist_parse(value, source->type == KCONFIG_TYPE_TIME_DIST, &dist, NULL);
    KSIM_ASSERT(parsed);
    return dist;
}

static gboolean
collect_key_cb(gpointer key, gpointer value, gpointer user_data)
{
    (void)value;
    g_ptr_array_add(user_data, key);
    return FALSE;
}

GPtrArray *
kconfig_keys_sorted(const KConfig *cfg)
{
    KSIM_ASSERT(cfg != NULL);
    GPtrArray *keys = g_ptr_array_new();
    /* A GTree walks its keys in order, so no sort is needed. */
    g_tree_foreach(cfg->values, collect_key_cb, keys);
    KSIM_ASSERT(keys->len == (guint)g_tree_nnodes(cfg->values));
    return keys;
}

static gboolean
check_entry_cb(gpointer key, gpointer value, gpointer user_data)
{
    const KConfig *cfg = user_data;
    const KConfigKey *entry = kconfig_lookup(key, cfg->scope_mask);
    KSIM_ASSERT(entry != NULL);
    KSIM_ASSERT(entry->name == (const char *)key);
    KSIM_ASSERT(kconfig_check_value(entry, value, NULL));
    return FALSE;
}

void
kconfig_check_invariants(const KConfig *cfg)
{
    KSIM_ASSERT(cfg != NULL);
    KSIM_ASSERT((cfg->scope_mask & ~KCONFIG_SCOPES_ALL) == 0);
    g_tree_foreach(cfg->values, check_entry_cb, (gpointer)cfg);
    if (cfg->parent == NULL)
        return;
    KSIM_ASSERT(cfg->scope_mask == KCONFIG_SCOPE_TOPIC);
    KSIM_ASSERT(cfg->parent->scope_mask == KCONFIG_SCOPE_BROKER);
    KSIM_ASSERT(cfg->parent->parent == NULL);
    kconfig_check_invariants(cfg->parent);
}
