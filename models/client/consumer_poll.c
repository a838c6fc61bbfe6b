/*
 * consumer_poll: the application's poll loop — each poll takes buffered
 * records, hands them to the callback, and processes them one by one
 * (committing before or after, by processing mode) before the next poll.
 */
#include "consumer_internal.h"

#include "sim_assert.h"

#include <string.h>

/* ---- the application's poll loop ---- */

static void
record_op(Consumer *consumer, HistoryFn fn, const ConsumerRecord *record, guint16 topic)
{
    history_record(consumer->history, sim_now_ns(consumer->world), fn, consumer->process, topic,
                   record->tp.partition, record->offset, record->key, record->value);
}

/* The processing mode in effect: the loop's commits need a group to commit
 * to. */
static ConsumerProcessingMode
consumer_processing_mode(const ConsumerState *state)
{
    return consumer_subscribed(state) ? state->consumer->config.processing_mode
                                      : CONSUMER_PROCESSING_AUTO;
}

static void processing_next(ConsumerState *state);

/* The commitSync that followed a poll's processing ended: the loop goes on. */
static void
commit_sync_done_cb(Consumer *consumer, HistoryType outcome, KafkaError error, void *user_data)
{
    ConsumerState *state = consumer->state;
    (void)outcome;
    (void)error;
    (void)user_data;
    state->app_commit = NULL;
    consumer_poll_schedule(state, sim_dist_sample(&consumer->poll_interval, consumer->rng));
}

/* commitSync after processing, through the application's API; the next
 * poll follows its outcome. The loop waits on it as `app_commit`; it may
 * end within the call (nothing to commit, not a stable member), so it is
 * looked up by the id it was given. */
static void
commit_sync_after_processing(ConsumerState *state)
{
    guint64 id = state->commit_next + 1;
    consumer_commit_sync(state->consumer, commit_sync_done_cb, NULL);
    state->app_commit = consumer_commit_find(state, id);
}

/* One record's processing ended; the next one starts, or the poll's
 * processing is over. */
static void
processing_done(SimWorld *world, void *ctx, void *arg)
{
    Consumer *consumer = ctx;
    ConsumerState *state = consumer->state;
    (void)world;
    (void)arg;
    state->processing_timer = SIM_EVENT_ID_NONE;
    KSIM_ASSERT(state->processed < state->processing->len);
    const ConsumerRecord *record =
        &g_array_index(state->processing, ConsumerRecord, state->processed);
    record_op(consumer, HISTORY_FN_PROCESS, record,
              history_topic(consumer->history, record->tp.topic));
    consumer->stats.records_processed++;
    state->processed++;
    if (state->processed < state->processing->len) {
        processing_next(state);
        return;
    }
    g_array_set_size(state->processing, 0);
    state->processed = 0;
    ConsumerProcessingMode mode = consumer_processing_mode(state);
    if (mode == CONSUMER_PROCESS_THEN_COMMIT) {
        commit_sync_after_processing(state);
        return;
    }
    /* Kafka's KafkaConsumer.commitAsync: the loop goes on to its next poll
     * without waiting for the answer. */
    if (mode == CONSUMER_PROCESS_THEN_COMMIT_ASYNC)
        consumer_commit_async(consumer, NULL, NULL);
    consumer_poll_schedule(state, sim_dist_sample(&consumer->poll_interval, consumer->rng));
}

/* The application processes a poll's records one after another, each for
 * a draw of the processing time, as a `for (record : poll())` loop does; a
 * crash stops it between two records. */
static void
processing_next(ConsumerState *state)
{
    Consumer *consumer = state->consumer;
    gint64 delay_ns = sim_dist_sample(&consumer->processing, consumer->rng);
    state->processing_timer =
        sim_timer_set(consumer->world, consumer->node, delay_ns, processing_done, NULL);
}

void
consumer_processing_start(ConsumerState *state)
{
    KSIM_ASSERT(state->processed == 0 && state->processing->len > 0);
    processing_next(state);
}

/* Kafka's poll(): takes up to max.poll.records from the buffer and moves
 * the positions past them. */
static void
poll_take(ConsumerState *state)
{
    Consumer *consumer = state->consumer;
    guint n = MIN(state->buffer->len, (guint)consumer->config.max_poll_records);
    for (guint i = 0; i < n; i++) {
        const ConsumerRecord *record = &g_array_index(state->buffer, ConsumerRecord, i);
        CPartition *p = consumer_partition_find(state, &record->tp);
        /* Records may follow skipped control or aborted batches: the
         * position jumps over them, as Kafka's nextFetchOffset does. */
        KSIM_ASSERT(p != NULL && p->position <= record->offset && p->buffered > 0);
        p->position = record->offset + 1;
        p->position_epoch = record->leader_epoch;
        p->buffered--;
        record_op(consumer, HISTORY_FN_POLL, record, p->history_topic);
        /* Kafka's FetchCollector records a partition's lag as it hands its
         * records over: at the last of them here. */
        const ConsumerRecord *next = i + 1 < n ? record + 1 : NULL;
        if (p->fetched_end >= 0 && (next == NULL || !ktp_equal(&next->tp, &record->tp)))
            history_metric(consumer->history, sim_now_ns(consumer->world), HISTORY_METRIC_LAG,
                           (gint32)consumer->process, 1, MAX(p->fetched_end - p->position, 0));
    }
    g_array_append_vals(state->processing, state->buffer->data, n);
    g_array_remove_range(state->buffer, 0, n);
    consumer->stats.polls++;
    consumer->stats.records_polled += n;
}

static void
poll_fire(SimWorld *world, void *ctx, void *arg)
{
    Consumer *consumer = ctx;
    ConsumerState *state = consumer->state;
    (void)arg;
    state->poll_timer = SIM_EVENT_ID_NONE;
    if (state->raise_pending) {
        /* poll() throws (auto.offset.reset=none); the application does not
         * catch it and its loop ends: no more polls, so max.poll.interval.ms
         * takes a group member out of its group. */
        state->raise_pending = FALSE;
        state->app_failed = TRUE;
        state->poll_waiting = FALSE;
        consumer->stats.app_failures++;
        return;
    }
    /* In poll() again: max.poll.interval.ms starts over when it returns. */
    sim_timer_cancel(world, state->poll_timeout_timer);
    if (!consumer_group_poll(state, consumer_now(state)) || state->buffer->len == 0) {
        /* Nothing to return: the poll waits for the group or the fetches. */
        state->poll_waiting = TRUE;
        consumer_run(state);
        return;
    }
    poll_take(state);
    if (consumer_subscribed(state))
        state->poll_timeout_timer = sim_timer_set(
            world, consumer->node, consumer_ms_to_ns(consumer->config.max_poll_interval_ms),
            consumer_poll_timeout_fire, NULL);
    if (consumer->poll_cb != NULL)
        consumer->poll_cb(consumer, (const ConsumerRecord *)state->processing->data,
                          state->processing->len, consumer->poll_user_data);
    if (consumer_processing_mode(state) == CONSUMER_COMMIT_BEFORE_PROCESSING)
        state->app_commit = consumer_commit_new(state, COMMIT_FOR_BEFORE_PROCESSING, TRUE);
    else
        consumer_processing_start(state);
    /* Drained partitions may be fetched again while the records are processed. */
    consumer_run(state);
}

void
consumer_poll_schedule(ConsumerState *state, gint64 delay_ns)
{
    Consumer *consumer = state->consumer;
    KSIM_ASSERT(!sim_timer_pending(consumer->world, state->poll_timer));
    state->poll_timer = sim_timer_set(consumer->world, consumer->node, delay_ns, poll_fire, NULL);
}
