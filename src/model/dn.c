/*
 * dn.c — normalized DN strings (dn.h): building them from a parsed DN, and
 * the schema-free operations the backend runs on them.
 *
 * The ndn is printed in two passes, measure then write, so it costs exactly
 * one arena allocation (plus a sort array for the rare multi-valued RDN).
 */
#include "dn.h"

#include <string.h>
#include <strings.h>

#include "hex.h"
#include "lumen_error.h"

/* Bytes of a normalized value that the ndn writes as \XX. */
static bool ndn_needs_escape(const uint8_t *v, size_t len, size_t i)
{
	uint8_t c = v[i];

	switch (c) {
	case ',': case '+': case '"': case '\\': case '<': case '>': case ';': case '\0':
		return true;
	case '#':
		return i == 0;
	case ' ':
		return i == 0 || i == len - 1;
	default:
		return false;
	}
}

size_t dn_ndn_value_length(struct ber_view v)
{
	size_t n = v.len;
	for (size_t i = 0; i < v.len; i++)
		if (ndn_needs_escape(v.ptr, v.len, i))
			n += 2;
	return n;
}

char *dn_ndn_write_value(char *out, struct ber_view v)
{
	for (size_t i = 0; i < v.len; i++) {
		if (ndn_needs_escape(v.ptr, v.len, i)) {
			*out++ = '\\';
			out = hex_write_byte(out, v.ptr[i], true);
		} else {
			*out++ = (char)v.ptr[i];
		}
	}
	return out;
}

static char *ndn_write_type(char *out, const struct attribute_type *type)
{
	for (const char *name = attribute_type_name(type); *name != '\0'; name++) {
		char c = *name;
		*out++ = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
	}
	return out;
}

/* The canonical AVA order: type name (case-insensitive), then value bytes. */
static int ava_compare(const struct dn_ava *a, const struct dn_ava *b)
{
	if (a->type != b->type) {
		int c = strcasecmp(attribute_type_name(a->type), attribute_type_name(b->type));
		if (c != 0)
			return c;
	}
	size_t n = a->normalized.len < b->normalized.len ? a->normalized.len : b->normalized.len;
	int c = n > 0 ? memcmp(a->normalized.ptr, b->normalized.ptr, n) : 0;
	if (c != 0)
		return c;
	return (a->normalized.len > b->normalized.len) - (a->normalized.len < b->normalized.len);
}

/*
 * AVAs of one RDN in canonical order. A single AVA needs no array; several
 * are insertion-sorted (DN_MAX_AVAS bounds the cost). LUMEN_EMALFORMED for
 * a repeated AVA, LUMEN_ENOMEM.
 */
static int rdn_sorted(const struct dn_rdn *rdn, struct arena *arena,
		      const struct dn_ava ***sorted)
{
	const struct dn_ava **order = arena_alloc(arena, rdn->n_avas * sizeof(*order));
	if (order == NULL)
		return LUMEN_ENOMEM;
	for (size_t i = 0; i < rdn->n_avas; i++) {
		const struct dn_ava *ava = &rdn->avas[i];
		size_t j = i;
		while (j > 0 && ava_compare(order[j - 1], ava) > 0) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = ava;
	}
	for (size_t i = 1; i < rdn->n_avas; i++)
		if (ava_compare(order[i - 1], order[i]) == 0)
			return LUMEN_EMALFORMED;
	*sorted = order;
	return LUMEN_OK;
}

static size_t ndn_ava_length(const struct dn_ava *ava)
{
	return strlen(attribute_type_name(ava->type)) + 1 + dn_ndn_value_length(ava->normalized);
}

static char *ndn_write_ava(char *out, const struct dn_ava *ava)
{
	out = ndn_write_type(out, ava->type);
	*out++ = '=';
	return dn_ndn_write_value(out, ava->normalized);
}

/*
 * Errors: LUMEN_EMALFORMED (an RDN repeats an AVA), LUMEN_ENOMEM.
 */
int dn_normalize_parsed(const struct dn *dn, struct arena *arena, struct ber_view *ndn)
{
	size_t total = 0;

	ndn->ptr = NULL;
	ndn->len = 0;
	for (size_t i = 0; i < dn->n_rdns; i++)
		for (size_t j = 0; j < dn->rdns[i].n_avas; j++)
			total += ndn_ava_length(&dn->rdns[i].avas[j]) + 1;
	if (total == 0)
		return LUMEN_OK;

	char *buf = arena_alloc(arena, total);
	if (buf == NULL)
		return LUMEN_ENOMEM;
	char *out = buf;
	for (size_t i = 0; i < dn->n_rdns; i++) {
		const struct dn_rdn *rdn = &dn->rdns[i];
		if (i > 0)
			*out++ = ',';
		if (rdn->n_avas == 1) {
			out = ndn_write_ava(out, &rdn->avas[0]);
			continue;
		}
		const struct dn_ava **sorted;
		int rc = rdn_sorted(rdn, arena, &sorted);
		if (rc != LUMEN_OK)
			return rc;
		for (size_t j = 0; j < rdn->n_avas; j++) {
			if (j > 0)
				*out++ = '+';
			out = ndn_write_ava(out, sorted[j]);
		}
	}
	ndn->ptr = (const uint8_t *)buf;
	ndn->len = (size_t)(out - buf);
	return LUMEN_OK;
}

/*
 * A thread's memo of the DNs it normalized last, by their exact bytes and
 * the schema's serial: clients name the same search base, bind DN prefix
 * or group again and again, and parsing and normalizing a DN costs more
 * than the rest of a one-entry search's request handling. Only successes
 * are kept; the oldest slot gives way.
 */
#define DN_MEMO_SLOTS 8
#define DN_MEMO_TEXT 128
#define DN_MEMO_NDN 192

struct dn_memo {
	uint64_t serial;
	uint16_t text_len, ndn_len;
	char text[DN_MEMO_TEXT];
	uint8_t ndn[DN_MEMO_NDN];
};

static _Thread_local struct dn_memo dn_memos[DN_MEMO_SLOTS];
static _Thread_local unsigned dn_memo_next;

/*
 * The parents of the DNs a thread normalized lately, apart from whole DNs:
 * a bind or a compare names a new entry each time, but mostly below the
 * same few parents, so a DN whose parent is here costs the parse of its
 * first RDN alone.
 */
#define PARENT_MEMO_SLOTS 4

static _Thread_local struct dn_memo parent_memos[PARENT_MEMO_SLOTS];
static _Thread_local unsigned parent_memo_next;

static const struct dn_memo *memo_find(const struct dn_memo *memos, size_t n, uint64_t serial,
				       const char *text, size_t len)
{
	if (serial == 0 || len == 0 || len > DN_MEMO_TEXT)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const struct dn_memo *m = &memos[i];
		if (m->serial == serial && m->text_len == len && memcmp(m->text, text, len) == 0)
			return m;
	}
	return NULL;
}

static const struct dn_memo *dn_memo_find(uint64_t serial, const char *text, size_t len)
{
	return memo_find(dn_memos, DN_MEMO_SLOTS, serial, text, len);
}

static void memo_keep(struct dn_memo *m, uint64_t serial, const char *text, size_t len,
		      struct ber_view ndn)
{
	m->serial = serial;
	m->text_len = (uint16_t)len;
	m->ndn_len = (uint16_t)ndn.len;
	memcpy(m->text, text, len);
	if (ndn.len > 0)
		memcpy(m->ndn, ndn.ptr, ndn.len);
}

static void dn_memo_keep(uint64_t serial, const char *text, size_t len, struct ber_view ndn)
{
	if (serial == 0 || len == 0 || len > DN_MEMO_TEXT || ndn.len > DN_MEMO_NDN)
		return;
	memo_keep(&dn_memos[dn_memo_next++ % DN_MEMO_SLOTS], serial, text, len, ndn);
}

/*
 * Where the first RDN of text surely ends: its first comma, when nothing
 * before it can make that comma part of a value (an escape; a quote too,
 * though a DN whose first RDN opens a quote it does not close never
 * parses, since its parent holds balanced quotes: kept as the plain
 * reason the comma is a separator) and
 * the first RDN is not blank (a text of spaces alone parses as the empty
 * DN). Another separator (';', or '+' between AVAs) is left to the whole
 * parse, so the first RDN holds one AVA and the DN's limits (DN_MAX_RDNS,
 * DN_MAX_AVAS) answer as for the whole. 0: no such comma.
 */
static size_t first_rdn_end(const char *text, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		switch (text[i]) {
		case ',':
			return i > 0 && text[i - 1] != ' ' && i + 1 < len ? i : 0;
		case '\\': case '"': case ';': case '+':
			return 0;
		default:
			break;
		}
	}
	return 0;
}

/* The parent's ndn, when the first RDN ends at `comma` and text is whole. */
static void parent_memo_keep(uint64_t serial, const char *text, size_t len, size_t comma,
			     struct ber_view ndn)
{
	struct ber_view first, parent;
	size_t parent_len = len - comma - 1;
	if (serial == 0 || parent_len > DN_MEMO_TEXT)
		return;
	dn_split_first(ndn, &first, &parent);
	if (parent.len == 0 || parent.len > DN_MEMO_NDN ||
	    memo_find(parent_memos, PARENT_MEMO_SLOTS, serial, text + comma + 1, parent_len))
		return;
	memo_keep(&parent_memos[parent_memo_next++ % PARENT_MEMO_SLOTS], serial,
		  text + comma + 1, parent_len, parent);
}

/* The first RDN parsed alone, then the parent's ndn from its memo. */
static int normalize_below_parent(const struct schema *s, const struct dn_memo *parent,
				  const char *text, size_t comma, struct arena *arena,
				  struct ber_view *ndn)
{
	struct dn first;
	struct ber_view first_ndn;
	int rc = dn_parse(s, text, comma, arena, &first);
	if (rc == LUMEN_OK)
		rc = dn_normalize_parsed(&first, arena, &first_ndn);
	if (rc != LUMEN_OK)
		return rc;
	uint8_t *out = arena_alloc(arena, first_ndn.len + 1 + parent->ndn_len);
	if (out == NULL)
		return LUMEN_ENOMEM;
	memcpy(out, first_ndn.ptr, first_ndn.len);
	out[first_ndn.len] = ',';
	memcpy(out + first_ndn.len + 1, parent->ndn, parent->ndn_len);
	*ndn = (struct ber_view){ out, first_ndn.len + 1 + parent->ndn_len };
	return LUMEN_OK;
}

/* Errors: those of dn_parse and dn_normalize_parsed. */
int dn_normalize(const struct schema *s, const char *text, size_t len,
		 struct arena *arena, struct ber_view *ndn)
{
	uint64_t serial = schema_serial(s);
	const struct dn_memo *m = dn_memo_find(serial, text, len);
	ndn->ptr = NULL;
	ndn->len = 0;
	if (m != NULL) {
		if (m->ndn_len == 0)
			return LUMEN_OK;
		uint8_t *copy = arena_alloc(arena, m->ndn_len);
		if (copy == NULL)
			return LUMEN_ENOMEM;
		memcpy(copy, m->ndn, m->ndn_len);
		*ndn = (struct ber_view){ copy, m->ndn_len };
		return LUMEN_OK;
	}
	size_t comma = first_rdn_end(text, len);
	const struct dn_memo *parent = comma == 0 ? NULL
				       : memo_find(parent_memos, PARENT_MEMO_SLOTS, serial,
						   text + comma + 1, len - comma - 1);
	int rc;
	if (parent != NULL) {
		rc = normalize_below_parent(s, parent, text, comma, arena, ndn);
	} else {
		struct dn dn;
		rc = dn_parse(s, text, len, arena, &dn);
		if (rc == LUMEN_OK)
			rc = dn_normalize_parsed(&dn, arena, ndn);
		if (rc == LUMEN_OK && comma != 0)
			parent_memo_keep(serial, text, len, comma, *ndn);
	}
	if (rc == LUMEN_OK)
		dn_memo_keep(serial, text, len, *ndn);
	return rc;
}

/* ----------------------------------------------- operations on ndn strings */

/*
 * A separator at position i is escaped iff an odd run of backslashes comes
 * right before it (each backslash escapes the character after it).
 */
static bool is_escaped(const uint8_t *s, size_t i)
{
	size_t run = 0;
	while (i > run && s[i - run - 1] == '\\')
		run++;
	return run % 2 == 1;
}

void dn_split_first(struct ber_view ndn, struct ber_view *rdn, struct ber_view *parent)
{
	for (size_t i = 0; i < ndn.len; i++) {
		if (ndn.ptr[i] == '\\') {
			i++; /* the escaped character (or first hex digit) is never a separator */
			continue;
		}
		if (ndn.ptr[i] == ',') {
			rdn->ptr = ndn.ptr;
			rdn->len = i;
			parent->ptr = ndn.ptr + i + 1;
			parent->len = ndn.len - i - 1;
			return;
		}
	}
	*rdn = ndn;
	parent->ptr = ndn.ptr != NULL ? ndn.ptr + ndn.len : NULL;
	parent->len = 0;
}

bool dn_is_within(struct ber_view ndn, struct ber_view suffix)
{
	if (suffix.len == 0)
		return true;
	if (ndn.len < suffix.len)
		return false;
	size_t offset = ndn.len - suffix.len;
	if (memcmp(ndn.ptr + offset, suffix.ptr, suffix.len) != 0)
		return false;
	if (offset == 0)
		return true;
	return offset >= 2 && ndn.ptr[offset - 1] == ',' && !is_escaped(ndn.ptr, offset - 1);
}

bool dn_in_scope(struct ber_view ndn, struct ber_view base, enum ldap_scope scope)
{
	struct ber_view rdn, parent;
	switch (scope) {
	case LDAP_SCOPE_BASE:
		return ber_view_eq(ndn, base);
	case LDAP_SCOPE_ONE:
		if (ndn.len == 0)
			return false;
		dn_split_first(ndn, &rdn, &parent);
		return ber_view_eq(parent, base);
	case LDAP_SCOPE_SUBTREE:
		return dn_is_within(ndn, base);
	case LDAP_SCOPE_CHILDREN:
		return dn_is_within(ndn, base) && !ber_view_eq(ndn, base);
	}
	return false;
}

size_t dn_rdn_count(struct ber_view ndn)
{
	size_t count = ndn.len > 0 ? 1 : 0;

	for (size_t i = 0; i < ndn.len; i++) {
		if (ndn.ptr[i] == '\\')
			i++;
		else if (ndn.ptr[i] == ',')
			count++;
	}
	return count;
}
