/*
 * test_jepsen_history: hand-made histories written as Jepsen's Kafka
 * workload reads them: the op shapes, the key mapping, one operation at a
 * time per Jepsen process, transactions as :txn ops.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checker.h"
#include "checker_txn.h"
#include "history.h"
#include "jepsen_history.h"
#include "kafka_error.h"

#define MS(x) ((gint64)(x)*G_GINT64_CONSTANT(1000000))

/* `history` written (with its transactions checked when `txn`), one string
 * per line. */
static gchar **
written(History *history, gboolean txn)
{
    g_autoptr(CheckerResult) result = txn ? checker_run(history, NULL) : NULL;
    g_autoptr(TxnCheck) check = txn ? checker_txn_run(history, result, NULL) : NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    GError *error = NULL;
    assert_true(jepsen_history_write(history, check, out, &error));
    assert_null(error);
    assert_int_equal(fclose(out), 0);
    gchar **lines = g_strsplit(text, "\n", -1);
    free(text);
    return lines;
}

static guint64
send(History *h, gint64 ms, guint32 process, guint16 topic, gint32 partition, guint64 n)
{
    return history_invoke(h, MS(ms), HISTORY_FN_SEND, process, topic, partition, 0,
                          HISTORY_VALUE(process, n));
}

/* Sends complete in any order; a process after :info is never reused; keys
 * are the topic-partitions in (topic, partition) order. */
static void
test_sends_and_processes(void **state)
{
    (void)state;
    g_autoptr(History) h = history_new();
    guint16 t = history_topic(h, "t");
    guint16 u = history_topic(h, "u");
    guint64 a = send(h, 1, 5, u, 0, 1);
    guint64 b = send(h, 2, 5, t, 1, 2);
    history_complete(h, b, MS(3), HISTORY_OK, 1, 7, 0);
    history_complete(h, a, MS(4), HISTORY_FAIL, 0, -1, KAFKA_ERROR_NOT_ENOUGH_REPLICAS);
    guint64 c = send(h, 5, 5, t, 0, 3);
    history_complete(h, c, MS(6), HISTORY_INFO, 0, -1, KAFKA_ERROR_CLIENT_DELIVERY_TIMEOUT);
    guint64 d = send(h, 7, 5, t, 1, 4);
    history_complete(h, d, MS(8), HISTORY_OK, 1, 8, 0);
    /* A send whose partition was never known has no key: left out. */
    guint64 e = send(h, 9, 5, t, -1, 5);
    history_complete(h, e, MS(9), HISTORY_FAIL, -1, -1, KAFKA_ERROR_CLIENT_BUFFER_EXHAUSTED);

    g_autoptr(GArray) keys = jepsen_history_keys(h);
    assert_int_equal(keys->len, 3);
    assert_int_equal(g_array_index(keys, JepsenKey, 0).topic, t);
    assert_int_equal(g_array_index(keys, JepsenKey, 0).partition, 0);
    assert_int_equal(g_array_index(keys, JepsenKey, 1).partition, 1);
    assert_int_equal(g_array_index(keys, JepsenKey, 2).topic, u);

    g_auto(GStrv) lines = written(h, FALSE);
    guint64 v = HISTORY_VALUE(5, 0);
    g_autofree char *expect = g_strdup_printf(
        "{:index 0, :time 1000000, :type :invoke, :process 0, :f :send, :value [[:send 2 %" G_GUINT64_FORMAT "]]}\n"
        "{:index 1, :time 2000000, :type :invoke, :process 1, :f :send, :value [[:send 1 %" G_GUINT64_FORMAT "]]}\n"
        "{:index 2, :time 3000000, :type :ok, :process 1, :f :send, :value [[:send 1 [7 %" G_GUINT64_FORMAT "]]]}\n"
        "{:index 3, :time 4000000, :type :fail, :process 0, :f :send, :value [[:send 2 %" G_GUINT64_FORMAT "]], :error :not-enough-replicas}\n"
        "{:index 4, :time 5000000, :type :invoke, :process 0, :f :send, :value [[:send 0 %" G_GUINT64_FORMAT "]]}\n"
        "{:index 5, :time 6000000, :type :info, :process 0, :f :send, :value [[:send 0 %" G_GUINT64_FORMAT "]], :error :delivery-timeout}\n"
        "{:index 6, :time 7000000, :type :invoke, :process 1, :f :send, :value [[:send 1 %" G_GUINT64_FORMAT "]]}\n"
        "{:index 7, :time 8000000, :type :ok, :process 1, :f :send, :value [[:send 1 [8 %" G_GUINT64_FORMAT "]]]}\n",
        v + 1, v + 2, v + 2, v + 1, v + 3, v + 3, v + 4, v + 4);
    g_autofree char *got = g_strjoinv("\n", lines);
    assert_string_equal(got, expect);
}

/* One poll's records are one :poll op, keyed by partition; an assignment's
 * partitions one :assign op. */
static void
test_polls_and_assignments(void **state)
{
    (void)state;
    g_autoptr(History) h = history_new();
    guint16 t = history_topic(h, "t");
    history_record(h, MS(1), HISTORY_FN_ASSIGN, 9, t, 0, 0, 0, 0);
    history_record(h, MS(1), HISTORY_FN_ASSIGN, 9, t, 1, 4, 0, 0);
    history_record(h, MS(2), HISTORY_FN_POLL, 9, t, 1, 4, 0, 41);
    history_record(h, MS(2), HISTORY_FN_POLL, 9, t, 0, 0, 0, 40);
    history_record(h, MS(2), HISTORY_FN_POLL, 9, t, 1, 5, 0, 42);
    history_record(h, MS(2), HISTORY_FN_PROCESS, 9, t, 1, 5, 0, 42);
    history_record(h, MS(3), HISTORY_FN_POLL, 9, t, 0, 1, 0, 43);
    g_auto(GStrv) lines = written(h, FALSE);
    const char *expect[] = {
        "{:index 0, :time 1000000, :type :invoke, :process 0, :f :assign, :value [0 1]}",
        "{:index 1, :time 1000000, :type :ok, :process 0, :f :assign, :value [0 1]}",
        "{:index 2, :time 2000000, :type :invoke, :process 0, :f :poll, :value [[:poll]]}",
        "{:index 3, :time 2000000, :type :ok, :process 0, :f :poll, :value [[:poll {1 [[4 41] [5 42]], 0 [[0 40]]}]]}",
        "{:index 4, :time 3000000, :type :invoke, :process 0, :f :poll, :value [[:poll]]}",
        "{:index 5, :time 3000000, :type :ok, :process 0, :f :poll, :value [[:poll {0 [[1 43]]}]]}",
        "",
    };
    assert_int_equal(g_strv_length(lines), G_N_ELEMENTS(expect));
    for (guint i = 0; i < G_N_ELEMENTS(expect); i++)
        assert_string_equal(lines[i], expect[i]);
}

/* A transaction is one :txn op from beginTransaction to the end of its
 * commit (:ok, with offsets) or abort (:fail); its sends are not also
 * :send ops. */
static void
test_transactions(void **state)
{
    (void)state;
    g_autoptr(History) h = history_new();
    guint16 t = history_topic(h, "t");
    history_set_process_name(h, 7, "producer-w");
    history_set_process_transactional_id(h, 7, "tx");
    guint64 init = history_invoke(h, MS(1), HISTORY_FN_TXN_INIT, 7, 0, -1, 0, 0);
    history_complete(h, init, MS(2), HISTORY_OK, -1, -1, 0);
    history_record(h, MS(3), HISTORY_FN_TXN_BEGIN, 7, 0, -1, -1, 0, 1);
    guint64 a = send(h, 4, 7, t, 0, 1);
    guint64 b = send(h, 4, 7, t, 1, 2);
    history_complete(h, a, MS(5), HISTORY_OK, 0, 10, 0);
    history_complete(h, b, MS(5), HISTORY_OK, 1, 20, 0);
    guint64 commit = history_invoke(h, MS(6), HISTORY_FN_TXN_COMMIT, 7, 0, -1, 0, 1);
    history_complete(h, commit, MS(7), HISTORY_OK, -1, -1, 0);
    history_record(h, MS(8), HISTORY_FN_TXN_BEGIN, 7, 0, -1, -1, 0, 2);
    guint64 c = send(h, 9, 7, t, 0, 3);
    history_complete(h, c, MS(10), HISTORY_OK, 0, 12, 0);
    guint64 abort = history_invoke(h, MS(11), HISTORY_FN_TXN_ABORT, 7, 0, -1, 0, 2);
    history_complete(h, abort, MS(12), HISTORY_OK, -1, -1, 0);
    /* The final logs: the committed one's records and markers. */
    for (gint32 p = 0; p < 2; p++) {
        GArray *log = g_array_new(FALSE, TRUE, sizeof(HistoryRecord)); /* the history takes it */
        HistoryRecord r = {p == 0 ? 10 : 20, HISTORY_VALUE(7, (guint64)p + 1)};
        g_array_append_val(log, r);
        HistoryReplica replica = {.topic = t, .partition = p, .broker = 1, .is_leader = TRUE,
                                  .online = TRUE, .leo = 30, .hw = 30, .records = log};
        history_add_replica(h, &replica);
    }
    g_auto(GStrv) lines = written(h, TRUE);
    guint64 v = HISTORY_VALUE(7, 0);
    g_autofree char *expect = g_strdup_printf(
        "{:index 0, :time 3000000, :type :invoke, :process 0, :f :txn, :value [[:send 0 %" G_GUINT64_FORMAT "] [:send 1 %" G_GUINT64_FORMAT "]]}\n"
        "{:index 1, :time 7000000, :type :ok, :process 0, :f :txn, :value [[:send 0 [10 %" G_GUINT64_FORMAT "]] [:send 1 [20 %" G_GUINT64_FORMAT "]]]}\n"
        "{:index 2, :time 8000000, :type :invoke, :process 0, :f :txn, :value [[:send 0 %" G_GUINT64_FORMAT "]]}\n"
        "{:index 3, :time 12000000, :type :fail, :process 0, :f :txn, :value [[:send 0 %" G_GUINT64_FORMAT "]]}\n",
        v + 1, v + 2, v + 1, v + 2, v + 3, v + 3);
    g_autofree char *got = g_strjoinv("\n", lines);
    assert_string_equal(got, expect);

    g_autofree char *json = jepsen_history_keys_json(h);
    assert_non_null(strstr(json, "\"topic\" : \"t\""));
    assert_non_null(strstr(json, "\"partition\" : 1"));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sends_and_processes),
        cmocka_unit_test(test_polls_and_assignments),
        cmocka_unit_test(test_transactions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
