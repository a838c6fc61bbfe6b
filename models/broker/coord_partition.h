/*
 * coord_partition: the partitions of an internal topic whose leaders act as
 * coordinators (__consumer_offsets for group_coord, __transaction_state for
 * txn_coord), as one broker leads them.
 *
 * On becoming a partition's leader, a coordinator loads the partition's log
 * before it serves the partition's ids (Kafka's loadGroupsAndOffsets and
 * loadTransactionsForTxnTopicPartition): the load takes a modelled 1 ms plus
 * 10 ns per logical byte of the log (a 100 MB/s read) and reads the log in
 * chunks of offsets.load.buffer.size (5 MiB); until it is done, requests for
 * the partition's ids are answered COORDINATOR_LOAD_IN_PROGRESS. A new
 * leader epoch of a leadership already held keeps what is loaded.
 *
 * A coordinator keeps its partitions in a GPtrArray sorted by partition, of
 * its own structs whose first member is a CoordPartition. It sees its broker
 * through broker_services.h only.
 */
#ifndef COORD_PARTITION_H
#define COORD_PARTITION_H

#include "broker_services.h"
#include "replica.h"

typedef struct CoordPartition CoordPartition;

/* The load of `partition` from the leader's `log`, once its time has passed;
 * `user_data` is the coordinator's, given to coord_partition_elected. */
typedef void (*CoordLoadFn)(void *user_data, CoordPartition *partition, Plog *log);

struct CoordPartition {
    const char *topic; /* a static string */
    gint32 partition;
    gint32 leader_epoch;
    SimTimerId load_timer; /* pending exactly while loading */
    gboolean loaded;
    CoordLoadFn load;
    void *user_data; /* load's */
};

/* The entry of `partition`, or NULL. */
gpointer coord_partition_find(const GPtrArray *partitions, gint32 partition);
/* The broker became leader of `p`, a partition of `topic`: a new leader epoch
 * of a partition already held updates the entry and returns NULL; otherwise
 * a new entry of `size` bytes (zeroed but for the CoordPartition) is added
 * and returned, and `load` runs with `user_data` once the partition's load
 * time has passed. */
gpointer coord_partition_elected(GPtrArray *partitions, gsize size, BrokerServices *services,
                                 const char *topic, const Partition *p, CoordLoadFn load,
                                 void *user_data);
/* Stops the entry's load (before the caller frees it). */
void coord_partition_stop(BrokerServices *services, CoordPartition *partition);

/* Reads `log` from its start to its end for a load, calling `batch_fn` with
 * every batch and `asked`, the first offset not read before (a batch may
 * begin below it); stops early at a corrupt batch (what came before it is
 * loaded). */
typedef void (*CoordBatchFn)(const PlogBatch *batch, gint64 asked, void *user_data);
void coord_partition_read_log(Plog *log, CoordBatchFn batch_fn, void *user_data);

/* A coordinator record's text (a transactional id, a group or member id, a
 * topic) as keyless records of `batch` after its header: 8 bytes of the text
 * in each value, little endian, zero-padded; each record counts
 * `record_bytes`. */
void coord_record_add_string(PlogBatch *batch, const char *text, guint32 record_bytes);
/* The records coord_record_add_string writes for `text`. */
guint coord_record_string_chunks(const char *text);
/* Reads `chunks` records of `batch` from *at into `out` (of `size` bytes)
 * and moves *at past them; FALSE when they run past the batch or the text
 * does not fit. */
gboolean coord_record_read_string(const PlogBatch *batch, guint *at, guint chunks, char *out,
                                  gsize size);

/* Asserts that `partitions` is sorted by partition without duplicates, holds
 * exactly the partitions of its topic the broker leads, and that each is
 * loading exactly while its load timer is pending. */
void coord_partitions_check(const BrokerServices *services, const GPtrArray *partitions,
                            const char *topic);

#endif
