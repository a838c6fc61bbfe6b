/*
 * replica: the broker's replica manager — partitions and their logs, the leader
 * side of produce and fetch (with the produce and fetch purgatories), the ISR
 * and high watermark, and the follower side (fetchers, truncation in the two
 * modes, OffsetsForLeaderEpoch).
 *
 * Invariants (replica_check_invariants):
 *  1. hw <= LEO for every replica; a leader's hw never decreases in its term.
 *  2. The ISR is a subset of the replicas. (That a new leader is in its ISR is
 *     a cluster invariant the cluster's monitor records when broken; a run
 *     never aborts on it.)
 *  3. A follower partition is in exactly one fetcher (its leader's) once its
 *     leader is known; a leader partition is in none.
 *  4. A partition's delayed produces are ordered by required offset, and all
 *     have required offset > hw (completed ones leave the queue at once).
 *
 * Role transitions (replica_handle_leader_and_isr, for a newer leader epoch):
 *   any --leader == self--> LEADER   (make_leader: epoch cache entry at LEO,
 *                                     remote states reset, purgatory empty)
 *   any --leader != self--> FOLLOWER (make_follower: fail delayed produces,
 *                                     truncate to HW, or ask the leader for
 *                                     its epoch end offset, then fetch)
 */
#include "broker_internal.h"

#include "sim_assert.h"
#include "sim_disk.h"
#include "sim_net.h"

#include <stdio.h>
#include <string.h>


static void fetcher_maybe_send(BrokerState *state, Fetcher *fetcher);
static void maybe_increment_hw(BrokerState *state, Partition *p);
static void delayed_fetches_try_complete(BrokerState *state, const Partition *p,
                                         gboolean hw_moved);

/* ---- the partition table ---- */

static gint
partition_compare(gconstpointer a, gconstpointer b)
{
    const Partition *x = *(Partition *const *)a;
    const Partition *y = *(Partition *const *)b;
    return ktp_compare(&x->tp, &y->tp);
}

Partition *
replica_get(BrokerState *state, const KTopicPartition *tp)
{
    return g_hash_table_lookup(state->partitions, tp);
}

static Partition *
partition_add(BrokerState *state, const KTopicPartition *tp, Plog *log)
{
    Broker *broker = state->broker;
    Partition *p = g_new0(Partition, 1);
    p->tp = *tp;
    p->name = ktp_name(tp);
    p->log = log;
    p->config = *broker_topic_config(broker, tp->topic);
    p->leader_id = KAFKA_NO_LEADER;
    p->leader_epoch = -1;
    p->zk_version = -1;
    p->hw = 0;
    g_queue_init(&p->delayed_produce);
    g_hash_table_insert(state->partitions, &p->tp, p);
    g_ptr_array_add(state->partitions_sorted, p);
    g_ptr_array_sort(state->partitions_sorted, partition_compare);
    return p;
}

Partition *
replica_get_or_create(BrokerState *state, const KTopicPartition *tp)
{
    Partition *p = replica_get(state, tp);
    if (p != NULL)
        return p;
    Broker *broker = state->broker;
    const TopicConfig *config = broker_topic_config(broker, tp->topic);
    Plog *log = plog_open(broker->world, broker->node, tp->topic, (guint32)tp->partition,
                          &config->log);
    return partition_add(state, tp, log);
}

static void
delayed_produce_free(gpointer data)
{
    DelayedProduce *delayed = data;
    sim_timer_cancel(delayed->state->broker->world, delayed->timeout_timer);
    g_free(delayed);
}

void
replica_free(Partition *partition)
{
    g_queue_clear_full(&partition->delayed_produce, delayed_produce_free);
    plog_free(partition->log);
    g_free(partition->name);
    g_free(partition);
}

void
replica_fetcher_free(gpointer data)
{
    Fetcher *fetcher = data;
    g_ptr_array_free(fetcher->partitions, TRUE);
    g_free(fetcher);
}

static void
delayed_fetch_free(DelayedFetch *delayed)
{
    sim_timer_cancel(delayed->state->broker->world, delayed->timeout_timer);
    sim_msg_free(&delayed->request->base);
    g_array_free(delayed->sizes_at_delay, TRUE);
    g_free(delayed);
}

void
replica_state_free(BrokerState *state)
{
    for (guint i = 0; i < state->delayed_fetches->len; i++)
        delayed_fetch_free(g_ptr_array_index(state->delayed_fetches, i));
    g_ptr_array_free(state->delayed_fetches, TRUE);
    g_ptr_array_free(state->fetchers, TRUE);
    for (guint i = 0; i < state->partitions_sorted->len; i++)
        replica_free(g_ptr_array_index(state->partitions_sorted, i));
    g_ptr_array_free(state->partitions_sorted, TRUE);
    g_hash_table_destroy(state->partitions);
}

/* ---- recovery at start ---- */

/* Reads "topic partition hw" lines of the HW checkpoint into `out`. */
static void
read_hw_checkpoint(SimDisk *disk, GHashTable *out)
{
    gint64 size = sim_disk_size(disk, HW_CHECKPOINT_FILE);
    if (size <= 0)
        return;
    g_autofree char *text = g_malloc0((gsize)size + 1);
    sim_disk_read(disk, HW_CHECKPOINT_FILE, 0, text, (gsize)size);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (guint i = 2; lines[0] != NULL && lines[1] != NULL && lines[i] != NULL; i++) {
        char topic[KAFKA_TOPIC_NAME_MAX + 1];
        int partition;
        gint64 hw;
        if (sscanf(lines[i], "%63s %d %" G_GINT64_FORMAT, topic, &partition, &hw) != 3)
            continue;
        g_hash_table_insert(out, g_strdup_printf("%s-%d", topic, partition),
                            g_memdup2(&hw, sizeof hw));
    }
}

/* Splits a log directory name "topic-partition" at its last dash. */
static gboolean
parse_log_dir(const char *dir, KTopicPartition *tp)
{
    const char *dash = strrchr(dir, '-');
    if (dash == NULL || dash == dir || (gsize)(dash - dir) > KAFKA_TOPIC_NAME_MAX)
        return FALSE;
    char *end = NULL;
    gint64 partition = g_ascii_strtoll(dash + 1, &end, 10);
    if (end == dash + 1 || *end != '\0' || partition < 0)
        return FALSE;
    g_autofree char *topic = g_strndup(dir, (gsize)(dash - dir));
    ktp_set(tp, topic, (gint32)partition);
    return TRUE;
}

void
replica_load_logs(BrokerState *state)
{
    Broker *broker = state->broker;
    SimDisk *disk = sim_node_disk(broker->world, broker->node);
    g_autoptr(GHashTable) hws = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    read_hw_checkpoint(disk, hws);
    g_autoptr(GPtrArray) names = sim_disk_list(disk, "");
    char *previous = NULL;
    for (guint i = 0; i < names->len; i++) {
        const char *name = g_ptr_array_index(names, i);
        const char *slash = strchr(name, '/');
        if (slash == NULL)
            continue;
        g_autofree char *dir = g_strndup(name, (gsize)(slash - name));
        KTopicPartition tp;
        if ((previous != NULL && strcmp(previous, dir) == 0) || !parse_log_dir(dir, &tp))
            continue;
        g_free(previous);
        previous = g_strdup(dir);
        Partition *p = replica_get_or_create(state, &tp);
        const gint64 *hw = g_hash_table_lookup(hws, dir);
        p->hw = MIN(hw != NULL ? *hw : 0, plog_log_end_offset(p->log));
        p->hw = MAX(p->hw, plog_log_start_offset(p->log));
    }
    g_free(previous);
}

/* ---- fetchers (follower side) ---- */

static Fetcher *
fetcher_find(BrokerState *state, gint32 leader_id)
{
    for (guint i = 0; i < state->fetchers->len; i++) {
        Fetcher *fetcher = g_ptr_array_index(state->fetchers, i);
        if (fetcher->leader_id == leader_id)
            return fetcher;
    }
    return NULL;
}

static void
fetcher_remove_partition(BrokerState *state, Partition *p)
{
    for (guint i = 0; i < state->fetchers->len; i++) {
        Fetcher *fetcher = g_ptr_array_index(state->fetchers, i);
        g_ptr_array_remove(fetcher->partitions, p);
    }
    p->fetching = FALSE;
}

static void
fetcher_add_partition(BrokerState *state, Partition *p, gint32 leader_id, SimNodeId leader_node)
{
    Fetcher *fetcher = fetcher_find(state, leader_id);
    if (fetcher == NULL) {
        fetcher = g_new0(Fetcher, 1);
        fetcher->leader_id = leader_id;
        fetcher->partitions = g_ptr_array_new();
        g_ptr_array_add(state->fetchers, fetcher);
    }
    fetcher->node = leader_node;
    g_ptr_array_add(fetcher->partitions, p);
    g_ptr_array_sort(fetcher->partitions, partition_compare);
    p->fetching = TRUE;
    fetcher_maybe_send(state, fetcher);
}

static void
fetcher_backoff_done(SimWorld *world, void *ctx, void *arg)
{
    Broker *broker = ctx;
    (void)world;
    Fetcher *fetcher = fetcher_find(broker->state, GPOINTER_TO_INT(arg));
    if (fetcher == NULL)
        return;
    fetcher->backoff_timer = SIM_EVENT_ID_NONE;
    fetcher_maybe_send(broker->state, fetcher);
}

static void
fetcher_backoff(BrokerState *state, Fetcher *fetcher)
{
    Broker *broker = state->broker;
    fetcher->in_flight_correlation = 0;
    fetcher->epoch_request_in_flight = FALSE;
    sim_timer_cancel(broker->world, fetcher->timeout_timer);
    if (sim_timer_pending(broker->world, fetcher->backoff_timer))
        return;
    fetcher->backoff_timer =
        sim_timer_set(broker->world, broker->node,
                      broker->config.replica_fetch_backoff_ms * SIM_NS_PER_MS,
                      fetcher_backoff_done, GINT_TO_POINTER(fetcher->leader_id));
}

static void
fetcher_timeout(SimWorld *world, void *ctx, void *arg)
{
    Broker *broker = ctx;
    Fetcher *fetcher = fetcher_find(broker->state, GPOINTER_TO_INT(arg));
    if (fetcher == NULL)
        return;
    /* replica.socket.timeout.ms passed without an answer: close the
     * connection, as Kafka's network client does, and try again. */
    sim_net_close(sim_world_net(world), broker->node, fetcher->node);
    fetcher_backoff(broker->state, fetcher);
}

static void
fetcher_arm_timeout(BrokerState *state, Fetcher *fetcher)
{
    Broker *broker = state->broker;
    fetcher->timeout_timer = sim_timer_set(
        broker->world, broker->node, broker->config.replica_socket_timeout_ms * SIM_NS_PER_MS,
        fetcher_timeout, GINT_TO_POINTER(fetcher->leader_id));
}

static gboolean
fetcher_send_epoch_request(BrokerState *state, Fetcher *fetcher)
{
    KEpochMessage *request = NULL;
    for (guint i = 0; i < fetcher->partitions->len; i++) {
        Partition *p = g_ptr_array_index(fetcher->partitions, i);
        if (!p->truncation_pending)
            continue;
        if (request == NULL)
            request = kproto_new(KMSG_EPOCH_REQUEST);
        KEpochPartition entry = {0};
        entry.tp = p->tp;
        entry.current_leader_epoch = p->leader_epoch;
        entry.leader_epoch = plog_epoch_latest(p->log);
        g_array_append_val(request->partitions, entry);
    }
    if (request == NULL)
        return FALSE;
    request->correlation_id = state->correlation_next++;
    request->replica_id = state->broker->config.broker_id;
    fetcher->in_flight_correlation = request->correlation_id;
    fetcher->epoch_request_in_flight = TRUE;
    kproto_update_size(&request->base);
    broker_send(state, fetcher->node, &request->base);
    fetcher_arm_timeout(state, fetcher);
    return TRUE;
}

static void
fetcher_maybe_send(BrokerState *state, Fetcher *fetcher)
{
    Broker *broker = state->broker;
    if (fetcher->in_flight_correlation != 0 ||
        sim_timer_pending(broker->world, fetcher->backoff_timer) ||
        fetcher->partitions->len == 0 || fetcher->node == SIM_NODE_NONE)
        return;
    if (fetcher_send_epoch_request(state, fetcher))
        return;
    KFetchRequest *request = kproto_new(KMSG_FETCH_REQUEST);
    request->correlation_id = state->correlation_next++;
    request->replica_id = broker->config.broker_id;
    request->max_wait_ms = broker->config.replica_fetch_wait_max_ms;
    request->min_bytes = broker->config.replica_fetch_min_bytes;
    request->max_bytes = broker->config.replica_fetch_max_bytes;
    for (guint i = 0; i < fetcher->partitions->len; i++) {
        Partition *p = g_ptr_array_index(fetcher->partitions, i);
        KFetchPartition entry = {p->tp, plog_log_end_offset(p->log), p->leader_epoch,
                                 broker->config.replica_fetch_max_bytes};
        g_array_append_val(request->partitions, entry);
    }
    fetcher->in_flight_correlation = request->correlation_id;
    kproto_update_size(&request->base);
    broker_send(state, fetcher->node, &request->base);
    fetcher_arm_timeout(state, fetcher);
}

static Fetcher *
fetcher_for_response(BrokerState *state, SimNodeId from, gint32 correlation_id)
{
    for (guint i = 0; i < state->fetchers->len; i++) {
        Fetcher *fetcher = g_ptr_array_index(state->fetchers, i);
        if (fetcher->node == from && fetcher->in_flight_correlation == correlation_id)
            return fetcher;
    }
    return NULL;
}

void
replica_peer_disconnected(BrokerState *state, SimNodeId peer)
{
    for (guint i = 0; i < state->fetchers->len; i++) {
        Fetcher *fetcher = g_ptr_array_index(state->fetchers, i);
        if (fetcher->node == peer && fetcher->in_flight_correlation != 0)
            fetcher_backoff(state, fetcher);
    }
}

/* ---- truncation ---- */

static void
truncate_to(BrokerState *state, Partition *p, gint64 offset, const char *why)
{
    gint64 leo = plog_log_end_offset(p->log);
    if (offset >= leo)
        return;
    plog_truncate_to(p->log, offset);
    gint64 new_leo = plog_log_end_offset(p->log);
    p->hw = MIN(p->hw, new_leo);
    HistoryEvent fields = {0};
    fields.leader_epoch = p->leader_epoch;
    fields.offset = new_leo;
    fields.offset_end = leo;
    fields.hw = p->hw;
    broker_record_event(state->broker, HISTORY_EVENT_TRUNCATED, &p->tp, &fields,
                        "broker %d truncated %s from LEO %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT
                        " (%s)",
                        state->broker->config.broker_id, p->name, leo, new_leo, why);
}

/* ---- role changes ---- */

static void
fail_delayed_produces(BrokerState *state, Partition *p, KafkaError error);

static void
set_from_state(Partition *p, const KPartitionState *ps)
{
    p->leader_id = ps->leader;
    p->leader_epoch = ps->leader_epoch;
    p->controller_epoch = ps->controller_epoch;
    p->zk_version = ps->zk_version;
    p->n_replicas = ps->n_replicas;
    memcpy(p->replicas, ps->replicas, sizeof p->replicas);
    p->n_isr = ps->n_isr;
    memcpy(p->isr, ps->isr, sizeof p->isr);
}

static gboolean
in_isr(const Partition *p, gint32 broker_id)
{
    for (guint i = 0; i < p->n_isr; i++) {
        if (p->isr[i] == broker_id)
            return TRUE;
    }
    return FALSE;
}

static void
make_leader(BrokerState *state, Partition *p, const KPartitionState *ps)
{
    Broker *broker = state->broker;
    gint64 now = sim_now_ns(broker->world);
    set_from_state(p, ps);
    fetcher_remove_partition(state, p);
    p->is_leader = TRUE;
    p->truncation_pending = FALSE;
    /* An ISR update sent in an older epoch is answered for that epoch and
     * ignored then (isr_updated checks the epoch): it must not block this
     * term's ISR changes. */
    p->isr_update_in_flight = FALSE;
    gint64 leo = plog_log_end_offset(p->log);
    plog_epoch_assign(p->log, p->leader_epoch, leo);
    p->leader_epoch_start_offset = leo;
    p->n_remotes = 0;
    for (guint i = 0; i < p->n_replicas; i++) {
        if (p->replicas[i] == broker->config.broker_id)
            continue;
        RemoteReplica *remote = &p->remotes[p->n_remotes++];
        remote->broker_id = p->replicas[i];
        remote->leo = -1;
        remote->last_fetch_leader_leo = leo;
        remote->last_fetch_ns = now;
        remote->last_caught_up_ns = in_isr(p, remote->broker_id) ? now : 0;
    }
    HistoryEvent fields = {0};
    fields.leader_epoch = p->leader_epoch;
    fields.offset = leo;
    fields.hw = p->hw;
    fields.isr_mask = broker_isr_mask(p->isr, p->n_isr);
    broker_record_event(broker, HISTORY_EVENT_ELECTED, &p->tp, &fields,
                        "broker %d became leader of %s in epoch %d with LEO %" G_GINT64_FORMAT
                        " and HW %" G_GINT64_FORMAT,
                        broker->config.broker_id, p->name, p->leader_epoch, leo, p->hw);
    if (broker->observer.became_leader != NULL)
        broker->observer.became_leader(broker->observer.user_data, broker->config.broker_id,
                                       &p->tp, p->leader_epoch, leo);
    maybe_increment_hw(state, p);
    group_coord_partition_elected(state, p);
    txn_coord_partition_elected(state, p);
}

static void
make_follower(BrokerState *state, Partition *p, const KPartitionState *ps, SimNodeId leader_node)
{
    Broker *broker = state->broker;
    if (p->is_leader)
        fail_delayed_produces(state, p, KAFKA_ERROR_NOT_LEADER_OR_FOLLOWER);
    /* A coordinator whose offsets partition moved away unloads its groups. */
    group_coord_partition_resigned(state, p);
    txn_coord_partition_resigned(state, p);
    fetcher_remove_partition(state, p);
    set_from_state(p, ps);
    p->is_leader = FALSE;
    p->isr_update_in_flight = FALSE;
    p->n_remotes = 0;
    if (ps->leader == KAFKA_NO_LEADER)
        return;
    if (broker->config.truncation_mode == BROKER_TRUNCATE_HW) {
        truncate_to(state, p, p->hw, "follower truncates to its high watermark");
    } else {
        p->truncation_pending = TRUE;
    }
    fetcher_add_partition(state, p, ps->leader, leader_node);
}


void
replica_handle_leader_and_isr(BrokerState *state, KLeaderAndIsrRequest *request)
{
    gint32 self = state->broker->config.broker_id;
    for (guint i = 0; i < request->partitions->len; i++) {
        const KPartitionState *ps = &g_array_index(request->partitions, KPartitionState, i);
        if (!kpartition_state_has_replica(ps, self))
            continue;
        Partition *p = replica_get_or_create(state, &ps->tp);
        /* Only a newer leader epoch changes a replica's role (Kafka fences
         * LeaderAndIsr requests for an epoch it already has). */
        if (ps->leader_epoch <= p->leader_epoch)
            continue;
        if (ps->leader == self)
            make_leader(state, p, ps);
        else
            make_follower(state, p, ps, kbroker_endpoint_node(request->live_leaders, ps->leader));
    }
}

/* ---- the high watermark and the produce purgatory ---- */

static void
produce_respond(BrokerState *state, SimNodeId client, gint32 correlation_id,
                const KTopicPartition *tp, KafkaError error, gint64 base_offset, gint64 log_start)
{
    KProduceResponse *response = kproto_new(KMSG_PRODUCE_RESPONSE);
    response->correlation_id = correlation_id;
    response->tp = *tp;
    response->error = error;
    response->base_offset = error == KAFKA_ERROR_NONE ? base_offset : -1;
    response->log_start_offset = log_start;
    broker_send(state, client, &response->base);
}

static void
record_ack(BrokerState *state, Partition *p, gint64 base, gint64 end, gint16 acks)
{
    Broker *broker = state->broker;
    if (broker->history != NULL) {
        HistoryEvent fields = {0};
        fields.leader_epoch = p->leader_epoch;
        fields.offset = base;
        fields.offset_end = end;
        fields.hw = p->hw;
        fields.acks = acks;
        fields.isr_mask = broker_isr_mask(p->isr, p->n_isr);
        fields.time_ns = sim_now_ns(broker->world);
        fields.kind = HISTORY_EVENT_ACK;
        fields.broker = broker->config.broker_id;
        fields.topic = history_topic(broker->history, p->tp.topic);
        fields.partition = p->tp.partition;
        history_event(broker->history, &fields);
    }
    if (broker->observer.acked != NULL)
        broker->observer.acked(broker->observer.user_data, broker->config.broker_id, &p->tp, base,
                               end, p->isr, p->n_isr, acks);
}

static void
complete_delayed_produce(BrokerState *state, Partition *p, DelayedProduce *delayed,
                         KafkaError error)
{
    if (error == KAFKA_ERROR_NONE)
        record_ack(state, p, delayed->base_offset, delayed->required_offset, delayed->acks);
    ReplicaAppendCb done_cb = delayed->done_cb;
    guint64 done_id = delayed->done_id;
    gint64 base_offset = delayed->base_offset;
    if (done_cb == NULL)
        produce_respond(state, delayed->client, delayed->correlation_id, &delayed->tp, error,
                        delayed->base_offset, plog_log_start_offset(p->log));
    delayed_produce_free(delayed);
    /* Last: the callback may append again to this partition. */
    if (done_cb != NULL)
        done_cb(state, error, error == KAFKA_ERROR_NONE ? base_offset : -1, done_id);
}

/* Kafka's DelayedProduce.tryComplete: once the HW passes the batch, answer;
 * with an ISR smaller than min.insync.replicas, the answer is an error. */
static void
delayed_produces_try_complete(BrokerState *state, Partition *p)
{
    while (!g_queue_is_empty(&p->delayed_produce)) {
        DelayedProduce *delayed = g_queue_peek_head(&p->delayed_produce);
        if (delayed->required_offset > p->hw)
            break;
        g_queue_pop_head(&p->delayed_produce);
        KafkaError error = (gint32)p->n_isr < p->config.min_insync_replicas
                               ? KAFKA_ERROR_NOT_ENOUGH_REPLICAS_AFTER_APPEND
                               : KAFKA_ERROR_NONE;
        complete_delayed_produce(state, p, delayed, error);
    }
}

static void
fail_delayed_produces(BrokerState *state, Partition *p, KafkaError error)
{
    while (!g_queue_is_empty(&p->delayed_produce))
        complete_delayed_produce(state, p, g_queue_pop_head(&p->delayed_produce), error);
}

static void
set_hw(BrokerState *state, Partition *p, gint64 hw)
{
    Broker *broker = state->broker;
    gint64 old = p->hw;
    if (hw == old)
        return;
    p->hw = hw;
    if (broker->observer.hw_changed != NULL)
        broker->observer.hw_changed(broker->observer.user_data, broker->config.broker_id, &p->tp,
                                    p->is_leader, p->leader_epoch, old, hw);
}

/* HW = the smallest LEO in the ISR; it only moves forward. A follower in the
 * ISR whose LEO this leader has not learnt yet holds it back. */
static void
maybe_increment_hw(BrokerState *state, Partition *p)
{
    KSIM_ASSERT(p->is_leader);
    gint64 hw = plog_log_end_offset(p->log);
    for (guint i = 0; i < p->n_remotes; i++) {
        const RemoteReplica *remote = &p->remotes[i];
        if (in_isr(p, remote->broker_id))
            hw = MIN(hw, remote->leo);
    }
    if (hw <= p->hw)
        return;
    set_hw(state, p, hw);
    delayed_produces_try_complete(state, p);
    delayed_fetches_try_complete(state, p, TRUE);
}

static void
delayed_produce_timeout(SimWorld *world, void *ctx, void *arg)
{
    Broker *broker = ctx;
    DelayedProduce *delayed = arg;
    (void)world;
    Partition *p = replica_get(broker->state, &delayed->tp);
    KSIM_ASSERT(p != NULL);
    delayed->timeout_timer = SIM_EVENT_ID_NONE;
    gboolean removed = g_queue_remove(&p->delayed_produce, delayed);
    KSIM_ASSERT(removed);
    complete_delayed_produce(broker->state, p, delayed, KAFKA_ERROR_REQUEST_TIMED_OUT);
}

/* ---- produce (leader side) ---- */

static KafkaError
check_producer(Partition *p, const PlogBatch *batch, gint64 *duplicate_base)
{
    if (batch->producer_id < 0)
        return KAFKA_ERROR_NONE;
    PlogProducerVerdict verdict;
    plog_producer_check(p->log, batch->producer_id, batch->producer_epoch, batch->base_sequence,
                        batch->record_count, &verdict);
    switch (verdict.status) {
    case PLOG_PRODUCER_OK:
        return KAFKA_ERROR_NONE;
    case PLOG_PRODUCER_DUPLICATE:
        *duplicate_base = verdict.duplicate_base_offset;
        return KAFKA_ERROR_DUPLICATE_SEQUENCE_NUMBER;
    case PLOG_PRODUCER_OUT_OF_ORDER_SEQUENCE:
        return KAFKA_ERROR_OUT_OF_ORDER_SEQUENCE_NUMBER;
    case PLOG_PRODUCER_INVALID_PRODUCER_EPOCH:
        return KAFKA_ERROR_INVALID_PRODUCER_EPOCH;
    }
    return KAFKA_ERROR_UNKNOWN_PRODUCER_ID;
}

static void
answer_appended(BrokerState *state, Partition *p, SimNodeId from, const KProduceRequest *request,
                gint64 base, gint64 end)
{
    Broker *broker = state->broker;
    if (request->acks == 0) {
        record_ack(state, p, base, end, 0);
        return;
    }
    if (request->acks == 1 || end <= p->hw) {
        KafkaError error = KAFKA_ERROR_NONE;
        if (request->acks == -1 && (gint32)p->n_isr < p->config.min_insync_replicas)
            error = KAFKA_ERROR_NOT_ENOUGH_REPLICAS_AFTER_APPEND;
        if (error == KAFKA_ERROR_NONE)
            record_ack(state, p, base, end, request->acks);
        produce_respond(state, from, request->correlation_id, &p->tp, error, base,
                        plog_log_start_offset(p->log));
        return;
    }
    DelayedProduce *delayed = g_new0(DelayedProduce, 1);
    delayed->correlation_id = request->correlation_id;
    delayed->client = from;
    delayed->tp = p->tp;
    delayed->base_offset = base;
    delayed->required_offset = end;
    delayed->acks = request->acks;
    delayed->state = state;
    delayed->timeout_timer =
        sim_timer_set(broker->world, broker->node, MAX(request->timeout_ms, 0) * SIM_NS_PER_MS,
                      delayed_produce_timeout, delayed);
    g_queue_push_tail(&p->delayed_produce, delayed);
}

void
replica_handle_produce(BrokerState *state, SimNodeId from, KProduceRequest *request)
{
    Broker *broker = state->broker;
    Partition *p = replica_get(state, &request->tp);
    KafkaError error = KAFKA_ERROR_NONE;
    if (p == NULL)
        error = KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION;
    else if (!p->is_leader)
        error = KAFKA_ERROR_NOT_LEADER_OR_FOLLOWER;
    else if (request->acks == -1 && (gint32)p->n_isr < p->config.min_insync_replicas)
        error = KAFKA_ERROR_NOT_ENOUGH_REPLICAS;
    gint64 duplicate_base = -1;
    if (error == KAFKA_ERROR_NONE)
        error = check_producer(p, request->batch, &duplicate_base);
    if (error == KAFKA_ERROR_DUPLICATE_SEQUENCE_NUMBER) {
        /* A retried batch already in the log: answer as the first time. */
        answer_appended(state, p, from, request, duplicate_base,
                        duplicate_base + request->batch->record_count);
        return;
    }
    if (error != KAFKA_ERROR_NONE) {
        if (request->acks != 0)
            produce_respond(state, from, request->correlation_id, &request->tp, error, -1, -1);
        return;
    }
    request->batch->leader_epoch = p->leader_epoch;
    SimDiskStatus status = SIM_DISK_OK;
    gint64 base = plog_append(p->log, request->batch, broker_now_ms(broker), &status);
    if (status != SIM_DISK_OK) {
        if (request->acks != 0)
            produce_respond(state, from, request->correlation_id, &request->tp,
                            KAFKA_ERROR_KAFKA_STORAGE_ERROR, -1, -1);
        return;
    }
    gint64 end = base + request->batch->record_count;
    maybe_increment_hw(state, p);
    delayed_fetches_try_complete(state, p, FALSE);
    answer_appended(state, p, from, request, base, end);
}

/* A coordinator's batch for a producer (a transaction marker, a
 * transactional offset commit) whose epoch is older than the one the log
 * knows: a fenced producer's, refused as Kafka's ProducerStateManager does. */
static gboolean
producer_epoch_is_stale(const Partition *p, const PlogBatch *batch)
{
    gint16 epoch;
    if (batch->producer_id < 0 ||
        !plog_producer_state_lookup(plog_producer_state(p->log), batch->producer_id, &epoch, NULL))
        return FALSE;
    return epoch != PLOG_NO_PRODUCER_EPOCH && batch->producer_epoch < epoch;
}

void
replica_append_internal(BrokerState *state, const KTopicPartition *tp, PlogBatch *batch,
                        gint64 timeout_ms, ReplicaAppendCb done_cb, guint64 done_id)
{
    Broker *broker = state->broker;
    KSIM_ASSERT(done_cb != NULL);
    Partition *p = replica_get(state, tp);
    KafkaError error = KAFKA_ERROR_NONE;
    if (p == NULL)
        error = KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION;
    else if (!p->is_leader)
        error = KAFKA_ERROR_NOT_LEADER_OR_FOLLOWER;
    else if ((gint32)p->n_isr < p->config.min_insync_replicas)
        error = KAFKA_ERROR_NOT_ENOUGH_REPLICAS;
    else if (producer_epoch_is_stale(p, batch))
        error = KAFKA_ERROR_INVALID_PRODUCER_EPOCH;
    if (error != KAFKA_ERROR_NONE) {
        done_cb(state, error, -1, done_id);
        return;
    }
    batch->leader_epoch = p->leader_epoch;
    SimDiskStatus status = SIM_DISK_OK;
    gint64 base = plog_append(p->log, batch, broker_now_ms(broker), &status);
    if (status != SIM_DISK_OK) {
        done_cb(state, KAFKA_ERROR_KAFKA_STORAGE_ERROR, -1, done_id);
        return;
    }
    DelayedProduce *delayed = g_new0(DelayedProduce, 1);
    delayed->client = SIM_NODE_NONE;
    delayed->tp = p->tp;
    delayed->base_offset = base;
    delayed->required_offset = base + batch->record_count;
    delayed->acks = -1;
    delayed->state = state;
    delayed->done_cb = done_cb;
    delayed->done_id = done_id;
    delayed->timeout_timer =
        sim_timer_set(broker->world, broker->node, MAX(timeout_ms, 0) * SIM_NS_PER_MS,
                      delayed_produce_timeout, delayed);
    /* Queued before the HW may move, so a single-replica ISR completes it
     * at once through the purgatory like any other. */
    g_queue_push_tail(&p->delayed_produce, delayed);
    maybe_increment_hw(state, p);
    delayed_fetches_try_complete(state, p, FALSE);
}

/* ---- ISR changes ---- */

typedef struct {
    KTopicPartition tp;
    gint32 leader_epoch;
    KPartitionState proposed;
} IsrUpdate;

static void
isr_notification_created(void *owner, const ZkResult *result, void *arg)
{
    (void)owner;
    (void)result;
    (void)arg;
}

/* The ISR a leader wrote (or found written) at znode version `version`
 * becomes its own; an actual change is recorded and announced. */
static void
adopt_isr(BrokerState *state, Partition *p, const gint32 *isr, guint n_isr, gint32 version)
{
    p->zk_version = version;
    if (n_isr == p->n_isr && memcmp(isr, p->isr, sizeof(gint32) * n_isr) == 0)
        return;
    GString *before = g_string_new(NULL), *after = g_string_new(NULL);
    for (guint i = 0; i < p->n_isr; i++)
        g_string_append_printf(before, "%s%d", i ? "," : "", p->isr[i]);
    p->n_isr = (guint8)n_isr;
    memcpy(p->isr, isr, sizeof(gint32) * n_isr);
    for (guint i = 0; i < p->n_isr; i++)
        g_string_append_printf(after, "%s%d", i ? "," : "", p->isr[i]);
    HistoryEvent fields = {0};
    fields.leader_epoch = p->leader_epoch;
    fields.hw = p->hw;
    fields.isr_mask = broker_isr_mask(p->isr, p->n_isr);
    broker_record_event(state->broker, HISTORY_EVENT_ISR_CHANGED, &p->tp, &fields,
                        "leader %d changed the ISR of %s from [%s] to [%s]",
                        state->broker->config.broker_id, p->name, before->str, after->str);
    g_string_free(before, TRUE);
    g_string_free(after, TRUE);
    zk_client_create(state->zk, "/isr_change_notification/isr_change_", p->name,
                        strlen(p->name), ZK_SEQUENTIAL, isr_notification_created, NULL);
    maybe_increment_hw(state, p);
    delayed_produces_try_complete(state, p);
}

static Partition *
update_target(BrokerState *state, const IsrUpdate *update)
{
    Partition *p = replica_get(state, &update->tp);
    if (p == NULL || !p->is_leader || p->leader_epoch != update->leader_epoch)
        return NULL;
    return p;
}

/* After a BAD_VERSION: the znode as it is. If it still names this leader in
 * this epoch, the mismatch came from our own earlier write whose answer was
 * lost (a connection loss after the server applied it): adopt what is there
 * and its version, as Kafka's leader does since KAFKA-2729 (comparing the
 * znode's data with its own). Otherwise the controller moved on: wait for
 * its LeaderAndIsr. */
static void
isr_checked(void *owner, const ZkResult *result, void *arg)
{
    BrokerState *state = owner;
    IsrUpdate *update = arg;
    Partition *p = update_target(state, update);
    if (p != NULL) {
        p->isr_update_in_flight = FALSE;
        KPartitionState found = update->proposed;
        if (result->error == ZK_OK &&
            kpartition_state_parse((const char *)result->data, result->len, &found) &&
            found.leader == state->broker->config.broker_id &&
            found.leader_epoch == p->leader_epoch)
            adopt_isr(state, p, found.isr, found.n_isr, result->version);
    }
    broker_zk_context_done(state, update);
}

static void
isr_updated(void *owner, const ZkResult *result, void *arg)
{
    BrokerState *state = owner;
    IsrUpdate *update = arg;
    Partition *p = update_target(state, update);
    if (p != NULL && result->error == ZK_BAD_VERSION) {
        g_autofree char *path = g_strdup_printf("/brokers/topics/%s/partitions/%d/state",
                                                p->tp.topic, p->tp.partition);
        zk_client_get(state->zk, path, FALSE, isr_checked, update);
        return; /* the check's callback owns `update` now */
    }
    if (p != NULL) {
        p->isr_update_in_flight = FALSE;
        if (result->error == ZK_OK)
            adopt_isr(state, p, update->proposed.isr, update->proposed.n_isr, result->version);
    }
    broker_zk_context_done(state, update);
}

static void
propose_isr(BrokerState *state, Partition *p, const gint32 *isr, guint n_isr)
{
    IsrUpdate *update = broker_zk_context(state, sizeof(IsrUpdate));
    update->tp = p->tp;
    update->leader_epoch = p->leader_epoch;
    KPartitionState *ps = &update->proposed;
    ps->tp = p->tp;
    ps->leader = p->leader_id;
    ps->leader_epoch = p->leader_epoch;
    ps->controller_epoch = p->controller_epoch;
    ps->n_isr = (guint8)n_isr;
    memcpy(ps->isr, isr, sizeof(gint32) * n_isr);
    GString *data = g_string_new(NULL);
    kpartition_state_serialize(ps, data);
    g_autofree char *path =
        g_strdup_printf("/brokers/topics/%s/partitions/%d/state", p->tp.topic, p->tp.partition);
    p->isr_update_in_flight = TRUE;
    zk_client_set(state->zk, path, data->str, data->len, p->zk_version, isr_updated, update);
    g_string_free(data, TRUE);
}

static void
maybe_expand_isr(BrokerState *state, Partition *p, const RemoteReplica *remote)
{
    if (p->isr_update_in_flight || in_isr(p, remote->broker_id))
        return;
    if (remote->leo < p->hw || remote->leo < p->leader_epoch_start_offset)
        return;
    gint32 isr[KAFKA_REPLICAS_MAX];
    guint n = 0;
    for (guint i = 0; i < p->n_isr; i++)
        isr[n++] = p->isr[i];
    isr[n++] = remote->broker_id;
    propose_isr(state, p, isr, n);
}

void
replica_isr_expiration(BrokerState *state)
{
    Broker *broker = state->broker;
    gint64 now = sim_now_ns(broker->world);
    gint64 lag_max_ns = broker->config.replica_lag_time_max_ms * SIM_NS_PER_MS;
    for (guint i = 0; i < state->partitions_sorted->len; i++) {
        Partition *p = g_ptr_array_index(state->partitions_sorted, i);
        if (!p->is_leader || p->isr_update_in_flight)
            continue;
        gint32 isr[KAFKA_REPLICAS_MAX];
        guint n = 0;
        for (guint r = 0; r < p->n_isr; r++) {
            gint32 id = p->isr[r];
            gboolean lagging = FALSE;
            for (guint k = 0; k < p->n_remotes; k++) {
                if (p->remotes[k].broker_id == id)
                    lagging = now - p->remotes[k].last_caught_up_ns > lag_max_ns;
            }
            if (!lagging)
                isr[n++] = id;
        }
        if (n < p->n_isr)
            propose_isr(state, p, isr, n);
    }
}

/* Kafka's LogManager deletes old segments every
 * log.retention.check.interval.ms. */
void
replica_apply_retention(BrokerState *state)
{
    gint64 now_ms = broker_now_ms(state->broker);
    for (guint i = 0; i < state->partitions_sorted->len; i++) {
        Partition *p = g_ptr_array_index(state->partitions_sorted, i);
        /* Only what every replica has committed may go: below the HW. */
        plog_apply_retention_below(p->log, now_ms, p->hw);
    }
}

/* ---- fetch (leader side) ---- */

static RemoteReplica *
remote_of(Partition *p, gint32 broker_id)
{
    for (guint i = 0; i < p->n_remotes; i++) {
        if (p->remotes[i].broker_id == broker_id)
            return &p->remotes[i];
    }
    return NULL;
}

/* Kafka's Replica.updateFetchState: a follower is caught up if it fetched
 * from the leader's LEO, or from at least the LEO the leader had at the
 * follower's previous fetch (then it was caught up at that time). */
static void
update_follower_fetch_state(BrokerState *state, Partition *p, gint32 replica_id,
                            gint64 fetch_offset)
{
    RemoteReplica *remote = remote_of(p, replica_id);
    if (remote == NULL)
        return;
    gint64 now = sim_now_ns(state->broker->world);
    gint64 leo = plog_log_end_offset(p->log);
    if (fetch_offset >= leo)
        remote->last_caught_up_ns = MAX(remote->last_caught_up_ns, now);
    else if (fetch_offset >= remote->last_fetch_leader_leo)
        remote->last_caught_up_ns = MAX(remote->last_caught_up_ns, remote->last_fetch_ns);
    remote->leo = fetch_offset;
    remote->last_fetch_leader_leo = leo;
    remote->last_fetch_ns = now;
    maybe_expand_isr(state, p, remote);
    maybe_increment_hw(state, p);
}

static KafkaError
check_fetch_epoch(const Partition *p, gint32 current_leader_epoch)
{
    if (current_leader_epoch < 0 || current_leader_epoch == p->leader_epoch)
        return KAFKA_ERROR_NONE;
    return current_leader_epoch > p->leader_epoch ? KAFKA_ERROR_UNKNOWN_LEADER_EPOCH
                                                  : KAFKA_ERROR_FENCED_LEADER_EPOCH;
}

gint64
replica_last_stable_offset(const Partition *p)
{
    gint64 first_unstable = plog_first_unstable_offset(p->log);
    return first_unstable >= 0 ? MIN(p->hw, first_unstable) : p->hw;
}

static void
collect_aborted(const Partition *p, gint64 start, gint64 upper, GArray *out)
{
    g_autoptr(GArray) found = g_array_new(FALSE, FALSE, sizeof(PlogAbortedTxn));
    plog_txn_state_collect_aborted(plog_txn_state(p->log), start, upper, found);
    for (guint i = 0; i < found->len; i++) {
        const PlogAbortedTxn *aborted = &g_array_index(found, PlogAbortedTxn, i);
        KAbortedTxn entry = {aborted->producer_id, aborted->first_offset};
        g_array_append_val(out, entry);
    }
}

/* Reads one partition for a fetch; returns the bytes read. */
static gint64
read_partition(BrokerState *state, const KFetchRequest *request, const KFetchPartition *entry,
               KFetchPartitionResponse *out, gboolean update_follower)
{
    Partition *p = replica_get(state, &entry->tp);
    out->tp = entry->tp;
    if (p == NULL) {
        out->error = KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION;
        return 0;
    }
    if (!p->is_leader) {
        out->error = KAFKA_ERROR_NOT_LEADER_OR_FOLLOWER;
        return 0;
    }
    out->error = check_fetch_epoch(p, entry->current_leader_epoch);
    gint64 leo = plog_log_end_offset(p->log);
    gint64 log_start = plog_log_start_offset(p->log);
    if (out->error == KAFKA_ERROR_NONE && (entry->fetch_offset > leo || entry->fetch_offset < log_start))
        out->error = KAFKA_ERROR_OFFSET_OUT_OF_RANGE;
    if (out->error == KAFKA_ERROR_NONE && update_follower && request->replica_id >= 0)
        update_follower_fetch_state(state, p, request->replica_id, entry->fetch_offset);
    out->high_watermark = p->hw;
    out->log_start_offset = log_start;
    out->last_stable_offset = replica_last_stable_offset(p);
    out->log_end_offset = leo;
    if (out->error != KAFKA_ERROR_NONE)
        return 0;
    if (request->replica_id >= 0) {
        /* Followers read up to the LEO, as the log holds the batches. */
        out->encoded = g_byte_array_new();
        plog_read_encoded(p->log, entry->fetch_offset, entry->max_bytes, leo, out->encoded,
                          &out->encoded_size_bytes);
        return out->encoded_size_bytes;
    }
    /* Consumers see only what is below the high watermark; read_committed
     * ones only what is below the LSO, with the aborted transactions that
     * overlap it. */
    out->batches = plog_batch_array_new();
    gint64 limit = p->hw;
    if (request->isolation == KAFKA_READ_COMMITTED) {
        limit = out->last_stable_offset;
        out->aborted_transactions = g_array_new(FALSE, FALSE, sizeof(KAbortedTxn));
        collect_aborted(p, entry->fetch_offset, limit, out->aborted_transactions);
    }
    if (entry->fetch_offset >= limit)
        return 0;
    plog_read(p->log, entry->fetch_offset, entry->max_bytes, out->batches);
    gint64 bytes = 0;
    for (guint i = 0; i < out->batches->len; i++) {
        PlogBatch *batch = g_ptr_array_index(out->batches, i);
        if (batch->base_offset >= limit) {
            g_ptr_array_set_size(out->batches, i);
            break;
        }
        bytes += plog_batch_size_bytes(batch);
    }
    return bytes;
}

/* Builds the response; returns the bytes of records it carries and whether
 * any partition had an error. */
static KFetchResponse *
fetch_build_response(BrokerState *state, const KFetchRequest *request, gboolean update_follower,
                     gint64 *bytes, gboolean *errors)
{
    KFetchResponse *response = kproto_new(KMSG_FETCH_RESPONSE);
    response->correlation_id = request->correlation_id;
    *bytes = 0;
    *errors = FALSE;
    for (guint i = 0; i < request->partitions->len; i++) {
        const KFetchPartition *entry = &g_array_index(request->partitions, KFetchPartition, i);
        KFetchPartitionResponse out = {0};
        *bytes += read_partition(state, request, entry, &out, update_follower);
        *errors = *errors || out.error != KAFKA_ERROR_NONE;
        g_array_append_val(response->partitions, out);
    }
    kproto_update_size(&response->base);
    return response;
}

static void
delayed_fetch_complete(BrokerState *state, DelayedFetch *delayed)
{
    gint64 bytes;
    gboolean errors;
    KFetchResponse *response =
        fetch_build_response(state, delayed->request, TRUE, &bytes, &errors);
    broker_send(state, delayed->client, &response->base);
    g_ptr_array_remove(state->delayed_fetches, delayed);
    delayed_fetch_free(delayed);
}

static void
delayed_fetch_timeout(SimWorld *world, void *ctx, void *arg)
{
    Broker *broker = ctx;
    DelayedFetch *delayed = arg;
    (void)world;
    delayed->timeout_timer = SIM_EVENT_ID_NONE;
    delayed_fetch_complete(broker->state, delayed);
}

static gboolean
fetch_watches(const KFetchRequest *request, const Partition *p)
{
    for (guint i = 0; i < request->partitions->len; i++) {
        const KFetchPartition *entry = &g_array_index(request->partitions, KFetchPartition, i);
        if (ktp_equal(&entry->tp, &p->tp))
            return TRUE;
    }
    return FALSE;
}

/* The logical size of each requested partition's log now (0 if absent). */
static void
log_sizes(BrokerState *state, const KFetchRequest *request, GArray *out)
{
    g_array_set_size(out, 0);
    for (guint i = 0; i < request->partitions->len; i++) {
        const KFetchPartition *entry = &g_array_index(request->partitions, KFetchPartition, i);
        Partition *q = replica_get(state, &entry->tp);
        gint64 size = q != NULL ? plog_size_bytes(q->log) : 0;
        g_array_append_val(out, size);
    }
}

/* Bytes appended to the watched logs since the fetch was delayed. */
static gint64
bytes_since_delay(BrokerState *state, const DelayedFetch *delayed)
{
    const KFetchRequest *request = delayed->request;
    gint64 bytes = 0;
    for (guint i = 0; i < request->partitions->len; i++) {
        const KFetchPartition *entry = &g_array_index(request->partitions, KFetchPartition, i);
        Partition *q = replica_get(state, &entry->tp);
        if (q == NULL || !q->is_leader)
            return G_MAXINT64; /* an error to report: answer now */
        bytes += MAX(plog_size_bytes(q->log) - g_array_index(delayed->sizes_at_delay, gint64, i),
                     0);
    }
    return bytes;
}

/* New data in `p`, or a new HW: a long-polling fetch that watches it answers
 * once replica.fetch.min.bytes (fetch.min.bytes) have accumulated, as Kafka's
 * DelayedFetch.tryComplete does; a consumer, which reads below the HW only,
 * answers when the HW moves (records it waited for may already be in the
 * log). */
static void
delayed_fetches_try_complete(BrokerState *state, const Partition *p, gboolean hw_moved)
{
    g_autoptr(GPtrArray) ready = g_ptr_array_new();
    for (guint i = 0; i < state->delayed_fetches->len; i++) {
        DelayedFetch *delayed = g_ptr_array_index(state->delayed_fetches, i);
        if (!fetch_watches(delayed->request, p))
            continue;
        gboolean consumer = delayed->request->replica_id < 0;
        if ((consumer && hw_moved) ||
            bytes_since_delay(state, delayed) >= delayed->request->min_bytes)
            g_ptr_array_add(ready, delayed);
    }
    /* Completing one may complete others (a follower's fetch moves the HW),
     * so each is looked up again before it is answered. */
    for (guint i = 0; i < ready->len; i++) {
        if (g_ptr_array_find(state->delayed_fetches, g_ptr_array_index(ready, i), NULL))
            delayed_fetch_complete(state, g_ptr_array_index(ready, i));
    }
}

void
replica_handle_fetch(BrokerState *state, SimNodeId from, KFetchRequest *request)
{
    Broker *broker = state->broker;
    gint64 bytes;
    gboolean errors;
    KFetchResponse *response = fetch_build_response(state, request, TRUE, &bytes, &errors);
    if (errors || bytes >= request->min_bytes || request->max_wait_ms <= 0) {
        broker_send(state, from, &response->base);
        sim_msg_free(&request->base);
        return;
    }
    sim_msg_free(&response->base);
    DelayedFetch *delayed = g_new0(DelayedFetch, 1);
    delayed->request = request;
    delayed->sizes_at_delay = g_array_new(FALSE, FALSE, sizeof(gint64));
    log_sizes(state, request, delayed->sizes_at_delay);
    delayed->client = from;
    delayed->state = state;
    delayed->timeout_timer = sim_timer_set(broker->world, broker->node,
                                           request->max_wait_ms * SIM_NS_PER_MS,
                                           delayed_fetch_timeout, delayed);
    g_ptr_array_add(state->delayed_fetches, delayed);
}

/* ---- fetch responses (follower side) ---- */

static gboolean
follows(const Partition *p, const Fetcher *fetcher)
{
    return p != NULL && !p->is_leader && p->fetching && p->leader_id == fetcher->leader_id &&
           !p->truncation_pending;
}

/* The position in `data` of the first batch that ends at or past `leo`;
 * a batch that starts below it straddles the follower's LEO (their logs
 * diverged at batch boundaries that differ), and the follower truncates to
 * its base offset first, as Kafka's follower does on an unexpected append
 * offset. */
static gsize
first_needed_batch(BrokerState *state, Partition *p, const GByteArray *data)
{
    gsize position = 0;
    while (position < data->len) {
        PlogBatchHeader header;
        if (!plog_batch_header_decode(data->data + position, data->len - position, &header))
            return data->len;
        gint64 leo = plog_log_end_offset(p->log);
        if (plog_batch_header_last_offset(&header) >= leo) {
            if (header.base_offset < leo)
                truncate_to(state, p, header.base_offset,
                            "follower truncates to the start of a leader batch that straddles "
                            "its LEO");
            return position;
        }
        position += (gsize)plog_batch_header_encoded_bytes(&header);
    }
    return position;
}

static void
follower_append(BrokerState *state, Partition *p, const KFetchPartitionResponse *data)
{
    Broker *broker = state->broker;
    if (data->encoded != NULL && data->encoded->len > 0) {
        gsize start = first_needed_batch(state, p, data->encoded);
        SimDiskStatus status = SIM_DISK_OK;
        if (start < data->encoded->len)
            plog_append_encoded_as_follower(p->log, data->encoded->data + start,
                                            data->encoded->len - start, broker_now_ms(broker),
                                            &status);
    }
    gint64 leo = plog_log_end_offset(p->log);
    set_hw(state, p, MAX(MIN(leo, data->high_watermark), plog_log_start_offset(p->log)));
}

/* OFFSET_OUT_OF_RANGE: a follower ahead of its leader truncates to the
 * leader's LEO (how the HW design makes replicas lose committed records); one
 * behind the leader's log start starts over from there. */
static void
follower_out_of_range(BrokerState *state, Partition *p, const KFetchPartitionResponse *data)
{
    gint64 leo = plog_log_end_offset(p->log);
    if (data->log_end_offset < leo) {
        truncate_to(state, p, data->log_end_offset,
                    "follower ahead of its leader truncates to the leader's LEO");
        return;
    }
    plog_truncate_fully_and_start_at(p->log, data->log_start_offset);
    p->hw = data->log_start_offset;
}

void
replica_handle_fetch_response(BrokerState *state, SimNodeId from, KFetchResponse *response)
{
    Fetcher *fetcher = fetcher_for_response(state, from, response->correlation_id);
    if (fetcher == NULL || fetcher->epoch_request_in_flight)
        return;
    sim_timer_cancel(state->broker->world, fetcher->timeout_timer);
    fetcher->in_flight_correlation = 0;
    gboolean backoff = FALSE;
    for (guint i = 0; i < response->partitions->len; i++) {
        const KFetchPartitionResponse *data =
            &g_array_index(response->partitions, KFetchPartitionResponse, i);
        Partition *p = replica_get(state, &data->tp);
        if (!follows(p, fetcher))
            continue;
        if (data->error == KAFKA_ERROR_NONE) {
            gint64 leo = plog_log_end_offset(p->log);
            follower_append(state, p, data);
            /* Data that could not be appended (a disk error, a corrupt
             * batch) must not turn the fetcher into a busy loop. */
            if (data->encoded != NULL && data->encoded->len > 0 &&
                plog_log_end_offset(p->log) == leo)
                backoff = TRUE;
        }
        else if (data->error == KAFKA_ERROR_OFFSET_OUT_OF_RANGE)
            follower_out_of_range(state, p, data);
        else
            backoff = TRUE;
    }
    if (backoff)
        fetcher_backoff(state, fetcher);
    else
        fetcher_maybe_send(state, fetcher);
}

/* ---- OffsetsForLeaderEpoch ---- */

void
replica_handle_epoch_request(BrokerState *state, SimNodeId from, KEpochMessage *request)
{
    KEpochMessage *response = kproto_new(KMSG_EPOCH_RESPONSE);
    response->correlation_id = request->correlation_id;
    response->replica_id = request->replica_id;
    for (guint i = 0; i < request->partitions->len; i++) {
        KEpochPartition entry = g_array_index(request->partitions, KEpochPartition, i);
        Partition *p = replica_get(state, &entry.tp);
        entry.end_epoch = -1;
        entry.end_offset = -1;
        if (p == NULL || !p->is_leader)
            entry.error = KAFKA_ERROR_NOT_LEADER_OR_FOLLOWER;
        else
            entry.error = check_fetch_epoch(p, entry.current_leader_epoch);
        if (entry.error == KAFKA_ERROR_NONE)
            plog_epoch_end_offset(p->log, entry.leader_epoch, &entry.end_epoch, &entry.end_offset);
        g_array_append_val(response->partitions, entry);
    }
    kproto_update_size(&response->base);
    broker_send(state, from, &response->base);
}

/* Kafka's AbstractFetcherThread.getOffsetTruncationState (KIP-279). */
static void
truncate_by_epoch(BrokerState *state, Partition *p, const KEpochPartition *answer)
{
    gint64 leo = plog_log_end_offset(p->log);
    if (answer->end_offset < 0) {
        /* The leader knows no epoch for us: fall back to the HW. */
        truncate_to(state, p, p->hw, "no epoch known to the leader: truncate to the HW");
        p->truncation_pending = FALSE;
        return;
    }
    gint32 follower_epoch;
    gint64 follower_end;
    plog_epoch_end_offset(p->log, answer->end_epoch, &follower_epoch, &follower_end);
    if (follower_epoch != answer->end_epoch) {
        /* We do not have the leader's epoch: cut back to the end of our
         * largest epoch below it and ask again. */
        truncate_to(state, p, MIN(follower_end < 0 ? leo : follower_end, leo),
                    "follower truncates to the end of its epoch below the leader's");
        return;
    }
    gint64 target = MIN(answer->end_offset, follower_end < 0 ? leo : follower_end);
    truncate_to(state, p, target, "follower truncates to its epoch's end offset at the leader");
    p->truncation_pending = FALSE;
}

void
replica_handle_epoch_response(BrokerState *state, SimNodeId from, KEpochMessage *response)
{
    Fetcher *fetcher = fetcher_for_response(state, from, response->correlation_id);
    if (fetcher == NULL || !fetcher->epoch_request_in_flight)
        return;
    sim_timer_cancel(state->broker->world, fetcher->timeout_timer);
    fetcher->in_flight_correlation = 0;
    fetcher->epoch_request_in_flight = FALSE;
    gboolean backoff = FALSE;
    for (guint i = 0; i < response->partitions->len; i++) {
        const KEpochPartition *answer = &g_array_index(response->partitions, KEpochPartition, i);
        Partition *p = replica_get(state, &answer->tp);
        if (p == NULL || p->is_leader || !p->fetching || !p->truncation_pending ||
            p->leader_id != fetcher->leader_id)
            continue;
        if (answer->error != KAFKA_ERROR_NONE)
            backoff = TRUE;
        else
            truncate_by_epoch(state, p, answer);
    }
    if (backoff)
        fetcher_backoff(state, fetcher);
    else
        fetcher_maybe_send(state, fetcher);
}

/* ---- invariants ---- */

void
replica_check_invariants(const BrokerState *state)
{
    for (guint i = 0; i < state->partitions_sorted->len; i++) {
        const Partition *p = g_ptr_array_index(state->partitions_sorted, i);
        KSIM_ASSERT(p->hw <= plog_log_end_offset(p->log));
        if (p->is_leader)
            KSIM_ASSERT(!p->fetching);
        for (guint k = 0; k < p->n_isr; k++) {
            gboolean assigned = FALSE;
            for (guint r = 0; r < p->n_replicas; r++)
                assigned = assigned || p->replicas[r] == p->isr[k];
            KSIM_ASSERT(assigned);
        }
        gint64 previous = -1;
        for (GList *l = p->delayed_produce.head; l != NULL; l = l->next) {
            const DelayedProduce *delayed = l->data;
            KSIM_ASSERT(delayed->required_offset >= previous);
            KSIM_ASSERT(delayed->required_offset > p->hw);
            previous = delayed->required_offset;
        }
    }
}

/* ---- WriteTxnMarkers (a partition leader's side) ---- */

/* Kafka appends markers with the broker's request.timeout.ms. */
#define MARKER_APPEND_TIMEOUT_MS 30000
/* A marker's control record: Kafka's ControlRecord key and value. */
#define MARKER_RECORD_BYTES 10

/* One WriteTxnMarkers request waiting for its markers to be replicated. */
typedef struct {
    guint64 id;
    SimNodeId coordinator;
    gint32 correlation_id;
    gint64 producer_id;
    gint16 producer_epoch;
    gboolean committed;
    GArray *partitions; /* KTxnMarkerPartition */
    guint remaining;    /* markers not yet answered */
} PendingMarkers;

static void
pending_markers_free(gpointer data)
{
    PendingMarkers *pending = data;
    g_array_free(pending->partitions, TRUE);
    g_free(pending);
}

void
replica_markers_state_init(BrokerState *state)
{
    state->pending_markers = g_ptr_array_new_with_free_func(pending_markers_free);
}

void
replica_markers_state_free(BrokerState *state)
{
    g_ptr_array_free(state->pending_markers, TRUE);
}

static PendingMarkers *
pending_markers_find(BrokerState *state, guint64 id)
{
    for (guint i = 0; i < state->pending_markers->len; i++) {
        PendingMarkers *pending = g_ptr_array_index(state->pending_markers, i);
        if (pending->id == id)
            return pending;
    }
    return NULL;
}

static void
markers_respond(BrokerState *state, PendingMarkers *pending)
{
    KTxnMarkersMessage *response = kproto_new(KMSG_WRITE_TXN_MARKERS_RESPONSE);
    response->correlation_id = pending->correlation_id;
    response->producer_id = pending->producer_id;
    response->producer_epoch = pending->producer_epoch;
    response->committed = pending->committed;
    g_array_append_vals(response->partitions, pending->partitions->data, pending->partitions->len);
    kproto_update_size(&response->base);
    broker_send(state, pending->coordinator, &response->base);
    g_ptr_array_remove(state->pending_markers, pending);
}

/* The marker of partition index `done_id & 0xffff` of request
 * `done_id >> 16` was replicated (or failed). */
static void
marker_appended(BrokerState *state, KafkaError error, gint64 base_offset, guint64 done_id)
{
    (void)base_offset;
    PendingMarkers *pending = pending_markers_find(state, done_id >> 16);
    guint index = (guint)(done_id & 0xffff);
    if (pending == NULL)
        return;
    KTxnMarkerPartition *entry = &g_array_index(pending->partitions, KTxnMarkerPartition, index);
    entry->error = error;
    if (error == KAFKA_ERROR_NONE) {
        /* Kafka's GroupCoordinator.onTransactionCompleted: the group
         * coordinator makes the transaction's offsets visible, or drops them. */
        group_coord_txn_completed(state, &entry->tp, pending->producer_id, pending->committed);
    }
    KSIM_ASSERT(pending->remaining > 0);
    if (--pending->remaining == 0)
        markers_respond(state, pending);
}

/* Kafka's ReplicaManager.appendRecords of the markers with acks=-1: each
 * partition this broker leads gets a control batch of the producer's id and
 * epoch; the answer goes back once all are replicated or failed. */
void
replica_handle_write_txn_markers(BrokerState *state, SimNodeId from,
                                 const KTxnMarkersMessage *request)
{
    KSIM_ASSERT(request->partitions->len > 0 && request->partitions->len <= 0xffff);
    PendingMarkers *pending = g_new0(PendingMarkers, 1);
    pending->id = ++state->marker_next;
    pending->coordinator = from;
    pending->correlation_id = request->correlation_id;
    pending->producer_id = request->producer_id;
    pending->producer_epoch = request->producer_epoch;
    pending->committed = request->committed;
    pending->partitions = g_array_copy(request->partitions);
    pending->remaining = pending->partitions->len + 1; /* + this call's hold */
    g_ptr_array_add(state->pending_markers, pending);
    guint64 id = pending->id;
    for (guint i = 0; i < request->partitions->len; i++) {
        const KTxnMarkerPartition *entry =
            &g_array_index(request->partitions, KTxnMarkerPartition, i);
        g_autoptr(PlogBatch) batch = plog_batch_new();
        batch->producer_id = request->producer_id;
        batch->producer_epoch = request->producer_epoch;
        batch->attributes = PLOG_BATCH_TRANSACTIONAL | PLOG_BATCH_CONTROL |
                            (request->committed ? PLOG_BATCH_CONTROL_COMMIT : 0);
        plog_batch_add_record(batch, request->committed ? PLOG_CONTROL_COMMIT_KEY
                                                        : PLOG_CONTROL_ABORT_KEY,
                              0, MARKER_RECORD_BYTES);
        batch->first_timestamp_ms = broker_now_ms(state->broker);
        batch->max_timestamp_ms = batch->first_timestamp_ms;
        replica_append_internal(state, &entry->tp, batch, MARKER_APPEND_TIMEOUT_MS,
                                marker_appended, id << 16 | i);
    }
    /* Release the hold: answers now if every append completed at once. */
    pending = pending_markers_find(state, id);
    KSIM_ASSERT(pending != NULL && pending->remaining > 0);
    if (--pending->remaining == 0)
        markers_respond(state, pending);
}
