/*
 * coord_partition: see coord_partition.h.
 */
#include "coord_partition.h"

#include "sim_assert.h"

#include <string.h>

/* The modelled cost of loading a partition: a fixed start plus a sequential
 * read of the log at 100 MB/s. */
#define LOAD_BASE_NS (1 * SIM_NS_PER_MS)
#define LOAD_NS_PER_BYTE 10
#define LOAD_READ_BYTES (5 * 1024 * 1024) /* offsets.load.buffer.size */

gpointer
coord_partition_find(const GPtrArray *partitions, gint32 partition)
{
    for (guint i = 0; i < partitions->len; i++) {
        CoordPartition *entry = g_ptr_array_index(partitions, i);
        if (entry->partition == partition)
            return entry;
    }
    return NULL;
}

static gint
entry_compare(gconstpointer a, gconstpointer b)
{
    gint32 x = (*(CoordPartition *const *)a)->partition;
    gint32 y = (*(CoordPartition *const *)b)->partition;
    return (x > y) - (x < y);
}

static void
load_fired(SimWorld *world, void *ctx, void *arg)
{
    CoordPartition *entry = arg;
    (void)world;
    entry->load_timer = SIM_EVENT_ID_NONE;
    KTopicPartition tp;
    ktp_set(&tp, entry->topic, entry->partition);
    Plog *log = broker_services_led_log(broker_services_from_node_ctx(ctx), &tp);
    KSIM_ASSERT(log != NULL);
    entry->loaded = TRUE;
    entry->load(entry->user_data, entry, log);
}

gpointer
coord_partition_elected(GPtrArray *partitions, gsize size, BrokerServices *services,
                        const char *topic, const Partition *p, CoordLoadFn load, void *user_data)
{
    KSIM_ASSERT(size >= sizeof(CoordPartition));
    KSIM_ASSERT(strcmp(p->tp.topic, topic) == 0);
    CoordPartition *entry = coord_partition_find(partitions, p->tp.partition);
    if (entry != NULL) {
        /* A new epoch of the same leadership: what is loaded stays. */
        entry->leader_epoch = p->leader_epoch;
        return NULL;
    }
    entry = g_malloc0(size);
    entry->topic = topic;
    entry->partition = p->tp.partition;
    entry->leader_epoch = p->leader_epoch;
    entry->load = load;
    entry->user_data = user_data;
    gint64 delay_ns = LOAD_BASE_NS + plog_size_bytes(p->log) * LOAD_NS_PER_BYTE;
    entry->load_timer = sim_timer_set(broker_services_world(services),
                                      broker_services_node(services), delay_ns, load_fired, entry);
    g_ptr_array_add(partitions, entry);
    g_ptr_array_sort(partitions, entry_compare);
    return entry;
}

void
coord_partition_stop(BrokerServices *services, CoordPartition *partition)
{
    sim_timer_cancel(broker_services_world(services), partition->load_timer);
    partition->load_timer = SIM_EVENT_ID_NONE;
}

void
coord_partition_read_log(Plog *log, CoordBatchFn batch_fn, void *user_data)
{
    gint64 offset = plog_log_start_offset(log);
    gint64 leo = plog_log_end_offset(log);
    g_autoptr(GPtrArray) batches = plog_batch_array_new();
    while (offset < leo) {
        g_ptr_array_set_size(batches, 0);
        PlogReadStatus status = plog_read(log, offset, LOAD_READ_BYTES, batches);
        if (batches->len == 0)
            break;
        for (guint b = 0; b < batches->len; b++) {
            const PlogBatch *batch = g_ptr_array_index(batches, b);
            batch_fn(batch, offset, user_data);
            gint64 next = plog_batch_last_offset(batch) + 1;
            KSIM_ASSERT(next > offset);
            offset = next;
        }
        if (status != PLOG_READ_OK)
            break; /* a corrupt batch: what came before it is loaded */
    }
}

void
coord_record_add_string(PlogBatch *batch, const char *text, guint32 record_bytes)
{
    gsize len = strlen(text);
    for (gsize at = 0; at < len; at += 8) {
        guint64 chunk = 0;
        for (gsize i = 0; i < 8 && at + i < len; i++)
            chunk |= (guint64)(guint8)text[at + i] << (8 * i);
        plog_batch_add_record(batch, 0, chunk, record_bytes);
    }
}

guint
coord_record_string_chunks(const char *text)
{
    return (guint)((strlen(text) + 7) / 8);
}

gboolean
coord_record_read_string(const PlogBatch *batch, guint *at, guint chunks, char *out, gsize size)
{
    if (*at + chunks > batch->records->len || (gsize)chunks * 8 > size)
        return FALSE;
    memset(out, 0, size);
    for (guint c = 0; c < chunks; c++) {
        guint64 chunk = g_array_index(batch->records, PlogRecord, *at + c).value;
        for (guint i = 0; i < 8; i++)
            out[c * 8 + i] = (char)(chunk >> (8 * i));
    }
    /* The last chunk may fill `out` to its end: a text of size - 1 bytes
     * has its terminator there, a longer one does not fit. */
    if (out[size - 1] != '\0')
        return FALSE;
    *at += chunks;
    return TRUE;
}

void
coord_partitions_check(const BrokerServices *services, const GPtrArray *partitions,
                       const char *topic)
{
    SimWorld *world = broker_services_world(services);
    for (guint i = 0; i < partitions->len; i++) {
        const CoordPartition *entry = g_ptr_array_index(partitions, i);
        if (i > 0)
            KSIM_ASSERT(((const CoordPartition *)g_ptr_array_index(partitions, i - 1))->partition <
                        entry->partition);
        KSIM_ASSERT(strcmp(entry->topic, topic) == 0);
        KSIM_ASSERT(entry->loaded == !sim_timer_pending(world, entry->load_timer));
        KTopicPartition tp;
        ktp_set(&tp, topic, entry->partition);
        KSIM_ASSERT(broker_services_led_log(services, &tp) != NULL);
    }
    /* Sorted, unique and all led: the same set when as many are led. */
    KSIM_ASSERT(broker_services_led_count(services, topic) == partitions->len);
}
