/*
 * sim_marks: coverage marks, named points in the models at rare transitions
 * worth reaching (TigerBeetle's `marks`, FoundationDB's code probes). A model
 * says it reached one with a one-line call,
 *
 *     SIM_MARK(world, unclean_election);
 *
 * which costs one increment of the world's counter for that mark. Marks only
 * observe: they never touch the trace, the event queue or a random stream, so
 * a run's fingerprint is the same whether anyone reads them or not.
 *
 * The table of names below is the one list of marks: a mark is an identifier
 * (checked at compile time, so a misspelt one does not build), its id is its
 * place in the table, and every output lists marks in table order, never in
 * the order of a hash table. The engine knows nothing of what the names mean.
 */
#ifndef SIM_MARKS_H
#define SIM_MARKS_H

#include <glib.h>

/* X(name, what it means): add new marks at the end. */
#define SIM_MARKS_TABLE(X)                                                                         \
    X(truncate_below_hw, "a replica truncated its log below the high watermark it knew")          \
    X(unclean_election, "a replica outside the ISR was elected leader")                           \
    X(offline_partition, "a partition was left without a leader")                                 \
    X(isr_shrink_to_one, "an ISR shrank to the leader alone")                                     \
    X(fenced_zombie_write, "a write of a fenced producer epoch was refused")                      \
    X(txn_marker_resumed, "a new transaction coordinator resumed writing a transaction's markers")\
    X(controller_epoch_conflict, "a request with a stale controller epoch was refused")           \
    X(torn_write_recovered, "log recovery cut a torn or corrupt tail")                            \
    X(not_enough_replicas, "an acks=all append was refused by min.insync.replicas")               \
    X(zk_session_expired, "a coordination session expired")                                       \
    X(duplicate_sequence, "an idempotent producer's retry was found to be a duplicate")           \
    X(out_of_order_sequence, "an idempotent producer's batch was refused as out of order")        \
    X(fetch_session_not_found, "a follower's fetch session was gone: leader restart, eviction")  \
    X(message_held, "a message was held in flight by a hold fault")                               \
    X(txn_verification_refused, "a transactional batch failed the coordinator's verification")    \
    X(txn_stale_end_refused, "a transaction request of an earlier epoch was refused (KIP-890)")

typedef enum {
#define SIM_MARKS_ENUM(name, what) SIM_MARK_ID_##name,
    SIM_MARKS_TABLE(SIM_MARKS_ENUM)
#undef SIM_MARKS_ENUM
        SIM_MARKS_COUNT
} SimMarkId;

/* The counters of one world: how often each mark was reached. */
typedef struct {
    guint64 hits[SIM_MARKS_COUNT];
} SimMarks;

/* The mark's name ("unclean_election") and description (static strings). */
const char *sim_marks_name(SimMarkId id);
const char *sim_marks_description(SimMarkId id);

/* The id of the mark called `name`: FALSE when no mark is. */
gboolean sim_marks_lookup(const char *name, SimMarkId *id);

/* Counts one hit of `id`. */
static inline void
sim_marks_hit(SimMarks *marks, SimMarkId id)
{
    marks->hits[id]++;
}

/* The world's counters (sim_world.h); SIM_MARK names a mark by identifier. */
#define SIM_MARK(world, name) sim_marks_hit(sim_world_marks(world), SIM_MARK_ID_##name)

#endif
