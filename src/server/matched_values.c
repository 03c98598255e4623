/*
 * matched_values.c — the ValuesReturnFilter and the values it keeps
 * (matched_values.h).
 */
#include "matched_values.h"

#include <string.h>

#include "entry_send.h"
#include "lumen_error.h"

/* Scratch for normalizing one value: a bound, not a reservation. */
#define MATCHED_VALUES_SCRATCH (1u << 20)

/* SimpleFilterItem's CHOICE: Filter's tags 3..9 in their own forms. */
static bool is_simple_item(ber_tag_t tag)
{
	static const ber_tag_t tags[] = {
		BER_TAG_CONTEXT_CONS(3), BER_TAG_CONTEXT_CONS(4), BER_TAG_CONTEXT_CONS(5),
		BER_TAG_CONTEXT_CONS(6), BER_TAG_CONTEXT(7),      BER_TAG_CONTEXT_CONS(8),
		BER_TAG_CONTEXT_CONS(9),
	};
	for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++)
		if (tag == tags[i])
			return true;
	return false;
}

static int decode_item(struct ber_reader *list, const struct schema *schema,
		       struct arena *arena, struct filter *out)
{
	struct ldap_decode_limits one = { .max_filter_depth = 0, .max_filter_nodes = 1,
					  .max_elements = 1 };
	struct filter_limits fl = { 0, 1 };
	struct ldap_filter *decoded;
	struct ber_element skipped;
	const char *why = NULL;
	ber_tag_t tag;
	int rc = ber_peek_tag(list, &tag);
	if (rc != LUMEN_OK)
		return LUMEN_EMALFORMED;
	if (!is_simple_item(tag)) {
		memset(out, 0, sizeof(*out));   /* a root of NULL never matches */
		return ber_read_element(list, &skipped) == LUMEN_OK ? LUMEN_OK : LUMEN_EMALFORMED;
	}
	rc = ldap_filter_decode(list, arena, &one, &decoded, &why);
	if (rc == LUMEN_OK)
		rc = filter_compile(schema, decoded, &fl, arena, out);
	return rc == LUMEN_ENOMEM ? rc : rc != LUMEN_OK ? LUMEN_EMALFORMED : LUMEN_OK;
}

int values_return_filter_decode(struct ber_view value, const struct schema *schema,
				const struct ldap_decode_limits *limits, struct arena *arena,
				struct values_return_filter *out)
{
	struct ber_reader outer, list, counter;
	struct ber_element element;
	size_t n = 0;
	memset(out, 0, sizeof(*out));
	ber_reader_init(&outer, value.ptr, value.len);
	if (ber_enter(&outer, BER_TAG_SEQUENCE, &list) != LUMEN_OK || !ber_reader_at_end(&outer))
		return LUMEN_EMALFORMED;
	for (counter = list; !ber_reader_at_end(&counter); n++)
		if (ber_read_element(&counter, &element) != LUMEN_OK)
			return LUMEN_EMALFORMED;
		else if (n >= limits->max_elements)
			return LUMEN_ELIMIT;
	out->items = arena_calloc(arena, n ? n : 1, sizeof(*out->items));
	if (out->items == NULL)
		return LUMEN_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		int rc = decode_item(&list, schema, arena, &out->items[i]);
		if (rc != LUMEN_OK)
			return rc;
	}
	out->n_items = n;
	return LUMEN_OK;
}

void matched_values_begin(struct matched_values *mv, const struct values_return_filter *filter)
{
	mv->filter = filter;
	arena_init(&mv->scratch, MATCHED_VALUES_SCRATCH);
}

void matched_values_select(struct matched_values *mv, struct attribute_selection *sel)
{
	if (mv->filter == NULL || mv->filter->n_items == 0 || sel->types_only)
		return;
	sel->keep_value = matched_values_keep;
	sel->keep_value_arg = mv;
}

bool matched_values_keep(void *arg, const struct entry_attribute *a, size_t i)
{
	struct matched_values *mv = arg;
	const struct values_return_filter *f = mv->filter;
	for (size_t k = 0; k < f->n_items; k++) {
		bool keep = false;
		if (f->items[k].root == NULL)
			continue;
		arena_reset(&mv->scratch);
		/* out of scratch: the value is not shown (fail closed) */
		if (filter_item_keeps_value(&f->items[k], f->items[k].root, a, i, &mv->scratch,
					    &keep) == LUMEN_OK && keep)
			return true;
	}
	return false;
}

void matched_values_end(struct matched_values *mv)
{
	arena_free(&mv->scratch);
}
