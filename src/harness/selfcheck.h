/*
 * selfcheck: the determinism self-check of `ksim run --check-determinism`.
 *
 * A run is made twice at once, in two processes: a child forked for it and
 * the calling process, each hashing every trace record (its time, kind,
 * nodes, a, b and note) into a digest list. Same variant, seed and binary
 * must give the same fingerprint; when they do not, the two lists are
 * compared and the first record where they part is named: its index (the
 * line of --trace's JSON Lines, counted from 0), its virtual time and its
 * kind in each run. The models have no threads, and the child starts from
 * the parent's state before the run, so any difference comes from something
 * a run must not depend on: a wall clock, an address, an unseeded draw, a
 * hash table's order, memory left from a previous run.
 *
 * The digest costs 24 bytes per trace record in each process (a chaos run,
 * 650,000 records: 16 MB).
 */
#ifndef KSIM_SELFCHECK_H
#define KSIM_SELFCHECK_H

#include <glib.h>
#include <stdio.h>

#include "runner.h"

#define KSIM_SELFCHECK_ERROR (ksim_selfcheck_error_quark())
GQuark ksim_selfcheck_error_quark(void);
typedef enum {
    KSIM_SELFCHECK_ERROR_PROCESS, /* the second process could not be made or failed */
} KsimSelfcheckErrorCode;

/* Runs `variant` with `seed` in a child process and in this one, and returns
 * this process's result (the one whose trace goes to `trace_out`, which may
 * be NULL). `checks` are this run's (may be NULL; its trace listener must be
 * unset: the check uses it); `child_checks` the child's (NULL: `checks`) —
 * only tests give the child other checks, to inject a difference. Sets
 * `*mismatch` to NULL when both runs made the same trace, else to a message
 * naming the first differing record, or saying why the second run could not
 * be compared (it could not start, died or failed a check). (transfer full) */
RunnerResult *selfcheck_run(const ScenarioVariant *variant, guint64 seed, FILE *trace_out,
                            const RunnerChecks *checks, const RunnerChecks *child_checks,
                            char **mismatch);

#endif
