/* sim_trace: the fingerprint is a hash of every record in order, however the
 * records are buffered, and JSON Lines output shows each record. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <string.h>
#include <xxhash.h>

#include "sim_trace.h"

/* The fingerprint is XXH3-64 of the records' bytes (and notes) in order. */
static void
test_sim_trace_fingerprint_is_hash_of_records(void **state)
{
    (void)state;
    SimTrace *trace = sim_trace_new();
    GByteArray *expected = g_byte_array_new();
    for (guint i = 0; i < 1000; i++) {
        SimTraceRecord record = {(gint64)i * 7, SIM_TRACE_SEND, i % 5, (i + 1) % 5, 0, i, i * 3};
        sim_trace_add(trace, record.time_ns, SIM_TRACE_SEND, record.node, record.peer, record.a,
                      record.b, NULL);
        g_byte_array_append(expected, (const guint8 *)&record, sizeof record);
        if (i == 500) {
            sim_trace_add(trace, 3500, SIM_TRACE_MODEL, 1, G_MAXUINT32, 0, 0, "note");
            SimTraceRecord note = {3500, SIM_TRACE_MODEL, 1, G_MAXUINT32, 0, 0, 0};
            g_byte_array_append(expected, (const guint8 *)&note, sizeof note);
            g_byte_array_append(expected, (const guint8 *)"note", 5);
        }
    }
    assert_int_equal(sim_trace_count(trace), 1001);
    assert_int_equal(sim_trace_fingerprint(trace), XXH3_64bits(expected->data, expected->len));
    /* Asking for the fingerprint midway does not change the final one. */
    sim_trace_add(trace, 9999, SIM_TRACE_TIMER, 2, 0, 0, 0, NULL);
    SimTraceRecord last = {9999, SIM_TRACE_TIMER, 2, 0, 0, 0, 0};
    g_byte_array_append(expected, (const guint8 *)&last, sizeof last);
    assert_int_equal(sim_trace_fingerprint(trace), XXH3_64bits(expected->data, expected->len));
    g_byte_array_unref(expected);
    sim_trace_free(trace);
}

/* Two traces that differ in one field of one record have different
 * fingerprints; equal traces have equal ones. */
static void
test_sim_trace_fingerprint_sees_any_difference(void **state)
{
    (void)state;
    SimTrace *a = sim_trace_new(), *b = sim_trace_new(), *c = sim_trace_new();
    for (guint i = 0; i < 300; i++) {
        sim_trace_add(a, i, SIM_TRACE_DELIVER, 1, 2, i, 0, NULL);
        sim_trace_add(b, i, SIM_TRACE_DELIVER, 1, 2, i, 0, NULL);
        sim_trace_add(c, i, SIM_TRACE_DELIVER, 1, 2, i == 150 ? 151 : i, 0, NULL);
    }
    assert_int_equal(sim_trace_fingerprint(a), sim_trace_fingerprint(b));
    assert_int_not_equal(sim_trace_fingerprint(a), sim_trace_fingerprint(c));
    sim_trace_free(a);
    sim_trace_free(b);
    sim_trace_free(c);
}

/* The listener hears every record, in order, with its note. */
typedef struct {
    GArray *records; /* SimTraceRecord */
    GPtrArray *notes;
} Heard;

static void
hear(void *user_data, const SimTraceRecord *record, const char *note)
{
    Heard *heard = user_data;
    g_array_append_val(heard->records, *record);
    g_ptr_array_add(heard->notes, g_strdup(note != NULL ? note : "(none)"));
}

static void
test_sim_trace_listener_hears_every_record(void **state)
{
    (void)state;
    Heard heard = {g_array_new(FALSE, FALSE, sizeof(SimTraceRecord)),
                   g_ptr_array_new_with_free_func(g_free)};
    SimTrace *trace = sim_trace_new();
    sim_trace_set_listener(trace, hear, &heard);
    sim_trace_add(trace, 1000, SIM_TRACE_SEND, 0, 1, 200, 40, NULL);
    sim_trace_add(trace, 2000, SIM_TRACE_CRASH, 1, G_MAXUINT32, 0, 0, "crash");
    sim_trace_set_listener(trace, NULL, NULL);
    sim_trace_add(trace, 3000, SIM_TRACE_RESTART, 1, G_MAXUINT32, 0, 0, NULL);
    assert_int_equal(heard.records->len, 2);
    const SimTraceRecord *first = &g_array_index(heard.records, SimTraceRecord, 0);
    assert_int_equal(first->time_ns, 1000);
    assert_int_equal(first->kind, SIM_TRACE_SEND);
    assert_int_equal(first->peer, 1);
    assert_int_equal(first->a, 200);
    assert_string_equal(g_ptr_array_index(heard.notes, 0), "(none)");
    assert_string_equal(g_ptr_array_index(heard.notes, 1), "crash");
    assert_int_equal(sim_trace_count(trace), 3);
    sim_trace_free(trace);
    g_array_free(heard.records, TRUE);
    g_ptr_array_free(heard.notes, TRUE);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sim_trace_fingerprint_is_hash_of_records),
        cmocka_unit_test(test_sim_trace_fingerprint_sees_any_difference),
        cmocka_unit_test(test_sim_trace_listener_hears_every_record),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
