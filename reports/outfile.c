/*
 * outfile: atomic report files, atomic report directories, safe names and a
 * CSV writer (see outfile.h).
 *
 * OutFile invariants:
 *  1. Between outfile_open and outfile_commit/outfile_abort, `stream` is open
 *     on `fd`, the file `tmp_path`, which is "path.tmp.PID" in the directory
 *     of `path`.
 *  2. `path` is only ever replaced by rename(), after the temporary file has
 *     been flushed, fsynced and closed without error.
 *  3. When outfile_commit fails or outfile_abort runs, `tmp_path` is unlinked.
 *  4. `write_errno` is the errno of the first failed write(2) on `fd`, so a
 *     full disk is reported as ENOSPC, not as the stream's bare error flag.
 *
 * Lifecycle:
 *   (none) --outfile_open--> WRITING --outfile_commit--> path replaced, freed
 *                                    --outfile_abort---> temp removed, freed
 *
 * OutDir invariants:
 *  1. Between outfile_dir_open and outfile_dir_commit/outfile_dir_abort,
 *     `tmp_path` is a directory ".BASE.tmp-PID-XXXXXX" beside `target`
 *     (same parent), PID being this process.
 *  2. `target` is replaced only by outfile_dir_commit, in one rename (an
 *     exchange where the file system has one), so it holds the complete old
 *     report or the complete new one.
 *  3. `steps` counts the files committed inside, then the commit's steps;
 *     until the commit, steps <= opened (a file is committed once at most).
 * outfile_dir_check_invariants checks 1 (but the atomicity of 2, which is
 * the file system's) and 3.
 *
 * Lifecycle:
 *   (none) --outfile_dir_open--> WRITING --outfile_dir_commit--> target replaced, freed
 *                                        --outfile_dir_abort---> temp removed, freed
 *
 * OutFileCsv invariants:
 *  1. 0 <= fields_in_row <= columns; fields_in_row is 0 between rows.
 *  2. Every row written, the header included, has exactly `columns` fields.
 */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "sim_assert.h"

/* Directories nested deeper than this inside a report are not removed: a
 * report is flat, so anything deeper is not ours. */
#define REMOVE_DEPTH_MAX 4

typedef enum {
    FAULT_NONE = 0,
    FAULT_KILL,   /* raise(SIGKILL) at step `fault_at` */
    FAULT_ENOSPC, /* the `fault_at`-th file's writes fail with ENOSPC */
} FaultKind;

struct OutFile {
    char *path;
    char *tmp_path;
    char *shown;          /* the path messages name: the report's, not the temporary's */
    int fd;               /* the temporary file, under `stream` */
    FILE *stream;         /* a cookie stream over `fd` (outfile_cookie_write) */
    int write_errno;      /* the first write(2) failure, 0 if none */
    gboolean fail_enospc; /* test hook: every write fails with ENOSPC */
    OutDir *dir;          /* the directory it is written in, or NULL */
};

struct OutDir {
    char *target;   /* the report directory, as given */
    char *tmp_path; /* where its files are written until the commit */
    guint opened;   /* files opened inside */
    guint steps;    /* files committed, then commit steps (invariant 3) */
    FaultKind fault;
    guint fault_at;
};

struct OutFileCsv {
    FILE *stream;
    guint columns;
    guint fields_in_row;
    guint64 rows;
    GString *field; /* scratch buffer for quoting */
};

GQuark
reports_error_quark(void)
{
    /* g_quark_from_static_string is idempotent, so no static cache is needed. */
    return g_quark_from_static_string("ksim-reports-error-quark");
}

static gboolean
set_io_error(GError **error, const char *path, const char *action, int saved_errno)
{
    g_set_error(error, KSIM_REPORTS_ERROR, KSIM_REPORTS_ERROR_IO, "cannot %s \"%s\": %s", action,
                path, g_strerror(saved_errno));
    return FALSE;
}

/* ---- the test hook (KSIM_TEST_OUTFILE_FAULT, see outfile.h) ---- */

/* Reads the hook into `dir`; FALSE with `error` set when it is malformed, so
 * a mistyped test fails instead of silently testing nothing. */
static gboolean
fault_parse(OutDir *dir, GError **error)
{
    const char *text = g_getenv(OUTFILE_FAULT_ENV);
    if (text == NULL || text[0] == '\0')
        return TRUE;
    const char *number = NULL;
    if (g_str_has_prefix(text, "kill:")) {
        dir->fault = FAULT_KILL;
        number = text + strlen("kill:");
    } else if (g_str_has_prefix(text, "enospc:")) {
        dir->fault = FAULT_ENOSPC;
        number = text + strlen("enospc:");
    }
    guint64 at = 0;
    if (number == NULL || !g_ascii_string_to_unsigned(number, 10, 1, G_MAXUINT, &at, NULL)) {
        g_set_error(error, KSIM_REPORTS_ERROR, KSIM_REPORTS_ERROR_IO,
                    "%s: '%s' is neither kill:N nor enospc:N (N >= 1)", OUTFILE_FAULT_ENV, text);
        return FALSE;
    }
    dir->fault_at = (guint)at;
    return TRUE;
}

/* One step of `dir` done: a file committed or a stage of the commit. */
static void
dir_step(OutDir *dir)
{
    dir->steps++;
    if (dir->fault == FAULT_KILL && dir->steps == dir->fault_at)
        raise(SIGKILL);
}

/* ---- OutFile ---- */

/* The stream's writes go straight to write(2), so their errno is kept.
 * On a failure it returns -1, which glibc's cookie streams take as an error
 * (setting the stream's error flag; a short count would be taken as EOF). */
static ssize_t
outfile_cookie_write(void *cookie, const char *data, size_t len)
{
    OutFile *file = cookie;
    size_t done = 0;
    while (done < len) {
        ssize_t written =
            file->fail_enospc ? (errno = ENOSPC, -1) : write(file->fd, data + done, len - done);
        if (written < 0 && errno == EINTR)
            continue;
        if (written <= 0) {
            if (file->write_errno == 0)
                file->write_errno = written < 0 ? errno : EIO;
            return -1;
        }
        done += (size_t)written;
    }
    return (ssize_t)len;
}

/* The descriptor is closed by outfile_close_stream, after its fsync. */
static int
outfile_cookie_close(void *cookie)
{
    (void)cookie;
    return 0;
}

static void
outfile_release(OutFile *file)
{
    g_free(file->path);
    g_free(file->tmp_path);
    g_free(file->shown);
    g_free(file);
}

/* Opens `path` through a temporary file; messages name `shown`. */
static OutFile *
outfile_open_shown(const char *path, const char *shown, GError **error)
{
    KSIM_ASSERT(path != NULL);
    KSIM_ASSERT(path[0] != '\0');
    OutFile *file = g_new0(OutFile, 1);
    file->path = g_strdup(path);
    file->shown = g_strdup(shown);
    file->tmp_path = g_strdup_printf("%s.tmp.%d", path, (int)getpid());
    file->fd = open(file->tmp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (file->fd < 0) {
        set_io_error(error, shown, "create", errno);
        outfile_release(file);
        return NULL;
    }
    cookie_io_functions_t io = {NULL, outfile_cookie_write, NULL, outfile_cookie_close};
    file->stream = fopencookie(file, "w", io);
    if (file->stream == NULL) {
        set_io_error(error, shown, "open a stream on", errno);
        close(file->fd);
        unlink(file->tmp_path);
        outfile_release(file);
        return NULL;
    }
    return file;
}

OutFile *
outfile_open(const char *path, GError **error)
{
    return outfile_open_shown(path, path, error);
}

FILE *
outfile_stream(OutFile *file)
{
    KSIM_ASSERT(file != NULL);
    KSIM_ASSERT(file->stream != NULL);
    return file->stream;
}

const char *
outfile_path(const OutFile *file)
{
    KSIM_ASSERT(file != NULL);
    return file->path;
}

/* Flushes, fsyncs and closes the temporary file; the first failure wins. */
static gboolean
outfile_close_stream(OutFile *file, GError **error)
{
    FILE *stream = g_steal_pointer(&file->stream);
    KSIM_ASSERT(stream != NULL);
    int failed_errno = 0;
    if (fflush(stream) != 0 || ferror(stream))
        failed_errno = file->write_errno != 0 ? file->write_errno : EIO;
    else if (fsync(file->fd) != 0)
        failed_errno = errno;
    fclose(stream);
    if (close(file->fd) != 0 && failed_errno == 0)
        failed_errno = errno;
    if (failed_errno == 0)
        return TRUE;
    return set_io_error(error, file->shown, "write", failed_errno);
}

/* Makes a rename durable. Some file systems refuse to fsync a directory; the
 * rename has already happened by then, so a failure here can only lose the
 * new file to a power cut, never expose half of it, and is not reported. */
static void
sync_directory(const char *directory)
{
    int fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return;
    (void)fsync(fd);
    close(fd);
}

static void
sync_parent(const char *path)
{
    g_autofree char *directory = g_path_get_dirname(path);
    sync_directory(directory);
}

gboolean
outfile_commit(OutFile *file, GError **error)
{
    KSIM_ASSERT(file != NULL);
    KSIM_ASSERT(error == NULL || *error == NULL);
    gboolean ok = outfile_close_stream(file, error);
    if (ok && rename(file->tmp_path, file->path) != 0)
        ok = set_io_error(error, file->shown, "rename the temporary file onto", errno);
    if (ok)
        sync_parent(file->path);
    else
        unlink(file->tmp_path);
    OutDir *dir = file->dir;
    outfile_release(file);
    if (ok && dir != NULL)
        dir_step(dir);
    return ok;
}

void
outfile_abort(OutFile *file)
{
    if (file == NULL)
        return;
    if (file->stream != NULL) {
        fclose(file->stream);
        close(file->fd);
    }
    unlink(file->tmp_path);
    outfile_release(file);
}

/* Writes `data` to `file` and commits it. */
static gboolean
outfile_write_to(OutFile *file, const char *data, gsize len, GError **error)
{
    if (len > 0)
        fwrite(data, 1, len, file->stream);
    /* A short fwrite leaves the stream's error flag set; commit reports it. */
    return outfile_commit(file, error);
}

gboolean
outfile_write(const char *path, const char *data, gsize len, GError **error)
{
    KSIM_ASSERT(data != NULL || len == 0);
    OutFile *file = outfile_open(path, error);
    return file != NULL && outfile_write_to(file, data, len, error);
}

/* ---- OutDir ---- */

/* Removes `path` and, if it is a directory, what it holds; symbolic links
 * are removed, never followed. Best effort: what cannot be removed stays. */
static void
remove_tree(const char *path, guint depth)
{
    GStatBuf info;
    if (g_lstat(path, &info) != 0)
        return;
    if (!S_ISDIR(info.st_mode)) {
        g_unlink(path);
        return;
    }
    if (depth >= REMOVE_DEPTH_MAX)
        return;
    g_autoptr(GDir) dir = g_dir_open(path, 0, NULL);
    const char *name;
    while (dir != NULL && (name = g_dir_read_name(dir)) != NULL) {
        g_autofree char *child = g_build_filename(path, name, NULL);
        remove_tree(child, depth + 1);
    }
    g_rmdir(path);
}

/* The prefix of the temporaries of the report directory named `base`:
 * ".BASE.tmp-" (and ".BASE.old-" for the old report during a commit that
 * cannot exchange). */
static char *
temporary_prefix(const char *base, const char *kind)
{
    return g_strdup_printf(".%s.%s-", base, kind);
}

/* TRUE when the temporary `name` (after its prefix: "PID-XXXXXX") belongs to
 * no running process: this one's own from an earlier call, or a process that
 * is gone. A temporary of a live process is another run writing the same
 * report, and is left alone. */
static gboolean
temporary_stale(const char *suffix)
{
    char *end = NULL;
    guint64 pid = g_ascii_strtoull(suffix, &end, 10);
    if (end == suffix || *end != '-' || pid == 0 || pid > G_MAXINT)
        return TRUE; /* not of our making, but it carries our prefix */
    if ((pid_t)pid == getpid())
        return TRUE;
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* Cleans what a killed run left beside `target` (see outfile_dir_commit for
 * what each crash leaves): a stale ".BASE.old-" is the complete previous
 * report, put back when `target` is missing and removed otherwise; a stale
 * ".BASE.tmp-" is removed. */
static void
clean_stale(const char *parent, const char *base, const char *target)
{
    g_autofree char *tmp_prefix = temporary_prefix(base, "tmp");
    g_autofree char *old_prefix = temporary_prefix(base, "old");
    g_autoptr(GDir) dir = g_dir_open(parent, 0, NULL);
    g_autoptr(GPtrArray) tmp = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GPtrArray) old = g_ptr_array_new_with_free_func(g_free);
    const char *name;
    while (dir != NULL && (name = g_dir_read_name(dir)) != NULL) {
        if (g_str_has_prefix(name, tmp_prefix) && temporary_stale(name + strlen(tmp_prefix)))
            g_ptr_array_add(tmp, g_build_filename(parent, name, NULL));
        else if (g_str_has_prefix(name, old_prefix) && temporary_stale(name + strlen(old_prefix)))
            g_ptr_array_add(old, g_build_filename(parent, name, NULL));
    }
    for (guint i = 0; i < old->len; i++) {
        const char *path = g_ptr_array_index(old, i);
        if (!g_file_test(target, G_FILE_TEST_EXISTS) && g_rename(path, target) == 0)
            continue;
        remove_tree(path, 0);
    }
    for (guint i = 0; i < tmp->len; i++)
        remove_tree(g_ptr_array_index(tmp, i), 0);
}

static gboolean dir_error(GError **error, const char *target, const char *format, ...)
    G_GNUC_PRINTF(3, 4);

static gboolean
dir_error(GError **error, const char *target, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    g_autofree char *why = g_strdup_vprintf(format, args);
    va_end(args);
    g_set_error(error, KSIM_REPORTS_ERROR, KSIM_REPORTS_ERROR_IO,
                "cannot write the report directory \"%s\": %s", target, why);
    return FALSE;
}

/* TRUE when the directory `target` may be replaced: it is empty or holds
 * `marker`, so it is an earlier report of the same kind and no user's other
 * files are thrown away. */
static gboolean
target_replaceable(const char *target, const char *marker, GError **error)
{
    GStatBuf info;
    if (g_lstat(target, &info) != 0) {
        if (errno == ENOENT)
            return TRUE;
        return dir_error(error, target, "%s", g_strerror(errno));
    }
    if (S_ISLNK(info.st_mode))
        return dir_error(error, target, "it is a symbolic link; name the directory itself");
    if (!S_ISDIR(info.st_mode))
        return dir_error(error, target, "it exists and is not a directory");
    g_autoptr(GError) local = NULL;
    g_autoptr(GDir) dir = g_dir_open(target, 0, &local);
    if (dir == NULL)
        return dir_error(error, target, "%s", local->message);
    if (g_dir_read_name(dir) == NULL)
        return TRUE;
    g_autofree char *marked = g_build_filename(target, marker, NULL);
    if (g_file_test(marked, G_FILE_TEST_EXISTS))
        return TRUE;
    return dir_error(error, target,
                     "it holds files but no %s, so it is not an earlier report that may be "
                     "replaced; name a new or empty directory, or remove it",
                     marker);
}

/* Splits `path` into its parent and last component, refusing components
 * that cannot be renamed into place ("/", ".", ".."). */
static gboolean
target_split(const char *path, char **parent, char **base, GError **error)
{
    g_autofree char *trimmed = g_strdup(path);
    gsize len = strlen(trimmed);
    while (len > 1 && trimmed[len - 1] == G_DIR_SEPARATOR)
        trimmed[--len] = '\0';
    g_autofree char *last = g_path_get_basename(trimmed);
    if (strcmp(last, ".") == 0 || strcmp(last, "..") == 0 || strcmp(last, G_DIR_SEPARATOR_S) == 0)
        return dir_error(error, path, "name the directory itself, not '%s'", last);
    *parent = g_path_get_dirname(trimmed);
    *base = g_steal_pointer(&last);
    return TRUE;
}

static gboolean
dir_create_temporary(OutDir *out, const char *parent, const char *base, GError **error)
{
    if (g_mkdir_with_parents(parent, 0777) != 0)
        return dir_error(error, out->target, "cannot create \"%s\": %s", parent, g_strerror(errno));
    g_autofree char *prefix = temporary_prefix(base, "tmp");
    g_autofree char *name = g_strdup_printf("%s%d-XXXXXX", prefix, (int)getpid());
    char *path = g_build_filename(parent, name, NULL);
    /* 0777 less the umask, as a directory made by mkdir would be. */
    if (g_mkdtemp_full(path, 0777) == NULL) {
        int saved = errno;
        g_free(path);
        return dir_error(error, out->target, "cannot create a directory in \"%s\": %s", parent,
                         g_strerror(saved));
    }
    out->tmp_path = path;
    return TRUE;
}

static void
outfile_dir_release(OutDir *dir)
{
    g_free(dir->target);
    g_free(dir->tmp_path);
    g_free(dir);
}

OutDir *
outfile_dir_open(const char *path, const char *marker, GError **error)
{
    KSIM_ASSERT(path != NULL);
    KSIM_ASSERT(marker != NULL);
    if (path[0] == '\0') {
        g_set_error(error, KSIM_REPORTS_ERROR, KSIM_REPORTS_ERROR_IO,
                    "the report directory's name is empty");
        return NULL;
    }
    OutDir *out = g_new0(OutDir, 1);
    out->target = g_strdup(path);
    g_autofree char *parent = NULL;
    g_autofree char *base = NULL;
    gboolean ok = fault_parse(out, error) && target_split(path, &parent, &base, error);
    if (ok)
        clean_stale(parent, base, path);
    ok = ok && target_replaceable(path, marker, error) &&
         dir_create_temporary(out, parent, base, error);
    if (!ok) {
        outfile_dir_release(out);
        return NULL;
    }
    return out;
}

const char *
outfile_dir_path(const OutDir *dir)
{
    KSIM_ASSERT(dir != NULL);
    KSIM_ASSERT(dir->tmp_path != NULL);
    return dir->tmp_path;
}

const char *
outfile_dir_target(const OutDir *dir)
{
    KSIM_ASSERT(dir != NULL);
    return dir->target;
}

void
outfile_dir_check_invariants(const OutDir *dir)
{
    KSIM_ASSERT(dir != NULL);
    KSIM_ASSERT(dir->tmp_path != NULL);
    g_autofree char *parent = NULL;
    g_autofree char *base = NULL;
    gboolean split = target_split(dir->target, &parent, &base, NULL);
    KSIM_ASSERT(split);
    g_autofree char *tmp_parent = g_path_get_dirname(dir->tmp_path);
    g_autofree char *tmp_name = g_path_get_basename(dir->tmp_path);
    g_autofree char *prefix = temporary_prefix(base, "tmp");
    g_autofree char *own = g_strdup_printf("%s%d-", prefix, (int)getpid());
    KSIM_ASSERT(strcmp(tmp_parent, parent) == 0);
    KSIM_ASSERT(g_str_has_prefix(tmp_name, own));
    KSIM_ASSERT(g_file_test(dir->tmp_path, G_FILE_TEST_IS_DIR));
    KSIM_ASSERT(dir->steps <= dir->opened);
}

OutFile *
outfile_dir_file_open(OutDir *dir, const char *name, GError **error)
{
    KSIM_ASSERT(dir != NULL);
    KSIM_ASSERT(name != NULL);
    KSIM_ASSERT(strchr(name, G_DIR_SEPARATOR) == NULL);
    g_autofree char *path = g_build_filename(dir->tmp_path, name, NULL);
    g_autofree char *shown = g_build_filename(dir->target, name, NULL);
    OutFile *file = outfile_open_shown(path, shown, error);
    dir->opened++;
    if (file == NULL)
        return NULL;
    file->dir = dir;
    file->fail_enospc = dir->fault == FAULT_ENOSPC && dir->opened == dir->fault_at;
    return file;
}

gboolean
outfile_dir_write(OutDir *dir, const char *name, const char *data, gsize len, GError **error)
{
    KSIM_ASSERT(data != NULL || len == 0);
    OutFile *file = outfile_dir_file_open(dir, name, error);
    return file != NULL && outfile_write_to(file, data, len, error);
}

/* Moves the old report away, the new one in, and removes the old, where the
 * file system cannot exchange two directories in one rename. */
static gboolean
dir_replace_in_three(OutDir *dir, GError **error)
{
    g_autofree char *parent = g_path_get_dirname(dir->tmp_path);
    g_autofree char *tmp_name = g_path_get_basename(dir->tmp_path);
    const char *tag = strstr(tmp_name, ".tmp-");
    KSIM_ASSERT(tag != NULL);
    g_autofree char *old_name =
        g_strdup_printf("%.*s.old-%s", (int)(tag - tmp_name), tmp_name, tag + strlen(".tmp-"));
    g_autofree char *old = g_build_filename(parent, old_name, NULL);
    if (g_rename(dir->target, old) != 0)
        return dir_error(error, dir->target, "cannot move the previous report aside: %s",
                         g_strerror(errno));
    dir_step(dir);
    if (g_rename(dir->tmp_path, dir->target) != 0) {
        int saved = errno;
        (void)g_rename(old, dir->target);
        return dir_error(error, dir->target, "cannot rename \"%s\" into place: %s", dir->tmp_path,
                         g_strerror(saved));
    }
    dir_step(dir);
    remove_tree(old, 0);
    return TRUE;
}

/* Puts the new report in place of the old one. What a crash at each step
 * leaves, and what the next outfile_dir_open (clean_stale) does with it:
 *   before the exchange      the old report at `target`, the new one (whole or
 *                            part) at ".BASE.tmp-PID-X": that is removed;
 *   the exchange itself      one rename(2), atomic: either state;
 *   after it                 the new report at `target`, the old one (whole or
 *                            part, while it is being removed) at the
 *                            temporary's name: that is removed.
 * Without an exchange (dir_replace_in_three), after moving the old report
 * aside and before renaming the new one in, `target` is missing, the old
 * report is at ".BASE.old-PID-X" and the new one at ".BASE.tmp-PID-X": the
 * old one is put back and the new one removed. */
static gboolean
dir_replace(OutDir *dir, GError **error)
{
    if (renameat2(AT_FDCWD, dir->tmp_path, AT_FDCWD, dir->target, RENAME_EXCHANGE) == 0) {
        dir_step(dir);
        remove_tree(dir->tmp_path, 0);
        return TRUE;
    }
    int failed = errno;
    if (failed == ENOENT && !g_file_test(dir->target, G_FILE_TEST_EXISTS)) {
        if (g_rename(dir->tmp_path, dir->target) == 0)
            return TRUE;
        return dir_error(error, dir->target, "cannot rename \"%s\" into place: %s", dir->tmp_path,
                         g_strerror(errno));
    }
    if (failed == EINVAL || failed == ENOSYS || failed == ENOTSUP)
        return dir_replace_in_three(dir, error);
    return dir_error(error, dir->target, "cannot rename \"%s\" into place: %s", dir->tmp_path,
                     g_strerror(failed));
}

gboolean
outfile_dir_commit(OutDir *dir, GError **error)
{
    KSIM_ASSERT(error == NULL || *error == NULL);
    outfile_dir_check_invariants(dir);
    /* Every file inside was fsynced by its commit; this makes their names
     * durable before the directory is renamed into place. */
    sync_directory(dir->tmp_path);
    dir_step(dir);
    gboolean ok = dir_replace(dir, error);
    if (ok)
        sync_parent(dir->target);
    outfile_dir_abort(dir);
    return ok;
}

void
outfile_dir_abort(OutDir *dir)
{
    if (dir == NULL)
        return;
    remove_tree(dir->tmp_path, 0);
    outfile_dir_release(dir);
}

/* ---- safe names ---- */

/* Why `name` cannot be a path component, or NULL when it can. */
static const char *
name_problem(const char *name)
{
    if (name[0] == '\0')
        return "it is empty";
    if (strlen(name) > OUTFILE_NAME_MAX)
        return "it is longer than " G_STRINGIFY(OUTFILE_NAME_MAX) " bytes";
    if (!g_utf8_validate(name, -1, NULL))
        return "it is not valid UTF-8";
    for (const char *c = name; *c != '\0'; c++) {
        if (*c == '/' || *c == '\\')
            return "it holds a path separator ('/' or '\\')";
        if ((guchar)*c < 0x20 || *c == 0x7f)
            return "it holds a control character";
    }
    if (name[0] == '.')
        return "it starts with '.' (hidden, or the directory itself or its parent)";
    return NULL;
}

gboolean
outfile_name_check(const char *name, GError **error)
{
    KSIM_ASSERT(name != NULL);
    const char *problem = name_problem(name);
    if (problem == NULL)
        return TRUE;
    g_set_error(error, KSIM_REPORTS_ERROR, KSIM_REPORTS_ERROR_NAME,
                "cannot be used as a directory name: %s", problem);
    return FALSE;
}

/* ---- CSV ---- */

static gboolean
csv_needs_quotes(const char *value)
{
    gsize len = strlen(value);
    if (len == 0)
        return FALSE;
    if (g_ascii_isspace(value[0]) || g_ascii_isspace(value[len - 1]))
        return TRUE;
    return strpbrk(value, ",\"\r\n") != NULL;
}

void
outfile_csv_quote(GString *out, const char *value)
{
    KSIM_ASSERT(out != NULL);
    KSIM_ASSERT(value != NULL);
    if (!csv_needs_quotes(value)) {
        g_string_append(out, value);
        return;
    }
    g_string_append_c(out, '"');
    for (const char *c = value; *c != '\0'; c++) {
        if (*c == '"')
            g_string_append_c(out, '"');
        g_string_append_c(out, *c);
    }
    g_string_append_c(out, '"');
}

/* Writes one already formatted field, with its separator. */
static void
csv_put_field(OutFileCsv *csv, const char *text)
{
    KSIM_ASSERT(csv != NULL);
    KSIM_ASSERT(csv->fields_in_row < csv->columns);
    if (csv->fields_in_row > 0)
        fputc(',', csv->stream);
    fputs(text, csv->stream);
    csv->fields_in_row++;
}

void
outfile_csv_string(OutFileCsv *csv, const char *value)
{
    KSIM_ASSERT(csv != NULL);
    g_string_truncate(csv->field, 0);
    outfile_csv_quote(csv->field, value);
    csv_put_field(csv, csv->field->str);
}

void
outfile_csv_int(OutFileCsv *csv, gint64 value)
{
    char text[32];
    g_snprintf(text, sizeof text, "%" G_GINT64_FORMAT, value);
    csv_put_field(csv, text);
}

/* Formats `value` in the C locale with the fewest significant digits (15 to
 * 17) that read back exactly, so 0.1 is written "0.1", not
 * "0.10000000000000001" as g_ascii_dtostr writes it. */
static void
format_double_shortest(char *text, gsize size, double value)
{
    static const char *const formats[] = {"%.15g", "%.16g", "%.17g"};
    KSIM_ASSERT(size >= G_ASCII_DTOSTR_BUF_SIZE);
    for (gsize i = 0; i < G_N_ELEMENTS(formats); i++) {
        g_ascii_formatd(text, (int)size, formats[i], value);
        if (!isfinite(value) || g_ascii_strtod(text, NULL) == value)
            return;
    }
}

void
outfile_csv_double(OutFileCsv *csv, double value)
{
    char text[G_ASCII_DTOSTR_BUF_SIZE];
    format_double_shortest(text, sizeof text, value);
    csv_put_field(csv, text);
}

void
outfile_csv_end_row(OutFileCsv *csv)
{
    KSIM_ASSERT(csv != NULL);
    KSIM_ASSERT(csv->fields_in_row == csv->columns);
    fputc('\n', csv->stream);
    csv->fields_in_row = 0;
    csv->rows++;
}

OutFileCsv *
outfile_csv_new(FILE *stream, const char *const *header)
{
    KSIM_ASSERT(stream != NULL);
    KSIM_ASSERT(header != NULL);
    KSIM_ASSERT(header[0] != NULL);
    OutFileCsv *csv = g_new0(OutFileCsv, 1);
    csv->stream = stream;
    csv->columns = g_strv_length((char **)header);
    csv->field = g_string_new(NULL);
    for (guint i = 0; i < csv->columns; i++)
        outfile_csv_string(csv, header[i]);
    outfile_csv_end_row(csv);
    csv->rows = 0; /* the header is not a data row */
    return csv;
}

void
outfile_csv_free(OutFileCsv *csv)
{
    if (csv == NULL)
        return;
    g_string_free(csv->field, TRUE);
    g_free(csv);
}

guint64
outfile_csv_rows(const OutFileCsv *csv)
{
    KSIM_ASSERT(csv != NULL);
    return csv->rows;
}
