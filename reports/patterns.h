/*
 * patterns: anomalies grouped by their causal pattern, so a report says
 * "14,258 lost records, in 3 patterns" and explains each pattern once.
 *
 * Two records follow the same pattern when their explanations (explain.h)
 * tell the same steps of the mechanism, with the brokers named by their
 * role (A for the broker that acknowledged the record, B for the next the
 * chain names, and so on) and the particulars put aside: the
 * acknowledgement (its acks level; whether the HW had passed the record;
 * whether a leader of a newer epoch had been elected before it), each
 * election (with or without the record, unclean), each truncation or
 * retention deletion that removed it, the partition going offline, and what
 * happened to A (crash, power loss, restart, pause). Faults, sessions and
 * the other nodes' restarts are in the explanation but not in the pattern.
 * So "acked by A with acks=1, above the HW; B elected without it; A
 * truncated it" is one pattern whichever partition, offset, time or broker
 * it happened to; a record acknowledged by a leader already deposed is
 * another.
 *
 * Every lost write is grouped (checker_result_lost_writes), other anomalies
 * by their examples. Patterns are ordered by record count, largest first,
 * then by their first record's send; the grouping table is only looked up,
 * never iterated, so the order is the run's.
 */
#ifndef PATTERNS_H
#define PATTERNS_H

#include <glib.h>

#include "checker.h"
#include "explain.h"

/* Examples kept per pattern. */
#define PATTERN_EXAMPLES 2

typedef struct {
    char *signature;    /* its steps with brokers by role (patterns_signature): its name */
    guint64 count;      /* records (examples, for anomalies other than lost_write) */
    GArray *examples;   /* CheckerExample (summary NULL), the first PATTERN_EXAMPLES */
    GArray *partitions; /* guint64 topic << 32 | partition, distinct, ascending */
    gint64 first_ns;    /* the earliest and latest send of its records (invocation) */
    gint64 last_ns;
    GPtrArray *chain;   /* the first example's explanation (strings) */
    GArray *events;     /* its events: history_events indices, G_MAXUINT for none */
} Pattern;

/* The patterns of every lost write of `result` (Pattern, transfer full; a
 * GPtrArray that frees them). */
GPtrArray *patterns_lost_writes(const Explainer *explainer, const CheckerResult *result);

/* The patterns of `examples` (CheckerExample of one anomaly of `result`);
 * a pattern's span is of its examples' sends (-1 when none). (transfer full) */
GPtrArray *patterns_of_examples(const Explainer *explainer, const CheckerResult *result,
                                const GArray *examples);

/* The signature of `example` whose explanation told `chain_events`
 * (explain_example_events), as the pattern's name: "acknowledged by A
 * (acks=1) before the HW reached it; B was elected without it; A truncated
 * it". Patterns are grouped per anomaly, so the name does not repeat it.
 * (transfer full) */
char *patterns_signature(const Explainer *explainer, const History *history,
                         const CheckerExample *example, const GArray *chain_events);

#endif
