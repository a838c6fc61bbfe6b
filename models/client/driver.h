/*
 * driver: a simple produce client for cluster tests and the cluster benchmark
 * (the real producer, with its accumulator, retries and idempotence, is
 * producer.h). It sends whole batches to the partition's leader as its
 * metadata says, with a chosen acks, and records every record in the history:
 * INVOKE when sent, then OK with its offset, FAIL when the broker said it was
 * not written, INFO when the outcome is unknown (timeout, disconnect, acks=0).
 * It never retries: a failed batch's records stay failed or unknown.
 */
#ifndef DRIVER_H
#define DRIVER_H

#include <glib.h>

#include "history.h"
#include "sim_world.h"

typedef struct Driver Driver;

/* The defaults are a producer's (acks, request.timeout.ms,
 * max.in.flight.requests.per.connection) and a workload's record size, from
 * the key registry: kconfig_bind_driver_defaults. */
typedef struct {
    gint16 acks; /* 0, 1 or -1 */
    gint64 request_timeout_ms;
    guint max_in_flight; /* per partition */
    guint32 record_size_bytes;
} DriverConfig;

/* A driver node named `name`; `process` identifies it in the history. */
Driver *driver_new(SimWorld *world, const char *name, guint32 process, const GArray *bootstrap,
                   const DriverConfig *config, History *history);
void driver_free(Driver *driver);

/* Queues `records` records for topic-partition, sent in batches of
 * `records_per_batch` (the last one may be smaller) as the leader is known and
 * the in-flight limit allows. */
void driver_produce(Driver *driver, const char *topic, gint32 partition, guint64 records,
                    guint records_per_batch);

/* Records answered: acknowledged, failed; and still queued or in flight. */
guint64 driver_acked(const Driver *driver);
guint64 driver_failed(const Driver *driver);
guint64 driver_pending(const Driver *driver);

#endif
