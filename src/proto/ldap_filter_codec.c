/*
 * ldap_filter_codec.c — the RFC 4511 Filter CHOICE in BER, both directions
 * (ldap_message.h: ldap_filter_decode, ldap_filter_encode).
 *
 * Decoding is recursive, so depth (AND/OR/NOT nesting) and the total number
 * of nodes are checked before each node is allocated: a hostile filter can
 * cost at most max_filter_nodes nodes and max_filter_depth stack frames.
 */
#include "ldap_message.h"

#include <string.h>

struct filter_decoder {
	struct arena *arena;
	const struct ldap_decode_limits *limits;
	size_t nodes;
	size_t elements; /* substring "any" pieces */
	const char *diagnostic;
};

static int fail(struct filter_decoder *d, int rc, const char *why)
{
	return ber_fail(&d->diagnostic, rc, why);
}

static int expect_end(struct filter_decoder *d, const struct ber_reader *r, const char *why)
{
	return ber_expect_end(&d->diagnostic, r, why);
}

static int decode_node(struct filter_decoder *d, struct ber_reader *r,
		       unsigned depth, struct ldap_filter **out);

/* AND and OR: a SET OF Filter, possibly empty (RFC 4526 absolute true/false). */
static int decode_set(struct filter_decoder *d, struct ber_view contents,
		      unsigned depth, struct ldap_filter *f)
{
	struct ber_reader inner;
	struct ldap_filter **tail = &f->u.children;
	ber_reader_init(&inner, contents.ptr, contents.len);
	while (!ber_reader_at_end(&inner)) {
		int rc = decode_node(d, &inner, depth + 1, tail);
		if (rc != LUMEN_OK)
			return rc;
		tail = &(*tail)->next;
	}
	return LUMEN_OK;
}

static int decode_not(struct filter_decoder *d, struct ber_view contents,
		      unsigned depth, struct ldap_filter *f)
{
	struct ber_reader inner;
	ber_reader_init(&inner, contents.ptr, contents.len);
	int rc = decode_node(d, &inner, depth + 1, &f->u.child);
	if (rc != LUMEN_OK)
		return rc;
	return expect_end(d, &inner, "not filter holds more than one filter");
}

/* AttributeValueAssertion ::= SEQUENCE { attributeDesc, assertionValue } */
static int decode_ava(struct filter_decoder *d, struct ber_view contents,
		      unsigned depth, struct ldap_filter *f)
{
	(void)depth;
	struct ber_reader inner;
	ber_reader_init(&inner, contents.ptr, contents.len);
	int rc = ber_read_octets(&inner, BER_TAG_OCTET_STRING, &f->u.ava.attr);
	if (rc == LUMEN_OK)
		rc = ber_read_octets(&inner, BER_TAG_OCTET_STRING, &f->u.ava.value);
	if (rc != LUMEN_OK)
		return fail(d, rc, "bad attribute value assertion in filter");
	return expect_end(d, &inner, "trailing data in attribute value assertion");
}

static int decode_present(struct filter_decoder *d, struct ber_view contents,
			  unsigned depth, struct ldap_filter *f)
{
	(void)d;
	(void)depth;
	f->u.present = contents;
	return LUMEN_OK;
}

enum { SUBSTRING_INITIAL = 0, SUBSTRING_ANY = 1, SUBSTRING_FINAL = 2 };

/*
 * One pass over the pieces: checks their order (initial at most once and
 * first, final at most once and last) and either counts the "any" pieces
 * (any == NULL) or stores them.
 */
static int walk_substrings(struct filter_decoder *d, struct ber_view pieces,
			   struct ldap_filter *f, struct ber_view *any, size_t *n_any)
{
	struct ber_reader r;
	size_t count = 0, seen = 0;
	bool final_seen = false;
	ber_reader_init(&r, pieces.ptr, pieces.len);
	while (!ber_reader_at_end(&r)) {
		struct ber_element el;
		int rc = ber_read_element(&r, &el);
		if (rc != LUMEN_OK)
			return fail(d, rc, "bad substring in filter");
		if (BER_TAG_CLASS(el.tag) != BER_CLASS_CONTEXT || BER_TAG_CONSTRUCTED(el.tag) ||
		    BER_TAG_NUMBER(el.tag) > SUBSTRING_FINAL)
			return fail(d, LUMEN_EMALFORMED, "unknown substring choice in filter");
		unsigned kind = BER_TAG_NUMBER(el.tag);
		if (final_seen)
			return fail(d, LUMEN_EMALFORMED, "substring after final in filter");
		if (kind == SUBSTRING_INITIAL) {
			if (seen > 0)
				return fail(d, LUMEN_EMALFORMED, "initial substring not first in filter");
			f->u.substrings.has_initial = true;
			f->u.substrings.initial = el.value;
		} else if (kind == SUBSTRING_FINAL) {
			final_seen = true;
			f->u.substrings.has_final = true;
			f->u.substrings.final = el.value;
		} else {
			if (any != NULL)
				any[count] = el.value;
			count++;
		}
		seen++;
	}
	if (seen == 0)
		return fail(d, LUMEN_EMALFORMED, "substring filter without substrings");
	*n_any = count;
	return LUMEN_OK;
}

/* SubstringFilter ::= SEQUENCE { type, substrings SEQUENCE SIZE (1..MAX) OF CHOICE } */
static int decode_substrings(struct filter_decoder *d, struct ber_view contents,
			     unsigned depth, struct ldap_filter *f)
{
	(void)depth;
	struct ber_reader inner;
	struct ber_view pieces;
	size_t n_any;
	ber_reader_init(&inner, contents.ptr, contents.len);
	int rc = ber_read_octets(&inner, BER_TAG_OCTET_STRING, &f->u.substrings.attr);
	if (rc == LUMEN_OK)
		rc = ber_read_octets(&inner, BER_TAG_SEQUENCE, &pieces);
	if (rc != LUMEN_OK)
		return fail(d, rc, "bad substring filter");
	if (!ber_reader_at_end(&inner))
		return fail(d, LUMEN_EMALFORMED, "trailing data in substring filter");
	rc = walk_substrings(d, pieces, f, NULL, &n_any);
	if (rc != LUMEN_OK || n_any == 0)
		return rc;
	d->elements += n_any;
	if (d->elements > d->limits->max_elements)
		return fail(d, LUMEN_ELIMIT, "too many substrings in filter");
	f->u.substrings.any = arena_alloc(d->arena, n_any * sizeof(struct ber_view));
	if (f->u.substrings.any == NULL)
		return fail(d, LUMEN_ENOMEM, "out of memory decoding filter");
	f->u.substrings.n_any = n_any;
	return walk_substrings(d, pieces, f, f->u.substrings.any, &n_any);
}

/*
 * MatchingRuleAssertion ::= SEQUENCE { matchingRule [1] OPTIONAL,
 *   type [2] OPTIONAL, matchValue [3], dnAttributes [4] BOOLEAN DEFAULT FALSE }
 */
static int decode_extensible(struct filter_decoder *d, struct ber_view contents,
			     unsigned depth, struct ldap_filter *f)
{
	(void)depth;
	struct ber_reader inner;
	ber_tag_t tag;
	int rc = LUMEN_OK;
	ber_reader_init(&inner, contents.ptr, contents.len);
	if (ber_peek_tag(&inner, &tag) == LUMEN_OK && tag == BER_TAG_CONTEXT(1)) {
		f->u.extensible.has_rule = true;
		rc = ber_read_octets(&inner, tag, &f->u.extensible.rule);
	}
	if (rc == LUMEN_OK && ber_peek_tag(&inner, &tag) == LUMEN_OK && tag == BER_TAG_CONTEXT(2)) {
		f->u.extensible.has_attr = true;
		rc = ber_read_octets(&inner, tag, &f->u.extensible.attr);
	}
	if (rc == LUMEN_OK)
		rc = ber_read_octets(&inner, BER_TAG_CONTEXT(3), &f->u.extensible.value);
	if (rc == LUMEN_OK && !ber_reader_at_end(&inner))
		rc = ber_read_boolean(&inner, BER_TAG_CONTEXT(4), &f->u.extensible.dn_attributes);
	if (rc != LUMEN_OK)
		return fail(d, rc, "bad extensible match filter");
	rc = expect_end(d, &inner, "trailing data in extensible match filter");
	if (rc != LUMEN_OK)
		return rc;
	/* RFC 4511 §4.5.1.7.7: without a rule there must be a type. */
	if (!f->u.extensible.has_rule && !f->u.extensible.has_attr)
		return fail(d, LUMEN_EMALFORMED, "extensible match without rule or type");
	return LUMEN_OK;
}

struct filter_choice {
	bool constructed;
	bool nests; /* counts towards max_filter_depth */
	int (*decode)(struct filter_decoder *d, struct ber_view contents,
		      unsigned depth, struct ldap_filter *f);
};

/* Indexed by enum ldap_filter_type (the context tag number). */
static const struct filter_choice filter_choices[] = {
	[LDAP_FILTER_AND] = { true, true, decode_set },
	[LDAP_FILTER_OR] = { true, true, decode_set },
	[LDAP_FILTER_NOT] = { true, true, decode_not },
	[LDAP_FILTER_EQUALITY] = { true, false, decode_ava },
	[LDAP_FILTER_SUBSTRINGS] = { true, false, decode_substrings },
	[LDAP_FILTER_GREATER_OR_EQUAL] = { true, false, decode_ava },
	[LDAP_FILTER_LESS_OR_EQUAL] = { true, false, decode_ava },
	[LDAP_FILTER_PRESENT] = { false, false, decode_present },
	[LDAP_FILTER_APPROX] = { true, false, decode_ava },
	[LDAP_FILTER_EXTENSIBLE] = { true, false, decode_extensible },
};

#define FILTER_CHOICES (sizeof(filter_choices) / sizeof(filter_choices[0]))

/* depth: the number of AND/OR/NOT nodes enclosing this one. */
static int decode_node(struct filter_decoder *d, struct ber_reader *r,
		       unsigned depth, struct ldap_filter **out)
{
	struct ber_element el;
	int rc = ber_read_element(r, &el);
	if (rc != LUMEN_OK)
		return fail(d, rc, "bad filter element");
	uint32_t number = BER_TAG_NUMBER(el.tag);
	if (BER_TAG_CLASS(el.tag) != BER_CLASS_CONTEXT || number >= FILTER_CHOICES ||
	    BER_TAG_CONSTRUCTED(el.tag) != filter_choices[number].constructed)
		return fail(d, LUMEN_EMALFORMED, "unknown filter choice");
	const struct filter_choice *choice = &filter_choices[number];
	if (choice->nests && depth + 1 > d->limits->max_filter_depth)
		return fail(d, LUMEN_ELIMIT, "filter nested too deeply");
	if (++d->nodes > d->limits->max_filter_nodes)
		return fail(d, LUMEN_ELIMIT, "filter has too many terms");
	struct ldap_filter *f = arena_calloc(d->arena, 1, sizeof(*f));
	if (f == NULL)
		return fail(d, LUMEN_ENOMEM, "out of memory decoding filter");
	f->type = (enum ldap_filter_type)number;
	*out = f;
	return choice->decode(d, el.value, depth, f);
}

int ldap_filter_decode(struct ber_reader *r, struct arena *arena,
		       const struct ldap_decode_limits *limits,
		       struct ldap_filter **out, const char **diagnostic)
{
	struct ldap_decode_limits defaults;
	if (limits == NULL) {
		ldap_decode_limits_default(&defaults);
		limits = &defaults;
	}
	struct filter_decoder d = { .arena = arena, .limits = limits };
	struct ber_reader saved = *r;
	*out = NULL;
	int rc = decode_node(&d, r, 0, out);
	/* The filter sits inside a complete value, so running short is malformed. */
	if (rc == LUMEN_EINCOMPLETE)
		rc = LUMEN_EMALFORMED;
	if (rc != LUMEN_OK) {
		*r = saved;
		*out = NULL;
		if (diagnostic != NULL)
			*diagnostic = d.diagnostic;
	}
	return rc;
}

/* ---------------------------------------------------------------- encode */

static void encode_ava(struct ber_writer *w, const struct ldap_filter *f)
{
	ber_write_octets(w, BER_TAG_OCTET_STRING, f->u.ava.attr.ptr, f->u.ava.attr.len);
	ber_write_octets(w, BER_TAG_OCTET_STRING, f->u.ava.value.ptr, f->u.ava.value.len);
}

static void encode_substrings(struct ber_writer *w, const struct ldap_filter *f)
{
	ber_write_octets(w, BER_TAG_OCTET_STRING, f->u.substrings.attr.ptr,
			 f->u.substrings.attr.len);
	ber_begin(w, BER_TAG_SEQUENCE);
	if (f->u.substrings.has_initial)
		ber_write_octets(w, BER_TAG_CONTEXT(SUBSTRING_INITIAL),
				 f->u.substrings.initial.ptr, f->u.substrings.initial.len);
	for (size_t i = 0; i < f->u.substrings.n_any; i++)
		ber_write_octets(w, BER_TAG_CONTEXT(SUBSTRING_ANY), f->u.substrings.any[i].ptr,
				 f->u.substrings.any[i].len);
	if (f->u.substrings.has_final)
		ber_write_octets(w, BER_TAG_CONTEXT(SUBSTRING_FINAL), f->u.substrings.final.ptr,
				 f->u.substrings.final.len);
	ber_end(w);
}

static void encode_extensible(struct ber_writer *w, const struct ldap_filter *f)
{
	if (f->u.extensible.has_rule)
		ber_write_octets(w, BER_TAG_CONTEXT(1), f->u.extensible.rule.ptr,
				 f->u.extensible.rule.len);
	if (f->u.extensible.has_attr)
		ber_write_octets(w, BER_TAG_CONTEXT(2), f->u.extensible.attr.ptr,
				 f->u.extensible.attr.len);
	ber_write_octets(w, BER_TAG_CONTEXT(3), f->u.extensible.value.ptr,
			 f->u.extensible.value.len);
	/* DEFAULT FALSE is left out, as DER would. */
	if (f->u.extensible.dn_attributes)
		ber_write_boolean(w, BER_TAG_CONTEXT(4), true);
}

void ldap_filter_encode(struct ber_writer *w, const struct ldap_filter *f)
{
	/* Stop recursing once poisoned: nesting beyond the writer's bound ends here. */
	if (ber_writer_error(w) != LUMEN_OK)
		return;
	if (f == NULL || (unsigned)f->type >= FILTER_CHOICES) {
		if (w->error == LUMEN_OK)
			w->error = LUMEN_EINVAL;
		return;
	}
	if (f->type == LDAP_FILTER_PRESENT) {
		ber_write_octets(w, BER_TAG_CONTEXT(LDAP_FILTER_PRESENT), f->u.present.ptr,
				 f->u.present.len);
		return;
	}
	ber_begin(w, BER_TAG_CONTEXT_CONS(f->type));
	switch (f->type) {
	case LDAP_FILTER_AND:
	case LDAP_FILTER_OR:
		for (const struct ldap_filter *c = f->u.children; c != NULL; c = c->next)
			ldap_filter_encode(w, c);
		break;
	case LDAP_FILTER_NOT:
		ldap_filter_encode(w, f->u.child);
		break;
	case LDAP_FILTER_SUBSTRINGS:
		encode_substrings(w, f);
		break;
	case LDAP_FILTER_EXTENSIBLE:
		encode_extensible(w, f);
		break;
	default:
		encode_ava(w, f);
		break;
	}
	ber_end(w);
}
