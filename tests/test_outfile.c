/* Tests of reports/outfile: atomic report files, atomic report directories,
 * safe names and the CSV writer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "outfile.h"

/* Removes a flat temporary directory and everything in it. */
static void
remove_tree(const char *directory)
{
    g_autoptr(GDir) dir = g_dir_open(directory, 0, NULL);
    const char *name;
    while (dir != NULL && (name = g_dir_read_name(dir)) != NULL) {
        g_autofree char *path = g_build_filename(directory, name, NULL);
        if (g_file_test(path, G_FILE_TEST_IS_DIR))
            remove_tree(path);
        else
            g_unlink(path);
    }
    g_rmdir(directory);
}

static int
setup_tmpdir(void **state)
{
    *state = g_dir_make_tmp("ksim-test-outfile-XXXXXX", NULL);
    return *state == NULL ? -1 : 0;
}

static int
teardown_tmpdir(void **state)
{
    remove_tree(*state);
    g_free(*state);
    return 0;
}

static guint
count_entries(const char *directory)
{
    g_autoptr(GDir) dir = g_dir_open(directory, 0, NULL);
    assert_non_null(dir);
    guint entries = 0;
    while (g_dir_read_name(dir) != NULL)
        entries++;
    return entries;
}

static char *
read_text(const char *path)
{
    char *contents = NULL;
    assert_true(g_file_get_contents(path, &contents, NULL, NULL));
    return contents;
}

static void
test_outfile_appears_only_after_commit(void **state)
{
    /* Goal: the path does not exist until commit; the temp file is beside it. */
    const char *directory = *state;
    g_autofree char *path = g_build_filename(directory, "summary.json", NULL);
    g_autofree char *tmp_path = g_strdup_printf("%s.tmp.%d", path, (int)getpid());
    g_autoptr(GError) error = NULL;
    OutFile *file = outfile_open(path, &error);
    assert_non_null(file);
    assert_string_equal(outfile_path(file), path);
    fputs("{\"seed\": 1}\n", outfile_stream(file));
    assert_false(g_file_test(path, G_FILE_TEST_EXISTS));
    assert_true(g_file_test(tmp_path, G_FILE_TEST_EXISTS));
    assert_true(outfile_commit(file, &error));
    assert_null(error);
    g_autofree char *contents = read_text(path);
    assert_string_equal(contents, "{\"seed\": 1}\n");
    assert_false(g_file_test(tmp_path, G_FILE_TEST_EXISTS));
    assert_int_equal(count_entries(directory), 1);
}

static void
test_outfile_replaces_existing_atomically(void **state)
{
    /* Goal: an existing report keeps its old contents until the commit. */
    const char *directory = *state;
    g_autofree char *path = g_build_filename(directory, "report.md", NULL);
    assert_true(outfile_write(path, "old\n", 4, NULL));
    OutFile *file = outfile_open(path, NULL);
    assert_non_null(file);
    fputs("new\n", outfile_stream(file));
    fflush(outfile_stream(file));
    g_autofree char *before = read_text(path);
    assert_string_equal(before, "old\n");
    assert_true(outfile_commit(file, NULL));
    g_autofree char *after = read_text(path);
    assert_string_equal(after, "new\n");
    assert_int_equal(count_entries(directory), 1);
}

static void
test_outfile_abort_leaves_nothing(void **state)
{
    /* Goal: abort, explicit or through g_autoptr, removes the temp file and
     * leaves an existing file as it was. */
    const char *directory = *state;
    g_autofree char *fresh = g_build_filename(directory, "fresh.csv", NULL);
    g_autofree char *existing = g_build_filename(directory, "existing.csv", NULL);
    OutFile *file = outfile_open(fresh, NULL);
    assert_non_null(file);
    fputs("half a report", outfile_stream(file));
    outfile_abort(file);
    assert_int_equal(count_entries(directory), 0);
    assert_true(outfile_write(existing, "kept", 4, NULL));
    {
        g_autoptr(OutFile) dropped = outfile_open(existing, NULL);
        assert_non_null(dropped);
        fputs("discarded", outfile_stream(dropped));
    }
    g_autofree char *contents = read_text(existing);
    assert_string_equal(contents, "kept");
    assert_int_equal(count_entries(directory), 1);
    outfile_abort(NULL);
}

static void
test_outfile_write_binary_and_empty(void **state)
{
    /* Goal: outfile_write stores exactly the bytes given, NULs and empty included. */
    const char *directory = *state;
    static const char data[] = {'a', '\0', 'b', '\n', '\xff'};
    g_autofree char *binary = g_build_filename(directory, "binary", NULL);
    g_autofree char *empty = g_build_filename(directory, "empty", NULL);
    assert_true(outfile_write(binary, data, sizeof data, NULL));
    assert_true(outfile_write(empty, NULL, 0, NULL));
    g_autofree char *contents = NULL;
    gsize len = 0;
    assert_true(g_file_get_contents(binary, &contents, &len, NULL));
    assert_int_equal(len, sizeof data);
    assert_memory_equal(contents, data, sizeof data);
    g_autofree char *nothing = NULL;
    assert_true(g_file_get_contents(empty, &nothing, &len, NULL));
    assert_int_equal(len, 0);
    assert_int_equal(count_entries(directory), 2);
}

static void
test_outfile_errors_name_the_path(void **state)
{
    /* Goal: failures to create or rename name the report path and the system's
     * reason, and leave no temporary file behind. */
    const char *directory = *state;
    g_autofree char *missing = g_build_filename(directory, "no-such-dir", "summary.json", NULL);
    g_autofree char *plain = g_build_filename(directory, "plain", NULL);
    g_autofree char *under_plain = g_build_filename(plain, "summary.json", NULL);
    g_autofree char *a_directory = g_build_filename(directory, "a-directory", NULL);
    assert_true(outfile_write(plain, "x", 1, NULL));
    assert_int_equal(g_mkdir(a_directory, 0755), 0);
    const struct {
        const char *path;
        int errno_expected;
    } cases[] = {{missing, ENOENT}, {under_plain, ENOTDIR}, {a_directory, EISDIR}};
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(GError) error = NULL;
        assert_false(outfile_write(cases[i].path, "data", 4, &error));
        assert_non_null(error);
        assert_true(g_error_matches(error, KSIM_REPORTS_ERROR, KSIM_REPORTS_ERROR_IO));
        assert_non_null(strstr(error->message, cases[i].path));
        assert_non_null(strstr(error->message, g_strerror(cases[i].errno_expected)));
    }
    assert_int_equal(count_entries(directory), 2);
}

static void
test_outfile_csv_quote(void **state)
{
    /* Goal: fields are quoted exactly when RFC 4180 needs it, quotes doubled. */
    (void)state;
    static const struct {
        const char *field;
        const char *expected;
    } cases[] = {
        {"", ""},
        {"acks=all", "acks=all"},
        {"a,b", "\"a,b\""},
        {"say \"hi\"", "\"say \"\"hi\"\"\""},
        {"\"", "\"\"\"\""},
        {"two\nlines", "\"two\nlines\""},
        {"cr\r", "\"cr\r\""},
        {" padded", "\" padded\""},
        {"trailing ", "\"trailing \""},
        {"in side", "in side"},
        {"µs", "µs"},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(GString) out = g_string_new("x");
        outfile_csv_quote(out, cases[i].field);
        assert_string_equal(out->str + 1, cases[i].expected);
    }
}

static void
test_outfile_csv_writes_rows(void **state)
{
    /* Goal: a CSV written through an OutFile has the header, then each row's
     * fields in order, numbers in the C locale, rows ending in "\n". */
    const char *directory = *state;
    g_autofree char *path = g_build_filename(directory, "runs.csv", NULL);
    OutFile *file = outfile_open(path, NULL);
    assert_non_null(file);
    static const char *const header[] = {"run", "acked", "p99_ms", NULL};
    g_autoptr(OutFileCsv) csv = outfile_csv_new(outfile_stream(file), header);
    outfile_csv_string(csv, "acks=all,min.insync.replicas=2");
    outfile_csv_int(csv, G_MININT64);
    outfile_csv_double(csv, 0.1);
    outfile_csv_end_row(csv);
    outfile_csv_string(csv, "acks=0");
    outfile_csv_int(csv, 42);
    outfile_csv_double(csv, NAN);
    outfile_csv_end_row(csv);
    outfile_csv_string(csv, "big");
    outfile_csv_int(csv, 0);
    outfile_csv_double(csv, 1.5e300);
    outfile_csv_end_row(csv);
    assert_int_equal(outfile_csv_rows(csv), 3);
    assert_true(outfile_commit(file, NULL));
    g_autofree char *contents = read_text(path);
    assert_string_equal(contents, "run,acked,p99_ms\n"
                                  "\"acks=all,min.insync.replicas=2\",-9223372036854775808,0.1\n"
                                  "acks=0,42,nan\n"
                                  "big,0,1.5e+300\n");
}

/* ---- report directories ---- */

static gint
compare_names(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in `directory` that start with `prefix`, sorted, comma-separated. */
static char *
names_with_prefix(const char *directory, const char *prefix)
{
    g_autoptr(GDir) dir = g_dir_open(directory, 0, NULL);
    assert_non_null(dir);
    g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
    const char *name;
    while ((name = g_dir_read_name(dir)) != NULL) {
        if (g_str_has_prefix(name, prefix))
            g_ptr_array_add(names, g_strdup(name));
    }
    g_ptr_array_sort(names, compare_names);
    g_ptr_array_add(names, NULL);
    return g_strjoinv(",", (char **)names->pdata);
}

static void
write_text(const char *directory, const char *name, const char *text)
{
    g_autofree char *path = g_build_filename(directory, name, NULL);
    assert_true(g_file_set_contents(path, text, -1, NULL));
}

static char *
read_in(const char *directory, const char *name)
{
    g_autofree char *path = g_build_filename(directory, name, NULL);
    return read_text(path);
}

static void
test_outfile_dir_replaces_as_a_whole(void **state)
{
    /* Goal: the old report stays whole until the commit, then the new one
     * replaces it entirely (no old file survives) and no temporary remains. */
    const char *directory = *state;
    g_autofree char *target = g_build_filename(directory, "report", NULL);
    assert_int_equal(g_mkdir(target, 0755), 0);
    write_text(target, "summary.json", "old");
    write_text(target, "run9-latency.csv", "old");
    g_autoptr(GError) error = NULL;
    OutDir *out = outfile_dir_open(target, "summary.json", &error);
    assert_non_null(out);
    assert_string_equal(outfile_dir_target(out), target);
    g_autofree char *tmp_name = g_path_get_basename(outfile_dir_path(out));
    g_autofree char *tmp_prefix = g_strdup_printf(".report.tmp-%d-", (int)getpid());
    assert_true(g_str_has_prefix(tmp_name, tmp_prefix));
    assert_true(outfile_dir_write(out, "summary.json", "new", 3, &error));
    g_autoptr(OutFile) trace = outfile_dir_file_open(out, "trace-1.jsonl", &error);
    assert_non_null(trace);
    fputs("{}\n", outfile_stream(trace));
    assert_true(outfile_commit(g_steal_pointer(&trace), &error));
    outfile_dir_check_invariants(out);
    g_autofree char *before = read_in(target, "summary.json");
    assert_string_equal(before, "old");
    assert_true(outfile_dir_commit(out, &error));
    assert_null(error);
    g_autofree char *after = read_in(target, "summary.json");
    assert_string_equal(after, "new");
    assert_int_equal(count_entries(target), 2);
    assert_int_equal(count_entries(directory), 1);
}

static void
test_outfile_dir_abort_keeps_the_old_report(void **state)
{
    /* Goal: an aborted report (a failed write) removes its temporary
     * directory, files and all, and leaves the old report as it was; a new
     * directory is not created at all. */
    const char *directory = *state;
    g_autofree char *target = g_build_filename(directory, "report", NULL);
    g_autofree char *fresh = g_build_filename(directory, "fresh", NULL);
    assert_int_equal(g_mkdir(target, 0755), 0);
    write_text(target, "summary.json", "old");
    OutDir *out = outfile_dir_open(target, "summary.json", NULL);
    assert_non_null(out);
    assert_true(outfile_dir_write(out, "summary.json", "new", 3, NULL));
    outfile_dir_abort(out);
    {
        g_autoptr(OutDir) dropped = outfile_dir_open(fresh, "summary.json", NULL);
        assert_non_null(dropped);
        assert_true(outfile_dir_write(dropped, "report.md", "half", 4, NULL));
    }
    outfile_dir_abort(NULL);
    g_autofree char *kept = read_in(target, "summary.json");
    assert_string_equal(kept, "old");
    assert_int_equal(count_entries(target), 1);
    assert_int_equal(count_entries(directory), 1);
}

static void
test_outfile_dir_cleans_what_killed_runs_left(void **state)
{
    /* Goal: opening a report directory removes the temporaries of dead
     * processes, puts back an old report a crash had moved aside, and leaves
     * a live process's temporary and other reports' temporaries alone. */
    const char *directory = *state;
    g_autofree char *target = g_build_filename(directory, "report", NULL);
    g_autofree char *dead_tmp = g_build_filename(directory, ".report.tmp-999999999-AAAAAA", NULL);
    g_autofree char *dead_old = g_build_filename(directory, ".report.old-999999999-AAAAAA", NULL);
    g_autofree char *live_name = g_strdup_printf(".report.tmp-%d-BBBBBB", (int)getppid());
    g_autofree char *live_tmp = g_build_filename(directory, live_name, NULL);
    g_autofree char *other = g_build_filename(directory, ".other.tmp-999999999-CCCCCC", NULL);
    const char *const made[] = {dead_tmp, dead_old, live_tmp, other};
    for (gsize i = 0; i < G_N_ELEMENTS(made); i++)
        assert_int_equal(g_mkdir(made[i], 0755), 0);
    write_text(dead_tmp, "summary.json", "half new");
    write_text(dead_old, "summary.json", "whole old");
    OutDir *out = outfile_dir_open(target, "summary.json", NULL);
    assert_non_null(out);
    g_autofree char *restored = read_in(target, "summary.json");
    assert_string_equal(restored, "whole old");
    g_autofree char *own = g_path_get_basename(outfile_dir_path(out));
    gboolean own_first = strcmp(own, live_name) < 0;
    g_autofree char *expected =
        g_strdup_printf("%s,%s", own_first ? own : live_name, own_first ? live_name : own);
    g_autofree char *left = names_with_prefix(directory, ".report.");
    assert_string_equal(left, expected);
    assert_true(g_file_test(other, G_FILE_TEST_IS_DIR));
    outfile_dir_abort(out);
}

static void
test_outfile_dir_refuses_what_it_must_not_replace(void **state)
{
    /* Goal: a plain file, a directory of other files, a symbolic link and
     * "." are refused with a message naming the path, and nothing is
     * created beside them. */
    const char *directory = *state;
    g_autofree char *file = g_build_filename(directory, "file", NULL);
    g_autofree char *home = g_build_filename(directory, "home", NULL);
    g_autofree char *link = g_build_filename(directory, "link", NULL);
    g_autofree char *dot = g_build_filename(directory, "home", ".", NULL);
    write_text(directory, "file", "x");
    assert_int_equal(g_mkdir(home, 0755), 0);
    write_text(home, "notes.txt", "mine");
    assert_int_equal(symlink(home, link), 0);
    const struct {
        const char *path;
        const char *why;
    } cases[] = {
        {file, "not a directory"},
        {home, "no summary.json"},
        {link, "symbolic link"},
        {dot, "not '.'"},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(GError) error = NULL;
        OutDir *out = outfile_dir_open(cases[i].path, "summary.json", &error);
        assert_null(out);
        assert_true(g_error_matches(error, KSIM_REPORTS_ERROR, KSIM_REPORTS_ERROR_IO));
        assert_non_null(strstr(error->message, cases[i].path));
        assert_non_null(strstr(error->message, cases[i].why));
    }
    assert_int_equal(count_entries(directory), 3);
    assert_int_equal(count_entries(home), 1);
    g_unlink(link); /* the fixture's removal would follow it */
}

static void
test_outfile_dir_disk_full(void **state)
{
    /* Goal: with the test hook making the second file's writes fail as on a
     * full disk, that write fails with the system's own text for ENOSPC and
     * the report's path (not the temporary's), and the first file is fine. */
    const char *directory = *state;
    g_autofree char *target = g_build_filename(directory, "report", NULL);
    g_autofree char *second = g_build_filename(target, "report.md", NULL);
    g_setenv(OUTFILE_FAULT_ENV, "enospc:2", TRUE);
    g_autoptr(OutDir) out = outfile_dir_open(target, "summary.json", NULL);
    g_unsetenv(OUTFILE_FAULT_ENV);
    assert_non_null(out);
    assert_true(outfile_dir_write(out, "outcomes.csv", "a,b\n", 4, NULL));
    g_autoptr(GError) error = NULL;
    assert_false(outfile_dir_write(out, "report.md", "# report\n", 9, &error));
    assert_non_null(error);
    assert_non_null(strstr(error->message, second));
    assert_non_null(strstr(error->message, g_strerror(ENOSPC)));
    assert_true(outfile_dir_write(out, "summary.json", "{}", 2, NULL));
}

static void
test_outfile_name_check(void **state)
{
    /* Goal: only names that are one safe path component pass. */
    (void)state;
    g_autofree char *longest = g_strnfill(OUTFILE_NAME_MAX, 'a');
    g_autofree char *too_long = g_strnfill(OUTFILE_NAME_MAX + 1, 'a');
    const struct {
        const char *name;
        gboolean safe;
    } cases[] = {
        {"acks-durability", TRUE},
        {"say \"hi\" ok", TRUE},
        {"débit 2", TRUE},
        {"v1.2", TRUE},
        {longest, TRUE},
        {"", FALSE},
        {".", FALSE},
        {"..", FALSE},
        {"../../x", FALSE},
        {".hidden", FALSE},
        {"a/b", FALSE},
        {"a\\b", FALSE},
        {"tab\there", FALSE},
        {"line\nbreak", FALSE},
        {"del\x7f", FALSE},
        {"\xff\xfe", FALSE},
        {too_long, FALSE},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(GError) error = NULL;
        gboolean safe = outfile_name_check(cases[i].name, &error);
        if (safe != cases[i].safe)
            fail_msg("outfile_name_check(\"%s\") = %d", cases[i].name, safe);
        if (!safe)
            assert_true(g_error_matches(error, KSIM_REPORTS_ERROR, KSIM_REPORTS_ERROR_NAME));
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_outfile_appears_only_after_commit, setup_tmpdir,
                                        teardown_tmpdir),
        cmocka_unit_test_setup_teardown(test_outfile_replaces_existing_atomically, setup_tmpdir,
                                        teardown_tmpdir),
        cmocka_unit_test_setup_teardown(test_outfile_abort_leaves_nothing, setup_tmpdir,
                                        teardown_tmpdir),
        cmocka_unit_test_setup_teardown(test_outfile_write_binary_and_empty, setup_tmpdir,
                                        teardown_tmpdir),
        cmocka_unit_test_setup_teardown(test_outfile_errors_name_the_path, setup_tmpdir,
                                        teardown_tmpdir),
        cmocka_unit_test(test_outfile_csv_quote),
        cmocka_unit_test_setup_teardown(test_outfile_csv_writes_rows, setup_tmpdir,
                                        teardown_tmpdir),
        cmocka_unit_test_setup_teardown(test_outfile_dir_replaces_as_a_whole, setup_tmpdir,
                                        teardown_tmpdir),
        cmocka_unit_test_setup_teardown(test_outfile_dir_abort_keeps_the_old_report, setup_tmpdir,
                                        teardown_tmpdir),
        cmocka_unit_test_setup_teardown(test_outfile_dir_cleans_what_killed_runs_left, setup_tmpdir,
                                        teardown_tmpdir),
        cmocka_unit_test_setup_teardown(test_outfile_dir_refuses_what_it_must_not_replace,
                                        setup_tmpdir, teardown_tmpdir),
        cmocka_unit_test_setup_teardown(test_outfile_dir_disk_full, setup_tmpdir, teardown_tmpdir),
        cmocka_unit_test(test_outfile_name_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
