/*
 * driver: a simple batch producer (see driver.h).
 *
 * Invariants:
 *  1. Every record sent has exactly one INVOKE and, once answered, exactly one
 *     of OK, FAIL, INFO in the history.
 *  2. At most max_in_flight requests per partition are outstanding.
 */
#include "driver.h"

#include "kafka_proto.h"
#include "sim_assert.h"
#include "sim_net.h"

#include <string.h>

#define METADATA_RETRY_MS 100

typedef struct {
    KTopicPartition tp;
    guint16 topic_index;
    guint64 records_queued;
    guint records_per_batch; /* the most a batch takes */
    guint in_flight;
    gint32 leader;
} Target;

typedef struct {
    gint32 correlation_id;
    Target *target;
    SimNodeId node;
    guint64 first_op;      /* history op of the batch's first record */
    guint count;
    SimTimerId timeout;
} InFlight;

struct Driver {
    SimWorld *world;
    SimNodeId node;
    guint32 process;
    GArray *bootstrap;
    DriverConfig config;
    History *history;
    GPtrArray *targets;     /* Target* */
    GPtrArray *in_flight;   /* InFlight* */
    GArray *brokers;        /* KBrokerEndpoint from metadata */
    gint32 correlation_next;
    guint64 value_next;
    gboolean metadata_in_flight;
    guint bootstrap_next;
    guint64 acked, failed;
};

static void send_batches(Driver *driver);

static void
request_metadata(Driver *driver)
{
    if (driver->metadata_in_flight || driver->bootstrap->len == 0)
        return;
    KMetadataRequest *request = kproto_new(KMSG_METADATA_REQUEST);
    request->correlation_id = driver->correlation_next++;
    SimNodeId to = g_array_index(driver->bootstrap, SimNodeId,
                                 driver->bootstrap_next++ % driver->bootstrap->len);
    driver->metadata_in_flight = TRUE;
    sim_net_send(sim_world_net(driver->world), driver->node, to, &request->base);
}

static void
metadata_retry(SimWorld *world, void *ctx, void *arg)
{
    Driver *driver = ctx;
    (void)world;
    (void)arg;
    driver->metadata_in_flight = FALSE;
    request_metadata(driver);
}

static void
handle_metadata(Driver *driver, KMetadataResponse *response)
{
    g_array_set_size(driver->brokers, 0);
    g_array_append_vals(driver->brokers, response->brokers->data, response->brokers->len);
    gboolean missing = FALSE;
    for (guint t = 0; t < driver->targets->len; t++) {
        Target *target = g_ptr_array_index(driver->targets, t);
        target->leader = KAFKA_NO_LEADER;
        for (guint i = 0; i < response->partitions->len; i++) {
            const KPartitionState *ps = &g_array_index(response->partitions, KPartitionState, i);
            if (ktp_equal(&ps->tp, &target->tp))
                target->leader = ps->leader;
        }
        missing = missing || target->leader == KAFKA_NO_LEADER;
    }
    if (missing) {
        /* Keep the flag set until the retry so only one refresh is pending. */
        sim_timer_set(driver->world, driver->node, METADATA_RETRY_MS * SIM_NS_PER_MS,
                      metadata_retry, NULL);
        return;
    }
    driver->metadata_in_flight = FALSE;
    send_batches(driver);
}

static void
complete(Driver *driver, InFlight *flight, HistoryType type, gint64 base_offset, KafkaError error)
{
    history_complete_range(driver->history, flight->first_op, flight->count,
                           sim_now_ns(driver->world), type, flight->target->tp.partition,
                           base_offset, error);
    if (type == HISTORY_OK)
        driver->acked += flight->count;
    else if (type == HISTORY_FAIL)
        driver->failed += flight->count;
    flight->target->in_flight--;
    sim_timer_cancel(driver->world, flight->timeout);
    g_ptr_array_remove(driver->in_flight, flight); /* frees it */
}

static void
request_timeout(SimWorld *world, void *ctx, void *arg)
{
    Driver *driver = ctx;
    InFlight *flight = arg;
    flight->timeout = SIM_EVENT_ID_NONE;
    /* Kafka's client closes the connection of a request that timed out. */
    sim_net_close(sim_world_net(world), driver->node, flight->node);
    complete(driver, flight, HISTORY_INFO, -1, KAFKA_ERROR_REQUEST_TIMED_OUT);
    request_metadata(driver);
}

static void
send_one(Driver *driver, Target *target, SimNodeId node)
{
    PlogBatch *batch = plog_batch_new();
    gint64 now = sim_now_ns(driver->world);
    guint n = (guint)MIN((guint64)target->records_per_batch, target->records_queued);
    g_autofree guint64 *values = g_new(guint64, n);
    g_autofree PlogRecord *records = g_new(PlogRecord, n);
    for (guint i = 0; i < n; i++) {
        values[i] = HISTORY_VALUE(driver->process, ++driver->value_next);
        records[i] = (PlogRecord){0, values[i], driver->config.record_size_bytes};
    }
    plog_batch_add_records(batch, records, n);
    guint64 first_op =
        history_invoke_sends(driver->history, now, driver->process, target->topic_index,
                             target->tp.partition, values, n);
    batch->first_timestamp_ms = batch->max_timestamp_ms = now / SIM_NS_PER_MS;
    KProduceRequest *request = kproto_new(KMSG_PRODUCE_REQUEST);
    request->correlation_id = driver->correlation_next++;
    request->tp = target->tp;
    request->acks = driver->config.acks;
    request->timeout_ms = driver->config.request_timeout_ms;
    request->batch = batch;
    kproto_update_size(&request->base);
    InFlight *flight = g_new0(InFlight, 1);
    flight->correlation_id = request->correlation_id;
    flight->target = target;
    flight->node = node;
    flight->first_op = first_op;
    flight->count = n;
    target->records_queued -= n;
    target->in_flight++;
    g_ptr_array_add(driver->in_flight, flight);
    sim_net_send(sim_world_net(driver->world), driver->node, node, &request->base);
    if (driver->config.acks == 0) {
        /* acks=0: written to the connection is all the client can know. */
        complete(driver, flight, HISTORY_INFO, -1, KAFKA_ERROR_NONE);
        return;
    }
    flight->timeout = sim_timer_set(driver->world, driver->node,
                                    driver->config.request_timeout_ms * SIM_NS_PER_MS,
                                    request_timeout, flight);
}

static void
send_batches(Driver *driver)
{
    for (guint t = 0; t < driver->targets->len; t++) {
        Target *target = g_ptr_array_index(driver->targets, t);
        SimNodeId node = kbroker_endpoint_node(driver->brokers, target->leader);
        if (node == SIM_NODE_NONE) {
            if (target->records_queued > 0)
                request_metadata(driver);
            continue;
        }
        while (target->records_queued > 0 && target->in_flight < driver->config.max_in_flight)
            send_one(driver, target, node);
    }
}

static InFlight *
find_flight(Driver *driver, gint32 correlation_id)
{
    for (guint i = 0; i < driver->in_flight->len; i++) {
        InFlight *flight = g_ptr_array_index(driver->in_flight, i);
        if (flight->correlation_id == correlation_id)
            return flight;
    }
    return NULL;
}

static void
handle_produce_response(Driver *driver, KProduceResponse *response)
{
    InFlight *flight = find_flight(driver, response->correlation_id);
    if (flight == NULL)
        return;
    if (response->error == KAFKA_ERROR_NONE) {
        complete(driver, flight, HISTORY_OK, response->base_offset, KAFKA_ERROR_NONE);
    } else {
        /* NOT_ENOUGH_REPLICAS_AFTER_APPEND and REQUEST_TIMED_OUT mean the
         * records may be in the log; other errors mean they are not. */
        gboolean maybe = response->error == KAFKA_ERROR_NOT_ENOUGH_REPLICAS_AFTER_APPEND ||
                         response->error == KAFKA_ERROR_REQUEST_TIMED_OUT;
        complete(driver, flight, maybe ? HISTORY_INFO : HISTORY_FAIL, -1, response->error);
        request_metadata(driver);
    }
    send_batches(driver);
}

static void
driver_message(SimWorld *world, void *ctx, SimNodeId from, SimMsg *msg)
{
    Driver *driver = ctx;
    (void)world;
    (void)from;
    if (msg->type == KMSG_METADATA_RESPONSE)
        handle_metadata(driver, (KMetadataResponse *)msg);
    else if (msg->type == KMSG_PRODUCE_RESPONSE)
        handle_produce_response(driver, (KProduceResponse *)msg);
    sim_msg_free(msg);
}

static void
driver_disconnect(SimWorld *world, void *ctx, SimNodeId peer, SimDisconnectReason reason)
{
    Driver *driver = ctx;
    (void)world;
    (void)reason;
    for (guint i = 0; i < driver->in_flight->len;) {
        InFlight *flight = g_ptr_array_index(driver->in_flight, i);
        if (flight->node == peer)
            complete(driver, flight, HISTORY_INFO, -1, KAFKA_ERROR_CLIENT_DISCONNECTED);
        else
            i++;
    }
    driver->metadata_in_flight = FALSE;
    request_metadata(driver);
}

static const SimNodeOps DRIVER_OPS = {driver_message, driver_disconnect, NULL, NULL};

Driver *
driver_new(SimWorld *world, const char *name, guint32 process, const GArray *bootstrap,
           const DriverConfig *config, History *history)
{
    KSIM_ASSERT(history != NULL);
    Driver *driver = g_new0(Driver, 1);
    driver->world = world;
    driver->process = process;
    driver->bootstrap = g_array_copy((GArray *)bootstrap);
    driver->config = *config;
    driver->history = history;
    driver->targets = g_ptr_array_new_with_free_func(g_free);
    driver->in_flight = g_ptr_array_new_with_free_func(g_free);
    driver->brokers = g_array_new(FALSE, FALSE, sizeof(KBrokerEndpoint));
    driver->correlation_next = 1;
    driver->node = sim_node_add(world, name, &DRIVER_OPS, driver);
    history_set_process_name(history, process, name);
    return driver;
}

void
driver_free(Driver *driver)
{
    if (driver == NULL)
        return;
    g_ptr_array_free(driver->targets, TRUE);
    g_ptr_array_free(driver->in_flight, TRUE);
    g_array_free(driver->brokers, TRUE);
    g_array_free(driver->bootstrap, TRUE);
    g_free(driver);
}

void
driver_produce(Driver *driver, const char *topic, gint32 partition, guint64 records,
               guint records_per_batch)
{
    KSIM_ASSERT(records_per_batch > 0);
    Target *target = NULL;
    for (guint i = 0; i < driver->targets->len; i++) {
        Target *t = g_ptr_array_index(driver->targets, i);
        if (strcmp(t->tp.topic, topic) == 0 && t->tp.partition == partition)
            target = t;
    }
    if (target == NULL) {
        target = g_new0(Target, 1);
        ktp_set(&target->tp, topic, partition);
        target->topic_index = history_topic(driver->history, topic);
        target->leader = KAFKA_NO_LEADER;
        g_ptr_array_add(driver->targets, target);
    }
    target->records_queued += records;
    target->records_per_batch = records_per_batch;
    if (driver->brokers->len == 0 || target->leader == KAFKA_NO_LEADER)
        request_metadata(driver);
    else
        send_batches(driver);
}

guint64
driver_acked(const Driver *driver)
{
    return driver->acked;
}

guint64
driver_failed(const Driver *driver)
{
    return driver->failed;
}

guint64
driver_pending(const Driver *driver)
{
    guint64 pending = 0;
    for (guint i = 0; i < driver->targets->len; i++) {
        const Target *t = g_ptr_array_index(driver->targets, i);
        pending += t->records_queued;
    }
    for (guint i = 0; i < driver->in_flight->len; i++)
        pending += ((const InFlight *)g_ptr_array_index(driver->in_flight, i))->count;
    return pending;
}
