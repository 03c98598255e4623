/*
 * entry_send.c — attribute selection and SearchResultEntry encoding
 * (entry_send.h).
 */
#include "entry_send.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ldap_message.h"
#include "lumen_error.h"
#include "subschema.h"

/* Schema names of the computed attributes, in enum computed_attribute order. */
static const char *const computed_names[COMPUTED_ATTRIBUTE_COUNT] = {
	"entryDN", "subschemaSubentry", "hasSubordinates", "numSubordinates",
};

static bool is_name(struct ber_view name, const char *literal)
{
	return ber_view_eq_str(name, literal);
}

/* Entries a name contributes to `wanted`: one, or a class's MUST and MAY. */
static size_t wanted_count(const struct schema *schema, struct ber_view name)
{
	if (name.len > 1 && name.ptr[0] == '@') {
		const struct object_class *oc =
			schema_object_class(schema, (const char *)name.ptr + 1, name.len - 1);
		return oc != NULL ? oc->n_must + oc->n_may : 0;
	}
	return 1;
}

/* Add what one requested name selects; unknown names select nothing. */
static void add_wanted(struct attribute_selection *sel, const struct schema *schema,
		       struct ber_view name)
{
	if (is_name(name, "*")) {
		sel->all_user = true;
	} else if (is_name(name, "+")) {
		sel->all_operational = true;
	} else if (is_name(name, "1.1")) {
		/* "no attributes": selects nothing, even next to other names */
	} else if (name.len > 1 && name.ptr[0] == '@') {
		const struct object_class *oc =
			schema_object_class(schema, (const char *)name.ptr + 1, name.len - 1);
		for (size_t i = 0; oc != NULL && i < oc->n_must; i++)
			sel->wanted[sel->n_wanted++] =
				(struct attribute_description){ oc->must[i], { NULL, 0 } };
		for (size_t i = 0; oc != NULL && i < oc->n_may; i++)
			sel->wanted[sel->n_wanted++] =
				(struct attribute_description){ oc->may[i], { NULL, 0 } };
	} else {
		struct attribute_description ad;
		if (attribute_description_parse(schema, (const char *)name.ptr, name.len, &ad) ==
		    LUMEN_OK)
			sel->wanted[sel->n_wanted++] = ad;
	}
}

/* Is a stored or computed attribute `have` selected? */
static bool is_selected(const struct attribute_selection *sel,
			const struct attribute_description *have)
{
	if (attribute_type_is_operational(have->type) ? sel->all_operational : sel->all_user)
		return true;
	for (size_t i = 0; i < sel->n_wanted; i++)
		if (attribute_description_matches(&sel->wanted[i], have))
			return true;
	return false;
}

/* The computed attributes' types of the schema this thread saw last (by
 * serial, which no later schema reuses): every search needs all four. */
static _Thread_local struct {
	uint64_t serial;
	const struct attribute_type *types[COMPUTED_ATTRIBUTE_COUNT];
} computed_memo;

static void computed_types(const struct schema *schema,
			   const struct attribute_type *out[COMPUTED_ATTRIBUTE_COUNT])
{
	uint64_t serial = schema_serial(schema);
	if (serial == 0 || computed_memo.serial != serial) {
		for (int c = 0; c < COMPUTED_ATTRIBUTE_COUNT; c++)
			computed_memo.types[c] = schema_attribute_type(schema, computed_names[c],
								       strlen(computed_names[c]));
		computed_memo.serial = serial;
	}
	memcpy(out, computed_memo.types, sizeof(computed_memo.types));
}

int attribute_selection_init(struct attribute_selection *sel, const struct schema *schema,
			     const struct ber_view *names, size_t n_names, bool types_only,
			     struct arena *arena)
{
	size_t capacity = 0;
	memset(sel, 0, sizeof(*sel));
	sel->types_only = types_only;
	sel->all_user = n_names == 0;
	for (size_t i = 0; i < n_names; i++)
		capacity += wanted_count(schema, names[i]);
	if (capacity > 0) {
		sel->wanted = arena_calloc(arena, capacity, sizeof(*sel->wanted));
		if (sel->wanted == NULL)
			return LUMEN_ENOMEM;
	}
	for (size_t i = 0; i < n_names; i++)
		add_wanted(sel, schema, names[i]);
	computed_types(schema, sel->computed_type);
	for (int c = 0; c < COMPUTED_ATTRIBUTE_COUNT; c++) {
		const struct attribute_type *at = sel->computed_type[c];
		struct attribute_description have = { at, { NULL, 0 } };
		sel->computed[c] = at != NULL && is_selected(sel, &have);
	}
	return LUMEN_OK;
}

bool attribute_selection_wants_counts(const struct attribute_selection *sel)
{
	return sel->computed[COMPUTED_HAS_SUBORDINATES] || sel->computed[COMPUTED_NUM_SUBORDINATES];
}

/* One PartialAttribute with a single value (or none when types only). */
static void write_single(const struct attribute_selection *sel, enum computed_attribute c,
			 const void *value, size_t len, struct ber_writer *w)
{
	const char *name = attribute_type_name(sel->computed_type[c]);
	ber_begin(w, BER_TAG_SEQUENCE);
	ber_write_octets(w, BER_TAG_OCTET_STRING, name, strlen(name));
	ber_begin(w, BER_TAG_SET);
	if (!sel->types_only)
		ber_write_octets(w, BER_TAG_OCTET_STRING, value, len);
	ber_end(w);
	ber_end(w);
}

/* Access control's say on one attribute type (acl.h via the search). */
static bool readable(const struct attribute_selection *sel, const struct attribute_type *type)
{
	return sel->may_read == NULL || sel->may_read(sel->may_read_arg, type);
}

/* A computed attribute selected and readable. */
static bool computed_wanted(const struct attribute_selection *sel, enum computed_attribute c)
{
	return sel->computed[c] && readable(sel, sel->computed_type[c]);
}

static void write_computed(const struct attribute_selection *sel, struct ber_view dn,
			   const struct backend_entry_info *info, struct ber_writer *w)
{
	if (info != NULL && (info->complete || info->dn_only))
		return;
	if (computed_wanted(sel, COMPUTED_ENTRY_DN))
		write_single(sel, COMPUTED_ENTRY_DN, dn.ptr, dn.len, w);
	if (computed_wanted(sel, COMPUTED_SUBSCHEMA_SUBENTRY))
		write_single(sel, COMPUTED_SUBSCHEMA_SUBENTRY, SUBSCHEMA_DN,
			     strlen(SUBSCHEMA_DN), w);
	if (info == NULL || !info->has_counts)
		return;
	if (computed_wanted(sel, COMPUTED_HAS_SUBORDINATES)) {
		const char *truth = info->has_subordinates ? "TRUE" : "FALSE";
		write_single(sel, COMPUTED_HAS_SUBORDINATES, truth, strlen(truth), w);
	}
	if (computed_wanted(sel, COMPUTED_NUM_SUBORDINATES)) {
		char count[24];
		int n = snprintf(count, sizeof(count), "%" PRIu64, info->num_subordinates);
		write_single(sel, COMPUTED_NUM_SUBORDINATES, count, (size_t)n, w);
	}
}

/* The values of a that sel->keep_value keeps; nothing when none is. */
static void write_kept_values(const struct attribute_selection *sel,
			      const struct entry_attribute *a, struct ber_writer *w)
{
	size_t first = 0;
	while (first < a->n_values && !sel->keep_value(sel->keep_value_arg, a, first))
		first++;
	if (first == a->n_values)
		return;
	ber_begin(w, BER_TAG_SEQUENCE);
	ber_write_octets(w, BER_TAG_OCTET_STRING, a->name.ptr, a->name.len);
	ber_begin(w, BER_TAG_SET);
	for (size_t i = first; i < a->n_values; i++)
		if (i == first || sel->keep_value(sel->keep_value_arg, a, i))
			ber_write_octets(w, BER_TAG_OCTET_STRING, a->values[i].value.ptr,
					 a->values[i].value.len);
	ber_end(w);
	ber_end(w);
}

/* typesOnly: the description with an empty value set. */
static void write_type_only(struct ber_view name, struct ber_writer *w)
{
	ber_begin(w, BER_TAG_SEQUENCE);
	ber_write_octets(w, BER_TAG_OCTET_STRING, name.ptr, name.len);
	ber_begin(w, BER_TAG_SET);
	ber_end(w);
	ber_end(w);
}

static void write_attribute(const struct attribute_selection *sel,
			    const struct entry_attribute *a, struct ber_writer *w)
{
	if (!sel->types_only && sel->keep_value != NULL) {
		write_kept_values(sel, a, w);
		return;
	}
	if (!sel->types_only)
		entry_attribute_write(a, w);   /* a memcpy when `encoded` is fresh */
	else
		write_type_only(a->name, w);
}

/* A partial entry's attributes as stored: the values are not decoded, so
 * there is nothing for keep_value to look at (the search reads entries
 * whole when it is set). */
static void write_outline(const struct attribute_selection *sel, const struct entry *e,
			  struct ber_writer *w)
{
	for (size_t i = 0; i < e->n_outline; i++) {
		const struct entry_outline_attribute *a = &e->outline[i];
		if (!is_selected(sel, &a->desc) || !readable(sel, a->desc.type))
			continue;
		if (sel->types_only)
			write_type_only(a->name, w);
		else
			ber_write_raw(w, a->encoded.ptr, a->encoded.len);
	}
}

void entry_send_body(const struct attribute_selection *sel, const struct entry *e,
		     const struct backend_entry_info *info, struct ber_writer *w)
{
	struct ber_view dn = info != NULL ? info->dn : e->dn;
	bool dn_only = info != NULL && info->dn_only;
	ber_begin(w, BER_TAG_APP_CONS(LDAP_OP_SEARCH_ENTRY));
	ber_write_octets(w, BER_TAG_OCTET_STRING, dn.ptr, dn.len);
	ber_begin(w, BER_TAG_SEQUENCE);
	/* The search asks for an outline only where keep_value is unset;
	 * with both, the decoded attributes are all there is to test. */
	bool from_outline = e->outline != NULL && sel->keep_value == NULL;
	if (from_outline && !dn_only)
		write_outline(sel, e, w);
	for (size_t i = 0; i < e->n_attributes && !from_outline && !dn_only; i++) {
		const struct entry_attribute *a = &e->attributes[i];
		if (a->desc.type != NULL && is_selected(sel, &a->desc) &&
		    readable(sel, a->desc.type))
			write_attribute(sel, a, w);
	}
	write_computed(sel, dn, info, w);
	ber_end(w);
	ber_end(w);
}

void entry_send_message(const struct attribute_selection *sel, const struct entry *e,
			const struct backend_entry_info *info, int32_t message_id,
			struct ber_writer *w)
{
	ber_begin(w, BER_TAG_SEQUENCE);
	ber_write_integer(w, BER_TAG_INTEGER, message_id);
	entry_send_body(sel, e, info, w);
	if (info != NULL)
		ldap_encode_controls(w, info->controls, info->n_controls);
	ber_end(w);
}
