/*
 * workload: arrivals, keys, sizes and unique values in front of a producer
 * (see workload.h).
 *
 * States of the send loop:
 *
 *   scheduled ──tick_fired: send──▶ scheduled (async: next arrival)
 *      │                     └────▶ waiting (sync) ──send_done_cb──▶ scheduled
 *      └──tick_fired: producer blocked──▶ stalled ──unblocked_cb──▶ scheduled
 *   any ──producer crash (its timers die)──▶ down ──started_cb──▶ scheduled
 *   any ──stop time or record cap──▶ done
 *
 * Invariants:
 *  1. At most one tick is armed; none while waiting, stalled or done.
 *  2. sent = ok + failed + unknown + (completions outstanding or lost in a
 *     crash); the counter of values equals sent.
 *  3. next_ns never decreases; constant and burst arrivals are arrival_at(index).
 */
#include "workload.h"

#include "sim_assert.h"

#include <math.h>
#include <string.h>

/* Bounds the rejection loop of the Zipf sampler (acceptance is above 0.5). */
#define ZIPF_TRIES_MAX 1000
/* index_at corrects a floating-point estimate by at most a few steps. */
#define ROUNDING_STEPS_MAX 8

GQuark
ksim_workload_error_quark(void)
{
    return g_quark_from_static_string("ksim-workload-error-quark");
}

/* Hörmann and Derflinger's rejection-inversion for Zipf (as Apache Commons
 * Math's ZipfRejectionInversionSampler). */
typedef struct {
    double n;
    double s;
    double h_integral_x1;
    double h_integral_n;
    double threshold;
} ZipfSampler;

/* The transactional loop (see workload.h). */
typedef enum {
    TXN_OFF = 0,   /* not transactional */
    TXN_NEED_INIT, /* the next tick calls initTransactions (at start, after a restart) */
    TXN_INIT,      /* initTransactions in progress: no sends */
    TXN_READY,    /* the next send begins a transaction */
    TXN_OPEN,     /* a transaction is open */
    TXN_ENDING,   /* commit or abort in progress: no sends */
    TXN_DEAD,     /* fenced: the workload has ended */
} WorkloadTxnState;

struct Workload {
    SimWorld *world;
    Producer *producer;
    char *name;
    WorkloadConfig config;
    SimRng *rng;
    ZipfSampler zipf;
    guint64 index;     /* constant and bursts: the next arrival's index */
    double poisson_ns; /* Poisson: the next arrival, unrounded */
    gint64 next_ns;    /* the next arrival */
    SimTimerId timer;
    gboolean armed;
    gboolean waiting;   /* sync: the last send is not complete */
    guint64 waiting_op; /* 0 while producer_send has not returned it */
    gboolean in_send;   /* inside producer_send */
    gboolean stalled;   /* the producer's send() blocks */
    gboolean done;
    guint64 counter;
    guint64 sent, ok, failed, unknown;
    /* Transactions (config.txn_records > 0). */
    WorkloadTxnState txn_state;
    guint32 txn_sent; /* sends in the open transaction */
};

/* ---- Zipf ---- */

static double
helper1(double x)
{
    return fabs(x) > 1e-8 ? log1p(x) / x : 1.0 - x * (0.5 - x * (1.0 / 3.0 - x * 0.25));
}

static double
helper2(double x)
{
    return fabs(x) > 1e-8 ? expm1(x) / x
                          : 1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + x * 0.25));
}

static double
zipf_h_integral(const ZipfSampler *z, double x)
{
    double log_x = log(x);
    return helper2((1.0 - z->s) * log_x) * log_x;
}

static double
zipf_h(const ZipfSampler *z, double x)
{
    return exp(-z->s * log(x));
}

static double
zipf_h_integral_inverse(const ZipfSampler *z, double x)
{
    double t = MAX(x * (1.0 - z->s), -1.0);
    return exp(helper1(t) * x);
}

static void
zipf_init(ZipfSampler *z, guint64 n, double s)
{
    KSIM_ASSERT(n >= 1);
    KSIM_ASSERT(s >= 0.0);
    z->n = (double)n;
    z->s = s;
    z->h_integral_x1 = zipf_h_integral(z, 1.5) - 1.0;
    z->h_integral_n = zipf_h_integral(z, z->n + 0.5);
    z->threshold = 2.0 - zipf_h_integral_inverse(z, zipf_h_integral(z, 2.5) - zipf_h(z, 2.0));
}

static guint64
zipf_sample(const ZipfSampler *z, SimRng *rng)
{
    for (guint tries = 0; tries < ZIPF_TRIES_MAX; tries++) {
        double u = z->h_integral_n + sim_rng_uniform(rng) * (z->h_integral_x1 - z->h_integral_n);
        double x = zipf_h_integral_inverse(z, u);
        double k = CLAMP(floor(x + 0.5), 1.0, z->n);
        if (k - x <= z->threshold || u >= zipf_h_integral(z, k + 0.5) - zipf_h(z, k))
            return (guint64)k;
    }
    KSIM_ASSERT(!"the Zipf sampler did not accept within its bound");
    return 1;
}

guint64
workload_zipf_sample(SimRng *rng, guint64 n, double s)
{
    ZipfSampler z;
    zipf_init(&z, n, s);
    return zipf_sample(&z, rng);
}

/* ---- configuration ---- */

static gboolean
config_error(GError **error, const char *field, const char *message)
{
    g_set_error(error, KSIM_WORKLOAD_ERROR, KSIM_WORKLOAD_ERROR_CONFIG, "%s: %s", field, message);
    return FALSE;
}

gboolean
workload_config_validate(const WorkloadConfig *config, GError **error)
{
    KSIM_ASSERT(config != NULL);
    if (config->topic[0] == '\0')
        return config_error(error, "topic", "a topic is required");
    if (!(config->rate_per_s >= 0.0) || config->rate_per_s > 1e9)
        return config_error(error, "workload.rate", "must be between 0 and 1e9 records/s");
    if (config->keys != WORKLOAD_KEYS_NONE && config->key_count == 0)
        return config_error(error, "workload.keys", "the key count must be at least 1");
    if (config->keys == WORKLOAD_KEYS_ZIPF && !(config->zipf_s >= 0.0))
        return config_error(error, "workload.keys", "the Zipf exponent must be at least 0");
    if (config->arrival == WORKLOAD_ARRIVAL_BURSTS &&
        (config->burst_on_ns <= 0 || config->burst_off_ns < 0))
        return config_error(error, "workload.burst", "ON must be positive and OFF not negative");
    if (config->partition < -1)
        return config_error(error, "workload.partition", "must be -1 or a partition number");
    if (config->start_ns < 0 || config->stop_ns < config->start_ns)
        return config_error(error, "workload.stop", "must not be before workload.start");
    return TRUE;
}

/* ---- arrivals ---- */

/* Constant and burst arrivals are computed from their index, never summed, so
 * that no rounding accumulates: arrival i is at i / rate of "active" time
 * after start, where bursts count only the ON windows as active. */
static gint64
arrival_at(const Workload *w, guint64 index)
{
    const WorkloadConfig *c = &w->config;
    double active = (double)index * 1e9 / c->rate_per_s;
    if (c->arrival != WORKLOAD_ARRIVAL_BURSTS)
        return c->start_ns + llround(active);
    double on = (double)c->burst_on_ns;
    double cycles = floor(active / on);
    double offset = cycles * (double)(c->burst_on_ns + c->burst_off_ns) + (active - cycles * on);
    return c->start_ns + llround(offset);
}

/* The first arrival index at or after `t_ns`. */
static guint64
index_at(const Workload *w, gint64 t_ns)
{
    const WorkloadConfig *c = &w->config;
    double since = (double)MAX(t_ns - c->start_ns, 0);
    double active = since;
    if (c->arrival == WORKLOAD_ARRIVAL_BURSTS) {
        double cycle = (double)(c->burst_on_ns + c->burst_off_ns);
        active = floor(since / cycle) * (double)c->burst_on_ns +
                 MIN(fmod(since, cycle), (double)c->burst_on_ns);
    }
    guint64 index = (guint64)ceil(active * c->rate_per_s / 1e9);
    /* Rounding can be off by one either way. */
    guint steps = 0;
    while (arrival_at(w, index) < t_ns) {
        KSIM_ASSERT(steps++ < ROUNDING_STEPS_MAX);
        index++;
    }
    while (index > 0 && arrival_at(w, index - 1) >= t_ns) {
        KSIM_ASSERT(steps++ < ROUNDING_STEPS_MAX);
        index--;
    }
    return index;
}

static void
advance_arrival(Workload *w)
{
    if (w->config.arrival == WORKLOAD_ARRIVAL_POISSON) {
        w->poisson_ns += sim_rng_exponential(w->rng, 1e9 / w->config.rate_per_s);
        w->next_ns = MAX(w->next_ns, (gint64)w->poisson_ns);
        return;
    }
    w->next_ns = arrival_at(w, ++w->index);
}

/* After a stall or a restart: arrivals in the past are skipped. */
static void
catch_up(Workload *w)
{
    gint64 now = sim_now_ns(w->world);
    if (w->next_ns >= now)
        return;
    if (w->config.arrival == WORKLOAD_ARRIVAL_POISSON) {
        w->poisson_ns = (double)now;
        w->next_ns = now;
        return;
    }
    w->index = index_at(w, now);
    w->next_ns = arrival_at(w, w->index);
}

static void tick_fired(SimWorld *world, void *ctx, void *arg);
static void finish(Workload *w);

static void
arm(Workload *w)
{
    KSIM_ASSERT(!w->waiting);
    KSIM_ASSERT(!w->stalled);
    if (w->done || !producer_running(w->producer))
        return;
    if (w->txn_state == TXN_INIT || w->txn_state == TXN_ENDING || w->txn_state == TXN_DEAD)
        return; /* txn_step_done_cb arms again */
    sim_timer_cancel(w->world, w->timer);
    gint64 now = sim_now_ns(w->world);
    gint64 at = w->next_ns;
    if (at >= w->config.stop_ns) {
        finish(w);
        w->armed = FALSE;
        return;
    }
    w->timer = sim_timer_set(w->world, producer_node(w->producer), MAX(at - now, 0), tick_fired, w);
    w->armed = TRUE;
}

/* ---- sending ---- */

static guint64
draw_key(Workload *w)
{
    switch (w->config.keys) {
    case WORKLOAD_KEYS_UNIFORM:
        return 1 + (guint64)sim_rng_range(w->rng, 0, (gint64)w->config.key_count);
    case WORKLOAD_KEYS_ZIPF:
        return zipf_sample(&w->zipf, w->rng);
    case WORKLOAD_KEYS_NONE:
    default:
        return 0;
    }
}

static void
send_done_cb(Producer *producer, const ProducerResult *result, void *user_data)
{
    Workload *w = user_data;
    (void)producer;
    if (result->outcome == HISTORY_OK)
        w->ok++;
    else if (result->outcome == HISTORY_FAIL)
        w->failed++;
    else
        w->unknown++;
    if (!w->waiting || (w->waiting_op != 0 && result->op != w->waiting_op))
        return;
    w->waiting = FALSE;
    if (w->in_send)
        return; /* completed inside producer_send: tick_fired arms the next */
    catch_up(w);
    arm(w);
}

/* ---- transactions ---- */

static void txn_end(Workload *w, gboolean abort);

/* After initTransactions, a commit or an abort: the loop goes on. */
static void
txn_resume(Workload *w)
{
    if (w->waiting || w->stalled || w->in_send)
        return;
    catch_up(w);
    arm(w);
}

static void
txn_fatal(Workload *w)
{
    w->txn_state = TXN_DEAD;
    w->done = TRUE;
    w->armed = FALSE;
    sim_timer_cancel(w->world, w->timer);
}

static void
txn_init_done_cb(Producer *producer, KafkaError error, void *user_data)
{
    Workload *w = user_data;
    (void)producer;
    if (error != KAFKA_ERROR_NONE) {
        txn_fatal(w);
        return;
    }
    w->txn_state = TXN_READY;
    txn_resume(w);
}

static void
txn_init(Workload *w)
{
    w->txn_state = TXN_INIT;
    w->txn_sent = 0;
    producer_init_transactions(w->producer, txn_init_done_cb, w);
}

static void
txn_abort_done_cb(Producer *producer, KafkaError error, void *user_data)
{
    Workload *w = user_data;
    (void)producer;
    if (error != KAFKA_ERROR_NONE) {
        txn_fatal(w);
        return;
    }
    w->txn_state = TXN_READY;
    if (!w->done)
        txn_resume(w);
}

static void
txn_commit_done_cb(Producer *producer, KafkaError error, void *user_data)
{
    Workload *w = user_data;
    (void)producer;
    if (error == KAFKA_ERROR_NONE) {
        w->txn_state = TXN_READY;
        if (!w->done)
            txn_resume(w);
        return;
    }
    if (error == KAFKA_ERROR_PRODUCER_FENCED || error == KAFKA_ERROR_INVALID_PRODUCER_EPOCH ||
        error == KAFKA_ERROR_INVALID_TXN_STATE) {
        txn_fatal(w);
        return;
    }
    /* An abortable error (a send failed): abort, then go on. */
    txn_end(w, TRUE);
}

static void
txn_end(Workload *w, gboolean abort)
{
    w->txn_state = TXN_ENDING;
    w->txn_sent = 0;
    if (abort)
        producer_abort_transaction(w->producer, txn_abort_done_cb, w);
    else
        producer_commit_transaction(w->producer, txn_commit_done_cb, w);
}

/* Begins a transaction if none is open; FALSE when the producer refused. */
static gboolean
txn_before_send(Workload *w)
{
    if (w->txn_state != TXN_READY)
        return TRUE;
    if (producer_begin_transaction(w->producer) != KAFKA_ERROR_NONE) {
        txn_fatal(w);
        return FALSE;
    }
    w->txn_state = TXN_OPEN;
    w->txn_sent = 0;
    return TRUE;
}

static void
txn_after_send(Workload *w)
{
    if (w->txn_state != TXN_OPEN || ++w->txn_sent < w->config.txn_records)
        return;
    gboolean abort = w->config.txn_abort_per_million > 0 &&
                     sim_rng_range(w->rng, 0, 1000000) < (gint64)w->config.txn_abort_per_million;
    txn_end(w, abort);
}

/* No more sends: the open transaction, if any, commits. */
static void
finish(Workload *w)
{
    w->done = TRUE;
    if (w->txn_state == TXN_OPEN && w->txn_sent > 0)
        txn_end(w, FALSE);
}

static void
send_one(Workload *w)
{
    guint64 key = draw_key(w);
    gint64 size = sim_dist_sample(&w->config.record_size, w->rng);
    guint32 size_bytes = (guint32)CLAMP(size, 0, (gint64)G_MAXUINT32);
    KSIM_ASSERT(w->counter + 1 < (G_GUINT64_CONSTANT(1) << HISTORY_VALUE_COUNTER_BITS));
    guint64 value = HISTORY_VALUE(producer_process(w->producer), ++w->counter);
    w->sent++;
    /* A synchronous send may complete inside the call (a record too large
     * fails at once): it waits only while its callback has not run. */
    w->waiting = w->config.send_sync;
    w->waiting_op = 0;
    w->in_send = TRUE;
    guint64 op = producer_send(w->producer, w->config.topic, w->config.partition, key, value,
                               size_bytes, send_done_cb, w);
    w->in_send = FALSE;
    if (w->waiting)
        w->waiting_op = op;
}

static void
tick_fired(SimWorld *world, void *ctx, void *arg)
{
    Workload *w = arg;
    (void)world;
    KSIM_ASSERT(ctx == w->producer);
    w->armed = FALSE;
    if (w->config.records_max > 0 && w->sent >= w->config.records_max) {
        finish(w);
        return;
    }
    if (producer_blocked(w->producer)) {
        w->stalled = TRUE;
        return;
    }
    if (w->txn_state == TXN_NEED_INIT) {
        txn_init(w); /* txn_init_done_cb arms again */
        return;
    }
    if (!txn_before_send(w))
        return;
    send_one(w);
    advance_arrival(w);
    txn_after_send(w);
    if (w->config.records_max > 0 && w->sent >= w->config.records_max)
        finish(w);
    else if (!w->waiting)
        arm(w);
}

static void
started_cb(Producer *producer, void *user_data)
{
    Workload *w = user_data;
    (void)producer;
    /* The crash took the pending completion and the timer with it. */
    w->waiting = FALSE;
    w->stalled = FALSE;
    w->armed = FALSE;
    if (w->txn_state == TXN_DEAD)
        return;
    if (w->txn_state != TXN_OFF) {
        /* A new incarnation: initTransactions again at the next arrival,
         * as the application does at start (it fences the crashed one's
         * epoch). A transaction cut short by the crash is not continued. */
        w->txn_state = TXN_NEED_INIT;
        w->txn_sent = 0;
    }
    catch_up(w);
    arm(w);
}

static void
unblocked_cb(Producer *producer, void *user_data)
{
    Workload *w = user_data;
    (void)producer;
    if (!w->stalled)
        return;
    w->stalled = FALSE;
    catch_up(w);
    arm(w);
}

/* ---- the object ---- */

Workload *
workload_new(SimWorld *world, const char *name, Producer *producer, const WorkloadConfig *config)
{
    KSIM_ASSERT(producer != NULL);
    KSIM_ASSERT(workload_config_validate(config, NULL));
    Workload *w = g_new0(Workload, 1);
    w->world = world;
    w->producer = producer;
    w->name = g_strdup(name);
    w->config = *config;
    g_autofree char *stream = g_strdup_printf("workload/%s", name);
    w->rng = sim_world_rng(world, stream);
    if (config->keys == WORKLOAD_KEYS_ZIPF)
        zipf_init(&w->zipf, config->key_count, config->zipf_s);
    w->done = config->rate_per_s <= 0.0;
    w->poisson_ns = (double)config->start_ns;
    w->next_ns = config->start_ns;
    if (!w->done)
        catch_up(w);
    ProducerListener listener = {started_cb, unblocked_cb, w};
    producer_set_listener(producer, &listener);
    if (config->txn_records > 0) {
        KSIM_ASSERT(producer_transactional(producer));
        w->txn_state = TXN_NEED_INIT; /* at the first arrival, not before */
    }
    arm(w);
    return w;
}

void
workload_free(Workload *workload)
{
    if (workload == NULL)
        return;
    sim_timer_cancel(workload->world, workload->timer);
    ProducerListener none = {NULL, NULL, NULL};
    producer_set_listener(workload->producer, &none);
    g_free(workload->name);
    g_free(workload);
}

guint64
workload_sent(const Workload *workload)
{
    return workload->sent;
}

guint64
workload_ok(const Workload *workload)
{
    return workload->ok;
}

void
workload_check_invariants(const Workload *workload)
{
    KSIM_ASSERT(workload->counter == workload->sent);
    KSIM_ASSERT(workload->ok + workload->failed + workload->unknown <= workload->sent);
    if (workload->config.txn_records == 0)
        KSIM_ASSERT(workload->txn_state == TXN_OFF);
    if (workload->txn_state == TXN_OPEN)
        KSIM_ASSERT(workload->txn_sent < workload->config.txn_records);
    if (workload->armed) {
        KSIM_ASSERT(workload->txn_state != TXN_INIT && workload->txn_state != TXN_ENDING &&
                    workload->txn_state != TXN_DEAD);
        KSIM_ASSERT(!workload->waiting);
        KSIM_ASSERT(!workload->stalled);
        KSIM_ASSERT(!workload->done);
    }
    if (workload->config.records_max > 0)
        KSIM_ASSERT(workload->sent <= workload->config.records_max);
    if (!workload->done && workload->config.arrival != WORKLOAD_ARRIVAL_POISSON)
        KSIM_ASSERT(workload->next_ns == arrival_at(workload, workload->index));
}
