/*
 * test_trace_messages: message names, and sends paired with their
 * deliveries and drops FIFO per link (trace_messages.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kafka_proto.h"
#include "sim_net.h"
#include "trace_messages.h"
#include "zk_proto.h"

static SimTraceRecord
record(gint64 time_ns, SimTraceKind kind, guint32 node, guint32 peer, guint64 a, guint64 b)
{
    return (SimTraceRecord){time_ns, kind, node, peer, 0, a, b};
}

/* Goal: Kafka's and ZooKeeper's message types are named, others are not. */
static void
test_trace_messages_names(void **state)
{
    (void)state;
    assert_string_equal(trace_message_name(KMSG_PRODUCE_REQUEST), "Produce request");
    assert_string_equal(trace_message_name(KMSG_FETCH_RESPONSE), "Fetch response");
    assert_non_null(trace_message_name(ZK_MSG_REQUEST));
    assert_null(trace_message_name(999999));
    assert_null(trace_message_name(G_MAXUINT64));
}

/* Goal: two messages of one type on one link pair in send order, by size;
 * a drop takes the oldest of its type whatever its size; other links and
 * types are apart; a delivery of nothing in flight pairs with nothing. */
static void
test_trace_messages_fifo_per_link(void **state)
{
    (void)state;
    g_autoptr(TraceFlights) flights = trace_flights_new();
    TraceFlight f;
    SimTraceRecord r = record(10, SIM_TRACE_SEND, 1, 2, KMSG_FETCH_REQUEST, 80);
    assert_int_equal(trace_flights_follow(flights, &r, &f), TRACE_FLIGHT_SENT);
    assert_int_equal(f.id, 1);
    r = record(11, SIM_TRACE_SEND, 1, 2, KMSG_FETCH_REQUEST, 120);
    assert_int_equal(trace_flights_follow(flights, &r, &f), TRACE_FLIGHT_SENT);
    r = record(12, SIM_TRACE_SEND, 2, 1, KMSG_FETCH_REQUEST, 80);
    assert_int_equal(trace_flights_follow(flights, &r, &f), TRACE_FLIGHT_SENT);
    assert_int_equal(trace_flights_in_flight(flights), 3);
    /* The 120-byte one is delivered first: matched by size. */
    r = record(20, SIM_TRACE_DELIVER, 2, 1, KMSG_FETCH_REQUEST, 120);
    assert_int_equal(trace_flights_follow(flights, &r, &f), TRACE_FLIGHT_DELIVERED);
    assert_int_equal(f.send_ns, 11);
    assert_int_equal(f.from, 1);
    assert_int_equal(f.to, 2);
    /* A drop on the reverse link takes that link's message. */
    r = record(21, SIM_TRACE_DROP, 1, 2, KMSG_FETCH_REQUEST, SIM_DROP_PARTITION);
    assert_int_equal(trace_flights_follow(flights, &r, &f), TRACE_FLIGHT_DROPPED);
    assert_int_equal(f.send_ns, 12);
    /* Nothing of this type in flight on 2 -> 1 now. */
    r = record(22, SIM_TRACE_DELIVER, 1, 2, KMSG_FETCH_REQUEST, 80);
    assert_int_equal(trace_flights_follow(flights, &r, &f), TRACE_FLIGHT_NONE);
    r = record(23, SIM_TRACE_DELIVER, 2, 1, KMSG_FETCH_REQUEST, 80);
    assert_int_equal(trace_flights_follow(flights, &r, &f), TRACE_FLIGHT_DELIVERED);
    assert_int_equal(f.send_ns, 10);
    assert_int_equal(trace_flights_in_flight(flights), 0);
    r = record(24, SIM_TRACE_TIMER, 1, G_MAXUINT32, 7, 0);
    assert_int_equal(trace_flights_follow(flights, &r, &f), TRACE_FLIGHT_NONE);
}

/* Goal: a duplicate (node: the receiver) is in flight beside its original;
 * one that could not be copied (no size) is not. */
static void
test_trace_messages_duplicate(void **state)
{
    (void)state;
    g_autoptr(TraceFlights) flights = trace_flights_new();
    TraceFlight f;
    SimTraceRecord r = record(1, SIM_TRACE_SEND, 3, 4, KMSG_PRODUCE_REQUEST, 500);
    trace_flights_follow(flights, &r, &f);
    r = record(1, SIM_TRACE_DUPLICATE, 4, 3, KMSG_PRODUCE_REQUEST, 500);
    assert_int_equal(trace_flights_follow(flights, &r, &f), TRACE_FLIGHT_SENT);
    assert_int_equal(f.from, 3);
    assert_int_equal(f.to, 4);
    r = record(1, SIM_TRACE_DUPLICATE, 4, 3, KMSG_PRODUCE_REQUEST, G_MAXUINT64);
    assert_int_equal(trace_flights_follow(flights, &r, &f), TRACE_FLIGHT_NONE);
    assert_int_equal(trace_flights_in_flight(flights), 2);
    r = record(2, SIM_TRACE_DELIVER, 4, 3, KMSG_PRODUCE_REQUEST, 500);
    assert_int_equal(trace_flights_follow(flights, &r, &f), TRACE_FLIGHT_DELIVERED);
    assert_int_equal(f.id, 1);
    assert_int_equal(trace_flights_follow(flights, &r, &f), TRACE_FLIGHT_DELIVERED);
    assert_int_equal(f.id, 2);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trace_messages_names),
        cmocka_unit_test(test_trace_messages_fifo_per_link),
        cmocka_unit_test(test_trace_messages_duplicate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
