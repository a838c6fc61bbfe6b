/*
 * kconfig_internal: what the key registry's table (kconfig_registry.c) and the
 * functions over it (kconfig.c) share. Not for other modules: they use kconfig.h.
 */
#ifndef KSIM_KCONFIG_INTERNAL_H
#define KSIM_KCONFIG_INTERNAL_H

#include "kconfig.h"

#define I32 ((gint64)G_MAXINT32)
#define I64 G_MAXINT64
#define MS (G_GINT64_CONSTANT(1000000))
#define SECOND (G_GINT64_CONSTANT(1000000000))
#define MINUTE (60 * SECOND)
#define HOUR (60 * MINUTE)

/* The registry: one static, immutable table, in the order `ksim config` lists it. */
extern const KConfigKey kconfig_registry_table[];
extern const guint kconfig_registry_len;

#endif /* KSIM_KCONFIG_INTERNAL_H */
