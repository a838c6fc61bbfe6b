/* trace_writer: --trace's JSON Lines are valid JSON whatever the names and
 * notes hold, with the fields trace_writer.h lists. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <json-glib/json-glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_writer.h"

/* Writes three records through the writer, returns the text (free()). */
static char *
write_records(const GPtrArray *names)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    TraceWriter *writer = trace_writer_new(out, names);
    trace_writer_check_invariants(writer);
    SimTrace *trace = sim_trace_new();
    sim_trace_set_listener(trace, trace_writer_record, writer);
    sim_trace_add(trace, 1000, SIM_TRACE_SEND, 0, 1, 200, 40, NULL);
    sim_trace_add(trace, 2000, SIM_TRACE_CRASH, 1, G_MAXUINT32, 0, 0,
                  "crash \"x\" \\ caf\xc3\xa9 \x01 tab\there");
    sim_trace_add(trace, 3000, SIM_TRACE_MODEL, 7, G_MAXUINT32, G_MAXUINT64, 5, NULL);
    sim_trace_free(trace);
    trace_writer_free(writer);
    fclose(out);
    return text;
}

static JsonObject *
parse_line(JsonParser *parser, const char *line)
{
    GError *error = NULL;
    if (!json_parser_load_from_data(parser, line, -1, &error))
        fail_msg("not JSON: %s (%s)", line, error->message);
    JsonNode *root = json_parser_get_root(parser);
    assert_int_equal(JSON_NODE_TYPE(root), JSON_NODE_OBJECT);
    return json_node_get_object(root);
}

static void
test_trace_writer_lines_are_json(void **state)
{
    /* Goal: every line parses, and holds what the record held: names for
     * ids, the note unchanged (quotes, backslash, UTF-8, control
     * characters), and a value above 2^63 - 1 as its decimal string. */
    (void)state;
    GPtrArray *names = g_ptr_array_new();
    g_ptr_array_add(names, "broker-1");
    g_ptr_array_add(names, "broker \"2\"");
    char *text = write_records(names);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    assert_int_equal(g_strv_length(lines), 4); /* three lines and the empty tail */
    assert_string_equal(lines[3], "");
    g_autoptr(JsonParser) parser = json_parser_new();
    JsonObject *send = parse_line(parser, lines[0]);
    assert_int_equal(json_object_get_int_member(send, "t_ns"), 1000);
    assert_string_equal(json_object_get_string_member(send, "kind"), "send");
    assert_string_equal(json_object_get_string_member(send, "node"), "broker-1");
    assert_string_equal(json_object_get_string_member(send, "peer"), "broker \"2\"");
    assert_int_equal(json_object_get_int_member(send, "a"), 200);
    assert_false(json_object_has_member(send, "note"));
    JsonObject *crash = parse_line(parser, lines[1]);
    assert_false(json_object_has_member(crash, "peer"));
    assert_string_equal(json_object_get_string_member(crash, "note"),
                        "crash \"x\" \\ caf\xc3\xa9 \x01 tab\there");
    JsonObject *model = parse_line(parser, lines[2]);
    assert_string_equal(json_object_get_string_member(model, "node"), "-");
    assert_string_equal(json_object_get_string_member(model, "a"), "18446744073709551615");
    assert_int_equal(json_object_get_int_member(model, "b"), 5);
    free(text);
    g_ptr_array_free(names, TRUE);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trace_writer_lines_are_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
