/* Tests of reports/outfile: atomic report files and the CSV writer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
