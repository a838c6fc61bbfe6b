/*
 * kraft_controller_internal: what the KRaft controller's files share
 * (kraft_controller.c, and kraft_recovery.c, KIP-966's unclean recovery
 * manager): the controller's state and the helpers that write its records.
 * Not for use outside models/kraft.
 */
#ifndef KRAFT_CONTROLLER_INTERNAL_H
#define KRAFT_CONTROLLER_INTERNAL_H

#include "kraft_controller.h"
#include "kraft_proto.h"
#include "kraft_snapshot.h"

struct KraftController {
    RaftNode *raft;
    SimWorld *world;
    KraftRecordStore *store;
    KraftControllerConfig cfg;
    History *history;
    GPtrArray *topics; /* TopicSpec *, in the order added */
    SimRng *placer_rng; /* StripedReplicaPlacer's Random (the world's) */
    KraftImage *committed;
    /* Active only. */
    gboolean active;
    gint32 active_epoch;
    KraftImage *latest;
    GArray *sessions; /* Session, sorted by broker id */
    GQueue *replies;  /* PendingReply *, by offset */
    SimTimerId fence_timer;
    SimTimerId claim_timer;
    gint32 known_leader; /* the last leader its quorum node knew; RAFT_NO_NODE */
    /* KIP-966's unclean recovery manager (active only): Recovery *, in the
     * order started; a timer that looks at them after records are written. */
    GPtrArray *recoveries;
    SimTimerId recovery_poll_timer;
    gint32 correlation_next;
    /* How the election being written was decided, for the history (NULL:
     * not by a recovery). */
    const char *election_note;
    KraftElectionFn election_fn;
    void *election_data;
    KraftSnapshotGenerator snapshots; /* of the committed image */
};

/* Records to write as one batch of the metadata log. */
typedef struct {
    GArray *records; /* KraftRecord */
} Batch;

void kraft_controller_batch_init(Batch *b);
void kraft_controller_batch_clear(Batch *b);
/* Appends the records of `b` as one batch and replays them into `latest`;
 * returns the offset of the last, or -1 when nothing was written. */
gint64 kraft_controller_write_batch(KraftController *c, Batch *b);

/* The controller's broker id (its quorum node's). */
gint32 kraft_controller_self_id(const KraftController *c);
gint64 kraft_controller_now_ns(const KraftController *c);
/* Sends `msg` (transfer full) from the controller's node. */
void kraft_controller_send(KraftController *c, SimNodeId to, KraftMsg *msg);
/* Records a controller event in the history (none without one). */
void kraft_controller_record_event(KraftController *c, HistoryEventKind kind, guint32 topic,
                                   gint32 partition, const KraftPartition *p, const char *format,
                                   ...) G_GNUC_PRINTF(6, 7);

/* ---- unclean recovery (kraft_recovery.c) ---- */

/* Looks at the recoveries from the event loop, after what is being written
 * now (an election writes records itself): ends those no longer needed,
 * starts those needed, asks the replicas that came back and elects where
 * the strategy has heard enough. Active controllers only. */
void kraft_recovery_schedule_poll(KraftController *c);
/* Ends every recovery (the controller is no longer active). */
void kraft_recovery_clear(KraftController *c);
/* A replica's GetReplicaLogInfo answer. */
void kraft_recovery_handle_log_info(KraftController *c, const KraftMsg *response);

#endif
