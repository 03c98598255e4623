/*
 * entry_private.h — shared between src/model/entry*.c only: the entry's
 * memory carving and the helpers the codec and the checker reuse. Not part
 * of the entry module's public contract (include/entry.h).
 */
#ifndef LUMEN_ENTRY_PRIVATE_H
#define LUMEN_ENTRY_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>

#include "entry.h"

/*
 * A new empty entry whose first chunk has `size` bytes free after the
 * entry's own header (struct entry and its object-class bits), so a caller
 * that sized its contents exactly gets one allocation. LUMEN_ENOMEM.
 */
int entry_new_sized(const struct schema *s, size_t size, struct entry **out);
/* Memory owned by e; NULL on allocation failure. */
void *entry_mem_alloc(struct entry *e, size_t n, size_t align);
/* Copy bytes into e (NUL-terminated if nul). LUMEN_ENOMEM. */
int entry_mem_copy(struct entry *e, struct ber_view in, bool nul, struct ber_view *out);
/* Store dn/ndn (ndn computed when ndn.ptr is NULL). Errors as entry_create. */
int entry_store_dn(struct entry *e, struct ber_view dn, struct ber_view ndn);
/* Recompute class_bits, structural, two_structural, unknown_class. */
void entry_refresh_classes(struct entry *e);
/* Index of the attribute with exactly this description, or -1. */
long entry_attribute_index(const struct entry *e, const struct attribute_description *ad);
/* Option lists equal as case-insensitive sets. */
bool entry_options_equal(struct ber_view a, struct ber_view b);
/*
 * Normalize by the type's equality rule (the value itself without one).
 * LUMEN_ESCHEMA if the rule rejects it, LUMEN_ENOMEM.
 */
int entry_normalize_value(const struct attribute_type *type, struct ber_view value,
			  struct arena *scratch, struct ber_view *out);

#endif
