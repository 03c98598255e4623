/*
 * rootdse.c — the root DSE's attributes, as an entry for its in-memory
 * database (rootdse.h).
 */
#include "rootdse.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "controls.h"
#include "entry.h"
#include "lumen_error.h"
#include "memdb.h"
#include "schema.h"

#define ROOTDSE_MAX_ATTRIBUTES 16

#define ROOTDSE_MAX_CONTROLS 32

struct rootdse_attribute {
	const char *name;
	const char *const *values;
	size_t n_values;
	const struct attribute_type *type;   /* NULL: the schema does not know it */
};

struct rootdse {
	struct rootdse_attribute attributes[ROOTDSE_MAX_ATTRIBUTES];
	size_t n_attributes;
	const char **naming_contexts;     /* borrowed strings from the config */
	const char *controls[ROOTDSE_MAX_CONTROLS]; /* supported and configured */
	const struct schema *schema;
	struct entry *entry;              /* the attributes the schema knows */
};

/* Only what is actually implemented is advertised; StartTLS (the last)
 * only when TLS is configured. */
static const char *const extensions[] = {
	LDAP_OID_WHOAMI, LDAP_OID_PASSWORD_MODIFY, LDAP_OID_CANCEL, LDAP_OID_TXN_START,
	LDAP_OID_TXN_END, LDAP_OID_STARTTLS,
};
static const char *const sasl_mechanisms[] = { "EXTERNAL" };
static const char *const features[] = {
	"1.3.6.1.1.14",                   /* modify-increment (RFC 4525) */
	"1.3.6.1.4.1.4203.1.5.1",         /* "+" selects all operational attributes */
	"1.3.6.1.4.1.4203.1.5.2",         /* "@class" selects a class's attributes */
	"1.3.6.1.4.1.4203.1.5.3",         /* absolute true (&) and false (|) filters */
};
static const char *const versions[] = { "3" };
/* slapd says top and OpenLDAProotDSE (its own class, an extensibleObject);
 * the standard class keeps (objectClass=top) and (objectClass=*) searches
 * of the root DSE behaving as there. */
static const char *const object_classes[] = { "top", "extensibleObject" };
static const char *const subschema[] = { "cn=Subschema" };
static const char *const monitor_context[] = { "cn=Monitor" };
static const char *const vendor_name[] = { LUMEN_VENDOR_NAME };
static const char *const vendor_version[] = { LUMEN_VENDOR_VERSION };

/* Controls that work only where their overlay is configured. */
static const struct {
	const char *oid;
	const char *overlay;
} overlay_controls[] = {
	{ CONTROL_PASSWORD_POLICY, "ppolicy" },
	{ CONTROL_SYNC_REQUEST, "syncprov" },
};

static bool overlay_configured(const struct config *cfg, const char *name)
{
	for (size_t i = 0; i < cfg->n_databases; i++)
		for (size_t j = 0; j < cfg->databases[i].n_overlays; j++)
			if (strcasecmp(cfg->databases[i].overlays[j].name, name) == 0)
				return true;
	return false;
}

/* The supported controls, less those whose overlay no database has. */
static size_t advertised_controls(const struct config *cfg, const char **out)
{
	const char *const *oids;
	size_t n = controls_supported(&oids), kept = 0;
	for (size_t i = 0; i < n && kept < ROOTDSE_MAX_CONTROLS; i++) {
		bool wanted = true;
		for (size_t j = 0; j < sizeof(overlay_controls) / sizeof(overlay_controls[0]); j++)
			if (strcmp(oids[i], overlay_controls[j].oid) == 0)
				wanted = overlay_configured(cfg, overlay_controls[j].overlay);
		if (wanted)
			out[kept++] = oids[i];
	}
	return kept;
}

static void add_attribute(struct rootdse *dse, const char *name,
			  const char *const *values, size_t n_values)
{
	if (n_values == 0)
		return;                   /* an attribute without values is absent */
	dse->attributes[dse->n_attributes++] = (struct rootdse_attribute){
		name, values, n_values, schema_attribute_type(dse->schema, name, strlen(name)) };
}

#define ADD_STATIC(dse, name, array) \
	add_attribute(dse, name, array, sizeof(array) / sizeof(array[0]))

/*
 * (Re)build the entry: every attribute the schema knows, with its values.
 * LUMEN_ENOMEM, LUMEN_ESCHEMA.
 */
static int build_entry(struct rootdse *dse)
{
	struct ber_view empty = { (const uint8_t *)"", 0 };
	struct entry *e = NULL;
	int rc = entry_create(dse->schema, empty, empty, &e);
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
	ADD_STATIC(dse, "objectClass", object_classes);
	add_attribute(dse, "namingContexts", dse->naming_contexts, n_contexts);
	/* As slapd with back-monitor: where the monitoring tree is. */
	if (schema_attribute_type(cfg->schema, "monitorContext", 14) != NULL)
		ADD_STATIC(dse, "monitorContext", monitor_context);
	ADD_STATIC(dse, "subschemaSubentry", subschema);
	add_attribute(dse, "supportedControl", dse->controls,
		      advertised_controls(cfg, dse->controls));
	add_attribute(dse, "supportedExtension", extensions,
		      sizeof(extensions) / sizeof(extensions[0]) -
			      (cfg->tls.certificate_file == NULL ? 1 : 0));
	ADD_STATIC(dse, "supportedFeatures", features);
	ADD_STATIC(dse, "supportedLDAPVersion", versions);
	ADD_STATIC(dse, "vendorName", vendor_name);
	ADD_STATIC(dse, "vendorVersion", vendor_version);
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
	ADD_STATIC(dse, name, sasl_mechanisms);
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

int rootdse_build(void *dse, struct memdb_walk *walk)
{
	/* RFC 4512 §5.1: the root DSE is not part of a one-level or subtree
	 * search from the root; there is nothing else to find there. */
	if (walk->scope != LDAP_SCOPE_BASE)
		return LUMEN_ENOTFOUND;
	return memdb_emit(walk, rootdse_entry(dse));
}
