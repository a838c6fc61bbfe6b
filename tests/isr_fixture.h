/* isr_fixture: tests that write history events by hand name small ISRs as
 * bit masks (bit i: broker i); isr_of_mask turns one into the history's ISR
 * set id (HistoryEvent.isr). */
#ifndef ISR_FIXTURE_H
#define ISR_FIXTURE_H

#include "history.h"

static inline guint32
isr_of_mask(History *h, guint32 mask)
{
    gint32 members[HISTORY_ISR_MAX];
    guint n = 0;
    for (gint32 id = 0; id < 32 && n < HISTORY_ISR_MAX; id++) {
        if (mask & (1u << id))
            members[n++] = id;
    }
    return history_isr_intern(h, members, n);
}

#endif
