/*
 * overlay_unique.c — attribute uniqueness (overlay_unique.h; OpenLDAP's
 * unique overlay): an add, modify or rename that would give an attribute
 * a value another entry in a unique_uri's scope (and filter) already
 * holds is refused with constraintViolation, and nothing is written.
 *
 * slapd searches for duplicates before the write, outside its
 * transaction, so two concurrent writers can both pass unless
 * `serialize` makes every write wait; Lumen checks in on_write, inside
 * the write transaction, after the change and with every earlier write
 * visible (writes are serialized by the committer): two concurrent adds
 * of one value cannot both pass, and nothing is serialized that would not
 * be anyway.
 *
 * What is checked: the client's own change (not the repairs other
 * overlays make inside it), and in it the values the entry did not hold
 * before — all of its values when it was outside the URI's scope or
 * filter before (an add, a move into the scope, a change that makes the
 * filter match). slapd checks a rename's new RDN only.
 */
#include "overlay.h"
#include "overlay_unique.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dn.h"
#include "entry.h"
#include "hex.h"
#include "ldap_result_codes.h"
#include "lumen_error.h"

/* ------------------------------------------------------------ parse a URI */

/* The %-escapes of text[0..len) resolved, NUL-terminated in arena. */
static char *unescape(const char *text, size_t len, struct arena *arena)
{
	char *out = arena_alloc(arena, len + 1);
	size_t n = 0;
	for (size_t i = 0; out != NULL && i < len; i++) {
		int hi = i + 2 < len && text[i] == '%' ? hex_value((unsigned char)text[i + 1]) : -1;
		int lo = hi >= 0 ? hex_value((unsigned char)text[i + 2]) : -1;
		if (text[i] == '%' && (hi < 0 || lo < 0))
			return NULL;
		out[n++] = lo >= 0 ? (char)(hi * 16 + lo) : text[i];
		i += lo >= 0 ? 2 : 0;
	}
	if (out != NULL)
		out[n] = '\0';
	return out;
}

struct uri_parse {
	const struct schema *schema;
	const struct ber_view *suffixes;
	size_t n_suffixes;
	struct arena *arena;
	char *why;
	size_t whylen;
};

static int refuse(const struct uri_parse *p, const char *what, const char *text, size_t len)
{
	snprintf(p->why, p->whylen, "%s \"%.*s\"", what, (int)len, text);
	return LUMEN_EMALFORMED;
}

static int parse_base(const struct uri_parse *p, const char *text, size_t len,
		      struct unique_uri *u)
{
	if (len == 0) {
		u->base_ndn = p->suffixes[0];
		return LUMEN_OK;
	}
	char *dn = unescape(text, len, p->arena);
	if (dn == NULL)
		return refuse(p, "bad %-escape in the base", text, len);
	if (dn_normalize(p->schema, dn, strlen(dn), p->arena, &u->base_ndn) != LUMEN_OK)
		return refuse(p, "expected a base DN, not", text, len);
	for (size_t i = 0; i < p->n_suffixes; i++)
		if (dn_is_within(u->base_ndn, p->suffixes[i]))
			return LUMEN_OK;
	return refuse(p, "base not within the database's suffix:", text, len);
}

static int parse_attributes(const struct uri_parse *p, const char *text, size_t len,
			    struct unique_uri *u)
{
	size_t n = len > 0 ? 1 : 0;
	for (size_t i = 0; i < len; i++)
		n += text[i] == ',';
	u->types = arena_calloc(p->arena, n ? n : 1, sizeof(*u->types));
	if (u->types == NULL)
		return LUMEN_ENOMEM;
	for (size_t at = 0, piece = 0; piece < n; piece++) {
		const char *comma = memchr(text + at, ',', len - at);
		size_t end = comma != NULL ? (size_t)(comma - text) : len;
		const struct attribute_type *type =
			schema_attribute_type(p->schema, text + at, end - at);
		if (end == at)
			return refuse(p, "empty attribute name in", text, len);
		if (type == NULL)
			return refuse(p, "unknown attribute", text + at, end - at);
		u->types[u->n_types++] = type;
		at = end + 1;
	}
	return LUMEN_OK;
}

static int parse_scope(const struct uri_parse *p, const char *text, size_t len,
		       struct unique_uri *u)
{
	static const struct { const char *name; enum ldap_scope scope; } scopes[] = {
		{ "", LDAP_SCOPE_BASE }, { "base", LDAP_SCOPE_BASE }, { "one", LDAP_SCOPE_ONE },
		{ "onelevel", LDAP_SCOPE_ONE }, { "sub", LDAP_SCOPE_SUBTREE },
		{ "subtree", LDAP_SCOPE_SUBTREE },
	};
	for (size_t i = 0; i < sizeof(scopes) / sizeof(scopes[0]); i++)
		if (strlen(scopes[i].name) == len && strncasecmp(text, scopes[i].name, len) == 0) {
			u->scope = scopes[i].scope;
			return LUMEN_OK;
		}
	return refuse(p, "expected the scope base, one or sub, not", text, len);
}

static int parse_filter(const struct uri_parse *p, const char *text, size_t len,
			struct unique_uri *u)
{
	if (len == 0)
		return LUMEN_OK;
	struct ldap_filter *parsed = NULL;
	size_t offset = 0;
	char *decoded = unescape(text, len, p->arena);
	u->filter = arena_calloc(p->arena, 1, sizeof(*u->filter));
	if (decoded == NULL)
		return refuse(p, "bad %-escape in the filter", text, len);
	if (u->filter == NULL)
		return LUMEN_ENOMEM;
	int rc = filter_text_parse(decoded, strlen(decoded), p->arena, NULL, &parsed, &offset);
	if (rc == LUMEN_OK)
		rc = filter_compile(p->schema, parsed, NULL, p->arena, u->filter);
	if (rc == LUMEN_ENOMEM)
		return rc;
	return rc == LUMEN_OK ? LUMEN_OK : refuse(p, "bad filter", text, len);
}

typedef int (*part_fn)(const struct uri_parse *p, const char *text, size_t len,
		       struct unique_uri *u);

static int parse_uri(const struct uri_parse *p, const char *text, size_t len,
		     struct unique_uri *u)
{
	static const part_fn parts[] = { parse_base, parse_attributes, parse_scope, parse_filter };
	memset(u, 0, sizeof(*u));
	if (len < 8 || strncasecmp(text, "ldap:///", 8) != 0)
		return refuse(p, "expected ldap:///base?attributes?scope?filter, not", text, len);
	size_t at = 8, part = 0;
	int rc = LUMEN_OK;
	for (; rc == LUMEN_OK && part < 4 && at <= len; part++) {
		const char *mark = memchr(text + at, '?', len - at);
		size_t end = mark != NULL && part < 3 ? (size_t)(mark - text) : len;
		rc = parts[part](p, text + at, end - at, u);
		at = end + 1;
	}
	for (; rc == LUMEN_OK && part < 4; part++)   /* the parts left out */
		rc = parts[part](p, "", 0, u);
	return rc;
}

/* ---------------------------------------------------------- parse a line */

static bool keyword(struct unique_domain *d, const char *word, size_t len)
{
	if (len == 6 && strncasecmp(word, "strict", 6) == 0)
		d->strict = true;
	else if (len == 6 && strncasecmp(word, "ignore", 6) == 0)
		d->ignore = true;
	else if (len == 9 && strncasecmp(word, "serialize", 9) == 0)
		;   /* always serialized: see the top */
	else
		return false;
	return true;
}

static int take_token(const struct uri_parse *p, struct unique_domain *d, const char *text,
		      size_t len, size_t max_uris)
{
	if (d->n_uris == 0 && keyword(d, text, len))
		return LUMEN_OK;
	if (d->n_uris == max_uris)
		return LUMEN_ELIMIT;
	return parse_uri(p, text, len, &d->uris[d->n_uris++]);
}

int unique_domain_parse(const struct schema *schema, const struct ber_view *suffixes,
			size_t n_suffixes, const char *const *words, size_t n_words,
			struct arena *arena, struct unique_domain *out, char *why, size_t whylen)
{
	struct uri_parse p = { schema, suffixes, n_suffixes, arena, why, whylen };
	size_t max_uris = 0;
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n_words; i++)
		max_uris += strlen(words[i]) / 8 + 1;
	out->uris = arena_calloc(arena, max_uris, sizeof(*out->uris));
	if (out->uris == NULL)
		return LUMEN_ENOMEM;
	int rc = LUMEN_OK;
	for (size_t i = 0; i < n_words && rc == LUMEN_OK; i++)
		for (const char *t = words[i]; rc == LUMEN_OK && *t != '\0';) {
			size_t len = strcspn(t, " \t");
			if (len > 0)
				rc = take_token(&p, out, t, len, max_uris);
			t += len + strspn(t + len, " \t");
		}
	if (rc == LUMEN_OK && out->n_uris == 0) {
		snprintf(why, whylen, "expected [strict] [ignore] ldap:///base?attributes?scope?filter");
		rc = LUMEN_EMALFORMED;
	}
	return rc;
}

bool unique_covers(const struct unique_domain *d, const struct unique_uri *u,
		   const struct attribute_type *type)
{
	bool listed = false;
	for (size_t i = 0; i < u->n_types && !listed; i++)
		listed = u->types[i] == type;
	if (u->n_types > 0 && !d->ignore)
		return listed;
	return !listed && !attribute_type_is_operational(type);
}

bool unique_in_scope(const struct unique_uri *u, struct ber_view ndn)
{
	return dn_in_scope(ndn, u->base_ndn, u->scope);
}

/* ------------------------------------------------------------- configure */

struct unique {
	struct unique_domain *domains;     /* in setup->memory, as the rest */
	size_t n_domains, cap;
	struct ber_view *suffixes;         /* the database's, normalized */
};

static int normalize_suffixes(struct unique *u, const struct overlay_setup *setup)
{
	const struct config_database *db = setup->database;
	struct ber_view *out = arena_calloc(setup->memory, db->n_suffixes ? db->n_suffixes : 1,
					    sizeof(*out));
	if (out == NULL)
		return LUMEN_ENOMEM;
	u->suffixes = out;
	for (size_t i = 0; i < db->n_suffixes; i++) {
		const char *dn = db->suffixes[i];
		int rc = dn_normalize(setup->schema, dn, strlen(dn), setup->memory, &out[i]);
		if (rc != LUMEN_OK)
			return rc;
	}
	return db->n_suffixes > 0 ? LUMEN_OK : LUMEN_EINVAL;
}

static int add_domain(struct unique *u, const struct overlay_setup *setup,
		      const struct config_overlay_line *line, char *err, size_t errlen)
{
	char why[384];
	struct unique_domain *grown = arena_reserve(setup->memory, u->domains, u->n_domains,
						    &u->cap, u->n_domains + 1, sizeof(*grown), 4);
	if (grown == NULL)
		return LUMEN_ENOMEM;
	u->domains = grown;
	int rc = unique_domain_parse(setup->schema, u->suffixes, setup->database->n_suffixes,
				     (const char *const *)line->words + 1, line->n_words - 1,
				     setup->memory, &u->domains[u->n_domains], why, sizeof(why));
	if (rc == LUMEN_EMALFORMED)
		config_overlay_fail(line, err, errlen, "%s", why);
	if (rc == LUMEN_OK)
		u->n_domains++;
	return rc;
}

static int apply_line(void *state, const struct overlay_setup *setup,
		      const struct config_overlay_line *line, char *err, size_t errlen)
{
	const char *name = line->words[0];
	if (strcasecmp(name, "unique_uri") == 0)
		return add_domain(state, setup, line, err, errlen);
	if (strncasecmp(name, "unique_", 7) != 0)
		return config_overlay_unknown("unique", line, err, errlen);
	snprintf(err, errlen, "%s: overlay unique: \"%s\" (the legacy form) is not supported: "
		 "write it as a unique_uri line", line->origin, name);
	return LUMEN_EMALFORMED;
}

static int unique_prepare(void *state, const struct overlay_setup *setup, char *err,
			  size_t errlen)
{
	struct unique *u = state;
	int rc = normalize_suffixes(u, setup);
	if (rc == LUMEN_OK || rc == LUMEN_ENOMEM)
		return rc;
	return overlay_config_fail(&overlay_unique, setup, err, errlen,
				   "the database needs a valid suffix");
}

/* ----------------------------------------------------------------- check */

/* find_equal's answer when another entry in the URI holds the value. */
#define UNIQUE_CONFLICT 1

struct probe {
	const struct unique_uri *uri;
	struct ber_view self_ndn;
	struct arena *scratch;
};

/* True (or an error) if e is covered by u: in its scope and filter. */
static int covered(const struct unique_uri *u, const struct entry *e, struct arena *scratch,
		   bool *out)
{
	enum filter_result r = FILTER_TRUE;
	int rc = LUMEN_OK;
	*out = unique_in_scope(u, e->ndn);
	if (*out && u->filter != NULL) {
		struct filter_evaluation how = { .scratch = scratch };
		rc = filter_test(u->filter, e, &how, &r);
		*out = rc == LUMEN_OK && r == FILTER_TRUE;
	}
	return rc;
}

static int conflict(void *ctx, const struct entry *e)
{
	const struct probe *p = ctx;
	bool in = false;
	if (e->ndn.len == p->self_ndn.len && memcmp(e->ndn.ptr, p->self_ndn.ptr, e->ndn.len) == 0)
		return LUMEN_OK;
	int rc = covered(p->uri, e, p->scratch, &in);
	return rc != LUMEN_OK ? rc : in ? UNIQUE_CONFLICT : LUMEN_OK;
}

/* "(uid=value)" with the RFC 4515 escapes, for the diagnostic. */
static const char *describe(struct arena *arena, const struct attribute_type *type,
			    struct ber_view value)
{
	const char *name = attribute_type_name(type);
	size_t len = strlen(name), n = 0;
	char *out = arena_alloc(arena, len + 3 * value.len + 32);
	if (out == NULL)
		return "some attributes not unique";
	n += (size_t)sprintf(out, "non-unique attributes found with (%s=", name);
	for (size_t i = 0; i < value.len; i++) {
		uint8_t c = value.ptr[i];
		bool plain = c >= 0x20 && c < 0x7f && c != '*' && c != '(' && c != ')' && c != '\\';
		n += (size_t)(plain ? sprintf(out + n, "%c", c) : sprintf(out + n, "\\%02x", c));
	}
	sprintf(out + n, ")");
	return out;
}

struct check {
	const struct unique_domain *domain;
	const struct unique_uri *uri;
	const struct entry *before, *after;
	bool fresh;                 /* after was not covered before: every value counts */
	struct database_txn *txn;
	const struct database_txn_ops *ops;
	struct backend_op *op;
};

static int check_value(const struct check *c, const struct entry_attribute *a,
		       const struct entry_value *v)
{
	if (v->normalized.ptr == NULL || (v->value.len == 0 && !c->domain->strict))
		return LUMEN_OK;
	if (!c->fresh && c->before != NULL) {
		const struct entry_attribute *old = entry_find(c->before, &a->desc);
		if (old != NULL && entry_attribute_find_normalized(old, v->normalized) >= 0)
			return LUMEN_OK;
	}
	struct probe p = { c->uri, c->after->ndn, c->op->arena };
	int rc = c->ops->find_equal(c->txn, a->desc.type, v->normalized, conflict, &p);
	if (rc != UNIQUE_CONFLICT)
		return rc;
	c->op->result_code = LDAP_CONSTRAINT_VIOLATION;
	c->op->diagnostic = describe(c->op->arena, a->desc.type, v->value);
	return LUMEN_EINVAL;
}

static int check_uri(struct check *c)
{
	bool now = false, was = false;
	int rc = covered(c->uri, c->after, c->op->arena, &now);
	if (rc == LUMEN_OK && now && c->before != NULL)
		rc = covered(c->uri, c->before, c->op->arena, &was);
	c->fresh = !was;
	for (size_t i = 0; rc == LUMEN_OK && now && i < c->after->n_attributes; i++) {
		const struct entry_attribute *a = &c->after->attributes[i];
		for (size_t k = 0; unique_covers(c->domain, c->uri, a->desc.type) &&
				   k < a->n_values && rc == LUMEN_OK; k++)
			rc = check_value(c, a, &a->values[k]);
	}
	return rc;
}

static int unique_on_write(void *state, struct database_txn *txn,
			   const struct database_txn_ops *ops, struct backend_op *op,
			   const struct database_write *w)
{
	const struct unique *u = state;
	if (w->after == NULL || w->depth > 0)
		return LUMEN_OK;
	struct check c = { .before = w->before, .after = w->after, .txn = txn, .ops = ops,
			   .op = op };
	int rc = LUMEN_OK;
	for (size_t d = 0; d < u->n_domains && rc == LUMEN_OK; d++)
		for (size_t i = 0; i < u->domains[d].n_uris && rc == LUMEN_OK; i++) {
			c.domain = &u->domains[d];
			c.uri = &u->domains[d].uris[i];
			rc = check_uri(&c);
		}
	return rc;
}

const struct overlay_type overlay_unique = {
	.name = "unique",
	.steps = { .state_size = sizeof(struct unique), .prepare = unique_prepare,
		    .apply = apply_line, .required = "unique_uri" },
	.destroy = free,
	.on_write = unique_on_write,
};
