/*
 * selfcheck: one run made in two processes, their traces compared record by
 * record (see selfcheck.h).
 *
 * The child writes to an unlinked-on-return temporary file: its fingerprint,
 * its record count, then one SelfcheckDigest per record. The parent reads it
 * back after waitpid. Invariants:
 *  1. A digest list holds one entry per trace record, in trace order.
 *  2. The child never returns into the caller: it ends with _exit.
 */
#include "selfcheck.h"

#include "sim_assert.h"

#include <errno.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <xxhash.h>

GQuark
ksim_selfcheck_error_quark(void)
{
    return g_quark_from_static_string("ksim-selfcheck-error");
}

typedef struct {
    gint64 time_ns;
    guint32 kind;
    guint32 node;
    guint64 hash; /* of the whole record and its note */
} SelfcheckDigest;

typedef struct {
    guint64 fingerprint;
    guint64 count;
} SelfcheckHeader;

static void
digest_record(void *user_data, const SimTraceRecord *record, const char *note)
{
    GArray *digests = user_data;
    guint64 fields[5] = {(guint64)record->time_ns, record->kind,
                         ((guint64)record->node << 32) | record->peer, record->a, record->b};
    guint64 hash = XXH3_64bits(fields, sizeof fields);
    if (note != NULL)
        hash = XXH3_64bits_withSeed(note, strlen(note), hash);
    SelfcheckDigest digest = {record->time_ns, record->kind, record->node, hash};
    g_array_append_val(digests, digest);
}

static gboolean
write_all(int fd, const void *data, gsize length)
{
    const char *bytes = data;
    while (length > 0) {
        gssize written = write(fd, bytes, length);
        if (written < 0 && errno == EINTR)
            continue;
        if (written <= 0)
            return FALSE;
        bytes += written;
        length -= (gsize)written;
    }
    return TRUE;
}

static gboolean
read_all(int fd, void *data, gsize length)
{
    char *bytes = data;
    while (length > 0) {
        gssize got = read(fd, bytes, length);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return FALSE;
        bytes += got;
        length -= (gsize)got;
    }
    return TRUE;
}

/* The child: the run, its digest into `fd`, and _exit. */
G_GNUC_NORETURN static void
child_main(const ScenarioVariant *variant, guint64 seed, const RunnerChecks *checks, int fd)
{
    GArray *digests = g_array_new(FALSE, FALSE, sizeof(SelfcheckDigest));
    RunnerChecks mine = checks != NULL ? *checks : (RunnerChecks){0};
    mine.trace_listener = digest_record;
    mine.trace_listener_data = digests;
    mine.keep_diagrams = FALSE; /* only this process's result is reported */
    mine.diagram_to_ns = 0;
    RunnerResult *result = runner_run_checked(variant, seed, NULL, &mine);
    SelfcheckHeader header = {result->fingerprint, digests->len};
    gboolean written = write_all(fd, &header, sizeof header) &&
                       write_all(fd, digests->data, digests->len * sizeof(SelfcheckDigest));
    _exit(written ? 0 : 1);
}

static char *
describe(const GArray *digests, guint64 index)
{
    if (index >= digests->len)
        return g_strdup_printf("no record (its trace ends after %u)", digests->len);
    const SelfcheckDigest *d = &g_array_index(digests, SelfcheckDigest, index);
    return g_strdup_printf("%s on node %u at %.9f s", sim_trace_kind_name(d->kind), d->node,
                           (double)d->time_ns / 1e9);
}

/* The message naming the first record where the two digest lists part. */
static char *
mismatch_message(guint64 here, guint64 there, const GArray *mine, const GArray *theirs)
{
    guint64 n = MIN(mine->len, theirs->len);
    guint64 index = 0;
    while (index < n && memcmp(&g_array_index(mine, SelfcheckDigest, index),
                               &g_array_index(theirs, SelfcheckDigest, index),
                               sizeof(SelfcheckDigest)) == 0)
        index++;
    g_autofree char *first = describe(mine, index);
    g_autofree char *second = describe(theirs, index);
    if (index == n && mine->len == theirs->len)
        return g_strdup_printf("not deterministic: fingerprint %016" G_GINT64_MODIFIER
                               "x here, %016" G_GINT64_MODIFIER
                               "x in a second process, though every trace record agrees",
                               here, there);
    return g_strdup_printf("not deterministic: fingerprint %016" G_GINT64_MODIFIER
                           "x here, %016" G_GINT64_MODIFIER
                           "x in a second process; the first differing trace event is "
                           "#%" G_GUINT64_FORMAT " (line %" G_GUINT64_FORMAT
                           " of --trace): here %s, in the second process %s",
                           here, there, index, index + 1, first, second);
}

static gboolean
child_failed(int status, GError **error)
{
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return FALSE;
    if (WIFSIGNALED(status))
        g_set_error(error, KSIM_SELFCHECK_ERROR, KSIM_SELFCHECK_ERROR_PROCESS,
                    "the determinism check's second process died of signal %d (%s)",
                    WTERMSIG(status), g_strsignal(WTERMSIG(status)));
    else
        g_set_error(error, KSIM_SELFCHECK_ERROR, KSIM_SELFCHECK_ERROR_PROCESS,
                    "the determinism check's second process ended with status %d",
                    WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return TRUE;
}

/* Reads the child's digests back from `fd`. */
static GArray *
read_child(int fd, SelfcheckHeader *header, GError **error)
{
    if (lseek(fd, 0, SEEK_SET) != 0 || !read_all(fd, header, sizeof *header)) {
        g_set_error(error, KSIM_SELFCHECK_ERROR, KSIM_SELFCHECK_ERROR_PROCESS,
                    "the determinism check's second process left no result");
        return NULL;
    }
    GArray *digests = g_array_sized_new(FALSE, FALSE, sizeof(SelfcheckDigest),
                                        (guint)header->count);
    g_array_set_size(digests, (guint)header->count);
    if (!read_all(fd, digests->data, header->count * sizeof(SelfcheckDigest))) {
        g_array_unref(digests);
        g_set_error(error, KSIM_SELFCHECK_ERROR, KSIM_SELFCHECK_ERROR_PROCESS,
                    "the determinism check's second process left a cut result");
        return NULL;
    }
    return digests;
}

RunnerResult *
selfcheck_run(const ScenarioVariant *variant, guint64 seed, FILE *trace_out,
              const RunnerChecks *checks, const RunnerChecks *child_checks, char **mismatch)
{
    KSIM_ASSERT(checks == NULL || checks->trace_listener == NULL);
    *mismatch = NULL;
    g_autoptr(GError) error = NULL;
    g_autofree char *path = NULL;
    int fd = g_file_open_tmp("ksim-selfcheck-XXXXXX", &path, &error);
    pid_t pid = -1;
    if (fd >= 0) {
        g_unlink(path);
        /* Buffered output would otherwise be written twice, once by the child. */
        fflush(stdout);
        fflush(stderr);
        if (trace_out != NULL)
            fflush(trace_out);
        pid = fork();
        if (pid < 0) {
            int saved = errno;
            g_set_error(&error, KSIM_SELFCHECK_ERROR, KSIM_SELFCHECK_ERROR_PROCESS,
                        "cannot start the determinism check's second process: %s",
                        g_strerror(saved));
        }
    }
    if (pid == 0)
        child_main(variant, seed, child_checks != NULL ? child_checks : checks, fd);
    g_autoptr(GArray) mine = g_array_new(FALSE, FALSE, sizeof(SelfcheckDigest));
    RunnerChecks here = checks != NULL ? *checks : (RunnerChecks){0};
    here.trace_listener = digest_record;
    here.trace_listener_data = mine;
    RunnerResult *result = runner_run_checked(variant, seed, trace_out, &here);
    SelfcheckHeader header = {0};
    g_autoptr(GArray) theirs = NULL;
    if (pid > 0) {
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
        if (!child_failed(status, &error))
            theirs = read_child(fd, &header, &error);
    }
    if (fd >= 0)
        close(fd);
    if (theirs == NULL)
        *mismatch = g_strdup_printf("not checked: %s", error->message);
    else if (header.fingerprint != result->fingerprint || mine->len != theirs->len)
        *mismatch = mismatch_message(result->fingerprint, header.fingerprint, mine, theirs);
    return result;
}
