/*
 * cmd_sweep.h: what `ksim sweep`'s files share: its options, as
 * cmd_sweep_options.c parses and checks them.
 */
#ifndef KSIM_CMD_SWEEP_H
#define KSIM_CMD_SWEEP_H

#include <glib.h>

typedef struct {
    char *seeds_text;
    char *shard_text;
    gint jobs;
    char *out_dir;
    char **sets;
    gboolean merge;
    gint paranoid_sample; /* percent of the seeds checked after every event */
    gboolean paranoid;    /* all of them */
    char *recheck_text;   /* percent of the seeds run twice */
    guint recheck;
    gboolean resume;
    gboolean until_marks;
    char *budget_text;
    guint64 budget_seeds; /* 0: no limit */
    gint64 budget_us;     /* 0: no limit */
    gboolean force;       /* run seeds even over the size estimate's limits */
    char **rest;
    guint64 first, last;
    guint shard_index, shard_count;
} SweepOptions;

/* Parses and checks the command line into `o` (zeroed by the caller); FALSE
 * after printing what is wrong. */
gboolean sweep_options_parse(int *argc, char ***argv, SweepOptions *o);
void sweep_options_clear(SweepOptions *o);
/* A seed as the scenario's `seed` key takes it (see cmd_sweep_options.c). */
gboolean sweep_parse_seed_number(const char *text, guint64 *out);

#endif /* KSIM_CMD_SWEEP_H */
