/*
 * kraft_snapshot: when a KRaft node writes a snapshot of its metadata image,
 * and how a node that replays the metadata log starts from one. Kafka's
 * SnapshotGenerator (metadata/src/main/java/org/apache/kafka/image/
 * publisher/SnapshotGenerator.java) and KafkaRaftClient
 * .updateListenersProgress (Apache Kafka 4.0, trunk 1eb7644).
 *
 * A controller publishes each committed delta it replays: once the bytes
 * of the batches replayed since the last snapshot reach
 * metadata.log.max.record.bytes.between.snapshots (20 MiB), or, with bytes
 * replayed, metadata.log.max.snapshot.interval.ms (1 hour; 0: never) has
 * passed since the last one, it writes a snapshot of its committed image at
 * the image's end offset (raft_node_create_snapshot) and starts counting
 * afresh. The image is kept in the record store (kraft_records.h); the
 * snapshot file names it.
 *
 * A listener whose image is new, or ends below the log start offset (the log
 * it would replay was deleted, or fully truncated to a snapshot fetched from
 * the leader), loads the latest snapshot, then replays the log after it.
 *
 * Not modelled: the broker side. Kafka's brokers keep a copy of the metadata
 * log and its snapshots on their disks and generate snapshots too; ksim's
 * brokers keep the metadata in memory and, after a restart, fetch it again
 * (from a snapshot, FetchSnapshot, when the leader's log starts past what
 * they need).
 */
#ifndef KRAFT_SNAPSHOT_H
#define KRAFT_SNAPSHOT_H

#include <glib.h>

#include "kraft_records.h"
#include "raft_node.h"

typedef struct {
    gint64 max_new_record_bytes; /* metadata.log.max.record.bytes.between.snapshots */
    gint64 max_interval_ns;      /* metadata.log.max.snapshot.interval.ms; 0: off */
    gint64 bytes_since_last;
    gint64 last_snapshot_ns;
} KraftSnapshotGenerator;

void kraft_snapshot_generator_init(KraftSnapshotGenerator *gen, gint64 max_new_record_bytes,
                                   gint64 max_interval_ns, gint64 now_ns);
/* resetSnapshotCounters. */
void kraft_snapshot_generator_reset(KraftSnapshotGenerator *gen, gint64 now_ns);

/* SnapshotGenerator.publishLogDelta: `image` (committed, on `raft`'s log)
 * grew by `replayed_bytes` of batches, the last of them stamped
 * `timestamp_ms`. Returns TRUE when it started a snapshot. */
gboolean kraft_snapshot_publish(KraftSnapshotGenerator *gen, RaftNode *raft,
                                KraftRecordStore *store, const KraftImage *image,
                                gint64 replayed_bytes, gint64 timestamp_ms);

/* updateListenersProgress: loads `raft`'s latest snapshot into `image` when
 * the image ends below `high_watermark` and is new or ends below the log
 * start offset, and the snapshot is ahead of it. TRUE when it loaded one. */
gboolean kraft_snapshot_maybe_load(const RaftNode *raft, const KraftRecordStore *store,
                                   KraftImage *image, gint64 high_watermark);

#endif
