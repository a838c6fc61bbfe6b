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

/* JSON Lines: one line per record, with the kind, node names and note. */
static void
test_sim_trace_jsonl(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    GPtrArray *names = g_ptr_array_new();
    g_ptr_array_add(names, "broker-1");
    g_ptr_array_add(names, "broker-2");
    SimTrace *trace = sim_trace_new();
    sim_trace_set_jsonl(trace, out, names);
    sim_trace_add(trace, 1000, SIM_TRACE_SEND, 0, 1, 200, 40, NULL);
    sim_trace_add(trace, 2000, SIM_TRACE_CRASH, 1, G_MAXUINT32, 0, 0, "crash \"x\"");
    fclose(out);
    assert_non_null(strstr(text, "{\"t_ns\":1000,\"kind\":\"send\",\"node\":\"broker-1\","
                                 "\"peer\":\"broker-2\",\"a\":200,\"b\":40}\n"));
    assert_non_null(strstr(text, "\"kind\":\"crash\",\"node\":\"broker-2\""));
    assert_non_null(strstr(text, "\"note\":\"crash \\\"x\\\"\""));
    assert_int_equal(strchr(strchr(text, '\n') + 1, '\n')[1], '\0');
    sim_trace_free(trace);
    g_ptr_array_free(names, TRUE);
    free(text);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sim_trace_fingerprint_is_hash_of_records),
        cmocka_unit_test(test_sim_trace_fingerprint_sees_any_difference),
        cmocka_unit_test(test_sim_trace_jsonl),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
