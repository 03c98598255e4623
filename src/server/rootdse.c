/*
 * rootdse.c — the root DSE's attributes, its selection, its filter test,
 * and the same attributes as an entry for access control.
 */
#include "rootdse.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "controls.h"
#include "entry.h"
#include "lumen_error.h"
#include "schema.h"

#define ROOTDSE_MAX_ATTRIBUTES 16

struct rootdse_attribute {
	const char *name;
	const char *oid;
	const char *const *values;
	size_t n_values;
	const struct attribute_type *type;   /* NULL: the schema does not know it */
};

struct rootdse {
	struct rootdse_attribute attributes[ROOTDSE_MAX_ATTRIBUTES];
	size_t n_attributes;
	const char **naming_contexts;     /* borrowed strings from the config */
	const struct schema *schema;
	struct entry *entry;              /* the same, for access control */
};

/* Only what is actually implemented is advertised; StartTLS (the last)
 * only when TLS is configured. */
static const char *const extensions[] = {
	LDAP_OID_WHOAMI, LDAP_OID_PASSWORD_MODIFY, LDAP_OID_STARTTLS,
};
static const char *const sasl_mechanisms[] = { "EXTERNAL" };
static const char *const features[] = {
	"1.3.6.1.1.14",                   /* modify-increment (RFC 4525) */
	"1.3.6.1.4.1.4203.1.5.1",         /* "+" selects all operational attributes */
	"1.3.6.1.4.1.4203.1.5.2",         /* "@class" selects a class's attributes */
	"1.3.6.1.4.1.4203.1.5.3",         /* absolute true (&) and false (|) filters */
};
static const char *const versions[] = { "3" };
static const char *const subschema[] = { "cn=Subschema" };
static const char *const monitor_context[] = { "cn=Monitor" };
static const char *const vendor_name[] = { LUMEN_VENDOR_NAME };
static const char *const vendor_version[] = { LUMEN_VENDOR_VERSION };

static void add_attribute(struct rootdse *dse, const char *name, const char *oid,
			  const char *const *values, size_t n_values)
{
	if (n_values == 0)
		return;                   /* an attribute without values is absent */
	dse->attributes[dse->n_attributes++] = (struct rootdse_attribute){
		name, oid, values, n_values, schema_attribute_type(dse->schema, name, strlen(name)) };
}

#define ADD_STATIC(dse, name, oid, array) \
	add_attribute(dse, name, oid, array, sizeof(array) / sizeof(array[0]))

/*
 * (Re)build the entry that access control decides on: every attribute the
 * schema knows, with its values, and objectClass top (the evaluator above
 * takes (objectClass=top) as true). LUMEN_ENOMEM, LUMEN_ESCHEMA.
 */
static int build_entry(struct rootdse *dse)
{
	struct ber_view empty = { (const uint8_t *)"", 0 };
	struct entry *e = NULL;
	int rc = entry_create(dse->schema, empty, empty, &e);
	if (rc == LUMEN_OK)
		rc = entry_add_text(e, "objectClass", "top");
	for (size_t i = 0; i < dse->n_attributes && rc == LUMEN_OK; i++) {
		const struct rootdse_attribute *a = &dse->attributes[i];
		for (size_t v = 0; a->type != NULL && v < a->n_values && rc == LUMEN_OK; v++)
			rc = entry_add_text(e, a->name, a->values[v]);
	}
	if (rc != LUMEN_OK) {
		entry_free(e);
		return rc;
	}
	entry_free(dse->entry);
	dse->entry = e;
	return LUMEN_OK;
}

int rootdse_create(const struct config *cfg, struct rootdse **out)
{
	struct rootdse *dse = calloc(1, sizeof(*dse));
	size_t n_contexts = 0;
	*out = NULL;
	if (dse == NULL)
		return LUMEN_ENOMEM;
	dse->schema = cfg->schema;
	for (size_t i = 0; i < cfg->n_databases; i++)
		n_contexts += cfg->databases[i].n_suffixes;
	dse->naming_contexts = calloc(n_contexts + 1, sizeof(char *));
	if (dse->naming_contexts == NULL) {
		free(dse);
		return LUMEN_ENOMEM;
	}
	n_contexts = 0;
	for (size_t i = 0; i < cfg->n_databases; i++)
		for (size_t j = 0; j < cfg->databases[i].n_suffixes; j++)
			dse->naming_contexts[n_contexts++] = cfg->databases[i].suffixes[j];
	add_attribute(dse, "namingContexts", "1.3.6.1.4.1.1466.101.120.5",
		      dse->naming_contexts, n_contexts);
	/* As slapd with back-monitor: where the monitoring tree is. */
	if (schema_attribute_type(cfg->schema, "monitorContext", 14) != NULL)
		ADD_STATIC(dse, "monitorContext", "1.3.6.1.4.1.4203.666.1.10", monitor_context);
	ADD_STATIC(dse, "subschemaSubentry", "2.5.18.10", subschema);
	const char *const *control_oids;
	size_t n_controls = controls_supported(&control_oids);
	add_attribute(dse, "supportedControl", "1.3.6.1.4.1.1466.101.120.13", control_oids,
		      n_controls);
	add_attribute(dse, "supportedExtension", "1.3.6.1.4.1.1466.101.120.7", extensions,
		      sizeof(extensions) / sizeof(extensions[0]) -
			      (cfg->tls.certificate_file == NULL ? 1 : 0));
	ADD_STATIC(dse, "supportedFeatures", "1.3.6.1.4.1.4203.1.3.5", features);
	ADD_STATIC(dse, "supportedLDAPVersion", "1.3.6.1.4.1.1466.101.120.15", versions);
	ADD_STATIC(dse, "vendorName", "1.3.6.1.1.4", vendor_name);
	ADD_STATIC(dse, "vendorVersion", "1.3.6.1.1.5", vendor_version);
	int rc = build_entry(dse);
	if (rc != LUMEN_OK) {
		rootdse_free(dse);
		return rc;
	}
	*out = dse;
	return LUMEN_OK;
}

int rootdse_set_sasl_external(struct rootdse *dse, bool on)
{
	static const char name[] = "supportedSASLMechanisms";
	for (size_t i = 0; i < dse->n_attributes; i++)
		if (strcmp(dse->attributes[i].name, name) == 0)
			return LUMEN_OK;
	if (!on || dse->n_attributes >= ROOTDSE_MAX_ATTRIBUTES)
		return LUMEN_OK;
	ADD_STATIC(dse, name, "1.3.6.1.4.1.1466.101.120.14", sasl_mechanisms);
	return build_entry(dse);
}

void rootdse_free(struct rootdse *dse)
{
	if (dse == NULL)
		return;
	entry_free(dse->entry);
	free(dse->naming_contexts);
	free(dse);
}

const struct entry *rootdse_entry(const struct rootdse *dse)
{
	return dse->entry;
}

static const struct rootdse_attribute *find_attribute(const struct rootdse *dse,
						      struct ber_view name)
{
	for (size_t i = 0; i < dse->n_attributes; i++) {
		const struct rootdse_attribute *a = &dse->attributes[i];
		if (ber_view_eq_str_nocase(name, a->name) || ber_view_eq_str(name, a->oid))
			return a;
	}
	return NULL;
}

static bool is_object_class(struct ber_view name)
{
	return ber_view_eq_str_nocase(name, "objectClass") || ber_view_eq_str(name, "2.5.4.0");
}

enum truth { TRUTH_FALSE, TRUTH_TRUE, TRUTH_UNDEFINED };

static enum truth evaluate(const struct rootdse *dse, const struct ldap_filter *f);

/* AND/OR with RFC 4511 three-valued logic; `decisive` ends the scan. */
static enum truth evaluate_set(const struct rootdse *dse, const struct ldap_filter *first,
			       enum truth decisive, enum truth otherwise)
{
	enum truth result = otherwise;
	for (const struct ldap_filter *c = first; c != NULL; c = c->next) {
		enum truth t = evaluate(dse, c);
		if (t == decisive)
			return decisive;
		if (t == TRUTH_UNDEFINED)
			result = TRUTH_UNDEFINED;
	}
	return result;
}

static enum truth evaluate_equality(const struct rootdse *dse, struct ber_view attr,
				    struct ber_view value)
{
	if (is_object_class(attr))
		return ber_view_eq_str_nocase(value, "top") ? TRUTH_TRUE : TRUTH_FALSE;
	const struct rootdse_attribute *a = find_attribute(dse, attr);
	if (a == NULL)
		return TRUTH_UNDEFINED;
	for (size_t i = 0; i < a->n_values; i++)
		if (ber_view_eq_str_nocase(value, a->values[i]))
			return TRUTH_TRUE;
	return TRUTH_FALSE;
}

static enum truth evaluate(const struct rootdse *dse, const struct ldap_filter *f)
{
	switch (f->type) {
	case LDAP_FILTER_AND:
		return evaluate_set(dse, f->u.children, TRUTH_FALSE, TRUTH_TRUE);
	case LDAP_FILTER_OR:
		return evaluate_set(dse, f->u.children, TRUTH_TRUE, TRUTH_FALSE);
	case LDAP_FILTER_NOT: {
		enum truth t = evaluate(dse, f->u.child);
		return t == TRUTH_UNDEFINED ? t : (t == TRUTH_TRUE ? TRUTH_FALSE : TRUTH_TRUE);
	}
	case LDAP_FILTER_PRESENT:
		return is_object_class(f->u.present) || find_attribute(dse, f->u.present) != NULL
			       ? TRUTH_TRUE : TRUTH_FALSE;
	case LDAP_FILTER_EQUALITY:
		return evaluate_equality(dse, f->u.ava.attr, f->u.ava.value);
	default:
		return TRUTH_UNDEFINED;
	}
}

bool rootdse_matches(const struct rootdse *dse, const struct ldap_filter *filter)
{
	return filter == NULL || evaluate(dse, filter) == TRUTH_TRUE;
}

static bool is_selected(const struct rootdse_attribute *a, const struct ber_view *attributes,
			size_t n_attributes)
{
	for (size_t i = 0; i < n_attributes; i++) {
		struct ber_view want = attributes[i];
		if (ber_view_eq_str(want, "+") || ber_view_eq_str_nocase(want, a->name) ||
		    ber_view_eq_str(want, a->oid))
			return true;
	}
	return false;
}

void rootdse_encode(const struct rootdse *dse, struct ber_writer *w, int32_t message_id,
		    const struct ber_view *attributes, size_t n_attributes, bool types_only,
		    bool (*may_read)(void *arg, const struct attribute_type *type), void *arg)
{
	ldap_encode_entry_begin(w, message_id, "", 0);
	for (size_t i = 0; i < dse->n_attributes; i++) {
		const struct rootdse_attribute *a = &dse->attributes[i];
		if (!is_selected(a, attributes, n_attributes))
			continue;
		if (may_read != NULL && (a->type == NULL || !may_read(arg, a->type)))
			continue;
		ldap_encode_entry_attribute_begin(w, a->name, strlen(a->name));
		for (size_t v = 0; !types_only && v < a->n_values; v++)
			ldap_encode_entry_value(w, a->values[v], strlen(a->values[v]));
		ldap_encode_entry_attribute_end(w);
	}
	ldap_encode_entry_end(w, NULL, 0);
}
