/*
 * ksim: the command-line front. It parses the sub-command and hands the rest of
 * the arguments to it; all the work is in the sim, models and reports
 * libraries, so tests link the same code users run.
 */
#include "commands.h"
#include "ksim_version.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} Command;

static const Command COMMANDS[] = {
    {"run", cmd_run, "run a scenario file and write its report"},
    {"sweep", cmd_sweep, "run a scenario over many seeds and list the failing ones"},
    {"replay", cmd_replay, "rerun a run's capsule.json and check its fingerprints"},
    {"shrink", cmd_shrink, "search for the smallest scenario that fails like a failing run"},
    {"bisect", cmd_bisect, "find a failing run's point of no return, or a key's threshold"},
    {"diagram", cmd_diagram, "draw the space-time diagram (SVG) of a window of a run"},
    {"check", cmd_check, "validate a scenario and list the runs it would make, without running"},
    {"partition", cmd_partition, "print the partition Kafka's default partitioner picks for keys"},
    {"assign", cmd_assign, "print a consumer group assignment"},
    {"bench", cmd_bench, "measure the engine, the log and the cluster"},
};

static void
print_usage(FILE *out)
{
    fprintf(out, "Usage: ksim COMMAND [OPTION...]\n\n"
                 "A deterministic simulator of a Kafka-style cluster under faults.\n\n"
                 "Commands:\n");
    for (guint i = 0; i < G_N_ELEMENTS(COMMANDS); i++)
        fprintf(out, "  %-10s %s\n", COMMANDS[i].name, COMMANDS[i].summary);
    fprintf(out, "\nOptions:\n"
                 "  -h, --help     show this help\n"
                 "  --version      show the version\n\n"
                 "Run 'ksim COMMAND --help' for a command's options.\n");
}

int
main(int argc, char **argv)
{
    if (argc < 2) {
        print_usage(stderr);
        return 2;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        print_usage(stdout);
        return 0;
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
        printf("ksim %s (commit %s)\n", KSIM_VERSION, KSIM_GIT_COMMIT);
        return 0;
    }
    for (guint i = 0; i < G_N_ELEMENTS(COMMANDS); i++) {
        if (strcmp(name, COMMANDS[i].name) == 0)
            return COMMANDS[i].run(argc - 1, argv + 1);
    }
    if (name[0] == '-')
        fprintf(stderr, "ksim: unknown option '%s'\n", name);
    else
        fprintf(stderr, "ksim: unknown command '%s'\n", name);
    fprintf(stderr, "Run 'ksim --help' for the list of commands.\n");
    return 2;
}
