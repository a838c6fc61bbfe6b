/*
 * outfile: report files written atomically, report directories replaced
 * atomically, names safe as path components, and a CSV writer.
 *
 * A report file is first written to "PATH.tmp.PID" in the same directory,
 * flushed and fsynced, then renamed over PATH, and the directory is fsynced.
 * rename() within a directory is atomic, so a reader, a Ctrl-C or a crash
 * sees either the old PATH (or none) or the complete new one, never half a
 * report. A process killed between outfile_open and outfile_commit may leave
 * its "PATH.tmp.PID" behind; nothing else is ever left.
 *
 * A report directory (OutDir) is written the same way, one level up: every
 * file goes into a temporary directory ".NAME.tmp-PID-XXXXXX" beside the
 * report directory NAME, which outfile_dir_commit renames into place (an
 * exchange of the two, so the previous report stays until then), so a
 * reader sees the whole old report or the whole new one, never a mix. What a
 * killed run leaves is removed by the next outfile_dir_open of the same
 * directory (outfile.c's dir_replace says what each crash leaves).
 *
 * One process must not have two OutFiles open on the same PATH at once: they
 * would share the temporary name.
 *
 * Errors are reported in the KSIM_REPORTS_ERROR domain, and their messages
 * name the report's path and the system's reason (g_strerror of the real
 * errno: a full disk says "No space left on device").
 *
 * Test hook (for tests only; nothing else sets it): the environment variable
 * KSIM_TEST_OUTFILE_FAULT, read by outfile_dir_open, injects one fault into
 * every OutDir of the process:
 *   kill:N    raise(SIGKILL) at the N-th step of a report directory: steps 1
 *             to F are its F files committed (outfile_commit of a file opened
 *             with outfile_dir_file_open), step F+1 is the commit before the
 *             rename into place, F+2 right after it (when an old report was
 *             replaced);
 *   enospc:N  every write(2) of the N-th file opened in the directory fails
 *             with ENOSPC, as on a full disk.
 * Any other value makes outfile_dir_open fail, naming it.
 */
#ifndef OUTFILE_H
#define OUTFILE_H

#include <stdio.h>

#include <glib.h>

/* The error domain of everything in reports/ that touches files or gnuplot. */
#define KSIM_REPORTS_ERROR (reports_error_quark())
GQuark reports_error_quark(void);

typedef enum {
    KSIM_REPORTS_ERROR_IO = 1, /* creating, writing, syncing or renaming a file failed */
    KSIM_REPORTS_ERROR_PLOT,   /* gnuplot is missing, failed, or made no image */
    KSIM_REPORTS_ERROR_NAME,   /* a name cannot be a path component (outfile_name_check) */
} ReportsErrorCode;

/* The environment variable of the test hook (see above). */
#define OUTFILE_FAULT_ENV "KSIM_TEST_OUTFILE_FAULT"

/* The longest name outfile_name_check accepts, in bytes: with a temporary
 * directory's prefix and suffix it stays below NAME_MAX (255). */
#define OUTFILE_NAME_MAX 200

typedef struct OutFile OutFile;

/* Writes `len` bytes of `data` to `path` atomically. On failure, `path` is
 * untouched and no temporary file remains. */
gboolean outfile_write(const char *path, const char *data, gsize len, GError **error);

/* Starts writing `path`: creates its temporary file. Returns the OutFile
 * (transfer full: release it with exactly one of outfile_commit or
 * outfile_abort) or NULL with `error` set. */
OutFile *outfile_open(const char *path, GError **error);

/* The stream to write the contents to (transfer none; do not fclose it).
 * Write errors are sticky on the stream and reported by outfile_commit. */
FILE *outfile_stream(OutFile *file);

/* The final path the OutFile will be renamed to (transfer none). */
const char *outfile_path(const OutFile *file);

/* Flushes, fsyncs and closes the temporary file and renames it over the
 * path. Frees `file` in every case. On failure the temporary file is removed,
 * the path is untouched, and FALSE is returned with `error` set. */
gboolean outfile_commit(OutFile *file, GError **error);

/* Closes and removes the temporary file; the path is untouched. Frees `file`;
 * accepts NULL. */
void outfile_abort(OutFile *file);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(OutFile, outfile_abort)

/* ---- report directories ---- */

typedef struct OutDir OutDir;

/* Starts writing the report directory `path`, before anything else is done,
 * so an unwritable place is found before a long simulation: removes what
 * killed runs left beside it, creates its parent if missing, checks that
 * `path` is missing, empty or an earlier report (it holds the file `marker`,
 * e.g. "summary.json": a directory of other files is never replaced), and
 * creates the temporary directory. Returns the OutDir (transfer full:
 * release it with exactly one of outfile_dir_commit or outfile_dir_abort) or
 * NULL with `error` set, naming `path` and the system's reason. */
OutDir *outfile_dir_open(const char *path, const char *marker, GError **error);

/* The temporary directory the files are written in until the commit
 * (transfer none). A child program (gnuplot) may write there too. */
const char *outfile_dir_path(const OutDir *dir);

/* The report directory, as given to outfile_dir_open (transfer none). */
const char *outfile_dir_target(const OutDir *dir);

/* outfile_open of the file `name` (no directory part) in `dir`; errors name
 * it as it will be, inside the report directory. */
OutFile *outfile_dir_file_open(OutDir *dir, const char *name, GError **error);

/* outfile_write of the file `name` in `dir`. */
gboolean outfile_dir_write(OutDir *dir, const char *name, const char *data, gsize len,
                           GError **error);

/* Renames the temporary directory into place, replacing the previous report
 * (removed after). Frees `dir` in every case. On failure the temporary
 * directory is removed, the previous report kept, and FALSE returned with
 * `error` set. */
gboolean outfile_dir_commit(OutDir *dir, GError **error);

/* Checks the invariants outfile.c states for `dir` (its temporary
 * directory is this process's, beside the report directory, and exists). */
void outfile_dir_check_invariants(const OutDir *dir);

/* Removes the temporary directory and what it holds; the report directory
 * is untouched. Frees `dir`; accepts NULL. */
void outfile_dir_abort(OutDir *dir);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(OutDir, outfile_dir_abort)

/* ---- safe names ---- */

/* TRUE when `name` (a scenario's name, say) can be used as one path
 * component: not empty, at most OUTFILE_NAME_MAX bytes, valid UTF-8, not
 * starting with '.' (so neither "." nor ".." nor hidden), and without '/',
 * '\' or control characters. Otherwise FALSE with a
 * KSIM_REPORTS_ERROR_NAME `error` saying why (without repeating the name,
 * which the caller shows as it sees fit). */
gboolean outfile_name_check(const char *name, GError **error);

/*
 * OutFileCsv writes RFC 4180 CSV to a stream: fields are separated by commas
 * and a field is quoted, with its double quotes doubled, when it holds a
 * comma, a double quote, a line break or leading/trailing space. Rows end
 * in "\n" rather than RFC 4180's "\r\n", because gnuplot and the Unix tools
 * that read these files expect it. Numbers are written in the C locale:
 * integers in decimal, doubles in the shortest form that reads back exactly
 * ("nan" and "inf" for the non-finite ones).
 *
 *   g_autoptr(OutFile) file = outfile_open("latency.csv", error);
 *   static const char *const header[] = {"time_s", "latency_ms", "run", NULL};
 *   g_autoptr(OutFileCsv) csv = outfile_csv_new(outfile_stream(file), header);
 *   outfile_csv_double(csv, 1.5);
 *   outfile_csv_double(csv, 2.25);
 *   outfile_csv_string(csv, "acks=all");
 *   outfile_csv_end_row(csv);
 *   ok = outfile_commit(g_steal_pointer(&file), error);
 *
 * Every row must have exactly as many fields as the header; a row with more
 * or fewer is a programming error.
 */
typedef struct OutFileCsv OutFileCsv;

/* Returns a writer on `stream` (transfer none: the stream must outlive the
 * writer) and writes the NULL-terminated `header` (at least one column) as
 * the first row. Transfer full. */
OutFileCsv *outfile_csv_new(FILE *stream, const char *const *header);

/* Frees the writer, not the stream; accepts NULL. An unfinished row is
 * left as it is, so callers end every row before freeing. */
void outfile_csv_free(OutFileCsv *csv);

/* Appends one field to the current row. */
void outfile_csv_string(OutFileCsv *csv, const char *value);
void outfile_csv_int(OutFileCsv *csv, gint64 value);
void outfile_csv_double(OutFileCsv *csv, double value);

/* Ends the current row, which must have one field per header column. */
void outfile_csv_end_row(OutFileCsv *csv);

/* Number of data rows written so far (the header not counted). */
guint64 outfile_csv_rows(const OutFileCsv *csv);

/* Appends `value` to `out` as one CSV field, quoted where RFC 4180 needs it. */
void outfile_csv_quote(GString *out, const char *value);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(OutFileCsv, outfile_csv_free)

#endif
