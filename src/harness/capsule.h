/*
 * capsule: the replay capsule, DIR/capsule.json, that every `ksim run` writes
 * beside its report and `ksim replay` reads back.
 *
 * A capsule holds everything a run's result depends on apart from the
 * binary: the scenario's exact text (not only its hash), the seed, every
 * --set assignment in order, and per run its label, its varied settings and
 * its trace fingerprint; and it names the binary (ksim version and git
 * commit) that made those fingerprints. The format, written with json-glib:
 *
 *   {
 *     "format": "ksim-capsule",
 *     "format_version": 1,
 *     "ksim_version": "0.1.0",
 *     "git_commit": "0fb8ffd06e34",
 *     "command": "ksim run 'scenarios/chaos.ini' --seed 125 ...",
 *     "scenario": {"name": "chaos", "path": "scenarios/chaos.ini",
 *                  "sha256": "1e4d...", "text": "[scenario]\nname = chaos\n..."},
 *     "seed": 125,
 *     "sets": ["ksim.truncation.mode=hw"],
 *     "runs": [{"label": "default", "settings": [{"key": "acks", "value": "1"}],
 *               "fingerprint": "ba421e96f1a4f2a2",
 *               "failed": ["no-lost-write: lost_write == 0, but lost_write = 1"]}]
 *   }
 *
 * "path" and "command" are for the reader; "failed" lists the run's failed
 * expectations (informational: replay checks fingerprints). capsule_load
 * refuses, with a message naming the file and the member, anything else:
 * not JSON, another format or version, a member missing or of the wrong
 * type, a text whose SHA-256 is not "sha256", a fingerprint that is not 16
 * hexadecimal digits.
 */
#ifndef KSIM_CAPSULE_H
#define KSIM_CAPSULE_H

#include <glib.h>

#define CAPSULE_FORMAT "ksim-capsule"
#define CAPSULE_FORMAT_VERSION 1
/* The largest capsule file capsule_load reads: a scenario's size limit
 * (4 MiB) with its JSON escaping and the runs' lines. */
#define CAPSULE_FILE_BYTES_MAX (16u << 20)

#define KSIM_CAPSULE_ERROR (ksim_capsule_error_quark())
GQuark ksim_capsule_error_quark(void);
typedef enum {
    KSIM_CAPSULE_ERROR_IO,     /* the file cannot be read */
    KSIM_CAPSULE_ERROR_FORMAT, /* not JSON, or not a capsule of this format */
} KsimCapsuleErrorCode;

typedef struct {
    char *label;
    GPtrArray *settings; /* char*: "KEY=VALUE", the run's varied settings in [vary] order */
    char *fingerprint;   /* 16 hexadecimal digits */
    GPtrArray *failed;   /* char*: the run's failed expectations */
} CapsuleRun;

typedef struct {
    char *ksim_version;
    char *git_commit;
    char *command;         /* the command that made it, or NULL */
    char *scenario_name;
    char *scenario_path;   /* NULL for a scenario that came from no file */
    char *scenario_sha256; /* 64 hexadecimal digits */
    char *scenario_text;   /* the file's bytes, exactly */
    guint64 seed;
    GPtrArray *sets; /* char*: the --set assignments, in order */
    GPtrArray *runs; /* CapsuleRun*, in run order */
} Capsule;

/* An empty capsule naming this binary; the caller fills the rest.
 * (transfer full) */
Capsule *capsule_new(const char *ksim_version, const char *git_commit);
void capsule_free(Capsule *capsule);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Capsule, capsule_free)

/* Appends a run with empty `settings` and `failed`, which the caller fills
 * with strings the capsule then owns. (transfer none: the run belongs to the
 * capsule) */
CapsuleRun *capsule_add_run(Capsule *capsule, const char *label, const char *fingerprint);

/* The capsule as JSON text, ending in a newline. (transfer full) */
char *capsule_to_json(const Capsule *capsule);
/* Reads the capsule of `json` (`length` bytes); `display_name` stands for
 * the file in messages. NULL with a message on anything malformed.
 * (transfer full) */
Capsule *capsule_from_json(const char *json, gsize length, const char *display_name,
                           GError **error);
/* capsule_from_json on the file at `path`, read up to its size limit.
 * (transfer full) */
Capsule *capsule_load(const char *path, GError **error);

/* Asserts the capsule's fields are whole: every string set, every
 * fingerprint 16 hexadecimal digits. */
void capsule_check_invariants(const Capsule *capsule);

#endif
