/*
 * plog_file: checksummed checkpoint files (see plog_file.h).
 *
 * Stateless: every function works on the disk it is given.
 */
#include "plog_file.h"

#include "sim_assert.h"

#include <string.h>
#include <xxhash.h>

#define CHECKSUM_PREFIX "xxh32 "
/* "xxh32 " + 8 hex digits + "\n" */
#define CHECKSUM_LINE_BYTES (sizeof(CHECKSUM_PREFIX) - 1 + 8 + 1)
#define CHECKSUM_SEED 0x706c6f67u /* "plog" */
/* Checkpoints are small; a larger file is garbage. */
#define CHECKPOINT_BYTES_MAX (64 * 1024 * 1024)

GByteArray *
plog_file_read_all(const SimDisk *disk, const char *name)
{
    gint64 size = sim_disk_size(disk, name);
    if (size < 0)
        return NULL;
    KSIM_ASSERT(size <= G_MAXUINT32);
    GByteArray *bytes = g_byte_array_sized_new((guint)size);
    g_byte_array_set_size(bytes, (guint)size);
    gssize read = sim_disk_read(disk, name, 0, bytes->data, (gsize)size);
    KSIM_ASSERT(read == size);
    return bytes;
}

SimDiskStatus
plog_file_write_checked(SimDisk *disk, const char *name, const GString *body)
{
    KSIM_ASSERT(body != NULL);
    KSIM_ASSERT(body->len <= CHECKPOINT_BYTES_MAX);
    g_autoptr(GString) text = g_string_new_len(body->str, (gssize)body->len);
    g_string_append_printf(text, CHECKSUM_PREFIX "%08x\n",
                           XXH32(body->str, body->len, CHECKSUM_SEED));
    g_autofree char *temp = g_strconcat(name, ".tmp", NULL);
    /* A temporary file left by an earlier failed write is stale. */
    if (sim_disk_exists(disk, temp))
        sim_disk_delete(disk, temp);
    SimDiskStatus status = sim_disk_create(disk, temp);
    if (status == SIM_DISK_EIO)
        return status;
    KSIM_ASSERT(status == SIM_DISK_OK);
    status = sim_disk_append(disk, temp, text->str, text->len);
    if (status != SIM_DISK_OK) {
        sim_disk_delete(disk, temp);
        return status;
    }
    status = sim_disk_rename(disk, temp, name);
    if (status == SIM_DISK_EIO)
        return status;
    KSIM_ASSERT(status == SIM_DISK_OK);
    sim_disk_fsync(disk, name, NULL, NULL);
    return SIM_DISK_OK;
}

/* TRUE when `bytes` ends with a checksum line that matches what precedes it;
 * sets *body_len to the length of the body. */
static gboolean
checksum_matches(const GByteArray *bytes, gsize *body_len)
{
    if (bytes->len < CHECKSUM_LINE_BYTES || bytes->len > CHECKPOINT_BYTES_MAX)
        return FALSE;
    gsize body = bytes->len - CHECKSUM_LINE_BYTES;
    const char *line = (const char *)bytes->data + body;
    if (memcmp(line, CHECKSUM_PREFIX, sizeof(CHECKSUM_PREFIX) - 1) != 0)
        return FALSE;
    if (line[CHECKSUM_LINE_BYTES - 1] != '\n')
        return FALSE;
    char hex[9];
    memcpy(hex, line + sizeof(CHECKSUM_PREFIX) - 1, 8);
    hex[8] = '\0';
    guint64 stored;
    if (!g_ascii_string_to_unsigned(hex, 16, 0, G_MAXUINT32, &stored, NULL))
        return FALSE;
    *body_len = body;
    return stored == XXH32(bytes->data, body, CHECKSUM_SEED);
}

GString *
plog_file_read_checked(const SimDisk *disk, const char *name)
{
    g_autoptr(GByteArray) bytes = plog_file_read_all(disk, name);
    if (bytes == NULL)
        return NULL;
    gsize body_len = 0;
    if (!checksum_matches(bytes, &body_len))
        return NULL;
    return g_string_new_len((const char *)bytes->data, (gssize)body_len);
}
