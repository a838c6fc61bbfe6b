/*
 * kraft_placer: StripedReplicaPlacer (see kraft_placer.h). The structure
 * follows Kafka's: BrokerList, Rack (unfenced and fenced lists) and
 * RackList, with their offsets and iteration epochs.
 */
#include "kraft_placer.h"

#include "sim_assert.h"

#include <string.h>

typedef struct {
    GArray *brokers; /* gint32 */
    guint index;
    guint offset;
    gint epoch;
} BrokerList;

typedef struct {
    gint32 rack;
    BrokerList unfenced;
    BrokerList fenced;
} Rack;

static gint
compare_ids(gconstpointer a, gconstpointer b)
{
    gint32 x = *(const gint32 *)a, y = *(const gint32 *)b;
    return (x > y) - (x < y);
}

static void
list_shuffle(GArray *array, guint element_size, SimRng *rng)
{
    /* Collections.shuffle: from the end, swap each with one at or before it. */
    guint8 tmp[64];
    KSIM_ASSERT(element_size <= sizeof tmp);
    for (guint i = array->len; i > 1; i--) {
        guint j = (guint)sim_rng_range(rng, 0, i);
        guint8 *a = (guint8 *)array->data + (gsize)(i - 1) * element_size;
        guint8 *b = (guint8 *)array->data + (gsize)j * element_size;
        memcpy(tmp, a, element_size);
        memcpy(a, b, element_size);
        memcpy(b, tmp, element_size);
    }
}

/* BrokerList.initialize: sorted, a random start. */
static void
broker_list_initialize(BrokerList *list, SimRng *rng)
{
    if (list->brokers->len == 0)
        return;
    g_array_sort(list->brokers, compare_ids);
    list->offset = (guint)sim_rng_range(rng, 0, list->brokers->len);
}

/* BrokerList.next: -1 once every broker was returned in `epoch`. */
static gint32
broker_list_next(BrokerList *list, gint epoch)
{
    guint n = list->brokers->len;
    if (n == 0)
        return -1;
    if (list->epoch != epoch) {
        list->epoch = epoch;
        list->index = 0;
        list->offset = (list->offset + 1) % n;
    }
    if (list->index >= n)
        return -1;
    gint32 broker = g_array_index(list->brokers, gint32, (list->index + list->offset) % n);
    list->index++;
    return broker;
}

static gint32
rack_next(Rack *rack, gint epoch)
{
    gint32 broker = broker_list_next(&rack->unfenced, epoch);
    return broker >= 0 ? broker : broker_list_next(&rack->fenced, epoch);
}

static gint
compare_racks(gconstpointer a, gconstpointer b)
{
    const Rack *x = a, *y = b;
    return (x->rack > y->rack) - (x->rack < y->rack);
}

gboolean
kraft_place_replicas(const KraftUsableBroker *brokers, guint n_brokers, guint n_partitions,
                     guint rf, SimRng *rng, gint32 *out, const char **why)
{
    guint unfenced = 0;
    for (guint i = 0; i < n_brokers; i++)
        unfenced += !brokers[i].fenced;
    if (rf == 0) {
        *why = "the replication factor must be positive";
        return FALSE;
    }
    if (unfenced == 0) {
        *why = "all brokers are currently fenced";
        return FALSE;
    }
    if (rf > n_brokers) {
        *why = "the target replication factor cannot be reached: too few brokers are registered";
        return FALSE;
    }
    /* RackList's constructor: racks in name order (the "none" rack first,
     * as Optional.empty sorts), each list sorted with a random offset. */
    GArray *racks = g_array_new(FALSE, TRUE, sizeof(Rack));
    for (guint i = 0; i < n_brokers; i++) {
        guint r = 0;
        while (r < racks->len && g_array_index(racks, Rack, r).rack != brokers[i].rack)
            r++;
        if (r == racks->len) {
            Rack fresh = {.rack = brokers[i].rack};
            fresh.unfenced.brokers = g_array_new(FALSE, FALSE, sizeof(gint32));
            fresh.fenced.brokers = g_array_new(FALSE, FALSE, sizeof(gint32));
            g_array_append_val(racks, fresh);
        }
        Rack *rack = &g_array_index(racks, Rack, r);
        g_array_append_val(brokers[i].fenced ? rack->fenced.brokers : rack->unfenced.brokers,
                           brokers[i].id);
    }
    g_array_sort(racks, compare_racks);
    for (guint r = 0; r < racks->len; r++) {
        Rack *rack = &g_array_index(racks, Rack, r);
        broker_list_initialize(&rack->fenced, rng);
        broker_list_initialize(&rack->unfenced, rng);
    }
    guint n_racks = racks->len;
    guint offset = (guint)sim_rng_range(rng, 0, n_racks);
    gint epoch = 0;
    for (guint p = 0; p < n_partitions; p++) {
        gint32 *replicas = &out[(gsize)p * rf];
        /* RackList.place. */
        if ((guint)epoch == unfenced && unfenced > 1) {
            /* RackList.shuffle: the racks' order, then each rack's lists
             * (Kafka goes through its racks in a HashMap's order; here in
             * the shuffled one). */
            list_shuffle(racks, sizeof(Rack), rng);
            for (guint r = 0; r < n_racks; r++) {
                Rack *rack = &g_array_index(racks, Rack, r);
                list_shuffle(rack->fenced.brokers, sizeof(gint32), rng);
                list_shuffle(rack->unfenced.brokers, sizeof(gint32), rng);
            }
            epoch = 0;
        }
        if (offset == n_racks)
            offset = 0;
        guint first = offset;
        for (;;) {
            gint32 leader = broker_list_next(&g_array_index(racks, Rack, first).unfenced, epoch);
            if (leader >= 0) {
                replicas[0] = leader;
                break;
            }
            first = (first + 1) % n_racks;
        }
        gint first_rack = (gint)first;
        guint rack_index = offset;
        for (guint k = 1; k < rf; k++) {
            gint32 result = -1;
            do {
                if ((gint)rack_index == first_rack)
                    first_rack = -1;
                else
                    result = rack_next(&g_array_index(racks, Rack, rack_index), epoch);
                rack_index = (rack_index + 1) % n_racks;
            } while (result < 0);
            replicas[k] = result;
        }
        epoch++;
        offset++;
    }
    for (guint r = 0; r < racks->len; r++) {
        g_array_free(g_array_index(racks, Rack, r).unfenced.brokers, TRUE);
        g_array_free(g_array_index(racks, Rack, r).fenced.brokers, TRUE);
    }
    g_array_free(racks, TRUE);
    return TRUE;
}
