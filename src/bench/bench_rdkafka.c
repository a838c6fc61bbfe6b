/* Runs ksim-rdkafka-mock for `--vs-rdkafka` (see bench_rdkafka.h). */
#include "bench_rdkafka.h"

#include <stdio.h>

#define MOCK_PROGRAM "ksim-rdkafka-mock"

GQuark
ksim_bench_rdkafka_error_quark(void)
{
    return g_quark_from_static_string("ksim-bench-rdkafka-error");
}

char *
bench_rdkafka_mock_path(void)
{
    /* Beside the executable, not on $PATH: a build folder's ksim runs its
     * own build's mock program. */
    g_autofree char *self = g_file_read_link("/proc/self/exe", NULL);
    if (self == NULL)
        return NULL;
    g_autofree char *dir = g_path_get_dirname(self);
    char *path = g_build_filename(dir, MOCK_PROGRAM, NULL);
    if (g_file_test(path, G_FILE_TEST_IS_REGULAR) && g_file_test(path, G_FILE_TEST_IS_EXECUTABLE))
        return path;
    g_free(path);
    return NULL;
}

/* The members ksim reads from the program's object: the figures, and what
 * the line it prints says about the mock. */
static const char *const MOCK_MEMBERS[] = {
    "records_per_s",      "records_delivered", "wall_s",
    "librdkafka_version", "brokers",           "replication_factor",
};

static gboolean
has_members(JsonObject *figures)
{
    for (guint i = 0; i < G_N_ELEMENTS(MOCK_MEMBERS); i++) {
        if (!json_object_has_member(figures, MOCK_MEMBERS[i]))
            return FALSE;
    }
    return TRUE;
}

/* The program's JSON object, checked; NULL with `error` set. */
static JsonObject *
mock_figures(const char *out, gint64 records, GError **error)
{
    g_autoptr(JsonParser) parser = json_parser_new();
    if (!json_parser_load_from_data(parser, out, -1, error))
        return NULL;
    JsonNode *root = json_parser_get_root(parser);
    JsonObject *figures =
        root != NULL && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
    if (figures == NULL || !has_members(figures) ||
        json_object_get_int_member(figures, "records_delivered") != records) {
        g_set_error(error, KSIM_BENCH_RDKAFKA_ERROR, KSIM_BENCH_RDKAFKA_ERROR_OUTPUT,
                    "%s printed no figures of %" G_GINT64_FORMAT " records delivered", MOCK_PROGRAM,
                    records);
        return NULL;
    }
    return json_object_ref(figures);
}

JsonObject *
bench_rdkafka_mock_run(const char *path, const BenchRdkafkaLoad *load, GError **error)
{
    g_autofree char *records = g_strdup_printf("%" G_GINT64_FORMAT, load->records);
    g_autofree char *partitions = g_strdup_printf("%" G_GINT64_FORMAT, load->partitions);
    g_autofree char *value_bytes = g_strdup_printf("%" G_GINT64_FORMAT, load->value_bytes);
    g_autofree char *linger_ms = g_strdup_printf("%" G_GINT64_FORMAT, load->linger_ms);
    g_autofree char *window = g_strdup_printf("%" G_GINT64_FORMAT, load->window);
    /* clang-format off */
    char *argv[] = {
        (char *)path, "--json",
        "--records", records,
        "--partitions", partitions,
        "--value-bytes", value_bytes,
        "--linger-ms", linger_ms,
        "--window", window,
        NULL,
    };
    /* clang-format on */
    g_autofree char *out = NULL;
    g_autofree char *err = NULL;
    int wait_status = 0;
    if (!g_spawn_sync(NULL, argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &wait_status,
                      error))
        return NULL;
    /* librdkafka's own warnings, or the program's complaint: the user
     * should see them either way. */
    if (err != NULL && err[0] != '\0')
        fputs(err, stderr);
    g_autoptr(GError) status_error = NULL;
    if (!g_spawn_check_wait_status(wait_status, &status_error)) {
        g_set_error(error, KSIM_BENCH_RDKAFKA_ERROR, KSIM_BENCH_RDKAFKA_ERROR_FAILED, "%s: %s",
                    path, status_error->message);
        return NULL;
    }
    return mock_figures(out, load->records, error);
}
