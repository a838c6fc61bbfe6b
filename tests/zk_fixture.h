/*
 * zk_fixture: the harness the coordination tests share (test_zk.c for the
 * server and sessions, test_zk_client.c for the client library): a real
 * SimWorld with one server node and three client nodes whose SimNodeOps
 * forward to their ZkClient, every invariant checked after every event, and
 * helpers that submit a request and run the world until its result arrives.
 *
 * Its functions are static inline so that each test binary compiles only the
 * ones it uses without warnings; include it after cmocka.h.
 */
#ifndef ZK_FIXTURE_H
#define ZK_FIXTURE_H

#include "zk_client.h"
#include "zk_server.h"

#include "sim_net.h"

#include <stdio.h>
#include <string.h>

#define MEMBERS 3
#define TIMEOUT_NS (6 * SIM_NS_PER_S)
#define KAFKA_TIMEOUT_NS (18 * SIM_NS_PER_S)
#define WAIT_NS (60 * SIM_NS_PER_S)

/* ---- fixture: one server, three client nodes ---- */

typedef struct Harness Harness;

typedef struct {
    Harness *h;
    guint index;
    SimNodeId id;
    ZkClient *client;
    gint64 timeout_ns;
    GPtrArray *events; /* "established new", "watch NodeDeleted /a", ... */
    gint64 last_event_ns;
    gboolean renew;     /* start a new session on expiry, as Kafka's broker */
    GPtrArray *tickets; /* requests awaiting their result (chaos test) */
} Member;

struct Harness {
    SimWorld *world;
    ZkServer *server;
    Member members[MEMBERS];
};

static inline void member_event(Member *m, const char *format, ...) G_GNUC_PRINTF(2, 3);

static inline void
member_event(Member *m, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    g_ptr_array_add(m->events, g_strdup_vprintf(format, args));
    va_end(args);
    m->last_event_ns = sim_now_ns(m->h->world);
}

static inline void
on_established(void *owner, gboolean is_new)
{
    member_event(owner, "established %s", is_new ? "new" : "resumed");
}

static inline void
on_expired(void *owner)
{
    Member *m = owner;
    member_event(m, "expired");
    if (m->renew)
        zk_client_new_session(m->client);
}

static inline void
on_disconnected(void *owner)
{
    member_event(owner, "disconnected");
}

static inline void
on_watch(void *owner, const char *path, ZkEventType type)
{
    member_event(owner, "watch %s %s", zk_event_name(type), path);
}

static const ZkClientCallbacks member_callbacks = {on_established, on_expired, on_disconnected,
                                                   on_watch};

static inline void
member_message(SimWorld *world, void *ctx, SimNodeId from, SimMsg *msg)
{
    Member *m = ctx;
    (void)world;
    if (m->client == NULL || !zk_client_handle_message(m->client, from, msg))
        sim_msg_free(msg);
}

static inline void
member_disconnect(SimWorld *world, void *ctx, SimNodeId peer, SimDisconnectReason reason)
{
    Member *m = ctx;
    (void)world;
    (void)reason;
    if (m->client != NULL)
        zk_client_handle_disconnect(m->client, peer);
}

static inline void
member_crash(SimWorld *world, void *ctx)
{
    Member *m = ctx;
    (void)world;
    zk_client_free(m->client);
    m->client = NULL;
    g_ptr_array_set_size(m->tickets, 0); /* their results will never come */
}

static inline void
member_restart(SimWorld *world, void *ctx)
{
    Member *m = ctx;
    m->client = zk_client_new(world, m->id, zk_server_node(m->h->server), m->timeout_ns,
                              &member_callbacks, m);
}

static const SimNodeOps member_ops = {member_message, member_disconnect, member_crash,
                                      member_restart};

static inline void
check_after_event(SimWorld *world, void *user_data)
{
    Harness *h = user_data;
    zk_server_check_invariants(h->server);
    for (guint i = 0; i < MEMBERS; i++) {
        if (h->members[i].client != NULL)
            zk_client_check_invariants(h->members[i].client);
    }
    sim_net_check_invariants(sim_world_net(world));
}

static inline Harness *
harness_new_with(guint64 seed, const ZkServerConfig *cfg, gint64 timeout_ns)
{
    Harness *h = g_new0(Harness, 1);
    h->world = sim_world_new(seed);
    sim_net_set_default_link(sim_world_net(h->world), SIM_DIST_CONST(500 * SIM_NS_PER_US), 0);
    h->server = zk_server_new(h->world, "zk", cfg);
    for (guint i = 0; i < MEMBERS; i++) {
        Member *m = &h->members[i];
        m->h = h;
        m->index = i;
        m->timeout_ns = timeout_ns;
        m->events = g_ptr_array_new_with_free_func(g_free);
        m->tickets = g_ptr_array_new_with_free_func(g_free);
        g_autofree char *name = g_strdup_printf("broker-%u", i);
        m->id = sim_node_add(h->world, name, &member_ops, m);
        member_restart(h->world, m);
    }
    sim_world_set_after_event(h->world, check_after_event, h);
    return h;
}

static inline Harness *
harness_new(guint64 seed)
{
    return harness_new_with(seed, NULL, TIMEOUT_NS);
}

static inline void
harness_free(Harness *h)
{
    for (guint i = 0; i < MEMBERS; i++) {
        zk_client_free(h->members[i].client);
        g_ptr_array_free(h->members[i].events, TRUE);
        g_ptr_array_free(h->members[i].tickets, TRUE);
    }
    sim_world_free(h->world);
    zk_server_free(h->server);
    g_free(h);
}

static inline ZkClient *
client_of(Harness *h, guint i)
{
    assert_non_null(h->members[i].client);
    return h->members[i].client;
}

static inline void
run_for(Harness *h, gint64 duration_ns)
{
    sim_world_run_until(h->world, sim_now_ns(h->world) + duration_ns);
}

static inline gboolean
has_event(const Member *m, const char *event)
{
    for (guint i = 0; i < m->events->len; i++) {
        if (strcmp(g_ptr_array_index(m->events, i), event) == 0)
            return TRUE;
    }
    return FALSE;
}

static inline guint
count_events(const Member *m, const char *event)
{
    guint n = 0;
    for (guint i = 0; i < m->events->len; i++)
        n += strcmp(g_ptr_array_index(m->events, i), event) == 0;
    return n;
}

static inline void
wait_established(Harness *h)
{
    run_for(h, SIM_NS_PER_S);
    for (guint i = 0; i < MEMBERS; i++)
        assert_int_equal(zk_client_state(client_of(h, i)), ZK_CLIENT_CONNECTED);
}

/* ---- request outcomes ---- */

typedef struct {
    gboolean done;
    ZkError error;
    char *path;
    GByteArray *data;
    ZkStat stat;
    gint32 version;
    char **children;
    guint n_ops;
    ZkError op_errors[8];
    gint32 op_versions[8];
} Outcome;

static inline void
outcome_reset(Outcome *o)
{
    g_free(o->path);
    if (o->data != NULL)
        g_byte_array_free(o->data, TRUE);
    g_strfreev(o->children);
    memset(o, 0, sizeof *o);
}

static inline void
outcome_cb(void *owner, const ZkResult *result, void *arg)
{
    Outcome *o = arg;
    (void)owner;
    assert_false(o->done);
    o->done = TRUE;
    o->error = result->error;
    o->path = g_strdup(result->path);
    if (result->data != NULL) {
        o->data = g_byte_array_new();
        g_byte_array_append(o->data, result->data, (guint)result->len);
    }
    o->stat = result->stat;
    o->version = result->version;
    o->children = g_strdupv((char **)result->children);
    o->n_ops = result->n_ops;
    for (guint i = 0; i < result->n_ops && i < 8; i++) {
        o->op_errors[i] = result->ops[i].error;
        o->op_versions[i] = result->ops[i].stat.version;
    }
}

static inline void
wait_done(Harness *h, Outcome *o)
{
    gint64 limit_ns = sim_now_ns(h->world) + WAIT_NS;
    while (!o->done && sim_now_ns(h->world) < limit_ns) {
        if (!sim_world_step(h->world))
            break;
    }
    assert_true(o->done);
}

/* Submits `call` and runs the world until its result arrives in `o`. */
#define RUN(h, o, call)                                                                            \
    do {                                                                                           \
        outcome_reset(o);                                                                          \
        call;                                                                                      \
        wait_done(h, o);                                                                           \
    } while (0)

static inline const guint8 *
text(const char *s)
{
    return (const guint8 *)s;
}

static inline ZkError
create_text(Harness *h, guint member, const char *path, const char *data, guint32 flags)
{
    Outcome o = {0};
    RUN(h, &o,
        zk_client_create(client_of(h, member), path, text(data), strlen(data), flags, outcome_cb,
                         &o));
    ZkError error = o.error;
    outcome_reset(&o);
    return error;
}

static inline ZkError
set_text(Harness *h, guint member, const char *path, const char *data, gint32 version)
{
    Outcome o = {0};
    RUN(h, &o,
        zk_client_set(client_of(h, member), path, text(data), strlen(data), version, outcome_cb,
                      &o));
    ZkError error = o.error;
    outcome_reset(&o);
    return error;
}

/* The server's copy of a znode's data as a string, or NULL. (transfer full) */
static inline char *
server_text(Harness *h, const char *path, ZkStat *stat)
{
    g_autoptr(GBytes) data = zk_server_znode_get(h->server, path, stat);
    if (data == NULL)
        return NULL;
    gsize len = 0;
    const char *bytes = g_bytes_get_data(data, &len);
    return g_strndup(bytes, len);
}

#endif
