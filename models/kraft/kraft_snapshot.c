/*
 * kraft_snapshot: snapshot generation and loading (see kraft_snapshot.h).
 */
#include "kraft_snapshot.h"

#include "sim_assert.h"

void
kraft_snapshot_generator_init(KraftSnapshotGenerator *gen, gint64 max_new_record_bytes,
                              gint64 max_interval_ns, gint64 now_ns)
{
    KSIM_ASSERT(max_new_record_bytes >= 1);
    KSIM_ASSERT(max_interval_ns >= 0);
    gen->max_new_record_bytes = max_new_record_bytes;
    gen->max_interval_ns = max_interval_ns;
    kraft_snapshot_generator_reset(gen, now_ns);
}

void
kraft_snapshot_generator_reset(KraftSnapshotGenerator *gen, gint64 now_ns)
{
    gen->bytes_since_last = 0;
    gen->last_snapshot_ns = now_ns;
}

gboolean
kraft_snapshot_publish(KraftSnapshotGenerator *gen, RaftNode *raft, KraftRecordStore *store,
                       const KraftImage *image, gint64 replayed_bytes, gint64 timestamp_ms)
{
    if (replayed_bytes <= 0)
        return FALSE;
    gint64 now = sim_now_ns(raft_node_world(raft));
    gen->bytes_since_last += replayed_bytes;
    gboolean by_bytes = gen->bytes_since_last >= gen->max_new_record_bytes;
    gboolean by_time =
        gen->max_interval_ns != 0 && now - gen->last_snapshot_ns >= gen->max_interval_ns;
    if (!by_bytes && !by_time)
        return FALSE;
    /* maybeScheduleEmit: the counters restart whether or not the emitter
     * writes one (it writes none for an id that exists). */
    kraft_snapshot_generator_reset(gen, now);
    gint64 end_offset = kraft_image_end_offset(image);
    if (raft_node_latest_snapshot(raft) != NULL &&
        raft_node_latest_snapshot(raft)->end_offset >= end_offset)
        return FALSE;
    guint64 payload = kraft_record_store_add_image(store, image);
    return raft_node_create_snapshot(raft, end_offset, payload, kraft_image_size_bytes(image),
                                     timestamp_ms);
}

gboolean
kraft_snapshot_maybe_load(const RaftNode *raft, const KraftRecordStore *store, KraftImage *image,
                          gint64 high_watermark)
{
    gint64 next = kraft_image_end_offset(image);
    if (next >= high_watermark)
        return FALSE;
    if (next != 0 && next >= raft_node_log_start_offset(raft))
        return FALSE;
    const RaftSnapshot *latest = raft_node_latest_snapshot(raft);
    if (latest == NULL || latest->end_offset <= next)
        return FALSE;
    const KraftImage *content = kraft_record_store_image(store, latest->payload);
    KSIM_ASSERT(content != NULL);
    KSIM_ASSERT(kraft_image_end_offset(content) == latest->end_offset);
    kraft_image_assign(image, content);
    return TRUE;
}
