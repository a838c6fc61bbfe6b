/*
 * plog_epoch: the leader-epoch cache (see plog_epoch.h).
 *
 * Invariants (plog_epoch_cache_check_invariants):
 *  1. Epochs are >= 0 and strictly increasing.
 *  2. Start offsets are >= 0 and strictly increasing.
 *  3. At most PLOG_EPOCH_ENTRIES_MAX entries.
 *  4. Within a log, every start offset lies in [log start offset, LEO]: plog
 *     truncates the cache from the end on truncation and from the start on
 *     retention.
 *
 * Transitions: entries are added at the end by plog_epoch_cache_assign, removed
 * from the end by _truncate_from_end (and by assign, for entries that would
 * break invariants 1 or 2 with the new one), removed or moved at the start by
 * _truncate_from_start, and all dropped by _clear or a failed _parse.
 *
 * The answers follow Kafka's LeaderEpochFileCache (storage module, trunk /
 * 3.x: assign, endOffsetFor, truncateFromEnd, truncateFromStart), whose test
 * suite tests/test_plog_epoch.c ports case by case.
 */
#include "plog_epoch.h"

#include "sim_assert.h"

#include <string.h>

struct PlogEpochCache {
    GArray *entries; /* PlogEpochEntry, ascending */
};

#define FILE_VERSION "0"

PlogEpochCache *
plog_epoch_cache_new(void)
{
    PlogEpochCache *cache = g_new0(PlogEpochCache, 1);
    cache->entries = g_array_new(FALSE, FALSE, sizeof(PlogEpochEntry));
    return cache;
}

void
plog_epoch_cache_free(PlogEpochCache *cache)
{
    if (cache == NULL)
        return;
    g_array_unref(cache->entries);
    g_free(cache);
}

static const PlogEpochEntry *
entry_at(const PlogEpochCache *cache, guint i)
{
    KSIM_ASSERT(i < cache->entries->len);
    return &g_array_index(cache->entries, PlogEpochEntry, i);
}

static const PlogEpochEntry *
entry_last(const PlogEpochCache *cache)
{
    if (cache->entries->len == 0)
        return NULL;
    return entry_at(cache, cache->entries->len - 1);
}

gint32
plog_epoch_cache_latest(const PlogEpochCache *cache)
{
    const PlogEpochEntry *last = entry_last(cache);
    return last == NULL ? PLOG_UNDEFINED_EPOCH : last->epoch;
}

gboolean
plog_epoch_cache_truncate_from_end(PlogEpochCache *cache, gint64 end_offset)
{
    /* Kafka ignores a negative end offset (UNDEFINED_EPOCH_OFFSET). */
    if (end_offset < 0)
        return FALSE;
    guint keep = cache->entries->len;
    while (keep > 0 && entry_at(cache, keep - 1)->start_offset >= end_offset)
        keep--;
    if (keep == cache->entries->len)
        return FALSE;
    g_array_set_size(cache->entries, keep);
    return TRUE;
}

/* Kafka's isUpdateNeeded: a new epoch, or the latest one starting earlier. */
static gboolean
update_needed(const PlogEpochCache *cache, gint32 epoch, gint64 start_offset)
{
    const PlogEpochEntry *last = entry_last(cache);
    return last == NULL || epoch != last->epoch || start_offset < last->start_offset;
}

gboolean
plog_epoch_cache_assign(PlogEpochCache *cache, gint32 epoch, gint64 start_offset)
{
    KSIM_ASSERT(epoch >= 0);
    KSIM_ASSERT(start_offset >= 0);
    if (!update_needed(cache, epoch, start_offset))
        return FALSE;
    /* Kafka's maybeTruncateNonMonotonicEntries: from the end, every entry
     * that is not older and earlier than the new one goes. */
    guint keep = cache->entries->len;
    while (keep > 0 && (entry_at(cache, keep - 1)->epoch >= epoch ||
                        entry_at(cache, keep - 1)->start_offset >= start_offset))
        keep--;
    g_array_set_size(cache->entries, keep);
    KSIM_ASSERT(cache->entries->len < PLOG_EPOCH_ENTRIES_MAX);
    PlogEpochEntry entry = {.epoch = epoch, .start_offset = start_offset};
    g_array_append_val(cache->entries, entry);
    return TRUE;
}

/* The index of the first entry whose epoch is greater than `epoch`
 * (entries->len when there is none). */
static guint
upper_bound(const PlogEpochCache *cache, gint32 epoch)
{
    guint lo = 0;
    guint hi = cache->entries->len;
    while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;
        if (entry_at(cache, mid)->epoch <= epoch)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void
plog_epoch_cache_end_offset(const PlogEpochCache *cache, gint32 requested_epoch,
                            gint64 log_end_offset, gint32 *out_epoch, gint64 *out_end_offset)
{
    KSIM_ASSERT(requested_epoch >= PLOG_UNDEFINED_EPOCH);
    KSIM_ASSERT(out_epoch != NULL);
    KSIM_ASSERT(out_end_offset != NULL);
    *out_epoch = PLOG_UNDEFINED_EPOCH;
    *out_end_offset = PLOG_UNDEFINED_EPOCH_OFFSET;
    /* A bootstrapping follower, or one without epochs in its log. */
    if (requested_epoch == PLOG_UNDEFINED_EPOCH)
        return;
    /* The epoch still being written to ends at the LEO. */
    if (cache->entries->len > 0 && requested_epoch == plog_epoch_cache_latest(cache)) {
        *out_epoch = requested_epoch;
        *out_end_offset = log_end_offset;
        return;
    }
    guint higher = upper_bound(cache, requested_epoch);
    /* Newer than every entry (or an empty cache): nothing is known. */
    if (higher == cache->entries->len)
        return;
    if (higher == 0) {
        /* Older than every entry: its data is gone from this log (retention,
         * or a log that started later), so the requested epoch ends where
         * the first known one starts, and the follower replicates from
         * there (Kafka 2.1+; before, UNDEFINED sent it back to its HW). */
        *out_epoch = requested_epoch;
        *out_end_offset = entry_at(cache, 0)->start_offset;
        return;
    }
    *out_epoch = entry_at(cache, higher - 1)->epoch;
    *out_end_offset = entry_at(cache, higher)->start_offset;
}

gboolean
plog_epoch_cache_truncate_from_start(PlogEpochCache *cache, gint64 start_offset)
{
    /* Kafka ignores a negative start offset (UNDEFINED_EPOCH_OFFSET): no
     * entry starts at or before it. */
    if (start_offset < 0)
        return FALSE;
    guint removed = 0;
    while (removed < cache->entries->len && entry_at(cache, removed)->start_offset <= start_offset)
        removed++;
    if (removed == 0)
        return FALSE;
    PlogEpochEntry first = *entry_at(cache, removed - 1);
    if (removed == 1 && first.start_offset == start_offset)
        return FALSE;
    first.start_offset = start_offset;
    g_array_remove_range(cache->entries, 0, removed - 1);
    g_array_index(cache->entries, PlogEpochEntry, 0) = first;
    return TRUE;
}

void
plog_epoch_cache_clear(PlogEpochCache *cache)
{
    g_array_set_size(cache->entries, 0);
}

const GArray *
plog_epoch_cache_entries(const PlogEpochCache *cache)
{
    return cache->entries;
}

GString *
plog_epoch_cache_serialize(const PlogEpochCache *cache)
{
    GString *out = g_string_new(FILE_VERSION "\n");
    g_string_append_printf(out, "%u\n", cache->entries->len);
    for (guint i = 0; i < cache->entries->len; i++) {
        const PlogEpochEntry *entry = entry_at(cache, i);
        g_string_append_printf(out, "%" G_GINT32_FORMAT " %" G_GINT64_FORMAT "\n", entry->epoch,
                               entry->start_offset);
    }
    return out;
}

static gboolean
parse_int(const char *text, gint64 max, gint64 *out)
{
    guint64 value;
    if (!g_ascii_string_to_unsigned(text, 10, 0, (guint64)max, &value, NULL))
        return FALSE;
    *out = (gint64)value;
    return TRUE;
}

/* Parses "<epoch> <start_offset>" and appends it if it keeps the order. */
static gboolean
parse_entry(PlogEpochCache *cache, const char *line)
{
    g_auto(GStrv) fields = g_strsplit(line, " ", 3);
    if (g_strv_length(fields) != 2)
        return FALSE;
    gint64 epoch, start_offset;
    if (!parse_int(fields[0], G_MAXINT32, &epoch) ||
        !parse_int(fields[1], G_MAXINT64, &start_offset))
        return FALSE;
    const PlogEpochEntry *last = entry_last(cache);
    if (last != NULL && (last->epoch >= epoch || last->start_offset >= start_offset))
        return FALSE;
    PlogEpochEntry entry = {.epoch = (gint32)epoch, .start_offset = start_offset};
    g_array_append_val(cache->entries, entry);
    return TRUE;
}

static gboolean
parse_lines(PlogEpochCache *cache, char **lines)
{
    guint n = g_strv_length(lines);
    /* version, count, the entries, and the empty string after the last '\n' */
    if (n < 3 || strcmp(lines[0], FILE_VERSION) != 0 || lines[n - 1][0] != '\0')
        return FALSE;
    gint64 count;
    if (!parse_int(lines[1], PLOG_EPOCH_ENTRIES_MAX, &count) || count != (gint64)n - 3)
        return FALSE;
    for (guint i = 0; i < (guint)count; i++) {
        if (!parse_entry(cache, lines[2 + i]))
            return FALSE;
    }
    return TRUE;
}

gboolean
plog_epoch_cache_parse(PlogEpochCache *cache, const char *data, gsize len)
{
    KSIM_ASSERT(data != NULL || len == 0);
    plog_epoch_cache_clear(cache);
    g_autofree char *text = g_strndup(data, len);
    if (strlen(text) != len)
        return FALSE;
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    if (!parse_lines(cache, lines)) {
        plog_epoch_cache_clear(cache);
        return FALSE;
    }
    return TRUE;
}

void
plog_epoch_cache_check_invariants(const PlogEpochCache *cache, gint64 log_start_offset,
                                  gint64 log_end_offset)
{
    KSIM_ASSERT(cache->entries->len <= PLOG_EPOCH_ENTRIES_MAX);
    for (guint i = 0; i < cache->entries->len; i++) {
        const PlogEpochEntry *entry = entry_at(cache, i);
        KSIM_ASSERT(entry->epoch >= 0);
        KSIM_ASSERT(entry->start_offset >= 0);
        if (i > 0)
            KSIM_ASSERT(entry_at(cache, i - 1)->epoch < entry->epoch);
        if (i > 0)
            KSIM_ASSERT(entry_at(cache, i - 1)->start_offset < entry->start_offset);
        if (log_start_offset >= 0)
            KSIM_ASSERT(entry->start_offset >= log_start_offset);
        if (log_end_offset >= 0)
            KSIM_ASSERT(entry->start_offset <= log_end_offset);
    }
}
