/*
 * plog_file: the small checkpoint files of the logs (a log's
 * `leader-epoch-checkpoint`, a log directory's
 * `recovery-point-offset-checkpoint`), written so
 * that a crash leaves either the new contents or a file that is recognisably
 * incomplete.
 *
 * A checkpoint is a text body followed by one line `xxh32 <8 hex digits>`, the
 * XXH32 of the body. It is written to `<name>.tmp`, renamed over `<name>`
 * (a rename is durable at once on the simulated disk, so a process crash at
 * any point leaves the old or the new file whole) and then fsynced. Until that
 * fsync completes, a power loss may leave the renamed file empty or torn: the
 * checksum line tells, and the reader falls back to what it can rebuild from
 * the log (a recovery point of 0 re-reads everything; the leader-epoch cache
 * is rebuilt from the batches' epochs).
 */
#ifndef PLOG_FILE_H
#define PLOG_FILE_H

#include <glib.h>

#include "sim_disk.h"

/* Writes `body` and its checksum line to `name` (through `name`.tmp), then
 * starts an fsync of it. On failure (a full disk) `name` is unchanged. */
SimDiskStatus plog_file_write_checked(SimDisk *disk, const char *name, const GString *body);

/* The body of `name` when the file exists and its checksum line matches;
 * NULL otherwise. (transfer full) */
GString *plog_file_read_checked(const SimDisk *disk, const char *name);

/* The whole file, or NULL when it does not exist. (transfer full) */
GByteArray *plog_file_read_all(const SimDisk *disk, const char *name);

#endif
