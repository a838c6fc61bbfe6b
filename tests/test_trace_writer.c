/* trace_writer: --trace's JSON Lines are valid JSON whatever the names and
 * notes hold, with the fields trace_writer.h lists; the Chrome format is one
 * JSON document with a slice and a flow per message, slices for down time,
 * and replica counters. */
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
    TraceWriter *writer = trace_writer_new(out, names, TRACE_FORMAT_JSONL);
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
    assert_string_equal(json_object_get_string_member(send, "message"), "Produce request");
    assert_int_equal(json_object_get_int_member(send, "bytes"), 40);
    assert_false(json_object_has_member(send, "a"));
    assert_false(json_object_has_member(send, "note"));
    JsonObject *crash = parse_line(parser, lines[1]);
    assert_false(json_object_has_member(crash, "peer"));
    assert_false(json_object_has_member(crash, "a"));
    assert_string_equal(json_object_get_string_member(crash, "note"),
                        "crash \"x\" \\ caf\xc3\xa9 \x01 tab\there");
    JsonObject *model = parse_line(parser, lines[2]);
    assert_string_equal(json_object_get_string_member(model, "node"), "-");
    assert_string_equal(json_object_get_string_member(model, "a"), "18446744073709551615");
    assert_int_equal(json_object_get_int_member(model, "b"), 5);
    free(text);
    g_ptr_array_free(names, TRUE);
}

/* The events of `array` with "ph" `ph` and "name" `name`. */
static guint
count_events(JsonArray *array, const char *ph, const char *name)
{
    guint n = 0;
    for (guint i = 0; i < json_array_get_length(array); i++) {
        JsonObject *e = json_array_get_object_element(array, i);
        if (strcmp(json_object_get_string_member(e, "ph"), ph) == 0 &&
            (name == NULL || strcmp(json_object_get_string_member(e, "name"), name) == 0))
            n++;
    }
    return n;
}

static JsonObject *
find_event(JsonArray *array, const char *ph, const char *name)
{
    for (guint i = 0; i < json_array_get_length(array); i++) {
        JsonObject *e = json_array_get_object_element(array, i);
        if (strcmp(json_object_get_string_member(e, "ph"), ph) == 0 &&
            strcmp(json_object_get_string_member(e, "name"), name) == 0)
            return e;
    }
    fail_msg("no %s event named %s", ph, name);
    return NULL;
}

static void
test_trace_writer_chrome(void **state)
{
    /* Goal: a fetch sent by broker-2's fetcher and delivered to broker-1's
     * request handler is one slice from send to delivery with a flow
     * between the two threads; a second fetch on the same link that is
     * dropped is its own slice, named so, without a flow; a crash and
     * restart are one "down" slice; timers are left out; an acknowledgement
     * in the history is a counter of the leader's replica. */
    (void)state;
    GPtrArray *names = g_ptr_array_new();
    g_ptr_array_add(names, "broker-1");
    g_ptr_array_add(names, "broker-2");
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    TraceWriter *writer = trace_writer_new(out, names, TRACE_FORMAT_CHROME);
    SimTrace *trace = sim_trace_new();
    sim_trace_set_listener(trace, trace_writer_record, writer);
    sim_trace_add(trace, 1000, SIM_TRACE_SEND, 1, 0, 202, 40, NULL);   /* Fetch request */
    sim_trace_add(trace, 1500, SIM_TRACE_SEND, 1, 0, 202, 40, NULL);
    sim_trace_add(trace, 1700, SIM_TRACE_TIMER, 1, G_MAXUINT32, 0, 0, NULL);
    sim_trace_add(trace, 3000, SIM_TRACE_DELIVER, 0, 1, 202, 40, NULL);
    sim_trace_add(trace, 3500, SIM_TRACE_DROP, 0, 1, 202, 2, NULL);   /* broken */
    sim_trace_add(trace, 4000, SIM_TRACE_CRASH, 0, G_MAXUINT32, 0, 0, NULL);
    sim_trace_add(trace, 9000, SIM_TRACE_RESTART, 0, G_MAXUINT32, 1, 0, NULL);
    trace_writer_check_invariants(writer);
    History *history = history_new();
    guint16 topic = history_topic(history, "orders");
    gint32 isr[] = {1, 2};
    HistoryEvent ack = {.time_ns = 2000, .kind = HISTORY_EVENT_ACK, .broker = 1, .topic = topic,
                        .partition = 0, .offset = 0, .offset_end = 5, .hw = 3,
                        .isr = history_isr_intern(history, isr, 2), .acks = -1};
    history_event(history, &ack);
    trace_writer_finish(writer, history);
    sim_trace_free(trace);
    trace_writer_free(writer);
    history_free(history);
    fclose(out);

    g_autoptr(JsonParser) parser = json_parser_new();
    GError *error = NULL;
    if (!json_parser_load_from_data(parser, text, -1, &error))
        fail_msg("not JSON: %s", error->message);
    JsonObject *root = json_node_get_object(json_parser_get_root(parser));
    JsonArray *events = json_object_get_array_member(root, "traceEvents");
    JsonObject *fetch = find_event(events, "X", "Fetch request");
    assert_int_equal(json_object_get_int_member(fetch, "pid"), 2);
    assert_true(json_object_get_double_member(fetch, "ts") == 1.0);
    assert_true(json_object_get_double_member(fetch, "dur") == 2.0);
    JsonObject *start = find_event(events, "s", "Fetch request");
    JsonObject *end = find_event(events, "f", "Fetch request");
    assert_int_equal(json_object_get_int_member(start, "id"), json_object_get_int_member(end, "id"));
    assert_int_equal(json_object_get_int_member(start, "tid"), json_object_get_int_member(fetch, "tid"));
    assert_int_equal(json_object_get_int_member(end, "pid"), 1);
    assert_int_not_equal(json_object_get_int_member(end, "tid"), json_object_get_int_member(start, "tid"));
    JsonObject *dropped = find_event(events, "X", "Fetch request dropped (broken)");
    assert_true(json_object_get_double_member(dropped, "ts") == 1.5);
    assert_int_equal(count_events(events, "s", NULL), 1);
    JsonObject *down = find_event(events, "X", "down (crashed)");
    assert_true(json_object_get_double_member(down, "dur") == 5.0);
    assert_int_equal(count_events(events, "i", "timer"), 0);
    JsonObject *counter = find_event(events, "C", "orders-0");
    assert_int_equal(json_object_get_int_member(counter, "pid"), 1);
    JsonObject *args = json_object_get_object_member(counter, "args");
    assert_int_equal(json_object_get_int_member(args, "leo"), 5);
    assert_int_equal(json_object_get_int_member(args, "hw"), 3);
    assert_int_equal(json_object_get_int_member(args, "isr"), 2);
    JsonObject *thread = find_event(events, "M", "thread_name");
    assert_non_null(json_object_get_object_member(thread, "args"));
    free(text);
    g_ptr_array_free(names, TRUE);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trace_writer_lines_are_json),
        cmocka_unit_test(test_trace_writer_chrome),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
