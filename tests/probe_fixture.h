/*
 * probe_fixture: a raw protocol client for the coordinators' tests
 * (test_group_coord.c, test_txn_coord.c). The probe is a node of its own
 * that sends single requests to a broker, as a stale or misbehaving client
 * would, and keeps the last answer's error; the test says how to read the
 * error of the answers it expects (a read callback), and fails on any other.
 *
 * Its functions are static inline so that each test binary compiles only the
 * ones it uses without warnings; include it after cmocka.h.
 */
#ifndef PROBE_FIXTURE_H
#define PROBE_FIXTURE_H

#include "kafka_error.h"
#include "sim_net.h"
#include "sim_world.h"

#include <string.h>

typedef struct Probe Probe;

/* Reads an answer of a type the test expects into probe->error (and
 * partition_error); returns FALSE for any other type. */
typedef gboolean (*ProbeReadCb)(Probe *probe, const SimMsg *answer);

struct Probe {
    SimNodeId node;
    guint responses;
    KafkaError error;           /* the last answer's error */
    KafkaError partition_error; /* where the answer has partitions: the first one's error */
    ProbeReadCb read_cb;
};

static inline void
probe_message(SimWorld *world, void *ctx, SimNodeId from, SimMsg *msg)
{
    Probe *probe = ctx;
    (void)world;
    (void)from;
    probe->responses++;
    if (!probe->read_cb(probe, msg))
        fail_msg("unexpected message type %u", msg->type);
    sim_msg_free(msg);
}

static inline void
probe_disconnect(SimWorld *world, void *ctx, SimNodeId peer, SimDisconnectReason reason)
{
    (void)world;
    (void)ctx;
    (void)peer;
    (void)reason;
}

static inline void
probe_node_event(SimWorld *world, void *ctx)
{
    (void)world;
    (void)ctx;
}

static const SimNodeOps probe_ops = {probe_message, probe_disconnect, probe_node_event,
                                     probe_node_event};

/* A probe on a new node "probe" of `world`. */
static inline void
probe_init(Probe *probe, SimWorld *world, ProbeReadCb read_cb)
{
    memset(probe, 0, sizeof *probe);
    probe->read_cb = read_cb;
    probe->node = sim_node_add(world, "probe", &probe_ops, probe);
}

/* The correlation id of the probe's next request. */
static inline gint32
probe_correlation_next(const Probe *probe)
{
    return (gint32)probe->responses + 1;
}

/* Sends `request` to node `to` and runs the world in steps of `step_ns`
 * until the answer is in (at most 2 s); returns its error. */
static inline KafkaError
probe_request(Probe *probe, SimWorld *world, SimNodeId to, SimMsg *request, gint64 step_ns)
{
    guint before = probe->responses;
    sim_net_send(sim_world_net(world), probe->node, to, request);
    gint64 end = sim_now_ns(world) + 2 * SIM_NS_PER_S;
    while (probe->responses == before && sim_now_ns(world) < end)
        sim_world_run_until(world, sim_now_ns(world) + step_ns);
    assert_int_equal(probe->responses, before + 1);
    return probe->error;
}

#endif
