/*
 * Producer tests: the Kafka producer of issue 5 against a real simulated
 * cluster (coordination node, controller, three brokers) — configuration
 * checks, partition choice, batching, retries with metadata refresh, lost
 * responses and reordering with and without idempotence, acks=0, delivery
 * timeouts, blocking sends and restarts. Assertions read the history (what
 * the client recorded) and the replicas' final logs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "config_fixture.h"
#include "producer_fixture.h"
#include "workload.h"

static void
test_producer_config_defaults(void **state)
{
    (void)state;
    ProducerConfig c;
    kconfig_bind_producer_defaults(&c);
    assert_int_equal(c.acks, -1);
    assert_true(c.enable_idempotence);
    assert_false(c.enable_idempotence_explicit);
    assert_int_equal(c.retries, 2147483647);
    assert_int_equal(c.batch_size, 16384);
    assert_int_equal(c.linger_ms, 0);
    assert_int_equal(c.buffer_memory, 33554432);
    assert_int_equal(c.max_block_ms, 60000);
    assert_int_equal(c.max_in_flight_requests_per_connection, 5);
    assert_int_equal(c.request_timeout_ms, 30000);
    assert_int_equal(c.retry_backoff_ms, 100);
    assert_int_equal(c.delivery_timeout_ms, 120000);
    assert_int_equal(c.metadata_max_age_ms, 300000);
    assert_int_equal(c.max_request_size, 1048576);
    assert_int_equal(c.reconnect_backoff_ms, 50);
    assert_int_equal(c.partitioner, PRODUCER_PARTITIONER_STICKY);
    assert_string_equal(c.client_id, "");
    assert_true(producer_config_validate(&c, NULL));
}

typedef struct {
    const char *name;
    gint16 acks;
    gint32 retries;
    gint32 max_in_flight;
    gboolean idempotence_explicit; /* enable.idempotence=true written by the user */
    gint64 delivery_timeout_ms;    /* 0: default */
    gint32 batch_size;
    const char *error;      /* NULL: valid; else a fragment of the message */
    const char *error_also; /* a second fragment, or NULL */
    gboolean idempotent;    /* the resolved enable.idempotence when valid */
    gint64 delivery_resolved_ms;
} ConfigCase;

static const ConfigCase CONFIG_CASES[] = {
    {"defaults", -1, G_MAXINT32, 5, FALSE, 0, 16384, NULL, NULL, TRUE, 120000},
    {"acks=1 by default turns idempotence off", 1, G_MAXINT32, 5, FALSE, 0, 16384, NULL, NULL,
     FALSE, 120000},
    {"acks=0 by default turns idempotence off", 0, G_MAXINT32, 5, FALSE, 0, 16384, NULL, NULL,
     FALSE, 120000},
    {"acks=1 with explicit idempotence", 1, G_MAXINT32, 5, TRUE, 0, 16384, "enable.idempotence",
     "acks", FALSE, 0},
    {"retries=0 with explicit idempotence", -1, 0, 5, TRUE, 0, 16384, "enable.idempotence",
     "retries", FALSE, 0},
    {"retries=0 by default turns idempotence off", -1, 0, 5, FALSE, 0, 16384, NULL, NULL, FALSE,
     120000},
    {"6 in flight with explicit idempotence", -1, G_MAXINT32, 6, TRUE, 0, 16384,
     "enable.idempotence", "max.in.flight.requests.per.connection", FALSE, 0},
    {"6 in flight by default turns idempotence off", -1, G_MAXINT32, 6, FALSE, 0, 16384, NULL, NULL,
     FALSE, 120000},
    {"delivery.timeout.ms below linger + request timeout", -1, G_MAXINT32, 5, FALSE, 1000, 16384,
     "delivery.timeout.ms", "request.timeout.ms", TRUE, 0},
    {"negative batch.size", -1, G_MAXINT32, 5, FALSE, 0, -1, "batch.size", NULL, TRUE, 0},
    {"acks=2", 2, G_MAXINT32, 5, FALSE, 0, 16384, "acks", NULL, TRUE, 0},
};

/* Kafka's checks: conflicts with explicit idempotence are errors naming both
 * keys; with idempotence only on by default it is silently turned off. */
static void
test_producer_config_validation(void **state)
{
    (void)state;
    for (guint i = 0; i < G_N_ELEMENTS(CONFIG_CASES); i++) {
        const ConfigCase *tc = &CONFIG_CASES[i];
        ProducerConfig c;
        kconfig_bind_producer_defaults(&c);
        c.acks = tc->acks;
        c.retries = tc->retries;
        c.max_in_flight_requests_per_connection = tc->max_in_flight;
        c.enable_idempotence_explicit = tc->idempotence_explicit;
        c.batch_size = tc->batch_size;
        if (tc->delivery_timeout_ms > 0) {
            c.delivery_timeout_ms = tc->delivery_timeout_ms;
            c.delivery_timeout_ms_explicit = TRUE;
        }
        g_autoptr(GError) error = NULL;
        gboolean ok = producer_config_validate(&c, &error);
        if (tc->error != NULL) {
            if (ok)
                fail_msg("%s: accepted", tc->name);
            assert_true(g_error_matches(error, KSIM_PRODUCER_ERROR, KSIM_PRODUCER_ERROR_CONFIG));
            assert_non_null(strstr(error->message, tc->error));
            if (tc->error_also != NULL)
                assert_non_null(strstr(error->message, tc->error_also));
            continue;
        }
        if (!ok)
            fail_msg("%s: %s", tc->name, error->message);
        ProducerConfig resolved;
        producer_config_resolve(&c, &resolved);
        assert_int_equal(resolved.enable_idempotence, tc->idempotent);
        assert_int_equal(resolved.delivery_timeout_ms, tc->delivery_resolved_ms);
    }
    /* Without an explicit delivery.timeout.ms, Kafka raises it. */
    ProducerConfig c;
    kconfig_bind_producer_defaults(&c);
    c.delivery_timeout_ms = 1000;
    c.linger_ms = 5;
    assert_true(producer_config_validate(&c, NULL));
    ProducerConfig resolved;
    producer_config_resolve(&c, &resolved);
    assert_int_equal(resolved.delivery_timeout_ms, 30005);
}

/* ---- partitions ---- */

/* A keyed record lands where Kafka's default partitioner puts the key's
 * decimal string: murmur2("21") = -973932308 (Kafka's UtilsTest), positive
 * 1173551340, so partition 3 of 7; and every other key as the partitioner. */
static void
test_producer_key_partition_murmur2(void **state)
{
    (void)state;
    ProducerConfig config;
    kconfig_bind_producer_defaults(&config);
    Fixture *f = fixture_new(11, 7, &config);
    assert_int_equal(producer_partition_for_key(21, 7), 3);
    guint64 v21 = send_one(f, TOPIC, -1, 21);
    for (guint64 key = 1; key <= 50; key++)
        send_one(f, TOPIC, -1, key);
    run_for(f, 2 * SIM_NS_PER_S);
    g_autoptr(GArray) views = op_views(f);
    assert_int_equal(count_ops(views, HISTORY_OK, -1), 51);
    assert_int_equal(op_by_value(views, v21)->partition, 3);
    const HistoryOpArray *ops = history_ops(f->history);
    for (guint i = 0; i < ops->len; i++) {
        const HistoryOp *op = &g_array_index(ops, HistoryOp, i);
        if (op->fn != HISTORY_FN_SEND)
            continue;
        guint32 expected = producer_partition_for_key(history_op_key(f->history, i + 1), 7);
        /* The partition the key chose is the one OK confirmed. */
        assert_int_equal(op->partition, expected);
        assert_int_equal(op_by_value(views, op->value)->partition, expected);
    }
    fixture_free(f);
}

/* Keyless records: the sticky partitioner keeps a partition until a batch
 * fills, then moves to another; round-robin takes partitions in turn. */
static void
test_producer_sticky_and_round_robin(void **state)
{
    (void)state;
    for (guint kind = 0; kind < 2; kind++) {
        ProducerConfig config;
        kconfig_bind_producer_defaults(&config);
        config.partitioner =
            kind == 0 ? PRODUCER_PARTITIONER_STICKY : PRODUCER_PARTITIONER_ROUND_ROBIN;
        config.batch_size = BATCH_OF(10);
        config.linger_ms = 100;
        Fixture *f = fixture_new(12, 3, &config);
        g_autoptr(GArray) sent = g_array_new(FALSE, FALSE, sizeof(guint64));
        for (guint i = 0; i < 60; i++) {
            guint64 value = send_one(f, TOPIC, -1, 0);
            g_array_append_val(sent, value);
        }
        run_for(f, 2 * SIM_NS_PER_S);
        g_autoptr(GArray) views = op_views(f);
        assert_int_equal(count_ops(views, HISTORY_OK, -1), 60);
        guint per_partition[3] = {0, 0, 0};
        for (guint i = 0; i < 60; i++) {
            gint32 p = op_by_value(views, g_array_index(sent, guint64, i))->partition;
            assert_true(p >= 0 && p < 3);
            per_partition[p]++;
            if (kind == 1) {
                assert_int_equal(p, (gint32)(i % 3));
            } else if (i % 10 != 0) {
                gint32 before = op_by_value(views, g_array_index(sent, guint64, i - 1))->partition;
                assert_int_equal(p, before); /* sticks within a batch */
            } else if (i > 0) {
                gint32 before = op_by_value(views, g_array_index(sent, guint64, i - 1))->partition;
                assert_int_not_equal(p, before); /* moves on with a new batch */
            }
        }
        if (kind == 1)
            assert_true(per_partition[0] == 20 && per_partition[1] == 20 && per_partition[2] == 20);
        fixture_free(f);
    }
}

/* ---- batching ---- */

typedef struct {
    const char *name;
    gint64 linger_ms;
    gint32 batch_size;
    guint records;
    gint64 spacing_ms;
    guint64 requests;
    gint64 acked_within_ms; /* every record acknowledged this soon after the first send */
} BatchingCase;

static const BatchingCase BATCHING_CASES[] = {
    {"linger.ms=0 sends each record alone", 0, 16384, 10, 1, 10, 100},
    {"linger.ms=50 gathers records 1 ms apart", 50, 16384, 10, 1, 1, 100},
    {"batch.size closes batches before linger.ms", 1000, BATCH_OF(5), 20, 0, 4, 100},
    {"a lone batch its records fill goes before linger.ms", 1000, BATCH_OF(5), 5, 0, 1, 100},
    {"linger.ms holds a small batch", 300, 16384, 3, 0, 1, 400},
};

/* Batches close by linger.ms and by batch.size: counted in produce requests. */
static void
test_producer_batching(void **state)
{
    (void)state;
    for (guint i = 0; i < G_N_ELEMENTS(BATCHING_CASES); i++) {
        const BatchingCase *tc = &BATCHING_CASES[i];
        ProducerConfig config;
        kconfig_bind_producer_defaults(&config);
        config.linger_ms = tc->linger_ms;
        config.batch_size = tc->batch_size;
        Fixture *f = fixture_new(13, 1, &config);
        guint64 warm = warm_up(f);
        guint64 before = requests_sent(f);
        gint64 start = sim_now_ns(f->world);
        for (guint r = 0; r < tc->records; r++) {
            send_one(f, TOPIC, 0, 0);
            if (tc->spacing_ms > 0)
                run_for(f, tc->spacing_ms * SIM_NS_PER_MS);
        }
        run_for(f, 2 * SIM_NS_PER_S);
        if (requests_sent(f) - before != tc->requests)
            fail_msg("%s: %" G_GUINT64_FORMAT " requests", tc->name, requests_sent(f) - before);
        g_autoptr(GArray) views = op_views(f);
        assert_int_equal(count_ops(views, HISTORY_OK, -1), tc->records + 1);
        for (guint v = 0; v < views->len; v++) {
            const OpView *view = &g_array_index(views, OpView, v);
            if (view->value == warm)
                continue;
            assert_true(view->complete_ns - start < tc->acked_within_ms * SIM_NS_PER_MS);
            if (tc->linger_ms >= 300 && tc->batch_size == 16384)
                assert_true(view->complete_ns - view->invoke_ns >= tc->linger_ms * SIM_NS_PER_MS);
        }
        fixture_free(f);
    }
}

/* A second callback, counting into its own array. */
static void
other_cb(Producer *producer, const ProducerResult *result, void *user_data)
{
    (void)producer;
    g_array_append_val((GArray *)user_data, *result);
}

/* A batch's records complete each with its own callback, op, value and
 * offset, in record order, however their sends interleave: callbacks and
 * user data change from record to record, a send without a callback sits
 * among them, and sends to another partition break the run of op ids. */
static void
test_producer_callbacks_per_record(void **state)
{
    (void)state;
    ProducerConfig config;
    kconfig_bind_producer_defaults(&config);
    config.linger_ms = 200; /* one batch per partition */
    Fixture *f = fixture_new(17, 2, &config);
    warm_up(f);
    g_array_set_size(f->results, 0);
    g_autoptr(GArray) others = g_array_new(FALSE, FALSE, sizeof(ProducerResult));
    enum { SENDS = 12 };
    guint64 ops[SENDS], values[SENDS];
    for (guint i = 0; i < SENDS; i++) {
        values[i] = value_of(++f->counter);
        gint32 partition = i % 4 == 3 ? 1 : 0;
        ProducerSendCb cb = i % 3 == 0 ? result_cb : i % 3 == 1 ? other_cb : NULL;
        void *data = cb == result_cb ? (void *)f : (void *)others;
        ops[i] = producer_send(f->producer, TOPIC, partition, 0, values[i], RECORD_BYTES, cb, data);
    }
    run_for(f, 2 * SIM_NS_PER_S);
    /* Each callback saw exactly its records, with what the history holds;
     * within a partition (one batch) in record order. */
    guint expected[2] = {0, 0};
    for (guint i = 0; i < SENDS; i++) {
        const HistoryOp *row = history_op(f->history, ops[i]);
        assert_int_equal(row->type, HISTORY_OK);
        assert_int_equal(row->value, values[i]);
        assert_int_equal(row->partition, i % 4 == 3 ? 1 : 0);
        if (i % 3 == 2)
            continue; /* no callback */
        GArray *results = i % 3 == 0 ? f->results : others;
        expected[i % 3]++;
        guint found = 0;
        for (guint r = 0; r < results->len; r++) {
            const ProducerResult *result = &g_array_index(results, ProducerResult, r);
            if (result->op != ops[i])
                continue;
            found++;
            assert_int_equal(result->value, values[i]);
            assert_int_equal(result->outcome, HISTORY_OK);
            assert_int_equal(result->partition, row->partition);
            assert_int_equal(result->offset, row->offset);
            for (guint s = r + 1; s < results->len; s++) {
                const ProducerResult *later = &g_array_index(results, ProducerResult, s);
                if (later->partition == result->partition)
                    assert_true(later->op > result->op);
            }
        }
        assert_int_equal(found, 1);
    }
    assert_int_equal(expected[0], f->results->len);
    assert_int_equal(expected[1], others->len);
    /* Offsets ascend with the sends in each partition, one apart. */
    gint64 last[2] = {-1, -1};
    for (guint i = 0; i < SENDS; i++) {
        const HistoryOp *row = history_op(f->history, ops[i]);
        if (last[row->partition] >= 0)
            assert_int_equal(row->offset, last[row->partition] + 1);
        last[row->partition] = row->offset;
    }
    fixture_free(f);
}

/* ---- retries and metadata ---- */

/* A produce to a broker that is no longer the leader is answered
 * NOT_LEADER_OR_FOLLOWER; the producer refreshes its metadata, retries on the
 * new leader, and every record is written once. */
static void
test_producer_retry_not_leader(void **state)
{
    (void)state;
    ProducerConfig config;
    kconfig_bind_producer_defaults(&config);
    Fixture *f = fixture_new(14, 1, &config);
    send_many(f, 5, 0);
    run_for(f, 1 * SIM_NS_PER_S);
    gint32 old_leader = cluster_leader(f->cluster, TOPIC, 0);
    SimNodeId old_node = leader_node(f, 0);
    sim_node_crash(f->world, old_node);
    /* The producer hears of the crash and refreshes its metadata, which the
     * brokers still describe with the old leader: its view is stale. */
    run_for(f, 12 * SIM_NS_PER_S);
    assert_int_not_equal(cluster_leader(f->cluster, TOPIC, 0), old_leader);
    sim_node_restart(f->world, old_node);
    run_for(f, 5 * SIM_NS_PER_S);
    ProducerStats before;
    producer_stats(f->producer, &before);
    send_many(f, 5, 0);
    run_for(f, 3 * SIM_NS_PER_S);
    ProducerStats after;
    producer_stats(f->producer, &after);
    assert_true(producer_attempt_errors(f->producer, KAFKA_ERROR_NOT_LEADER_OR_FOLLOWER) >= 1);
    assert_true(after.metadata_requests > before.metadata_requests);
    assert_true(after.retries > before.retries);
    g_autoptr(GArray) views = op_views(f);
    assert_int_equal(count_ops(views, HISTORY_OK, -1), 10);
    g_autoptr(GArray) log = final_values(f, 0);
    for (guint64 n = 1; n <= 10; n++)
        assert_int_equal(occurrences(log, value_of(n)), 1);
    fixture_free(f);
}

/* A lost produce response: the request times out and the batch is sent
 * again. Without idempotence the log holds the record twice; with it the
 * broker recognises the retry and answers with the first offset. */
static void
test_producer_lost_response_duplicates(void **state)
{
    (void)state;
    for (guint idempotent = 0; idempotent < 2; idempotent++) {
        ProducerConfig config;
        kconfig_bind_producer_defaults(&config);
        config.enable_idempotence = idempotent;
        config.enable_idempotence_explicit = TRUE;
        config.request_timeout_ms = 1000;
        Fixture *f = fixture_new(15, 1, &config);
        warm_up(f);
        sim_net_lose_next(sim_world_net(f->world), leader_node(f, 0), producer_node(f->producer),
                          1);
        guint64 value = send_one(f, TOPIC, 0, 0);
        run_for(f, 5 * SIM_NS_PER_S);
        g_autoptr(GArray) views = op_views(f);
        const OpView *op = op_by_value(views, value);
        assert_true(op->completed);
        assert_int_equal(op->type, HISTORY_OK);
        assert_true(producer_attempt_errors(f->producer, KAFKA_ERROR_REQUEST_TIMED_OUT) >= 1);
        g_autoptr(GArray) log = final_values(f, 0);
        assert_int_equal(occurrences(log, value), idempotent ? 1 : 2);
        /* The acknowledged offset holds the value. */
        assert_int_equal(g_array_index(log, guint64, op->offset), value);
        fixture_free(f);
    }
}

/* Two batches in flight, the first request lost: without idempotence its
 * retry lands after the second (reordered); with idempotence the broker
 * refuses the second until the first is in, and the order holds. */
static void
test_producer_reorder_in_flight(void **state)
{
    (void)state;
    for (guint idempotent = 0; idempotent < 2; idempotent++) {
        ProducerConfig config;
        kconfig_bind_producer_defaults(&config);
        config.enable_idempotence = idempotent;
        config.enable_idempotence_explicit = TRUE;
        config.request_timeout_ms = 1000;
        config.batch_size = 0; /* one record per batch */
        Fixture *f = fixture_new(16, 1, &config);
        /* The broker learns the producer id first. */
        send_many(f, 3, 0);
        run_for(f, 1 * SIM_NS_PER_S);
        sim_net_lose_next(sim_world_net(f->world), producer_node(f->producer), leader_node(f, 0),
                          1);
        guint64 first = send_one(f, TOPIC, 0, 0);
        guint64 second = send_one(f, TOPIC, 0, 0);
        run_for(f, 5 * SIM_NS_PER_S);
        g_autoptr(GArray) views = op_views(f);
        assert_int_equal(count_ops(views, HISTORY_OK, -1), 5);
        g_autoptr(GArray) log = final_values(f, 0);
        assert_int_equal(log->len, 5);
        assert_int_equal(occurrences(log, first), 1);
        assert_int_equal(occurrences(log, second), 1);
        assert_int_equal(inversions(log), idempotent ? 0 : 1);
        if (idempotent)
            assert_true(producer_attempt_errors(f->producer,
                                                KAFKA_ERROR_OUT_OF_ORDER_SEQUENCE_NUMBER) >= 1);
        fixture_free(f);
    }
}

/* acks=0: the client counts every record sent the moment it is written to
 * the connection (callback without error, INFO in the history), and records
 * sent around a leader crash are lost. */
static void
test_producer_acks0_loses_silently(void **state)
{
    (void)state;
    ProducerConfig config;
    kconfig_bind_producer_defaults(&config);
    config.acks = 0;
    Fixture *f = fixture_new(17, 1, &config);
    assert_false(producer_config(f->producer)->enable_idempotence);
    SimNodeId node = leader_node(f, 0);
    for (guint i = 0; i < 300; i++) {
        send_one(f, TOPIC, 0, 0);
        run_for(f, 10 * SIM_NS_PER_MS);
        if (i == 100)
            sim_node_crash(f->world, node);
    }
    run_for(f, 15 * SIM_NS_PER_S);
    for (guint i = 0; i < f->results->len; i++)
        assert_int_equal(g_array_index(f->results, ProducerResult, i).error, KAFKA_ERROR_NONE);
    g_autoptr(GArray) views = op_views(f);
    assert_int_equal(count_ops(views, HISTORY_INFO, KAFKA_ERROR_NONE), 300);
    g_autoptr(GArray) log = final_values(f, 0);
    guint missing = 0;
    for (guint64 n = 1; n <= 300; n++)
        missing += occurrences(log, value_of(n)) == 0;
    assert_true(missing > 0);
    assert_true(log->len > 0);
    fixture_free(f);
}

/* ---- timeouts and blocking ---- */

/* An isolated producer: the batch sent at least once expires as INFO (it may
 * have been written), the batch never sent as FAIL, both after
 * delivery.timeout.ms. */
static void
test_producer_delivery_timeout(void **state)
{
    (void)state;
    ProducerConfig config;
    kconfig_bind_producer_defaults(&config);
    config.enable_idempotence = FALSE;
    config.enable_idempotence_explicit = TRUE;
    config.max_in_flight_requests_per_connection = 1;
    config.request_timeout_ms = 1000;
    config.delivery_timeout_ms = 2000;
    config.delivery_timeout_ms_explicit = TRUE;
    config.batch_size = 0;
    Fixture *f = fixture_new(18, 1, &config);
    warm_up(f);
    sim_net_isolate(sim_world_net(f->world), producer_node(f->producer));
    gint64 start = sim_now_ns(f->world);
    guint64 sent = send_one(f, TOPIC, 0, 0);
    guint64 queued = send_one(f, TOPIC, 0, 0);
    run_for(f, 5 * SIM_NS_PER_S);
    g_autoptr(GArray) views = op_views(f);
    const OpView *a = op_by_value(views, sent);
    const OpView *b = op_by_value(views, queued);
    assert_int_equal(a->type, HISTORY_INFO);
    assert_int_equal(a->error, KAFKA_ERROR_CLIENT_DELIVERY_TIMEOUT);
    assert_int_equal(b->type, HISTORY_FAIL);
    assert_int_equal(b->error, KAFKA_ERROR_CLIENT_DELIVERY_TIMEOUT);
    assert_int_equal(a->complete_ns - start, 2 * SIM_NS_PER_S);
    assert_int_equal(b->complete_ns - start, 2 * SIM_NS_PER_S);
    assert_int_equal(producer_pending(f->producer), 0);
    fixture_free(f);
}

typedef struct {
    const char *name;
    const char *topic;
    gint32 partition;
    guint32 size_bytes;
    KafkaError error;
    gint64 after_ms; /* when the failure is recorded, after the send */
} BlockCase;

static const BlockCase BLOCK_CASES[] = {
    {"unknown topic", "nope", -1, RECORD_BYTES, KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION, 500},
    {"partition beyond the topic", TOPIC, 7, RECORD_BYTES, KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION,
     500},
    {"record above max.request.size", TOPIC, -1, 2 << 20, KAFKA_ERROR_INVALID_REQUEST, 0},
};

/* Sends Kafka's send() would block on fail after max.block.ms; a record too
 * large fails at once. */
static void
test_producer_send_failures(void **state)
{
    (void)state;
    for (guint i = 0; i < G_N_ELEMENTS(BLOCK_CASES); i++) {
        const BlockCase *tc = &BLOCK_CASES[i];
        ProducerConfig config;
        kconfig_bind_producer_defaults(&config);
        config.max_block_ms = 500;
        Fixture *f = fixture_new(19, 1, &config);
        gint64 start = sim_now_ns(f->world);
        guint64 value = value_of(++f->counter);
        producer_send(f->producer, tc->topic, tc->partition, 0, value, tc->size_bytes, result_cb,
                      f);
        run_for(f, 2 * SIM_NS_PER_S);
        g_autoptr(GArray) views = op_views(f);
        const OpView *op = op_by_value(views, value);
        if (op->type != HISTORY_FAIL || op->error != (gint32)tc->error)
            fail_msg("%s: type %d error %d", tc->name, op->type, op->error);
        assert_int_equal(op->complete_ns - start, tc->after_ms * SIM_NS_PER_MS);
        assert_int_equal(f->results->len, 1);
        assert_int_equal(g_array_index(f->results, ProducerResult, 0).error, tc->error);
        fixture_free(f);
    }
}

/* buffer.memory full: sends block (the application stalls) and fail with
 * BUFFER_EXHAUSTED after max.block.ms; records already buffered are kept. */
static void
test_producer_buffer_exhausted(void **state)
{
    (void)state;
    ProducerConfig config;
    kconfig_bind_producer_defaults(&config);
    config.batch_size = BATCH_OF(10);
    config.buffer_memory = 2 * BATCH_OF(10);
    config.max_block_ms = 500;
    Fixture *f = fixture_new(20, 1, &config);
    sim_net_isolate(sim_world_net(f->world), producer_node(f->producer));
    gint64 start = sim_now_ns(f->world);
    send_many(f, 30, 0);
    assert_true(producer_blocked(f->producer));
    run_for(f, 1 * SIM_NS_PER_S);
    assert_false(producer_blocked(f->producer));
    g_autoptr(GArray) views = op_views(f);
    assert_int_equal(count_ops(views, HISTORY_FAIL, KAFKA_ERROR_CLIENT_BUFFER_EXHAUSTED), 10);
    for (guint64 n = 21; n <= 30; n++)
        assert_int_equal(op_by_value(views, value_of(n))->complete_ns - start, 500 * SIM_NS_PER_MS);
    assert_int_equal(producer_pending(f->producer), 20);
    fixture_free(f);
}

/* ---- restarts ---- */

/* A crashed producer records nothing for what it held; after a restart it has
 * a new producer id and sends again. */
static void
test_producer_restart_new_producer_id(void **state)
{
    (void)state;
    ProducerConfig config;
    kconfig_bind_producer_defaults(&config);
    config.linger_ms = 50;
    Fixture *f = fixture_new(21, 1, &config);
    gint64 first_id = producer_id(f->producer);
    guint64 lost = send_one(f, TOPIC, 0, 0);
    run_for(f, 10 * SIM_NS_PER_MS);
    sim_node_crash(f->world, producer_node(f->producer));
    assert_false(producer_running(f->producer));
    run_for(f, 1 * SIM_NS_PER_S);
    sim_node_restart(f->world, producer_node(f->producer));
    run_for(f, 1 * SIM_NS_PER_S);
    assert_true(producer_id(f->producer) >= 0);
    assert_int_not_equal(producer_id(f->producer), first_id);
    guint64 kept = send_one(f, TOPIC, 0, 0);
    run_for(f, 1 * SIM_NS_PER_S);
    g_autoptr(GArray) views = op_views(f);
    assert_false(op_by_value(views, lost)->completed);
    assert_int_equal(op_by_value(views, kept)->type, HISTORY_OK);
    g_autoptr(GArray) log = final_values(f, 0);
    assert_int_equal(occurrences(log, lost), 0);
    assert_int_equal(occurrences(log, kept), 1);
    fixture_free(f);
}

/* An idempotent batch that expires leaves a sequence gap: the producer takes
 * a new producer id and carries on, and the expired record is INFO. */
static void
test_producer_expiry_resets_producer_id(void **state)
{
    (void)state;
    ProducerConfig config;
    kconfig_bind_producer_defaults(&config);
    config.request_timeout_ms = 1000;
    config.delivery_timeout_ms = 2000;
    config.delivery_timeout_ms_explicit = TRUE;
    Fixture *f = fixture_new(22, 1, &config);
    send_many(f, 3, 0);
    run_for(f, 1 * SIM_NS_PER_S);
    gint64 first_id = producer_id(f->producer);
    sim_net_isolate(sim_world_net(f->world), producer_node(f->producer));
    guint64 expired = send_one(f, TOPIC, 0, 0);
    run_for(f, 3 * SIM_NS_PER_S);
    sim_net_heal(sim_world_net(f->world));
    run_for(f, 2 * SIM_NS_PER_S);
    ProducerStats stats;
    producer_stats(f->producer, &stats);
    assert_int_equal(stats.producer_id_resets, 1);
    assert_true(producer_id(f->producer) > first_id);
    guint64 after = send_one(f, TOPIC, 0, 0);
    run_for(f, 1 * SIM_NS_PER_S);
    g_autoptr(GArray) views = op_views(f);
    const OpView *lost = op_by_value(views, expired);
    assert_int_equal(lost->type, HISTORY_INFO);
    assert_int_equal(lost->error, KAFKA_ERROR_CLIENT_DELIVERY_TIMEOUT);
    assert_int_equal(op_by_value(views, after)->type, HISTORY_OK);
    g_autoptr(GArray) log = final_values(f, 0);
    assert_int_equal(occurrences(log, expired), 0);
    assert_int_equal(occurrences(log, after), 1);
    assert_int_equal(log->len, 4);
    fixture_free(f);
}

/* ---- random faults ---- */

#define FAULT_BROKERS 3

typedef struct {
    gint64 broker_up_ns[FAULT_BROKERS + 1]; /* 0: running */
    gboolean isolated;
} FaultState;

static void
restart_due(Fixture *f, FaultState *faults, gboolean all)
{
    for (gint32 b = 1; b <= FAULT_BROKERS; b++) {
        gint64 due = faults->broker_up_ns[b];
        if (due == 0 || (!all && due > sim_now_ns(f->world)))
            continue;
        sim_node_restart(f->world, broker_node(cluster_broker(f->cluster, b)));
        faults->broker_up_ns[b] = 0;
    }
    if (faults->isolated || all)
        sim_net_heal(sim_world_net(f->world));
    faults->isolated = FALSE;
    if (!producer_running(f->producer))
        sim_node_restart(f->world, producer_node(f->producer));
}

/* One random fault among broker crashes, lost and delayed messages on the
 * producer's links, an isolated producer, and a producer crash. */
static void
inject_fault(Fixture *f, FaultState *faults, SimRng *rng)
{
    SimNet *net = sim_world_net(f->world);
    SimNodeId producer = producer_node(f->producer);
    gint32 broker = (gint32)sim_rng_range(rng, 1, FAULT_BROKERS + 1);
    SimNodeId node = broker_node(cluster_broker(f->cluster, broker));
    guint down = 0;
    for (gint32 b = 1; b <= FAULT_BROKERS; b++)
        down += faults->broker_up_ns[b] != 0;
    switch (sim_rng_range(rng, 0, 12)) {
    case 0:
        if (down > 0 || faults->broker_up_ns[broker] != 0)
            break;
        sim_node_crash(f->world, node);
        faults->broker_up_ns[broker] =
            sim_now_ns(f->world) + sim_rng_range(rng, 1, 4) * SIM_NS_PER_S;
        break;
    case 1:
        sim_net_lose_next(net, node, producer, (guint)sim_rng_range(rng, 1, 4));
        break;
    case 2:
        sim_net_lose_next(net, producer, node, (guint)sim_rng_range(rng, 1, 4));
        break;
    case 3:
        sim_net_isolate(net, producer);
        faults->isolated = TRUE;
        break;
    case 4:
        sim_net_delay_next(net, producer, node, 2, 3 * SIM_NS_PER_S);
        break;
    case 5:
        if (producer_running(f->producer) && sim_rng_chance(rng, 1, 3))
            sim_node_crash(f->world, producer);
        break;
    default:
        break;
    }
}

static guint
duplicates_in(const GArray *values)
{
    g_autoptr(GHashTable) seen = g_hash_table_new(g_int64_hash, g_int64_equal);
    guint duplicates = 0;
    for (guint i = 0; i < values->len; i++) {
        guint64 *value = &g_array_index(values, guint64, i);
        if (g_hash_table_contains(seen, value))
            duplicates++;
        g_hash_table_add(seen, value);
    }
    return duplicates;
}

/* Random faults (broker crashes, lost and delayed messages, an isolated or
 * crashed producer) under a keyed workload: the invariants hold after every
 * event, every op completes at most once, nothing stays pending once the
 * faults end, and an idempotent producer never writes a value twice. */
static void
test_producer_random_faults(void **state)
{
    (void)state;
    guint plain_duplicates = 0;
    for (guint64 seed = 100; seed < 110; seed++) {
        gboolean idempotent = seed % 2 == 0;
        ProducerConfig config;
        kconfig_bind_producer_defaults(&config);
        config.enable_idempotence = idempotent;
        config.enable_idempotence_explicit = TRUE;
        config.linger_ms = 2;
        config.request_timeout_ms = 2000;
        config.delivery_timeout_ms = 10000;
        config.delivery_timeout_ms_explicit = TRUE;
        Fixture *f = fixture_new(seed, 2, &config);
        WorkloadConfig load;
        kconfig_bind_workload_defaults(&load, TOPIC);
        load.rate_per_s = 300;
        load.keys = WORKLOAD_KEYS_UNIFORM;
        load.key_count = 20;
        load.stop_ns = sim_now_ns(f->world) + 20 * SIM_NS_PER_S;
        Workload *workload = workload_new(f->world, "load", f->producer, &load);
        SimRng *rng = sim_world_rng(f->world, "test/faults");
        FaultState faults = {{0}, FALSE};
        for (guint step = 0; step < 40; step++) {
            restart_due(f, &faults, FALSE);
            inject_fault(f, &faults, rng);
            run_for(f, 500 * SIM_NS_PER_MS);
        }
        restart_due(f, &faults, TRUE);
        run_for(f, 40 * SIM_NS_PER_S);
        assert_int_equal(producer_pending(f->producer), 0);
        g_autoptr(GArray) views = op_views(f);
        assert_true(count_ops(views, HISTORY_OK, -1) > 1000);
        for (gint32 p = 0; p < 2; p++) {
            g_autoptr(GArray) log = final_values(f, p);
            guint duplicates = duplicates_in(log);
            if (idempotent && duplicates > 0)
                fail_msg("seed %" G_GUINT64_FORMAT ": %u duplicates", seed, duplicates);
            plain_duplicates += duplicates;
        }
        workload_free(workload);
        fixture_free(f);
    }
    /* The faults do reach the plain producer's retries. */
    assert_true(plain_duplicates > 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_producer_config_defaults),
        cmocka_unit_test(test_producer_config_validation),
        cmocka_unit_test(test_producer_key_partition_murmur2),
        cmocka_unit_test(test_producer_sticky_and_round_robin),
        cmocka_unit_test(test_producer_batching),
        cmocka_unit_test(test_producer_callbacks_per_record),
        cmocka_unit_test(test_producer_retry_not_leader),
        cmocka_unit_test(test_producer_lost_response_duplicates),
        cmocka_unit_test(test_producer_reorder_in_flight),
        cmocka_unit_test(test_producer_acks0_loses_silently),
        cmocka_unit_test(test_producer_delivery_timeout),
        cmocka_unit_test(test_producer_send_failures),
        cmocka_unit_test(test_producer_buffer_exhausted),
        cmocka_unit_test(test_producer_restart_new_producer_id),
        cmocka_unit_test(test_producer_expiry_resets_producer_id),
        cmocka_unit_test(test_producer_random_faults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
