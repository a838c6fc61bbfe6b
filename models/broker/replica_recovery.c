/*
 * replica_recovery: the broker's logs as Kafka's LogManager keeps them.
 *
 * At start (LogManager.loadLogs), before the broker hears from the
 * controller: every log directory on the node's disk is opened, in name
 * order, and recovered from the recovery point the log directory's
 * checkpoint recorded (0 when it has none, or the file is missing or torn:
 * every batch is verified then); its replica takes the HW the last HW
 * checkpoint recorded (replica_hw.c), clamped to its log (a torn tail may
 * have cut the log below it).
 *
 * While it runs (Kafka 3.x/4.0 LogManager.scala): one recovery-point
 * checkpoint for all the logs, `recovery-point-offset-checkpoint` at the top
 * of the log directory (plog.h), written every
 * log.flush.offset.checkpoint.interval.ms (LogManager's
 * "kafka-recovery-point-checkpoint" task, 60 s by default), after a
 * follower's truncation that lowered a recovery point (a recovery point left
 * above the new LEO could make a later recovery trust data the truncation
 * replaced) and at a clean shutdown (broker_shutdown.c). A flush moves a
 * log's recovery point in memory only, so after a crash recovery re-reads
 * everything appended since the last checkpoint, as Kafka's does.
 *
 * One difference: Kafka's LogManager.truncateTo and truncateFullyAndStartAt
 * rewrite the file after every truncation, one partition at a time, so a
 * broker that truncates thousands of partitions writes the whole file
 * thousands of times. ksim writes it only when the truncation lowered the
 * log's recovery point: otherwise the file's entry for that log is already
 * at or below the new LEO (an entry is never above the log's recovery point
 * in memory), and rewriting it would change nothing recovery relies on. A
 * recovery point advances only at a flush, which Kafka's defaults leave to
 * segment rolls, so most truncations lower none.
 */
#include "replica_internal.h"

#include "sim_assert.h"
#include "sim_disk.h"

#include <string.h>

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

/* KRaft's metadata log, __cluster_metadata-0 (raft_node.h). */
#define METADATA_TOPIC "__cluster_metadata"

void
replica_load_logs(BrokerState *state)
{
    Broker *broker = state->broker;
    SimDisk *disk = sim_node_disk(broker->world, broker->node);
    g_autoptr(GHashTable) hws = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    replica_hw_checkpoint_read(state, hws);
    g_autoptr(GHashTable) recovery_points = plog_recovery_points_read(disk);
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
        /* A combined node's metadata log is the voter's, not a partition's:
         * Kafka's LogManager.loadLogs (4.0) skips KafkaRaftServer.MetadataTopic. */
        if (strcmp(tp.topic, METADATA_TOPIC) == 0)
            continue;
        g_free(previous);
        previous = g_strdup(dir);
        const gint64 *recovery_point =
            recovery_points != NULL ? g_hash_table_lookup(recovery_points, dir) : NULL;
        Partition *p = replica_get(state, &tp);
        if (p == NULL)
            p = replica_open(state, &tp, recovery_point != NULL ? *recovery_point : -1);
        const gint64 *hw = g_hash_table_lookup(hws, dir);
        p->hw = MIN(hw != NULL ? *hw : 0, plog_log_end_offset(p->log));
        p->hw = MAX(p->hw, plog_log_start_offset(p->log));
    }
    g_free(previous);
}

void
replica_recovery_points_checkpoint(BrokerState *state)
{
    Broker *broker = state->broker;
    if (state->log_dir_failed)
        return;
    SimDisk *disk = sim_node_disk(broker->world, broker->node);
    g_autoptr(GPtrArray) logs = g_ptr_array_sized_new(state->partitions_sorted->len);
    for (guint i = 0; i < state->partitions_sorted->len; i++) {
        const Partition *p = g_ptr_array_index(state->partitions_sorted, i);
        g_ptr_array_add(logs, p->log);
    }
    broker_log_dir_status(state, plog_recovery_points_write(disk, logs),
                          "recovery-point checkpoint");
}

void
replica_truncation_checkpoint(BrokerState *state, const Partition *p, gint64 recovery_point_before)
{
    if (plog_recovery_point(p->log) < recovery_point_before)
        replica_recovery_points_checkpoint(state);
}

static gint64
recovery_points_period_ns(const BrokerConfig *config)
{
    return config->log_flush_offset_checkpoint_interval_ms * SIM_NS_PER_MS;
}

static const ReplicaTask RECOVERY_POINTS = {replica_recovery_points_checkpoint,
                                            recovery_points_period_ns};

void
replica_recovery_points_start(BrokerState *state)
{
    replica_task_start(state, &RECOVERY_POINTS);
}
