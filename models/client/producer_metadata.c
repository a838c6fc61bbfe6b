/*
 * producer_metadata: the producer's cluster view (see producer_metadata.h).
 *
 * Invariants:
 *  1. `topics` and `topic_list` hold the same MetaTopic objects; the list is
 *     what is iterated, the table only looked up.
 *  2. A topic's leader epochs never decrease (producer_metadata_update keeps
 *     the cached leader when a response carries an older epoch).
 *  3. `available` lists, ascending, exactly the partitions whose leader is a
 *     live broker of the view; it is recomputed on every update.
 *  4. `brokers` is sorted by broker id, without duplicates.
 */
#include "producer_metadata.h"

#include "sim_assert.h"

#include <string.h>

typedef struct {
    gint32 leader;
    gint32 leader_epoch;
} MetaPartition;

typedef struct {
    char *name;
    GArray *partitions; /* MetaPartition, by partition number */
    GArray *available;  /* guint32 */
} MetaTopic;

struct ProducerMetadata {
    GHashTable *topics;    /* name -> MetaTopic*; looked up only */
    GPtrArray *topic_list; /* MetaTopic* (owned), in order of discovery */
    GArray *brokers;       /* KBrokerEndpoint, by id */
    gint64 refreshed_ns;
    guint64 version;
};

static void
meta_topic_free(gpointer data)
{
    MetaTopic *topic = data;
    g_free(topic->name);
    g_array_free(topic->partitions, TRUE);
    g_array_free(topic->available, TRUE);
    g_free(topic);
}

ProducerMetadata *
producer_metadata_new(void)
{
    ProducerMetadata *metadata = g_new0(ProducerMetadata, 1);
    metadata->topics = g_hash_table_new(g_str_hash, g_str_equal);
    metadata->topic_list = g_ptr_array_new_with_free_func(meta_topic_free);
    metadata->brokers = g_array_new(FALSE, FALSE, sizeof(KBrokerEndpoint));
    metadata->refreshed_ns = G_MININT64;
    return metadata;
}

void
producer_metadata_free(ProducerMetadata *metadata)
{
    if (metadata == NULL)
        return;
    g_hash_table_destroy(metadata->topics);
    g_ptr_array_free(metadata->topic_list, TRUE);
    g_array_free(metadata->brokers, TRUE);
    g_free(metadata);
}

static MetaTopic *
topic_get_or_create(ProducerMetadata *metadata, const char *name)
{
    MetaTopic *topic = g_hash_table_lookup(metadata->topics, name);
    if (topic != NULL)
        return topic;
    topic = g_new0(MetaTopic, 1);
    topic->name = g_strdup(name);
    topic->partitions = g_array_new(FALSE, FALSE, sizeof(MetaPartition));
    topic->available = g_array_new(FALSE, FALSE, sizeof(guint32));
    g_ptr_array_add(metadata->topic_list, topic);
    g_hash_table_insert(metadata->topics, topic->name, topic);
    return topic;
}

static gint
broker_compare(gconstpointer a, gconstpointer b)
{
    const KBrokerEndpoint *x = a, *y = b;
    return (x->broker_id > y->broker_id) - (x->broker_id < y->broker_id);
}

/* Takes one partition's state unless it is older than what the view holds. */
static void
update_partition(MetaTopic *topic, const KPartitionState *state)
{
    KSIM_ASSERT(state->tp.partition >= 0);
    guint index = (guint)state->tp.partition;
    while (topic->partitions->len <= index) {
        MetaPartition unknown = {KAFKA_NO_LEADER, -1};
        g_array_append_val(topic->partitions, unknown);
    }
    MetaPartition *partition = &g_array_index(topic->partitions, MetaPartition, index);
    if (state->leader_epoch < partition->leader_epoch)
        return;
    partition->leader = state->leader;
    partition->leader_epoch = state->leader_epoch;
}

static void
recompute_available(ProducerMetadata *metadata, MetaTopic *topic)
{
    g_array_set_size(topic->available, 0);
    for (guint p = 0; p < topic->partitions->len; p++) {
        gint32 leader = g_array_index(topic->partitions, MetaPartition, p).leader;
        if (leader != KAFKA_NO_LEADER &&
            producer_metadata_broker_node(metadata, leader) != SIM_NODE_NONE)
            g_array_append_val(topic->available, p);
    }
}

void
producer_metadata_update(ProducerMetadata *metadata, const KMetadataResponse *response,
                         gint64 now_ns)
{
    KSIM_ASSERT(response != NULL);
    KSIM_ASSERT(now_ns >= 0);
    g_array_set_size(metadata->brokers, 0);
    g_array_append_vals(metadata->brokers, response->brokers->data, response->brokers->len);
    g_array_sort(metadata->brokers, broker_compare);
    MetaTopic *topic = NULL;
    for (guint i = 0; i < response->partitions->len; i++) {
        const KPartitionState *state = &g_array_index(response->partitions, KPartitionState, i);
        if (topic == NULL || strcmp(topic->name, state->tp.topic) != 0)
            topic = topic_get_or_create(metadata, state->tp.topic);
        update_partition(topic, state);
    }
    for (guint t = 0; t < metadata->topic_list->len; t++)
        recompute_available(metadata, g_ptr_array_index(metadata->topic_list, t));
    metadata->refreshed_ns = now_ns;
    metadata->version++;
}

guint64
producer_metadata_version(const ProducerMetadata *metadata)
{
    return metadata->version;
}

gint64
producer_metadata_refreshed_ns(const ProducerMetadata *metadata)
{
    return metadata->refreshed_ns;
}

guint32
producer_metadata_partition_count(const ProducerMetadata *metadata, const char *topic_name)
{
    const MetaTopic *topic = g_hash_table_lookup(metadata->topics, topic_name);
    return topic != NULL ? topic->partitions->len : 0;
}

const GArray *
producer_metadata_available(const ProducerMetadata *metadata, const char *topic_name)
{
    const MetaTopic *topic = g_hash_table_lookup(metadata->topics, topic_name);
    return topic != NULL ? topic->available : NULL;
}

gint32
producer_metadata_leader(const ProducerMetadata *metadata, const KTopicPartition *tp)
{
    const MetaTopic *topic = g_hash_table_lookup(metadata->topics, tp->topic);
    if (topic == NULL || tp->partition < 0 || (guint)tp->partition >= topic->partitions->len)
        return KAFKA_NO_LEADER;
    gint32 leader = g_array_index(topic->partitions, MetaPartition, tp->partition).leader;
    if (leader == KAFKA_NO_LEADER ||
        producer_metadata_broker_node(metadata, leader) == SIM_NODE_NONE)
        return KAFKA_NO_LEADER;
    return leader;
}

SimNodeId
producer_metadata_broker_node(const ProducerMetadata *metadata, gint32 broker_id)
{
    /* A handful of brokers: a linear scan beats a search. */
    for (guint i = 0; i < metadata->brokers->len; i++) {
        const KBrokerEndpoint *broker = &g_array_index(metadata->brokers, KBrokerEndpoint, i);
        if (broker->broker_id == broker_id)
            return broker->node;
    }
    return SIM_NODE_NONE;
}

const GArray *
producer_metadata_brokers(const ProducerMetadata *metadata)
{
    return metadata->brokers;
}

void
producer_metadata_check_invariants(const ProducerMetadata *metadata)
{
    KSIM_ASSERT(g_hash_table_size(metadata->topics) == metadata->topic_list->len);
    for (guint i = 1; i < metadata->brokers->len; i++) {
        const KBrokerEndpoint *a = &g_array_index(metadata->brokers, KBrokerEndpoint, i - 1);
        const KBrokerEndpoint *b = &g_array_index(metadata->brokers, KBrokerEndpoint, i);
        KSIM_ASSERT(a->broker_id < b->broker_id);
    }
    for (guint t = 0; t < metadata->topic_list->len; t++) {
        const MetaTopic *topic = g_ptr_array_index(metadata->topic_list, t);
        KSIM_ASSERT(g_hash_table_lookup(metadata->topics, topic->name) == topic);
        KSIM_ASSERT(topic->available->len <= topic->partitions->len);
        for (guint i = 0; i < topic->available->len; i++) {
            guint32 p = g_array_index(topic->available, guint32, i);
            KSIM_ASSERT(p < topic->partitions->len);
            if (i > 0)
                KSIM_ASSERT(g_array_index(topic->available, guint32, i - 1) < p);
        }
    }
}
