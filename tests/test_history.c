/* history and kafka_proto: the records a run keeps for the checker, and the
 * partition-state znode format the controller and leaders share. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <string.h>

#include "history.h"
#include "kafka_proto.h"

/* Topic names are interned: one index per name, in order of first use. */
static void
test_history_topics_are_interned(void **state)
{
    (void)state;
    History *history = history_new();
    assert_int_equal(history_topic(history, "orders"), 0);
    assert_int_equal(history_topic(history, "payments"), 1);
    assert_int_equal(history_topic(history, "orders"), 0);
    assert_string_equal(history_topic_name(history, 1), "payments");
    assert_int_equal(history_topic_count(history), 2);
    history_free(history);
}

/* An ISR is interned as a set: the order of its members does not matter,
 * equal sets share an id, the empty set is 0, and broker ids are not
 * bounded by a mask's width. */
static void
test_history_isr_sets_are_interned(void **state)
{
    (void)state;
    History *history = history_new();
    const gint32 wide[] = {999, 33, 1};
    const gint32 same[] = {1, 999, 33};
    const gint32 other[] = {1, 33};
    guint32 a = history_isr_intern(history, wide, G_N_ELEMENTS(wide));
    guint32 b = history_isr_intern(history, same, G_N_ELEMENTS(same));
    guint32 c = history_isr_intern(history, other, G_N_ELEMENTS(other));
    assert_int_equal(history_isr_intern(history, NULL, 0), 0);
    assert_int_not_equal(a, 0);
    assert_int_equal(a, b);
    assert_int_not_equal(a, c);
    const gint32 *members;
    assert_int_equal(history_isr_members(history, a, &members), 3);
    assert_int_equal(members[0], 1);
    assert_int_equal(members[1], 33);
    assert_int_equal(members[2], 999);
    assert_int_equal(history_isr_members(history, 0, &members), 0);
    assert_true(history_isr_contains(history, a, 999));
    assert_false(history_isr_contains(history, c, 999));
    assert_false(history_isr_contains(history, 0, 1));
    history_free(history);
}

/* An invoke gets the next op id; its completion fills in the same row. */
static void
test_history_invoke_and_complete(void **state)
{
    (void)state;
    History *history = history_new();
    guint16 topic = history_topic(history, "t");
    guint64 a = history_invoke(history, 10, HISTORY_FN_SEND, 100, topic, -1, 0, 111);
    guint64 b = history_invoke(history, 20, HISTORY_FN_SEND, 100, topic, 2, 7, 222);
    assert_int_equal(a, 1);
    assert_int_equal(b, 2);
    const HistoryOp *first = history_op(history, a);
    assert_int_equal(first->type, HISTORY_INVOKE);
    assert_int_equal(first->complete_ns, -1);
    assert_int_equal(first->value, 111);
    assert_int_equal(first->offset, -1);
    assert_int_equal(history_ops_end_ns(history), 20);
    history_complete(history, b, 30, HISTORY_OK, 2, 5, 0);
    history_complete(history, a, 40, HISTORY_INFO, 1, -1, 7);
    const HistoryOpArray *ops = history_ops(history);
    assert_int_equal(ops->len, 2);
    const HistoryOp *done = &g_array_index(ops, HistoryOp, 1);
    assert_ptr_equal(done, history_op(history, b));
    assert_int_equal(done->type, HISTORY_OK);
    assert_int_equal(done->invoke_ns, 20);
    assert_int_equal(done->complete_ns, 30);
    assert_int_equal(done->offset, 5);
    assert_int_equal(done->value, 222);
    const HistoryOp *unknown = &g_array_index(ops, HistoryOp, 0);
    assert_int_equal(unknown->type, HISTORY_INFO);
    assert_int_equal(unknown->error, 7);
    assert_int_equal(unknown->partition, 1);
    assert_int_equal(history_ops_end_ns(history), 40);
    /* A one-step op completes as it begins, with the next id. */
    guint64 c = history_record(history, 50, HISTORY_FN_POLL, 200, topic, 2, 5, 7, 222);
    assert_int_equal(c, 3);
    assert_int_equal(history_op(history, c)->type, HISTORY_OK);
    assert_int_equal(history_op(history, c)->complete_ns, 50);
    history_free(history);
}

/* history_records_lower_bound finds the first record at or above an offset,
 * across the gaps control batches leave. */
static void
test_history_records_lower_bound(void **state)
{
    (void)state;
    g_autoptr(GArray) records = g_array_new(FALSE, FALSE, sizeof(HistoryRecord));
    assert_int_equal(history_records_lower_bound(records, 5), 0);
    static const gint64 offsets[] = {2, 3, 4, 6, 7, 10};
    for (guint i = 0; i < G_N_ELEMENTS(offsets); i++) {
        HistoryRecord record = {offsets[i], 100 + i};
        g_array_append_val(records, record);
    }
    assert_int_equal(history_records_lower_bound(records, 0), 0);
    assert_int_equal(history_records_lower_bound(records, 2), 0);
    assert_int_equal(history_records_lower_bound(records, 5), 3); /* the gap: offset 6 */
    assert_int_equal(history_records_lower_bound(records, 7), 4);
    assert_int_equal(history_records_lower_bound(records, 8), 5);
    assert_int_equal(history_records_lower_bound(records, 11), 6);
}

/* history_epoch_at finds the epoch of the last start at or below an offset:
 * -1 before the first start and without epochs. */
static void
test_history_epoch_at(void **state)
{
    (void)state;
    assert_int_equal(history_epoch_at(NULL, 3), -1);
    g_autoptr(GArray) epochs = g_array_new(FALSE, FALSE, sizeof(HistoryEpochStart));
    assert_int_equal(history_epoch_at(epochs, 3), -1);
    static const HistoryEpochStart starts[] = {{2, 1}, {5, 3}, {9, 4}};
    g_array_append_vals(epochs, starts, G_N_ELEMENTS(starts));
    assert_int_equal(history_epoch_at(epochs, 0), -1);
    assert_int_equal(history_epoch_at(epochs, 2), 1);
    assert_int_equal(history_epoch_at(epochs, 4), 1);
    assert_int_equal(history_epoch_at(epochs, 5), 3);
    assert_int_equal(history_epoch_at(epochs, 8), 3);
    assert_int_equal(history_epoch_at(epochs, 9), 4);
    assert_int_equal(history_epoch_at(epochs, 1000), 4);
}

/* Keys live beside the rows: 0 for operations without one, before and after
 * the first keyed one. */
static void
test_history_keys(void **state)
{
    (void)state;
    History *history = history_new();
    guint16 topic = history_topic(history, "t");
    guint64 a = history_invoke(history, 1, HISTORY_FN_SEND, 100, topic, 0, 0, 11);
    assert_int_equal(history_op_key(history, a), 0);
    guint64 b = history_invoke(history, 2, HISTORY_FN_SEND, 100, topic, 0, 77, 12);
    guint64 c = history_invoke(history, 3, HISTORY_FN_SEND, 100, topic, 0, 0, 13);
    guint64 d = history_record(history, 4, HISTORY_FN_POLL, 200, topic, 0, 5, 99, 12);
    assert_int_equal(history_op_key(history, a), 0);
    assert_int_equal(history_op_key(history, b), 77);
    assert_int_equal(history_op_key(history, c), 0);
    assert_int_equal(history_op_key(history, d), 99);
    assert_int_equal(history_op(history, b)->value, 12);
    history_free(history);
}

/* Events keep their text; violations are counted; replicas are kept. */
static void
test_history_events_and_replicas(void **state)
{
    (void)state;
    History *history = history_new();
    HistoryEvent event = {0};
    event.kind = HISTORY_EVENT_VIOLATION;
    event.text = "two leaders";
    history_event(history, &event);
    event.kind = HISTORY_EVENT_ELECTED;
    event.text = NULL;
    history_event(history, &event);
    assert_int_equal(history_violation_count(history), 1);
    const GArray *events = history_events(history);
    assert_string_equal(g_array_index(events, HistoryEvent, 0).text, "two leaders");
    assert_null(g_array_index(events, HistoryEvent, 1).text);
    HistoryReplica replica = {0};
    replica.records = g_array_new(FALSE, FALSE, sizeof(HistoryRecord));
    HistoryRecord record = {0, 42};
    g_array_append_val(replica.records, record);
    history_add_replica(history, &replica);
    assert_int_equal(history_replicas(history)->len, 1);
    history_set_process_name(history, 3, "broker-3");
    assert_string_equal(history_process_name(history, 3), "broker-3");
    assert_null(history_process_name(history, 9));
    history_free(history);
}

/* The state znode's text round-trips; malformed text is refused. */
static void
test_history_partition_state_format(void **state)
{
    (void)state;
    KPartitionState ps = {0};
    ps.leader = 2;
    ps.leader_epoch = 7;
    ps.controller_epoch = 3;
    ps.n_isr = 3;
    ps.isr[0] = 2;
    ps.isr[1] = 1;
    ps.isr[2] = 3;
    GString *text = g_string_new(NULL);
    kpartition_state_serialize(&ps, text);
    assert_string_equal(text->str, "leader=2 leader_epoch=7 controller_epoch=3 isr=2,1,3");
    KPartitionState back = {0};
    assert_true(kpartition_state_parse(text->str, text->len, &back));
    assert_int_equal(back.leader, 2);
    assert_int_equal(back.leader_epoch, 7);
    assert_int_equal(back.controller_epoch, 3);
    assert_int_equal(back.n_isr, 3);
    assert_int_equal(back.isr[1], 1);
    static const char *const bad[] = {"", "leader=x", "leader=1 leader_epoch=2 isr=1",
                                      "leader=1 leader_epoch=2 controller_epoch=3 isr=1,,2",
                                      "leader=1 leader_epoch=2 controller_epoch=3 isr=a"};
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++)
        assert_false(kpartition_state_parse(bad[i], strlen(bad[i]), &back));
    g_string_free(text, TRUE);
}

/* Topic-partitions order by topic then partition, and name "topic-p". */
static void
test_history_topic_partition_order(void **state)
{
    (void)state;
    KTopicPartition a, b, c;
    ktp_set(&a, "orders", 2);
    ktp_set(&b, "orders", 10);
    ktp_set(&c, "payments", 0);
    assert_true(ktp_compare(&a, &b) < 0);
    assert_true(ktp_compare(&b, &c) < 0);
    assert_true(ktp_equal(&a, &a));
    assert_false(ktp_equal(&a, &b));
    g_autofree char *name = ktp_name(&b);
    assert_string_equal(name, "orders-10");
}

/* Metric samples are kept in order as given; a topic's min ISR is 0 until
 * set, and the last setting wins. */
static void
test_history_metrics_and_min_isr(void **state)
{
    (void)state;
    History *h = history_new();
    guint16 t = history_topic(h, "orders"), u = history_topic(h, "other");
    assert_int_equal(history_topic_min_isr(h, t), 0);
    history_set_topic_min_isr(h, t, 2);
    history_set_topic_min_isr(h, t, 3);
    assert_int_equal(history_topic_min_isr(h, t), 3);
    assert_int_equal(history_topic_min_isr(h, u), 0);
    history_metric(h, 5, HISTORY_METRIC_APPEND, 1, 10, 1234);
    history_metric(h, 7, HISTORY_METRIC_LAG, 9, 1, 42);
    const GArray *metrics = history_metrics(h);
    assert_int_equal(metrics->len, 2);
    const HistoryMetric *m = &g_array_index(metrics, HistoryMetric, 0);
    assert_true(m->time_ns == 5 && m->kind == HISTORY_METRIC_APPEND && m->node == 1 &&
                m->count == 10 && m->value == 1234);
    m = &g_array_index(metrics, HistoryMetric, 1);
    assert_true(m->time_ns == 7 && m->kind == HISTORY_METRIC_LAG && m->node == 9 && m->value == 42);
    history_free(h);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_history_topics_are_interned),
        cmocka_unit_test(test_history_isr_sets_are_interned),
        cmocka_unit_test(test_history_invoke_and_complete),
        cmocka_unit_test(test_history_keys),
        cmocka_unit_test(test_history_records_lower_bound),
        cmocka_unit_test(test_history_epoch_at),
        cmocka_unit_test(test_history_events_and_replicas),
        cmocka_unit_test(test_history_partition_state_format),
        cmocka_unit_test(test_history_topic_partition_order),
        cmocka_unit_test(test_history_metrics_and_min_isr),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
