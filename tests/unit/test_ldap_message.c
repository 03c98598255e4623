/*
 * test_ldap_message.c — LDAPMessage decode/encode (src/proto/ldap_*.c).
 *
 * Vectors are written in a small notation so that lengths need not be
 * counted by hand (build_pdu, pdu_fixture.h): "30( ... )" is a constructed element
 * whose length is filled in, "04'abc'" a primitive element with its
 * length, "'abc'" raw text, "0a0102" raw hex. Literal hex is used where a
 * vector must carry a wrong length on purpose.
 */
#include <check.h>
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ldap_message.h"
#include "pdu_fixture.h"

/* ------------------------------------------------------- deep equality */

static bool view_eq(struct ber_view a, struct ber_view b)
{
	return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

static bool views_eq(const struct ber_view *a, size_t na, const struct ber_view *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (!view_eq(a[i], b[i]))
			return false;
	return true;
}

static bool attrs_eq(const struct ldap_attribute *a, size_t na,
		     const struct ldap_attribute *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (!view_eq(a[i].type, b[i].type) ||
		    !views_eq(a[i].values, a[i].n_values, b[i].values, b[i].n_values))
			return false;
	return true;
}

static bool result_eq(const struct ldap_result *a, const struct ldap_result *b)
{
	return a->code == b->code && view_eq(a->matched_dn, b->matched_dn) &&
	       view_eq(a->diagnostic, b->diagnostic) &&
	       views_eq(a->referrals, a->n_referrals, b->referrals, b->n_referrals);
}

static bool optional_eq(bool has_a, struct ber_view a, bool has_b, struct ber_view b)
{
	return has_a == has_b && (!has_a || view_eq(a, b));
}

static bool filter_eq(const struct ldap_filter *a, const struct ldap_filter *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	if (a->type != b->type)
		return false;
	switch (a->type) {
	case LDAP_FILTER_AND:
	case LDAP_FILTER_OR: {
		const struct ldap_filter *x = a->u.children, *y = b->u.children;
		for (; x != NULL && y != NULL; x = x->next, y = y->next)
			if (!filter_eq(x, y))
				return false;
		return x == NULL && y == NULL;
	}
	case LDAP_FILTER_NOT:
		return filter_eq(a->u.child, b->u.child);
	case LDAP_FILTER_PRESENT:
		return view_eq(a->u.present, b->u.present);
	case LDAP_FILTER_SUBSTRINGS:
		return view_eq(a->u.substrings.attr, b->u.substrings.attr) &&
		       optional_eq(a->u.substrings.has_initial, a->u.substrings.initial,
				   b->u.substrings.has_initial, b->u.substrings.initial) &&
		       optional_eq(a->u.substrings.has_final, a->u.substrings.final,
				   b->u.substrings.has_final, b->u.substrings.final) &&
		       views_eq(a->u.substrings.any, a->u.substrings.n_any,
				b->u.substrings.any, b->u.substrings.n_any);
	case LDAP_FILTER_EXTENSIBLE:
		return optional_eq(a->u.extensible.has_rule, a->u.extensible.rule,
				   b->u.extensible.has_rule, b->u.extensible.rule) &&
		       optional_eq(a->u.extensible.has_attr, a->u.extensible.attr,
				   b->u.extensible.has_attr, b->u.extensible.attr) &&
		       view_eq(a->u.extensible.value, b->u.extensible.value) &&
		       a->u.extensible.dn_attributes == b->u.extensible.dn_attributes;
	default:
		return view_eq(a->u.ava.attr, b->u.ava.attr) && view_eq(a->u.ava.value, b->u.ava.value);
	}
}

static bool body_eq(const struct ldap_message *a, const struct ldap_message *b)
{
	switch (a->op) {
	case LDAP_OP_BIND_REQUEST:
		return a->u.bind.version == b->u.bind.version &&
		       view_eq(a->u.bind.name, b->u.bind.name) && a->u.bind.auth == b->u.bind.auth &&
		       view_eq(a->u.bind.password, b->u.bind.password) &&
		       view_eq(a->u.bind.mechanism, b->u.bind.mechanism) &&
		       optional_eq(a->u.bind.has_credentials, a->u.bind.credentials,
				   b->u.bind.has_credentials, b->u.bind.credentials);
	case LDAP_OP_UNBIND_REQUEST:
		return true;
	case LDAP_OP_SEARCH_REQUEST:
		return view_eq(a->u.search.base, b->u.search.base) &&
		       a->u.search.scope == b->u.search.scope && a->u.search.deref == b->u.search.deref &&
		       a->u.search.size_limit == b->u.search.size_limit &&
		       a->u.search.time_limit == b->u.search.time_limit &&
		       a->u.search.types_only == b->u.search.types_only &&
		       filter_eq(a->u.search.filter, b->u.search.filter) &&
		       views_eq(a->u.search.attributes, a->u.search.n_attributes,
				b->u.search.attributes, b->u.search.n_attributes);
	case LDAP_OP_MODIFY_REQUEST:
		if (!view_eq(a->u.modify.object, b->u.modify.object) ||
		    a->u.modify.n_changes != b->u.modify.n_changes)
			return false;
		for (size_t i = 0; i < a->u.modify.n_changes; i++)
			if (a->u.modify.changes[i].operation != b->u.modify.changes[i].operation ||
			    !attrs_eq(&a->u.modify.changes[i].modification, 1,
				      &b->u.modify.changes[i].modification, 1))
				return false;
		return true;
	case LDAP_OP_ADD_REQUEST:
		return view_eq(a->u.add.entry, b->u.add.entry) &&
		       attrs_eq(a->u.add.attributes, a->u.add.n_attributes,
				b->u.add.attributes, b->u.add.n_attributes);
	case LDAP_OP_DELETE_REQUEST:
		return view_eq(a->u.delete_dn, b->u.delete_dn);
	case LDAP_OP_MODDN_REQUEST:
		return view_eq(a->u.moddn.entry, b->u.moddn.entry) &&
		       view_eq(a->u.moddn.new_rdn, b->u.moddn.new_rdn) &&
		       a->u.moddn.delete_old_rdn == b->u.moddn.delete_old_rdn &&
		       optional_eq(a->u.moddn.has_new_superior, a->u.moddn.new_superior,
				   b->u.moddn.has_new_superior, b->u.moddn.new_superior);
	case LDAP_OP_COMPARE_REQUEST:
		return view_eq(a->u.compare.entry, b->u.compare.entry) &&
		       view_eq(a->u.compare.attr, b->u.compare.attr) &&
		       view_eq(a->u.compare.value, b->u.compare.value);
	case LDAP_OP_ABANDON_REQUEST:
		return a->u.abandon_id == b->u.abandon_id;
	case LDAP_OP_EXTENDED_REQUEST:
		return view_eq(a->u.extended.oid, b->u.extended.oid) &&
		       optional_eq(a->u.extended.has_value, a->u.extended.value,
				   b->u.extended.has_value, b->u.extended.value);
	case LDAP_OP_BIND_RESPONSE:
		return result_eq(&a->u.bind_response.result, &b->u.bind_response.result) &&
		       optional_eq(a->u.bind_response.has_sasl_credentials,
				   a->u.bind_response.sasl_credentials,
				   b->u.bind_response.has_sasl_credentials,
				   b->u.bind_response.sasl_credentials);
	case LDAP_OP_SEARCH_ENTRY:
		return view_eq(a->u.entry.dn, b->u.entry.dn) &&
		       attrs_eq(a->u.entry.attributes, a->u.entry.n_attributes,
				b->u.entry.attributes, b->u.entry.n_attributes);
	case LDAP_OP_SEARCH_REFERENCE:
		return views_eq(a->u.reference.uris, a->u.reference.n_uris,
				b->u.reference.uris, b->u.reference.n_uris);
	case LDAP_OP_EXTENDED_RESPONSE:
		return result_eq(&a->u.extended_response.result, &b->u.extended_response.result) &&
		       optional_eq(a->u.extended_response.has_name, a->u.extended_response.name,
				   b->u.extended_response.has_name, b->u.extended_response.name) &&
		       optional_eq(a->u.extended_response.has_value, a->u.extended_response.value,
				   b->u.extended_response.has_value, b->u.extended_response.value);
	case LDAP_OP_INTERMEDIATE_RESPONSE:
		return optional_eq(a->u.intermediate.has_name, a->u.intermediate.name,
				   b->u.intermediate.has_name, b->u.intermediate.name) &&
		       optional_eq(a->u.intermediate.has_value, a->u.intermediate.value,
				   b->u.intermediate.has_value, b->u.intermediate.value);
	default:
		return result_eq(&a->u.result, &b->u.result);
	}
}

static bool message_eq(const struct ldap_message *a, const struct ldap_message *b)
{
	if (a->message_id != b->message_id || a->op != b->op || a->n_controls != b->n_controls)
		return false;
	for (size_t i = 0; i < a->n_controls; i++)
		if (!view_eq(a->controls[i].oid, b->controls[i].oid) ||
		    a->controls[i].critical != b->controls[i].critical ||
		    !optional_eq(a->controls[i].has_value, a->controls[i].value,
				 b->controls[i].has_value, b->controls[i].value))
			return false;
	return body_eq(a, b);
}

/*
 * Encode m, decode the result and require deep equality. When expect_bytes
 * is given, the encoding must also equal it exactly (canonical input).
 */
static void assert_round_trip(const char *name, const struct ldap_message *m,
			      const struct pdu *expect_bytes)
{
	struct ber_writer w;
	struct arena arena;
	struct ldap_message back;
	const char *why = NULL;
	ck_assert_int_eq(ber_writer_init(&w, 0, 0), LUMEN_OK);
	arena_init(&arena, 0);
	ldap_message_encode(&w, m);
	ck_assert_msg(ber_writer_error(&w) == LUMEN_OK, "%s: encode failed", name);
	if (expect_bytes != NULL)
		ck_assert_msg(w.len == expect_bytes->len &&
			      memcmp(w.buf, expect_bytes->bytes, w.len) == 0,
			      "%s: re-encoding differs from the input", name);
	int rc = ldap_message_decode(w.buf, w.len, &arena, NULL, &back, &why);
	ck_assert_msg(rc == LUMEN_OK, "%s: decode of encoding failed: %d %s", name, rc,
		      why != NULL ? why : "");
	ck_assert_msg(message_eq(m, &back), "%s: round trip differs", name);
	arena_free(&arena);
	ber_writer_free(&w);
}

/* ------------------------------------------------------ decode vectors */

struct decode_vector {
	int expect;
	const char *name;
	const char *spec;
	int op;            /* expected op when OK or EUNSUPPORTED */
	bool canonical;    /* OK vectors: re-encoding must give the same bytes */
};

#define SEARCH(filter) "30( 020105 63( 04'dc=x' 0a0102 0a0100 020100 020100 010100 " filter " 30( 04'cn' ) ) )"
#define OP(tag, body) "30( 020107 " tag "( " body " ) )"
#define RESULT_OK "0a0100 04'' 04''"

static const struct decode_vector decode_vectors[] = {
	/* envelope */
	{ LUMEN_OK, "anonymous simple bind", "30( 020101 60( 020103 04'' 80'' ) )", 0, true },
	{ LUMEN_OK, "unbind", "30( 020102 4200 )", 2, true },
	{ LUMEN_OK, "largest messageID", "30( 02047fffffff 4200 )", 2, true },
	{ LUMEN_EMALFORMED, "unbind with contents", "30( 020102 420100 )", 0, false },
	{ LUMEN_EMALFORMED, "unbind constructed", "30( 020102 6200 )", 0, false },
	{ LUMEN_EMALFORMED, "negative messageID", "30( 0201ff 4200 )", 0, false },
	{ LUMEN_EMALFORMED, "messageID 2^31", "30( 02050080000000 4200 )", 0, false },
	{ LUMEN_EMALFORMED, "non-minimal messageID", "30( 02020001 4200 )", 0, false },
	{ LUMEN_EMALFORMED, "nine-octet messageID", "30( 0209000000000000000001 4200 )", 0, false },
	{ LUMEN_EMALFORMED, "messageID as enumerated", "30( 0a0101 4200 )", 0, false },
	{ LUMEN_EMALFORMED, "missing protocolOp", "30( 020101 )", 0, false },
	{ LUMEN_EMALFORMED, "universal protocolOp", "30( 020101 0400 )", 0, false },
	{ LUMEN_EMALFORMED, "garbage after protocolOp", "30( 020102 4200 0500 )", 0, false },
	{ LUMEN_EMALFORMED, "bytes after the envelope", "30( 020102 4200 ) 00", 0, false },
	{ LUMEN_EMALFORMED, "envelope is a SET", "31( 020102 4200 )", 0, false },
	{ LUMEN_EMALFORMED, "indefinite envelope", "30 80 020102 4200 0000", 0, false },
	{ LUMEN_EMALFORMED, "five-octet envelope length", "30 85 0000000005 020102 4200", 0, false },
	{ LUMEN_EMALFORMED, "truncated envelope", "30 07 020102 4200", 0, false },
	{ LUMEN_EMALFORMED, "empty input", "", 0, false },
	{ LUMEN_EUNSUPPORTED, "unknown protocolOp 30", "30( 020107 7e( ) )", 30, false },
	{ LUMEN_EUNSUPPORTED, "unknown protocolOp 17", "30( 020107 5100 )", 17, false },
	{ LUMEN_EUNSUPPORTED, "multi-byte protocolOp", "30( 020107 7f20( 0500 ) )", 0, false },

	/* bind */
	{ LUMEN_OK, "simple bind", OP("60", "020103 04'cn=admin' 80'secret'"), 0, true },
	{ LUMEN_OK, "sasl bind", OP("60", "020103 04'' a3( 04'EXTERNAL' )"), 0, true },
	{ LUMEN_OK, "sasl bind with credentials", OP("60", "020103 04'' a3( 04'PLAIN' 04'x' )"), 0, true },
	{ LUMEN_EMALFORMED, "sasl trailing data", OP("60", "020103 04'' a3( 04'PLAIN' 04'x' 0500 )"), 0, false },
	{ LUMEN_EMALFORMED, "sasl mechanism missing", OP("60", "020103 04'' a3( )"), 0, false },
	{ LUMEN_EMALFORMED, "bind version 0", OP("60", "020100 04'' 80''"), 0, false },
	{ LUMEN_EMALFORMED, "bind version 128", OP("60", "02020080 04'' 80''"), 0, false },
	{ LUMEN_EUNSUPPORTED, "bind with Kerberos choice", OP("60", "020103 04'' 81''"), 0, false },
	{ LUMEN_EMALFORMED, "bind with universal auth", OP("60", "020103 04'' 04''"), 0, false },
	{ LUMEN_EMALFORMED, "bind without auth", OP("60", "020103 04''"), 0, false },
	{ LUMEN_EMALFORMED, "bind with trailing data", OP("60", "020103 04'' 80'' 0500"), 0, false },
	{ LUMEN_EMALFORMED, "simple password constructed", OP("60", "020103 04'' a0( )"), 0, false },

	/* search */
	{ LUMEN_OK, "search equality", SEARCH("a3( 04'uid' 04'jo' )"), 3, true },
	{ LUMEN_OK, "search children scope",
	  "30( 020105 63( 04'' 0a0103 0a0103 02020080 02017f 0101ff 87'cn' 30( ) ) )", 3, true },
	{ LUMEN_OK, "search BER true typesOnly",
	  "30( 020105 63( 04'' 0a0100 0a0100 020100 020100 010101 87'cn' 30( ) ) )", 3, false },
	{ LUMEN_EINVAL, "search scope 4",
	  "30( 020105 63( 04'' 0a0104 0a0100 020100 020100 010100 87'cn' 30( ) ) )", 0, false },
	{ LUMEN_EINVAL, "search deref 4",
	  "30( 020105 63( 04'' 0a0100 0a0104 020100 020100 010100 87'cn' 30( ) ) )", 0, false },
	{ LUMEN_EINVAL, "search negative deref",
	  "30( 020105 63( 04'' 0a0100 0a01ff 020100 020100 010100 87'cn' 30( ) ) )", 0, false },
	{ LUMEN_EMALFORMED, "search deref of 5 octets",
	  "30( 020105 63( 04'' 0a0100 0a050100000000 020100 020100 010100 87'cn' 30( ) ) )", 0, false },
	{ LUMEN_EMALFORMED, "search negative sizeLimit",
	  "30( 020105 63( 04'' 0a0100 0a0100 0201ff 020100 010100 87'cn' 30( ) ) )", 0, false },
	{ LUMEN_EMALFORMED, "search scope as integer",
	  "30( 020105 63( 04'' 020100 0a0100 020100 020100 010100 87'cn' 30( ) ) )", 0, false },
	{ LUMEN_EMALFORMED, "search without attribute list",
	  "30( 020105 63( 04'' 0a0100 0a0100 020100 020100 010100 87'cn' ) )", 0, false },
	{ LUMEN_EMALFORMED, "search attribute not a string",
	  "30( 020105 63( 04'' 0a0100 0a0100 020100 020100 010100 87'cn' 30( 020101 ) ) )", 0, false },
	{ LUMEN_EMALFORMED, "search trailing data",
	  "30( 020105 63( 04'' 0a0100 0a0100 020100 020100 010100 87'cn' 30( ) 0500 ) )", 0, false },
	{ LUMEN_EMALFORMED, "search without filter",
	  "30( 020105 63( 04'' 0a0100 0a0100 020100 020100 010100 30( ) ) )", 0, false },
	{ LUMEN_EMALFORMED, "search huge attribute list length",
	  "30( 020105 63( 04'' 0a0100 0a0100 020100 020100 010100 87'cn' 30 84 7fffffff ) )", 0, false },

	/* filters */
	{ LUMEN_OK, "present", SEARCH("87'objectClass'"), 3, true },
	{ LUMEN_OK, "and", SEARCH("a0( 87'a' a3( 04'b' 04'c' ) )"), 3, true },
	{ LUMEN_OK, "empty and (absolute true)", SEARCH("a0( )"), 3, true },
	{ LUMEN_OK, "empty or (absolute false)", SEARCH("a1( )"), 3, true },
	{ LUMEN_OK, "not", SEARCH("a2( 87'a' )"), 3, true },
	{ LUMEN_OK, "substrings all pieces", SEARCH("a4( 04'cn' 30( 80'a' 81'b' 81'c' 82'd' ) )"), 3, true },
	{ LUMEN_OK, "substrings any only", SEARCH("a4( 04'cn' 30( 81'b' ) )"), 3, true },
	{ LUMEN_OK, "substrings final only", SEARCH("a4( 04'cn' 30( 82'b' ) )"), 3, true },
	{ LUMEN_OK, "greaterOrEqual", SEARCH("a5( 04'age' 04'3' )"), 3, true },
	{ LUMEN_OK, "lessOrEqual", SEARCH("a6( 04'age' 04'3' )"), 3, true },
	{ LUMEN_OK, "approx", SEARCH("a8( 04'cn' 04'jo' )"), 3, true },
	{ LUMEN_OK, "extensible full", SEARCH("a9( 81'caseIgnoreMatch' 82'cn' 83'Jo' 8401ff )"), 3, true },
	{ LUMEN_OK, "extensible type only", SEARCH("a9( 82'cn' 83'Jo' )"), 3, true },
	{ LUMEN_OK, "extensible rule only", SEARCH("a9( 81'2.5.13.2' 83'Jo' )"), 3, true },
	{ LUMEN_OK, "extensible explicit FALSE", SEARCH("a9( 82'cn' 83'Jo' 840100 )"), 3, false },
	{ LUMEN_EMALFORMED, "not empty", SEARCH("a2( )"), 0, false },
	{ LUMEN_EMALFORMED, "not with two filters", SEARCH("a2( 87'a' 87'b' )"), 0, false },
	{ LUMEN_EMALFORMED, "substrings without pieces", SEARCH("a4( 04'cn' 30( ) )"), 0, false },
	{ LUMEN_EMALFORMED, "initial not first", SEARCH("a4( 04'cn' 30( 81'b' 80'a' ) )"), 0, false },
	{ LUMEN_EMALFORMED, "initial twice", SEARCH("a4( 04'cn' 30( 80'a' 80'b' ) )"), 0, false },
	{ LUMEN_EMALFORMED, "any after final", SEARCH("a4( 04'cn' 30( 82'a' 81'b' ) )"), 0, false },
	{ LUMEN_EMALFORMED, "final twice", SEARCH("a4( 04'cn' 30( 82'a' 82'b' ) )"), 0, false },
	{ LUMEN_EMALFORMED, "unknown substring choice", SEARCH("a4( 04'cn' 30( 83'a' ) )"), 0, false },
	{ LUMEN_EMALFORMED, "constructed substring", SEARCH("a4( 04'cn' 30( a1( ) ) )"), 0, false },
	{ LUMEN_EMALFORMED, "substrings in a SET", SEARCH("a4( 04'cn' 31( 80'a' ) )"), 0, false },
	{ LUMEN_EMALFORMED, "substrings trailing data", SEARCH("a4( 04'cn' 30( 80'a' ) 0500 )"), 0, false },
	{ LUMEN_EMALFORMED, "equality without value", SEARCH("a3( 04'uid' )"), 0, false },
	{ LUMEN_EMALFORMED, "equality trailing data", SEARCH("a3( 04'uid' 04'jo' 04'x' )"), 0, false },
	{ LUMEN_EMALFORMED, "primitive equality", SEARCH("83'x'"), 0, false },
	{ LUMEN_EMALFORMED, "constructed present", SEARCH("a7( 04'x' )"), 0, false },
	{ LUMEN_EMALFORMED, "filter choice 10", SEARCH("aa( )"), 0, false },
	{ LUMEN_EMALFORMED, "filter of application class", SEARCH("63( )"), 0, false },
	{ LUMEN_EMALFORMED, "filter of universal class", SEARCH("04'x'"), 0, false },
	{ LUMEN_EMALFORMED, "extensible without rule or type", SEARCH("a9( 83'Jo' )"), 0, false },
	{ LUMEN_EMALFORMED, "extensible without value", SEARCH("a9( 82'cn' )"), 0, false },
	{ LUMEN_EMALFORMED, "extensible bad boolean", SEARCH("a9( 82'cn' 83'Jo' 84020000 )"), 0, false },
	{ LUMEN_EMALFORMED, "extensible trailing data", SEARCH("a9( 82'cn' 83'Jo' 8401ff 0500 )"), 0, false },
	{ LUMEN_EMALFORMED, "extensible out of order", SEARCH("a9( 83'Jo' 82'cn' )"), 0, false },
	{ LUMEN_EMALFORMED, "filter length beyond search", SEARCH("a3 0a 0403'uid'"), 0, false },
	{ LUMEN_EMALFORMED, "filter indefinite length", SEARCH("a0 80 87'a' 0000"), 0, false },

	/* modify */
	{ LUMEN_OK, "modify replace", OP("66", "04'x' 30( 30( 0a0102 30( 04'cn' 31( 04'a' ) ) ) )"), 6, true },
	{ LUMEN_OK, "modify delete all values", OP("66", "04'x' 30( 30( 0a0101 30( 04'cn' 31( ) ) ) )"), 6, true },
	{ LUMEN_OK, "modify increment", OP("66", "04'x' 30( 30( 0a0103 30( 04'n' 31( 04'1' ) ) ) )"), 6, true },
	{ LUMEN_OK, "modify without changes", OP("66", "04'x' 30( )"), 6, true },
	{ LUMEN_EMALFORMED, "modify operation 4", OP("66", "04'x' 30( 30( 0a0104 30( 04'cn' 31( ) ) ) )"), 0, false },
	{ LUMEN_EMALFORMED, "modify values in a SEQUENCE",
	  OP("66", "04'x' 30( 30( 0a0102 30( 04'cn' 30( 04'a' ) ) ) )"), 0, false },
	{ LUMEN_EMALFORMED, "modify change trailing data",
	  OP("66", "04'x' 30( 30( 0a0102 30( 04'cn' 31( ) ) 0500 ) )"), 0, false },
	{ LUMEN_EMALFORMED, "modify attribute trailing data",
	  OP("66", "04'x' 30( 30( 0a0102 30( 04'cn' 31( ) 0500 ) ) )"), 0, false },
	{ LUMEN_EMALFORMED, "modify value not a string",
	  OP("66", "04'x' 30( 30( 0a0102 30( 04'cn' 31( 020101 ) ) ) )"), 0, false },

	/* add */
	{ LUMEN_OK, "add", OP("68", "04'cn=a' 30( 30( 04'cn' 31( 04'a' ) ) 30( 04'objectClass' 31( 04'top' 04'person' ) ) )"), 8, true },
	/* the operation's error (op_add answers protocolError), not the PDU's */
	{ LUMEN_OK, "add attribute without values", OP("68", "04'x' 30( 30( 04'cn' 31( ) ) )"), 8, true },
	{ LUMEN_EMALFORMED, "add attributes in a SET", OP("68", "04'x' 31( 30( 04'cn' 31( 04'a' ) ) )"), 0, false },

	/* delete, moddn, compare, abandon, extended */
	{ LUMEN_OK, "delete", "30( 020103 4a'cn=a,dc=x' )", 10, true },
	{ LUMEN_OK, "delete root DSE", "30( 020103 4a'' )", 10, true },
	{ LUMEN_EMALFORMED, "delete constructed", "30( 020103 6a( 04'cn=a' ) )", 0, false },
	{ LUMEN_OK, "moddn", OP("6c", "04'cn=a,dc=x' 04'cn=b' 0101ff"), 12, true },
	{ LUMEN_OK, "moddn new superior", OP("6c", "04'cn=a,dc=x' 04'cn=b' 010100 80'dc=y'"), 12, true },
	{ LUMEN_EMALFORMED, "moddn superior untagged", OP("6c", "04'cn=a' 04'cn=b' 010100 04'dc=y'"), 0, false },
	{ LUMEN_EMALFORMED, "moddn without deleteoldrdn", OP("6c", "04'cn=a' 04'cn=b'"), 0, false },
	{ LUMEN_EMALFORMED, "moddn trailing data", OP("6c", "04'cn=a' 04'cn=b' 010100 80'dc=y' 0500"), 0, false },
	{ LUMEN_OK, "compare", OP("6e", "04'cn=a' 30( 04'cn' 04'a' )"), 14, true },
	{ LUMEN_EMALFORMED, "compare trailing assertion data", OP("6e", "04'cn=a' 30( 04'cn' 04'a' 0500 )"), 0, false },
	{ LUMEN_EMALFORMED, "compare without value", OP("6e", "04'cn=a' 30( 04'cn' )"), 0, false },
	{ LUMEN_OK, "abandon", "30( 020104 500102 )", 16, true },
	{ LUMEN_EMALFORMED, "abandon negative", "30( 020104 5001ff )", 0, false },
	{ LUMEN_EMALFORMED, "abandon empty", "30( 020104 5000 )", 0, false },
	{ LUMEN_EMALFORMED, "abandon non-minimal", "30( 020104 50020002 )", 0, false },
	{ LUMEN_OK, "whoami", OP("77", "80'1.3.6.1.4.1.4203.1.11.3'"), 23, true },
	{ LUMEN_OK, "extended with value", OP("77", "80'1.3.6.1.1.8' 81( 30( 020105 ) )"), 23, true },
	{ LUMEN_EMALFORMED, "extended without name", OP("77", "81'x'"), 0, false },
	{ LUMEN_EMALFORMED, "extended trailing data", OP("77", "80'1.2' 81'x' 0500"), 0, false },

	/* responses */
	{ LUMEN_OK, "bind response", OP("61", RESULT_OK), 1, true },
	{ LUMEN_OK, "bind response with sasl credentials", OP("61", "0a010e 04'' 04'' 87'abc'"), 1, true },
	{ LUMEN_OK, "search entry", OP("64", "04'cn=a' 30( 30( 04'cn' 31( 04'a' ) ) 30( 04'sn' 31( ) ) )"), 4, true },
	{ LUMEN_OK, "search done with referral",
	  OP("65", "0a010a 04'dc=x' 04'see' a3( 04'ldap://a/' 04'ldap://b/' )"), 5, true },
	{ LUMEN_EMALFORMED, "empty referral", OP("65", "0a010a 04'' 04'' a3( )"), 0, false },
	{ LUMEN_EMALFORMED, "negative result code", OP("65", "0a01ff 04'' 04''"), 0, false },
	{ LUMEN_EMALFORMED, "result without diagnostic", OP("65", "0a0100 04''"), 0, false },
	{ LUMEN_EMALFORMED, "result trailing data", OP("65", RESULT_OK " 0500"), 0, false },
	{ LUMEN_OK, "modify response", OP("67", "0a0110 04'' 04'no such attribute'"), 7, true },
	{ LUMEN_OK, "add response", OP("69", "0a0144 04'' 04''"), 9, true },
	{ LUMEN_OK, "delete response", OP("6b", "0a0142 04'dc=x' 04''"), 11, true },
	{ LUMEN_OK, "moddn response", OP("6d", RESULT_OK), 13, true },
	{ LUMEN_OK, "compare response", OP("6f", "0a0106 04'' 04''"), 15, true },
	{ LUMEN_OK, "search reference", OP("73", "04'ldap://a/dc=x' 04'ldap://b/dc=x'"), 19, true },
	{ LUMEN_EMALFORMED, "search reference without URIs", "30( 020107 7300 )", 0, false },
	{ LUMEN_EMALFORMED, "search reference not strings", OP("73", "020101"), 0, false },
	{ LUMEN_OK, "extended response", OP("78", RESULT_OK " 8a'1.2' 8b'v'"), 24, true },
	{ LUMEN_OK, "notice of disconnection", "30( 020100 78( 0a0134 04'' 04'bye' 8a'1.3.6.1.4.1.1466.20036' ) )", 24, true },
	{ LUMEN_EMALFORMED, "extended response out of order", OP("78", RESULT_OK " 8b'v' 8a'1.2'"), 0, false },
	{ LUMEN_OK, "intermediate response", OP("79", "80'1.2' 81'v'"), 25, true },
	{ LUMEN_OK, "intermediate response empty", "30( 020107 79( ) )", 25, true },
	{ LUMEN_EMALFORMED, "intermediate response trailing data", OP("79", "80'1.2' 81'v' 0500"), 0, false },

	/* controls */
	{ LUMEN_OK, "control", "30( 020101 4a'x' a0( 30( 04'1.2.3' ) ) )", 10, true },
	{ LUMEN_OK, "critical control with value",
	  "30( 020101 4a'x' a0( 30( 04'1.2.3' 0101ff 04( 3000 ) ) 30( 04'1.2.4' 04'' ) ) )", 10, true },
	{ LUMEN_OK, "explicit non-critical control", "30( 020101 4a'x' a0( 30( 04'1.2.3' 010100 ) ) )", 10, false },
	{ LUMEN_OK, "empty controls", "30( 020101 4a'x' a0( ) )", 10, false },
	{ LUMEN_EMALFORMED, "control trailing data", "30( 020101 4a'x' a0( 30( 04'1.2.3' 04'' 0500 ) ) )", 0, false },
	{ LUMEN_EMALFORMED, "control value before criticality",
	  "30( 020101 4a'x' a0( 30( 04'1.2.3' 04'' 0101ff ) ) )", 0, false },
	{ LUMEN_EMALFORMED, "control without type", "30( 020101 4a'x' a0( 30( ) ) )", 0, false },
	{ LUMEN_EMALFORMED, "control not a sequence", "30( 020101 4a'x' a0( 04'1.2.3' ) )", 0, false },
	{ LUMEN_EMALFORMED, "controls with tag [1]", "30( 020101 4a'x' a1( ) )", 0, false },
	{ LUMEN_EMALFORMED, "data after controls", "30( 020101 4a'x' a0( ) 0500 )", 0, false },
	{ LUMEN_EMALFORMED, "controls twice", "30( 020101 4a'x' a0( ) a0( ) )", 0, false },
};

START_TEST(test_decode_vectors)
{
	const struct decode_vector *v = &decode_vectors[_i];
	struct pdu pdu;
	struct arena arena;
	struct ldap_message m;
	const char *why = NULL;
	build_pdu(v->spec, &pdu);
	arena_init(&arena, 0);
	int rc = ldap_message_decode(pdu.bytes, pdu.len, &arena, NULL, &m, &why);
	ck_assert_msg(rc == v->expect, "%s: got %d (%s) want %d", v->name, rc,
		      why != NULL ? why : "-", v->expect);
	if (rc != LUMEN_OK)
		ck_assert_msg(why != NULL, "%s: no diagnostic", v->name);
	if (rc == LUMEN_EUNSUPPORTED) {
		ck_assert_msg(m.message_id == 7, "%s: message id %d", v->name, m.message_id);
		if (v->op != 0)
			ck_assert_int_eq(m.op, v->op);
	}
	if (rc == LUMEN_OK) {
		ck_assert_msg((int)m.op == v->op, "%s: op %d", v->name, m.op);
		assert_round_trip(v->name, &m, v->canonical ? &pdu : NULL);
		int32_t id;
		int op;
		ck_assert_int_eq(ldap_message_peek(pdu.bytes, pdu.len, &id, &op), LUMEN_OK);
		ck_assert_int_eq(id, m.message_id);
		ck_assert_int_eq(op, m.op);
	}
	arena_free(&arena);
}
END_TEST

START_TEST(test_decoded_fields)
{
	struct pdu pdu;
	struct arena arena;
	struct ldap_message m;
	build_pdu(SEARCH("a4( 04'cn' 30( 80'a' 81'b' 81'c' 82'd' ) )"), &pdu);
	arena_init(&arena, 0);
	ck_assert_int_eq(ldap_message_decode(pdu.bytes, pdu.len, &arena, NULL, &m, NULL), LUMEN_OK);
	ck_assert_int_eq(m.message_id, 5);
	ck_assert(ber_view_eq_str(m.u.search.base, "dc=x"));
	ck_assert_int_eq(m.u.search.scope, LDAP_SCOPE_SUBTREE);
	ck_assert_uint_eq(m.u.search.n_attributes, 1);
	ck_assert(ber_view_eq_str(m.u.search.attributes[0], "cn"));
	const struct ldap_filter *f = m.u.search.filter;
	ck_assert_int_eq(f->type, LDAP_FILTER_SUBSTRINGS);
	ck_assert(f->u.substrings.has_initial && ber_view_eq_str(f->u.substrings.initial, "a"));
	ck_assert_uint_eq(f->u.substrings.n_any, 2);
	ck_assert(ber_view_eq_str(f->u.substrings.any[1], "c"));
	ck_assert(f->u.substrings.has_final && ber_view_eq_str(f->u.substrings.final, "d"));
	/* raw_filter is exactly the filter element inside the PDU. */
	ck_assert_uint_eq(m.u.search.raw_filter.ptr[0], 0xa4);
	ck_assert_uint_eq(m.u.search.raw_filter.len, 2 + 4 + 2 + 12);
	arena_free(&arena);

	build_pdu("30( 020101 4a'x' a0( 30( 04'1.2.3' 0101ff 04'v' ) ) )", &pdu);
	arena_init(&arena, 0);
	ck_assert_int_eq(ldap_message_decode(pdu.bytes, pdu.len, &arena, NULL, &m, NULL), LUMEN_OK);
	ck_assert_uint_eq(m.n_controls, 1);
	ck_assert(m.controls[0].critical && m.controls[0].has_value);
	ck_assert(ber_view_eq_str(m.controls[0].value, "v"));
	arena_free(&arena);
}
END_TEST

/* ------------------------------------------------------------- limits */

/* A SearchRequest whose filter is `depth` NOTs around a present filter. */
static void encode_nested_search(struct ber_writer *w, unsigned depth, int nesting_tag)
{
	ber_begin(w, BER_TAG_SEQUENCE);
	ber_write_integer(w, BER_TAG_INTEGER, 1);
	ber_begin(w, BER_TAG_APP_CONS(LDAP_OP_SEARCH_REQUEST));
	ber_write_string(w, BER_TAG_OCTET_STRING, "");
	ber_write_integer(w, BER_TAG_ENUMERATED, 0);
	ber_write_integer(w, BER_TAG_ENUMERATED, 0);
	ber_write_integer(w, BER_TAG_INTEGER, 0);
	ber_write_integer(w, BER_TAG_INTEGER, 0);
	ber_write_boolean(w, BER_TAG_BOOLEAN, false);
	/* Opened by hand: the writer's own nesting bound is lower than some depths here. */
	for (unsigned i = 0; i < depth; i++)
		ber_write_raw(w, (uint8_t[]){ (uint8_t)(0xa0 | nesting_tag), 0x84, 0, 0, 0, 0 }, 6);
	size_t inner_start = w->len;
	ber_write_string(w, BER_TAG_CONTEXT(LDAP_FILTER_PRESENT), "cn");
	size_t inner_len = w->len - inner_start;
	for (unsigned i = 0; i < depth; i++) {
		size_t length = inner_len + 6 * i;
		uint8_t *header = w->buf + inner_start - 6 * (i + 1);
		header[2] = (uint8_t)(length >> 24);
		header[3] = (uint8_t)(length >> 16);
		header[4] = (uint8_t)(length >> 8);
		header[5] = (uint8_t)length;
	}
	ber_begin(w, BER_TAG_SEQUENCE);
	ber_end(w);
	ber_end(w);
	ber_end(w);
}

struct depth_vector {
	int expect;
	unsigned depth;
	int tag; /* AND, OR or NOT */
	unsigned limit;
};

static const struct depth_vector depth_vectors[] = {
	/* OpenLDAP's maxfilterdepth default */
	{ LUMEN_OK, LDAP_DEFAULT_MAX_FILTER_DEPTH, LDAP_FILTER_NOT, 0 },
	{ LUMEN_ELIMIT, LDAP_DEFAULT_MAX_FILTER_DEPTH + 1, LDAP_FILTER_NOT, 0 },
	{ LUMEN_OK, LDAP_DEFAULT_MAX_FILTER_DEPTH, LDAP_FILTER_AND, 0 },
	{ LUMEN_ELIMIT, LDAP_DEFAULT_MAX_FILTER_DEPTH + 1, LDAP_FILTER_OR, 0 },
	{ LUMEN_ELIMIT, 5000, LDAP_FILTER_NOT, 0 },
	{ LUMEN_OK, 3, LDAP_FILTER_NOT, 3 },
	{ LUMEN_ELIMIT, 4, LDAP_FILTER_AND, 3 },
	{ LUMEN_ELIMIT, 1, LDAP_FILTER_NOT, 0xffffffff },  /* sentinel: limit 0 */
};

START_TEST(test_filter_depth)
{
	const struct depth_vector *v = &depth_vectors[_i];
	struct ldap_decode_limits limits;
	struct ber_writer w;
	struct arena arena;
	struct ldap_message m;
	const char *why = NULL;
	ldap_decode_limits_default(&limits);
	if (v->limit == 0xffffffff)
		limits.max_filter_depth = 0;
	else if (v->limit != 0)
		limits.max_filter_depth = v->limit;
	limits.max_filter_nodes = 100000;
	ck_assert_int_eq(ber_writer_init(&w, 0, 0), LUMEN_OK);
	encode_nested_search(&w, v->depth, v->tag);
	ck_assert_int_eq(ber_writer_error(&w), LUMEN_OK);
	arena_init(&arena, 0);
	int rc = ldap_message_decode(w.buf, w.len, &arena, &limits, &m, &why);
	ck_assert_msg(rc == v->expect, "depth %u: got %d (%s)", v->depth, rc, why ? why : "-");
	arena_free(&arena);
	ber_writer_free(&w);
}
END_TEST

/* An AND of n present filters, or a search for n attributes. */
static void encode_wide_search(struct ber_writer *w, size_t n_terms, size_t n_attributes)
{
	ber_begin(w, BER_TAG_SEQUENCE);
	ber_write_integer(w, BER_TAG_INTEGER, 1);
	ber_begin(w, BER_TAG_APP_CONS(LDAP_OP_SEARCH_REQUEST));
	ber_write_string(w, BER_TAG_OCTET_STRING, "");
	ber_write_integer(w, BER_TAG_ENUMERATED, 0);
	ber_write_integer(w, BER_TAG_ENUMERATED, 0);
	ber_write_integer(w, BER_TAG_INTEGER, 0);
	ber_write_integer(w, BER_TAG_INTEGER, 0);
	ber_write_boolean(w, BER_TAG_BOOLEAN, false);
	ber_begin(w, BER_TAG_CONTEXT_CONS(LDAP_FILTER_AND));
	for (size_t i = 0; i < n_terms; i++)
		ber_write_string(w, BER_TAG_CONTEXT(LDAP_FILTER_PRESENT), "a");
	ber_end(w);
	ber_begin(w, BER_TAG_SEQUENCE);
	for (size_t i = 0; i < n_attributes; i++)
		ber_write_string(w, BER_TAG_OCTET_STRING, "");
	ber_end(w);
	ber_end(w);
	ber_end(w);
}

struct width_vector {
	int expect;
	const char *name;
	size_t terms, attributes;
	size_t max_nodes, max_elements; /* 0 = default */
	size_t arena_max;               /* 0 = unbounded */
};

static const struct width_vector width_vectors[] = {
	{ LUMEN_OK, "1023 terms + the AND", 1023, 0, 0, 0, 0 },
	{ LUMEN_ELIMIT, "1024 terms + the AND", 1024, 0, 0, 0, 0 },
	{ LUMEN_OK, "65536 attributes", 1, 65536, 0, 0, 0 },
	{ LUMEN_ELIMIT, "65537 attributes", 1, 65537, 0, 0, 0 },
	{ LUMEN_OK, "10 attributes, limit 10", 1, 10, 0, 10, 0 },
	{ LUMEN_ELIMIT, "11 attributes, limit 10", 1, 11, 0, 10, 0 },
	{ LUMEN_ELIMIT, "3 terms, 3 nodes", 3, 0, 3, 0, 0 },
	{ LUMEN_ENOMEM, "arena too small", 1, 1000, 0, 0, 256 },
};

START_TEST(test_width_limits)
{
	const struct width_vector *v = &width_vectors[_i];
	struct ldap_decode_limits limits;
	struct ber_writer w;
	struct arena arena;
	struct ldap_message m;
	const char *why = NULL;
	ldap_decode_limits_default(&limits);
	if (v->max_nodes != 0)
		limits.max_filter_nodes = v->max_nodes;
	if (v->max_elements != 0)
		limits.max_elements = v->max_elements;
	ck_assert_int_eq(ber_writer_init(&w, 0, 0), LUMEN_OK);
	encode_wide_search(&w, v->terms, v->attributes);
	ck_assert_int_eq(ber_writer_error(&w), LUMEN_OK);
	arena_init(&arena, v->arena_max);
	int rc = ldap_message_decode(w.buf, w.len, &arena, &limits, &m, &why);
	ck_assert_msg(rc == v->expect, "%s: got %d (%s)", v->name, rc, why ? why : "-");
	arena_free(&arena);
	ber_writer_free(&w);
}
END_TEST

START_TEST(test_search_decode_reuses_arena)
{
	/* The hot path: after the first decode, the same decode adds no arena block. */
	struct pdu pdu;
	struct arena arena;
	struct ldap_message m;
	build_pdu(SEARCH("a0( a3( 04'objectClass' 04'person' ) a3( 04'uid' 04'jo' ) )"), &pdu);
	arena_init(&arena, 0);
	ck_assert_int_eq(ldap_message_decode(pdu.bytes, pdu.len, &arena, NULL, &m, NULL), LUMEN_OK);
	struct arena_block *blocks = arena.blocks;
	size_t used = arena.used;
	for (int i = 0; i < 1000; i++) {
		arena_reset(&arena);
		ck_assert_int_eq(ldap_message_decode(pdu.bytes, pdu.len, &arena, NULL, &m, NULL), LUMEN_OK);
	}
	ck_assert_uint_eq(arena.used, used);
#ifndef LUMEN_ARENA_MALLOC
	ck_assert_ptr_eq(arena.blocks, blocks);
#else
	(void)blocks;
#endif
	arena_free(&arena);
}
END_TEST

/* --------------------------------------------------------------- peek */

struct peek_vector {
	int expect;
	const char *name;
	const char *spec;
	int32_t id;
	int op;
};

static const struct peek_vector peek_vectors[] = {
	{ LUMEN_OK, "search", SEARCH("87'a'"), 5, 3 },
	{ LUMEN_OK, "unknown op still peeks", "30( 020109 7e( ) )", 9, 30 },
	{ LUMEN_OK, "body not checked", "30( 02010a 63( 0500 ) )", 10, 3 },
	{ LUMEN_EMALFORMED, "universal op", "30( 020109 0400 )", 9, 0 },
	{ LUMEN_EMALFORMED, "no op", "30( 020109 )", 9, 0 },
	{ LUMEN_EMALFORMED, "bad messageID", "30( 0201ff 4200 )", 0, 0 },
	{ LUMEN_EMALFORMED, "not a sequence", "04'x'", 0, 0 },
	{ LUMEN_EMALFORMED, "trailing bytes", "30( 020109 4200 ) 00", 0, 0 },
};

START_TEST(test_peek_vectors)
{
	const struct peek_vector *v = &peek_vectors[_i];
	struct pdu pdu;
	int32_t id = -1;
	int op = -1;
	build_pdu(v->spec, &pdu);
	int rc = ldap_message_peek(pdu.bytes, pdu.len, &id, &op);
	ck_assert_msg(rc == v->expect, "%s: got %d", v->name, rc);
	ck_assert_msg(id == v->id, "%s: id %d", v->name, id);
	if (rc == LUMEN_OK)
		ck_assert_int_eq(op, v->op);
}
END_TEST

/* The requestName of an ExtendedRequest, read without decoding the rest. */
struct extended_name_vector {
	int expect;
	const char *name, *spec, *oid;
};

static const struct extended_name_vector extended_name_vectors[] = {
	{ LUMEN_OK, "StartTLS", "30( 020101 77( 80'1.3.6.1.4.1.1466.20037' ) )",
	  "1.3.6.1.4.1.1466.20037" },
	{ LUMEN_OK, "value and controls after it",
	  "30( 020102 77( 80'1.3.6.1.1.8' 81( 30( 020163 ) ) ) "
	  "a0( 30( 04'1.3.6.1.4.1.1466.20037' ) ) )", "1.3.6.1.1.8" },
	{ LUMEN_OK, "the rest is not checked", "30( 020103 77( 80'1.2.3' 0500 ) )", "1.2.3" },
	{ LUMEN_EMALFORMED, "a search", SEARCH("87'a'"), NULL },
	{ LUMEN_EMALFORMED, "no requestName", "30( 020104 77( 81'x' ) )", NULL },
	{ LUMEN_EMALFORMED, "empty", "30( 020104 77( ) )", NULL },
	{ LUMEN_EMALFORMED, "primitive protocolOp", "30( 020104 5700 )", NULL },
	{ LUMEN_EMALFORMED, "bad envelope", "30( 0201ff 77( 80'1.2' ) )", NULL },
	{ LUMEN_EMALFORMED, "name runs past the op", "30( 020104 77( 8005'1.2' ) )", NULL },
};

START_TEST(test_peek_extended_name)
{
	const struct extended_name_vector *v = &extended_name_vectors[_i];
	struct pdu pdu;
	struct ber_view name = { NULL, 0 };
	build_pdu(v->spec, &pdu);
	int rc = ldap_message_peek_extended_name(pdu.bytes, pdu.len, &name);
	ck_assert_msg(rc == v->expect, "%s: got %d", v->name, rc);
	if (rc == LUMEN_OK)
		ck_assert_msg(ber_view_eq_str(name, v->oid), "%s: name %.*s", v->name,
			      (int)name.len, (const char *)name.ptr);
}
END_TEST

/* ------------------------------------------------ struct round trips */

#define V(s) ((struct ber_view){ (const uint8_t *)(s), sizeof(s) - 1 })

static struct ber_view values_ab[] = { V("a"), V("b\0binary") };
static struct ldap_attribute attributes_two[] = {
	{ V("cn"), values_ab, 2 },
	{ V("objectClass"), values_ab, 1 },
};
static struct ldap_change changes[] = {
	{ LDAP_MOD_ADD, { V("mail"), values_ab, 1 } },
	{ LDAP_MOD_DELETE, { V("sn"), NULL, 0 } },
	{ LDAP_MOD_REPLACE, { V("cn"), values_ab, 2 } },
	{ LDAP_MOD_INCREMENT, { V("uidNumber"), values_ab, 1 } },
};
static struct ber_view uris[] = { V("ldap://a/dc=x??sub"), V("ldap://b/") };
static struct ldap_control controls_two[] = {
	{ V("1.2.840.113556.1.4.319"), true, true, V("\x30\x05\x02\x01\x05\x04\x00") },
	{ V("2.16.840.1.113730.3.4.2"), false, false, { NULL, 0 } },
};

/* (&(objectClass=person)(|(cn=a*b*c)(!(sn>=x)))(uid:caseExactMatch:=Jo)(mail=*)(age<=3)(cn~=jo)) */
static struct ber_view any_b[] = { V("b") };
static struct ldap_filter f_ext = { .type = LDAP_FILTER_EXTENSIBLE, .u.extensible = {
	true, true, V("caseExactMatch"), V("uid"), V("Jo"), true } };
static struct ldap_filter f_approx = { .type = LDAP_FILTER_APPROX, .next = &f_ext,
	.u.ava = { V("cn"), V("jo") } };
static struct ldap_filter f_le = { .type = LDAP_FILTER_LESS_OR_EQUAL, .next = &f_approx,
	.u.ava = { V("age"), V("3") } };
static struct ldap_filter f_present = { .type = LDAP_FILTER_PRESENT, .next = &f_le,
	.u.present = V("mail") };
static struct ldap_filter f_ge = { .type = LDAP_FILTER_GREATER_OR_EQUAL, .u.ava = { V("sn"), V("x") } };
static struct ldap_filter f_not = { .type = LDAP_FILTER_NOT, .u.child = &f_ge };
static struct ldap_filter f_sub = { .type = LDAP_FILTER_SUBSTRINGS, .next = &f_not,
	.u.substrings = { V("cn"), true, true, V("a"), V("c"), any_b, 1 } };
static struct ldap_filter f_or = { .type = LDAP_FILTER_OR, .next = &f_present, .u.children = &f_sub };
static struct ldap_filter f_eq = { .type = LDAP_FILTER_EQUALITY, .next = &f_or,
	.u.ava = { V("objectClass"), V("person") } };
static struct ldap_filter f_and = { .type = LDAP_FILTER_AND, .u.children = &f_eq };
static struct ldap_filter f_empty_or = { .type = LDAP_FILTER_OR };

static struct ldap_message struct_messages[] = {
	{ 1, LDAP_OP_BIND_REQUEST, .u.bind = { 3, V("cn=admin,dc=x"), LDAP_AUTH_SIMPLE, V("secret"),
		{ NULL, 0 }, false, { NULL, 0 } } },
	{ 2, LDAP_OP_BIND_REQUEST, .u.bind = { 3, V(""), LDAP_AUTH_SASL, { NULL, 0 },
		V("DIGEST-MD5"), true, V("\x00\x01") } },
	{ 3, LDAP_OP_UNBIND_REQUEST, .n_controls = 0 },
	{ 4, LDAP_OP_SEARCH_REQUEST, .u.search = { V("dc=example,dc=com"), LDAP_SCOPE_ONE,
		LDAP_DEREF_ALWAYS, 500, 2147483647, true, &f_and, { NULL, 0 }, values_ab, 2 },
	  .controls = controls_two, .n_controls = 2 },
	{ 5, LDAP_OP_SEARCH_REQUEST, .u.search = { V(""), LDAP_SCOPE_BASE, LDAP_DEREF_NEVER,
		0, 0, false, &f_empty_or, { NULL, 0 }, NULL, 0 } },
	{ 6, LDAP_OP_MODIFY_REQUEST, .u.modify = { V("uid=jo,dc=x"), changes, 4 } },
	{ 7, LDAP_OP_ADD_REQUEST, .u.add = { V("cn=a,dc=x"), attributes_two, 2 } },
	{ 8, LDAP_OP_DELETE_REQUEST, .u.delete_dn = V("cn=a,dc=x") },
	{ 9, LDAP_OP_MODDN_REQUEST, .u.moddn = { V("cn=a,dc=x"), V("cn=b"), true, true, V("ou=y") } },
	{ 10, LDAP_OP_MODDN_REQUEST, .u.moddn = { V("cn=a,dc=x"), V("cn=b"), false, false, { NULL, 0 } } },
	{ 11, LDAP_OP_COMPARE_REQUEST, .u.compare = { V("cn=a"), V("cn"), V("a") } },
	{ 12, LDAP_OP_ABANDON_REQUEST, .u.abandon_id = 2147483647 },
	{ 13, LDAP_OP_ABANDON_REQUEST, .u.abandon_id = 0 },
	{ 14, LDAP_OP_EXTENDED_REQUEST, .u.extended = { V(LDAP_OID_PASSWORD_MODIFY), true, V("\x30\x00") } },
	{ 15, LDAP_OP_EXTENDED_REQUEST, .u.extended = { V(LDAP_OID_STARTTLS), false, { NULL, 0 } } },
	{ 16, LDAP_OP_BIND_RESPONSE, .u.bind_response = { { LDAP_SASL_BIND_IN_PROGRESS, V(""), V(""),
		NULL, 0 }, true, V("challenge") } },
	{ 17, LDAP_OP_SEARCH_ENTRY, .u.entry = { V("cn=a,dc=x"), attributes_two, 2 } },
	{ 18, LDAP_OP_SEARCH_REFERENCE, .u.reference = { uris, 2 } },
	{ 19, LDAP_OP_SEARCH_DONE, .u.result = { LDAP_REFERRAL, V("dc=x"), V("go away"), uris, 2 } },
	{ 20, LDAP_OP_MODIFY_RESPONSE, .u.result = { LDAP_NO_SUCH_ATTRIBUTE, V(""), V("x"), NULL, 0 } },
	{ 21, LDAP_OP_ADD_RESPONSE, .u.result = { LDAP_ENTRY_ALREADY_EXISTS, V(""), V(""), NULL, 0 } },
	{ 22, LDAP_OP_DELETE_RESPONSE, .u.result = { LDAP_NOT_ALLOWED_ON_NON_LEAF, V(""), V(""), NULL, 0 } },
	{ 23, LDAP_OP_MODDN_RESPONSE, .u.result = { LDAP_SUCCESS, V(""), V(""), NULL, 0 } },
	{ 24, LDAP_OP_COMPARE_RESPONSE, .u.result = { LDAP_COMPARE_TRUE, V(""), V(""), NULL, 0 },
	  .controls = controls_two + 1, .n_controls = 1 },
	{ 25, LDAP_OP_EXTENDED_RESPONSE, .u.extended_response = { { LDAP_SUCCESS, V(""), V(""), NULL, 0 },
		true, true, V(LDAP_OID_WHOAMI), V("dn:cn=a") } },
	{ 26, LDAP_OP_EXTENDED_RESPONSE, .u.extended_response = { { LDAP_OTHER, V(""), V("no"), NULL, 0 },
		false, false, { NULL, 0 }, { NULL, 0 } } },
	{ 27, LDAP_OP_INTERMEDIATE_RESPONSE, .u.intermediate = { true, true, V("1.3.6.1.4.1.4203.1.9.1.4"),
		V("\x30\x00") } },
	{ 28, LDAP_OP_INTERMEDIATE_RESPONSE, .u.intermediate = { false, true, { NULL, 0 }, V("v") } },
};

START_TEST(test_struct_round_trip)
{
	char name[64];
	snprintf(name, sizeof(name), "message %d (%s)", struct_messages[_i].message_id,
		 ldap_op_name(struct_messages[_i].op));
	assert_round_trip(name, &struct_messages[_i], NULL);
}
END_TEST

START_TEST(test_encode_rejects_unknown_op)
{
	struct ber_writer w;
	struct ldap_message m = { .message_id = 1, .op = (enum ldap_op)17 };
	ck_assert_int_eq(ber_writer_init(&w, 0, 0), LUMEN_OK);
	ldap_message_encode(&w, &m);
	ck_assert_int_eq(ber_writer_error(&w), LUMEN_EINVAL);
	ber_writer_reset(&w);
	struct ldap_filter bad = { .type = (enum ldap_filter_type)10 };
	ldap_filter_encode(&w, &bad);
	ck_assert_int_eq(ber_writer_error(&w), LUMEN_EINVAL);
	ber_writer_free(&w);
}
END_TEST

/* -------------------------------------------------------- fast paths */

static void decode_writer(struct ber_writer *w, struct arena *arena, struct ldap_message *m)
{
	const char *why = NULL;
	ck_assert_int_eq(ber_writer_error(w), LUMEN_OK);
	int rc = ldap_message_decode(w->buf, w->len, arena, NULL, m, &why);
	ck_assert_msg(rc == LUMEN_OK, "fast path output does not decode: %s", why ? why : "-");
}

START_TEST(test_fast_path_results)
{
	struct ber_writer w;
	struct arena arena;
	struct ldap_message m;
	ck_assert_int_eq(ber_writer_init(&w, 0, 0), LUMEN_OK);
	arena_init(&arena, 0);

	ldap_encode_result(&w, 42, LDAP_OP_SEARCH_DONE, LDAP_NO_SUCH_OBJECT, "dc=x", "gone",
			   controls_two, 2);
	decode_writer(&w, &arena, &m);
	ck_assert_int_eq(m.message_id, 42);
	ck_assert_int_eq(m.op, LDAP_OP_SEARCH_DONE);
	ck_assert_int_eq(m.u.result.code, LDAP_NO_SUCH_OBJECT);
	ck_assert(ber_view_eq_str(m.u.result.matched_dn, "dc=x"));
	ck_assert(ber_view_eq_str(m.u.result.diagnostic, "gone"));
	ck_assert_uint_eq(m.n_controls, 2);

	ber_writer_reset(&w);
	ldap_encode_result(&w, 1, LDAP_OP_ADD_RESPONSE, LDAP_SUCCESS, NULL, NULL, NULL, 0);
	decode_writer(&w, &arena, &m);
	ck_assert_int_eq(m.op, LDAP_OP_ADD_RESPONSE);
	ck_assert_uint_eq(m.u.result.matched_dn.len + m.u.result.diagnostic.len + m.n_controls, 0);

	ber_writer_reset(&w);
	struct ber_view creds = V("srv");
	ldap_encode_bind_response(&w, 3, LDAP_SASL_BIND_IN_PROGRESS, NULL, NULL, &creds);
	decode_writer(&w, &arena, &m);
	ck_assert_int_eq(m.op, LDAP_OP_BIND_RESPONSE);
	ck_assert_int_eq(m.u.bind_response.result.code, LDAP_SASL_BIND_IN_PROGRESS);
	ck_assert(m.u.bind_response.has_sasl_credentials);
	ck_assert(ber_view_eq_str(m.u.bind_response.sasl_credentials, "srv"));

	ber_writer_reset(&w);
	ldap_encode_bind_response(&w, 3, LDAP_INVALID_CREDENTIALS, "", "bad", NULL);
	decode_writer(&w, &arena, &m);
	ck_assert(!m.u.bind_response.has_sasl_credentials);

	ber_writer_reset(&w);
	struct ber_view authz = V("dn:cn=a");
	ldap_encode_extended_response(&w, 8, LDAP_SUCCESS, NULL, LDAP_OID_WHOAMI, &authz);
	decode_writer(&w, &arena, &m);
	ck_assert_int_eq(m.op, LDAP_OP_EXTENDED_RESPONSE);
	ck_assert(m.u.extended_response.has_name && m.u.extended_response.has_value);
	ck_assert(ber_view_eq_str(m.u.extended_response.value, "dn:cn=a"));

	ber_writer_reset(&w);
	ldap_encode_notice_of_disconnection(&w, LDAP_PROTOCOL_ERROR, "bad PDU");
	decode_writer(&w, &arena, &m);
	ck_assert_int_eq(m.message_id, 0);
	ck_assert_int_eq(m.u.extended_response.result.code, LDAP_PROTOCOL_ERROR);
	ck_assert(ber_view_eq_str(m.u.extended_response.name, LDAP_OID_NOTICE_OF_DISCONNECTION));
	ck_assert(!m.u.extended_response.has_value);

	arena_free(&arena);
	ber_writer_free(&w);
}
END_TEST

/* The direct IntermediateResponse encoder: the same bytes as the struct path. */
START_TEST(test_fast_path_intermediate)
{
	struct ber_writer w, expected;
	struct arena arena;
	struct ldap_message m;
	struct ber_view value = V("\xa1\x03\x01\x01\xff");
	ck_assert_int_eq(ber_writer_init(&w, 0, 0), LUMEN_OK);
	ck_assert_int_eq(ber_writer_init(&expected, 0, 0), LUMEN_OK);
	arena_init(&arena, 0);

	ldap_encode_intermediate(&w, 9, "1.3.6.1.4.1.4203.1.9.1.4", &value);
	decode_writer(&w, &arena, &m);
	ck_assert_int_eq(m.message_id, 9);
	ck_assert_int_eq(m.op, LDAP_OP_INTERMEDIATE_RESPONSE);
	ck_assert(m.u.intermediate.has_name && m.u.intermediate.has_value);
	ck_assert(ber_view_eq_str(m.u.intermediate.name, "1.3.6.1.4.1.4203.1.9.1.4"));
	ck_assert_uint_eq(m.u.intermediate.value.len, value.len);
	ldap_message_encode(&expected, &m);
	ck_assert_uint_eq(expected.len, w.len);
	ck_assert(memcmp(expected.buf, w.buf, w.len) == 0);

	ber_writer_reset(&w);
	ldap_encode_intermediate(&w, 10, NULL, NULL);
	decode_writer(&w, &arena, &m);
	ck_assert(!m.u.intermediate.has_name && !m.u.intermediate.has_value);

	arena_free(&arena);
	ber_writer_free(&expected);
	ber_writer_free(&w);
}
END_TEST

START_TEST(test_fast_path_entry)
{
	struct ber_writer w;
	struct arena arena;
	struct ldap_message m;
	static char big[300];
	memset(big, 'v', sizeof(big));
	ck_assert_int_eq(ber_writer_init(&w, 0, 0), LUMEN_OK);
	arena_init(&arena, 0);
	/* Two entries back to back in one buffer, as a search writes them. */
	for (int e = 0; e < 2; e++) {
		ldap_encode_entry_begin(&w, 9, "cn=a,dc=x", 9);
		ldap_encode_entry_attribute_begin(&w, "cn", 2);
		ldap_encode_entry_value(&w, "a", 1);
		ldap_encode_entry_value(&w, big, sizeof(big));
		ldap_encode_entry_attribute_end(&w);
		ldap_encode_entry_attribute_begin(&w, "sn", 2);
		ldap_encode_entry_attribute_end(&w);
		ldap_encode_entry_end(&w, e == 0 ? NULL : controls_two, e == 0 ? 0 : 1);
	}
	ck_assert_int_eq(ber_writer_error(&w), LUMEN_OK);
	ck_assert_uint_eq(w.depth, 0);
	size_t first_len;
	ck_assert_int_eq(ber_frame(w.buf, w.len, 0, &first_len), LUMEN_OK);
	ck_assert_int_eq(ldap_message_decode(w.buf, first_len, &arena, NULL, &m, NULL), LUMEN_OK);
	ck_assert_int_eq(m.op, LDAP_OP_SEARCH_ENTRY);
	ck_assert(ber_view_eq_str(m.u.entry.dn, "cn=a,dc=x"));
	ck_assert_uint_eq(m.u.entry.n_attributes, 2);
	ck_assert_uint_eq(m.u.entry.attributes[0].n_values, 2);
	ck_assert_uint_eq(m.u.entry.attributes[0].values[1].len, sizeof(big));
	ck_assert_uint_eq(m.u.entry.attributes[1].n_values, 0);
	ck_assert_uint_eq(m.n_controls, 0);
	ck_assert_int_eq(ldap_message_decode(w.buf + first_len, w.len - first_len, &arena, NULL,
					     &m, NULL), LUMEN_OK);
	ck_assert_uint_eq(m.n_controls, 1);
	arena_free(&arena);
	ber_writer_free(&w);
}
END_TEST

/* ---------------------------------------------------------- names */

START_TEST(test_names)
{
	ck_assert_str_eq(ldap_result_name(LDAP_SUCCESS), "success");
	ck_assert_str_eq(ldap_result_name(LDAP_NO_SUCH_OBJECT), "noSuchObject");
	ck_assert_str_eq(ldap_result_name(LDAP_ASSERTION_FAILED), "assertionFailed");
	ck_assert_str_eq(ldap_result_name(9), "unknown");
	ck_assert_str_eq(ldap_result_name(-1), "unknown");
	ck_assert_str_eq(ldap_op_name(LDAP_OP_SEARCH_REQUEST), "searchRequest");
	ck_assert_str_eq(ldap_op_name(LDAP_OP_INTERMEDIATE_RESPONSE), "intermediateResponse");
	ck_assert_str_eq(ldap_op_name(17), "unknown");
	ck_assert_str_eq(ldap_op_name(-3), "unknown");
	ck_assert_str_eq(ldap_op_name(1000), "unknown");
	ck_assert_str_eq(lumen_strerror(LUMEN_OK), "success");
	ck_assert_str_eq(lumen_strerror(LUMEN_EMALFORMED), "malformed input");
	ck_assert_str_eq(lumen_strerror(LUMEN_EPOISONED), "object poisoned by an earlier failure");
	ck_assert_str_eq(lumen_strerror(-1000), "unknown error");
	ck_assert_str_eq(lumen_strerror(5), "unknown error");
}
END_TEST

/* ----------------------------------------- PROTOS c06 robustness PDUs */

#define PROTOS_DIR "../shared/testdata/protos-c06-ldapv3-enc"

static uint8_t *read_whole_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return NULL;
	uint8_t *buf = NULL;
	if (fseek(f, 0, SEEK_END) == 0) {
		long size = ftell(f);
		if (size >= 0 && fseek(f, 0, SEEK_SET) == 0) {
			buf = malloc((size_t)size + 1);
			if (buf != NULL && fread(buf, 1, (size_t)size, f) != (size_t)size) {
				free(buf);
				buf = NULL;
			}
			*len = (size_t)size;
		}
	}
	fclose(f);
	return buf;
}

START_TEST(test_protos_corpus)
{
	/* the shared test data is part of the tree's contract: missing is a failure */
	DIR *dir = opendir(PROTOS_DIR);
	ck_assert_msg(dir != NULL, "%s is missing (the PROTOS c06 PDUs this test needs)",
		      PROTOS_DIR);
	struct arena arena;
	struct ldap_decode_limits limits;
	struct dirent *de;
	size_t files = 0, accepted = 0;
	ldap_decode_limits_default(&limits);
	arena_init(&arena, 0);
	while ((de = readdir(dir)) != NULL) {
		size_t n = strlen(de->d_name);
		if (n < 4 || strcmp(de->d_name + n - 4, ".ber") != 0)
			continue;
		char path[512];
		snprintf(path, sizeof(path), "%s/%s", PROTOS_DIR, de->d_name);
		size_t len = 0;
		uint8_t *pdu = read_whole_file(path, &len);
		ck_assert_msg(pdu != NULL, "cannot read %s", path);
		struct ldap_message m;
		const char *why = NULL;
		size_t framed = len;
		/* As the server would: frame first (bounded like a bound client), then decode. */
		int rc = ber_frame(pdu, len, 4u << 20, &framed);
		if (rc == LUMEN_OK)
			rc = ldap_message_decode(pdu, framed, &arena, &limits, &m, &why);
		ck_assert_msg(rc == LUMEN_OK || rc == LUMEN_EMALFORMED || rc == LUMEN_ELIMIT ||
			      rc == LUMEN_EUNSUPPORTED || rc == LUMEN_EINCOMPLETE,
			      "%s: unexpected %d", de->d_name, rc);
		if (rc == LUMEN_OK) {
			accepted++;
			assert_round_trip(de->d_name, &m, NULL);
		}
		arena_reset(&arena);
		free(pdu);
		files++;
	}
	closedir(dir);
	arena_free(&arena);
	fprintf(stderr, "protos c06: %zu PDUs, %zu decoded OK\n", files, accepted);
	ck_assert_uint_gt(files, 0);
}
END_TEST

#define N_ELEMENTS(a) ((int)(sizeof(a) / sizeof((a)[0])))

static Suite *make_suite(void)
{
	Suite *s = suite_create("ldap_message");
	TCase *decode = tcase_create("decode");
	tcase_add_loop_test(decode, test_decode_vectors, 0, N_ELEMENTS(decode_vectors));
	tcase_add_test(decode, test_decoded_fields);
	tcase_add_loop_test(decode, test_peek_vectors, 0, N_ELEMENTS(peek_vectors));
	tcase_add_loop_test(decode, test_peek_extended_name, 0, N_ELEMENTS(extended_name_vectors));
	suite_add_tcase(s, decode);
	TCase *limits = tcase_create("limits");
	tcase_set_timeout(limits, 60);
	tcase_add_loop_test(limits, test_filter_depth, 0, N_ELEMENTS(depth_vectors));
	tcase_add_loop_test(limits, test_width_limits, 0, N_ELEMENTS(width_vectors));
	tcase_add_test(limits, test_search_decode_reuses_arena);
	suite_add_tcase(s, limits);
	TCase *encode = tcase_create("encode");
	tcase_add_loop_test(encode, test_struct_round_trip, 0, N_ELEMENTS(struct_messages));
	tcase_add_test(encode, test_encode_rejects_unknown_op);
	tcase_add_test(encode, test_fast_path_results);
	tcase_add_test(encode, test_fast_path_intermediate);
	tcase_add_test(encode, test_fast_path_entry);
	tcase_add_test(encode, test_names);
	suite_add_tcase(s, encode);
	TCase *corpus = tcase_create("corpus");
	tcase_set_timeout(corpus, 120);
	tcase_add_test(corpus, test_protos_corpus);
	suite_add_tcase(s, corpus);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
