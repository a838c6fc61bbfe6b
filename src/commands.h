/*
 * The sub-commands of the `ksim` binary. Each takes the arguments after the
 * sub-command name (argv[0] is the sub-command) and returns the exit status:
 * 0 success, 1 a failed expectation or check, 2 bad input.
 */
#ifndef KSIM_COMMANDS_H
#define KSIM_COMMANDS_H

int cmd_bench(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_partition(int argc, char **argv);
int cmd_assign(int argc, char **argv);

#endif
