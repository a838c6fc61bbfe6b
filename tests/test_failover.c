/*
 * Unit tests for reports/failover: controller failovers and partition
 * unavailability read from hand-written histories.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "failover.h"

#define MS(x) ((gint64)(x) * 1000000)

static void
add(History *history, gint64 time_ns, HistoryEventKind kind, gint32 broker, gint32 partition,
    const char *text)
{
    HistoryEvent event = {0};
    event.time_ns = time_ns;
    event.kind = kind;
    event.broker = broker;
    event.topic = history_topic(history, "t");
    event.partition = partition;
    event.text = (char *)text;
    history_event(history, &event);
}

static void
elected(History *history, gint64 time_ns, gint32 broker, gint32 partition)
{
    add(history, time_ns, HISTORY_EVENT_ELECTED, broker, partition, "became leader");
}

/* Two partitions led by brokers 1 and 2; broker 1, the controller, crashes
 * at 10 ms; its session ends at 100 ms; broker 2 takes over at 105 ms and
 * broker 3 leads partition 0 again at 130 ms. */
static History *
crashed_controller(void)
{
    History *history = history_new();
    add(history, MS(1), HISTORY_EVENT_CONTROLLER, 1, -1, "broker 1 became controller with epoch 1");
    elected(history, MS(2), 1, 0);
    elected(history, MS(2), 2, 1);
    add(history, MS(10), HISTORY_EVENT_FAULT, 1, -1, "0.010 s: fault began: crash broker-1");
    add(history, MS(100), HISTORY_EVENT_CONTROLLER_LOST, 1, -1, "controller 1's session ended");
    add(history, MS(105), HISTORY_EVENT_CONTROLLER, 2, -1, "broker 2 became controller with epoch 2");
    add(history, MS(110), HISTORY_EVENT_CONTROLLER, 2, 0, "controller 2 elected broker 3");
    elected(history, MS(130), 3, 0);
    elected(history, MS(131), 2, 1); /* a new epoch, the same leader: no outage */
    add(history, MS(200), HISTORY_EVENT_FAULT, 1, -1, "0.200 s: fault ended: crash broker-1");
    return history;
}

static void
test_failover_measures_from_session_end_to_led_again(void **state)
{
    /* Goal: the failover runs from the session's end to the last partition
     * led again after the new controller claimed; only the crashed leader's
     * partition was unavailable, from the crash to its new leader. */
    (void)state;
    g_autoptr(History) history = crashed_controller();
    g_autoptr(FailoverResult) result = failover_run(history);
    const GArray *windows = failover_result_windows(result);
    assert_int_equal(windows->len, 1);
    const FailoverWindow *w = &g_array_index(windows, FailoverWindow, 0);
    assert_int_equal(w->old_controller, 1);
    assert_int_equal(w->lost_ns, MS(100));
    assert_int_equal(w->claimed_ns, MS(105));
    assert_int_equal(w->led_ns, MS(130));
    assert_true(failover_result_longest_ms(result) == 30.0);
    const GArray *partitions = failover_result_partitions(result);
    assert_int_equal(partitions->len, 2);
    const FailoverPartition *p0 = &g_array_index(partitions, FailoverPartition, 0);
    const FailoverPartition *p1 = &g_array_index(partitions, FailoverPartition, 1);
    assert_int_equal(p0->partition, 0);
    assert_int_equal(p0->unavailable_ns, MS(120));
    assert_int_equal(p0->outages, 1);
    assert_int_equal(p1->unavailable_ns, 0);
    assert_int_equal(failover_result_unavailable_ns(result), MS(120));
    g_autoptr(GArray) worst = failover_result_worst(result, 5);
    assert_int_equal(worst->len, 1);
    assert_int_equal(g_array_index(worst, FailoverPartition, 0).partition, 0);
}

static void
test_failover_waits_for_the_new_controller(void **state)
{
    /* Goal: when every partition still has its leader (the controller lost
     * only its session), the failover ends when the new controller claims. */
    (void)state;
    g_autoptr(History) history = history_new();
    elected(history, MS(1), 2, 0);
    add(history, MS(50), HISTORY_EVENT_CONTROLLER_LOST, 1, -1, "controller 1's session ended");
    elected(history, MS(52), 2, 0);
    add(history, MS(58), HISTORY_EVENT_CONTROLLER, 3, -1, "broker 3 became controller with epoch 2");
    g_autoptr(FailoverResult) result = failover_run(history);
    const FailoverWindow *w = &g_array_index(failover_result_windows(result), FailoverWindow, 0);
    assert_int_equal(w->led_ns, MS(58));
    assert_true(failover_result_longest_ms(result) == 8.0);
    assert_int_equal(failover_result_unavailable_ns(result), 0);
}

static void
test_failover_offline_partitions_do_not_hold_it_open(void **state)
{
    /* Goal: a partition the new controller finds no eligible leader for does
     * not keep the failover open, but its time offline is unavailability up
     * to the end of the history; an unfinished failover lasts to the end. */
    (void)state;
    g_autoptr(History) history = history_new();
    elected(history, MS(1), 1, 0);
    elected(history, MS(1), 1, 1);
    add(history, MS(10), HISTORY_EVENT_FAULT, 1, -1, "0.010 s: fault began: power-loss broker-1");
    add(history, MS(20), HISTORY_EVENT_CONTROLLER_LOST, 1, -1, "controller 1's session ended");
    add(history, MS(25), HISTORY_EVENT_CONTROLLER, 2, -1, "broker 2 became controller with epoch 2");
    add(history, MS(30), HISTORY_EVENT_OFFLINE, 2, 0, "t-0 went offline");
    elected(history, MS(40), 3, 1);
    add(history, MS(90), HISTORY_EVENT_CONTROLLER_LOST, 2, -1, "controller 2's session ended");
    add(history, MS(100), HISTORY_EVENT_NODE, 3, -1, "broker 3 stopped cleanly");
    g_autoptr(FailoverResult) result = failover_run(history);
    const GArray *windows = failover_result_windows(result);
    assert_int_equal(windows->len, 2);
    assert_int_equal(g_array_index(windows, FailoverWindow, 0).led_ns, MS(40));
    const FailoverWindow *second = &g_array_index(windows, FailoverWindow, 1);
    assert_int_equal(second->claimed_ns, -1);
    assert_int_equal(failover_window_ns(result, second), MS(10)); /* to the end, 100 ms */
    assert_true(failover_result_longest_ms(result) == 20.0);
    const GArray *partitions = failover_result_partitions(result);
    assert_int_equal(g_array_index(partitions, FailoverPartition, 0).unavailable_ns, MS(90));
    /* Partition 1: 10 → 40 ms, and from broker 3's stop at the end (0 ms). */
    assert_int_equal(g_array_index(partitions, FailoverPartition, 1).unavailable_ns, MS(30));
    assert_int_equal(g_array_index(partitions, FailoverPartition, 1).outages, 2);
}

static void
test_failover_none(void **state)
{
    /* Goal: a run without a controller loss has no failover and measures 0. */
    (void)state;
    g_autoptr(History) history = history_new();
    elected(history, MS(1), 1, 0);
    g_autoptr(FailoverResult) result = failover_run(history);
    assert_int_equal(failover_result_windows(result)->len, 0);
    assert_true(failover_result_longest_ms(result) == 0.0);
}

static void
test_failover_outages_are_the_unled_stretches(void **state)
{
    /* Goal: the crashed leader's partition has one outage, from the crash to
     * its next leader, and the outages add up to the unavailability. */
    (void)state;
    History *history = crashed_controller();
    FailoverResult *result = failover_run(history);
    const GArray *outages = failover_result_outages(result);
    assert_int_equal(outages->len, 1);
    const FailoverOutage *o = &g_array_index(outages, FailoverOutage, 0);
    assert_int_equal(o->partition, 0);
    assert_int_equal(o->start_ns, MS(10));
    assert_int_equal(o->end_ns, MS(130));
    assert_int_equal(failover_result_unavailable_ns(result), o->end_ns - o->start_ns);
    failover_result_free(result);
    history_free(history);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_failover_outages_are_the_unled_stretches),
        cmocka_unit_test(test_failover_measures_from_session_end_to_led_again),
        cmocka_unit_test(test_failover_waits_for_the_new_controller),
        cmocka_unit_test(test_failover_offline_partitions_do_not_hold_it_open),
        cmocka_unit_test(test_failover_none),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
