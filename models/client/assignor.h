/*
 * assignor: the consumer group partition assignment strategies of Kafka's
 * classic group protocol, computed by the group leader.
 *
 *  - range (RangeAssignor, Kafka's default): per topic, the members subscribed
 *    to it sorted by member id; the partitions split in consecutive ranges, the
 *    first (partitions % members) members getting one extra.
 *  - roundrobin (RoundRobinAssignor): every subscribed topic-partition sorted
 *    by (topic, partition), dealt to the members sorted by id in a circle,
 *    skipping members not subscribed to the partition's topic.
 *  - sticky (StickyAssignor / AbstractStickyAssignor, without rack
 *    awareness): as balanced as possible, then keeping as many previously owned
 *    partitions as possible. The "constrained" algorithm runs when every member
 *    has the same subscription, the "general" one otherwise; both follow
 *    Kafka's code step by step, including its tie-breaking.
 *  - cooperative-sticky (CooperativeStickyAssignor, KIP-429): sticky's
 *    assignment, from which every partition that would pass from one member
 *    to another is withheld (assigned to nobody) for this generation: its
 *    owner revokes it and rejoins, and the next rebalance gives it to its new
 *    owner. Members report the partitions they own in their subscription
 *    (Kafka's ConsumerProtocolSubscription ownedPartitions), as for sticky.
 *
 * Input: topics with their partition counts (the group leader's metadata) and
 * members with their subscriptions, and, for sticky and cooperative-sticky,
 * each member's previously owned partitions and the generation they were
 * owned in. As in Kafka, only topics that are known and subscribed by at
 * least one member take part; subscriptions to unknown topics are ignored.
 *
 * Where Kafka's result depends on the iteration order of a Java HashMap (the
 * order in which sticky visits members' previous assignments, and which of
 * several equivalent partitions it moves back), ksim uses sorted order: members
 * by id, partitions by (topic, partition). The result is then always a valid,
 * equally balanced and equally sticky assignment, and may differ from a given
 * Kafka run only where Kafka's own result depends on hash layout.
 *
 * Names are compared bytewise (strcmp), which is Java's String order for
 * Kafka's legal topic names ([a-zA-Z0-9._-]) and for ASCII member ids.
 */
#ifndef KSIM_ASSIGNOR_H
#define KSIM_ASSIGNOR_H

#include <glib.h>

/* Bounds asserted by the assignor (the CLI checks them with a message). */
#define ASSIGNOR_MEMBERS_MAX (1u << 16)
#define ASSIGNOR_TOPICS_MAX (1u << 16)
#define ASSIGNOR_PARTITIONS_MAX (1u << 22) /* per topic, and in total */

/* Kafka's AbstractStickyAssignor.DEFAULT_GENERATION: "no generation known". */
#define ASSIGNOR_GENERATION_NONE (-1)

typedef enum {
    ASSIGNOR_RANGE,
    ASSIGNOR_ROUNDROBIN,
    ASSIGNOR_STICKY,
    ASSIGNOR_COOPERATIVE_STICKY,
} AssignorStrategy;

/* Parses Kafka's short strategy names "range", "roundrobin", "sticky",
 * "cooperative-sticky". FALSE for anything else. */
gboolean assignor_strategy_parse(const char *name, AssignorStrategy *out);

/* The short name of a strategy ("range", "roundrobin", "sticky",
 * "cooperative-sticky"). */
const char *assignor_strategy_name(AssignorStrategy strategy);

/* TRUE for a strategy that supports Kafka's COOPERATIVE rebalance protocol
 * (ConsumerPartitionAssignor.supportedProtocols): cooperative-sticky only. */
gboolean assignor_strategy_cooperative(AssignorStrategy strategy);

/* ---- Input ---- */

typedef struct AssignorInput AssignorInput;

/* An empty input. (transfer full) */
AssignorInput *assignor_input_new(void);
void assignor_input_free(AssignorInput *input);

/* Declares a topic with `partitions` partitions (0 is allowed: such a topic
 * has nothing to assign). FALSE, and nothing changes, if the topic was
 * already declared. The name is copied. */
gboolean assignor_input_add_topic(AssignorInput *input, const char *topic, guint32 partitions);

/* Declares a member subscribed to the `n_topics` topics of `topics`, which may
 * name undeclared topics (they are ignored, as Kafka ignores topics missing
 * from its metadata). `generation` is the generation its owned partitions
 * date from, or ASSIGNOR_GENERATION_NONE. FALSE, and nothing changes, if the
 * member was already declared or `topics` names a topic twice. Strings are
 * copied. */
gboolean assignor_input_add_member(AssignorInput *input, const char *member_id,
                                   const char *const *topics, guint n_topics, gint32 generation);

/* Records that `member_id` owned `topic`-`partition` before this rebalance
 * (used by sticky and cooperative-sticky). The topic need not be declared
 * and the partition need not exist; such entries are ignored, as Kafka
 * ignores owned partitions of deleted topics. FALSE, and nothing changes, if the member is not
 * declared or already owns that partition. */
gboolean assignor_input_add_owned(AssignorInput *input, const char *member_id, const char *topic,
                                  guint32 partition);

/* The number of declared members. */
guint assignor_input_member_count(const AssignorInput *input);

/* TRUE if `member_id` has been declared. */
gboolean assignor_input_has_member(const AssignorInput *input, const char *member_id);

/* ---- Result ---- */

typedef struct AssignorResult AssignorResult;

/* Computes the assignment. Every declared member appears in the result, with
 * an empty list when it gets nothing. (transfer full) */
AssignorResult *assignor_assign(const AssignorInput *input, AssignorStrategy strategy);
void assignor_result_free(AssignorResult *result);

/* Members of the result, sorted by member id; `member` indexes that order. */
guint assignor_result_member_count(const AssignorResult *result);
const char *assignor_result_member_id(const AssignorResult *result, guint member);

/* The index of `member_id` in the result, or -1 if it is not a member. */
gint assignor_result_find_member(const AssignorResult *result, const char *member_id);

/* A member's partitions, sorted by topic then partition number. The topic
 * string belongs to the result. */
guint assignor_result_partition_count(const AssignorResult *result, guint member);
const char *assignor_result_partition_topic(const AssignorResult *result, guint member, guint i);
guint32 assignor_result_partition_number(const AssignorResult *result, guint member, guint i);

/* Appends one line per member, sorted by member id: "ID T-P T-P ...\n", or
 * "ID\n" alone for a member that gets nothing. The `ksim assign` format. */
void assignor_result_format(const AssignorResult *result, GString *out);

/* Checks that `result` is a valid assignment of `input`: every member of the
 * input appears once; each member's list is sorted without duplicates; a
 * partition goes only to a member subscribed to its topic; and every
 * partition of a subscribed, declared topic goes to exactly one member (to
 * at most one with cooperative-sticky, which withholds partitions).
 * Aborts through KSIM_ASSERT on a breach. */
void assignor_result_check_invariants(const AssignorResult *result, const AssignorInput *input);

/* Checks what the COOPERATIVE protocol requires of an assignment (Kafka's
 * ConsumerCoordinator.validateCooperativeAssignment): no partition goes to a
 * member that did not own it while another member that owned it loses it;
 * such a partition must first be revoked, so it goes to nobody. Ownership is
 * what the members reported (assignor_input_add_owned), conflicts included.
 * Aborts through KSIM_ASSERT on a breach. */
void assignor_result_check_cooperative(const AssignorResult *result, const AssignorInput *input);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(AssignorInput, assignor_input_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(AssignorResult, assignor_result_free)

#endif
