/* Tests of src/harness/scenario_plan (what `ksim check` does) and of the
 * input edges it passes through: a byte-order mark, CRLF, a file over the
 * size limit, long names echoed in messages, and arbitrary bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <glib/gstdio.h>
#include <unistd.h>
#include <string.h>

#include "scenario_plan.h"

#ifndef KSIM_SOURCE_DIR
#error "KSIM_SOURCE_DIR must name the source tree (CMake defines it for tests)"
#endif

#define assert_string_contains(haystack, needle)                                                   \
    do {                                                                                           \
        const char *haystack_ = (haystack);                                                        \
        if (strstr(haystack_, (needle)) == NULL)                                                   \
            fail_msg("'%s' does not contain '%s'", haystack_, (needle));                           \
    } while (0)

static const char VARIED[] = "[scenario]\nduration = 5s\n[cluster]\nbrokers = 3\n"
                             "[topic t]\nreplication.factor = 3\n[producer p]\n"
                             "[vary]\nacks = 1, all\n";

static char *
plan_of(const char *bytes, gsize length, int *status)
{
    GString *out = g_string_new(NULL);
    *status = scenario_plan_check_bytes((const guint8 *)bytes, length, NULL, out);
    return g_string_free(out, FALSE);
}

/* A valid file lists each run with its label and settings, and exits 0. */
static void
test_scenario_plan_lists_runs(void **state)
{
    (void)state;
    int status = -1;
    g_autofree char *out = plan_of(VARIED, strlen(VARIED), &status);
    assert_int_equal(status, 0);
    assert_string_contains(out, "runs      2\n");
    assert_string_contains(out, "run 1/2  acks=1  (estimate: ");
    assert_string_contains(out, "run 2/2  acks=all  (estimate: ");
    assert_string_contains(out, "    acks = all\n");
}

/* A byte-order mark and CRLF line ends read as the plain file does: the same
 * runs with the same settings (only the file's hash differs). */
static void
test_scenario_plan_bom_and_crlf_read_the_same(void **state)
{
    (void)state;
    g_autoptr(GString) crlf = g_string_new("\xEF\xBB\xBF");
    for (const char *p = VARIED; *p != '\0'; p++)
        g_string_append(crlf, *p == '\n' ? "\r\n" : (char[]){*p, '\0'});
    int plain_status = -1, bom_status = -1;
    g_autofree char *plain = plan_of(VARIED, strlen(VARIED), &plain_status);
    g_autofree char *bom = plan_of(crlf->str, crlf->len, &bom_status);
    assert_int_equal(plain_status, 0);
    assert_int_equal(bom_status, 0);
    /* Past the sha256 line, the listings are the same. */
    assert_string_equal(strstr(plain, "seed"), strstr(bom, "seed"));
    /* A BOM anywhere but the start is still refused as text before a group. */
    g_autofree char *late = g_strconcat("\n\xEF\xBB\xBF", VARIED, NULL);
    int late_status = -1;
    g_autofree char *late_out = plan_of(late, strlen(late), &late_status);
    assert_int_equal(late_status, 2);
}

/* A file over the limit is refused naming the limit, after reading only the
 * limit and one byte. */
static void
test_scenario_plan_refuses_oversized_file(void **state)
{
    (void)state;
    g_autofree char *path = NULL;
    int fd = g_file_open_tmp("ksim-big-XXXXXX.ini", &path, NULL);
    assert_true(fd >= 0);
    close(fd);
    gsize size = (4u << 20) + 1;
    g_autofree char *bytes = g_malloc(size);
    memset(bytes, '#', size);
    assert_true(g_file_set_contents(path, bytes, (gssize)size, NULL));
    g_autoptr(GError) error = NULL;
    Scenario *scenario = scenario_plan_load(path, NULL, 0, NULL, NULL, FALSE, &error);
    assert_null(scenario);
    assert_string_contains(error->message, "larger than 4194304 bytes");
    g_unlink(path);
}

/* A huge unknown key is echoed cut to its start and an ellipsis. */
static void
test_scenario_plan_echoes_long_key_truncated(void **state)
{
    (void)state;
    g_autoptr(GString) text = g_string_new("[scenario]\nduration = 1s\n[cluster]\n");
    for (guint i = 0; i < 100000; i++)
        g_string_append_c(text, 'k');
    g_string_append(text, " = 3\n");
    int status = -1;
    g_autofree char *out = plan_of(text->str, text->len, &status);
    assert_int_equal(status, 2);
    assert_true(strlen(out) < 400);
    g_autofree char *start = g_strnfill(60, 'k');
    g_autofree char *expected = g_strconcat("[cluster] ", start, "\xE2\x80\xA6: unknown key", NULL);
    assert_string_contains(out, expected);
}

/* Values the engine cannot represent, and runs no machine can hold, are
 * refused before anything runs, each message naming its key and bound. */
static void
test_scenario_plan_refuses_unrunnable_values(void **state)
{
    (void)state;
    static const struct {
        const char *lines;
        const char *fragment;
    } cases[] = {
        {"[cluster]\nnetwork.latency = 1e19\n",
         "[cluster] network.latency: '1e19' has a time without a unit"},
        {"[cluster]\ndisk.fsync.latency = 1e308\n", "disk.fsync.latency"},
        {"[cluster]\nnetwork.latency = uniform:1s..1e300s\n", "above 100000h"},
        {"[consumer-group g]\ntopics = t\npoll.interval = 1e308\n",
         "[consumer-group g] poll.interval"},
        {"[consumer-group g]\ntopics = t\npoll.interval = const:1e30s\n", "at most 100000h"},
        {"[producer p]\nworkload.arrival = bursts\nworkload.burst = 1e15s,1s\n", "at most 100000h"},
        {"[topic t]\npartitions = 16777216\n", "above ZooKeeper's limit of 1048576 bytes"},
        {"[cluster]\ndisk.fsync.latency = 100000h\n[topic t]\n[fault slow]\nat = 1s\n"
         "action = disk-slow\ntarget = broker:1\nfactor = 1000\n",
         "[fault slow] factor: 1000 times the slowest disk.fsync.latency is above 100000h"},
        /* Found by fuzz_simulate: the producer keeps a 63-character id. */
        {"[topic t]\n[producer p]\ntransactional.id = "
         "reports::::::::::::::::::::::::::::::::::::::::::::::::::::::::-app\n",
         "[producer p] transactional.id: "},
        {"[topic t]\n[topic out]\n[consumer-group g]\ngroup.id = "
         "gggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggg\ntopics = t\n"
         "pipeline.output = out\nexactly.once = true\n",
         "exactly.once: the members' transactional ids"},
        /* Found by fuzz_simulate: brokers and requests keep a topic name,
         * consumers a client id, in 63 characters. */
        {"[topic tttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttt]\n",
         "the topic name has 64 characters; ksim's brokers keep at most 63"},
        {"[topic t]\n[consumer-group "
         "gggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggggg]\ntopics = t\n",
         "the members' client ids (consumer-NAME-K, 81 characters for the last)"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        gboolean has_topic = strstr(cases[i].lines, "[topic t]") != NULL;
        g_autofree char *text = g_strdup_printf("[scenario]\nduration = 2s\n%s%s",
                                                has_topic ? "" : "[topic t]\n", cases[i].lines);
        int status = -1;
        g_autofree char *out = plan_of(text, strlen(text), &status);
        if (status != 2 || strstr(out, cases[i].fragment) == NULL)
            fail_msg("case %u: status %d, '%s' lacks '%s'", i, status, out, cases[i].fragment);
    }
}

/* Arbitrary bytes (NUL, invalid UTF-8, nothing at all) give 2, never abort. */
static void
test_scenario_plan_any_bytes(void **state)
{
    (void)state;
    static const struct {
        const char *bytes;
        gsize length;
    } cases[] = {
        {"", 0},          {"\0", 1},           {"[scenario]\0duration = 1s\n", 25},
        {"\xff\xfe[", 3}, {"\xEF\xBB\xBF", 3}, {"[scenario", 9},
        {"=\n=\n", 4},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        int status = -1;
        g_autofree char *out = plan_of(cases[i].bytes, cases[i].length, &status);
        assert_int_equal(status, 2);
        assert_true(strlen(out) > 0);
    }
}

/* The fuzz dictionary names every key and every choice of the registry, so
 * the fuzzers reach each key (a new key must be added to it). */
static void
test_scenario_plan_fuzz_dictionary_covers_registry(void **state)
{
    (void)state;
    g_autofree char *path =
        g_build_filename(KSIM_SOURCE_DIR, "tests", "fuzz", "scenario.dict", NULL);
    g_autofree char *dict = NULL;
    assert_true(g_file_get_contents(path, &dict, NULL, NULL));
    guint n_keys = 0;
    const KConfigKey *keys = kconfig_registry(&n_keys);
    assert_true(n_keys > 100);
    for (guint i = 0; i < n_keys; i++) {
        g_autofree char *entry = g_strdup_printf("=\"%s\"\n", keys[i].name);
        if (strstr(dict, entry) == NULL)
            fail_msg("scenario.dict lacks the key %s", keys[i].name);
        for (guint c = 0; keys[i].choices != NULL && keys[i].choices[c].value != NULL; c++) {
            g_autofree char *choice = g_strdup_printf("=\"%s\"\n", keys[i].choices[c].value);
            if (strstr(dict, choice) == NULL)
                fail_msg("scenario.dict lacks %s's choice %s", keys[i].name,
                         keys[i].choices[c].value);
        }
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scenario_plan_lists_runs),
        cmocka_unit_test(test_scenario_plan_bom_and_crlf_read_the_same),
        cmocka_unit_test(test_scenario_plan_refuses_oversized_file),
        cmocka_unit_test(test_scenario_plan_echoes_long_key_truncated),
        cmocka_unit_test(test_scenario_plan_refuses_unrunnable_values),
        cmocka_unit_test(test_scenario_plan_any_bytes),
        cmocka_unit_test(test_scenario_plan_fuzz_dictionary_covers_registry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
