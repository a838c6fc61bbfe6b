/*
 * raft_node: one voter of the KRaft quorum (see raft_node.h): its state,
 * lifecycle, election-state persistence, the transitions of QuorumState and
 * the poll loop. The request and response handlers are in raft_rpc.c.
 *
 * Kafka reference: raft/src/main/java/org/apache/kafka/raft/ (QuorumState,
 * UnattachedState, CandidateState, FollowerState, LeaderState, ResignedState,
 * KafkaRaftClient) at Apache Kafka 4.0 (trunk 1eb7644, October 2024).
 *
 * The object lives as long as its node; everything a crash loses is in a
 * RaftState, NULL while the node is down:
 *
 *   raft_node_start / restart (node_restart) ──▶ state_open ──▶ a role
 *   crash (node_crash) ──▶ state_free, DOWN
 *
 * Transitions (each persists the election state unless noted, as Kafka's
 * durableTransitionTo does):
 *   raft_become_unattached  a higher epoch was seen with no leader
 *   raft_become_voted       a vote was granted (UnattachedState with votedKey)
 *   raft_become_candidate   election timeout, fetch timeout, backoff done
 *   raft_become_leader      a majority granted the vote
 *   raft_become_follower    a leader of an epoch >= ours made itself known
 *   raft_become_resigned    the leader's check-quorum timer ran out (in memory,
 *                           as Kafka's memoryTransitionTo)
 *
 * Invariants (raft_node_check_invariants):
 *  1. The role agrees with the election state: UNATTACHED has no vote and no
 *     leader; VOTED a vote and no leader; CANDIDATE voted for itself and no
 *     leader; LEADER and RESIGNED lead themselves; FOLLOWER another leader.
 *  2. -1 <= high watermark <= LEO; on a leader with a high watermark, it is
 *     above the epoch start offset; epoch start offset <= LEO.
 *  3. The log's latest leader epoch is at most the node's epoch.
 *  4. A leader's own end offset is its LEO; every end offset it knows is at
 *     most its LEO... unless a follower's log is longer (it then diverges),
 *     so only >= -1 is checked for the others.
 *  5. state_gen_durable <= state_gen_written; the outbox is empty when they
 *     are equal, and its generations are non-decreasing.
 *  6. A candidate's granted and rejected sets are disjoint, and include only
 *     voters; it granted itself.
 *  7. The wake timer is pending exactly when some deadline is set, and
 *     no deadline is in the past once an event is handled (each one is
 *     acted on, or cleared, when it passes), so the node never spins.
 *  8. Parked fetches exist only on a leader, at most RAFT_PARKED_MAX.
 *  9. Snapshots (raft_snapshot.c) are sorted by end offset, each within
 *     [log start offset, LEO]; the log start offset is within [the first
 *     segment's base, LEO]; the cleaner's deadline is set exactly when two
 *     snapshots or more are held; only a follower fetches a snapshot.
 */
#include "raft_node.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "raft_internal.h"
#include "sim_assert.h"
#include "sim_disk.h"
#include "sim_net.h"

/* ---- helpers ---- */

static RaftState *
node_state(const RaftNode *node)
{
    KSIM_ASSERT(node->state != NULL);
    return node->state;
}

gint
raft_voter_index(const RaftNode *node, gint32 id)
{
    for (guint i = 0; i < node->n_voters; i++) {
        if (node->voters[i].id == id)
            return (gint)i;
    }
    return -1;
}

gint
raft_voter_index_of_node(const RaftNode *node, SimNodeId sim_node)
{
    for (guint i = 0; i < node->n_voters; i++) {
        if (node->voters[i].node == sim_node)
            return (gint)i;
    }
    return -1;
}

guint
raft_majority(const RaftNode *node)
{
    return node->n_voters / 2 + 1;
}

void
raft_note(RaftNode *node, SimNodeId peer, guint64 a, guint64 b, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    g_autofree char *note = g_strdup_vprintf(format, args);
    va_end(args);
    sim_trace_add(sim_world_trace(node->world), sim_now_ns(node->world), SIM_TRACE_MODEL,
                  node->node, peer, a, b, note);
}

/* KafkaMetadataLog.lastFetchedEpoch: an empty log that starts at its
 * latest snapshot has that snapshot's epoch. */
gint32
raft_last_epoch(const RaftNode *node)
{
    const RaftState *state = node_state(node);
    gint32 epoch = plog_epoch_latest(state->log);
    if (epoch >= 0)
        return epoch;
    const RaftSnapshot *latest = raft_snapshot_latest(node);
    if (latest != NULL && latest->end_offset == plog_log_end_offset(state->log))
        return latest->epoch;
    return 0;
}

/* KafkaMetadataLog.endOffsetForEpoch over UnifiedLog.endOffsetForEpoch: the
 * cache's answer, or (LEO, last epoch) when the cache has none. */
void
raft_end_offset_for_epoch(const RaftNode *node, gint32 epoch, gint32 *out_epoch,
                          gint64 *out_offset)
{
    Plog *log = node_state(node)->log;
    plog_epoch_end_offset(log, epoch, out_epoch, out_offset);
    if (*out_offset == PLOG_UNDEFINED_EPOCH_OFFSET) {
        *out_epoch = raft_last_epoch(node);
        *out_offset = plog_log_end_offset(log);
        return;
    }
    /* "The epoch is smaller than the smallest epoch on the log": the
     * diverging point is the oldest snapshot, at the log start offset. */
    const RaftSnapshot *earliest = raft_snapshot_earliest(node);
    if (earliest != NULL && *out_offset == earliest->end_offset && *out_epoch == epoch) {
        *out_offset = earliest->end_offset;
        *out_epoch = earliest->epoch;
    }
}

gint64
raft_random_election_timeout_ns(RaftNode *node)
{
    /* QuorumState.randomElectionTimeoutMs: electionTimeoutMs +
     * random.nextInt(electionTimeoutMs), drawn in whole milliseconds. */
    gint64 timeout_ms = node->cfg.election_timeout_ns / SIM_NS_PER_MS;
    if (timeout_ms <= 0)
        return 0;
    return (timeout_ms + sim_rng_range(node->rng, 0, timeout_ms)) * SIM_NS_PER_MS;
}

/* ---- the outbox and the election state's durability ---- */

static void
outgoing_free(RaftOutgoing *out)
{
    sim_msg_free(&out->msg->base);
    g_free(out);
}

void
raft_send(RaftNode *node, SimNodeId to, RaftMsg *msg)
{
    RaftState *state = node_state(node);
    raft_msg_finish(msg);
    if (state->state_gen_durable == state->state_gen_written) {
        sim_net_send(sim_world_net(node->world), node->node, to, &msg->base);
        return;
    }
    KSIM_ASSERT(g_queue_get_length(state->outbox) < RAFT_OUTBOX_MAX);
    RaftOutgoing *out = g_new0(RaftOutgoing, 1);
    out->to = to;
    out->msg = msg;
    out->state_gen = state->state_gen_written;
    g_queue_push_tail(state->outbox, out);
}

static void
outbox_release(RaftNode *node)
{
    RaftState *state = node->state;
    while (!g_queue_is_empty(state->outbox)) {
        RaftOutgoing *out = g_queue_peek_head(state->outbox);
        if (out->state_gen > state->state_gen_durable)
            break;
        g_queue_pop_head(state->outbox);
        sim_net_send(sim_world_net(node->world), node->node, out->to, &out->msg->base);
        g_free(out);
    }
}

static char *
state_tmp_name(const RaftNode *node, guint64 gen)
{
    return g_strdup_printf("%s.%" G_GUINT64_FORMAT ".tmp", node->state_name, gen);
}

/* An election-state fsync in flight: its node (the node's model object may
 * be another model's when the voter is hosted) and generation. Owned by the
 * state's `syncs` until it completes; a crash drops the fsync's event and
 * frees the state with it. */
typedef struct {
    RaftNode *node;
    guint64 gen;
} RaftSync;

static void
state_synced_cb(SimWorld *world, void *ctx, void *arg, SimDiskStatus status)
{
    (void)ctx;
    RaftSync *sync = arg;
    RaftNode *node = sync->node;
    guint64 gen = sync->gen;
    RaftState *state = node->state;
    KSIM_ASSERT(state != NULL);
    gboolean removed = g_ptr_array_remove_fast(state->syncs, sync);
    KSIM_ASSERT(removed);
    if (state->halted)
        return;
    SimDisk *disk = sim_node_disk(world, node->node);
    g_autofree char *tmp = state_tmp_name(node, gen);
    if (status != SIM_DISK_OK) {
        raft_halt(node);
        return;
    }
    if (gen <= state->state_gen_durable) {
        /* A later write was made durable first and already replaced it. */
        sim_disk_delete(disk, tmp);
        return;
    }
    if (sim_disk_rename(disk, tmp, node->state_name) != SIM_DISK_OK) {
        raft_halt(node);
        return;
    }
    state->state_gen_durable = gen;
    outbox_release(node);
}

/* FileQuorumStateStore.writeElectionState: the epoch, the vote and the
 * leader, written to a temporary file, synced and renamed into place. */
static void
state_persist(RaftNode *node)
{
    RaftState *state = node->state;
    SimDisk *disk = sim_node_disk(node->world, node->node);
    guint64 gen = ++state->state_gen_written;
    g_autofree char *tmp = state_tmp_name(node, gen);
    g_autofree char *body = g_strdup_printf("%d %d %d\n", state->epoch, state->voted_id,
                                            state->leader_id);
    if (sim_disk_exists(disk, tmp))
        sim_disk_delete(disk, tmp);
    if (sim_disk_create(disk, tmp) != SIM_DISK_OK ||
        sim_disk_append(disk, tmp, body, strlen(body)) != SIM_DISK_OK) {
        raft_halt(node);
        return;
    }
    RaftSync *sync = g_new(RaftSync, 1);
    *sync = (RaftSync){node, gen};
    KSIM_ASSERT(state->syncs->len < RAFT_OUTBOX_MAX);
    g_ptr_array_add(state->syncs, sync);
    sim_disk_fsync(disk, tmp, state_synced_cb, sync);
}

/* Reads the election state; FALSE when there is none (a new node). */
static gboolean
state_load(RaftNode *node, gint32 *epoch, gint32 *voted_id, gint32 *leader_id)
{
    SimDisk *disk = sim_node_disk(node->world, node->node);
    gint64 size = sim_disk_size(disk, node->state_name);
    if (size <= 0 || size > 64)
        return FALSE;
    char buf[65] = {0};
    gssize n = sim_disk_read(disk, node->state_name, 0, buf, (gsize)size);
    KSIM_ASSERT(n == size);
    int e, v, l;
    char tail = 0;
    /* Written here it is whole (renamed into place once synced); anything
     * else (a file written by hand, not synced) counts as no state. */
    if (sscanf(buf, "%d %d %d%c", &e, &v, &l, &tail) != 4 || tail != '\n' || e < 0)
        return FALSE;
    *epoch = e;
    *voted_id = v;
    *leader_id = l;
    return TRUE;
}

/* ---- transitions ---- */

static void
role_reset(RaftNode *node, RaftRole role)
{
    RaftState *state = node->state;
    state->role = role;
    state->election_deadline_ns = RAFT_NEVER;
    state->fetch_deadline_ns = RAFT_NEVER;
    state->backoff_deadline_ns = RAFT_NEVER;
    state->check_quorum_deadline_ns = RAFT_NEVER;
    state->begin_epoch_deadline_ns = RAFT_NEVER;
    state->granted = 0;
    state->rejected = 0;
    state->acknowledged = 0;
    state->fetched = 0;
    state->n_successors = 0;
    /* A new FollowerState has no snapshot being fetched. */
    state->fetching_snapshot = FALSE;
    state->fetching_done = FALSE;
    /* Requests of the old role are forgotten; their responses no longer
     * match (their correlation ids are not pending). */
    for (guint i = 0; i < RAFT_VOTERS_MAX; i++) {
        state->pending[i].in_flight = FALSE;
        state->pending[i].retry_after_ns = 0;
    }
}

static void
announce(RaftNode *node, gint32 old_epoch, gint32 old_leader)
{
    RaftState *state = node->state;
    raft_note(node, SIM_NODE_NONE, (guint64)state->epoch, (guint64)(gint64)state->leader_id,
              "raft %d: %s in epoch %d (leader %d, voted %d)", node->id,
              raft_role_name(state->role), state->epoch, state->leader_id, state->voted_id);
    /* A leader that steps down answers its parked fetches with
     * NOT_LEADER_OR_FOLLOWER and what it knows now (Kafka's
     * fetchPurgatory.completeAllExceptionally). */
    if (state->role != RAFT_ROLE_LEADER && state->parked->len > 0)
        raft_rpc_complete_parked(node, TRUE);
    if (old_epoch == state->epoch && old_leader == state->leader_id)
        return;
    if (node->listener.leader_changed != NULL)
        node->listener.leader_changed(node->listener_data, node, state->epoch, state->leader_id);
    for (guint i = 0; i < node->n_local_listeners; i++) {
        const RaftListener *l = &node->local_listeners[i];
        if (l->leader_changed != NULL)
            l->leader_changed(node->local_listener_data[i], node, state->epoch, state->leader_id);
    }
}

void
raft_become_unattached(RaftNode *node, gint32 epoch)
{
    RaftState *state = node_state(node);
    KSIM_ASSERT(epoch > state->epoch);
    gint32 old_epoch = state->epoch, old_leader = state->leader_id;
    role_reset(node, RAFT_ROLE_UNATTACHED);
    state->epoch = epoch;
    state->voted_id = RAFT_NO_NODE;
    state->leader_id = RAFT_NO_NODE;
    state->high_watermark = MIN(state->high_watermark, plog_log_end_offset(state->log));
    state->election_deadline_ns = sim_now_ns(node->world) + raft_random_election_timeout_ns(node);
    state_persist(node);
    announce(node, old_epoch, old_leader);
}

void
raft_become_voted(RaftNode *node, gint32 epoch, gint32 candidate_id)
{
    RaftState *state = node_state(node);
    KSIM_ASSERT(state->role == RAFT_ROLE_UNATTACHED && epoch == state->epoch);
    gint32 old_epoch = state->epoch, old_leader = state->leader_id;
    role_reset(node, RAFT_ROLE_VOTED);
    state->voted_id = candidate_id;
    state->election_deadline_ns = sim_now_ns(node->world) + raft_random_election_timeout_ns(node);
    state_persist(node);
    announce(node, old_epoch, old_leader);
}

void
raft_become_follower(RaftNode *node, gint32 epoch, gint32 leader_id)
{
    RaftState *state = node_state(node);
    KSIM_ASSERT(epoch >= state->epoch);
    KSIM_ASSERT(leader_id != node->id && raft_voter_index(node, leader_id) >= 0);
    /* QuorumState.transitionToFollower: one leader per epoch. */
    if (epoch == state->epoch && state->leader_id != RAFT_NO_NODE)
        KSIM_ASSERT(state->leader_id == leader_id);
    gint32 old_epoch = state->epoch, old_leader = state->leader_id;
    role_reset(node, RAFT_ROLE_FOLLOWER);
    if (epoch > state->epoch)
        state->voted_id = RAFT_NO_NODE;
    state->epoch = epoch;
    state->leader_id = leader_id;
    state->fetch_deadline_ns = sim_now_ns(node->world) + node->cfg.fetch_timeout_ns;
    state_persist(node);
    announce(node, old_epoch, old_leader);
}

void
raft_become_candidate(RaftNode *node)
{
    RaftState *state = node_state(node);
    guint retries = state->role == RAFT_ROLE_CANDIDATE ? state->retries + 1 : 1;
    gint32 old_epoch = state->epoch, old_leader = state->leader_id;
    role_reset(node, RAFT_ROLE_CANDIDATE);
    state->retries = retries;
    state->epoch++;
    state->voted_id = node->id;
    state->leader_id = RAFT_NO_NODE;
    state->granted = 1u << node->self_index;
    state->election_deadline_ns = sim_now_ns(node->world) + raft_random_election_timeout_ns(node);
    state_persist(node);
    announce(node, old_epoch, old_leader);
    if (raft_majority(node) == 1)
        raft_become_leader(node);
}

/* The leader's LeaderChange record opens its epoch (Kafka appends it as a
 * control batch; ksim keeps it an ordinary batch marked by its key, since a
 * control batch here means a transaction marker). */
static void
append_leader_change(RaftNode *node)
{
    PlogRecord record = {RAFT_RECORD_KEY_LEADER_CHANGE, (guint64)node->id, 64};
    gint64 offset = raft_node_append(node, &record, 1);
    if (offset < 0)
        return; /* the disk refused; raft_node_append halted the node */
}

void
raft_become_leader(RaftNode *node)
{
    RaftState *state = node_state(node);
    KSIM_ASSERT(state->role == RAFT_ROLE_CANDIDATE);
    KSIM_ASSERT(__builtin_popcount(state->granted) >= (int)raft_majority(node));
    gint32 old_epoch = state->epoch, old_leader = state->leader_id;
    role_reset(node, RAFT_ROLE_LEADER);
    state->leader_id = node->id;
    state->epoch_start_offset = plog_log_end_offset(state->log);
    /* LeaderState starts without a high watermark. */
    state->high_watermark = -1;
    for (guint i = 0; i < RAFT_VOTERS_MAX; i++)
        state->end_offset[i] = -1;
    state->acknowledged = 1u << node->self_index;
    gint64 now = sim_now_ns(node->world);
    /* LeaderState: checkQuorumTimeoutMs = 1.5 * fetchTimeoutMs; the first
     * BeginQuorumEpoch goes at once. */
    if (node->n_voters > 1)
        state->check_quorum_deadline_ns = now + node->cfg.fetch_timeout_ns * 3 / 2;
    state->begin_epoch_deadline_ns = node->n_voters > 1 ? now : RAFT_NEVER;
    state->retries = 0;
    state_persist(node);
    announce(node, old_epoch, old_leader);
    append_leader_change(node);
}

/* LeaderState.nonLeaderVotersByDescendingFetchOffset. */
static void
successors_compute(RaftNode *node)
{
    RaftState *state = node->state;
    state->n_successors = 0;
    for (guint i = 0; i < node->n_voters; i++) {
        if (i == node->self_index)
            continue;
        guint j = state->n_successors++;
        /* Insertion by descending end offset, ties by voter order. */
        while (j > 0) {
            gint prev = raft_voter_index(node, state->successors[j - 1]);
            if (state->end_offset[prev] >= state->end_offset[i])
                break;
            state->successors[j] = state->successors[j - 1];
            j--;
        }
        state->successors[j] = node->voters[i].id;
    }
}

void
raft_become_resigned(RaftNode *node)
{
    RaftState *state = node_state(node);
    gboolean was_leader = state->role == RAFT_ROLE_LEADER;
    gint32 old_epoch = state->epoch, old_leader = state->leader_id;
    gint64 end_offsets[RAFT_VOTERS_MAX];
    memcpy(end_offsets, state->end_offset, sizeof end_offsets);
    role_reset(node, RAFT_ROLE_RESIGNED);
    memcpy(state->end_offset, end_offsets, sizeof end_offsets);
    state->leader_id = node->id;
    if (was_leader)
        successors_compute(node);
    state->acknowledged = 1u << node->self_index;
    state->election_deadline_ns = sim_now_ns(node->world) + raft_random_election_timeout_ns(node);
    announce(node, old_epoch, old_leader);
}

void
raft_start_backoff(RaftNode *node)
{
    RaftState *state = node_state(node);
    KSIM_ASSERT(state->role == RAFT_ROLE_CANDIDATE && state->retries > 0);
    /* KafkaRaftClient.binaryExponentialElectionBackoffMs:
     * min(RETRY_BACKOFF_BASE_MS * random.nextInt(2 << min(20, retries - 1)),
     *     electionBackoffMaxMs). */
    gint64 bound = (gint64)2 << MIN(20u, state->retries - 1);
    gint64 backoff = node->cfg.election_backoff_base_ns * sim_rng_range(node->rng, 0, bound);
    backoff = MIN(backoff, node->cfg.election_backoff_max_ns);
    state->backoff_deadline_ns = sim_now_ns(node->world) + backoff;
    /* The election timer is done with; the backoff decides now. */
    state->election_deadline_ns = RAFT_NEVER;
}

/* ---- the high watermark ---- */

void
raft_committed(RaftNode *node)
{
    if (node->listener.committed != NULL)
        node->listener.committed(node->listener_data, node, node->state->high_watermark);
    for (guint i = 0; i < node->n_local_listeners; i++) {
        const RaftListener *l = &node->local_listeners[i];
        if (l->committed != NULL)
            l->committed(node->local_listener_data[i], node, node->state->high_watermark);
    }
}

gboolean
raft_leader_update_high_watermark(RaftNode *node)
{
    RaftState *state = node_state(node);
    KSIM_ASSERT(state->role == RAFT_ROLE_LEADER);
    gint64 sorted[RAFT_VOTERS_MAX];
    for (guint i = 0; i < node->n_voters; i++) {
        gint64 v = state->end_offset[i];
        guint j = i;
        while (j > 0 && sorted[j - 1] < v) {
            sorted[j] = sorted[j - 1];
            j--;
        }
        sorted[j] = v;
    }
    gint64 candidate = sorted[node->n_voters / 2];
    /* Only once a record of the leader's own epoch is committed. */
    if (candidate <= state->epoch_start_offset || candidate <= state->high_watermark)
        return FALSE;
    state->high_watermark = candidate;
    raft_committed(node);
    return TRUE;
}

void
raft_follower_update_high_watermark(RaftNode *node, gint64 leader_high_watermark)
{
    RaftState *state = node_state(node);
    if (leader_high_watermark < 0)
        return;
    gint64 hw = MIN(leader_high_watermark, plog_log_end_offset(state->log));
    if (hw <= state->high_watermark)
        return;
    state->high_watermark = hw;
    raft_committed(node);
}

/* ---- the poll loop ---- */

static gint64
earliest_deadline(const RaftNode *node)
{
    const RaftState *state = node->state;
    gint64 at = MIN(state->election_deadline_ns, state->fetch_deadline_ns);
    at = MIN(at, state->backoff_deadline_ns);
    at = MIN(at, state->check_quorum_deadline_ns);
    at = MIN(at, state->begin_epoch_deadline_ns);
    at = MIN(at, state->clean_deadline_ns);
    gint64 now = sim_now_ns(node->world);
    for (guint i = 0; i < node->n_voters; i++) {
        const RaftPending *p = &state->pending[i];
        if (p->in_flight)
            at = MIN(at, p->deadline_ns);
        else if (p->retry_after_ns > now)
            at = MIN(at, p->retry_after_ns);
    }
    for (guint i = 0; i < state->parked->len; i++) {
        const RaftParked *parked = g_ptr_array_index(state->parked, i);
        at = MIN(at, parked->deadline_ns);
    }
    return at;
}

static void wake_cb(SimWorld *world, void *ctx, void *arg);

static void
rearm(RaftNode *node)
{
    RaftState *state = node->state;
    gint64 at = earliest_deadline(node);
    if (sim_timer_pending(node->world, state->wake) && state->wake_at_ns == at)
        return;
    sim_timer_cancel(node->world, state->wake);
    state->wake = SIM_EVENT_ID_NONE;
    state->wake_at_ns = RAFT_NEVER;
    if (at == RAFT_NEVER)
        return;
    gint64 now = sim_now_ns(node->world);
    state->wake = sim_timer_set(node->world, node->node, MAX(0, at - now), wake_cb, node);
    state->wake_at_ns = at;
}

static void
poll_role(RaftNode *node, gint64 now)
{
    RaftState *state = node->state;
    switch (state->role) {
    case RAFT_ROLE_UNATTACHED:
    case RAFT_ROLE_VOTED:
    case RAFT_ROLE_RESIGNED:
        if (now >= state->election_deadline_ns)
            raft_become_candidate(node);
        break;
    case RAFT_ROLE_CANDIDATE:
        if (state->backoff_deadline_ns != RAFT_NEVER) {
            if (now >= state->backoff_deadline_ns)
                raft_become_candidate(node);
        } else if (now >= state->election_deadline_ns) {
            raft_start_backoff(node);
        }
        break;
    case RAFT_ROLE_FOLLOWER:
        if (now >= state->fetch_deadline_ns) {
            raft_become_candidate(node);
        }
        break;
    case RAFT_ROLE_LEADER:
        /* LeaderState.timeUntilCheckQuorumExpires: a single voter never
         * resigns (its deadline is never set). */
        if (now >= state->check_quorum_deadline_ns)
            raft_become_resigned(node);
        break;
    case RAFT_ROLE_DOWN:
        KSIM_ASSERT(!"a running node is never DOWN");
    }
}

void
raft_poll(RaftNode *node)
{
    RaftState *state = node->state;
    if (state == NULL || state->halted)
        return;
    gint64 now = sim_now_ns(node->world);
    poll_role(node, now);
    if (state->halted)
        return;
    if (now >= state->clean_deadline_ns) {
        raft_snapshot_clean(node);
        state->clean_deadline_ns = RAFT_NEVER;
        raft_snapshot_arm_cleaner(node);
    }
    for (guint i = 0; i < node->n_voters; i++) {
        RaftPending *p = &state->pending[i];
        if (p->in_flight && now >= p->deadline_ns) {
            p->in_flight = FALSE;
            p->retry_after_ns = now + node->cfg.retry_backoff_ns;
        }
    }
    raft_rpc_send_due(node);
    rearm(node);
}

static void
wake_cb(SimWorld *world, void *ctx, void *arg)
{
    (void)world;
    (void)ctx; /* the node's model object: a broker's, when the voter is hosted */
    RaftNode *node = arg;
    if (node->state == NULL)
        return;
    node->state->wake = SIM_EVENT_ID_NONE;
    node->state->wake_at_ns = RAFT_NEVER;
    raft_poll(node);
}

/* ---- halting on a disk error ---- */

static void
halt_cb(void *ctx, void *arg, guint64 arg_u64)
{
    (void)arg;
    (void)arg_u64;
    RaftNode *node = ctx;
    if (sim_node_state(node->world, node->node) == SIM_NODE_UP && node->state != NULL &&
        node->state->halted)
        sim_node_crash(node->world, node->node);
}

void
raft_halt(RaftNode *node)
{
    RaftState *state = node_state(node);
    if (state->halted)
        return;
    state->halted = TRUE;
    raft_note(node, SIM_NODE_NONE, 0, 0, "raft %d: a metadata log write failed: halting",
              node->id);
    sim_world_schedule(node->world, sim_now_ns(node->world), halt_cb, NULL, node, NULL, 0);
}

/* ---- state and lifecycle ---- */

static void
state_free(RaftState *state)
{
    if (state == NULL)
        return;
    plog_free(state->log);
    g_queue_free_full(state->outbox, (GDestroyNotify)outgoing_free);
    g_ptr_array_unref(state->parked);
    if (state->snapshots != NULL)
        g_array_unref(state->snapshots);
    if (state->snapshots_writing != NULL)
        g_array_unref(state->snapshots_writing);
    g_ptr_array_unref(state->syncs);
    g_free(state);
}

static void
log_flushed_cb(void *user_data, Plog *log, gint64 recovery_point)
{
    (void)log;
    (void)recovery_point;
    raft_poll(user_data);
}

/* QuorumState.initialize: the role a node resumes in from its stored
 * election state. */
static void
state_resume(RaftNode *node, gint32 epoch, gint32 voted_id, gint32 leader_id)
{
    RaftState *state = node->state;
    state->epoch = epoch;
    state->voted_id = voted_id;
    state->leader_id = leader_id;
    gint64 now = sim_now_ns(node->world);
    if (leader_id == node->id) {
        /* "We cannot vote for another leader in the same epoch we were
         * leader": resigned, naming no successors. */
        state->role = RAFT_ROLE_RESIGNED;
        state->acknowledged = 1u << node->self_index;
        state->election_deadline_ns = now + raft_random_election_timeout_ns(node);
    } else if (leader_id != RAFT_NO_NODE && raft_voter_index(node, leader_id) >= 0) {
        /* A known leader comes first: a voter that voted and then learned
         * the leader of the epoch follows it. */
        state->role = RAFT_ROLE_FOLLOWER;
        state->fetch_deadline_ns = now + node->cfg.fetch_timeout_ns;
    } else if (voted_id == node->id) {
        state->role = RAFT_ROLE_CANDIDATE;
        state->leader_id = RAFT_NO_NODE;
        state->retries = 1;
        state->granted = 1u << node->self_index;
        state->election_deadline_ns = now + raft_random_election_timeout_ns(node);
    } else if (voted_id != RAFT_NO_NODE) {
        state->role = RAFT_ROLE_VOTED;
        state->leader_id = RAFT_NO_NODE;
        state->election_deadline_ns = now + raft_random_election_timeout_ns(node);
    } else {
        state->role = RAFT_ROLE_UNATTACHED;
        state->leader_id = RAFT_NO_NODE;
        state->election_deadline_ns = now + raft_random_election_timeout_ns(node);
    }
}

static void
state_open(RaftNode *node)
{
    KSIM_ASSERT(node->state == NULL);
    RaftState *state = g_new0(RaftState, 1);
    node->state = state;
    state->outbox = g_queue_new();
    state->parked = g_ptr_array_new_with_free_func((GDestroyNotify)raft_parked_free);
    state->syncs = g_ptr_array_new_with_free_func(g_free);
    state->high_watermark = -1;
    state->epoch_start_offset = -1;
    state->wake = SIM_EVENT_ID_NONE;
    state->wake_at_ns = RAFT_NEVER;
    state->election_deadline_ns = RAFT_NEVER;
    state->fetch_deadline_ns = RAFT_NEVER;
    state->backoff_deadline_ns = RAFT_NEVER;
    state->check_quorum_deadline_ns = RAFT_NEVER;
    state->begin_epoch_deadline_ns = RAFT_NEVER;
    for (guint i = 0; i < RAFT_VOTERS_MAX; i++)
        state->end_offset[i] = -1;
    PlogConfig log_cfg = {
        .segment_bytes = node->cfg.segment_bytes,
        .roll_ms = G_GINT64_CONSTANT(7) * 24 * 3600 * 1000,
        .index_interval_bytes = 4096,
        .retention_ms = -1,
        .retention_bytes = -1,
        .flush_interval_messages = G_MAXINT64,
        .flush_interval_ms = -1,
        .log_append_time = FALSE,
    };
    state->log = plog_open(node->world, node->node, RAFT_TOPIC, 0, &log_cfg);
    plog_set_flushed_listener(state->log, log_flushed_cb, node);
    /* What the page cache kept over a crash is made durable before this
     * node fetches from it (a follower fetches only from a flushed log). */
    plog_flush(state->log, plog_log_end_offset(state->log));
    raft_snapshots_open(node);
    gint32 epoch = 0, voted = RAFT_NO_NODE, leader = RAFT_NO_NODE;
    state_load(node, &epoch, &voted, &leader);
    state_resume(node, epoch, voted, leader);
    raft_note(node, SIM_NODE_NONE, (guint64)epoch, (guint64)plog_log_end_offset(state->log),
              "raft %d: starts %s in epoch %d, log end offset %" G_GINT64_FORMAT, node->id,
              raft_role_name(state->role), epoch, plog_log_end_offset(state->log));
    if (state->role == RAFT_ROLE_CANDIDATE && raft_majority(node) == 1)
        raft_become_candidate(node);
    raft_poll(node);
}

/* ---- node callbacks ---- */

static void
node_message(SimWorld *world, void *ctx, SimNodeId from, SimMsg *msg)
{
    (void)world;
    RaftNode *node = ctx;
    if (node->state != NULL && !node->state->halted &&
        (msg->type < RAFT_MSG_FIRST || msg->type > RAFT_MSG_LAST) &&
        node->listener.message != NULL) {
        node->listener.message(node->listener_data, node, from, msg);
        return;
    }
    /* Voters exchange every kind; an observer only fetches (the log and
     * snapshots). */
    gboolean from_voter = raft_voter_index_of_node(node, from) >= 0;
    if (node->state == NULL || node->state->halted || msg->type < RAFT_MSG_FIRST ||
        msg->type > RAFT_MSG_LAST ||
        (!from_voter && msg->type != RAFT_MSG_FETCH_REQUEST &&
         msg->type != RAFT_MSG_FETCH_SNAPSHOT_REQUEST)) {
        sim_msg_free(msg);
        return;
    }
    raft_rpc_message(node, from, (RaftMsg *)msg);
    raft_poll(node);
}

static void
node_disconnect(SimWorld *world, void *ctx, SimNodeId peer, SimDisconnectReason reason)
{
    (void)world;
    (void)reason;
    RaftNode *node = ctx;
    if (node->state == NULL || node->state->halted)
        return;
    raft_rpc_disconnect(node, peer);
    raft_poll(node);
}

static void
node_crash(SimWorld *world, void *ctx)
{
    (void)world;
    RaftNode *node = ctx;
    if (node->listener.crashed != NULL)
        node->listener.crashed(node->listener_data, node);
    state_free(node->state);
    node->state = NULL;
}

static void
node_restart(SimWorld *world, void *ctx)
{
    (void)world;
    RaftNode *node = ctx;
    if (node->started)
        state_open(node);
}

static const SimNodeOps raft_node_ops = {
    .message = node_message,
    .disconnect = node_disconnect,
    .crash = node_crash,
    .restart = node_restart,
};

/* ---- public API ---- */

void
raft_config_init(RaftConfig *cfg)
{
    KSIM_ASSERT(cfg != NULL);
    memset(cfg, 0, sizeof *cfg);
    cfg->election_timeout_ns = 1000 * SIM_NS_PER_MS;
    cfg->election_backoff_max_ns = 1000 * SIM_NS_PER_MS;
    cfg->fetch_timeout_ns = 2000 * SIM_NS_PER_MS;
    cfg->request_timeout_ns = 2000 * SIM_NS_PER_MS;
    cfg->retry_backoff_ns = 20 * SIM_NS_PER_MS;
    cfg->fetch_max_wait_ns = 500 * SIM_NS_PER_MS;
    cfg->election_backoff_base_ns = 100 * SIM_NS_PER_MS;
    cfg->segment_bytes = G_GINT64_CONSTANT(1) << 30;
    cfg->retention_bytes = G_GINT64_CONSTANT(100) * 1024 * 1024;
    cfg->retention_ms = G_GINT64_CONSTANT(7) * 24 * 3600 * 1000;
    cfg->clean_interval_ns = G_GINT64_CONSTANT(60000) * SIM_NS_PER_MS;
}

static RaftNode *
node_create(SimWorld *world, gint32 id, const RaftConfig *cfg)
{
    KSIM_ASSERT(world != NULL && id >= 0);
    RaftNode *node = g_new0(RaftNode, 1);
    node->world = world;
    node->id = id;
    if (cfg != NULL)
        node->cfg = *cfg;
    else
        raft_config_init(&node->cfg);
    KSIM_ASSERT(node->cfg.election_timeout_ns >= 0);
    KSIM_ASSERT(node->cfg.election_backoff_max_ns >= 0);
    KSIM_ASSERT(node->cfg.fetch_timeout_ns > 0);
    KSIM_ASSERT(node->cfg.request_timeout_ns > 0);
    KSIM_ASSERT(node->cfg.retry_backoff_ns >= 0);
    KSIM_ASSERT(node->cfg.fetch_max_wait_ns >= 0);
    KSIM_ASSERT(node->cfg.segment_bytes > 0);
    KSIM_ASSERT(node->cfg.retention_bytes >= -1 && node->cfg.retention_ms >= -1);
    KSIM_ASSERT(node->cfg.clean_interval_ns > 0);
    g_autofree char *rng_name = g_strdup_printf("raft/%d", id);
    node->rng = sim_world_rng(world, rng_name);
    node->state_name = g_strdup(RAFT_TOPIC "-0/quorum-state");
    return node;
}

RaftNode *
raft_node_new(SimWorld *world, const char *name, gint32 id, const RaftConfig *cfg)
{
    KSIM_ASSERT(name != NULL);
    RaftNode *node = node_create(world, id, cfg);
    node->node = sim_node_add(world, name, &raft_node_ops, node);
    return node;
}

RaftNode *
raft_node_new_hosted(SimWorld *world, SimNodeId host, gint32 id, const RaftConfig *cfg)
{
    KSIM_ASSERT(host < sim_world_node_count(world));
    RaftNode *node = node_create(world, id, cfg);
    node->node = host;
    node->hosted = TRUE;
    return node;
}

void
raft_node_host_message(RaftNode *node, SimNodeId from, SimMsg *msg)
{
    KSIM_ASSERT(node->hosted);
    node_message(node->world, node, from, msg);
}

void
raft_node_host_disconnect(RaftNode *node, SimNodeId peer)
{
    KSIM_ASSERT(node->hosted);
    node_disconnect(node->world, node, peer, SIM_DISCONNECT_CLOSED);
}

void
raft_node_host_crash(RaftNode *node)
{
    KSIM_ASSERT(node->hosted);
    node_crash(node->world, node);
}

void
raft_node_host_restart(RaftNode *node)
{
    KSIM_ASSERT(node->hosted);
    node_restart(node->world, node);
}

void
raft_node_free(RaftNode *node)
{
    if (node == NULL)
        return;
    state_free(node->state);
    g_free(node->state_name);
    g_free(node);
}

void
raft_node_set_voters(RaftNode *node, const RaftVoter *voters, guint n_voters)
{
    KSIM_ASSERT(!node->started && node->n_voters == 0);
    KSIM_ASSERT(n_voters >= 1 && n_voters <= RAFT_VOTERS_MAX);
    gboolean self_found = FALSE;
    for (guint i = 0; i < n_voters; i++) {
        node->voters[i] = voters[i];
        for (guint j = 0; j < i; j++)
            KSIM_ASSERT(voters[j].id != voters[i].id && voters[j].node != voters[i].node);
        if (voters[i].id == node->id) {
            KSIM_ASSERT(voters[i].node == node->node);
            node->self_index = i;
            self_found = TRUE;
        }
    }
    KSIM_ASSERT(self_found);
    node->n_voters = n_voters;
}

void
raft_node_start(RaftNode *node)
{
    KSIM_ASSERT(!node->started && node->n_voters > 0);
    KSIM_ASSERT(sim_node_state(node->world, node->node) == SIM_NODE_UP);
    node->started = TRUE;
    state_open(node);
}

void
raft_node_add_local_listener(RaftNode *node, const RaftListener *listener, void *user_data)
{
    KSIM_ASSERT(node->n_local_listeners < RAFT_LOCAL_LISTENERS_MAX);
    KSIM_ASSERT(listener->message == NULL && listener->crashed == NULL);
    node->local_listeners[node->n_local_listeners] = *listener;
    node->local_listener_data[node->n_local_listeners] = user_data;
    node->n_local_listeners++;
}

void
raft_node_set_listener(RaftNode *node, const RaftListener *listener, void *user_data)
{
    if (listener != NULL)
        node->listener = *listener;
    else
        memset(&node->listener, 0, sizeof node->listener);
    node->listener_data = user_data;
}

gint64
raft_node_append(RaftNode *node, const PlogRecord *records, guint n_records)
{
    RaftState *state = node->state;
    if (state == NULL || state->halted || state->role != RAFT_ROLE_LEADER)
        return -1;
    KSIM_ASSERT(n_records > 0);
    g_autoptr(PlogBatch) batch = plog_batch_new();
    plog_batch_add_records(batch, records, n_records);
    batch->leader_epoch = state->epoch;
    gint64 now_ms = sim_node_wall_ms(node->world, node->node);
    batch->first_timestamp_ms = now_ms;
    batch->max_timestamp_ms = now_ms;
    SimDiskStatus status = SIM_DISK_OK;
    gint64 base = plog_append(state->log, batch, now_ms, &status);
    if (base < 0) {
        raft_halt(node);
        return -1;
    }
    /* KafkaRaftClient.flushLeaderLog: the end offset counts before the
     * flush, then the log is flushed. */
    gint64 leo = plog_log_end_offset(state->log);
    state->end_offset[node->self_index] = leo;
    raft_leader_update_high_watermark(node);
    raft_rpc_complete_parked(node, FALSE);
    plog_flush(state->log, leo);
    /* The parked fetches answered may have held the only deadlines: a
     * single voter's leader has no check-quorum deadline, and then its
     * wake-up must go too. (With more voters a deadline remains, and the
     * next poll rearms.) */
    if (earliest_deadline(node) == RAFT_NEVER)
        rearm(node);
    return base;
}

SimWorld *
raft_node_world(const RaftNode *node)
{
    return node->world;
}

SimNodeId
raft_node_sim_node(const RaftNode *node)
{
    return node->node;
}

gint32
raft_node_id(const RaftNode *node)
{
    return node->id;
}

RaftRole
raft_node_role(const RaftNode *node)
{
    return node->state != NULL ? node->state->role : RAFT_ROLE_DOWN;
}

const char *
raft_role_name(RaftRole role)
{
    switch (role) {
    case RAFT_ROLE_DOWN:
        return "down";
    case RAFT_ROLE_UNATTACHED:
        return "unattached";
    case RAFT_ROLE_VOTED:
        return "voted";
    case RAFT_ROLE_CANDIDATE:
        return "candidate";
    case RAFT_ROLE_LEADER:
        return "leader";
    case RAFT_ROLE_FOLLOWER:
        return "follower";
    case RAFT_ROLE_RESIGNED:
        return "resigned";
    }
    return "unknown";
}

gint32
raft_node_epoch(const RaftNode *node)
{
    return node->state != NULL ? node->state->epoch : -1;
}

gint32
raft_node_leader_id(const RaftNode *node)
{
    return node->state != NULL ? node->state->leader_id : RAFT_NO_NODE;
}

gint32
raft_node_voted_id(const RaftNode *node)
{
    return node->state != NULL ? node->state->voted_id : RAFT_NO_NODE;
}

gint64
raft_node_high_watermark(const RaftNode *node)
{
    return node->state != NULL ? node->state->high_watermark : -1;
}

Plog *
raft_node_log(const RaftNode *node)
{
    return node->state != NULL ? node->state->log : NULL;
}

/* ---- invariants ---- */

static void
check_role(const RaftNode *node)
{
    const RaftState *state = node->state;
    switch (state->role) {
    case RAFT_ROLE_UNATTACHED:
        KSIM_ASSERT(state->voted_id == RAFT_NO_NODE);
        KSIM_ASSERT(state->leader_id == RAFT_NO_NODE);
        break;
    case RAFT_ROLE_VOTED:
        KSIM_ASSERT(state->voted_id != RAFT_NO_NODE);
        KSIM_ASSERT(state->leader_id == RAFT_NO_NODE);
        break;
    case RAFT_ROLE_CANDIDATE:
        KSIM_ASSERT(state->voted_id == node->id);
        KSIM_ASSERT(state->leader_id == RAFT_NO_NODE);
        KSIM_ASSERT((state->granted & state->rejected) == 0);
        KSIM_ASSERT(state->granted & (1u << node->self_index));
        KSIM_ASSERT(((state->granted | state->rejected) >> node->n_voters) == 0);
        break;
    case RAFT_ROLE_LEADER:
    case RAFT_ROLE_RESIGNED:
        KSIM_ASSERT(state->leader_id == node->id);
        break;
    case RAFT_ROLE_FOLLOWER:
        KSIM_ASSERT(state->leader_id != RAFT_NO_NODE && state->leader_id != node->id);
        break;
    case RAFT_ROLE_DOWN:
        KSIM_ASSERT(!"a running node is never DOWN");
    }
}

static void
check_snapshots(const RaftNode *node)
{
    const RaftState *state = node->state;
    gint64 leo = plog_log_end_offset(state->log);
    KSIM_ASSERT(state->log_start_offset >= plog_log_start_offset(state->log));
    KSIM_ASSERT(state->log_start_offset <= leo);
    gint64 prev = -1;
    for (guint i = 0; i < state->snapshots->len; i++) {
        const RaftSnapshot *s = &g_array_index(state->snapshots, RaftSnapshot, i);
        KSIM_ASSERT(s->end_offset > prev);
        KSIM_ASSERT(s->end_offset >= state->log_start_offset);
        KSIM_ASSERT(s->end_offset <= leo);
        prev = s->end_offset;
    }
    KSIM_ASSERT((state->snapshots->len >= 2) == (state->clean_deadline_ns != RAFT_NEVER));
    if (state->fetching_snapshot)
        KSIM_ASSERT(state->role == RAFT_ROLE_FOLLOWER);
}

void
raft_node_check_invariants(const RaftNode *node)
{
    const RaftState *state = node->state;
    if (state == NULL)
        return;
    plog_check_invariants(state->log);
    if (state->halted)
        return;
    check_role(node);
    gint64 leo = plog_log_end_offset(state->log);
    KSIM_ASSERT(state->high_watermark >= -1 && state->high_watermark <= leo);
    KSIM_ASSERT(plog_epoch_latest(state->log) <= state->epoch);
    if (state->role == RAFT_ROLE_LEADER) {
        KSIM_ASSERT(state->epoch_start_offset >= 0 && state->epoch_start_offset <= leo);
        if (state->high_watermark >= 0)
            KSIM_ASSERT(state->high_watermark > state->epoch_start_offset);
        KSIM_ASSERT(state->end_offset[node->self_index] == leo);
        for (guint i = 0; i < node->n_voters; i++)
            KSIM_ASSERT(state->end_offset[i] >= -1);
    } else {
        KSIM_ASSERT(state->parked->len == 0);
    }
    KSIM_ASSERT(state->parked->len <= RAFT_PARKED_MAX);
    check_snapshots(node);
    KSIM_ASSERT(state->state_gen_durable <= state->state_gen_written);
    if (state->state_gen_durable == state->state_gen_written)
        KSIM_ASSERT(g_queue_is_empty(state->outbox));
    guint64 gen = 0;
    for (const GList *l = state->outbox->head; l != NULL; l = l->next) {
        const RaftOutgoing *out = l->data;
        KSIM_ASSERT(out->state_gen >= gen && out->state_gen > state->state_gen_durable);
        gen = out->state_gen;
    }
    gint64 earliest = earliest_deadline(node);
    KSIM_ASSERT((earliest != RAFT_NEVER) == sim_timer_pending(node->world, state->wake));
    /* A paused node's timers are held, so its deadlines may pass; once it
     * resumes, its held wake-up runs at once, and until it has the deadline
     * it serves is past too. */
    if (sim_node_state(node->world, node->node) == SIM_NODE_UP)
        KSIM_ASSERT(earliest >= sim_now_ns(node->world) ||
                    state->wake_at_ns <= sim_now_ns(node->world));
}
