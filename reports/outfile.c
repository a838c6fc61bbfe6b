/*
 * outfile: atomic report files and CSV (see outfile.h).
 *
 * OutFile invariants:
 *  1. Between outfile_open and outfile_commit/outfile_abort, `stream` is open
 *     on `tmp_path`, which is "path.tmp.PID" in the directory of `path`.
 *  2. `path` is only ever replaced by rename(), after the temporary file has
 *     been flushed, fsynced and closed without error.
 *  3. When outfile_commit fails or outfile_abort runs, `tmp_path` is unlinked.
 *
 * Lifecycle:
 *   (none) --outfile_open--> WRITING --outfile_commit--> path replaced, freed
 *                                    --outfile_abort---> temp removed, freed
 *
 * OutFileCsv invariants:
 *  1. 0 <= fields_in_row <= columns; fields_in_row is 0 between rows.
 *  2. Every row written, the header included, has exactly `columns` fields.
 */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "sim_assert.h"

struct OutFile {
    char *path;
    char *tmp_path;
    FILE *stream;
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

static void
outfile_release(OutFile *file)
{
    g_free(file->path);
    g_free(file->tmp_path);
    g_free(file);
}

OutFile *
outfile_open(const char *path, GError **error)
{
    KSIM_ASSERT(path != NULL);
    KSIM_ASSERT(path[0] != '\0');
    OutFile *file = g_new0(OutFile, 1);
    file->path = g_strdup(path);
    file->tmp_path = g_strdup_printf("%s.tmp.%d", path, (int)getpid());
    int fd = open(file->tmp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) {
        set_io_error(error, path, "create", errno);
        outfile_release(file);
        return NULL;
    }
    file->stream = fdopen(fd, "w");
    if (file->stream == NULL) {
        set_io_error(error, path, "open a stream on", errno);
        close(fd);
        unlink(file->tmp_path);
        outfile_release(file);
        return NULL;
    }
    return file;
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
    if (fflush(stream) != 0)
        failed_errno = errno;
    else if (ferror(stream))
        failed_errno = EIO; /* an earlier fwrite failed; its errno is gone */
    else if (fsync(fileno(stream)) != 0)
        failed_errno = errno;
    if (fclose(stream) != 0 && failed_errno == 0)
        failed_errno = errno;
    if (failed_errno == 0)
        return TRUE;
    return set_io_error(error, file->path, "write", failed_errno);
}

/* Makes the rename itself durable. Some file systems refuse to fsync a
 * directory; the rename has already happened by then, so a failure here can
 * only lose the new file to a power cut, never expose half of it, and is not
 * reported. */
static void
outfile_sync_directory(const char *path)
{
    g_autofree char *directory = g_path_get_dirname(path);
    int fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return;
    (void)fsync(fd);
    close(fd);
}

gboolean
outfile_commit(OutFile *file, GError **error)
{
    KSIM_ASSERT(file != NULL);
    KSIM_ASSERT(error == NULL || *error == NULL);
    gboolean ok = outfile_close_stream(file, error);
    if (ok && rename(file->tmp_path, file->path) != 0)
        ok = set_io_error(error, file->path, "rename the temporary file onto", errno);
    if (ok)
        outfile_sync_directory(file->path);
    else
        unlink(file->tmp_path);
    outfile_release(file);
    return ok;
}

void
outfile_abort(OutFile *file)
{
    if (file == NULL)
        return;
    if (file->stream != NULL)
        fclose(file->stream);
    unlink(file->tmp_path);
    outfile_release(file);
}

gboolean
outfile_write(const char *path, const char *data, gsize len, GError **error)
{
    KSIM_ASSERT(data != NULL || len == 0);
    OutFile *file = outfile_open(path, error);
    if (file == NULL)
        return FALSE;
    if (len > 0)
        fwrite(data, 1, len, file->stream);
    /* A short fwrite leaves the stream's error flag set; commit reports it. */
    return outfile_commit(file, error);
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
