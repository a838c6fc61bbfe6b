/*
 * server_assignor: the consumer group protocol's server-side assignors
 * (KIP-848), which the group coordinator runs to compute a group's target
 * assignment: Kafka 4.0's UniformAssignor ("uniform") and RangeAssignor
 * ("range"), org.apache.kafka.coordinator.group.assignor, trunk 1eb7644.
 *
 * uniform, homogeneous subscriptions (every member subscribes to the same
 * topics): UniformHomogeneousAssignmentBuilder. Each member gets
 * floor(P / M) partitions of the P subscribed ones, and the first P % M
 * members (in member order) one more; a member keeps its current partitions
 * of subscribed topics up to its quota (in topic, then partition order) and
 * gives up the rest; the partitions nobody keeps, in topic and partition
 * order, then fill the members below their quota in member order. Moves are
 * as few as the balance allows.
 *
 * uniform, heterogeneous subscriptions: Kafka's
 * UniformHeterogeneousAssignmentBuilder balances the members' totals across
 * topics with a sorted-member search. ksim runs the homogeneous builder
 * topic by topic over the members subscribed to each topic instead: each
 * topic is balanced and sticky on its own, the totals may differ by more
 * than one (a simplification, documented in README).
 *
 * range: RangeAssignor, not sticky. Members sorted by member id (no static
 * members in ksim); each topic's partitions are cut into contiguous ranges,
 * floor(P / M) each and one more for the first P % M members subscribed to
 * it.
 *
 * Kafka iterates HashMaps of members and topics; ksim iterates members by
 * id and topics by name, partitions ascending (the order Kafka's HashSet of
 * small integers gives), so a result is the same on every run.
 */
#ifndef SERVER_ASSIGNOR_H
#define SERVER_ASSIGNOR_H

#include <glib.h>

#include "kafka_proto.h"

typedef enum {
    SERVER_ASSIGNOR_UNIFORM = 0,
    SERVER_ASSIGNOR_RANGE,
    SERVER_ASSIGNOR_COUNT,
} ServerAssignorKind;

/* "uniform" / "range"; NULL for anything else. */
const char *server_assignor_name(ServerAssignorKind kind);
/* TRUE and the kind when `name` is one. */
gboolean server_assignor_parse(const char *name, ServerAssignorKind *out);

/* One member as the assignor sees it: its id, its subscription (topic
 * names, sorted, distinct) and its current target assignment (sorted),
 * all borrowed. */
typedef struct {
    const char *member_id;
    const GArray *topics;  /* KTopicName */
    const GArray *current; /* KTopicPartition */
} ServerAssignorMember;

/* One topic of the group's subscription metadata: its partition count. */
typedef struct {
    char topic[KAFKA_TOPIC_NAME_MAX + 1];
    gint32 partitions;
} ServerAssignorTopic;

/* The target assignment of `n_members` members (sorted by id, distinct)
 * over `topics` (sorted by name; a subscribed topic missing from it, or
 * with 0 partitions, is not assigned: Kafka leaves topics unknown to its
 * metadata out of the subscription metadata). Returns one sorted
 * KTopicPartition GArray per member, in member order. (transfer full) */
GPtrArray *server_assignor_assign(ServerAssignorKind kind, const ServerAssignorMember *members,
                                  guint n_members, const GArray *topics);

#endif
