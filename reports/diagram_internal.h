/*
 * diagram_internal: what diagram.c (choosing what a diagram shows: lanes,
 * slices, messages, bands, labels) hands to diagram_svg.c (laying it out
 * and writing the SVG). Nothing outside diagram*.c includes it.
 */
#ifndef DIAGRAM_INTERNAL_H
#define DIAGRAM_INTERNAL_H

#include <glib.h>

#include "diagram.h"

/* A span of time shown; slices are in time order and disjoint. */
typedef struct {
    gint64 from_ns;
    gint64 to_ns;
} DiagramSlice;

/* What kind of traffic a message is, for its colour. */
typedef enum {
    DIAGRAM_TRAFFIC_PRODUCE = 0,
    DIAGRAM_TRAFFIC_FETCH,
    DIAGRAM_TRAFFIC_CONTROL, /* LeaderAndIsr, UpdateMetadata, StopReplica, ControlledShutdown */
    DIAGRAM_TRAFFIC_ZK,      /* the coordination service's */
    DIAGRAM_TRAFFIC_OTHER,   /* metadata, groups, transactions, ... */
    DIAGRAM_TRAFFIC_COUNT,
} DiagramTraffic;

/* A message drawn. */
typedef struct {
    gint64 send_ns;
    gint64 end_ns;  /* its delivery or drop */
    guint from;     /* lane indices */
    guint to;
    guint64 type;
    guint64 bytes;
    gint32 drop_reason; /* SimDropReason, or -1: delivered */
    const char *note;   /* the receiver's note at delivery (a coordination write), or NULL */
    guint slice;
    DiagramTraffic traffic;
    gboolean step;      /* a step of the explanation received or sent it */
    gboolean focus;     /* it answered an acknowledgement of a partition of interest */
    gboolean kept;      /* drawn (not thinned away) */
} DiagramMessage;

typedef enum {
    DIAGRAM_BAND_DOWN = 0,   /* crashed */
    DIAGRAM_BAND_POWER_LOSS, /* lost power */
    DIAGRAM_BAND_PAUSED,
    DIAGRAM_BAND_CUT,        /* some of its links cut by a partition */
    DIAGRAM_BAND_ISOLATED,
    DIAGRAM_BAND_COUNT,
} DiagramBandKind;

/* A fault band on one lane. */
typedef struct {
    guint lane;
    gint64 from_ns;
    gint64 to_ns;
    DiagramBandKind kind;
    char *text; /* owned: "crashed", "cut off from broker-2, zk" */
} DiagramBand;

/* A label at a moment on a lane (or across every lane: lane G_MAXUINT). */
typedef struct {
    gint64 time_ns;
    guint lane;
    guint step; /* its number in the explanation, or 0 */
    char *text;  /* owned: what the label says */
    char *title; /* owned: the full sentence (hover), or NULL */
    gboolean note; /* a model's note rather than a cluster event */
} DiagramLabel;

/* Everything a diagram shows. */
typedef struct {
    const DiagramTrace *trace;
    const char *title;
    const char *id;
    GArray *lanes;    /* guint32 node ids, left to right */
    GArray *slices;   /* DiagramSlice */
    GArray *messages; /* DiagramMessage, in send order */
    GArray *bands;    /* DiagramBand */
    GArray *labels;   /* DiagramLabel */
    GPtrArray *notes; /* strings: what the caption says (left out, not kept) */
} Diagram;

/* The diagram's SVG text (transfer full). */
char *diagram_svg_render(const Diagram *diagram);

/* The short name of a message type on its arrow ("Fetch resp", "ZK req"):
 * written into `out` (cleared first). */
void diagram_message_short_name(GString *out, guint64 type);

#endif
