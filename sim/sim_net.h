/*
 * sim_net: the simulated network. Connection-oriented and FIFO per connection,
 * as Kafka's TCP connections are.
 *
 * Between every two nodes there is at most one connection, opened implicitly by
 * the first send. Messages on it arrive in the order sent, after the link's
 * latency (a distribution; FIFO is kept even when a later sample is smaller)
 * plus, with a bandwidth set, the time to transmit their size behind earlier
 * messages in the same direction.
 *
 * How nodes learn of failures, as a TCP client would and never by magic:
 *  - a peer's process crash: its OS closes the socket and the FIN reaches us
 *    after one link latency (unless the path is cut): `disconnect` CLOSED;
 *  - a peer's power loss, or a partition: nothing arrives. The connection is
 *    broken and everything in flight on it, and everything sent on it later, is
 *    lost. The sender finds out by its own timeout, or, once the path is open
 *    and the peer's host is up, when its next send is answered by a reset:
 *    `disconnect` RESET one round trip later. When a partition heals, both
 *    endpoints of a connection it broke learn RESET one round trip after the
 *    heal (their retransmissions meet a reset), so a client waiting on a
 *    request is not left waiting for its full timeout. The next send after
 *    that opens a new connection. (Real TCP would often carry a short
 *    partition through; ksim models every partition as breaking the
 *    connections across it.)
 *  - a node may close a connection itself (sim_net_close, e.g. after a request
 *    timeout); its in-flight messages are lost and the peer sees CLOSED.
 *
 * Faults injected: partitions into groups, one-way partitions (a cut in one
 * direction breaks the connection, since TCP needs both), isolating a node,
 * heal; and explicit single-message faults on a directed link: lose, delay or
 * duplicate the next N messages, or a loss ratio; hold the next N messages of
 * one type (sim_net_hold_next). A paused node's kernel still
 * receives: deliveries to it are held until it resumes.
 *
 * Impairments (sim_net_impair ... sim_net_impair_end): a directed link's path
 * degrades for a while, as `tc netem` would make it, and the connection on it
 * stays up, as TCP keeps it up:
 *  - packet loss at a ratio: TCP retransmits what the path lost, so the
 *    message is not lost but arrives one retransmission timeout later per
 *    lost transmission (RTO = the round trip + Linux's TCP_RTO_MIN 200 ms,
 *    doubling per retry up to TCP_RTO_MAX 120 s); a message lost
 *    SIM_NET_TCP_RETRIES_MAX times in a row (Linux's tcp_retries2, 15) times
 *    the connection out: it breaks and the sender learns RESET once its
 *    retransmissions are spent. A message is one unit here (a large fetch
 *    response is not split into segments, and congestion control is not
 *    modelled);
 *  - extra latency, a distribution per message (a constant plus or minus a
 *    uniform jitter is SIM_DIST_UNIFORM), the same for FIN and RST notices
 *    (at its mean);
 *  - a bandwidth cap: messages are transmitted no faster than it. A
 *    message's transmission time is fixed when it is sent, so what is queued
 *    behind a cap when it ends still goes out at the capped rate.
 * FIFO per connection holds through all three: a message that waits for its
 * retransmission or draws a long delay holds back every later one on the
 * connection (head-of-line blocking), as TCP does. Impairments on one link
 * compose (independent losses, summed delays, the lowest cap). Draws come
 * from the stream "net-impair/FROM->TO", apart from the link's latency
 * stream. sim_net_heal ends every impairment.
 *
 * Ownership: a message belongs to the network from sim_net_send until delivery,
 * then to the receiver, which frees it with sim_msg_free. A dropped message is
 * freed by the network.
 */
#ifndef SIM_NET_H
#define SIM_NET_H

#include <glib.h>

#include "sim_world.h"

/* The header every message starts with; models embed it as their first member. */
struct SimMsg {
    guint32 type;       /* model-defined, traced */
    guint32 size_bytes; /* simulated size on the wire */
    /* Frees the whole message; NULL means g_free. */
    void (*free_fn)(SimMsg *msg);
    /* Copies the message for the duplication fault; NULL means a shallow
     * g_memdup2 of `size_of` bytes, and 0 there means it cannot be copied
     * (the fault is then traced and ignored). */
    SimMsg *(*clone_fn)(const SimMsg *msg);
    guint32 size_of; /* sizeof the embedding struct, for the shallow copy */
    /* Engine-owned from here on. */
    SimNodeId from;
    SimNodeId to;
    guint32 conn_generation;
};

/* Frees a message through its free_fn. Accepts NULL. */
void sim_msg_free(SimMsg *msg);

typedef enum {
    SIM_DROP_PARTITION = 1, /* the path was cut */
    SIM_DROP_BROKEN,        /* sent on, or in flight on, a broken connection */
    SIM_DROP_PEER_DOWN,     /* the receiving process was not running */
    SIM_DROP_FAULT,         /* an injected single-message loss */
    SIM_DROP_CLOSED,        /* the connection was closed by an endpoint */
} SimDropReason;

typedef enum {
    SIM_FAULT_PARTITION = 1,
    SIM_FAULT_HEAL,
    SIM_FAULT_ISOLATE,
    SIM_FAULT_LOSE,
    SIM_FAULT_DELAY,
    SIM_FAULT_DUPLICATE,
    SIM_FAULT_LOSS_RATIO,
    SIM_FAULT_DISK_SLOW,
    SIM_FAULT_DISK_FULL,
    SIM_FAULT_CLOCK,      /* a node's wall clock stepped; b = the step in ns (two's complement) */
    SIM_FAULT_IMPAIR,     /* a link impairment began; b = its id */
    SIM_FAULT_IMPAIR_END, /* a link impairment ended; b = its id */
    SIM_FAULT_HOLD,       /* the next messages of one type will be held; b = the hold in ns */
} SimFaultKind;

/* "partition", "broken", ... for a drop reason; "partition", "heal", ...
 * for a fault kind; NULL for a value that is not one. */
const char *sim_net_drop_reason_name(guint reason);
const char *sim_net_fault_name(guint kind);

/* Created and owned by sim_world. */
SimNet *sim_net_new(SimWorld *world);
void sim_net_free(SimNet *net);

/* Latency and bandwidth for messages from `from` to `to` (both directions
 * when `symmetric`). A bandwidth of 0 is unlimited. */
void sim_net_set_link(SimNet *net, SimNodeId from, SimNodeId to, SimDist latency,
                      gint64 bandwidth_bytes_per_s, gboolean symmetric);
/* The latency and bandwidth for every link, including nodes added later
 * (links set with sim_net_set_link keep their own). */
void sim_net_set_default_link(SimNet *net, SimDist latency, gint64 bandwidth_bytes_per_s);

/* Sends `msg` (ownership passes to the network). */
void sim_net_send(SimNet *net, SimNodeId from, SimNodeId to, SimMsg *msg);

/* `node` closes its connection to `peer` (if any): in-flight messages are lost
 * and the peer learns CLOSED after a latency, if the path is open. */
void sim_net_close(SimNet *net, SimNodeId node, SimNodeId peer);

/* TRUE when messages from `from` can reach `to` now. */
gboolean sim_net_path_open(const SimNet *net, SimNodeId from, SimNodeId to);

/* Cuts every path between nodes in different groups. `group_of[i]` is node i's
 * group for i < n_nodes; nodes past n_nodes keep their paths. */
void sim_net_partition(SimNet *net, const guint *group_of, guint n_nodes);
/* Cuts the paths from `from` to `to` only. */
void sim_net_cut_one_way(SimNet *net, SimNodeId from, SimNodeId to);
/* Restores the path from `from` to `to` (the connection stays broken until
 * an endpoint learns it). */
void sim_net_mend_one_way(SimNet *net, SimNodeId from, SimNodeId to);
/* Cuts every path to and from `node`. */
void sim_net_isolate(SimNet *net, SimNodeId node);
/* Restores every path, clears single-message faults and ends every impairment. */
void sim_net_heal(SimNet *net);

/* Single-message faults on the directed link from `from` to `to`. */
void sim_net_lose_next(SimNet *net, SimNodeId from, SimNodeId to, guint count);
void sim_net_delay_next(SimNet *net, SimNodeId from, SimNodeId to, guint count, gint64 extra_ns);
void sim_net_duplicate_next(SimNet *net, SimNodeId from, SimNodeId to, guint count);
/* Holds the next `count` messages of `type` that `from` sends to `to`
 * (SIM_NODE_NONE: to any node) in flight for `hold_ns` more than their link
 * takes: a request stuck on its path (a router's queue, a path that lost it
 * until a late retransmission) while the sender's kernel has handed it off.
 * TCP's order holds: whatever the sender sends after it on that connection
 * waits behind it (head-of-line blocking). A sender that gives up and closes
 * the connection meanwhile (a client's request.timeout.ms) closes it
 * gracefully: what it had sent, the held message first, still reaches the
 * peer in order, and only then its FIN (the receiver processes requests it
 * had read before the FIN, as Kafka's Selector does for a closing channel).
 * So a client that retried on a new connection can see its old request
 * arrive after the new one. A broken connection (a partition, a power loss)
 * or a crash of either end loses held messages as any other. Traced as a
 * fault of kind SIM_FAULT_HOLD when armed; cleared, if not yet used, by
 * sim_net_heal. */
void sim_net_hold_next(SimNet *net, SimNodeId from, SimNodeId to, guint32 type, guint count,
                       gint64 hold_ns);
/* Messages held, or waiting behind a held one, still in flight. */
guint sim_net_holding(const SimNet *net);
/* At most this many hold rules and messages held at once. */
#define SIM_NET_HOLDS_MAX 65536u

/* Loses each message with probability numerator/denominator (0 stops). */
void sim_net_set_loss(SimNet *net, SimNodeId from, SimNodeId to, guint64 numerator,
                      guint64 denominator);

typedef enum {
    SIM_IMPAIR_LOSS = 1,  /* loss_numerator / loss_denominator of transmissions lost */
    SIM_IMPAIR_LATENCY,   /* `latency` more per message */
    SIM_IMPAIR_BANDWIDTH, /* at most bandwidth_bytes_per_s */
} SimImpairKind;

typedef struct {
    SimImpairKind kind;
    guint64 loss_numerator; /* LOSS: < loss_denominator */
    guint64 loss_denominator;
    SimDist latency;              /* LATENCY */
    gint64 bandwidth_bytes_per_s; /* BANDWIDTH: > 0 */
} SimImpairment;

/* Linux's tcp_retries2: transmissions of one message lost in a row that time
 * its connection out. */
#define SIM_NET_TCP_RETRIES_MAX 15u
/* At most this many impairments at once over all links. */
#define SIM_NET_IMPAIRMENTS_MAX 65536u

/* Starts impairing the link from `from` to `to` (from != to); returns its id
 * (> 0) for sim_net_impair_end. Traced. */
guint64 sim_net_impair(SimNet *net, SimNodeId from, SimNodeId to, const SimImpairment *impairment);
/* Ends an impairment; nothing when it has ended already (a heal ends all). */
void sim_net_impair_end(SimNet *net, guint64 id);
/* Impairments in force on the link from `from` to `to`. */
guint sim_net_impairments(const SimNet *net, SimNodeId from, SimNodeId to);

/* Counters for reports and tests. */
guint64 sim_net_messages_sent(const SimNet *net);
guint64 sim_net_messages_delivered(const SimNet *net);
guint64 sim_net_messages_dropped(const SimNet *net);
/* Transmissions an impairment's loss made TCP repeat. */
guint64 sim_net_retransmissions(const SimNet *net);

/* Lifecycle, called by sim_world. */
void sim_net_node_added(SimNet *net, SimNodeId node);
void sim_net_node_crashed(SimNet *net, SimNodeId node, gboolean power_loss);
void sim_net_node_restarted(SimNet *net, SimNodeId node);

void sim_net_check_invariants(const SimNet *net);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SimNet, sim_net_free)

#endif
