/*
 * `ksim partition --partitions N KEY...`: for each key, the partition Kafka's
 * default partitioner chooses for a record with that key, printed as
 * "KEY<TAB>PARTITION". A key is hashed as its UTF-8 bytes, which is what
 * Kafka's StringSerializer sends; `--` ends the options, so a key may start
 * with a dash.
 */
#include "commands.h"

#include "partitioner.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>

/* Parses the --partitions value: a decimal integer in [1, PARTITIONER_PARTITIONS_MAX]. */
static gboolean
partition_parse_count(const char *text, guint32 *out, GString *err)
{
    if (text == NULL) {
        g_string_append(err, "ksim partition: --partitions N is required\n");
        return FALSE;
    }
    guint64 value = 0;
    g_autoptr(GError) error = NULL;
    if (!g_ascii_string_to_unsigned(text, 10, 1, PARTITIONER_PARTITIONS_MAX, &value, &error)) {
        g_string_append_printf(err,
                               "ksim partition: --partitions '%s' is not a partition count "
                               "(a whole number from 1 to %u)\n",
                               text, PARTITIONER_PARTITIONS_MAX);
        return FALSE;
    }
    *out = (guint32)value;
    return TRUE;
}

/* The sub-command's work, writing its output and messages into strings so
 * tests can run it in-process. Returns the exit status. */
static int
partition_run(int argc, char **argv, GString *out, GString *err)
{
    g_autofree char *partitions_text = NULL;
    g_auto(GStrv) keys = NULL;
    gboolean help = FALSE;
    /* Keys are taken as raw bytes (FILENAME), not converted from the locale's
     * charset: they must be UTF-8 already, as a Java String's bytes are. */
    GOptionEntry entries[] = {
        {"partitions", 'p', 0, G_OPTION_ARG_STRING, &partitions_text,
         "Number of partitions of the topic", "N"},
        {"help", 'h', 0, G_OPTION_ARG_NONE, &help, "Show this help", NULL},
        {G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &keys, NULL, "KEY..."},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    g_autoptr(GOptionContext) context = g_option_context_new("- the partitions of keys");
    g_option_context_set_summary(context,
                                 "Prints, for each KEY, the partition Kafka's default partitioner "
                                 "chooses:\ntoPositive(murmur2(UTF-8 bytes of KEY)) % N, as "
                                 "KEY<TAB>PARTITION.");
    /* GLib's own --help would exit the process; this command returns instead. */
    g_option_context_set_help_enabled(context, FALSE);
    g_option_context_add_main_entries(context, entries, NULL);
    g_auto(GStrv) args = g_new0(char *, argc + 1);
    for (int i = 0; i < argc; i++)
        args[i] = g_strdup(argv[i]);
    g_autoptr(GError) error = NULL;
    if (!g_option_context_parse_strv(context, &args, &error)) {
        g_string_append_printf(err, "ksim partition: %s\n", error->message);
        return 2;
    }
    if (help) {
        g_autofree char *text = g_option_context_get_help(context, TRUE, NULL);
        g_string_append(out, text);
        return 0;
    }
    guint32 partitions = 0;
    if (!partition_parse_count(partitions_text, &partitions, err))
        return 2;
    guint n_keys = keys == NULL ? 0 : g_strv_length(keys);
    if (n_keys == 0) {
        g_string_append(err, "ksim partition: give at least one KEY\n");
        return 2;
    }
    for (guint i = 0; i < n_keys; i++) {
        if (!g_utf8_validate(keys[i], -1, NULL)) {
            g_string_append_printf(err, "ksim partition: key %u is not valid UTF-8\n", i + 1);
            return 2;
        }
    }
    for (guint i = 0; i < n_keys; i++) {
        guint32 partition =
            partitioner_partition_for_key((const guint8 *)keys[i], strlen(keys[i]), partitions);
        g_string_append_printf(out, "%s\t%" G_GUINT32_FORMAT "\n", keys[i], partition);
    }
    return 0;
}

int
cmd_partition(int argc, char **argv)
{
    g_autoptr(GString) out = g_string_new(NULL);
    g_autoptr(GString) err = g_string_new(NULL);
    int status = partition_run(argc, argv, out, err);
    fputs(out->str, stdout);
    fputs(err->str, stderr);
    if (status == 2)
        fputs("Run 'ksim partition --help' for usage.\n", stderr);
    return status;
}
