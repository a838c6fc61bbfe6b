/*
 * fetch_handler: the fetching side of incremental fetch sessions (KIP-227),
 * after Apache Kafka 3.9's org.apache.kafka.clients.FetchSessionHandler. One
 * handler per leader a fetcher fetches from remembers the partitions of its
 * session and what it last asked for each, so that a fetch in the session
 * names only the partitions added or whose fetch state changed (fetch
 * offset, log start, leader epoch, max bytes) and those it forgets; the
 * leader's session cache (models/broker/fetch_session.h) remembers the rest.
 *
 * Its state machine is Kafka's FetchMetadata (session id, epoch):
 *   (INVALID, 0) full fetch, no session --response with session S--> (S, 1)
 *   (S, n) incremental --response--> (S, n+1); --session closed--> (INVALID, 0)
 *   any --FETCH_SESSION_ID_NOT_FOUND--> (INVALID, 0)
 *   (S, n) --INVALID_FETCH_SESSION_EPOCH, timeout, disconnect--> (S, 0): a
 *          full fetch that closes S and asks for a new session
 * A full fetch sends every partition; the handler's partitions become them.
 */
#ifndef FETCH_HANDLER_H
#define FETCH_HANDLER_H

#include "kafka_proto.h"

#include <glib.h>

typedef struct FetchHandler FetchHandler;

/* A handler with no session: its first fetch is a full one. (transfer full) */
FetchHandler *fetch_handler_new(void);
/* Accepts NULL. */
void fetch_handler_free(FetchHandler *handler);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FetchHandler, fetch_handler_free)

/* Fills `request`'s session id and epoch, partitions and forgotten
 * partitions for fetching `next` (KFetchPartition, what to fetch now, in the
 * fetcher's order; each partition once): all of them in a full fetch; in an
 * incremental one, first those new to the session (in `next`'s order), then
 * those whose fetch state changed (in the session's order), and the
 * session's partitions absent from `next` as forgotten. Kafka's
 * FetchSessionHandler.Builder.build. */
void fetch_handler_build(FetchHandler *handler, const GArray *next, KFetchRequest *request);

/* TRUE when the next request will be a full fetch (no session, or one to
 * start over). */
gboolean fetch_handler_next_is_full(const FetchHandler *handler);

/* fetch_handler_build for a fetcher that knows what changed since its last
 * build: `changed` (KFetchPartition, in the fetcher's order, each partition
 * once) holds the current fetch state of every partition that joined the
 * fetcher or whose state may have changed, and `gone` (KTopicPartition)
 * those that may have left it; every other partition of the session is
 * still fetched, in the state last built. The request is the one
 * fetch_handler_build would make from the whole list, at a cost in the
 * changes rather than in the session's size: an idle partition costs a
 * fetch nothing. Only when fetch_handler_next_is_full is FALSE. */
void fetch_handler_build_changes(FetchHandler *handler, const GArray *changed, const GArray *gone,
                                 KFetchRequest *request);

/* What the session last asked for `tp`, or NULL when it is not in the
 * session. (transfer none) */
const KFetchPartition *fetch_handler_lookup(const FetchHandler *handler,
                                            const KTopicPartition *tp);

/* The leader's answer to the last request built: TRUE when its partitions
 * are to be processed (Kafka's handleResponse), FALSE on a session error,
 * after which the next fetch is a full one. */
gboolean fetch_handler_handle_response(FetchHandler *handler, const KFetchResponse *response);

/* The request failed (timeout, disconnect): the next fetch is a full one that
 * closes the session and asks for a new one (Kafka's handleError). */
void fetch_handler_handle_error(FetchHandler *handler);

/* The session id and epoch the next request will carry. */
gint32 fetch_handler_session_id(const FetchHandler *handler);
gint32 fetch_handler_epoch(const FetchHandler *handler);
/* The number of partitions in the session as the handler knows it. */
guint fetch_handler_size(const FetchHandler *handler);

/* Asserts the handler's invariants (fetch_handler.c). */
void fetch_handler_check_invariants(const FetchHandler *handler);

#endif
