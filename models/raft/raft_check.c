/*
 * raft_check: the quorum invariants of RaftEventSimulationTest (see
 * raft_check.h).
 *
 * State: the leader seen for each epoch (a GHashTable looked up, never
 * iterated); per voter its last epoch, its last high watermark while up,
 * and how far below its high watermark its log has been compared with the
 * committed record of each offset (`committed`, one entry per offset, the
 * first voter to commit an offset defining it).
 */
#include "raft_check.h"

#include "sim_assert.h"

typedef struct {
    gint32 leader_epoch;
    guint64 key;
    guint64 value;
} CommittedRecord;

/* A snapshot as first seen on any voter. */
typedef struct {
    gint32 epoch;
    guint64 payload;
    gint64 size_bytes;
    gint64 timestamp_ms;
} KnownSnapshot;

typedef struct {
    gint32 epoch;          /* the last epoch seen, -1 before */
    gint64 high_watermark; /* while up; -1 when down or unknown */
    gint64 verified;       /* offsets below this were compared */
    gboolean up;
} VoterView;

struct RaftCheck {
    GHashTable *leader_of_epoch; /* epoch -> leader id + 1 */
    GArray *committed;           /* CommittedRecord by offset */
    GArray *views;               /* VoterView by index */
    GHashTable *snapshots;       /* end offset (gint64 *) -> KnownSnapshot *; looked up only */
    gint64 leader_high_watermark;
};

RaftCheck *
raft_check_new(void)
{
    RaftCheck *check = g_new0(RaftCheck, 1);
    check->leader_of_epoch = g_hash_table_new(g_direct_hash, g_direct_equal);
    check->committed = g_array_new(FALSE, FALSE, sizeof(CommittedRecord));
    check->views = g_array_new(FALSE, TRUE, sizeof(VoterView));
    check->leader_high_watermark = -1;
    check->snapshots = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
    return check;
}

void
raft_check_free(RaftCheck *check)
{
    if (check == NULL)
        return;
    g_hash_table_unref(check->leader_of_epoch);
    g_array_unref(check->committed);
    g_array_unref(check->views);
    g_hash_table_unref(check->snapshots);
    g_free(check);
}

gint64
raft_check_committed(const RaftCheck *check)
{
    return (gint64)check->committed->len;
}

static gboolean
check_single_leader(RaftCheck *check, const RaftNode *node, GString *why)
{
    if (raft_node_role(node) != RAFT_ROLE_LEADER)
        return TRUE;
    gpointer key = GINT_TO_POINTER(raft_node_epoch(node));
    gint known = GPOINTER_TO_INT(g_hash_table_lookup(check->leader_of_epoch, key));
    if (known == 0) {
        g_hash_table_insert(check->leader_of_epoch, key, GINT_TO_POINTER(raft_node_id(node) + 1));
        return TRUE;
    }
    if (known - 1 == raft_node_id(node))
        return TRUE;
    g_string_append_printf(why, "SingleLeader: voters %d and %d both led epoch %d; ", known - 1,
                           raft_node_id(node), raft_node_epoch(node));
    return FALSE;
}

/* Compares the voter's records in [verified, its high watermark) with the
 * committed ones, extending those. */
static gboolean
check_committed_data(RaftCheck *check, const RaftNode *node, VoterView *view, GString *why)
{
    Plog *log = raft_node_log(node);
    gint64 hw = raft_node_high_watermark(node);
    g_autoptr(GPtrArray) batches = plog_batch_array_new();
    guint rounds = 0;
    /* Below the log start offset a snapshot stands for the records
     * (check_snapshots checks it). */
    view->verified = MAX(view->verified, raft_node_log_start_offset(node));
    while (view->verified < hw) {
        KSIM_ASSERT(rounds++ < (1u << 24));
        g_ptr_array_set_size(batches, 0);
        PlogReadStatus status = plog_read(log, view->verified, 1 << 20, batches);
        if (status != PLOG_READ_OK || batches->len == 0) {
            g_string_append_printf(why, "ConsistentCommittedData: voter %d cannot read offset %"
                                   G_GINT64_FORMAT " below its high watermark %" G_GINT64_FORMAT "; ",
                                   raft_node_id(node), view->verified, hw);
            return FALSE;
        }
        for (guint b = 0; b < batches->len; b++) {
            const PlogBatch *batch = g_ptr_array_index(batches, b);
            for (guint r = 0; r < batch->records->len; r++) {
                gint64 offset = batch->base_offset + r;
                if (offset < view->verified)
                    continue;
                if (offset >= hw)
                    return TRUE;
                const PlogRecord *record = &g_array_index(batch->records, PlogRecord, r);
                CommittedRecord mine = {batch->leader_epoch, record->key, record->value};
                if (offset > (gint64)check->committed->len) {
                    /* Committed before the checker saw any voter hold it
                     * (a voter that starts from a snapshot): nothing to
                     * compare with. */
                } else if (offset == (gint64)check->committed->len) {
                    g_array_append_val(check->committed, mine);
                } else {
                    const CommittedRecord *known =
                        &g_array_index(check->committed, CommittedRecord, offset);
                    if (known->leader_epoch != mine.leader_epoch || known->key != mine.key ||
                        known->value != mine.value) {
                        g_string_append_printf(
                            why,
                            "ConsistentCommittedData: voter %d has epoch %d value %" G_GUINT64_FORMAT
                            " at committed offset %" G_GINT64_FORMAT ", committed as epoch %d value %"
                            G_GUINT64_FORMAT "; ",
                            raft_node_id(node), mine.leader_epoch, mine.value, offset,
                            known->leader_epoch, known->value);
                        return FALSE;
                    }
                }
                view->verified = offset + 1;
            }
        }
    }
    return TRUE;
}

/* SnapshotCommitted: a snapshot holds committed records only (its end
 * offset was at most the high watermark that made it), and its epoch is the
 * one of the committed record before its end; SnapshotImmutable: every
 * voter's snapshot of an end offset is the same, for ever. */
static gboolean
check_snapshots(RaftCheck *check, const RaftNode *node, GString *why)
{
    gint64 committed = (gint64)check->committed->len;
    for (guint i = 0; i < raft_node_snapshot_count(node); i++) {
        const RaftSnapshot *s = raft_node_snapshot(node, i);
        if (s->end_offset > committed) {
            g_string_append_printf(why,
                                   "SnapshotCommitted: voter %d holds snapshot %" G_GINT64_FORMAT
                                   "-%d beyond the committed records (%" G_GINT64_FORMAT "); ",
                                   raft_node_id(node), s->end_offset, s->epoch, committed);
            return FALSE;
        }
        const CommittedRecord *last =
            s->end_offset > 0
                ? &g_array_index(check->committed, CommittedRecord, s->end_offset - 1)
                : NULL;
        if (last != NULL && last->leader_epoch != s->epoch) {
            g_string_append_printf(why,
                                   "SnapshotCommitted: voter %d's snapshot %" G_GINT64_FORMAT
                                   "-%d ends after a record of epoch %d; ",
                                   raft_node_id(node), s->end_offset, s->epoch, last->leader_epoch);
            return FALSE;
        }
        const KnownSnapshot *known = g_hash_table_lookup(check->snapshots, &s->end_offset);
        if (known == NULL) {
            KnownSnapshot *k = g_new(KnownSnapshot, 1);
            *k = (KnownSnapshot){s->epoch, s->payload, s->size_bytes, s->timestamp_ms};
            g_hash_table_insert(check->snapshots, g_memdup2(&s->end_offset, sizeof(gint64)), k);
            continue;
        }
        if (known->epoch != s->epoch || known->payload != s->payload ||
            known->size_bytes != s->size_bytes) {
            g_string_append_printf(why,
                                   "SnapshotImmutable: voter %d's snapshot at %" G_GINT64_FORMAT
                                   " is %d/%" G_GUINT64_FORMAT ", first seen as %d/%"
                                   G_GUINT64_FORMAT "; ",
                                   raft_node_id(node), s->end_offset, s->epoch, s->payload,
                                   known->epoch, known->payload);
            return FALSE;
        }
    }
    return TRUE;
}

static gboolean
check_voter(RaftCheck *check, const RaftNode *node, VoterView *view, GString *why)
{
    gboolean ok = TRUE;
    if (raft_node_role(node) == RAFT_ROLE_DOWN) {
        view->up = FALSE;
        view->high_watermark = -1;
        view->verified = 0;
        return TRUE;
    }
    raft_node_check_invariants(node);
    gint32 epoch = raft_node_epoch(node);
    if (epoch < view->epoch) {
        g_string_append_printf(why, "MonotonicEpoch: voter %d went from epoch %d to %d; ",
                               raft_node_id(node), view->epoch, epoch);
        ok = FALSE;
    }
    view->epoch = epoch;
    gint64 hw = raft_node_high_watermark(node);
    /* A new leader has no high watermark until it commits in its epoch
     * (LeaderState); a known one never goes back. */
    if (view->up && hw >= 0 && hw < view->high_watermark) {
        g_string_append_printf(why,
                               "MonotonicHighWatermark: voter %d's high watermark went from %"
                               G_GINT64_FORMAT " to %" G_GINT64_FORMAT "; ",
                               raft_node_id(node), view->high_watermark, hw);
        ok = FALSE;
    }
    view->up = TRUE;
    view->high_watermark = MAX(view->high_watermark, hw);
    ok &= check_single_leader(check, node, why);
    ok &= check_committed_data(check, node, view, why);
    ok &= check_snapshots(check, node, why);
    return ok;
}

gboolean
raft_check_observe(RaftCheck *check, RaftNode *const *nodes, guint n_nodes, GString *why)
{
    if (check->views->len == 0) {
        g_array_set_size(check->views, n_nodes);
        for (guint i = 0; i < n_nodes; i++) {
            VoterView *view = &g_array_index(check->views, VoterView, i);
            view->epoch = -1;
            view->high_watermark = -1;
        }
    }
    KSIM_ASSERT(check->views->len == n_nodes);
    gboolean ok = TRUE;
    const RaftNode *top = NULL;
    for (guint i = 0; i < n_nodes; i++) {
        ok &= check_voter(check, nodes[i], &g_array_index(check->views, VoterView, i), why);
        /* Cluster.leaderHighWatermark looks at the running nodes: a paused
         * voter handles no event, and a paused former leader (a zombie that
         * will resume believing it leads an old epoch) is no leader whose
         * high watermark the quorum's must not fall below. Its own high
         * watermark is still checked above. */
        if (raft_node_role(nodes[i]) == RAFT_ROLE_LEADER &&
            sim_node_state(raft_node_world(nodes[i]), raft_node_sim_node(nodes[i])) ==
                SIM_NODE_UP &&
            (top == NULL || raft_node_epoch(nodes[i]) > raft_node_epoch(top)))
            top = nodes[i];
    }
    if (top != NULL && raft_node_high_watermark(top) >= 0) {
        gint64 hw = raft_node_high_watermark(top);
        if (hw < check->leader_high_watermark) {
            g_string_append_printf(why,
                                   "MonotonicHighWatermark: the leader's high watermark went from %"
                                   G_GINT64_FORMAT " to %" G_GINT64_FORMAT " (voter %d, epoch %d); ",
                                   check->leader_high_watermark, hw, raft_node_id(top),
                                   raft_node_epoch(top));
            ok = FALSE;
        }
        check->leader_high_watermark = MAX(check->leader_high_watermark, hw);
    }
    return ok;
}
