/*
 * diagram: space-time diagrams of a run, as SVG text, in the manner of
 * ShiViz and Maelstrom's messages.svg: one vertical lane per node (clients,
 * brokers, the coordination node "zk"), virtual time downward, each message
 * an arrow from its send to its delivery (or its drop, dashed, ending in a
 * cross) named by its type, faults as shaded bands on the lanes they hit
 * (down after a crash or power loss, paused, cut off by a partition,
 * isolated), and labels at the cluster events with what matters there
 * (offsets, HW, LEO, leader epoch, ISR).
 *
 * The messages come from a DiagramTrace (diagram_trace.h), the labels from
 * the run's history. Time is cut into slices: the pattern's steps, each
 * with a few milliseconds around it, or the one window asked for. Within a
 * slice, every moment something happens gets its own row, the rows spaced
 * by the logarithm of the time between them (so a burst of messages 0.1 ms
 * apart stays readable beside a pause of seconds); the axis on the left
 * gives each row's time in ms, and a break between slices says how much
 * time it skips. A slice keeps every message a step received or sent, at
 * most DIAGRAM_SLICE_CONTROL_MAX of control traffic and at most
 * DIAGRAM_SLICE_EXCHANGES_MAX exchanges of the data path (a Produce or
 * Fetch request with its response; those answering an acknowledgement of
 * the pattern's partitions first), each thinned to every k-th; the diagram
 * says how many of each type it left out.
 *
 * The text is a standalone SVG document (XML declaration first), valid XML,
 * with every text escaped; element ids start with the caller's `id`, so
 * several diagrams can sit inline in one HTML page. Lanes, messages, bands
 * and labels are groups with classes ("lane", "message", "band", "label")
 * and data-* attributes naming what they show, each with a <title> the
 * browser shows on hover. Same inputs, same text.
 */
#ifndef DIAGRAM_H
#define DIAGRAM_H

#include <glib.h>

#include "diagram_trace.h"
#include "history.h"
#include "patterns.h"

/* Per slice of a pattern, beside the messages a step received or sent: at
 * most this many messages of control traffic (controller, ZooKeeper,
 * metadata, groups, ...), and this many Produce or Fetch exchanges (a
 * request with its response). */
#define DIAGRAM_SLICE_CONTROL_MAX 80
#define DIAGRAM_SLICE_EXCHANGES_MAX 8
/* The same for the one slice of a window (diagram_window_svg). */
#define DIAGRAM_WINDOW_CONTROL_MAX 200
#define DIAGRAM_WINDOW_EXCHANGES_MAX 40
/* Around an election, a truncation, an ISR change, a controller's
 * decision: this long before it (the ZooKeeper exchange that led to it),
 * and after. An acknowledgement and the client's send and answer get 1 ms
 * on either side; a crash or a fault 1 ms before and 3 ms after. */
#define DIAGRAM_STEP_BEFORE_NS G_GINT64_CONSTANT(8000000) /* 8 ms */
#define DIAGRAM_STEP_AFTER_NS G_GINT64_CONSTANT(2000000)  /* 2 ms */
/* Slices of a pattern at most (the steps' first). */
#define DIAGRAM_SLICES_MAX 8

/* The diagram of window [from_ns, to_ns] of the run `trace` kept, with the
 * lanes of `lanes` (node ids, in order; NULL or empty: every node that
 * sends or receives a message drawn in the window or is hit by a fault in
 * it: clients first, then brokers, then the others), labelled with the cluster events of `history`
 * (may be NULL) on those lanes: every event but acknowledgements, and the
 * acknowledgements answered by the Produce responses drawn. `title` heads
 * it. (transfer full) */
char *diagram_window_svg(const DiagramTrace *trace, const History *history, gint64 from_ns,
                         gint64 to_ns, const GArray *lanes, const char *title, const char *id);

/* The diagram of `pattern`'s first example (patterns.h) in the run of
 * `history`: a slice around each step of its explanation that has a time
 * (the send and its answer, the acknowledgement, crashes, elections,
 * truncations, ...; at most DIAGRAM_SLICES_MAX), the lanes of the example's
 * client, the brokers the steps name, the pattern's partitions' replicas,
 * the controller and the coordination node; each step labelled with its
 * number in the explanation. NULL when no step has a time. (transfer full) */
char *diagram_pattern_svg(const DiagramTrace *trace, const History *history,
                          const Pattern *pattern, const char *title, const char *id);

#endif
