/*
 * sim_net: connections, latency, partitions and message faults (see sim_net.h).
 *
 * Invariants:
 *  1. There is one connection per unordered pair of nodes, kept in the Link at
 *     [min][max]. Its state is NONE (never opened), OPEN, BROKEN (dead, but
 *     its endpoints have not been told) or CLOSED (dead and known dead). A
 *     message is delivered only if its connection is still OPEN in the
 *     generation it was sent in.
 *  2. Per directed link, arrivals are non-decreasing in send order (FIFO):
 *     `arrival_last_ns` is the arrival time of the last message sent on it.
 *  3. No OPEN connection crosses a cut path: cutting a path in either direction
 *     breaks the connection (TCP needs both directions).
 *  4. sent + duplicated = delivered + dropped + in flight.
 *  5. A directed link's `impairments` counts the entries of `impairs` on it;
 *     ids increase in the order impairments began, and each is in `impairs`
 *     from sim_net_impair until sim_net_impair_end or a heal.
 *  6. `holding` lists each message in flight that is held (sim_net_hold_next)
 *     or was sent behind a held one on its connection, from its send until it
 *     is delivered or dropped; `graceful` is set when its sender closed the
 *     connection after sending it, and only then is it delivered on a
 *     connection that is no longer OPEN in its generation.
 *
 * Connection transitions:
 *   NONE|CLOSED --send, path open, peer up--> OPEN          (conn_for_send)
 *   NONE|CLOSED --send, path cut or peer down--> BROKEN     (conn_for_send)
 *   OPEN --path cut, peer power loss--> BROKEN              (conn_break)
 *   OPEN --peer process crash, sim_net_close--> CLOSED      (conn_close)
 *   BROKEN --a send answered by a reset--> CLOSED           (reset_arrive)
 */
#include "sim_net.h"

#include "sim_assert.h"
#include "sim_marks.h"

#include <string.h>

enum conn_state { CONN_NONE = 0, CONN_OPEN, CONN_BROKEN, CONN_CLOSED };

typedef struct {
    /* Directed: messages from the row node to the column node. */
    SimDist latency;
    gint64 bandwidth_bytes_per_s;
    gint64 transmit_free_ns;
    gint64 arrival_last_ns;
    gboolean custom;
    gboolean cut;
    guint lose_next;
    guint duplicate_next;
    guint delay_next;
    gint64 delay_extra_ns;
    guint64 loss_numerator;
    guint64 loss_denominator;
    SimRng *rng; /* created on the first draw */
    SimRng *impair_rng; /* the impairments' draws, created on the first */
    guint impairments;  /* entries of SimNet.impairs on this link */
    /* The arrival of the last message sent on the connection of generation
     * `hold_generation` that is held or waits behind a held one (0: none
     * yet). Such messages do not move `arrival_last_ns`: a later connection
     * does not wait behind them. */
    gint64 hold_arrival_ns;
    guint32 hold_generation;
    /* Undirected, meaningful at [min][max] only. */
    guint32 conn_state;
    guint32 conn_generation;
    gboolean reset_pending;
    /* The endpoints' incarnations when this generation began: a process that
     * restarted since has no socket of it. [0] is the smaller node id. */
    guint32 conn_incarnation[2];
} Link;

struct SimNet {
    SimWorld *world;
    Link *links; /* capacity x capacity */
    guint capacity;
    guint n_nodes;
    SimDist default_latency;
    gint64 default_bandwidth;
    guint64 sent;
    guint64 duplicated;
    guint64 delivered;
    guint64 dropped;
    guint64 retransmissions;
    GArray *impairs; /* Impair, by id */
    guint64 impair_id_last;
    GArray *hold_rules; /* HoldRule, in the order armed */
    GArray *holding;    /* Holding, in send order */
};

/* The next `remaining` messages of `type` from `from` to `to` (SIM_NODE_NONE:
 * any) are held `hold_ns` longer. */
typedef struct {
    SimNodeId from;
    SimNodeId to;
    guint32 type;
    guint remaining;
    gint64 hold_ns;
} HoldRule;

/* A message in flight that is held or waits behind one. */
typedef struct {
    SimMsg *msg;
    gboolean graceful; /* its sender closed the connection after sending it */
} Holding;

/* One impairment in force. */
typedef struct {
    guint64 id;
    SimNodeId from;
    SimNodeId to;
    SimImpairment what;
} Impair;

/* Linux's TCP_RTO_MIN and TCP_RTO_MAX. */
#define TCP_RTO_MIN_NS (200 * SIM_NS_PER_MS)
#define TCP_RTO_MAX_NS (120 * SIM_NS_PER_S)
/* The most delay impairments add to one message (about 31 years). */
#define IMPAIR_EXTRA_NS_MAX (G_GINT64_CONSTANT(1000000000) * SIM_NS_PER_S)

static Link *
link_at(const SimNet *net, SimNodeId from, SimNodeId to)
{
    KSIM_ASSERT(from < net->n_nodes);
    KSIM_ASSERT(to < net->n_nodes);
    return &net->links[(gsize)from * net->capacity + to];
}

static Link *
conn_at(const SimNet *net, SimNodeId a, SimNodeId b)
{
    return a < b ? link_at(net, a, b) : link_at(net, b, a);
}

SimNet *
sim_net_new(SimWorld *world)
{
    SimNet *net = g_new0(SimNet, 1);
    net->world = world;
    net->default_latency = SIM_DIST_CONST(100 * SIM_NS_PER_US);
    net->impairs = g_array_new(FALSE, FALSE, sizeof(Impair));
    net->hold_rules = g_array_new(FALSE, FALSE, sizeof(HoldRule));
    net->holding = g_array_new(FALSE, FALSE, sizeof(Holding));
    return net;
}

void
sim_net_free(SimNet *net)
{
    if (net == NULL)
        return;
    for (gsize i = 0; i < (gsize)net->capacity * net->capacity; i++) {
        sim_rng_free(net->links[i].rng);
        sim_rng_free(net->links[i].impair_rng);
    }
    g_array_free(net->impairs, TRUE);
    g_array_free(net->hold_rules, TRUE);
    g_array_free(net->holding, TRUE);
    g_free(net->links);
    g_free(net);
}

void
sim_msg_free(SimMsg *msg)
{
    if (msg == NULL)
        return;
    if (msg->free_fn != NULL)
        msg->free_fn(msg);
    else
        g_free(msg);
}

static void
link_init(SimNet *net, Link *link)
{
    memset(link, 0, sizeof *link);
    link->latency = net->default_latency;
    link->bandwidth_bytes_per_s = net->default_bandwidth;
}

void
sim_net_node_added(SimNet *net, SimNodeId node)
{
    KSIM_ASSERT(node == net->n_nodes);
    if (node >= net->capacity) {
        guint capacity = net->capacity ? net->capacity * 2 : 8;
        Link *links = g_new0(Link, (gsize)capacity * capacity);
        for (guint from = 0; from < net->n_nodes; from++)
            memcpy(&links[(gsize)from * capacity], &net->links[(gsize)from * net->capacity],
                   sizeof(Link) * net->n_nodes);
        g_free(net->links);
        net->links = links;
        net->capacity = capacity;
    }
    net->n_nodes++;
    for (SimNodeId other = 0; other <= node; other++) {
        link_init(net, link_at(net, node, other));
        link_init(net, link_at(net, other, node));
    }
}

void
sim_net_set_link(SimNet *net, SimNodeId from, SimNodeId to, SimDist latency,
                 gint64 bandwidth_bytes_per_s, gboolean symmetric)
{
    KSIM_ASSERT(bandwidth_bytes_per_s >= 0);
    Link *link = link_at(net, from, to);
    link->latency = latency;
    link->bandwidth_bytes_per_s = bandwidth_bytes_per_s;
    link->custom = TRUE;
    if (symmetric)
        sim_net_set_link(net, to, from, latency, bandwidth_bytes_per_s, FALSE);
}

void
sim_net_set_default_link(SimNet *net, SimDist latency, gint64 bandwidth_bytes_per_s)
{
    net->default_latency = latency;
    net->default_bandwidth = bandwidth_bytes_per_s;
    for (SimNodeId from = 0; from < net->n_nodes; from++) {
        for (SimNodeId to = 0; to < net->n_nodes; to++) {
            Link *link = link_at(net, from, to);
            if (link->custom)
                continue;
            link->latency = latency;
            link->bandwidth_bytes_per_s = bandwidth_bytes_per_s;
        }
    }
}

static SimRng *
link_rng(SimNet *net, SimNodeId from, SimNodeId to)
{
    Link *link = link_at(net, from, to);
    if (link->rng == NULL) {
        g_autofree char *name = g_strdup_printf("net/%s->%s", sim_node_name(net->world, from),
                                                sim_node_name(net->world, to));
        link->rng = sim_rng_new(sim_world_seed(net->world), name);
    }
    return link->rng;
}

static void
trace(SimNet *net, SimTraceKind kind, SimNodeId node, SimNodeId peer, guint64 a, guint64 b)
{
    sim_trace_add(sim_world_trace(net->world), sim_now_ns(net->world), kind, node, peer, a, b,
                  NULL);
}

/* The message's entry in `holding`, or NULL. */
static Holding *
holding_find(const SimNet *net, const SimMsg *msg, guint *index)
{
    for (guint i = 0; i < net->holding->len; i++) {
        Holding *h = &g_array_index(net->holding, Holding, i);
        if (h->msg == msg) {
            *index = i;
            return h;
        }
    }
    return NULL;
}

/* Forgets the message's entry in `holding`; returns whether it was graceful. */
static gboolean
holding_forget(SimNet *net, const SimMsg *msg)
{
    guint index = 0;
    Holding *h = net->holding->len > 0 ? holding_find(net, msg, &index) : NULL;
    if (h == NULL)
        return FALSE;
    gboolean graceful = h->graceful;
    g_array_remove_index(net->holding, index);
    return graceful;
}

static void
drop(SimNet *net, SimMsg *msg, SimDropReason reason)
{
    holding_forget(net, msg);
    net->dropped++;
    trace(net, SIM_TRACE_DROP, msg->to, msg->from, msg->type, reason);
    sim_msg_free(msg);
}

gboolean
sim_net_path_open(const SimNet *net, SimNodeId from, SimNodeId to)
{
    return !link_at(net, from, to)->cut;
}

/* ---- disconnect notifications ---- */

/* A disconnect notice travels as an engine event owned by the node told; its
 * u64 packs (peer << 40) | (reason << 32) | generation. */
static guint64
notice_pack(SimNodeId peer, SimDisconnectReason reason, guint32 generation)
{
    KSIM_ASSERT(peer < (1u << 24));
    return ((guint64)peer << 40) | ((guint64)reason << 32) | generation;
}

static void
notice_arrive(void *ctx, void *arg, guint64 packed)
{
    SimWorld *world = ctx;
    SimNet *net = sim_world_net(world);
    SimNodeId node = (SimNodeId)(guintptr)arg;
    SimNodeId peer = (SimNodeId)(packed >> 40);
    SimDisconnectReason reason = (SimDisconnectReason)((packed >> 32) & 0xff);
    guint32 generation = (guint32)packed;
    Link *conn = conn_at(net, node, peer);
    /* A notice about an older connection is stale: it was replaced already. */
    if (conn->conn_generation != generation)
        return;
    if (reason == SIM_DISCONNECT_RESET) {
        conn->reset_pending = FALSE;
        if (conn->conn_state == CONN_BROKEN)
            conn->conn_state = CONN_CLOSED;
    }
    trace(net, SIM_TRACE_DISCONNECT, node, peer, reason, generation);
    const SimNodeOps *ops = sim_node_ops(world, node);
    if (ops->disconnect != NULL)
        ops->disconnect(world, sim_node_ctx(world, node), peer, reason);
}

/* The mean extra latency of the link's impairments (no draw: notices and
 * retransmission timers use it). */
static gint64
impair_latency_mean_ns(const SimNet *net, SimNodeId from, SimNodeId to)
{
    if (link_at(net, from, to)->impairments == 0)
        return 0;
    double sum = 0;
    for (guint i = 0; i < net->impairs->len; i++) {
        const Impair *imp = &g_array_index(net->impairs, Impair, i);
        if (imp->from == from && imp->to == to && imp->what.kind == SIM_IMPAIR_LATENCY)
            sum += sim_dist_mean(&imp->what.latency);
    }
    return (gint64)sum;
}

static gint64
one_way_ns(SimNet *net, SimNodeId from, SimNodeId to)
{
    return sim_dist_sample(&link_at(net, from, to)->latency, link_rng(net, from, to)) +
           impair_latency_mean_ns(net, from, to);
}

/* Tells `node`, after `delay_ns`, that its connection to `peer` failed. */
static void
notice_send(SimNet *net, SimNodeId node, SimNodeId peer, SimDisconnectReason reason,
            gint64 delay_ns)
{
    if (sim_node_state(net->world, node) == SIM_NODE_DOWN)
        return;
    Link *conn = conn_at(net, node, peer);
    sim_world_schedule_for(net->world, node, sim_now_ns(net->world) + delay_ns, notice_arrive,
                           NULL, (void *)(guintptr)node,
                           notice_pack(peer, reason, conn->conn_generation));
}

static void
conn_break(SimNet *net, SimNodeId a, SimNodeId b)
{
    Link *conn = conn_at(net, a, b);
    if (conn->conn_state == CONN_OPEN)
        conn->conn_state = CONN_BROKEN;
}

/* `closer` closes a connection on which it sent held messages still in
 * flight: they, and what it sent behind them, are delivered in order before
 * the FIN. Returns the last one's arrival, or 0. */
static gint64
holding_close_gracefully(SimNet *net, SimNodeId closer, SimNodeId peer, guint32 generation)
{
    gint64 last_ns = 0;
    for (guint i = 0; i < net->holding->len; i++) {
        Holding *h = &g_array_index(net->holding, Holding, i);
        if (h->msg->from != closer || h->msg->to != peer || h->msg->conn_generation != generation)
            continue;
        h->graceful = TRUE;
        last_ns = MAX(last_ns, link_at(net, closer, peer)->hold_arrival_ns);
    }
    return last_ns;
}

/* `closer` ends the connection; the peer hears a FIN if the path is open. */
static void
conn_close(SimNet *net, SimNodeId closer, SimNodeId peer)
{
    Link *conn = conn_at(net, closer, peer);
    if (conn->conn_state != CONN_OPEN) {
        if (conn->conn_state == CONN_BROKEN && closer != peer)
            conn->conn_state = CONN_CLOSED;
        return;
    }
    if (!sim_net_path_open(net, closer, peer)) {
        conn->conn_state = CONN_BROKEN;
        return;
    }
    conn->conn_state = CONN_CLOSED;
    gint64 fin_ns = one_way_ns(net, closer, peer);
    gint64 held_last_ns = net->holding->len > 0
                              ? holding_close_gracefully(net, closer, peer, conn->conn_generation)
                              : 0;
    /* The FIN follows the data sent before it (TCP's order). */
    fin_ns = MAX(fin_ns, held_last_ns - sim_now_ns(net->world));
    notice_send(net, peer, closer, SIM_DISCONNECT_CLOSED, fin_ns);
}

void
sim_net_close(SimNet *net, SimNodeId node, SimNodeId peer)
{
    KSIM_ASSERT(node != peer);
    conn_close(net, node, peer);
}

/* ---- sending and delivery ---- */

static void
deliver_drop(void *ctx, void *arg, guint64 arg_u64)
{
    SimWorld *world = ctx;
    (void)arg_u64;
    drop(sim_world_net(world), arg, SIM_DROP_PEER_DOWN);
}

static void
deliver(void *ctx, void *arg, guint64 arg_u64)
{
    SimWorld *world = ctx;
    SimNet *net = sim_world_net(world);
    SimMsg *msg = arg;
    (void)arg_u64;
    Link *conn = conn_at(net, msg->from, msg->to);
    gboolean graceful = holding_forget(net, msg);
    if (!graceful &&
        (conn->conn_state != CONN_OPEN || conn->conn_generation != msg->conn_generation)) {
        drop(net, msg, SIM_DROP_BROKEN);
        return;
    }
    net->delivered++;
    trace(net, SIM_TRACE_DELIVER, msg->to, msg->from, msg->type, msg->size_bytes);
    sim_node_ops(world, msg->to)->message(world, sim_node_ctx(world, msg->to), msg->from, msg);
}

/* The connection a send goes out on, opening one if needed; FALSE when the
 * message cannot leave (the connection is or becomes BROKEN). */
static gboolean
conn_for_send(SimNet *net, SimNodeId from, SimNodeId to)
{
    Link *conn = conn_at(net, from, to);
    if (conn->conn_state == CONN_OPEN)
        return TRUE;
    /* A restarted sender never had the broken socket: it simply connects. */
    guint32 incarnation = sim_node_incarnation(net->world, from);
    if (conn->conn_state == CONN_BROKEN && conn->conn_incarnation[from < to ? 0 : 1] != incarnation)
        conn->conn_state = CONN_CLOSED;
    if (conn->conn_state == CONN_NONE || conn->conn_state == CONN_CLOSED) {
        conn->conn_generation++;
        conn->reset_pending = FALSE;
        conn->conn_incarnation[from < to ? 0 : 1] = incarnation;
        conn->conn_incarnation[from < to ? 1 : 0] = sim_node_incarnation(net->world, to);
        gboolean reachable = sim_net_path_open(net, from, to) &&
                             sim_net_path_open(net, to, from) &&
                             sim_node_state(net->world, to) != SIM_NODE_DOWN;
        conn->conn_state = reachable ? CONN_OPEN : CONN_BROKEN;
        if (reachable)
            return TRUE;
    }
    /* A dead connection: if the peer's kernel can answer, it answers with a
     * reset one round trip later. */
    gboolean answers = sim_net_path_open(net, from, to) && sim_net_path_open(net, to, from) &&
                       sim_node_host_up(net->world, to);
    if (answers && !conn->reset_pending) {
        conn->reset_pending = TRUE;
        notice_send(net, from, to, SIM_DISCONNECT_RESET,
                    one_way_ns(net, from, to) + one_way_ns(net, to, from));
    }
    return FALSE;
}

/* Single-message faults; returns FALSE when the message is to be lost. */
static gboolean
apply_faults(SimNet *net, Link *link, SimNodeId from, SimNodeId to, gint64 *extra_ns,
             gboolean *duplicate)
{
    if (link->lose_next > 0) {
        link->lose_next--;
        return FALSE;
    }
    if (link->loss_numerator > 0 &&
        sim_rng_chance(link_rng(net, from, to), link->loss_numerator, link->loss_denominator))
        return FALSE;
    if (link->delay_next > 0) {
        link->delay_next--;
        *extra_ns = link->delay_extra_ns;
    }
    if (link->duplicate_next > 0) {
        link->duplicate_next--;
        *duplicate = TRUE;
    }
    return TRUE;
}

/* When a message sent now arrives; `held` when it is held or waits behind a
 * held message on its connection (of generation `generation`). */
static gint64
arrival_time(SimNet *net, Link *link, SimNodeId from, SimNodeId to, guint32 size_bytes,
             gint64 extra_ns, gint64 bandwidth_bytes_per_s, gboolean held, guint32 generation)
{
    gint64 now = sim_now_ns(net->world);
    gint64 departure = now;
    if (bandwidth_bytes_per_s > 0) {
        gint64 start = MAX(now, link->transmit_free_ns);
        departure = start + (gint64)size_bytes * SIM_NS_PER_S / bandwidth_bytes_per_s;
        link->transmit_free_ns = departure;
    }
    gint64 latency = link->latency.kind == SIM_DIST_CONSTANT
                         ? (gint64)link->latency.a
                         : sim_dist_sample(&link->latency, link_rng(net, from, to));
    gint64 arrival = MAX(departure + latency + extra_ns, link->arrival_last_ns);
    if (!held) {
        link->arrival_last_ns = arrival;
        return arrival;
    }
    if (link->hold_generation == generation)
        arrival = MAX(arrival, link->hold_arrival_ns);
    link->hold_generation = generation;
    link->hold_arrival_ns = arrival;
    return arrival;
}

/* ---- impairments ---- */

static SimRng *
impair_rng(SimNet *net, SimNodeId from, SimNodeId to)
{
    Link *link = link_at(net, from, to);
    if (link->impair_rng == NULL) {
        g_autofree char *name = g_strdup_printf("net-impair/%s->%s",
                                                sim_node_name(net->world, from),
                                                sim_node_name(net->world, to));
        link->impair_rng = sim_rng_new(sim_world_seed(net->world), name);
    }
    return link->impair_rng;
}

/* The retransmission timeout on the path: Linux's srtt plus a variance term
 * floored at TCP_RTO_MIN (tcp_set_rto), the round trip taken at its mean. */
static gint64
rto_ns(const SimNet *net, SimNodeId from, SimNodeId to)
{
    double rtt = sim_dist_mean(&link_at(net, from, to)->latency) +
                 sim_dist_mean(&link_at(net, to, from)->latency);
    return (gint64)rtt + impair_latency_mean_ns(net, from, to) +
           impair_latency_mean_ns(net, to, from) + TCP_RTO_MIN_NS;
}

/* What the link's impairments do to one message. */
typedef struct {
    gint64 extra_ns;              /* retransmission waits and added latency */
    gint64 bandwidth_bytes_per_s; /* the lowest cap, or the link's own; 0: none */
    gboolean timed_out;           /* TCP gave up: the connection times out */
} ImpairEffect;

/* Transmissions lost before one gets through, each a retransmission timeout
 * later than the one before; `timed_out` when all SIM_NET_TCP_RETRIES_MAX
 * retransmissions are lost too. */
static void
impair_loss(SimNet *net, const Impair *imp, ImpairEffect *effect)
{
    SimRng *rng = impair_rng(net, imp->from, imp->to);
    gint64 rto = MIN(rto_ns(net, imp->from, imp->to), TCP_RTO_MAX_NS);
    guint lost = 0;
    while (lost <= SIM_NET_TCP_RETRIES_MAX &&
           sim_rng_chance(rng, imp->what.loss_numerator, imp->what.loss_denominator)) {
        effect->extra_ns += rto;
        rto = MIN(2 * rto, TCP_RTO_MAX_NS);
        lost++;
    }
    net->retransmissions += MIN(lost, SIM_NET_TCP_RETRIES_MAX);
    if (lost > SIM_NET_TCP_RETRIES_MAX)
        effect->timed_out = TRUE;
}

static void
impair_effect(SimNet *net, SimNodeId from, SimNodeId to, ImpairEffect *effect)
{
    Link *link = link_at(net, from, to);
    *effect = (ImpairEffect){0, link->bandwidth_bytes_per_s, FALSE};
    if (link->impairments == 0)
        return;
    for (guint i = 0; i < net->impairs->len && !effect->timed_out; i++) {
        const Impair *imp = &g_array_index(net->impairs, Impair, i);
        if (imp->from != from || imp->to != to)
            continue;
        switch (imp->what.kind) {
        case SIM_IMPAIR_LOSS:
            impair_loss(net, imp, effect);
            break;
        case SIM_IMPAIR_LATENCY:
            /* Bounded so that any number of impairments cannot overflow. */
            effect->extra_ns =
                MIN(effect->extra_ns + sim_dist_sample(&imp->what.latency, impair_rng(net, from, to)),
                    IMPAIR_EXTRA_NS_MAX);
            break;
        case SIM_IMPAIR_BANDWIDTH: {
            gint64 cap = imp->what.bandwidth_bytes_per_s;
            gint64 own = effect->bandwidth_bytes_per_s;
            effect->bandwidth_bytes_per_s = own == 0 ? cap : MIN(own, cap);
            break;
        }
        }
    }
}

/* TCP gave up on the message: the connection is dead, and the sender learns
 * so once its retransmissions are spent; the peer finds out on its next send. */
static void
impair_time_out(SimNet *net, SimMsg *msg, gint64 after_ns)
{
    conn_break(net, msg->from, msg->to);
    notice_send(net, msg->from, msg->to, SIM_DISCONNECT_RESET, after_ns);
    drop(net, msg, SIM_DROP_BROKEN);
}

guint64
sim_net_impair(SimNet *net, SimNodeId from, SimNodeId to, const SimImpairment *impairment)
{
    KSIM_ASSERT(impairment != NULL);
    KSIM_ASSERT(from != to);
    KSIM_ASSERT(net->impairs->len < SIM_NET_IMPAIRMENTS_MAX);
    switch (impairment->kind) {
    case SIM_IMPAIR_LOSS:
        KSIM_ASSERT(impairment->loss_denominator > 0);
        KSIM_ASSERT(impairment->loss_numerator < impairment->loss_denominator);
        break;
    case SIM_IMPAIR_LATENCY:
        break;
    case SIM_IMPAIR_BANDWIDTH:
        KSIM_ASSERT(impairment->bandwidth_bytes_per_s > 0);
        break;
    default:
        KSIM_ASSERT(!"unknown impairment kind");
    }
    Impair imp = {++net->impair_id_last, from, to, *impairment};
    g_array_append_val(net->impairs, imp);
    link_at(net, from, to)->impairments++;
    trace(net, SIM_TRACE_FAULT, from, to, SIM_FAULT_IMPAIR, (imp.id << 8) | impairment->kind);
    return imp.id;
}

void
sim_net_impair_end(SimNet *net, guint64 id)
{
    for (guint i = 0; i < net->impairs->len; i++) {
        const Impair *imp = &g_array_index(net->impairs, Impair, i);
        if (imp->id != id)
            continue;
        Link *link = link_at(net, imp->from, imp->to);
        KSIM_ASSERT(link->impairments > 0);
        link->impairments--;
        trace(net, SIM_TRACE_FAULT, imp->from, imp->to, SIM_FAULT_IMPAIR_END,
              (imp->id << 8) | imp->what.kind);
        g_array_remove_index(net->impairs, i);
        return;
    }
}

guint
sim_net_impairments(const SimNet *net, SimNodeId from, SimNodeId to)
{
    return link_at(net, from, to)->impairments;
}

static SimMsg *
msg_clone(const SimMsg *msg)
{
    if (msg->clone_fn != NULL)
        return msg->clone_fn(msg);
    if (msg->size_of == 0)
        return NULL;
    return g_memdup2(msg, msg->size_of);
}

/* The hold of the first rule that matches the message, consuming it; 0 when
 * none does. */
static gint64
hold_match(SimNet *net, const SimMsg *msg)
{
    for (guint i = 0; i < net->hold_rules->len; i++) {
        HoldRule *rule = &g_array_index(net->hold_rules, HoldRule, i);
        if (rule->from != msg->from || rule->type != msg->type ||
            (rule->to != SIM_NODE_NONE && rule->to != msg->to))
            continue;
        gint64 hold_ns = rule->hold_ns;
        if (--rule->remaining == 0)
            g_array_remove_index(net->hold_rules, i);
        return hold_ns;
    }
    return 0;
}

static void
holding_add(SimNet *net, SimMsg *msg)
{
    KSIM_ASSERT(net->holding->len < SIM_NET_HOLDS_MAX);
    Holding h = {msg, FALSE};
    g_array_append_val(net->holding, h);
}

/* Whether a message sent now on the link's connection waits behind a held
 * one. */
static gboolean
behind_hold(const SimNet *net, const Link *link, guint32 generation)
{
    return link->hold_generation == generation && link->hold_arrival_ns > sim_now_ns(net->world);
}

static void
schedule_delivery(SimNet *net, SimMsg *msg, gint64 arrival_ns)
{
    sim_world_schedule_for(net->world, msg->to, arrival_ns, deliver, deliver_drop, msg, 0);
}

void
sim_net_send(SimNet *net, SimNodeId from, SimNodeId to, SimMsg *msg)
{
    KSIM_ASSERT(msg != NULL);
    msg->from = from;
    msg->to = to;
    net->sent++;
    trace(net, SIM_TRACE_SEND, from, to, msg->type, msg->size_bytes);
    if (!conn_for_send(net, from, to)) {
        drop(net, msg, SIM_DROP_BROKEN);
        return;
    }
    Link *link = link_at(net, from, to);
    msg->conn_generation = conn_at(net, from, to)->conn_generation;
    gint64 extra_ns = 0;
    gboolean duplicate = FALSE;
    if (!apply_faults(net, link, from, to, &extra_ns, &duplicate)) {
        drop(net, msg, SIM_DROP_FAULT);
        return;
    }
    ImpairEffect effect;
    impair_effect(net, from, to, &effect);
    if (effect.timed_out) {
        impair_time_out(net, msg, effect.extra_ns);
        return;
    }
    SimMsg *copy = duplicate ? msg_clone(msg) : NULL;
    if (duplicate && copy == NULL)
        trace(net, SIM_TRACE_DUPLICATE, to, from, msg->type, G_MAXUINT64);
    gint64 hold_ns = net->hold_rules->len > 0 ? hold_match(net, msg) : 0;
    gboolean held = hold_ns > 0 || behind_hold(net, link, msg->conn_generation);
    if (hold_ns > 0)
        SIM_MARK(net->world, message_held);
    if (held)
        holding_add(net, msg);
    schedule_delivery(net, msg,
                      arrival_time(net, link, from, to, msg->size_bytes,
                                   extra_ns + effect.extra_ns + hold_ns,
                                   effect.bandwidth_bytes_per_s, held, msg->conn_generation));
    if (copy != NULL) {
        net->duplicated++;
        trace(net, SIM_TRACE_DUPLICATE, to, from, copy->type, copy->size_bytes);
        if (held)
            holding_add(net, copy);
        schedule_delivery(net, copy,
                          arrival_time(net, link, from, to, copy->size_bytes, 0,
                                       effect.bandwidth_bytes_per_s, held, copy->conn_generation));
    }
}

/* ---- partitions ---- */

static void
cut(SimNet *net, SimNodeId from, SimNodeId to)
{
    if (from == to)
        return;
    link_at(net, from, to)->cut = TRUE;
    conn_break(net, from, to);
}

void
sim_net_partition(SimNet *net, const guint *group_of, guint n_nodes)
{
    KSIM_ASSERT(n_nodes <= net->n_nodes);
    trace(net, SIM_TRACE_FAULT, SIM_NODE_NONE, SIM_NODE_NONE, SIM_FAULT_PARTITION, n_nodes);
    for (SimNodeId a = 0; a < n_nodes; a++) {
        for (SimNodeId b = 0; b < n_nodes; b++) {
            if (group_of[a] != group_of[b])
                cut(net, a, b);
        }
    }
}

void
sim_net_cut_one_way(SimNet *net, SimNodeId from, SimNodeId to)
{
    trace(net, SIM_TRACE_FAULT, from, to, SIM_FAULT_PARTITION, 1);
    cut(net, from, to);
}

/* A path has healed. An endpoint with unacknowledged data on a connection
 * the cut broke retransmits it, and the peer, which no longer has that
 * connection, answers with a reset: each endpoint still running the process
 * that had the connection learns RESET one round trip later. */
static void
resets_after_heal(SimNet *net, SimNodeId a, SimNodeId b)
{
    Link *conn = conn_at(net, a, b);
    if (a == b || conn->conn_state != CONN_BROKEN || !sim_net_path_open(net, a, b) ||
        !sim_net_path_open(net, b, a) || !sim_node_host_up(net->world, a) ||
        !sim_node_host_up(net->world, b) || conn->reset_pending)
        return;
    conn->reset_pending = TRUE;
    SimNodeId ends[2] = {MIN(a, b), MAX(a, b)};
    for (guint i = 0; i < 2; i++) {
        SimNodeId node = ends[i], peer = ends[1 - i];
        if (sim_node_incarnation(net->world, node) != conn->conn_incarnation[i])
            continue;
        gint64 rtt = one_way_ns(net, node, peer) + one_way_ns(net, peer, node);
        notice_send(net, node, peer, SIM_DISCONNECT_RESET, rtt);
    }
}

void
sim_net_mend_one_way(SimNet *net, SimNodeId from, SimNodeId to)
{
    trace(net, SIM_TRACE_FAULT, from, to, SIM_FAULT_HEAL, 1);
    link_at(net, from, to)->cut = FALSE;
    resets_after_heal(net, from, to);
}

void
sim_net_isolate(SimNet *net, SimNodeId node)
{
    trace(net, SIM_TRACE_FAULT, node, SIM_NODE_NONE, SIM_FAULT_ISOLATE, 0);
    for (SimNodeId other = 0; other < net->n_nodes; other++) {
        cut(net, node, other);
        cut(net, other, node);
    }
}

void
sim_net_heal(SimNet *net)
{
    trace(net, SIM_TRACE_FAULT, SIM_NODE_NONE, SIM_NODE_NONE, SIM_FAULT_HEAL, 0);
    for (SimNodeId from = 0; from < net->n_nodes; from++) {
        for (SimNodeId to = 0; to < net->n_nodes; to++) {
            Link *link = link_at(net, from, to);
            link->cut = FALSE;
            link->lose_next = link->delay_next = link->duplicate_next = 0;
            link->loss_numerator = 0;
            link->impairments = 0;
        }
    }
    g_array_set_size(net->impairs, 0);
    g_array_set_size(net->hold_rules, 0);
    for (SimNodeId a = 0; a < net->n_nodes; a++) {
        for (SimNodeId b = a + 1; b < net->n_nodes; b++)
            resets_after_heal(net, a, b);
    }
}

void
sim_net_lose_next(SimNet *net, SimNodeId from, SimNodeId to, guint count)
{
    trace(net, SIM_TRACE_FAULT, from, to, SIM_FAULT_LOSE, count);
    link_at(net, from, to)->lose_next += count;
}

void
sim_net_delay_next(SimNet *net, SimNodeId from, SimNodeId to, guint count, gint64 extra_ns)
{
    KSIM_ASSERT(extra_ns >= 0);
    trace(net, SIM_TRACE_FAULT, from, to, SIM_FAULT_DELAY, (guint64)extra_ns);
    Link *link = link_at(net, from, to);
    link->delay_next += count;
    link->delay_extra_ns = extra_ns;
}

void
sim_net_duplicate_next(SimNet *net, SimNodeId from, SimNodeId to, guint count)
{
    trace(net, SIM_TRACE_FAULT, from, to, SIM_FAULT_DUPLICATE, count);
    link_at(net, from, to)->duplicate_next += count;
}

void
sim_net_hold_next(SimNet *net, SimNodeId from, SimNodeId to, guint32 type, guint count,
                  gint64 hold_ns)
{
    KSIM_ASSERT(hold_ns > 0);
    KSIM_ASSERT(from < net->n_nodes);
    KSIM_ASSERT(to == SIM_NODE_NONE || to < net->n_nodes);
    KSIM_ASSERT(net->hold_rules->len < SIM_NET_HOLDS_MAX);
    trace(net, SIM_TRACE_FAULT, from, to, SIM_FAULT_HOLD, (guint64)hold_ns);
    if (count == 0)
        return;
    HoldRule rule = {from, to, type, count, hold_ns};
    g_array_append_val(net->hold_rules, rule);
}

guint
sim_net_holding(const SimNet *net)
{
    return net->holding->len;
}

void
sim_net_set_loss(SimNet *net, SimNodeId from, SimNodeId to, guint64 numerator,
                 guint64 denominator)
{
    KSIM_ASSERT(denominator > 0);
    KSIM_ASSERT(numerator <= denominator);
    trace(net, SIM_TRACE_FAULT, from, to, SIM_FAULT_LOSS_RATIO, numerator);
    Link *link = link_at(net, from, to);
    link->loss_numerator = numerator;
    link->loss_denominator = denominator;
}

guint64
sim_net_messages_sent(const SimNet *net)
{
    return net->sent;
}

guint64
sim_net_messages_delivered(const SimNet *net)
{
    return net->delivered;
}

guint64
sim_net_messages_dropped(const SimNet *net)
{
    return net->dropped;
}

guint64
sim_net_retransmissions(const SimNet *net)
{
    return net->retransmissions;
}

/* ---- node lifecycle ---- */

void
sim_net_node_crashed(SimNet *net, SimNodeId node, gboolean power_loss)
{
    for (SimNodeId peer = 0; peer < net->n_nodes; peer++) {
        if (peer == node)
            continue;
        if (power_loss)
            conn_break(net, node, peer);
        else
            conn_close(net, node, peer);
    }
}

void
sim_net_node_restarted(SimNet *net, SimNodeId node)
{
    /* A restarted process has no sockets; its peers' connections are already
     * CLOSED or BROKEN, and their next send finds out. */
    (void)net;
    (void)node;
}

void
sim_net_check_invariants(const SimNet *net)
{
    for (SimNodeId a = 0; a < net->n_nodes; a++) {
        for (SimNodeId b = a + 1; b < net->n_nodes; b++) {
            const Link *conn = link_at(net, a, b);
            KSIM_ASSERT(conn->conn_state <= CONN_CLOSED);
            if (conn->conn_state == CONN_OPEN) {
                KSIM_ASSERT(!link_at(net, a, b)->cut);
                KSIM_ASSERT(!link_at(net, b, a)->cut);
            }
        }
    }
    KSIM_ASSERT(net->delivered + net->dropped <= net->sent + net->duplicated);
    KSIM_ASSERT(net->impairs->len <= SIM_NET_IMPAIRMENTS_MAX);
    guint counted = 0;
    for (SimNodeId a = 0; a < net->n_nodes; a++) {
        for (SimNodeId b = 0; b < net->n_nodes; b++)
            counted += link_at(net, a, b)->impairments;
    }
    KSIM_ASSERT(counted == net->impairs->len);
    for (guint i = 1; i < net->impairs->len; i++)
        KSIM_ASSERT(g_array_index(net->impairs, Impair, i - 1).id <
                    g_array_index(net->impairs, Impair, i).id);
    KSIM_ASSERT(net->hold_rules->len <= SIM_NET_HOLDS_MAX);
    KSIM_ASSERT(net->holding->len <= SIM_NET_HOLDS_MAX);
    for (guint i = 0; i < net->hold_rules->len; i++)
        KSIM_ASSERT(g_array_index(net->hold_rules, HoldRule, i).remaining > 0);
}

const char *
sim_net_drop_reason_name(guint reason)
{
    static const char *const names[] = {
        [SIM_DROP_PARTITION] = "partition", [SIM_DROP_BROKEN] = "broken",
        [SIM_DROP_PEER_DOWN] = "peer_down", [SIM_DROP_FAULT] = "fault",
        [SIM_DROP_CLOSED] = "closed",
    };
    return reason < G_N_ELEMENTS(names) ? names[reason] : NULL;
}

const char *
sim_net_fault_name(guint kind)
{
    static const char *const names[] = {
        [SIM_FAULT_PARTITION] = "partition", [SIM_FAULT_HEAL] = "heal",
        [SIM_FAULT_ISOLATE] = "isolate",     [SIM_FAULT_LOSE] = "lose",
        [SIM_FAULT_DELAY] = "delay",         [SIM_FAULT_DUPLICATE] = "duplicate",
        [SIM_FAULT_LOSS_RATIO] = "loss_ratio", [SIM_FAULT_DISK_SLOW] = "disk_slow",
        [SIM_FAULT_DISK_FULL] = "disk_full", [SIM_FAULT_CLOCK] = "clock",
        [SIM_FAULT_IMPAIR] = "impair",       [SIM_FAULT_IMPAIR_END] = "impair_end",
        [SIM_FAULT_HOLD] = "hold",
    };
    return kind < G_N_ELEMENTS(names) ? names[kind] : NULL;
}
