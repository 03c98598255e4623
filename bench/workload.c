/*
 * workload.c — build a workload and encode its requests (see workload.h).
 */
#include "workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ldap_filter_text.h"
#include "ldap_message.h"
#include "lumen_error.h"

/* Room for one expanded template. */
#define EXPANSION_MAX (TEMPLATE_MAX_TEXT * 2)

static const char *const op_names[BENCH_OP_COUNT] = {
	[BENCH_OP_SEARCH] = "search", [BENCH_OP_AUTH] = "auth",
	[BENCH_OP_BIND] = "bind", [BENCH_OP_COMPARE] = "compare",
	[BENCH_OP_MODIFY] = "modify", [BENCH_OP_ADD] = "add",
	[BENCH_OP_DELETE] = "delete",
};

const char *bench_op_name(enum bench_op op)
{
	return (unsigned)op < BENCH_OP_COUNT ? op_names[op] : "unknown";
}

int bench_op_from_name(const char *name, enum bench_op *op)
{
	for (unsigned i = 0; i < BENCH_OP_COUNT; i++) {
		if (strcmp(name, op_names[i]) == 0) {
			*op = (enum bench_op)i;
			return LUMEN_OK;
		}
	}
	return LUMEN_ENOTFOUND;
}

/* Encode "a,b,c" as the AttributeSelection SEQUENCE OF LDAPString. */
static int encode_attribute_list(struct ber_writer *w, const char *list,
				 const char **why)
{
	ber_begin(w, BER_TAG_SEQUENCE);
	for (const char *p = list; p != NULL && *p != '\0';) {
		const char *comma = strchr(p, ',');
		size_t n = comma != NULL ? (size_t)(comma - p) : strlen(p);
		if (n == 0) {
			*why = "empty name in the attribute list";
			return LUMEN_EMALFORMED;
		}
		ber_write_octets(w, BER_TAG_OCTET_STRING, p, n);
		p = comma != NULL ? comma + 1 : NULL;
	}
	ber_end(w);
	return ber_writer_error(w);
}

#define OID_SORT_REQUEST "1.2.840.113556.1.4.473"
#define OID_VLV_REQUEST  "2.16.840.1.113730.3.4.9"

/* The sort control for "[-]attr[/orderingRule]", as ldapsearch -E sss= spells
 * one key: SortKeyList ::= SEQUENCE OF SEQUENCE { attributeType,
 * orderingRule [0] OPTIONAL, reverseOrder [1] BOOLEAN DEFAULT FALSE }. */
static int encode_sort_control(struct ber_writer *w, const char *spec, const char **why)
{
	bool reverse = spec[0] == '-';
	const char *attr = spec + (reverse ? 1 : 0);
	const char *slash = strchr(attr, '/');
	size_t attr_len = slash != NULL ? (size_t)(slash - attr) : strlen(attr);
	if (attr_len == 0 || (slash != NULL && slash[1] == '\0')) {
		*why = "--sort: expected [-]attribute[/orderingRule]";
		return LUMEN_EMALFORMED;
	}
	ber_begin(w, BER_TAG_SEQUENCE);
	ber_write_octets(w, BER_TAG_OCTET_STRING, OID_SORT_REQUEST, strlen(OID_SORT_REQUEST));
	ber_write_boolean(w, BER_TAG_BOOLEAN, true);
	ber_begin(w, BER_TAG_OCTET_STRING);
	ber_begin(w, BER_TAG_SEQUENCE);
	ber_begin(w, BER_TAG_SEQUENCE);
	ber_write_octets(w, BER_TAG_OCTET_STRING, attr, attr_len);
	if (slash != NULL)
		ber_write_octets(w, BER_TAG_CONTEXT(0), slash + 1, strlen(slash + 1));
	if (reverse)
		ber_write_boolean(w, BER_TAG_CONTEXT(1), true);
	ber_end(w);
	ber_end(w);
	ber_end(w);
	ber_end(w);
	return ber_writer_error(w);
}

/* The VLV target offset for a draw. */
static int vlv_offset_of(const struct bench_workload *wl, uint64_t draw, int64_t *offset,
			 const char **why)
{
	char text[EXPANSION_MAX];
	size_t len;
	char *end;
	if (bench_template_expand(&wl->vlv_offset, draw, text, sizeof(text), &len) != LUMEN_OK) {
		*why = "--vlv: the offset expands too long";
		return LUMEN_ELIMIT;
	}
	long long v = strtoll(text, &end, 10);
	if (len == 0 || *end != '\0' || v < 0 || v > INT32_MAX) {
		*why = "--vlv: the offset does not expand to a number from 0 to 2^31-1";
		return LUMEN_EMALFORMED;
	}
	*offset = v;
	return LUMEN_OK;
}

/* "before/after/offset/count": the numbers, and offset as a template. */
static int parse_vlv(struct bench_workload *wl, const char *spec, const char **why)
{
	char offset[TEMPLATE_MAX_TEXT];
	long long before, after, count;
	int used = 0;
	if (sscanf(spec, "%lld/%lld/%255[^/]/%lld%n", &before, &after, offset, &count, &used) != 4 ||
	    spec[used] != '\0' || before < 0 || after < 0 || count < 0 ||
	    before > INT32_MAX || after > INT32_MAX || count > INT32_MAX) {
		*why = "--vlv: expected before/after/offset/count (offset may be a template)";
		return LUMEN_EMALFORMED;
	}
	wl->vlv = true;
	wl->vlv_before = before;
	wl->vlv_after = after;
	wl->vlv_count = count;
	int rc = bench_template_compile(&wl->vlv_offset, offset, why);
	if (rc != LUMEN_OK)
		return rc;
	/* Every expansion must be a number; a template's text around its
	 * range does not change with the draw, so one expansion shows it. */
	int64_t first;
	return vlv_offset_of(wl, 0, &first, why);
}

struct named_template {
	struct bench_template *t;
	const char *text;
	const char *what;
};

static int compile_templates(struct bench_workload *wl,
			     const struct workload_settings *s, const char **why)
{
	const struct named_template all[] = {
		{ &wl->base, s->base, "bad --base template" },
		{ &wl->filter, s->filter, "bad --filter template" },
		{ &wl->auth_base, s->auth_base, "bad --auth-base template" },
		{ &wl->auth_filter, s->auth_filter, "bad --auth-filter template" },
		{ &wl->dn, s->dn, "bad --dn template" },
		{ &wl->compare_value, s->compare_value, "bad --compare-value template" },
		{ &wl->modify_value, s->modify_value, "bad --modify-value template" },
		{ &wl->add_dn, s->add_dn, "bad --add-dn template" },
		{ &wl->delete_dn, s->delete_dn, "bad --delete-dn template" },
	};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		const char *reason;
		int rc = bench_template_compile(all[i].t, all[i].text, &reason);
		if (rc != LUMEN_OK) {
			*why = all[i].what;
			return rc;
		}
	}
	return LUMEN_OK;
}

/*
 * Parse RFC 4515 text into scratch, which is reset first: it holds one
 * filter at a time. The tree keeps views into text.
 */
static int parse_filter(const char *text, size_t len, struct arena *scratch,
			struct ldap_filter **f, const char **why)
{
	arena_reset(scratch);
	int rc = ldap_filter_text_parse(text, len, scratch, NULL, f, NULL);
	if (rc != LUMEN_OK)
		*why = rc == LUMEN_ELIMIT ? "filter nested too deeply or too large"
		     : rc == LUMEN_ENOMEM ? "out of memory" : "malformed filter";
	return rc;
}

/* Try the filter templates once so a bad filter fails at start-up. */
static int check_filter(const struct bench_template *t, const char **why)
{
	char text[EXPANSION_MAX];
	size_t len;
	struct arena scratch;
	struct ldap_filter *f;
	arena_init(&scratch, 0);
	int rc = bench_template_expand(t, 0, text, sizeof(text), &len);
	if (rc == LUMEN_OK)
		rc = parse_filter(text, len, &scratch, &f, why);
	else
		*why = "template expansion too long";
	arena_free(&scratch);
	return rc;
}

int bench_workload_init(struct bench_workload *wl, const struct workload_settings *s,
			uint64_t first_sequence, const char **why)
{
	memset(wl, 0, sizeof(*wl));
	int rc = ber_writer_init(&wl->attributes, 128, 0);
	if (rc == LUMEN_OK)
		rc = ber_writer_init(&wl->no_attributes, 16, 0);
	if (rc != LUMEN_OK) {
		*why = "out of memory";
		goto fail;
	}
	for (unsigned i = 0; i < BENCH_OP_COUNT; i++) {
		wl->weights[i] = s->weights[i];
		wl->weight_total += s->weights[i];
	}
	if (wl->weight_total == 0) {
		*why = "no operation to run";
		rc = LUMEN_EINVAL;
		goto fail;
	}
	wl->scope = s->scope;
	wl->deref = s->deref;
	wl->password = s->password;
	wl->compare_attribute = s->compare_attribute;
	wl->modify_attribute = s->modify_attribute;
	wl->modify_op = s->modify_op;
	atomic_init(&wl->search_sequence, 0);
	atomic_init(&wl->add_sequence, first_sequence);
	atomic_init(&wl->delete_sequence, first_sequence);
	rc = compile_templates(wl, s, why);
	if (rc == LUMEN_OK) {
		uint64_t a = bench_template_span(&wl->dn);
		uint64_t b = bench_template_span(&wl->modify_value);
		wl->toggle_period = a > b ? a : b;   /* 0: the full 64-bit range */
		if (wl->toggle_period == 0)
			wl->toggle_period = UINT64_MAX;
	}
	if (rc == LUMEN_OK)
		rc = encode_attribute_list(&wl->attributes, s->attributes, why);
	if (rc == LUMEN_OK)
		rc = encode_attribute_list(&wl->no_attributes, "1.1", why);
	if (rc == LUMEN_OK && wl->weights[BENCH_OP_SEARCH] > 0)
		rc = check_filter(&wl->filter, why);
	if (rc == LUMEN_OK && s->sort != NULL)
		rc = encode_sort_control(&wl->sort_control, s->sort, why);
	if (rc == LUMEN_OK && s->vlv != NULL)
		rc = parse_vlv(wl, s->vlv, why);
	if (rc == LUMEN_OK && s->vlv_context && s->vlv == NULL) {
		*why = "--vlv-context needs --vlv";
		rc = LUMEN_EMALFORMED;
	}
	wl->vlv_context = s->vlv_context;
	if (rc == LUMEN_OK && wl->weights[BENCH_OP_AUTH] > 0)
		rc = check_filter(&wl->auth_filter, why);
	if (rc != LUMEN_OK)
		goto fail;
	return LUMEN_OK;
fail:
	bench_workload_free(wl);
	return rc;
}

void bench_workload_free(struct bench_workload *wl)
{
	ber_writer_free(&wl->attributes);
	ber_writer_free(&wl->no_attributes);
	ber_writer_free(&wl->sort_control);
}

enum bench_op bench_workload_pick(const struct bench_workload *wl, uint64_t random)
{
	uint64_t point = random % wl->weight_total;
	for (unsigned i = 0; i < BENCH_OP_COUNT; i++) {
		if (point < wl->weights[i])
			return (enum bench_op)i;
		point -= wl->weights[i];
	}
	return BENCH_OP_SEARCH;
}

/* Expanded text of a template, on the caller's stack. */
struct expansion {
	char text[EXPANSION_MAX];
	size_t len;
};

static int expand(const struct bench_template *t, uint64_t draw,
		  struct expansion *e, const char **why)
{
	int rc = bench_template_expand(t, draw, e->text, sizeof(e->text), &e->len);
	if (rc != LUMEN_OK)
		*why = "template expansion too long";
	return rc;
}

static int encode_search(struct ber_writer *w, struct arena *scratch,
			 const struct bench_template *base,
			 const struct bench_template *filter, int scope, int deref,
			 const struct ber_writer *attributes, uint64_t draw,
			 const char **why)
{
	struct expansion b, f;
	struct ldap_filter *tree;
	int rc = expand(base, draw, &b, why);
	if (rc == LUMEN_OK)
		rc = expand(filter, draw, &f, why);
	if (rc == LUMEN_OK)
		rc = parse_filter(f.text, f.len, scratch, &tree, why);
	if (rc != LUMEN_OK)
		return rc;
	ber_begin(w, BER_TAG_APP_CONS(LDAP_OP_SEARCH_REQUEST));
	ber_write_octets(w, BER_TAG_OCTET_STRING, b.text, b.len);
	ber_write_integer(w, BER_TAG_ENUMERATED, scope);
	ber_write_integer(w, BER_TAG_ENUMERATED, deref);
	ber_write_integer(w, BER_TAG_INTEGER, 0);      /* no size limit */
	ber_write_integer(w, BER_TAG_INTEGER, 0);      /* no time limit */
	ber_write_boolean(w, BER_TAG_BOOLEAN, false);
	ldap_filter_encode(w, tree);
	ber_write_raw(w, attributes->buf, attributes->len);
	ber_end(w);
	return LUMEN_OK;
}

static int encode_compare(struct ber_writer *w, const struct bench_workload *wl,
			  uint64_t draw, const char **why)
{
	struct expansion dn, value;
	int rc = expand(&wl->dn, draw, &dn, why);
	if (rc == LUMEN_OK)
		rc = expand(&wl->compare_value, draw, &value, why);
	if (rc != LUMEN_OK)
		return rc;
	ber_begin(w, BER_TAG_APP_CONS(LDAP_OP_COMPARE_REQUEST));
	ber_write_octets(w, BER_TAG_OCTET_STRING, dn.text, dn.len);
	ber_begin(w, BER_TAG_SEQUENCE);
	ber_write_string(w, BER_TAG_OCTET_STRING, wl->compare_attribute);
	ber_write_octets(w, BER_TAG_OCTET_STRING, value.text, value.len);
	ber_end(w);
	ber_end(w);
	return LUMEN_OK;
}

static int encode_modify(struct ber_writer *w, const struct bench_workload *wl,
			 uint64_t draw, const char **why)
{
	struct expansion dn, value;
	int rc = expand(&wl->dn, draw, &dn, why);
	if (rc == LUMEN_OK)
		rc = expand(&wl->modify_value, draw, &value, why);
	if (rc != LUMEN_OK)
		return rc;
	ber_begin(w, BER_TAG_APP_CONS(LDAP_OP_MODIFY_REQUEST));
	ber_write_octets(w, BER_TAG_OCTET_STRING, dn.text, dn.len);
	ber_begin(w, BER_TAG_SEQUENCE);
	ber_begin(w, BER_TAG_SEQUENCE);
	int op = wl->modify_op;
	if (op == BENCH_MODIFY_TOGGLE)
		op = (draw / wl->toggle_period) % 2 == 0 ? BENCH_MODIFY_ADD
							 : BENCH_MODIFY_DELETE;
	/* RFC 4511 operation: add 0, delete 1, replace 2 */
	ber_write_integer(w, BER_TAG_ENUMERATED,
			  op == BENCH_MODIFY_ADD ? 0 : op == BENCH_MODIFY_DELETE ? 1 : 2);
	ber_begin(w, BER_TAG_SEQUENCE);
	ber_write_string(w, BER_TAG_OCTET_STRING, wl->modify_attribute);
	ber_begin(w, BER_TAG_SET);
	ber_write_octets(w, BER_TAG_OCTET_STRING, value.text, value.len);
	ber_end(w);
	ber_end(w);
	ber_end(w);
	ber_end(w);
	ber_end(w);
	return LUMEN_OK;
}

static void write_attribute(struct ber_writer *w, const char *type, size_t type_len,
			    const char *const *values, const size_t *lengths,
			    size_t n_values)
{
	ber_begin(w, BER_TAG_SEQUENCE);
	ber_write_octets(w, BER_TAG_OCTET_STRING, type, type_len);
	ber_begin(w, BER_TAG_SET);
	for (size_t i = 0; i < n_values; i++)
		ber_write_octets(w, BER_TAG_OCTET_STRING, values[i], lengths[i]);
	ber_end(w);
	ber_end(w);
}

/* An inetOrgPerson named by the DN's first RDN ("uid=bench.7,..."). */
static int encode_add(struct ber_writer *w, const char *dn, size_t dn_len,
		      const char **why)
{
	const char *eq = memchr(dn, '=', dn_len);
	const char *rdn_end = memchr(dn, ',', dn_len);
	if (rdn_end == NULL)
		rdn_end = dn + dn_len;
	if (eq == NULL || eq > rdn_end || eq == dn) {
		*why = "--add-dn must start with attribute=value";
		return LUMEN_EMALFORMED;
	}
	const char *type = dn;
	size_t type_len = (size_t)(eq - dn);
	const char *value = eq + 1;
	size_t value_len = (size_t)(rdn_end - value);
	static const char *const classes[] = { "top", "person",
		"organizationalPerson", "inetOrgPerson" };
	static const size_t class_lengths[] = { 3, 6, 20, 13 };

	ber_begin(w, BER_TAG_APP_CONS(LDAP_OP_ADD_REQUEST));
	ber_write_octets(w, BER_TAG_OCTET_STRING, dn, dn_len);
	ber_begin(w, BER_TAG_SEQUENCE);
	write_attribute(w, "objectClass", 11, classes, class_lengths, 4);
	write_attribute(w, "cn", 2, &value, &value_len, 1);
	write_attribute(w, "sn", 2, &value, &value_len, 1);
	bool named_by_cn_or_sn = (type_len == 2 && (strncasecmp(type, "cn", 2) == 0 ||
						    strncasecmp(type, "sn", 2) == 0));
	if (!named_by_cn_or_sn)
		write_attribute(w, type, type_len, &value, &value_len, 1);
	ber_end(w);
	ber_end(w);
	return LUMEN_OK;
}

static void encode_bind_body(struct ber_writer *w, const char *dn, size_t dn_len,
			     const char *password)
{
	ber_begin(w, BER_TAG_APP_CONS(LDAP_OP_BIND_REQUEST));
	ber_write_integer(w, BER_TAG_INTEGER, 3);
	ber_write_octets(w, BER_TAG_OCTET_STRING, dn, dn_len);
	ber_write_string(w, BER_TAG_CONTEXT(0), password != NULL ? password : "");
	ber_end(w);
}

/* The VLV request control: SEQUENCE { beforeCount, afterCount,
 * byOffset [0] SEQUENCE { offset, contentCount }, contextID OPTIONAL }. */
static int encode_vlv_control(struct ber_writer *w, const struct bench_workload *wl,
			      uint64_t draw, struct ber_view context, const char **why)
{
	int64_t offset;
	int rc = vlv_offset_of(wl, draw, &offset, why);
	if (rc != LUMEN_OK)
		return rc;
	ber_begin(w, BER_TAG_SEQUENCE);
	ber_write_octets(w, BER_TAG_OCTET_STRING, OID_VLV_REQUEST, strlen(OID_VLV_REQUEST));
	ber_write_boolean(w, BER_TAG_BOOLEAN, true);
	ber_begin(w, BER_TAG_OCTET_STRING);
	ber_begin(w, BER_TAG_SEQUENCE);
	ber_write_integer(w, BER_TAG_INTEGER, wl->vlv_before);
	ber_write_integer(w, BER_TAG_INTEGER, wl->vlv_after);
	ber_begin(w, BER_TAG_CONTEXT_CONS(0));
	ber_write_integer(w, BER_TAG_INTEGER, offset);
	ber_write_integer(w, BER_TAG_INTEGER, wl->vlv_count);
	ber_end(w);
	if (wl->vlv_context && context.ptr != NULL)
		ber_write_octets(w, BER_TAG_OCTET_STRING, context.ptr, context.len);
	ber_end(w);
	ber_end(w);
	ber_end(w);
	return LUMEN_OK;
}

/* [0] Controls after a search's protocolOp, when --sort or --vlv asked. */
static int encode_search_controls(struct ber_writer *w, const struct bench_workload *wl,
				  uint64_t draw, struct ber_view context, const char **why)
{
	if (wl->sort_control.len == 0 && !wl->vlv)
		return LUMEN_OK;
	ber_begin(w, BER_TAG_CONTEXT_CONS(0));
	ber_write_raw(w, wl->sort_control.buf, wl->sort_control.len);
	int rc = wl->vlv ? encode_vlv_control(w, wl, draw, context, why) : LUMEN_OK;
	ber_end(w);
	return rc;
}

static int encode_body(struct ber_writer *w, struct bench_workload *wl,
		       struct arena *scratch, enum bench_op op, uint64_t draw,
		       struct ber_view context, const char **why)
{
	struct expansion e;
	int rc;
	switch (op) {
	case BENCH_OP_SEARCH:
		rc = encode_search(w, scratch, &wl->base, &wl->filter, wl->scope, wl->deref,
				   &wl->attributes, draw, why);
		return rc != LUMEN_OK ? rc : encode_search_controls(w, wl, draw, context, why);
	case BENCH_OP_AUTH:
		return encode_search(w, scratch, &wl->auth_base, &wl->auth_filter,
				     LDAP_SCOPE_SUBTREE, LDAP_DEREF_NEVER, &wl->no_attributes,
				     draw, why);
	case BENCH_OP_BIND:
		rc = expand(&wl->dn, draw, &e, why);
		if (rc == LUMEN_OK)
			encode_bind_body(w, e.text, e.len, wl->password);
		return rc;
	case BENCH_OP_COMPARE:
		return encode_compare(w, wl, draw, why);
	case BENCH_OP_MODIFY:
		return encode_modify(w, wl, draw, why);
	case BENCH_OP_ADD:
		draw = atomic_fetch_add_explicit(&wl->add_sequence, 1,
						 memory_order_relaxed);
		rc = expand(&wl->add_dn, draw, &e, why);
		return rc != LUMEN_OK ? rc : encode_add(w, e.text, e.len, why);
	case BENCH_OP_DELETE:
		draw = atomic_fetch_add_explicit(&wl->delete_sequence, 1,
						 memory_order_relaxed);
		rc = expand(&wl->delete_dn, draw, &e, why);
		if (rc == LUMEN_OK)
			ber_write_octets(w, BER_TAG_APP(LDAP_OP_DELETE_REQUEST),
					 e.text, e.len);
		return rc;
	case BENCH_OP_COUNT:
		break;
	}
	*why = "unknown operation";
	return LUMEN_EINVAL;
}

int bench_encode_op(struct ber_writer *w, struct bench_workload *wl,
		    struct arena *scratch, enum bench_op op, int32_t msgid,
		    uint64_t draw, struct ber_view vlv_context, const char **why)
{
	ber_begin(w, BER_TAG_SEQUENCE);
	ber_write_integer(w, BER_TAG_INTEGER, msgid);
	int rc = encode_body(w, wl, scratch, op, draw, vlv_context, why);
	ber_end(w);
	if (rc == LUMEN_OK && ber_writer_error(w) != LUMEN_OK) {
		rc = ber_writer_error(w);
		*why = "cannot encode request";
	}
	return rc;
}

int bench_encode_bind(struct ber_writer *w, int32_t msgid, const char *dn,
		      size_t dn_len, const char *password)
{
	ber_begin(w, BER_TAG_SEQUENCE);
	ber_write_integer(w, BER_TAG_INTEGER, msgid);
	encode_bind_body(w, dn, dn_len, password);
	ber_end(w);
	return ber_writer_error(w);
}

int bench_encode_unbind(struct ber_writer *w, int32_t msgid)
{
	ber_begin(w, BER_TAG_SEQUENCE);
	ber_write_integer(w, BER_TAG_INTEGER, msgid);
	ber_write_null(w, BER_TAG_APP(LDAP_OP_UNBIND_REQUEST));
	ber_end(w);
	return ber_writer_error(w);
}
