/*
 * replica_recovery: what a starting broker knows of its partitions before
 * it hears from the controller (Kafka's LogManager.loadLogs): every log
 * directory on the node's disk is opened, in name order, and its replica
 * takes the HW the last checkpoint recorded (replica_hw.c), clamped to its
 * log (a torn tail may have cut the log below it).
 *
 * Stateless: it fills the partition table (replica.c) once per start.
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
        Partition *p = replica_get_or_create(state, &tp);
        const gint64 *hw = g_hash_table_lookup(hws, dir);
        p->hw = MIN(hw != NULL ? *hw : 0, plog_log_end_offset(p->log));
        p->hw = MAX(p->hw, plog_log_start_offset(p->log));
    }
    g_free(previous);
}
