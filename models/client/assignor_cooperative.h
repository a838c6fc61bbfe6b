/*
 * assignor_cooperative: the part of cooperative-sticky that follows sticky's
 * assignment (Kafka's CooperativeStickyAssignor, 3.8 to 4.0), and the
 * cooperative check of a result. Private to the assignor: assignor.c calls
 * the first two on its working form, lists of partition ids (pids) per
 * member; the check is public in assignor.h.
 */
#ifndef ASSIGNOR_COOPERATIVE_H
#define ASSIGNOR_COOPERATIVE_H

#include <glib.h>

#include "assignor.h"

/* CooperativeStickyAssignor.computePartitionsTransferringOwnership, for when
 * sticky's general algorithm ran: marks in `transferring` (per pid) each
 * partition assigned to a member that did not claim it while a member that
 * claimed it is not assigned it. `assignment` and `claimed` hold pids per
 * member, `claimed` what each member reported owning, conflicts unsettled. */
void cooperative_transferring_compute(GArray *const *assignment, GArray *const *claimed,
                                      guint n_members, guint32 n_partitions,
                                      gboolean *transferring);

/* CooperativeStickyAssignor.adjustAssignment: takes every partition marked in
 * `transferring` out of the assignment, so that its owner revokes it first. */
void cooperative_withhold(GArray **assignment, guint n_members, guint32 n_partitions,
                          const gboolean *transferring);

#endif
