/*
 * The lint test (TigerBeetle's tidy.zig, run as a test): every .c and .h file
 * under sim/, models/ and src/harness/ must be free of what would break determinism or the
 * house style: wall clocks, sleeps, threads, unseeded randomness, bare
 * assert()/g_assert (which a release build may strip; KSIM_ASSERT stays on),
 * and GHashTable iteration (whose order is undefined).
 *
 * Comments and the contents of string and character literals are blanked out
 * before matching, so prose may mention time() freely. Identifiers are matched
 * whole, so runtime( or KSIM_ASSERT( are not mistaken for time( or assert(.
 * A line carrying the comment `tidy: allow <reason>` (in a block comment) is
 * exempt; use it only with a reason a reviewer would accept.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <glib.h>

#ifndef KSIM_SOURCE_DIR
#error "KSIM_SOURCE_DIR must name the source tree (tests/CMakeLists.txt defines it)"
#endif

/* ---- the banned list ---- */

typedef enum {
    MATCH_CALL,   /* the identifier, then optional blanks, then '(' */
    MATCH_NAME,   /* the identifier anywhere */
    MATCH_PREFIX, /* any identifier starting with the name */
} MatchKind;

typedef struct {
    const char *name;
    MatchKind kind;
    const char *why;
} Banned;

static const Banned BANNED[] = {
    {"time", MATCH_CALL, "wall clock"},
    {"clock", MATCH_CALL, "wall clock"},
    {"clock_gettime", MATCH_NAME, "wall clock"},
    {"gettimeofday", MATCH_NAME, "wall clock"},
    {"timespec_get", MATCH_NAME, "wall clock"},
    {"g_get_monotonic_time", MATCH_NAME, "wall clock"},
    {"g_get_real_time", MATCH_NAME, "wall clock"},
    {"g_get_current_time", MATCH_NAME, "wall clock"},
    {"g_date_time_new_now", MATCH_PREFIX, "wall clock"},
    {"g_timer_", MATCH_PREFIX, "wall clock"},
    {"sleep", MATCH_CALL, "sleep"},
    {"usleep", MATCH_NAME, "sleep"},
    {"nanosleep", MATCH_NAME, "sleep"},
    {"g_usleep", MATCH_NAME, "sleep"},
    {"pthread_", MATCH_PREFIX, "thread"},
    {"g_thread_", MATCH_PREFIX, "thread"},
    {"GThread", MATCH_PREFIX, "thread"},
    {"rand", MATCH_CALL, "unseeded randomness"},
    {"srand", MATCH_CALL, "unseeded randomness"},
    {"random", MATCH_CALL, "unseeded randomness"},
    {"srandom", MATCH_CALL, "unseeded randomness"},
    {"drand48", MATCH_NAME, "unseeded randomness"},
    {"lrand48", MATCH_NAME, "unseeded randomness"},
    {"mrand48", MATCH_NAME, "unseeded randomness"},
    {"getrandom", MATCH_NAME, "unseeded randomness"},
    {"g_random_", MATCH_PREFIX, "unseeded randomness"},
    /* g_rand_new() seeds from the clock; g_rand_new_with_seed_array is how
     * sim_rng.c seeds its streams, and is a different identifier. */
    {"g_rand_new", MATCH_CALL, "unseeded randomness"},
    {"assert", MATCH_CALL, "bare assert (use KSIM_ASSERT)"},
    {"g_assert", MATCH_PREFIX, "bare g_assert (use KSIM_ASSERT)"},
    {"g_hash_table_foreach", MATCH_PREFIX, "hash-table iteration"},
    {"g_hash_table_iter_", MATCH_PREFIX, "hash-table iteration"},
    {"g_hash_table_get_keys", MATCH_PREFIX, "hash-table iteration"},
    {"g_hash_table_get_values", MATCH_PREFIX, "hash-table iteration"},
};

/* ---- the matcher ---- */

/* A copy of `text` with comments and literal contents replaced by blanks;
 * newlines are kept, so line numbers stay right. (transfer full) */
static char *
tidy_blank_non_code(const char *text)
{
    enum { CODE, LINE_COMMENT, BLOCK_COMMENT, STRING, CHARACTER } mode = CODE;
    char *out = g_strdup(text);
    for (gsize i = 0; text[i] != '\0'; i++) {
        char c = text[i], next = text[i + 1];
        switch (mode) {
        case CODE:
            if (c == '/' && (next == '/' || next == '*')) {
                mode = next == '/' ? LINE_COMMENT : BLOCK_COMMENT;
                out[i] = out[i + 1] = ' ';
                i++;
            } else if (c == '"' || c == '\'') {
                mode = c == '"' ? STRING : CHARACTER;
            }
            break;
        case LINE_COMMENT:
            if (c == '\n')
                mode = CODE;
            else
                out[i] = ' ';
            break;
        case BLOCK_COMMENT:
            if (c == '*' && next == '/') {
                out[i] = out[i + 1] = ' ';
                i++;
                mode = CODE;
            } else if (c != '\n') {
                out[i] = ' ';
            }
            break;
        case STRING:
        case CHARACTER:
            /* An escape hides the next character, which may be the quote. */
            if (c == '\\' && next != '\0') {
                out[i] = ' ';
                out[i + 1] = next == '\n' ? '\n' : ' ';
                i++;
            } else if (c == (mode == STRING ? '"' : '\'') || c == '\n') {
                mode = CODE;
            } else {
                out[i] = ' ';
            }
            break;
        }
    }
    return out;
}

static gboolean
is_ident_char(char c)
{
    return g_ascii_isalnum(c) || c == '_';
}

/* TRUE when the identifier [start, end) of `line` is used as `banned` says. */
static gboolean
tidy_ident_matches(const char *line, gsize start, gsize end, const Banned *banned)
{
    gsize name_len = strlen(banned->name);
    if (strncmp(line + start, banned->name, name_len) != 0)
        return FALSE;
    if (banned->kind == MATCH_PREFIX)
        return end - start >= name_len;
    if (end - start != name_len)
        return FALSE;
    if (banned->kind == MATCH_NAME)
        return TRUE;
    /* A call: `name (` but not a member such as ops->time( or s.clock(. */
    gsize before = start;
    while (before > 0 && (line[before - 1] == ' ' || line[before - 1] == '\t'))
        before--;
    if (before > 0 && (line[before - 1] == '.' ||
                       (line[before - 1] == '>' && before > 1 && line[before - 2] == '-')))
        return FALSE;
    gsize after = end;
    while (line[after] == ' ' || line[after] == '\t')
        after++;
    return line[after] == '(';
}

/* The banned entry the code line uses first, or NULL. */
static const Banned *
tidy_scan_line(const char *code)
{
    for (gsize i = 0; code[i] != '\0';) {
        if (!is_ident_char(code[i]) || (i > 0 && is_ident_char(code[i - 1]))) {
            i++;
            continue;
        }
        gsize end = i;
        while (is_ident_char(code[end]))
            end++;
        for (gsize k = 0; k < G_N_ELEMENTS(BANNED) && !g_ascii_isdigit(code[i]); k++) {
            if (tidy_ident_matches(code, i, end, &BANNED[k]))
                return &BANNED[k];
        }
        i = end;
    }
    return NULL;
}

/* TRUE when the original line exempts itself with a reasoned allow comment. */
static gboolean
tidy_line_allowed(const char *line)
{
    const char *marker = strstr(line, "/* tidy: allow ");
    if (marker == NULL)
        return FALSE;
    const char *reason = marker + strlen("/* tidy: allow ");
    const char *close = strstr(reason, "*/");
    if (close == NULL)
        return FALSE;
    for (const char *c = reason; c < close; c++) {
        if (!g_ascii_isspace(*c))
            return TRUE;
    }
    return FALSE;
}

/* Appends "path:line: why `name`: text" for each offending line of `text`. */
static void
tidy_scan_text(const char *path, const char *text, GPtrArray *findings)
{
    g_autofree char *code = tidy_blank_non_code(text);
    g_auto(GStrv) code_lines = g_strsplit(code, "\n", -1);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (guint n = 0; code_lines[n] != NULL && lines[n] != NULL; n++) {
        const Banned *banned = tidy_scan_line(code_lines[n]);
        if (banned == NULL || tidy_line_allowed(lines[n]))
            continue;
        g_autofree char *shown = g_strstrip(g_strdup(lines[n]));
        g_ptr_array_add(findings, g_strdup_printf("%s:%u: %s `%s`: %s", path, n + 1, banned->why,
                                                  banned->name, shown));
    }
}

static int
compare_names(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

typedef void (*ScanFn)(const char *path, const char *text, gpointer user_data);

/* Runs `scan` on every .c and .h file under `dir` and its subfolders (the
 * floors of models/), in name order; returns the count. */
static guint
tidy_walk(const char *dir, ScanFn scan, gpointer user_data)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(GDir) handle = g_dir_open(dir, 0, &error);
    if (handle == NULL)
        fail_msg("cannot list %s: %s", dir, error->message);
    g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
    const char *name;
    while ((name = g_dir_read_name(handle)) != NULL)
        g_ptr_array_add(names, g_strdup(name));
    g_ptr_array_sort(names, compare_names);
    guint scanned = 0;
    for (guint i = 0; i < names->len; i++) {
        const char *entry = g_ptr_array_index(names, i);
        g_autofree char *path = g_build_filename(dir, entry, NULL);
        if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
            scanned += tidy_walk(path, scan, user_data);
            continue;
        }
        if (!g_str_has_suffix(entry, ".c") && !g_str_has_suffix(entry, ".h"))
            continue;
        g_autofree char *text = NULL;
        if (!g_file_get_contents(path, &text, NULL, &error))
            fail_msg("cannot read %s: %s", path, error->message);
        scan(path, text, user_data);
        scanned++;
    }
    return scanned;
}

static void
banned_scan_cb(const char *path, const char *text, gpointer user_data)
{
    tidy_scan_text(path, text, user_data);
}

static guint
tidy_scan_dir(const char *dir, GPtrArray *findings)
{
    return tidy_walk(dir, banned_scan_cb, findings);
}

/* A module's private header (NAME_internal.h) is included only by the files
 * of the folder that holds it: the parts of that module see each other's
 * state, nothing outside does. Flags every include of an _internal.h header
 * that is not a file of the includer's own folder. */
static void
internal_scan_text(const char *path, const char *text, gpointer user_data)
{
    GPtrArray *findings = user_data;
    g_autofree char *dir = g_path_get_dirname(path);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (guint i = 0; lines[i] != NULL; i++) {
        const char *line = g_strstrip(lines[i]);
        if (!g_str_has_prefix(line, "#include \"") || !g_str_has_suffix(line, "_internal.h\""))
            continue;
        g_autofree char *header = g_strndup(line + 10, strlen(line) - 11);
        g_autofree char *local = g_build_filename(dir, header, NULL);
        if (!g_file_test(local, G_FILE_TEST_EXISTS))
            g_ptr_array_add(findings, g_strdup_printf("%s:%u: includes %s from another folder",
                                                      path, i + 1, header));
    }
}

/* The header include graph: for every header of the tree, by file name (file
 * names are unique across the floors), the quoted headers it includes. */
static void
graph_scan_text(const char *path, const char *text, gpointer user_data)
{
    GHashTable *include_graph = user_data; /* name -> GPtrArray of names */
    if (!g_str_has_suffix(path, ".h"))
        return;
    GPtrArray *edges = g_ptr_array_new_with_free_func(g_free);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (guint i = 0; lines[i] != NULL; i++) {
        const char *line = g_strstrip(lines[i]);
        if (g_str_has_prefix(line, "#include \"") && g_str_has_suffix(line, "\""))
            g_ptr_array_add(edges, g_strndup(line + 10, strlen(line) - 11));
    }
    g_hash_table_insert(include_graph, g_path_get_basename(path), edges);
}

/* Depth-first search from `name`; `stack` holds the path. Adds one finding
 * per cycle found (a header reached again while still on the path). */
static void
graph_visit(GHashTable *include_graph, const char *name, GHashTable *done, GPtrArray *stack,
            GPtrArray *findings)
{
    for (guint i = 0; i < stack->len; i++) {
        if (strcmp(g_ptr_array_index(stack, i), name) != 0)
            continue;
        g_autoptr(GString) cycle = g_string_new(NULL);
        for (guint j = i; j < stack->len; j++)
            g_string_append_printf(cycle, "%s -> ", (char *)g_ptr_array_index(stack, j));
        g_string_append(cycle, name);
        g_ptr_array_add(findings, g_strdup_printf("include cycle: %s", cycle->str));
        return;
    }
    if (g_hash_table_contains(done, name))
        return;
    GPtrArray *edges = g_hash_table_lookup(include_graph, name);
    if (edges != NULL) {
        g_ptr_array_add(stack, (gpointer)name);
        for (guint i = 0; i < edges->len; i++)
            graph_visit(include_graph, g_ptr_array_index(edges, i), done, stack, findings);
        g_ptr_array_remove_index(stack, stack->len - 1);
    }
    g_hash_table_add(done, g_strdup(name));
}

/* ---- tests ---- */

static void
test_tidy_matcher_self_test(void **state)
{
    /* Goal: the matcher flags banned uses and nothing else: not comments,
     * strings, longer identifiers, members, KSIM_ASSERT or allowed lines. */
    (void)state;
    static const struct {
        const char *text;
        const char *flagged; /* the banned name expected, or NULL */
    } cases[] = {
        {"t = time(NULL);", "time"},
        {"t = time (NULL);", "time"},
        {"x = runtime(3);", NULL},
        {"x = sim_time(3);", NULL},
        {"x = ops->time(3);", NULL},
        {"x = s.clock();", NULL},
        {"gint64 time = 3;", NULL},
        {"#include <time.h>", NULL},
        {"c = clock();", "clock"},
        {"clock_gettime(CLOCK_MONOTONIC, &ts);", "clock_gettime"},
        {"gint64 t = g_get_monotonic_time();", "g_get_monotonic_time"},
        {"GDateTime *d = g_date_time_new_now_local();", "g_date_time_new_now"},
        {"usleep(10);", "usleep"},
        {"sleep(1);", "sleep"},
        {"g_usleep(1);", "g_usleep"},
        {"pthread_create(&t, NULL, f, NULL);", "pthread_"},
        {"GThread *t = NULL;", "GThread"},
        {"x = rand();", "rand"},
        {"srand(4);", "srand"},
        {"x = random();", "random"},
        {"x = g_random_int();", "g_random_"},
        {"GRand *r = g_rand_new();", "g_rand_new"},
        {"GRand *r = g_rand_new ();", "g_rand_new"},
        {"r = g_rand_new_with_seed_array(w, 4);", NULL},
        {"assert(x);", "assert"},
        {"g_assert(x);", "g_assert"},
        {"g_assert_cmpint(a, ==, b);", "g_assert"},
        {"KSIM_ASSERT(x);", NULL},
        {"KSIM_PARANOID_ASSERT(x);", NULL},
        {"G_STATIC_ASSERT(sizeof(int) == 4);", NULL},
        {"g_hash_table_foreach(t, f, NULL);", "g_hash_table_foreach"},
        {"g_hash_table_iter_init(&it, t);", "g_hash_table_iter_"},
        {"keys = g_hash_table_get_keys_as_array(t, &n);", "g_hash_table_get_keys"},
        {"v = g_hash_table_get_values(t);", "g_hash_table_get_values"},
        {"v = g_hash_table_lookup(t, k);", NULL},
        {"/* never call time() here */", NULL},
        {"x = 1; // time(NULL) would be wrong", NULL},
        {"/* a\n * time(NULL)\n */ x = 1;", NULL},
        {"msg = \"sleep(1) is banned\";", NULL},
        {"c = '\"'; sleep(1);", "sleep"},
        {"s = \"/* not a comment */\"; sleep(1);", "sleep"},
        {"s = \"a \\\" time(\"; x = 1;", NULL},
        {"t = time(NULL); /* tidy: allow a reason a reviewer accepts */", NULL},
        {"t = time(NULL); /* tidy: allow */", "time"},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(GPtrArray) findings = g_ptr_array_new_with_free_func(g_free);
        tidy_scan_text("case.c", cases[i].text, findings);
        if (cases[i].flagged == NULL) {
            if (findings->len != 0)
                fail_msg("flagged but fine: %s", (char *)g_ptr_array_index(findings, 0));
            continue;
        }
        if (findings->len != 1)
            fail_msg("'%s': %u findings, expected 1", cases[i].text, findings->len);
        g_autofree char *expected = g_strdup_printf("`%s`", cases[i].flagged);
        const char *finding = g_ptr_array_index(findings, 0);
        if (strstr(finding, expected) == NULL || !g_str_has_prefix(finding, "case.c:1: "))
            fail_msg("'%s': got \"%s\", expected %s", cases[i].text, finding, expected);
    }
}

static void
test_tidy_reports_file_and_line(void **state)
{
    /* Goal: a finding names the file and the line it is on. */
    (void)state;
    g_autoptr(GPtrArray) findings = g_ptr_array_new_with_free_func(g_free);
    tidy_scan_text("sim/x.c", "int a;\n/* time() */\nint b = rand();\n", findings);
    assert_int_equal(findings->len, 1);
    assert_string_equal(g_ptr_array_index(findings, 0),
                        "sim/x.c:3: unseeded randomness `rand`: int b = rand();");
}

static void
test_tidy_sim_and_models_are_clean(void **state)
{
    /* Goal: no file under sim/, models/ (every floor) or the harness that
     * builds a run's world uses anything on the banned list. */
    (void)state;
    g_autoptr(GPtrArray) findings = g_ptr_array_new_with_free_func(g_free);
    guint sim_files = tidy_scan_dir(KSIM_SOURCE_DIR "/sim", findings);
    guint model_files = tidy_scan_dir(KSIM_SOURCE_DIR "/models", findings);
    guint harness_files = tidy_scan_dir(KSIM_SOURCE_DIR "/src/harness", findings);
    /* The engine has a dozen files, the models over fifty in their floors,
     * the harness eight; fewer means a wrong path or a skipped folder. */
    assert_true(sim_files >= 10);
    assert_true(model_files >= 50);
    assert_true(harness_files >= 8);
    for (guint i = 0; i < findings->len; i++)
        print_error("%s\n", (char *)g_ptr_array_index(findings, i));
    if (findings->len > 0)
        fail_msg("%u banned uses in sim/, models/ or src/harness/ (see above)", findings->len);
}

static void
test_tidy_internal_headers_stay_in_their_folder(void **state)
{
    /* Goal: no file outside a module's folder includes its _internal.h. */
    (void)state;
    g_autoptr(GPtrArray) findings = g_ptr_array_new_with_free_func(g_free);
    /* The checker itself: an include from another folder is flagged. */
    internal_scan_text(KSIM_SOURCE_DIR "/models/client/x.c", "#include \"broker_internal.h\"\n",
                       findings);
    assert_int_equal(findings->len, 1);
    internal_scan_text(KSIM_SOURCE_DIR "/models/broker/x.c", "#include \"broker_internal.h\"\n",
                       findings);
    assert_int_equal(findings->len, 1);
    g_ptr_array_set_size(findings, 0);
    static const char *const dirs[] = {"/sim", "/models", "/reports", "/src", "/tests"};
    for (guint i = 0; i < G_N_ELEMENTS(dirs); i++) {
        g_autofree char *dir = g_strconcat(KSIM_SOURCE_DIR, dirs[i], NULL);
        tidy_walk(dir, internal_scan_text, findings);
    }
    for (guint i = 0; i < findings->len; i++)
        print_error("%s\n", (char *)g_ptr_array_index(findings, i));
    assert_int_equal(findings->len, 0);
}

static void
test_tidy_no_include_cycle(void **state)
{
    /* Goal: no header includes itself through others, anywhere in the tree. */
    (void)state;
    g_autoptr(GHashTable) include_graph = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                          (GDestroyNotify)g_ptr_array_unref);
    static const char *const dirs[] = {"/sim", "/models", "/reports", "/src", "/tests"};
    for (guint i = 0; i < G_N_ELEMENTS(dirs); i++) {
        g_autofree char *dir = g_strconcat(KSIM_SOURCE_DIR, dirs[i], NULL);
        tidy_walk(dir, graph_scan_text, include_graph);
    }
    assert_true(g_hash_table_size(include_graph) >= 60);
    /* Visit in name order so that a finding reads the same on every run. */
    g_autofree gpointer *names = g_hash_table_get_keys_as_array(include_graph, NULL);
    guint n_names = g_hash_table_size(include_graph);
    qsort(names, n_names, sizeof *names, compare_names);
    g_autoptr(GHashTable) done = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g_autoptr(GPtrArray) stack = g_ptr_array_new();
    g_autoptr(GPtrArray) findings = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < n_names; i++)
        graph_visit(include_graph, names[i], done, stack, findings);
    /* The search itself: a two-header cycle is found. */
    GPtrArray *a = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(a, g_strdup("tidy_cycle_b.h"));
    GPtrArray *b = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(b, g_strdup("tidy_cycle_a.h"));
    g_hash_table_insert(include_graph, g_strdup("tidy_cycle_a.h"), a);
    g_hash_table_insert(include_graph, g_strdup("tidy_cycle_b.h"), b);
    g_autoptr(GPtrArray) probe = g_ptr_array_new_with_free_func(g_free);
    graph_visit(include_graph, "tidy_cycle_a.h", done, stack, probe);
    assert_int_equal(probe->len, 1);
    for (guint i = 0; i < findings->len; i++)
        print_error("%s\n", (char *)g_ptr_array_index(findings, i));
    assert_int_equal(findings->len, 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tidy_matcher_self_test),
        cmocka_unit_test(test_tidy_reports_file_and_line),
        cmocka_unit_test(test_tidy_sim_and_models_are_clean),
        cmocka_unit_test(test_tidy_internal_headers_stay_in_their_folder),
        cmocka_unit_test(test_tidy_no_include_cycle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
