/*
 * kraft_records: the metadata records of KRaft mode (the *Record.json
 * schemas of Kafka's metadata/src/main/resources/common/metadata, Apache
 * Kafka 4.0, commit 1eb7644 of trunk) and the metadata image they build when replayed in
 * log order (Kafka's MetadataDelta/MetadataImage, ClusterImage and
 * TopicsImage), as the controllers and the brokers replay them.
 *
 * Records kept: RegisterBroker (id, incarnation id; the new registration is
 * fenced and its broker epoch is the record's offset), FenceBroker and
 * UnfenceBroker (id, epoch), Topic (a topic id, its partition count, and
 * the two configs the controller reads: unclean.leader.election.enable and
 * min.insync.replicas, Kafka's ConfigRecords),
 * Partition (replicas, ISR, ELR, LastKnownElr, leader), PartitionChange (the fields it
 * changes), ProducerIds (the next producer id block's start,
 * ProducerIdControlManager's) and BrokerRegistrationChange (a broker
 * entering controlled shutdown). Replay follows PartitionRegistration.merge: a PartitionChange
 * that names a leader bumps the leader epoch, and every change bumps the
 * partition epoch (KIP-497's version of the partition state, which
 * AlterPartition must name).
 *
 * In the metadata log a record is a PlogRecord whose key is its type (from 2
 * up; 1 is the quorum's LeaderChange) and whose value is its id in a
 * KraftRecordStore: the log carries no payloads (PlogRecord's "the payload is
 * not stored"), so the store holds each record's fields, immutable once
 * appended, shared by every node that replays it — the bytes of the record,
 * kept once. Topics are named by dense ids (KIP-516's topic ids) the store
 * hands out, so no image compares names.
 */
#ifndef KRAFT_RECORDS_H
#define KRAFT_RECORDS_H

#include <glib.h>

#include "kafka_proto.h"
#include "plog_batch.h"
#include "sim_net.h"

/* Kafka's LeaderConstants: NO_LEADER, NO_LEADER_CHANGE. */
#define KRAFT_NO_LEADER (-1)
#define KRAFT_NO_LEADER_CHANGE (-2)

typedef enum {
    KRAFT_REC_REGISTER_BROKER = 2,
    KRAFT_REC_FENCE_BROKER,
    KRAFT_REC_UNFENCE_BROKER,
    KRAFT_REC_TOPIC,
    KRAFT_REC_PARTITION,
    KRAFT_REC_PARTITION_CHANGE,
    KRAFT_REC_PRODUCER_IDS,
    KRAFT_REC_BROKER_REGISTRATION_CHANGE,
    KRAFT_REC_FIRST = KRAFT_REC_REGISTER_BROKER,
    KRAFT_REC_LAST = KRAFT_REC_BROKER_REGISTRATION_CHANGE,
} KraftRecordType;

typedef struct {
    KraftRecordType type;
    /* RegisterBroker, FenceBroker, UnfenceBroker. */
    gint32 broker_id;
    guint64 incarnation; /* RegisterBroker */
    SimNodeId node;      /* RegisterBroker: its listener (the endpoint clients and replicas use) */
    gint64 broker_epoch; /* FenceBroker, UnfenceBroker, BrokerRegistrationChange: the
                          * registration's epoch */
    gboolean in_controlled_shutdown; /* BrokerRegistrationChange */
    /* Topic, Partition, PartitionChange. */
    guint32 topic;      /* kraft_record_store_topic */
    gint32 partitions;  /* Topic */
    /* Topic: the ConfigRecords CreateTopics writes with it, its
     * unclean.leader.election.enable and min.insync.replicas. */
    gboolean unclean;
    gint32 min_isr;
    gint32 partition;
    /* Partition: the whole state. PartitionChange: leader is
     * KRAFT_NO_LEADER_CHANGE when unchanged, the ISR set only when
     * isr_set. */
    guint8 n_replicas;
    gint32 replicas[KAFKA_REPLICAS_MAX];
    gboolean isr_set;
    guint8 n_isr;
    gint32 isr[KAFKA_REPLICAS_MAX];
    gint32 leader;
    /* Eligible leader replicas (KIP-966). Partition: the whole set;
     * PartitionChange: set only when elr_set. */
    gboolean elr_set;
    guint8 n_elr;
    gint32 elr[KAFKA_REPLICAS_MAX];
    /* KIP-966's LastKnownElr. Partition: the whole list; PartitionChange:
     * set only when last_known_elr_set. */
    gboolean last_known_elr_set;
    guint8 n_last_known_elr;
    gint32 last_known_elr[KAFKA_REPLICAS_MAX];
    /* PartitionChange: LeaderRecoveryState RECOVERING, set by an unclean
     * election (the new leader was not in the ISR). */
    gboolean leader_recovering;
    gint64 next_producer_id; /* ProducerIds */
} KraftRecord;

/* Every record written, by id (from 1), and the topic names by id. */
typedef struct KraftRecordStore KraftRecordStore;
KraftRecordStore *kraft_record_store_new(void);
void kraft_record_store_free(KraftRecordStore *store);
/* Copies `record` in; returns its id. */
guint64 kraft_record_store_add(KraftRecordStore *store, const KraftRecord *record);
/* The record `id`; NULL when there is none. (transfer none) */
const KraftRecord *kraft_record_store_get(const KraftRecordStore *store, guint64 id);
/* The topic id of `name`, given on first use (from 0). */
guint32 kraft_record_store_topic(KraftRecordStore *store, const char *name);
/* The id of `name`, or -1 when it has none. */
gint64 kraft_record_store_find_topic(const KraftRecordStore *store, const char *name);
const char *kraft_record_store_topic_name(const KraftRecordStore *store, guint32 topic);
/* The record as a log record (key: its type; value: its id). */
PlogRecord kraft_record_to_plog(const KraftRecordStore *store, guint64 id);
const char *kraft_record_type_name(KraftRecordType type);

/* ---- the image ---- */

typedef struct {
    gint32 id;
    guint64 incarnation;
    SimNodeId node;
    gint64 epoch; /* the offset of its RegisterBroker record */
    gboolean fenced;
    gboolean in_controlled_shutdown; /* KIP-841's state: no new leaderships, out of ISRs */
} KraftBroker;

typedef struct {
    guint32 topic;
    gint32 partition;
    guint8 n_replicas;
    gint32 replicas[KAFKA_REPLICAS_MAX];
    guint8 n_isr;
    gint32 isr[KAFKA_REPLICAS_MAX];
    /* KIP-966: replicas out of the ISR that hold everything committed (the
     * ISR had shrunk below min.insync.replicas when they left it). */
    guint8 n_elr;
    gint32 elr[KAFKA_REPLICAS_MAX];
    /* KIP-966's LastKnownElr (PartitionRegistration.lastKnownElr): with the
     * unclean recovery manager off (Kafka 4.0), the leader it had when its
     * ISR emptied (the last known leader); with it on, the replicas that
     * were in its ISR or ELR since the ISR fell below min.insync.replicas
     * and are in neither now. Empty otherwise. */
    guint8 n_last_known_elr;
    gint32 last_known_elr[KAFKA_REPLICAS_MAX];
    gint32 leader;
    gint32 leader_epoch;
    gint32 partition_epoch;
    gint64 last_change_offset; /* the offset of the record that made this state */
} KraftPartition;

typedef struct KraftImage KraftImage;
KraftImage *kraft_image_new(void);
void kraft_image_free(KraftImage *image);
KraftImage *kraft_image_copy(const KraftImage *image);
/* Applies `record`, found at `offset` of the metadata log. A record that
 * names what the image lacks (a change to an unknown partition) is ignored,
 * as MetadataDelta throws and the replayer logs. */
void kraft_image_replay(KraftImage *image, const KraftRecord *record, gint64 offset);
/* Replays the records of `batch` below `end` (records of other keys, the
 * quorum's own, skipped). */
void kraft_image_replay_batch(KraftImage *image, const KraftRecordStore *store,
                              const PlogBatch *batch, gint64 end);
/* The first producer id no block has been given yet. */
gint64 kraft_image_next_producer_id(const KraftImage *image);
/* The offset after the last record replayed; 0 for a new image. */
gint64 kraft_image_end_offset(const KraftImage *image);
/* Makes `image` a copy of `from` (a snapshot loaded in place). */
void kraft_image_assign(KraftImage *image, const KraftImage *from);
/* The logical size of the image written as records, as a snapshot holds it
 * (Kafka's SnapshotEmitter writes the image's RegisterBroker, Topic,
 * Partition and ProducerIds records): an estimate of each record's size. */
gint64 kraft_image_size_bytes(const KraftImage *image);

/* Snapshot contents, kept once for the run as records are: a copy of
 * `image` (the same id for every image of one end offset: replay is
 * deterministic, so they are equal). */
guint64 kraft_record_store_add_image(KraftRecordStore *store, const KraftImage *image);
/* (transfer none); NULL when there is none. */
const KraftImage *kraft_record_store_image(const KraftRecordStore *store, guint64 id);

/* (transfer none); NULL when absent. */
const KraftBroker *kraft_image_broker(const KraftImage *image, gint32 id);
const KraftPartition *kraft_image_partition(const KraftImage *image, guint32 topic,
                                            gint32 partition);
/* The partition count of `topic`; 0 when it does not exist. */
gint32 kraft_image_topic_partitions(const KraftImage *image, guint32 topic);
/* Its unclean.leader.election.enable; FALSE when it does not exist. */
gboolean kraft_image_topic_unclean(const KraftImage *image, guint32 topic);
/* Its min.insync.replicas; 1 when it does not exist. */
gint32 kraft_image_topic_min_isr(const KraftImage *image, guint32 topic);
/* The registered brokers, by id. (transfer none) */
const GArray *kraft_image_brokers(const KraftImage *image); /* KraftBroker */
/* Every partition, sorted by topic id then partition. (transfer container) */
GPtrArray *kraft_image_partitions(const KraftImage *image);
/* The partitions of `after` that may differ from `before`'s (all of them
 * when `before` is NULL), in `after`'s order: those in the chunks the two
 * images do not share (an image copied or assigned from another shares its
 * partitions, copy-on-write, until either changes them). A superset of the
 * changed ones; the walk of a delta need look no further. (transfer
 * container) */
GPtrArray *kraft_image_partitions_not_shared(const KraftImage *before, const KraftImage *after);
/* How many chunks hold the partitions (a measure of the image's memory:
 * each is one allocation of 64 partitions). */
guint kraft_image_chunk_count(const KraftImage *image);
/* Makes the image hold the store's copy of each of its partition chunks
 * that another image (of any broker or controller) holds the same, and
 * puts the others in the store for the next: the brokers of a cluster,
 * replaying one metadata log, then keep one copy of what they agree on.
 * What the image reads is unchanged. The store must outlive the image. */
void kraft_image_intern(KraftImage *image, KraftRecordStore *store);
/* How many distinct chunks the store's images have interned. */
guint kraft_record_store_interned_chunks(const KraftRecordStore *store);
/* ClusterControlManager.isActive: registered, unfenced and not in
 * controlled shutdown (a replica that may lead or join an ISR). */
gboolean kraft_image_broker_active(const KraftImage *image, gint32 id);
/* Registered and unfenced (a broker whose session the controller watches). */
gboolean kraft_image_broker_unfenced(const KraftImage *image, gint32 id);

gboolean kraft_ids_contain(const gint32 *ids, guint n, gint32 id);

#endif
