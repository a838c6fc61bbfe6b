/*
 * replica_fetch: the leader side of Fetch (Kafka's ReplicaManager.fetchMessages)
 * and of OffsetsForLeaderEpoch. A follower's fetch reads up to the LEO and
 * tells the leader how far the follower got (its remote state: the ISR in
 * replica_isr.c, the HW in replica_hw.c); a consumer's reads below the HW, or
 * the LSO for read_committed. A fetch with less than min.bytes to return
 * waits in the fetch purgatory (Kafka's DelayedFetch) until enough arrives,
 * the HW moves (for a consumer), a partition it reads stops being led here,
 * or max.wait.ms passes. A fetch in an incremental fetch session (KIP-227,
 * fetch_session.h) reads the partitions of its session that may have
 * changed, the way Kafka's walk of every partition would find them, and is
 * answered with those that did: a partition whose read answered nothing and
 * left nothing to do is quiet (fetch_quiet) until replica_fetch_appended,
 * replica_fetch_try_complete or replica_fetch_touch touches it.
 *
 * Invariants (replica_fetch_check_invariants):
 *  1. Every delayed fetch owns its request and has its timeout pending.
 *  2. A delayed fetch outside a session is on the watch list
 *     (Partition.fetch_watchers) of each requested partition this broker
 *     has, and leaves them all when it is answered
 *     (replica_delayed_fetch_free): an append or a new HW looks at its
 *     partition's watchers only. A delayed fetch in a session waits on its
 *     session (fetch_session_wait), which its partitions find.
 *  3. A delayed fetch outside a session remembers, per requested partition,
 *     the broker's replica of it or NULL (DelayedFetch.partitions): it is
 *     looked up by name once, not on each append to a partition it watches.
 *  4. The fetch session cache holds its invariants
 *     (fetch_session_cache_check_invariants).
 *  5. A quiet partition of a session reads as it last did: led here in the
 *     epoch asked, the HW and log start its session last told, a follower
 *     at the LEO with its fetch state as that read left it and nothing for
 *     the ISR or HW to do, a consumer at the HW or LSO (check_quiet).
 *
 * Transitions of a delayed fetch (replica_handle_fetch delays it):
 *   WAITING --enough bytes, the HW moved for a consumer, or a partition
 *           no longer led here--> answered (replica_fetch_try_complete)
 *   WAITING --max.wait.ms--> answered with what there is (delayed_fetch_timeout)
 */
#include "replica.h"

#include "replica_internal.h"
#include "sim_assert.h"
#include "sim_disk.h"

/* ---- fetch (leader side) ---- */

/* Removes every occurrence of `delayed` from `watchers` in one pass,
 * keeping the others in their order (the order they complete in). */
static void
watchers_remove(GPtrArray *watchers, const DelayedFetch *delayed)
{
    guint kept = 0;
    for (guint i = 0; i < watchers->len; i++) {
        gpointer watcher = g_ptr_array_index(watchers, i);
        if (watcher != delayed)
            watchers->pdata[kept++] = watcher;
    }
    g_ptr_array_set_size(watchers, kept);
}

void
replica_delayed_fetch_free(DelayedFetch *delayed)
{
    BrokerState *state = delayed->state;
    sim_timer_cancel(state->broker->world, delayed->timeout_timer);
    for (guint i = 0; delayed->watched != NULL && i < delayed->watched->len; i++) {
        Partition *p = g_ptr_array_index(delayed->watched, i);
        watchers_remove(p->fetch_watchers, delayed);
    }
    if (delayed->watched != NULL)
        g_ptr_array_free(delayed->watched, TRUE);
    if (delayed->partitions != NULL)
        g_ptr_array_free(delayed->partitions, TRUE);
    if (delayed->suspects != NULL)
        g_ptr_array_free(delayed->suspects, TRUE);
    fetch_session_context_release(state->fetch_sessions, &delayed->context);
    sim_msg_free(&delayed->request->base);
    g_free(delayed);
}

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
    /* Its fetch times as every session's quiet reads left them. */
    fetch_session_cache_settle(state->fetch_sessions, p);
    gint64 now = sim_now_ns(state->broker->world);
    gint64 leo = plog_log_end_offset(p->log);
    if (fetch_offset >= leo)
        remote->last_caught_up_ns = MAX(remote->last_caught_up_ns, now);
    else if (fetch_offset >= remote->last_fetch_leader_leo)
        remote->last_caught_up_ns = MAX(remote->last_caught_up_ns, remote->last_fetch_ns);
    /* What a quiet read of it in a session takes as given (fetch_quiet). */
    gboolean moved = remote->leo != fetch_offset || remote->last_fetch_leader_leo != leo;
    remote->leo = fetch_offset;
    remote->last_fetch_leader_leo = leo;
    remote->last_fetch_ns = now;
    if (moved)
        replica_fetch_touch(state, p, FALSE);
    replica_isr_maybe_expand(state, p, remote);
    replica_hw_maybe_increment(state, p);
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

/* Reads one partition, `p` (NULL: this broker has none), for a fetch;
 * returns the bytes read. */
static gint64
read_partition(BrokerState *state, Partition *p, const KFetchRequest *request,
               const KFetchPartition *entry, KFetchPartitionResponse *out, gboolean update_follower)
{
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
    /* As Kafka's Partition.fetchRecords and UnifiedLog.read (3.x), for a
     * follower and a consumer alike: an offset below the log start (which
     * retention moved past it) or above the LEO is OFFSET_OUT_OF_RANGE, and
     * the answer carries the log start and HW the consumer resets to. A
     * delayed fetch is read again when it completes, so a segment deleted
     * while it waited is answered the same way. */
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
        /* Followers read up to the LEO, as the log holds the batches. One
         * that has it all gets no buffer (nothing to read, no disk read),
         * which spares an idle partition an allocation on every fetch. */
        if (entry->fetch_offset >= leo)
            return 0;
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

/* A fetch response whose reads missed the page cache goes out once the
 * disk has read them (sim_disk.h, "Timing"); dropped if the broker crashes
 * first. */
static void
fetch_send_drop(void *ctx, void *arg, guint64 arg_u64)
{
    (void)ctx;
    (void)arg_u64;
    sim_msg_free(arg);
}

static void
fetch_send_done(void *ctx, void *arg, guint64 to)
{
    SimWorld *world = ctx;
    SimMsg *msg = arg;
    /* The event runs on the broker's node, whose context is the broker. */
    Broker *broker = sim_node_ctx(world, (SimNodeId)(to >> 32));
    KSIM_ASSERT(broker->state != NULL);
    broker_send(broker->state, (SimNodeId)(to & G_MAXUINT32), msg);
}

/* The partitions of a fetch's answer are read into the broker's scratch
 * array (BrokerState.fetch_scratch), swapped in for the response's own
 * empty array: a fetch in a session of N partitions reads N entries, of
 * which its session keeps only those that changed, and a fresh array of N
 * entries on every fetch (twice for a fetch that waits) was most of what
 * an idle partition cost. Reading may answer other delayed fetches, whose
 * own reads swap in the array the broker holds then; each read is settled
 * or discarded before the one it interrupted goes on, so the swaps undo in
 * the order they were made. */
static void
fetch_scratch_swap_in(BrokerState *state, KFetchResponse *response)
{
    KSIM_ASSERT(response->partitions->len == 0);
    KSIM_ASSERT(state->fetch_scratch->len == 0);
    GArray *own = response->partitions;
    response->partitions = state->fetch_scratch;
    state->fetch_scratch = own;
}

/* Moves the entries the answer keeps into the response's own array and
 * gives the broker its scratch array back, empty. */
static void
fetch_scratch_settle(BrokerState *state, KFetchResponse *response)
{
    GArray *read = response->partitions;
    GArray *own = state->fetch_scratch;
    KSIM_ASSERT(own->len == 0);
    g_array_append_vals(own, read->data, read->len);
    /* The entries moved: their buffers are the response's now. */
    g_array_set_clear_func(read, NULL);
    g_array_set_size(read, 0);
    g_array_set_clear_func(read, kproto_fetch_partition_response_clear);
    response->partitions = own;
    state->fetch_scratch = read;
}

/* Drops an answer read but not sent (the fetch waits instead). */
static void
fetch_scratch_discard(BrokerState *state, KFetchResponse *response)
{
    g_array_set_size(response->partitions, 0);
    fetch_scratch_settle(state, response);
    sim_msg_free(&response->base);
}

/* Sends the answer `context` gives (fetch_session_update_response) to the
 * partitions `response` read for `request`. */
static void
fetch_send(BrokerState *state, SimNodeId to, const FetchContext *context,
           const KFetchRequest *request, KFetchResponse *response, FetchSessionRead *read,
           gint64 stall_ns)
{
    Broker *broker = state->broker;
    fetch_session_update_response(state->fetch_sessions, context, request, response, read,
                                  broker_now_ms(broker));
    fetch_scratch_settle(state, response);
    kproto_update_size(&response->base);
    if (stall_ns == 0) {
        broker_send(state, to, &response->base);
        return;
    }
    guint64 nodes = ((guint64)broker->node << 32) | (guint64)to;
    sim_world_schedule_for(broker->world, broker->node, sim_now_ns(broker->world) + stall_ns,
                           fetch_send_done, fetch_send_drop, &response->base, nodes);
}

/* The broker's replica of the request's `i`th partition: the one in
 * `partitions` (the request's partitions as looked up once, see
 * DelayedFetch.partitions), else looked up — by name where the request's
 * partition was absent then and may have been created since. (transfer none) */
static Partition *
entry_partition(BrokerState *state, const KFetchRequest *request, GPtrArray *partitions, guint i)
{
    Partition *p = g_ptr_array_index(partitions, i);
    if (p == NULL) {
        p = replica_get(state, &g_array_index(request->partitions, KFetchPartition, i).tp);
        partitions->pdata[i] = p;
    }
    return p;
}

/* Looks up each of the request's partitions once, in request order.
 * (transfer full) */
static GPtrArray *
request_partitions(BrokerState *state, const KFetchRequest *request)
{
    GPtrArray *partitions = g_ptr_array_sized_new(request->partitions->len);
    for (guint i = 0; i < request->partitions->len; i++) {
        const KFetchPartition *entry = &g_array_index(request->partitions, KFetchPartition, i);
        g_ptr_array_add(partitions, replica_get(state, &entry->tp));
    }
    return partitions;
}

/* Builds the response, reading the request's partitions as `partitions`
 * (request_partitions) names them, or for an incremental fetch those of its
 * session it must read (`*read`, fetch_session_read_begin); returns the
 * bytes of records it carries, whether any partition had an error, and how
 * long its reads keep the broker waiting on the disk. */
static KFetchResponse *
fetch_build_response(BrokerState *state, const KFetchRequest *request, GPtrArray *partitions,
                     const FetchContext *context, gint64 *bytes, gboolean *errors,
                     gint64 *stall_ns, FetchSessionRead **read)
{
    SimDisk *disk = sim_node_disk(state->broker->world, state->broker->node);
    sim_disk_call_begin(disk);
    KFetchResponse *response = kproto_new(KMSG_FETCH_RESPONSE);
    response->correlation_id = request->correlation_id;
    *bytes = 0;
    *errors = FALSE;
    *read = NULL;
    /* Filled in place: reading a partition may answer other delayed
     * fetches, never this response. */
    fetch_scratch_swap_in(state, response);
    if (context->kind == FETCH_CONTEXT_INCREMENTAL) {
        *read = fetch_session_read_begin(state->fetch_sessions, context,
                                         sim_now_ns(state->broker->world));
        const KFetchPartition *entry;
        gpointer replica;
        while (fetch_session_read_next(*read, &entry, &replica)) {
            g_array_set_size(response->partitions, response->partitions->len + 1);
            KFetchPartitionResponse *out = &g_array_index(
                response->partitions, KFetchPartitionResponse, response->partitions->len - 1);
            *bytes += read_partition(state, replica, request, entry, out, TRUE);
            *errors = *errors || out->error != KAFKA_ERROR_NONE;
            fetch_session_read_done(*read);
        }
    } else {
        g_array_set_size(response->partitions, request->partitions->len);
        for (guint i = 0; i < request->partitions->len; i++) {
            const KFetchPartition *entry = &g_array_index(request->partitions, KFetchPartition, i);
            KFetchPartitionResponse *out =
                &g_array_index(response->partitions, KFetchPartitionResponse, i);
            Partition *p = entry_partition(state, request, partitions, i);
            *bytes += read_partition(state, p, request, entry, out, TRUE);
            *errors = *errors || out->error != KAFKA_ERROR_NONE;
        }
    }
    *stall_ns = sim_disk_call_stall_ns(disk);
    return response;
}

static void
delayed_fetch_complete(BrokerState *state, DelayedFetch *delayed)
{
    gint64 bytes;
    gboolean errors;
    gint64 stall_ns;
    FetchSessionRead *read;
    KFetchResponse *response =
        fetch_build_response(state, delayed->request, delayed->partitions, &delayed->context,
                             &bytes, &errors, &stall_ns, &read);
    fetch_send(state, delayed->client, &delayed->context, delayed->request, response, read,
               stall_ns);
    g_ptr_array_remove(state->delayed_fetches, delayed);
    replica_delayed_fetch_free(delayed);
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

/* Puts `delayed` on the watch list of each partition it names, as Kafka's
 * DelayedOperationPurgatory.tryCompleteElseWatch watches one key per
 * partition and checkAndComplete(key) tries only that key's watchers
 * (DelayedOperation.scala, 2.x-3.x), so that an append looks only at the
 * fetches waiting on its partition. A fetch in a session waits on its
 * session instead, which finds it from any of its partitions
 * (fetch_session_cache_touch): it costs nothing per partition to delay.
 * Kafka purges completed operations from the lists lazily; here an
 * answered fetch leaves them at once, which changes nothing a run shows. */
static void
fetch_watch(BrokerState *state, DelayedFetch *delayed)
{
    if (delayed->context.kind == FETCH_CONTEXT_INCREMENTAL) {
        fetch_session_wait(&delayed->context, delayed);
        return;
    }
    const KFetchRequest *request = delayed->request;
    delayed->watched = g_ptr_array_sized_new(request->partitions->len);
    for (guint i = 0; i < request->partitions->len; i++) {
        Partition *p = entry_partition(state, request, delayed->partitions, i);
        if (p == NULL)
            continue;
        if (p->fetch_watchers == NULL)
            p->fetch_watchers = g_ptr_array_new();
        g_ptr_array_add(p->fetch_watchers, delayed);
        g_ptr_array_add(delayed->watched, p);
    }
}

/* TRUE when the fetch has enough to answer: a partition it reads no longer
 * led here (an error to report: answer now; every partition it reads was
 * led when it was delayed, or it would have answered then), or
 * bytes_at_delay plus the bytes appended to its partitions since reach its
 * min_bytes. */
static gboolean
enough_since_delay(const DelayedFetch *delayed)
{
    for (guint i = 0; delayed->suspects != NULL && i < delayed->suspects->len; i++) {
        const Partition *q = g_ptr_array_index(delayed->suspects, i);
        if (!q->is_leader)
            return TRUE;
    }
    return delayed->bytes_at_delay + delayed->appended >= delayed->request->min_bytes;
}

static gint
delayed_serial_compare(gconstpointer a, gconstpointer b)
{
    const DelayedFetch *x = *(const DelayedFetch *const *)a;
    const DelayedFetch *y = *(const DelayedFetch *const *)b;
    return x->serial < y->serial ? -1 : (x->serial > y->serial);
}

/* The delayed fetches that read `p`, each once (in no order): those
 * watching it, and those of the sessions that hold it (which read it again
 * at their next fetch: it is touched). Each is credited `appended` bytes
 * per time its request names `p`. */
static GPtrArray *
fetches_reading(BrokerState *state, Partition *p, gint64 appended)
{
    GPtrArray *found = g_ptr_array_new();
    if (p->fetch_watchers != NULL) {
        for (guint i = 0; i < p->fetch_watchers->len; i++) {
            DelayedFetch *delayed = g_ptr_array_index(p->fetch_watchers, i);
            delayed->appended += appended;
            if (i > 0 && g_ptr_array_index(p->fetch_watchers, i - 1) == delayed)
                continue; /* a request that names the partition twice */
            g_ptr_array_add(found, delayed);
        }
    }
    guint watchers = found->len;
    fetch_session_cache_touch(state->fetch_sessions, p, found);
    for (guint i = watchers; i < found->len; i++)
        ((DelayedFetch *)g_ptr_array_index(found, i))->appended += appended;
    return found;
}

/* New data in `p` (replica_fetch_appended counted its bytes), or a new HW:
 * a long-polling fetch that
 * reads it answers once replica.fetch.min.bytes (fetch.min.bytes) can be
 * read, as Kafka's DelayedFetch.tryComplete (3.x) sums each partition's
 * bytes from the fetch offset to the end the fetch may read (the LEO for a
 * follower, the HW or LSO for a consumer) and completes at fetchMinBytes.
 * Here that sum is what the fetch could read when it was delayed plus what
 * was appended since; a consumer's is counted only when the HW moves, since
 * it reads nothing above the HW, and with fetch.min.bytes = 1 (the default)
 * any move of the HW is enough, exactly as in Kafka. With a larger
 * fetch.min.bytes the sum is an estimate: appends still above the HW count
 * early, and bytes that were above it when the fetch was delayed count only
 * once more is appended (Kafka reads the HW's byte position instead). */
void
replica_fetch_appended(BrokerState *state, Partition *p, gint64 bytes)
{
    g_autoptr(GPtrArray) reading = fetches_reading(state, p, bytes);
}

void
replica_fetch_try_complete(BrokerState *state, Partition *p, gboolean hw_moved)
{
    g_autoptr(GPtrArray) reading = fetches_reading(state, p, 0);
    /* Tried in the order they were delayed, as Kafka's watch list holds them. */
    g_ptr_array_sort(reading, delayed_serial_compare);
    g_autoptr(GPtrArray) ready = g_ptr_array_new();
    for (guint i = 0; i < reading->len; i++) {
        DelayedFetch *delayed = g_ptr_array_index(reading, i);
        gboolean consumer = delayed->request->replica_id < 0;
        if (consumer && !hw_moved)
            continue;
        /* A consumer delayed with nothing to read below the HW has a byte
         * once the HW moves, which is all fetch.min.bytes = 1 asks. */
        if (consumer && delayed->request->min_bytes <= 1) {
            g_ptr_array_add(ready, delayed);
            continue;
        }
        if (enough_since_delay(delayed))
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
replica_fetch_touch(BrokerState *state, Partition *p, gboolean leadership)
{
    if (!leadership) {
        fetch_session_cache_touch(state->fetch_sessions, p, NULL);
        return;
    }
    /* The fetches' quiet reads of it end here, while its remotes are the
     * ones they read. */
    g_autoptr(GPtrArray) reading = fetches_reading(state, p, 0);
    for (guint i = 0; i < reading->len; i++) {
        DelayedFetch *delayed = g_ptr_array_index(reading, i);
        if (delayed->suspects == NULL)
            delayed->suspects = g_ptr_array_new();
        if (!g_ptr_array_find(delayed->suspects, p, NULL))
            g_ptr_array_add(delayed->suspects, p);
    }
}

void
replica_fetch_settle(BrokerState *state, Partition *p)
{
    fetch_session_cache_settle(state->fetch_sessions, p);
}

/* ---- the session cache's hooks ---- */

static gpointer
lookup_replica(const KTopicPartition *tp, gpointer user_data)
{
    return replica_get(user_data, tp);
}

/* Kafka's isr_maybe_expand and maybeIncrementLeaderHW would do nothing for
 * `remote` now (replica_isr_maybe_expand, replica_hw_maybe_increment). An
 * ISR change still to be answered does not count: its end is a matter of
 * time. */
static gboolean
follower_settled(const BrokerState *state, const Partition *p, const RemoteReplica *remote)
{
    if (remote != NULL && replica_isr_may_join(p, remote))
        return FALSE;
    return replica_hw_target(state, p) <= p->hw;
}

/* A read of `p` that answered `data` (no error, no records) to `entry` and
 * would answer nothing again: nothing to read until it changes — a
 * follower at the LEO (whose fetch state then reads the same), a consumer
 * at the HW or LSO — with nothing a follower's read does left to do. */
static gboolean
fetch_quiet(gpointer replica, gint32 replica_id, gint8 isolation, const KFetchPartition *entry,
            const KFetchPartitionResponse *data, gpointer user_data)
{
    const BrokerState *state = user_data;
    const Partition *p = replica;
    if (!state->broker->config.fetch_quiet_partitions)
        return FALSE;
    if (replica_id < 0) {
        gint64 limit =
            isolation == KAFKA_READ_COMMITTED ? data->last_stable_offset : data->high_watermark;
        return entry->fetch_offset >= limit;
    }
    if (entry->fetch_offset != data->log_end_offset)
        return FALSE;
    return follower_settled(state, p, remote_of((Partition *)p, replica_id));
}

/* What reads of a quiet partition did to its follower's fetch times: it
 * fetched from the LEO at `read_ns` (update_follower_fetch_state). */
static void
fetch_settle(gpointer replica, gint32 replica_id, gint64 read_ns, gpointer user_data)
{
    (void)user_data;
    RemoteReplica *remote = remote_of(replica, replica_id);
    if (remote == NULL)
        return;
    remote->last_caught_up_ns = MAX(remote->last_caught_up_ns, read_ns);
    remote->last_fetch_ns = MAX(remote->last_fetch_ns, read_ns);
}

void
replica_fetch_sessions_attach(BrokerState *state)
{
    FetchSessionHooks hooks = {
        .lookup = lookup_replica,
        .quiet = fetch_quiet,
        .settle = fetch_settle,
        .user_data = state,
    };
    fetch_session_cache_set_hooks(state->fetch_sessions, &hooks);
}

void
replica_handle_fetch(BrokerState *state, SimNodeId from, KFetchRequest *request)
{
    Broker *broker = state->broker;
    gint64 bytes;
    gboolean errors;
    gint64 stall_ns;
    /* The session first: an incremental fetch reads its session's
     * partitions, a session error none. */
    FetchContext context;
    fetch_session_new_context(state->fetch_sessions, request, broker_now_ms(broker), &context);
    GPtrArray *partitions =
        context.kind == FETCH_CONTEXT_INCREMENTAL ? NULL : request_partitions(state, request);
    FetchSessionRead *read;
    KFetchResponse *response = fetch_build_response(state, request, partitions, &context, &bytes,
                                                    &errors, &stall_ns, &read);
    /* As Kafka's ReplicaManager.fetchMessages, a fetch of no partitions
     * (a session error) is answered at once. An incremental fetch has the
     * partitions of its session, never none. */
    gboolean none = context.kind != FETCH_CONTEXT_INCREMENTAL && request->partitions->len == 0;
    if (errors || bytes >= request->min_bytes || request->max_wait_ms <= 0 || none) {
        fetch_send(state, from, &context, request, response, read, stall_ns);
        fetch_session_context_release(state->fetch_sessions, &context);
        sim_msg_free(&request->base);
        if (partitions != NULL)
            g_ptr_array_free(partitions, TRUE);
        return;
    }
    fetch_scratch_discard(state, response);
    fetch_session_read_free(read);
    DelayedFetch *delayed = g_new0(DelayedFetch, 1);
    delayed->request = request;
    delayed->context = context;
    delayed->partitions = partitions;
    delayed->bytes_at_delay = bytes;
    delayed->serial = state->fetch_delay_serial++;
    delayed->client = from;
    delayed->state = state;
    delayed->timeout_timer = sim_timer_set(broker->world, broker->node,
                                           request->max_wait_ms * SIM_NS_PER_MS,
                                           delayed_fetch_timeout, delayed);
    g_ptr_array_add(state->delayed_fetches, delayed);
    fetch_watch(state, delayed);
}

/* ---- OffsetsForLeaderEpoch ---- */

/* The leader's answer for the epoch `entry` asks about. Kafka 2.1+ (KIP-279)
 * answers the largest epoch at or below it and that epoch's end offset.
 * Kafka 0.11-1.1 (KIP-101 alone, OffsetsForLeaderEpoch v0) answers only the
 * end offset, as its LeaderEpochFileCache.endOffsetFor of 1.1 computes it:
 * the same offset, except that an epoch older than the first cached one is
 * unknown. (1.1's cache kept an older entry with the same start offset as
 * a newer one, which Kafka 2.1+'s assign replaces; the answer for that
 * older epoch is then unknown here, where 1.1 gave its start.) */
static void
answer_end_offset(const BrokerState *state, const Partition *p, KEpochPartition *entry)
{
    plog_epoch_end_offset(p->log, entry->leader_epoch, &entry->end_epoch, &entry->end_offset);
    if (state->broker->config.truncation_mode != BROKER_TRUNCATE_KIP101)
        return;
    entry->end_epoch = PLOG_UNDEFINED_EPOCH;
    const GArray *entries = plog_epoch_entries(p->log);
    if (entries->len > 0 && entry->leader_epoch < g_array_index(entries, PlogEpochEntry, 0).epoch)
        entry->end_offset = PLOG_UNDEFINED_EPOCH_OFFSET;
}

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
            answer_end_offset(state, p, &entry);
        g_array_append_val(response->partitions, entry);
    }
    kproto_update_size(&response->base);
    broker_send(state, from, &response->base);
}

/* Invariant 5: a quiet partition of a session reads as it last did. */
static void
check_quiet(gpointer replica, gint32 replica_id, gint8 isolation, const KFetchPartition *entry,
            gint64 high_watermark, gint64 log_start_offset, gpointer user_data)
{
    const BrokerState *state = user_data;
    const Partition *p = replica;
    KSIM_ASSERT(p != NULL && p->is_leader);
    KSIM_ASSERT(check_fetch_epoch(p, entry->current_leader_epoch) == KAFKA_ERROR_NONE);
    gint64 leo = plog_log_end_offset(p->log);
    KSIM_ASSERT(entry->fetch_offset >= plog_log_start_offset(p->log) && entry->fetch_offset <= leo);
    KSIM_ASSERT(high_watermark == p->hw);
    KSIM_ASSERT(log_start_offset == plog_log_start_offset(p->log));
    if (replica_id < 0) {
        gint64 limit =
            isolation == KAFKA_READ_COMMITTED ? replica_last_stable_offset(p) : p->hw;
        KSIM_ASSERT(entry->fetch_offset >= limit);
        return;
    }
    KSIM_ASSERT(entry->fetch_offset == leo);
    const RemoteReplica *remote = remote_of((Partition *)p, replica_id);
    if (remote != NULL) {
        KSIM_ASSERT(remote->leo == entry->fetch_offset);
        KSIM_ASSERT(remote->last_fetch_leader_leo == leo);
    }
    KSIM_ASSERT(follower_settled(state, p, remote));
}

void
replica_fetch_check_invariants(const BrokerState *state)
{
    fetch_session_cache_check_invariants(state->fetch_sessions);
    fetch_session_cache_foreach_quiet(state->fetch_sessions, check_quiet, (gpointer)state);
    for (guint i = 0; i < state->delayed_fetches->len; i++) {
        const DelayedFetch *delayed = g_ptr_array_index(state->delayed_fetches, i);
        KSIM_ASSERT(delayed->request != NULL);
        KSIM_ASSERT(sim_timer_pending(state->broker->world, delayed->timeout_timer));
        if (delayed->context.kind == FETCH_CONTEXT_INCREMENTAL) {
            KSIM_ASSERT(delayed->partitions == NULL && delayed->watched == NULL);
            KSIM_ASSERT(delayed->context.session != NULL);
            continue;
        }
        /* Each partition it remembers is the broker's replica of that
         * request partition. */
        KSIM_ASSERT(delayed->partitions->len == delayed->request->partitions->len);
        for (guint j = 0; j < delayed->partitions->len; j++) {
            const Partition *q = g_ptr_array_index(delayed->partitions, j);
            const KFetchPartition *entry =
                &g_array_index(delayed->request->partitions, KFetchPartition, j);
            if (q != NULL)
                KSIM_ASSERT(ktp_equal(&q->tp, &entry->tp));
        }
        /* Each partition it watches has it on its watch list. */
        KSIM_ASSERT(delayed->watched != NULL);
        KSIM_ASSERT(delayed->watched->len <= delayed->request->partitions->len);
        for (guint j = 0; j < delayed->watched->len; j++) {
            const Partition *p = g_ptr_array_index(delayed->watched, j);
            KSIM_ASSERT(p->fetch_watchers != NULL);
            KSIM_ASSERT(g_ptr_array_find(p->fetch_watchers, delayed, NULL));
        }
    }
}
