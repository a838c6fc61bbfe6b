/*
 * workload: the application in front of a producer — when records are sent,
 * with which keys and sizes, and what values, so the checker can follow each.
 *
 *  - Arrivals: constant rate, Poisson (exponential gaps), or bursts (the
 *    constant rate during ON windows, nothing during OFF windows), between
 *    start and stop, optionally capped at a number of records.
 *  - Keys: none (key 0), uniform over 1..K, or Zipf(K, s) over 1..K with key 1
 *    the most frequent (Hörmann's rejection-inversion sampler, exact and
 *    without a table).
 *  - Sizes: any SimDist (constant, uniform, lognormal, ...), in bytes.
 *  - Values: (process << 40) | n with n counting from 1 over the whole run, so
 *    every value is unique across producers and restarts. The counter belongs
 *    to the workload (the test harness), not to the producer's memory.
 *  - Send mode: async (Kafka's send with a callback: records go out at the
 *    arrival times) or sync (send().get(): the next record goes out at the
 *    later of its arrival time and the previous record's completion).
 *
 * The workload runs on timers of the producer's node, so it stops when the
 * producer crashes and pauses with it; when the producer restarts it resumes
 * from the current time (arrivals that fell in the downtime are skipped, as an
 * application that was down would skip them). While the producer's send()
 * blocks, the workload stalls after that send and resumes when it unblocks.
 * All draws come from the world's stream "workload/<name>".
 *
 * Transactions (txn_records > 0), as a Kafka application loops: each
 * incarnation of the producer first calls initTransactions (which fences
 * any older instance of its transactional.id and aborts what it left
 * open); then beginTransaction before a transaction's first send, and
 * commitTransaction (or, by draw, abortTransaction) after its last; the
 * next transaction begins at the next arrival after that completes.
 * Arrivals during initTransactions or a commit are skipped. A commit that
 * fails with an abortable error is followed by abortTransaction; a fatal
 * error (fenced: a newer instance exists, or the coordinator timed the
 * transaction out) ends the workload, as an application closes a fenced
 * producer. At the stop time or record cap an open transaction is
 * committed.
 */
#ifndef WORKLOAD_H
#define WORKLOAD_H

#include <glib.h>

#include "kafka_proto.h"
#include "producer.h"
#include "sim_rng.h"
#include "sim_world.h"

typedef struct Workload Workload;

typedef enum {
    WORKLOAD_ARRIVAL_CONSTANT = 0,
    WORKLOAD_ARRIVAL_POISSON,
    WORKLOAD_ARRIVAL_BURSTS,
} WorkloadArrival;

typedef enum {
    WORKLOAD_KEYS_NONE = 0,
    WORKLOAD_KEYS_UNIFORM,
    WORKLOAD_KEYS_ZIPF,
} WorkloadKeys;

/* Field names follow the scenario's workload.* keys, whose defaults (in
 * comments) are the key registry's (src/harness/kconfig.c):
 * kconfig_bind_workload_defaults fills the struct. */
typedef struct {
    char topic[KAFKA_TOPIC_NAME_MAX + 1]; /* topic (required) */
    double rate_per_s;                    /* workload.rate = 100 */
    WorkloadArrival arrival;              /* workload.arrival = constant */
    gint64 burst_on_ns;                   /* workload.burst = 100ms,900ms */
    gint64 burst_off_ns;
    WorkloadKeys keys;   /* workload.keys = none */
    guint64 key_count;   /* K of uniform:K and zipf:K,S */
    double zipf_s;       /* S of zipf:K,S */
    SimDist record_size; /* workload.record.size = const:100 (bytes) */
    gint32 partition;    /* workload.partition = -1 (the partitioner) */
    gboolean send_sync;  /* workload.send = async */
    gint64 start_ns;     /* workload.start = 0 */
    gint64 stop_ns;      /* workload.stop = never (G_MAXINT64) */
    guint64 records_max; /* 0: no cap */
    /* Transactions (the producer must be transactional): every
     * txn_records sends form one transaction, begun before its first send
     * and, after its last, aborted with probability txn_abort_per_million
     * / 10^6, else committed. 0: no transactions. */
    guint32 txn_records;           /* transaction.records = 0 */
    guint32 txn_abort_per_million; /* transaction.abort.ratio = 0 */
} WorkloadConfig;

#define KSIM_WORKLOAD_ERROR (ksim_workload_error_quark())
GQuark ksim_workload_error_quark(void);
typedef enum {
    KSIM_WORKLOAD_ERROR_CONFIG,
} KsimWorkloadError;

/* FALSE with a message naming the field for a rate below 0, a key count of 0
 * with keys, a Zipf exponent below 0, an empty ON window, stop before start. */
gboolean workload_config_validate(const WorkloadConfig *config, GError **error);

/* A workload named `name` driving `producer` (which must outlive it and have
 * no other listener). `config` must be valid. The first send is at
 * config->start_ns (or now, if that has passed). */
Workload *workload_new(SimWorld *world, const char *name, Producer *producer,
                       const WorkloadConfig *config);
/* Cancels its timer and leaves the producer without a listener. Records still
 * in the producer call back into the workload, so free it only once the world
 * no longer runs (or after the producer is freed). */
void workload_free(Workload *workload);

/* Counters: sends, and those the history recorded as completed OK. */
guint64 workload_sent(const Workload *workload);
guint64 workload_ok(const Workload *workload);

/* One draw of a Zipf(n, s) rank in 1..n (s >= 0; s == 0 is uniform). */
guint64 workload_zipf_sample(SimRng *rng, guint64 n, double s);

void workload_check_invariants(const Workload *workload);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(Workload, workload_free)

#endif
