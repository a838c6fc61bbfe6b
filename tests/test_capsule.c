/*
 * capsule: the replay capsule's JSON round-trips every field, and a file
 * that is not a whole capsule of this format is refused with a message
 * naming it and what is wrong, never a crash.
 */
#include "capsule.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <glib/gstdio.h>

#define TEXT "[scenario]\nname = tiny\nduration = 1s\n"

static Capsule *
sample(void)
{
    Capsule *capsule = capsule_new("0.1.0", "0123456789ab");
    capsule->command = g_strdup("ksim run 'tiny.ini' --seed 7");
    capsule->scenario_name = g_strdup("tiny");
    capsule->scenario_path = g_strdup("tiny.ini");
    capsule->scenario_text = g_strdup(TEXT);
    capsule->scenario_sha256 = g_compute_checksum_for_string(G_CHECKSUM_SHA256, TEXT, -1);
    capsule->seed = G_MAXINT64;
    g_ptr_array_add(capsule->sets, g_strdup("acks=1"));
    g_ptr_array_add(capsule->sets, g_strdup("topic orders:partitions=2"));
    CapsuleRun *run = capsule_add_run(capsule, "acks=1", "00ff00ff00ff00ff");
    g_ptr_array_add(run->settings, g_strdup("acks=1"));
    g_ptr_array_add(run->failed, g_strdup("safe: lost_write == 0, but lost_write = 2"));
    capsule_add_run(capsule, "acks=all", "0123456789abcdef");
    return capsule;
}

/* Every field written comes back as it was. */
static void
test_capsule_round_trip(void **state)
{
    (void)state;
    g_autoptr(Capsule) capsule = sample();
    g_autofree char *json = capsule_to_json(capsule);
    GError *error = NULL;
    g_autoptr(Capsule) back = capsule_from_json(json, strlen(json), "c.json", &error);
    assert_null(error);
    assert_non_null(back);
    assert_string_equal(back->ksim_version, "0.1.0");
    assert_string_equal(back->git_commit, "0123456789ab");
    assert_string_equal(back->command, capsule->command);
    assert_string_equal(back->scenario_text, TEXT);
    assert_string_equal(back->scenario_path, "tiny.ini");
    assert_true(back->seed == (guint64)G_MAXINT64);
    assert_int_equal(back->sets->len, 2);
    assert_string_equal(g_ptr_array_index(back->sets, 1), "topic orders:partitions=2");
    assert_int_equal(back->runs->len, 2);
    const CapsuleRun *run = g_ptr_array_index(back->runs, 0);
    assert_string_equal(run->label, "acks=1");
    assert_string_equal(run->fingerprint, "00ff00ff00ff00ff");
    assert_string_equal(g_ptr_array_index(run->settings, 0), "acks=1");
    assert_string_equal(g_ptr_array_index(run->failed, 0),
                        "safe: lost_write == 0, but lost_write = 2");
    g_autofree char *again = capsule_to_json(back);
    assert_string_equal(again, json);
}

/* Replaces the first `from` in the sample's JSON with `to`. */
static char *
edited(const char *from, const char *to)
{
    g_autoptr(Capsule) capsule = sample();
    g_autofree char *json = capsule_to_json(capsule);
    char *at = strstr(json, from);
    assert_non_null(at);
    *at = '\0';
    return g_strconcat(json, to, at + strlen(from), NULL);
}

/* Each malformed capsule is refused with a message saying what is wrong. */
static void
test_capsule_refuses_bad_input(void **state)
{
    (void)state;
    static const struct {
        const char *from, *to, *message;
    } cases[] = {
        {"\"format\" : \"ksim-capsule\"", "\"format\" : \"other\"", "\"format\" is \"other\""},
        {"\"format_version\" : 1", "\"format_version\" : 9", "this ksim reads 1"},
        {"\"seed\" : 9223372036854775807", "\"seed\" : -1", "\"seed\""},
        {"\"seed\" : 9223372036854775807", "\"seed\" : \"7\"", "\"seed\""},
        {"00ff00ff00ff00ff", "xyz", "not 16 hexadecimal digits"},
        {"duration = 1s", "duration = 2s", "SHA-256"},
        {"\"label\" : \"acks=1\"", "\"label\" : 5", "\"label\" is not a string"},
        {"\"runs\" : [", "\"runs\" : 3, \"x\" : [", "\"runs\" is"},
        {"\"git_commit\"", "\"git_commitx\"", "no member \"git_commit\""},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *json = edited(cases[i].from, cases[i].to);
        GError *error = NULL;
        Capsule *capsule = capsule_from_json(json, strlen(json), "bad.json", &error);
        assert_null(capsule);
        assert_non_null(error);
        if (strstr(error->message, cases[i].message) == NULL ||
            strstr(error->message, "bad.json") == NULL)
            fail_msg("case %u: '%s'", i, error->message);
        g_error_free(error);
    }
    static const char *const texts[] = {"", "not json", "[1, 2]", "{}", "{\"format\": 3}"};
    for (guint i = 0; i < G_N_ELEMENTS(texts); i++) {
        GError *error = NULL;
        assert_null(capsule_from_json(texts[i], strlen(texts[i]), "bad.json", &error));
        assert_non_null(error);
        assert_non_null(strstr(error->message, "not a valid ksim capsule"));
        g_error_free(error);
    }
}

/* A file that is missing, binary or a directory is refused by capsule_load. */
static void
test_capsule_load_refuses_files(void **state)
{
    (void)state;
    GError *error = NULL;
    assert_null(capsule_load("/nonexistent/capsule.json", &error));
    assert_int_equal(error->code, KSIM_CAPSULE_ERROR_IO);
    g_clear_error(&error);
    assert_null(capsule_load("/", &error));
    assert_non_null(error);
    g_clear_error(&error);
    g_autofree char *path = NULL;
    int fd = g_file_open_tmp("capsule-XXXXXX.json", &path, NULL);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "{\"a\":\"\xff\"}", 10), 10);
    close(fd);
    assert_null(capsule_load(path, &error));
    assert_non_null(strstr(error->message, "not UTF-8"));
    g_clear_error(&error);
    g_autoptr(Capsule) capsule = sample();
    g_autofree char *json = capsule_to_json(capsule);
    assert_true(g_file_set_contents(path, json, -1, NULL));
    g_autoptr(Capsule) back = capsule_load(path, &error);
    assert_non_null(back);
    g_unlink(path);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capsule_round_trip),
        cmocka_unit_test(test_capsule_refuses_bad_input),
        cmocka_unit_test(test_capsule_load_refuses_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
