/*
 * The sub-commands of the `ksim` binary. Each takes the arguments after the
 * sub-command name (argv[0] is the sub-command) and returns the exit status:
 * 0 success, 1 a failed expectation or check, 2 bad input.
 */
#ifndef KSIM_COMMANDS_H
#define KSIM_COMMANDS_H

#include <glib.h>

int cmd_bench(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_bisect(int argc, char **argv);
int cmd_partition(int argc, char **argv);
int cmd_assign(int argc, char **argv);
int cmd_check(int argc, char **argv);

/* The body of `ksim check` for one file, shared with `ksim run --check`:
 * prints the runs the scenario would make, or the error prefixed with
 * `command`; returns 0 or 2. */
int cmd_check_scenario(const char *path, char **sets, gboolean force, const char *command);

#endif
