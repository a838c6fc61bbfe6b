/*
 * fuzz_replay_main: runs a fuzz target over files, without a fuzzer, for the
 * normal build. Each argument is a file or a directory (its files, sorted by
 * name, not recursing); every file is one input. Prints how many inputs ran
 * and exits 0; an input that breaks the target aborts the process, which
 * ctest reports as a failure. Exit 2 when an argument cannot be read.
 */
#include "fuzz_target.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>

/* Inputs larger than this are cut, as the fuzzers' -max_len does. */
#define REPLAY_INPUT_BYTES_MAX (8u << 20)

static gboolean
replay_file(const char *path, guint *count)
{
    g_autofree char *bytes = NULL;
    gsize length = 0;
    g_autoptr(GError) error = NULL;
    if (!g_file_get_contents(path, &bytes, &length, &error)) {
        fprintf(stderr, "fuzz replay: %s\n", error->message);
        return FALSE;
    }
    LLVMFuzzerTestOneInput((const uint8_t *)bytes, MIN(length, REPLAY_INPUT_BYTES_MAX));
    (*count)++;
    return TRUE;
}

static gint
compare_names(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static gboolean
replay_dir(const char *path, guint *count)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(GDir) dir = g_dir_open(path, 0, &error);
    if (dir == NULL) {
        fprintf(stderr, "fuzz replay: %s\n", error->message);
        return FALSE;
    }
    g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
    for (const char *name; (name = g_dir_read_name(dir)) != NULL;) {
        if (name[0] != '.' && strcmp(name, "README.md") != 0)
            g_ptr_array_add(names, g_build_filename(path, name, NULL));
    }
    g_ptr_array_sort(names, compare_names);
    for (guint i = 0; i < names->len; i++) {
        const char *file = g_ptr_array_index(names, i);
        if (g_file_test(file, G_FILE_TEST_IS_REGULAR) && !replay_file(file, count))
            return FALSE;
    }
    return TRUE;
}

int
main(int argc, char **argv)
{
    guint count = 0;
    for (int i = 1; i < argc; i++) {
        gboolean ok = g_file_test(argv[i], G_FILE_TEST_IS_DIR) ? replay_dir(argv[i], &count)
                                                               : replay_file(argv[i], &count);
        if (!ok)
            return 2;
    }
    printf("fuzz replay: %u inputs ran, none failed\n", count);
    return 0;
}
