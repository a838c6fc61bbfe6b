/*
 * test_diagram_trace: what a run keeps of its trace for space-time diagrams
 * (diagram_trace.h): every lifecycle record, the messages near cluster
 * events (with the ring's second before), the window asked for, the
 * models' notes, and a budget that stops keeping.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "diagram_trace.h"
#include "history.h"
#include "kafka_proto.h"
#include "sim_world.h"

#define MS(x) ((gint64)(x)*SIM_NS_PER_MS)

static GPtrArray *
names_new(void)
{
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(names, g_strdup("producer-a"));
    g_ptr_array_add(names, g_strdup("broker-1"));
    return names;
}

static void
add(DiagramTrace *trace, gint64 t_ns, SimTraceKind kind, guint32 node, guint32 peer, guint64 a,
    guint64 b, const char *note)
{
    SimTraceRecord r = {t_ns, kind, node, peer, 0, a, b};
    diagram_trace_record(trace, &r, note);
    diagram_trace_check_invariants(trace);
}

/* A Produce exchange every 10 ms from `from_ms` to `to_ms` (excluded). */
static void
traffic(DiagramTrace *trace, gint64 from_ms, gint64 to_ms)
{
    for (gint64 t = from_ms; t < to_ms; t += 10) {
        add(trace, MS(t), SIM_TRACE_SEND, 0, 1, KMSG_PRODUCE_REQUEST, 100, NULL);
        add(trace, MS(t) + 100000, SIM_TRACE_DELIVER, 1, 0, KMSG_PRODUCE_REQUEST, 100, NULL);
    }
}

static void
assert_records_within(const DiagramTrace *trace, gint64 from_ns, gint64 to_ns)
{
    const GArray *records = diagram_trace_records(trace);
    assert_true(records->len > 0);
    for (guint i = 0; i < records->len; i++) {
        const DiagramRecord *r = &g_array_index(records, DiagramRecord, i);
        assert_true(r->time_ns >= from_ns);
        assert_true(r->time_ns <= to_ns);
    }
}

/* Goal: without a moment nothing but lifecycle records is kept; a crash
 * keeps the second before it (from the ring) and 250 ms after, every
 * message of that span, and the crash itself among the events. */
static void
test_diagram_trace_window_around_a_crash(void **state)
{
    (void)state;
    g_autoptr(GPtrArray) names = names_new();
    g_autoptr(DiagramTrace) trace = diagram_trace_new(names, NULL, DIAGRAM_TRACE_RECORDS_MAX);
    traffic(trace, 0, 3000);
    assert_int_equal(diagram_trace_records(trace)->len, 0);
    add(trace, MS(3000), SIM_TRACE_CRASH, 1, G_MAXUINT32, 0, 0, NULL);
    traffic(trace, 3000, 5000);
    diagram_trace_finish(trace, MS(5000));
    diagram_trace_check_invariants(trace);
    const GArray *windows = diagram_trace_windows(trace);
    assert_int_equal(windows->len, 1);
    const DiagramWindow *w = &g_array_index(windows, DiagramWindow, 0);
    assert_int_equal(w->from_ns, MS(2000));
    assert_int_equal(w->to_ns, MS(3250));
    assert_records_within(trace, MS(2000), MS(3250));
    /* 2000..3250 ms: the sends at 2000, 2010, ..., 3250 and their
     * deliveries 0.1 ms later but the last's. */
    assert_int_equal(diagram_trace_records(trace)->len, 126 + 125);
    assert_true(diagram_trace_covers(trace, MS(2500), MS(3100)));
    assert_false(diagram_trace_covers(trace, MS(1500), MS(2500)));
    assert_int_equal(diagram_trace_events(trace)->len, 1);
    assert_int_equal(diagram_trace_spent_ns(trace), -1);
    assert_string_equal(diagram_trace_node_name(trace, 1), "broker-1");
}

/* Goal: the watched history's events open windows, acknowledgements do
 * not; two moments close together make one window; the node names are the
 * trace's own after finish. */
static void
test_diagram_trace_history_moments(void **state)
{
    (void)state;
    GPtrArray *names = names_new();
    g_autoptr(History) history = history_new();
    g_autoptr(DiagramTrace) trace = diagram_trace_new(names, history, DIAGRAM_TRACE_RECORDS_MAX);
    HistoryEvent ack = {.time_ns = MS(1500), .kind = HISTORY_EVENT_ACK, .broker = 1};
    traffic(trace, 0, 1500);
    history_event(history, &ack);
    traffic(trace, 1500, 4000);
    assert_int_equal(diagram_trace_windows(trace)->len, 0);
    HistoryEvent elected = {.time_ns = MS(4000), .kind = HISTORY_EVENT_ELECTED, .broker = 1};
    history_event(history, &elected);
    traffic(trace, 4000, 4100);
    HistoryEvent truncated = {.time_ns = MS(4100), .kind = HISTORY_EVENT_TRUNCATED, .broker = 1};
    history_event(history, &truncated);
    traffic(trace, 4100, 6000);
    diagram_trace_finish(trace, MS(6000));
    g_ptr_array_free(names, TRUE); /* copied by finish */
    const GArray *windows = diagram_trace_windows(trace);
    assert_int_equal(windows->len, 1);
    const DiagramWindow *w = &g_array_index(windows, DiagramWindow, 0);
    assert_int_equal(w->from_ns, MS(3000));
    assert_int_equal(w->to_ns, MS(4350));
    assert_string_equal(diagram_trace_node_name(trace, 0), "producer-a");
    guint32 node = 0;
    assert_true(diagram_trace_node_find(trace, "broker-1", &node));
    assert_int_equal(node, 1);
    assert_false(diagram_trace_node_find(trace, "zk", &node));
}

/* Goal: the window asked for is kept from a second before its start, and
 * a note in it keeps its text; notes outside every window are not kept. */
static void
test_diagram_trace_keep_between_and_notes(void **state)
{
    (void)state;
    g_autoptr(GPtrArray) names = names_new();
    g_autoptr(DiagramTrace) trace = diagram_trace_new(names, NULL, DIAGRAM_TRACE_RECORDS_MAX);
    diagram_trace_keep_between(trace, MS(5000), MS(5500));
    add(trace, MS(100), SIM_TRACE_MODEL, 1, 0, 0, 0, "too early");
    traffic(trace, 0, 7000);
    diagram_trace_finish(trace, MS(7000));
    const GArray *windows = diagram_trace_windows(trace);
    assert_int_equal(windows->len, 1);
    assert_int_equal(g_array_index(windows, DiagramWindow, 0).from_ns, MS(4000));
    assert_int_equal(g_array_index(windows, DiagramWindow, 0).to_ns, MS(5500));
    assert_records_within(trace, MS(4000), MS(5500));
    g_autoptr(DiagramTrace) noted = diagram_trace_new(names, NULL, DIAGRAM_TRACE_RECORDS_MAX);
    add(noted, MS(100), SIM_TRACE_MODEL, 1, 0, 0, 0, "ringed <note>");
    add(noted, MS(150), SIM_TRACE_PAUSE, 1, G_MAXUINT32, 0, 0, NULL);
    add(noted, MS(160), SIM_TRACE_MODEL, 1, 0, 0, 0, "in the window");
    diagram_trace_finish(noted, MS(200));
    const GArray *records = diagram_trace_records(noted);
    assert_int_equal(records->len, 2);
    assert_string_equal(diagram_trace_note(noted, &g_array_index(records, DiagramRecord, 0)),
                        "ringed <note>");
    assert_string_equal(diagram_trace_note(noted, &g_array_index(records, DiagramRecord, 1)),
                        "in the window");
    assert_true(diagram_trace_bytes(noted) > 2 * sizeof(DiagramRecord));
}

/* Goal: past its budget the trace keeps no more messages, says from when,
 * and its last window ends before that moment with none of its records;
 * lifecycle records are still kept. */
static void
test_diagram_trace_budget(void **state)
{
    (void)state;
    g_autoptr(GPtrArray) names = names_new();
    g_autoptr(DiagramTrace) trace = diagram_trace_new(names, NULL, 101);
    diagram_trace_keep_between(trace, 0, MS(2000));
    add(trace, MS(0), SIM_TRACE_PAUSE, 1, G_MAXUINT32, 0, 0, NULL);
    traffic(trace, 0, 2000);
    add(trace, MS(2000), SIM_TRACE_RESUME, 1, G_MAXUINT32, 0, 0, NULL);
    diagram_trace_finish(trace, MS(2000));
    diagram_trace_check_invariants(trace);
    /* The 101st record is the send at 500 ms; its delivery found no room. */
    gint64 spent = diagram_trace_spent_ns(trace);
    assert_int_equal(spent, MS(500) + 100000);
    const GArray *records = diagram_trace_records(trace);
    assert_true(records->len <= 101);
    const GArray *windows = diagram_trace_windows(trace);
    assert_int_equal(windows->len, 1);
    assert_int_equal(g_array_index(windows, DiagramWindow, 0).to_ns, spent - 1);
    assert_records_within(trace, 0, spent - 1);
    assert_int_equal(diagram_trace_events(trace)->len, 2);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_diagram_trace_window_around_a_crash),
        cmocka_unit_test(test_diagram_trace_history_moments),
        cmocka_unit_test(test_diagram_trace_keep_between_and_notes),
        cmocka_unit_test(test_diagram_trace_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
