/*
 * capsule: the replay capsule's JSON form, written and read with json-glib
 * (see capsule.h).
 *
 * Invariants (capsule_check_invariants):
 *  1. Every string member but `command` and `scenario_path` is set.
 *  2. Every run's fingerprint is 16 hexadecimal digits.
 *  3. A capsule read by capsule_from_json has the SHA-256 of its text.
 */
#include "capsule.h"

#include "sim_assert.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <json-glib/json-glib.h>

GQuark
ksim_capsule_error_quark(void)
{
    return g_quark_from_static_string("ksim-capsule-error");
}

static void
capsule_run_free(gpointer data)
{
    CapsuleRun *run = data;
    g_free(run->label);
    g_free(run->fingerprint);
    g_ptr_array_unref(run->settings);
    g_ptr_array_unref(run->failed);
    g_free(run);
}

Capsule *
capsule_new(const char *ksim_version, const char *git_commit)
{
    Capsule *capsule = g_new0(Capsule, 1);
    capsule->ksim_version = g_strdup(ksim_version);
    capsule->git_commit = g_strdup(git_commit);
    capsule->sets = g_ptr_array_new_with_free_func(g_free);
    capsule->runs = g_ptr_array_new_with_free_func(capsule_run_free);
    return capsule;
}

void
capsule_free(Capsule *capsule)
{
    if (capsule == NULL)
        return;
    g_free(capsule->ksim_version);
    g_free(capsule->git_commit);
    g_free(capsule->command);
    g_free(capsule->scenario_name);
    g_free(capsule->scenario_path);
    g_free(capsule->scenario_sha256);
    g_free(capsule->scenario_text);
    g_ptr_array_unref(capsule->sets);
    g_ptr_array_unref(capsule->runs);
    g_free(capsule);
}

CapsuleRun *
capsule_add_run(Capsule *capsule, const char *label, const char *fingerprint)
{
    CapsuleRun *run = g_new0(CapsuleRun, 1);
    run->label = g_strdup(label);
    run->fingerprint = g_strdup(fingerprint);
    run->settings = g_ptr_array_new_with_free_func(g_free);
    run->failed = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(capsule->runs, run);
    return run;
}

static gboolean
fingerprint_valid(const char *text)
{
    if (text == NULL || strlen(text) != 16)
        return FALSE;
    for (const char *c = text; *c != '\0'; c++) {
        if (!g_ascii_isxdigit(*c))
            return FALSE;
    }
    return TRUE;
}

void
capsule_check_invariants(const Capsule *capsule)
{
    KSIM_ASSERT(capsule != NULL);
    KSIM_ASSERT(capsule->ksim_version != NULL);
    KSIM_ASSERT(capsule->git_commit != NULL);
    KSIM_ASSERT(capsule->scenario_name != NULL);
    KSIM_ASSERT(capsule->scenario_sha256 != NULL);
    KSIM_ASSERT(capsule->scenario_text != NULL);
    for (guint i = 0; i < capsule->runs->len; i++) {
        const CapsuleRun *run = g_ptr_array_index(capsule->runs, i);
        KSIM_ASSERT(run->label != NULL);
        KSIM_ASSERT(fingerprint_valid(run->fingerprint));
    }
}

/* ---- writing ---- */

static void
add_strings(JsonBuilder *builder, const char *member, const GPtrArray *strings)
{
    json_builder_set_member_name(builder, member);
    json_builder_begin_array(builder);
    for (guint i = 0; i < strings->len; i++)
        json_builder_add_string_value(builder, g_ptr_array_index(strings, i));
    json_builder_end_array(builder);
}

static void
add_settings(JsonBuilder *builder, const GPtrArray *settings)
{
    json_builder_set_member_name(builder, "settings");
    json_builder_begin_array(builder);
    for (guint i = 0; i < settings->len; i++) {
        const char *setting = g_ptr_array_index(settings, i);
        const char *equals = strchr(setting, '=');
        KSIM_ASSERT(equals != NULL);
        g_autofree char *key = g_strndup(setting, (gsize)(equals - setting));
        json_builder_begin_object(builder);
        json_builder_set_member_name(builder, "key");
        json_builder_add_string_value(builder, key);
        json_builder_set_member_name(builder, "value");
        json_builder_add_string_value(builder, equals + 1);
        json_builder_end_object(builder);
    }
    json_builder_end_array(builder);
}

static void
add_string(JsonBuilder *builder, const char *member, const char *value)
{
    json_builder_set_member_name(builder, member);
    if (value != NULL)
        json_builder_add_string_value(builder, value);
    else
        json_builder_add_null_value(builder);
}

char *
capsule_to_json(const Capsule *capsule)
{
    capsule_check_invariants(capsule);
    g_autoptr(JsonBuilder) builder = json_builder_new();
    json_builder_begin_object(builder);
    add_string(builder, "format", CAPSULE_FORMAT);
    json_builder_set_member_name(builder, "format_version");
    json_builder_add_int_value(builder, CAPSULE_FORMAT_VERSION);
    add_string(builder, "ksim_version", capsule->ksim_version);
    add_string(builder, "git_commit", capsule->git_commit);
    add_string(builder, "command", capsule->command);
    json_builder_set_member_name(builder, "scenario");
    json_builder_begin_object(builder);
    add_string(builder, "name", capsule->scenario_name);
    add_string(builder, "path", capsule->scenario_path);
    add_string(builder, "sha256", capsule->scenario_sha256);
    add_string(builder, "text", capsule->scenario_text);
    json_builder_end_object(builder);
    json_builder_set_member_name(builder, "seed");
    /* Seeds are at most G_MAXINT64 (the --seed and `seed` parsers). */
    KSIM_ASSERT(capsule->seed <= (guint64)G_MAXINT64);
    json_builder_add_int_value(builder, (gint64)capsule->seed);
    add_strings(builder, "sets", capsule->sets);
    json_builder_set_member_name(builder, "runs");
    json_builder_begin_array(builder);
    for (guint i = 0; i < capsule->runs->len; i++) {
        const CapsuleRun *run = g_ptr_array_index(capsule->runs, i);
        json_builder_begin_object(builder);
        add_string(builder, "label", run->label);
        add_settings(builder, run->settings);
        add_string(builder, "fingerprint", run->fingerprint);
        add_strings(builder, "failed", run->failed);
        json_builder_end_object(builder);
    }
    json_builder_end_array(builder);
    json_builder_end_object(builder);
    g_autoptr(JsonNode) root = json_builder_get_root(builder);
    g_autoptr(JsonGenerator) generator = json_generator_new();
    json_generator_set_pretty(generator, TRUE);
    json_generator_set_root(generator, root);
    g_autofree char *text = json_generator_to_data(generator, NULL);
    return g_strconcat(text, "\n", NULL);
}

/* ---- reading ---- */

typedef struct {
    const char *file;
    GError **error;
} Reader;

static gboolean G_GNUC_PRINTF(2, 3)
fail(const Reader *reader, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    g_autofree char *message = g_strdup_vprintf(format, args);
    va_end(args);
    g_set_error(reader->error, KSIM_CAPSULE_ERROR, KSIM_CAPSULE_ERROR_FORMAT,
                "%s: not a valid ksim capsule: %s", reader->file, message);
    return FALSE;
}

/* The string member `name` of `object` into `out`; with `nullable`, null
 * or absent gives NULL. */
static gboolean
read_string(const Reader *reader, JsonObject *object, const char *where, const char *name,
            gboolean nullable, char **out)
{
    JsonNode *node = json_object_get_member(object, name);
    if ((node == NULL || JSON_NODE_HOLDS_NULL(node)) && nullable) {
        *out = NULL;
        return TRUE;
    }
    if (node == NULL)
        return fail(reader, "%s has no member \"%s\"", where, name);
    if (!JSON_NODE_HOLDS_VALUE(node) || json_node_get_value_type(node) != G_TYPE_STRING)
        return fail(reader, "%s member \"%s\" is not a string", where, name);
    *out = g_strdup(json_node_get_string(node));
    return TRUE;
}

static JsonArray *
read_array(const Reader *reader, JsonObject *object, const char *where, const char *name)
{
    JsonNode *node = json_object_get_member(object, name);
    if (node == NULL || !JSON_NODE_HOLDS_ARRAY(node)) {
        fail(reader, "%s member \"%s\" is %s, not an array", where, name,
             node == NULL ? "missing" : json_node_type_name(node));
        return NULL;
    }
    return json_node_get_array(node);
}

static gboolean
read_strings(const Reader *reader, JsonObject *object, const char *where, const char *name,
             GPtrArray *out)
{
    JsonArray *array = read_array(reader, object, where, name);
    if (array == NULL)
        return FALSE;
    for (guint i = 0; i < json_array_get_length(array); i++) {
        JsonNode *node = json_array_get_element(array, i);
        if (!JSON_NODE_HOLDS_VALUE(node) || json_node_get_value_type(node) != G_TYPE_STRING)
            return fail(reader, "%s member \"%s\": element %u is not a string", where, name, i);
        g_ptr_array_add(out, g_strdup(json_node_get_string(node)));
    }
    return TRUE;
}

static JsonObject *
element_object(const Reader *reader, JsonArray *array, guint i, const char *where)
{
    JsonNode *node = json_array_get_element(array, i);
    if (!JSON_NODE_HOLDS_OBJECT(node)) {
        fail(reader, "%s element %u is not an object", where, i);
        return NULL;
    }
    return json_node_get_object(node);
}

static gboolean
read_settings(const Reader *reader, JsonObject *object, const char *where, GPtrArray *out)
{
    JsonArray *array = read_array(reader, object, where, "settings");
    if (array == NULL)
        return FALSE;
    for (guint i = 0; i < json_array_get_length(array); i++) {
        g_autofree char *inner = g_strdup_printf("%s setting %u", where, i + 1);
        JsonObject *setting = element_object(reader, array, i, inner);
        g_autofree char *key = NULL, *value = NULL;
        if (setting == NULL || !read_string(reader, setting, inner, "key", FALSE, &key) ||
            !read_string(reader, setting, inner, "value", FALSE, &value))
            return FALSE;
        if (key[0] == '\0' || strchr(key, '=') != NULL)
            return fail(reader, "%s: key \"%s\" is empty or holds '='", inner, key);
        g_ptr_array_add(out, g_strdup_printf("%s=%s", key, value));
    }
    return TRUE;
}

static gboolean
read_run(const Reader *reader, Capsule *capsule, JsonArray *runs, guint i)
{
    g_autofree char *where = g_strdup_printf("run %u", i + 1);
    JsonObject *object = element_object(reader, runs, i, "\"runs\"");
    g_autofree char *label = NULL, *fingerprint = NULL;
    if (object == NULL || !read_string(reader, object, where, "label", FALSE, &label) ||
        !read_string(reader, object, where, "fingerprint", FALSE, &fingerprint))
        return FALSE;
    if (!fingerprint_valid(fingerprint))
        return fail(reader, "%s: fingerprint \"%s\" is not 16 hexadecimal digits", where,
                    fingerprint);
    CapsuleRun *run = capsule_add_run(capsule, label, fingerprint);
    return read_settings(reader, object, where, run->settings) &&
           read_strings(reader, object, where, "failed", run->failed);
}

static gboolean
read_header(const Reader *reader, JsonObject *root)
{
    g_autofree char *format = NULL;
    if (!read_string(reader, root, "the capsule", "format", FALSE, &format))
        return FALSE;
    if (strcmp(format, CAPSULE_FORMAT) != 0)
        return fail(reader, "\"format\" is \"%s\", not \"%s\"", format, CAPSULE_FORMAT);
    JsonNode *version = json_object_get_member(root, "format_version");
    if (version == NULL || !JSON_NODE_HOLDS_VALUE(version) ||
        json_node_get_value_type(version) != G_TYPE_INT64)
        return fail(reader, "\"format_version\" is missing or not an integer");
    if (json_node_get_int(version) != CAPSULE_FORMAT_VERSION)
        return fail(reader, "\"format_version\" is %" G_GINT64_FORMAT "; this ksim reads %d",
                    json_node_get_int(version), CAPSULE_FORMAT_VERSION);
    return TRUE;
}

static gboolean
read_scenario(const Reader *reader, Capsule *capsule, JsonObject *root)
{
    JsonNode *node = json_object_get_member(root, "scenario");
    if (node == NULL || !JSON_NODE_HOLDS_OBJECT(node))
        return fail(reader, "\"scenario\" is missing or not an object");
    JsonObject *scenario = json_node_get_object(node);
    const char *where = "\"scenario\"";
    if (!read_string(reader, scenario, where, "name", FALSE, &capsule->scenario_name) ||
        !read_string(reader, scenario, where, "path", TRUE, &capsule->scenario_path) ||
        !read_string(reader, scenario, where, "sha256", FALSE, &capsule->scenario_sha256) ||
        !read_string(reader, scenario, where, "text", FALSE, &capsule->scenario_text))
        return FALSE;
    g_autofree char *sha256 =
        g_compute_checksum_for_string(G_CHECKSUM_SHA256, capsule->scenario_text, -1);
    if (g_ascii_strcasecmp(sha256, capsule->scenario_sha256) != 0)
        return fail(reader, "the scenario's text has SHA-256 %s, but \"sha256\" says %s "
                            "(the text was edited or cut)",
                    sha256, capsule->scenario_sha256);
    return TRUE;
}

static gboolean
read_seed(const Reader *reader, Capsule *capsule, JsonObject *root)
{
    JsonNode *seed = json_object_get_member(root, "seed");
    if (seed == NULL || !JSON_NODE_HOLDS_VALUE(seed) ||
        json_node_get_value_type(seed) != G_TYPE_INT64 || json_node_get_int(seed) < 0)
        return fail(reader, "\"seed\" is missing or not a non-negative integer");
    capsule->seed = (guint64)json_node_get_int(seed);
    return TRUE;
}

Capsule *
capsule_from_json(const char *json, gsize length, const char *display_name, GError **error)
{
    Reader reader = {display_name, error};
    g_autoptr(JsonParser) parser = json_parser_new();
    GError *local = NULL;
    if (!json_parser_load_from_data(parser, json, (gssize)length, &local)) {
        fail(&reader, "%s", local->message);
        g_error_free(local);
        return NULL;
    }
    JsonNode *root_node = json_parser_get_root(parser);
    if (root_node == NULL || !JSON_NODE_HOLDS_OBJECT(root_node)) {
        fail(&reader, "the top level is not an object");
        return NULL;
    }
    JsonObject *root = json_node_get_object(root_node);
    if (!read_header(&reader, root))
        return NULL;
    g_autoptr(Capsule) capsule = capsule_new(NULL, NULL);
    g_clear_pointer(&capsule->ksim_version, g_free);
    g_clear_pointer(&capsule->git_commit, g_free);
    const char *top = "the capsule";
    if (!read_string(&reader, root, top, "ksim_version", FALSE, &capsule->ksim_version) ||
        !read_string(&reader, root, top, "git_commit", FALSE, &capsule->git_commit) ||
        !read_string(&reader, root, top, "command", TRUE, &capsule->command) ||
        !read_scenario(&reader, capsule, root) || !read_seed(&reader, capsule, root) ||
        !read_strings(&reader, root, top, "sets", capsule->sets))
        return NULL;
    JsonArray *runs = read_array(&reader, root, top, "runs");
    if (runs == NULL)
        return NULL;
    if (json_array_get_length(runs) == 0) {
        fail(&reader, "\"runs\" is empty");
        return NULL;
    }
    for (guint i = 0; i < json_array_get_length(runs); i++) {
        if (!read_run(&reader, capsule, runs, i))
            return NULL;
    }
    capsule_check_invariants(capsule);
    return g_steal_pointer(&capsule);
}

Capsule *
capsule_load(const char *path, GError **error)
{
    FILE *file = fopen(path, "rb");
    if (file == NULL) {
        int saved = errno;
        g_set_error(error, KSIM_CAPSULE_ERROR, KSIM_CAPSULE_ERROR_IO, "%s: cannot read: %s",
                    path, g_strerror(saved));
        return NULL;
    }
    /* Read at most the limit and one byte more, so a device or a huge file
     * costs no more than the limit. */
    gsize capacity = (gsize)CAPSULE_FILE_BYTES_MAX + 1;
    g_autofree char *text = g_malloc(capacity + 1);
    gsize length = fread(text, 1, capacity, file);
    int saved = errno;
    gboolean failed = ferror(file) != 0;
    fclose(file);
    if (failed) {
        g_set_error(error, KSIM_CAPSULE_ERROR, KSIM_CAPSULE_ERROR_IO, "%s: cannot read: %s",
                    path, g_strerror(saved));
        return NULL;
    }
    if (length > CAPSULE_FILE_BYTES_MAX) {
        g_set_error(error, KSIM_CAPSULE_ERROR, KSIM_CAPSULE_ERROR_FORMAT,
                    "%s: not a valid ksim capsule: larger than %u bytes", path,
                    CAPSULE_FILE_BYTES_MAX);
        return NULL;
    }
    text[length] = '\0';
    if (memchr(text, '\0', length) != NULL || !g_utf8_validate(text, (gssize)length, NULL)) {
        g_set_error(error, KSIM_CAPSULE_ERROR, KSIM_CAPSULE_ERROR_FORMAT,
                    "%s: not a valid ksim capsule: not UTF-8 text", path);
        return NULL;
    }
    return capsule_from_json(text, length, path, error);
}
