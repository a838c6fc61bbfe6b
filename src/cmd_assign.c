/*
 * `ksim assign --strategy NAME --topic T:PARTITIONS ... --member ID:T1,T2 ...
 * [--owned ID:T-P,T-P ...]`: the assignment a consumer group's leader
 * computes, one line per member sorted by member id: "ID T-P T-P ..." with the
 * partitions sorted by topic then number, or "ID" alone for a member that gets
 * nothing. `--owned` (sticky and cooperative-sticky) gives a member's
 * partitions from the previous generation; without it sticky starts from
 * nothing. cooperative-sticky leaves out of every line the partitions that
 * would pass from one member to another: their owners revoke them first, and
 * the next rebalance (run again with the new --owned) gives them out.
 *
 * Topic names follow Kafka's rules (letters, digits, '.', '_', '-', at most
 * 249 characters, not "." or ".."), which also keeps ':' and ',' free as
 * separators. A member id is split from its list at the last ':'.
 */
#include "commands.h"

#include "assignor.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>

#define TOPIC_NAME_MAX 249

typedef struct {
    char *strategy;
    GStrv topics;
    GStrv members;
    GStrv owned;
    GStrv rest;
    gboolean help;
} AssignOptions;

static void
assign_options_clear(AssignOptions *options)
{
    g_free(options->strategy);
    g_strfreev(options->topics);
    g_strfreev(options->members);
    g_strfreev(options->owned);
    g_strfreev(options->rest);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(AssignOptions, assign_options_clear)

/* Kafka's topic name rule (org.apache.kafka.common.internals.Topic). */
static gboolean
assign_topic_name_valid(const char *name)
{
    gsize len = strlen(name);
    if (len == 0 || len > TOPIC_NAME_MAX || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return FALSE;
    for (gsize i = 0; i < len; i++) {
        char c = name[i];
        if (!g_ascii_isalnum(c) && c != '.' && c != '_' && c != '-')
            return FALSE;
    }
    return TRUE;
}

static gboolean
assign_check_topic_name(const char *option, const char *spec, const char *name, GString *err)
{
    if (assign_topic_name_valid(name))
        return TRUE;
    g_string_append_printf(err,
                           "ksim assign: %s '%s': '%s' is not a valid topic name (letters, digits, "
                           "'.', '_' and '-', at most %d characters)\n",
                           option, spec, name, TOPIC_NAME_MAX);
    return FALSE;
}

/* A member id is printed as the first word of its line, so it must be
 * non-empty UTF-8 without spaces or control characters. */
static gboolean
assign_check_member_id(const char *option, const char *spec, const char *id, GString *err)
{
    gboolean valid = id[0] != '\0' && g_utf8_validate(id, -1, NULL);
    for (const char *p = id; valid && *p != '\0'; p = g_utf8_next_char(p)) {
        gunichar c = g_utf8_get_char(p);
        if (g_unichar_isspace(c) || g_unichar_iscntrl(c))
            valid = FALSE;
    }
    if (!valid)
        g_string_append_printf(err,
                               "ksim assign: %s '%s': the member id must be non-empty, without "
                               "spaces\n",
                               option, spec);
    return valid;
}

/* Splits "LEFT:RIGHT" at the last ':'. */
static gboolean
assign_split_colon(const char *option, const char *spec, const char *expected, char **left,
                   const char **right, GString *err)
{
    const char *colon = strrchr(spec, ':');
    if (colon == NULL) {
        g_string_append_printf(err, "ksim assign: %s '%s' is malformed: expected %s\n", option,
                               spec, expected);
        return FALSE;
    }
    *left = g_strndup(spec, (gsize)(colon - spec));
    *right = colon + 1;
    return TRUE;
}

static gboolean
assign_parse_number(const char *option, const char *spec, const char *text, guint64 max,
                    guint64 *out, GString *err)
{
    if (g_ascii_string_to_unsigned(text, 10, 0, max, out, NULL))
        return TRUE;
    g_string_append_printf(
        err,
        "ksim assign: %s '%s': '%s' is not a partition number from 0 to %" G_GUINT64_FORMAT "\n",
        option, spec, text, max);
    return FALSE;
}

/* --topic T:PARTITIONS */
static gboolean
assign_add_topic(AssignorInput *input, const char *spec, guint64 *total, GString *err)
{
    g_autofree char *name = NULL;
    const char *count_text = NULL;
    if (!assign_split_colon("--topic", spec, "TOPIC:PARTITIONS", &name, &count_text, err))
        return FALSE;
    if (!assign_check_topic_name("--topic", spec, name, err))
        return FALSE;
    guint64 count = 0;
    if (!g_ascii_string_to_unsigned(count_text, 10, 0, ASSIGNOR_PARTITIONS_MAX, &count, NULL)) {
        g_string_append_printf(err,
                               "ksim assign: --topic '%s': '%s' is not a partition count from 0 "
                               "to %u\n",
                               spec, count_text, ASSIGNOR_PARTITIONS_MAX);
        return FALSE;
    }
    *total += count;
    if (*total > ASSIGNOR_PARTITIONS_MAX) {
        g_string_append_printf(err, "ksim assign: more than %u partitions in all\n",
                               ASSIGNOR_PARTITIONS_MAX);
        return FALSE;
    }
    if (!assignor_input_add_topic(input, name, (guint32)count)) {
        g_string_append_printf(err, "ksim assign: topic '%s' is given twice\n", name);
        return FALSE;
    }
    return TRUE;
}

/* --member ID:T1,T2 */
static gboolean
assign_add_member(AssignorInput *input, const char *spec, GString *err)
{
    g_autofree char *id = NULL;
    const char *list = NULL;
    if (!assign_split_colon("--member", spec, "ID:TOPIC[,TOPIC...]", &id, &list, err))
        return FALSE;
    if (!assign_check_member_id("--member", spec, id, err))
        return FALSE;
    if (list[0] == '\0') {
        g_string_append_printf(err, "ksim assign: --member '%s' subscribes to no topic\n", spec);
        return FALSE;
    }
    g_auto(GStrv) topics = g_strsplit(list, ",", -1);
    g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint i = 0; topics[i] != NULL; i++) {
        if (!assign_check_topic_name("--member", spec, topics[i], err))
            return FALSE;
        if (!g_hash_table_add(seen, topics[i])) {
            g_string_append_printf(err, "ksim assign: --member '%s' lists topic '%s' twice\n", spec,
                                   topics[i]);
            return FALSE;
        }
    }
    if (!assignor_input_add_member(input, id, (const char *const *)topics, g_strv_length(topics),
                                   ASSIGNOR_GENERATION_NONE)) {
        g_string_append_printf(err, "ksim assign: member '%s' is given twice\n", id);
        return FALSE;
    }
    return TRUE;
}

/* --owned ID:T-P,T-P */
static gboolean
assign_add_owned(AssignorInput *input, const char *spec, GString *err)
{
    g_autofree char *id = NULL;
    const char *list = NULL;
    if (!assign_split_colon("--owned", spec, "ID:TOPIC-PARTITION[,TOPIC-PARTITION...]", &id, &list,
                            err))
        return FALSE;
    if (!assignor_input_has_member(input, id)) {
        g_string_append_printf(err, "ksim assign: --owned '%s': there is no --member '%s'\n", spec,
                               id);
        return FALSE;
    }
    g_auto(GStrv) items = g_strsplit(list, ",", -1);
    for (guint i = 0; items[i] != NULL; i++) {
        const char *dash = strrchr(items[i], '-');
        if (dash == NULL || dash == items[i]) {
            g_string_append_printf(err, "ksim assign: --owned '%s': '%s' is not TOPIC-PARTITION\n",
                                   spec, items[i]);
            return FALSE;
        }
        g_autofree char *topic = g_strndup(items[i], (gsize)(dash - items[i]));
        guint64 partition = 0;
        if (!assign_check_topic_name("--owned", spec, topic, err) ||
            !assign_parse_number("--owned", spec, dash + 1, G_MAXINT32, &partition, err))
            return FALSE;
        if (!assignor_input_add_owned(input, id, topic, (guint32)partition)) {
            g_string_append_printf(err, "ksim assign: --owned '%s' lists '%s' twice\n", spec,
                                   items[i]);
            return FALSE;
        }
    }
    return TRUE;
}

static gboolean
assign_parse_options(int argc, char **argv, AssignOptions *options, GString *out, GString *err)
{
    /* Member specs are taken as raw bytes (FILENAME), not converted from the
     * locale's charset; assign_check_member_id insists on UTF-8. */
    GOptionEntry entries[] = {
        {"strategy", 's', 0, G_OPTION_ARG_STRING, &options->strategy,
         "Assignment strategy: range (the default), roundrobin, sticky or cooperative-sticky",
         "NAME"},
        {"topic", 't', 0, G_OPTION_ARG_STRING_ARRAY, &options->topics,
         "A topic and its partition count (repeatable)", "TOPIC:PARTITIONS"},
        {"member", 'm', 0, G_OPTION_ARG_FILENAME_ARRAY, &options->members,
         "A member and the topics it subscribes to (repeatable)", "ID:TOPIC[,TOPIC...]"},
        {"owned", 'o', 0, G_OPTION_ARG_FILENAME_ARRAY, &options->owned,
         "Sticky strategies: partitions a member owned before (repeatable)",
         "ID:TOPIC-PARTITION[,...]"},
        {"help", 'h', 0, G_OPTION_ARG_NONE, &options->help, "Show this help", NULL},
        {G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &options->rest, NULL, NULL},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    g_autoptr(GOptionContext) context = g_option_context_new("- a consumer group assignment");
    g_option_context_set_summary(context,
                                 "Prints the partitions each member of a consumer group gets, one "
                                 "line per member\nsorted by id: ID TOPIC-PARTITION ...");
    /* GLib's own --help would exit the process; this command returns instead. */
    g_option_context_set_help_enabled(context, FALSE);
    g_option_context_add_main_entries(context, entries, NULL);
    g_auto(GStrv) args = g_new0(char *, argc + 1);
    for (int i = 0; i < argc; i++)
        args[i] = g_strdup(argv[i]);
    g_autoptr(GError) error = NULL;
    if (!g_option_context_parse_strv(context, &args, &error)) {
        g_string_append_printf(err, "ksim assign: %s\n", error->message);
        return FALSE;
    }
    if (options->help) {
        g_autofree char *text = g_option_context_get_help(context, TRUE, NULL);
        g_string_append(out, text);
        return TRUE;
    }
    if (options->rest != NULL && options->rest[0] != NULL) {
        g_string_append_printf(err, "ksim assign: unexpected argument '%s'\n", options->rest[0]);
        return FALSE;
    }
    return TRUE;
}

/* Builds the input from the options; members before owned partitions, so
 * --owned may come before the --member it refers to. */
static gboolean
assign_build_input(const AssignOptions *options, AssignorInput *input, GString *err)
{
    guint64 total = 0;
    for (guint i = 0; options->topics != NULL && options->topics[i] != NULL; i++) {
        if (!assign_add_topic(input, options->topics[i], &total, err))
            return FALSE;
    }
    for (guint i = 0; options->members != NULL && options->members[i] != NULL; i++) {
        if (!assign_add_member(input, options->members[i], err))
            return FALSE;
    }
    if (assignor_input_member_count(input) == 0) {
        g_string_append(err, "ksim assign: give at least one --member ID:TOPIC[,TOPIC...]\n");
        return FALSE;
    }
    for (guint i = 0; options->owned != NULL && options->owned[i] != NULL; i++) {
        if (!assign_add_owned(input, options->owned[i], err))
            return FALSE;
    }
    return TRUE;
}

/* The sub-command's work, writing its output and messages into strings so
 * tests can run it in-process. Returns the exit status. */
static int
assign_run(int argc, char **argv, GString *out, GString *err)
{
    g_auto(AssignOptions) options = {0};
    if (!assign_parse_options(argc, argv, &options, out, err))
        return 2;
    if (options.help)
        return 0;
    AssignorStrategy strategy = ASSIGNOR_RANGE;
    if (options.strategy != NULL && !assignor_strategy_parse(options.strategy, &strategy)) {
        g_string_append_printf(err,
                               "ksim assign: unknown strategy '%s' (choose range, roundrobin, "
                               "sticky or cooperative-sticky)\n",
                               options.strategy);
        return 2;
    }
    if (options.owned != NULL && strategy != ASSIGNOR_STICKY &&
        strategy != ASSIGNOR_COOPERATIVE_STICKY) {
        g_string_append_printf(err,
                               "ksim assign: --owned applies to the sticky strategies only, "
                               "not %s\n",
                               assignor_strategy_name(strategy));
        return 2;
    }
    g_autoptr(AssignorInput) input = assignor_input_new();
    if (!assign_build_input(&options, input, err))
        return 2;
    g_autoptr(AssignorResult) result = assignor_assign(input, strategy);
    assignor_result_check_invariants(result, input);
    if (assignor_strategy_cooperative(strategy))
        assignor_result_check_cooperative(result, input);
    assignor_result_format(result, out);
    return 0;
}

int
cmd_assign(int argc, char **argv)
{
    g_autoptr(GString) out = g_string_new(NULL);
    g_autoptr(GString) err = g_string_new(NULL);
    int status = assign_run(argc, argv, out, err);
    fputs(out->str, stdout);
    fputs(err->str, stderr);
    if (status == 2)
        fputs("Run 'ksim assign --help' for usage.\n", stderr);
    return status;
}
