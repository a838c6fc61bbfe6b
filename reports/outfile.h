/*
 * outfile: report files written atomically, and a CSV writer.
 *
 * A report file is first written to "PATH.tmp.PID" in the same directory,
 * flushed and fsynced, then renamed over PATH, and the directory is fsynced.
 * rename() within a directory is atomic, so a reader, a Ctrl-C or a crash
 * sees either the old PATH (or none) or the complete new one, never half a
 * report. A process killed between outfile_open and outfile_commit may leave
 * its "PATH.tmp.PID" behind; nothing else is ever left.
 *
 * One process must not have two OutFiles open on the same PATH at once: they
 * would share the temporary name.
 *
 * Errors are reported in the KSIM_REPORTS_ERROR domain, and their messages
 * name the report's path and the system's reason.
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
} ReportsErrorCode;

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
