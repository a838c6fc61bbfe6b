/*
 * raft_check: the quorum's safety invariants across its voters, those
 * Kafka's RaftEventSimulationTest checks after every event of its random
 * schedules (Apache Kafka 4.0, raft/src/test/.../RaftEventSimulationTest):
 *
 *  - SingleLeader: at most one leader in each epoch, ever;
 *  - MonotonicEpoch: a voter's epoch never decreases, restarts included
 *    (the election state is durable);
 *  - MonotonicHighWatermark: the high watermark of the leader of the
 *    highest epoch among the voters not paused never decreases (a paused
 *    former leader is a zombie that will resume believing it leads an old
 *    epoch, as a node Kafka's simulation does not run), and a voter's own
 *    never decreases while it runs;
 *  - ConsistentCommittedData: a record below any voter's high watermark is
 *    the record every voter has ever had at that offset below its high
 *    watermark (committed records never change); below a voter's log start
 *    offset its snapshots stand for the records;
 *  - SnapshotCommitted (ksim's): a snapshot ends at or below the committed
 *    records (the high watermark it was taken at), after a record of its
 *    epoch;
 *  - SnapshotImmutable (ksim's): the snapshots of one end offset, on every
 *    voter and at every time, are the same.
 *
 * The checker only reads the voters (it changes nothing they can see), so
 * it can run after every event. Its cost is the records that became
 * committed on some voter since the last check.
 */
#ifndef RAFT_CHECK_H
#define RAFT_CHECK_H

#include <glib.h>

#include "raft_node.h"

typedef struct RaftCheck RaftCheck;

RaftCheck *raft_check_new(void);
void raft_check_free(RaftCheck *check);

/* Checks `nodes` (the same voters, in the same order, every call) and runs
 * each one's raft_node_check_invariants. Returns FALSE and appends what is
 * broken to `why` when an invariant does not hold. */
gboolean raft_check_observe(RaftCheck *check, RaftNode *const *nodes, guint n_nodes, GString *why);

/* Records known committed so far (the length of the committed prefix). */
gint64 raft_check_committed(const RaftCheck *check);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(RaftCheck, raft_check_free)

#endif
