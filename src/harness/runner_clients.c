/*
 * runner_clients: producers and their workloads, and consumer group members,
 * built from a variant (see runner_clients.h).
 *
 * A member's life: created with the run (its node up, its polling loop
 * started, no subscription); at members.start it subscribes (JoinGroup at
 * its next poll); at members.stop, if given, it unsubscribes (LeaveGroup) and
 * stays idle. A member that is down or paused when its start or stop comes
 * does it once it runs again (checked every MEMBER_RETRY_NS).
 *
 * Invariants:
 *  1. producers[i] and workloads[i] belong together; names[i] is the
 *     [producer NAME] they came from.
 *  2. Process ids are 100 + the client's position (producers first, then
 *     members), so they never collide with broker ids (1..31) in the history.
 *  3. members[i] is instance members[i]->instance of section
 *     members[i]->spec; it is subscribed only between its start and stop.
 *  4. A member of a pipeline group (pipeline.output) has one Pipe, whose
 *     producer's process id follows every member's; an exactly-once pipe
 *     has records in `batch` only while a transaction is open (BUSY), and
 *     none anywhere while DEAD.
 *
 * Pipelines (consume-transform-produce). The member's application: every
 * record a poll returns becomes one output record to pipeline.output, keyed
 * by the input's value (so the checker can tell which input an output came
 * from, history.h) with a fresh unique value. At least once
 * (exactly.once = false): the output is sent when the poll returns, and the
 * group's own commits (processing.mode) move its offsets. Exactly once: the
 * member reads with isolation.level=read_committed and never commits by
 * itself; its records queue, and while no transaction is open the pipe takes
 * every queued record into one: beginTransaction, one send per record,
 * sendOffsetsToTransaction (per partition the offset after the last record),
 * commitTransaction; on an error it aborts and queues the records again, on
 * a fencing error it stops. Records are the member's only within the group
 * generation that polled them: after a rebalance the new assignment resumes
 * from the committed offsets, so records of an older generation are dropped,
 * not queued or retried, as an application's onPartitionsRevoked does. The pipe's producer node is the member's other
 * half: a consumer:NAME fault hits both (runner_clients_consumer_nodes), and
 * its restart runs initTransactions again, which fences the old epoch.
 */
#include "runner_clients.h"

#include "consumer.h"
#include "kconfig.h"
#include "kconfig_bind.h"
#include "producer.h"
#include "sim_assert.h"
#include "workload.h"

#include <string.h>

#define PROCESS_FIRST 100
#define MEMBER_RETRY_NS (100 * SIM_NS_PER_MS)

#define PIPE_RECORD_BYTES 100
#define PIPE_QUEUE_MAX (1u << 20)

typedef struct Pipe Pipe;

typedef struct {
    RunnerClients *clients;
    const ScenarioConsumerGroup *spec; /* borrowed from the variant */
    guint instance;                    /* 1..members */
    Consumer *consumer;
    gboolean subscribed;
    gboolean stopped;
    Pipe *pipe; /* NULL unless the group is a pipeline */
} Member;

typedef enum {
    PIPE_INIT = 0, /* exactly once: initTransactions in progress */
    PIPE_READY,    /* no transaction open */
    PIPE_BUSY,     /* a transaction is open or ending */
    PIPE_DEAD,     /* fenced */
} PipeState;

struct Pipe {
    Member *member;
    Producer *producer;
    guint64 counter; /* output values sent, over every incarnation */
    PipeState state;
    GArray *queue; /* ConsumerRecord waiting for a transaction */
    GArray *batch; /* ConsumerRecord of the open transaction */
    gint32 generation; /* the group generation the queued records were polled in */
    gint32 batch_generation; /* the same, for the batch */
};

struct RunnerClients {
    SimWorld *world;
    History *history;
    GPtrArray *producers; /* Producer* */
    GPtrArray *workloads; /* Workload* */
    GPtrArray *names;     /* char*: the [producer NAME] of each */
    GPtrArray *members;   /* Member* */
    GPtrArray *pipes;     /* Pipe* */
    /* The cluster's transaction.version, which every producer learns from
     * its brokers (ProducerConfig.transaction_version). */
    gint32 transaction_version;
};

/* The WorkloadConfig a [producer] group's workload keys describe, bound
 * from the registry like every other config (kconfig_bind.h). */
static void
workload_config_from(WorkloadConfig *config, const ScenarioProducer *spec, gint64 duration_ns)
{
    kconfig_bind_workload_from(config, spec->workload_config, spec->topic);
    /* No new record after the fault phase: the liveness phase only lets
     * what is in flight finish. */
    config->stop_ns = MIN(config->stop_ns, duration_ns);
    /* Whether the producer is transactional, and so how many records a
     * transaction holds, is the parser's decision across the group's keys. */
    config->txn_records = spec->workload.txn_records;
}

/* The ConsumerConfig a [consumer-group] section's keys describe. */
static void
consumer_config_from(ConsumerConfig *config, const ScenarioConsumerGroup *spec)
{
    /* The first assignor of partition.assignment.strategy is the one used;
     * the group runs the cooperative protocol when every listed assignor is
     * cooperative-sticky (kconfig_bind_consumer_from). */
    kconfig_bind_consumer_from(config, spec->config, spec->members_config);
    if (spec->pipeline_output != NULL && spec->exactly_once) {
        /* An exactly-once pipeline reads committed data only and moves its
         * offsets only through its transactions. */
        config->isolation_level = 1;
        config->enable_auto_commit = FALSE;
        config->processing_mode = CONSUMER_PROCESSING_AUTO;
    }
}

static void member_start_fire(void *ctx, void *arg, guint64 arg_u64);
static void member_stop_fire(void *ctx, void *arg, guint64 arg_u64);

/* TRUE when the member's process runs and is not paused: only then does the
 * application call into its client. */
static gboolean
member_active(const Member *member)
{
    SimWorld *world = member->clients->world;
    return consumer_running(member->consumer) &&
           sim_node_state(world, consumer_node(member->consumer)) == SIM_NODE_UP;
}

static void
member_retry(Member *member, SimEventFn fn)
{
    SimWorld *world = member->clients->world;
    sim_world_schedule(world, sim_now_ns(world) + MEMBER_RETRY_NS, fn, NULL, member->clients,
                       member, 0);
}

static void
member_start_fire(void *ctx, void *arg, guint64 arg_u64)
{
    Member *member = arg;
    (void)ctx;
    (void)arg_u64;
    if (member->subscribed || member->stopped)
        return;
    if (!member_active(member)) {
        member_retry(member, member_start_fire);
        return;
    }
    consumer_subscribe(member->consumer, member->spec->group_id,
                       (const char *const *)member->spec->topics,
                       g_strv_length(member->spec->topics));
    member->subscribed = TRUE;
}

static void
member_stop_fire(void *ctx, void *arg, guint64 arg_u64)
{
    Member *member = arg;
    (void)ctx;
    (void)arg_u64;
    if (member->stopped)
        return;
    if (!member_active(member)) {
        member_retry(member, member_stop_fire);
        return;
    }
    if (member->subscribed)
        consumer_unsubscribe(member->consumer);
    member->subscribed = FALSE;
    member->stopped = TRUE;
}

static void
member_free(gpointer data)
{
    Member *member = data;
    consumer_free(member->consumer);
    g_free(member);
}

/* ---- pipelines ---- */

static void pipe_kick(Pipe *pipe);

static gboolean
pipe_exactly_once(const Pipe *pipe)
{
    return pipe->member->spec->exactly_once;
}

static void
pipe_send(Pipe *pipe, const ConsumerRecord *record)
{
    KSIM_ASSERT(pipe->counter + 1 < (G_GUINT64_CONSTANT(1) << HISTORY_VALUE_COUNTER_BITS));
    guint64 value = HISTORY_VALUE(producer_process(pipe->producer), ++pipe->counter);
    producer_send(pipe->producer, pipe->member->spec->pipeline_output, -1, record->value, value,
                  PIPE_RECORD_BYTES, NULL, NULL);
}

static gboolean
pipe_fencing(KafkaError error)
{
    return error == KAFKA_ERROR_PRODUCER_FENCED || error == KAFKA_ERROR_INVALID_PRODUCER_EPOCH ||
           error == KAFKA_ERROR_INVALID_TXN_STATE;
}

static void
pipe_dead(Pipe *pipe)
{
    pipe->state = PIPE_DEAD;
    g_array_set_size(pipe->queue, 0);
    g_array_set_size(pipe->batch, 0);
}

static void
pipe_abort_done_cb(Producer *producer, KafkaError error, void *user_data)
{
    Pipe *pipe = user_data;
    (void)producer;
    if (error != KAFKA_ERROR_NONE) {
        pipe_dead(pipe);
        return;
    }
    /* The records go round again, first, unless a rebalance took them: the
     * new assignment reads them again from the committed offsets. */
    if (pipe->batch_generation == consumer_generation(pipe->member->consumer))
        g_array_prepend_vals(pipe->queue, pipe->batch->data, pipe->batch->len);
    g_array_set_size(pipe->batch, 0);
    pipe->state = PIPE_READY;
    pipe_kick(pipe);
}

static void
pipe_failed(Pipe *pipe, KafkaError error)
{
    if (pipe_fencing(error)) {
        pipe_dead(pipe);
        return;
    }
    producer_abort_transaction(pipe->producer, pipe_abort_done_cb, pipe);
}

static void
pipe_commit_done_cb(Producer *producer, KafkaError error, void *user_data)
{
    Pipe *pipe = user_data;
    (void)producer;
    if (error != KAFKA_ERROR_NONE) {
        pipe_failed(pipe, error);
        return;
    }
    g_array_set_size(pipe->batch, 0);
    pipe->state = PIPE_READY;
    pipe_kick(pipe);
}

static void
pipe_offsets_done_cb(Producer *producer, KafkaError error, void *user_data)
{
    Pipe *pipe = user_data;
    if (error != KAFKA_ERROR_NONE) {
        pipe_failed(pipe, error);
        return;
    }
    producer_commit_transaction(producer, pipe_commit_done_cb, pipe);
}

/* Per partition of the batch, the offset after its last record, with that
 * record's leader epoch (as Kafka Streams commits them). */
static GArray *
pipe_offsets(const Pipe *pipe)
{
    GArray *offsets = g_array_new(FALSE, TRUE, sizeof(KOffsetPartition));
    for (guint i = 0; i < pipe->batch->len; i++) {
        const ConsumerRecord *record = &g_array_index(pipe->batch, ConsumerRecord, i);
        KOffsetPartition *slot = NULL;
        for (guint k = 0; k < offsets->len && slot == NULL; k++) {
            KOffsetPartition *entry = &g_array_index(offsets, KOffsetPartition, k);
            if (ktp_equal(&entry->tp, &record->tp))
                slot = entry;
        }
        if (slot == NULL) {
            g_array_set_size(offsets, offsets->len + 1);
            slot = &g_array_index(offsets, KOffsetPartition, offsets->len - 1);
            slot->tp = record->tp;
            slot->offset = -1;
        }
        if (record->offset + 1 > slot->offset) {
            slot->offset = record->offset + 1;
            slot->leader_epoch = record->leader_epoch;
        }
    }
    return offsets;
}

/* Exactly once: the queued records become one transaction. */
static void
pipe_kick(Pipe *pipe)
{
    if (pipe->state != PIPE_READY || pipe->queue->len == 0 || !producer_running(pipe->producer))
        return;
    KafkaError error = producer_begin_transaction(pipe->producer);
    if (error != KAFKA_ERROR_NONE) {
        pipe_dead(pipe);
        return;
    }
    pipe->state = PIPE_BUSY;
    pipe->batch_generation = pipe->generation;
    g_array_append_vals(pipe->batch, pipe->queue->data, pipe->queue->len);
    g_array_set_size(pipe->queue, 0);
    for (guint i = 0; i < pipe->batch->len; i++)
        pipe_send(pipe, &g_array_index(pipe->batch, ConsumerRecord, i));
    g_autoptr(GArray) offsets = pipe_offsets(pipe);
    Consumer *consumer = pipe->member->consumer;
    producer_send_offsets_to_transaction_member(
        pipe->producer, pipe->member->spec->group_id, consumer_member_id(consumer),
        pipe->batch_generation, offsets, pipe_offsets_done_cb, pipe);
}

static void
pipe_poll_cb(Consumer *consumer, const ConsumerRecord *records, guint n, void *user_data)
{
    Pipe *pipe = user_data;
    (void)consumer;
    if (pipe->state == PIPE_DEAD || !producer_running(pipe->producer))
        return; /* the process's other half is down: nothing is produced */
    if (!pipe_exactly_once(pipe)) {
        for (guint i = 0; i < n; i++)
            pipe_send(pipe, &records[i]);
        return;
    }
    gint32 generation = consumer_generation(consumer);
    if (generation != pipe->generation) {
        g_array_set_size(pipe->queue, 0); /* polled before a rebalance */
        pipe->generation = generation;
    }
    KSIM_ASSERT(pipe->queue->len <= PIPE_QUEUE_MAX - n);
    g_array_append_vals(pipe->queue, records, n);
    pipe_kick(pipe);
}

static void
pipe_init_done_cb(Producer *producer, KafkaError error, void *user_data)
{
    Pipe *pipe = user_data;
    (void)producer;
    if (error != KAFKA_ERROR_NONE) {
        pipe_dead(pipe);
        return;
    }
    pipe->state = PIPE_READY;
    pipe_kick(pipe);
}

static void
pipe_start(Pipe *pipe)
{
    g_array_set_size(pipe->queue, 0);
    g_array_set_size(pipe->batch, 0);
    if (!pipe_exactly_once(pipe)) {
        pipe->state = PIPE_READY;
        return;
    }
    pipe->state = PIPE_INIT;
    producer_init_transactions(pipe->producer, pipe_init_done_cb, pipe);
}

/* A new incarnation of the pipe's producer: what the old one held is gone. */
static void
pipe_started_cb(Producer *producer, void *user_data)
{
    Pipe *pipe = user_data;
    (void)producer;
    if (pipe->state != PIPE_DEAD)
        pipe_start(pipe);
}

static void
pipe_free(gpointer data)
{
    Pipe *pipe = data;
    producer_free(pipe->producer);
    g_array_free(pipe->queue, TRUE);
    g_array_free(pipe->batch, TRUE);
    g_free(pipe);
}

static Pipe *
pipe_new(RunnerClients *clients, Member *member, const GArray *bootstrap)
{
    const ScenarioConsumerGroup *spec = member->spec;
    guint32 process = PROCESS_FIRST + clients->producers->len + clients->members->len +
                      clients->pipes->len;
    g_autofree char *name = g_strdup_printf("pipeline-%s-%u", spec->name, member->instance);
    ProducerConfig config;
    kconfig_bind_producer_defaults(&config);
    config.transaction_version = clients->transaction_version;
    if (spec->exactly_once) {
        g_autofree char *id = g_strdup_printf("%s-%u", spec->group_id, member->instance);
        producer_config_set_transactional_id(&config, id);
        history_set_process_transactional_id(clients->history, process, id);
    }
    Pipe *pipe = g_new0(Pipe, 1);
    pipe->member = member;
    pipe->queue = g_array_new(FALSE, FALSE, sizeof(ConsumerRecord));
    pipe->batch = g_array_new(FALSE, FALSE, sizeof(ConsumerRecord));
    pipe->producer = producer_new(clients->world, name, process, bootstrap, &config,
                                  clients->history);
    history_set_process_pipeline(clients->history, process, spec->group_id);
    ProducerListener listener = {pipe_started_cb, NULL, pipe};
    producer_set_listener(pipe->producer, &listener);
    member->pipe = pipe;
    g_ptr_array_add(clients->pipes, pipe);
    pipe_start(pipe);
    consumer_start_polling(member->consumer, &spec->poll_interval, &spec->processing_time,
                           pipe_poll_cb, pipe);
    return pipe;
}

static void
pipes_new(RunnerClients *clients, Cluster *cluster)
{
    g_autoptr(GArray) bootstrap = cluster_bootstrap_nodes(cluster);
    for (guint i = 0; i < clients->members->len; i++) {
        Member *member = g_ptr_array_index(clients->members, i);
        if (member->spec->pipeline_output != NULL)
            pipe_new(clients, member, bootstrap);
    }
}

static void
members_new(RunnerClients *clients, Cluster *cluster, History *history,
            const ScenarioVariant *variant)
{
    g_autoptr(GArray) bootstrap = cluster_bootstrap_nodes(cluster);
    const GPtrArray *specs = scenario_variant_consumer_groups(variant);
    for (guint i = 0; i < specs->len; i++) {
        const ScenarioConsumerGroup *spec = g_ptr_array_index(specs, i);
        ConsumerConfig config;
        consumer_config_from(&config, spec);
        for (guint k = 1; k <= spec->members; k++) {
            guint32 process = PROCESS_FIRST + clients->producers->len + clients->members->len;
            g_autofree char *name = g_strdup_printf("consumer-%s-%u", spec->name, k);
            Member *member = g_new0(Member, 1);
            member->clients = clients;
            member->spec = spec;
            member->instance = k;
            member->consumer =
                consumer_new(clients->world, name, process, bootstrap, &config, history);
            history_set_process_group(history, process, spec->group_id);
            history_set_process_read_committed(history, process, config.isolation_level == 1);
            if (spec->pipeline_output == NULL) /* a pipe's loop starts with its pipe */
                consumer_start_polling(member->consumer, &spec->poll_interval,
                                       &spec->processing_time, NULL, NULL);
            g_ptr_array_add(clients->members, member);
            sim_world_schedule(clients->world, spec->start_ns, member_start_fire, NULL, clients,
                               member, 0);
            if (spec->stop_ns >= 0)
                sim_world_schedule(clients->world, spec->stop_ns, member_stop_fire, NULL, clients,
                                   member, 0);
        }
    }
}

RunnerClients *
runner_clients_new(SimWorld *world, Cluster *cluster, History *history,
                   const ScenarioVariant *variant)
{
    RunnerClients *clients = g_new0(RunnerClients, 1);
    clients->world = world;
    clients->history = history;
    clients->members = g_ptr_array_new_with_free_func(member_free);
    clients->pipes = g_ptr_array_new_with_free_func(pipe_free);
    clients->producers = g_ptr_array_new_with_free_func((GDestroyNotify)producer_free);
    clients->workloads = g_ptr_array_new_with_free_func((GDestroyNotify)workload_free);
    clients->names = g_ptr_array_new_with_free_func(g_free);
    clients->transaction_version = (gint32)kconfig_get_int64(
        scenario_variant_cluster(variant)->hardware, "transaction.version");
    g_autoptr(GArray) bootstrap = cluster_bootstrap_nodes(cluster);
    const GPtrArray *specs = scenario_variant_producers(variant);
    gint64 duration_ns = scenario_variant_duration_ns(variant);
    for (guint i = 0; i < specs->len; i++) {
        const ScenarioProducer *spec = g_ptr_array_index(specs, i);
        ProducerConfig config;
        kconfig_bind_producer_from(&config, spec->config);
        config.transaction_version = clients->transaction_version;
        WorkloadConfig workload;
        workload_config_from(&workload, spec, duration_ns);
        for (guint k = 0; k < spec->instances; k++) {
            guint32 process = PROCESS_FIRST + clients->producers->len;
            g_autofree char *name = spec->instances == 1
                                        ? g_strdup_printf("producer-%s", spec->name)
                                        : g_strdup_printf("producer-%s-%u", spec->name, k + 1);
            Producer *producer =
                producer_new(world, name, process, bootstrap, &config, history);
            if (config.transactional_id[0] != '\0')
                history_set_process_transactional_id(history, process, config.transactional_id);
            g_ptr_array_add(clients->producers, producer);
            g_ptr_array_add(clients->workloads, workload_new(world, name, producer, &workload));
            g_ptr_array_add(clients->names, g_strdup(spec->name));
        }
    }
    members_new(clients, cluster, history, variant);
    pipes_new(clients, cluster);
    return clients;
}

void
runner_clients_free(RunnerClients *clients)
{
    if (clients == NULL)
        return;
    /* Workloads drive producers: free them first. */
    g_ptr_array_free(clients->workloads, TRUE);
    g_ptr_array_free(clients->producers, TRUE);
    g_ptr_array_free(clients->pipes, TRUE);
    g_ptr_array_free(clients->members, TRUE);
    g_ptr_array_free(clients->names, TRUE);
    g_free(clients);
}

void
runner_clients_nodes(const RunnerClients *clients, const char *name, GArray *nodes)
{
    for (guint i = 0; i < clients->producers->len; i++) {
        if (strcmp(g_ptr_array_index(clients->names, i), name) != 0)
            continue;
        SimNodeId node = producer_node(g_ptr_array_index(clients->producers, i));
        g_array_append_val(nodes, node);
    }
}

void
runner_clients_consumer_nodes(const RunnerClients *clients, const char *name, guint instance,
                              GArray *nodes)
{
    for (guint i = 0; i < clients->members->len; i++) {
        const Member *member = g_ptr_array_index(clients->members, i);
        if (strcmp(member->spec->name, name) != 0 ||
            (instance != 0 && member->instance != instance))
            continue;
        SimNodeId node = consumer_node(member->consumer);
        g_array_append_val(nodes, node);
        if (member->pipe != NULL) {
            SimNodeId other = producer_node(member->pipe->producer);
            g_array_append_val(nodes, other);
        }
    }
}

void
runner_clients_check_invariants(const RunnerClients *clients)
{
    KSIM_ASSERT(clients->workloads->len == clients->producers->len);
    KSIM_ASSERT(clients->names->len == clients->producers->len);
    for (guint i = 0; i < clients->producers->len; i++) {
        producer_check_invariants(g_ptr_array_index(clients->producers, i));
        workload_check_invariants(g_ptr_array_index(clients->workloads, i));
    }
    for (guint i = 0; i < clients->members->len; i++) {
        const Member *member = g_ptr_array_index(clients->members, i);
        KSIM_ASSERT(member->instance >= 1 && member->instance <= member->spec->members);
        if (member->stopped)
            KSIM_ASSERT(!member->subscribed);
        consumer_check_invariants(member->consumer);
    }
    for (guint i = 0; i < clients->pipes->len; i++) {
        const Pipe *pipe = g_ptr_array_index(clients->pipes, i);
        KSIM_ASSERT(pipe->member->pipe == pipe);
        if (pipe->state != PIPE_BUSY)
            KSIM_ASSERT(pipe->batch->len == 0);
        if (pipe->state == PIPE_DEAD)
            KSIM_ASSERT(pipe->queue->len == 0);
        if (pipe_exactly_once(pipe))
            KSIM_ASSERT(pipe->state != PIPE_BUSY || pipe->batch->len > 0);
        producer_check_invariants(pipe->producer);
    }
}
