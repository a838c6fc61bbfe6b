/*
 * Tests of utilization.h: the brokers' I/O-thread utilisation from the
 * requests they handled.
 */
#include "utilization.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#define S 1000000000LL

static void
assert_near(double a, double b)
{
    if (fabs(a - b) > 1e-9)
        fail_msg("%.12g != %.12g", a, b);
}

/* A request of `kind` received at `at_s`, read for 0.01 s, queued
 * `queue_s`, on an I/O thread `local_s`. */
static void
request_of(History *h, HistoryRequestKind kind, gint32 broker, guint16 threads, double at_s,
           double queue_s, double local_s)
{
    HistoryRequest r = {
        .time_ns = (gint64)(at_s * S),
        .read_ns = S / 100,
        .queue_ns = (gint64)(queue_s * S),
        .local_ns = (gint64)(local_s * S),
        .remote_ns = 0,
        .send_ns = 0,
        .broker = broker,
        .io_threads = threads,
        .kind = (guint8)kind,
        .acks = kind == HISTORY_REQUEST_PRODUCE ? 1 : 0,
    };
    history_request(h, &r);
}

static void
request(History *h, gint32 broker, guint16 threads, double at_s, double queue_s, double local_s)
{
    request_of(h, HISTORY_REQUEST_PRODUCE, broker, threads, at_s, queue_s, local_s);
}

static void
test_utilization_bucket(void **state)
{
    (void)state;
    assert_near(utilization_bucket_s(80), 1);
    assert_near(utilization_bucket_s(100), 1);
    assert_near(utilization_bucket_s(101), 2);
    assert_near(utilization_bucket_s(5), 0.05);
    assert_near(utilization_bucket_s(0.8), 0.01);
    assert_near(utilization_bucket_s(300), 5);
    assert_near(utilization_bucket_s(0), 1);
}

/* Two overlapping requests on a broker of two I/O threads: both threads busy
 * where they overlap, half where one runs, none elsewhere. */
static void
test_utilization_overlap(void **state)
{
    (void)state;
    History *h = history_new();
    /* I/O from 1.00 to 1.50 s and from 1.20 to 2.20 s. */
    request(h, 1, 2, 0.99, 0.0, 0.5);
    request(h, 1, 2, 1.09, 0.1, 1.0);
    /* Broker 3, eight threads: 0.4 s of one thread. */
    request(h, 3, 8, 4.99, 0.0, 0.4);
    Utilization *u = utilization_new(h, 10.0);
    assert_near(u->bucket_s, 0.1);
    assert_int_equal(u->buckets, 100);
    assert_int_equal(u->brokers->len, 2);
    const UtilizationBroker *b1 = g_ptr_array_index(u->brokers, 0);
    const UtilizationBroker *b3 = g_ptr_array_index(u->brokers, 1);
    assert_int_equal(b1->broker, 1);
    assert_int_equal(b3->broker, 3);
    assert_near(b1->busy_s, 1.5);
    assert_near(b1->mean, 1.5 / (10.0 * 2));
    assert_near(g_array_index(b1->share, double, 12), 1.0); /* [1.2, 1.3): both */
    assert_near(g_array_index(b1->share, double, 10), 0.5); /* [1.0, 1.1): one */
    assert_near(g_array_index(b1->share, double, 21), 0.5); /* [2.1, 2.2): one */
    assert_near(g_array_index(b1->share, double, 22), 0.0);
    assert_near(g_array_index(b1->share, double, 9), 0.0);
    assert_near(b1->peak, 1.0);
    assert_near(b3->mean, 0.4 / (10.0 * 8));
    assert_near(b3->peak, 1.0 / 8);
    assert_ptr_equal(utilization_busiest(u), b1);
    /* The shares add up to the busy time. */
    double sum = 0;
    for (guint b = 0; b < u->buckets; b++)
        sum += g_array_index(b1->share, double, b) * u->bucket_s * 2;
    assert_near(sum, 1.5);
    utilization_free(u);
    history_free(h);
}

/* Busy time past the end of the run is left out; an empty or zero-length
 * run has no brokers. */
static void
test_utilization_clipped_and_empty(void **state)
{
    (void)state;
    History *h = history_new();
    request(h, 2, 1, 4.79, 0.0, 1.0); /* 4.8 .. 5.8 s, run ends at 5 s */
    Utilization *u = utilization_new(h, 5.0);
    assert_near(u->bucket_s, 0.05);
    assert_int_equal(u->buckets, 100);
    const UtilizationBroker *b = g_ptr_array_index(u->brokers, 0);
    assert_near(b->busy_s, 0.2);
    assert_near(g_array_index(b->share, double, 99), 1.0);
    assert_near(b->peak, 1.0);
    utilization_free(u);

    u = utilization_new(h, 0.0);
    assert_int_equal(u->brokers->len, 0);
    assert_null(utilization_busiest(u));
    utilization_free(u);
    history_free(h);

    h = history_new();
    u = utilization_new(h, 3.0);
    assert_int_equal(u->brokers->len, 0);
    assert_null(utilization_busiest(u));
    utilization_free(u);
    history_free(h);
}

/* Fetches count toward utilisation like produce requests, but the history
 * keeps only the produce requests whole. */
static void
test_utilization_fetches_counted_not_kept(void **state)
{
    (void)state;
    History *h = history_new();
    request(h, 1, 1, 0.99, 0.0, 0.5);                                    /* 1.0 .. 1.5 */
    request_of(h, HISTORY_REQUEST_FETCH_FOLLOWER, 1, 1, 1.49, 0.0, 0.5); /* 1.5 .. 2.0 */
    request_of(h, HISTORY_REQUEST_FETCH_CONSUMER, 1, 1, 2.99, 0.0, 0.25); /* 3.0 .. 3.25 */
    assert_int_equal(history_requests(h)->len, 1);
    assert_int_equal(g_array_index(history_requests(h), HistoryRequest, 0).kind,
                     HISTORY_REQUEST_PRODUCE);
    assert_int_equal(history_busy_count(h), 1);
    Utilization *u = utilization_new(h, 10.0);
    const UtilizationBroker *b = g_ptr_array_index(u->brokers, 0);
    assert_near(b->busy_s, 1.25);
    assert_near(g_array_index(b->share, double, 15), 1.0); /* [1.5, 1.6): the fetch */
    assert_near(g_array_index(b->share, double, 31), 1.0); /* [3.1, 3.2) */
    assert_near(g_array_index(b->share, double, 32), 0.5); /* [3.2, 3.3): half of it */
    assert_near(g_array_index(b->share, double, 33), 0.0);
    utilization_free(u);
    history_free(h);
}

/* A run longer than HISTORY_BUSY_BINS_MAX bins of 1 ms: the series grows
 * its bins tenfold instead of its length, keeps every nanosecond, and still
 * puts each busy interval in the right bucket of a long run. */
static void
test_utilization_long_run_coarsens(void **state)
{
    (void)state;
    History *h = history_new();
    request(h, 4, 2, 0.99, 0.0, 0.5);     /* 1.0 .. 1.5 */
    assert_int_equal(history_busy(h, 0)->bin_ns, HISTORY_BUSY_BIN_NS);
    request(h, 4, 2, 99.99, 0.0, 2.0);    /* 100 .. 102: 10,200 bins of 10 ms, too many */
    assert_int_equal(history_busy(h, 0)->bin_ns, 100 * HISTORY_BUSY_BIN_NS);
    request(h, 4, 2, 1999.99, 0.0, 3.0);  /* 2000 .. 2003: bins of 1 s */
    const HistoryBusy *busy = history_busy(h, 0);
    assert_int_equal(busy->bin_ns, 1000 * HISTORY_BUSY_BIN_NS);
    assert_true(busy->bins->len <= HISTORY_BUSY_BINS_MAX);
    gint64 total = 0;
    for (guint i = 0; i < busy->bins->len; i++)
        total += g_array_index(busy->bins, gint64, i);
    assert_int_equal(total, (gint64)(5.5 * S));
    Utilization *u = utilization_new(h, 2500.0); /* buckets of 50 s */
    assert_near(u->bucket_s, 50);
    const UtilizationBroker *b = g_ptr_array_index(u->brokers, 0);
    assert_near(b->busy_s, 5.5);
    assert_near(g_array_index(b->share, double, 0), 0.5 / (50 * 2));
    assert_near(g_array_index(b->share, double, 2), 2.0 / (50 * 2));
    assert_near(g_array_index(b->share, double, 40), 3.0 / (50 * 2));
    utilization_free(u);
    history_free(h);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_utilization_bucket),
        cmocka_unit_test(test_utilization_overlap),
        cmocka_unit_test(test_utilization_clipped_and_empty),
        cmocka_unit_test(test_utilization_fetches_counted_not_kept),
        cmocka_unit_test(test_utilization_long_run_coarsens),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
