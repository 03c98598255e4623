/*
 * overlay_config.c — what every overlay's creation shares (overlay.h,
 * "Creating an overlay"): its state allocated, prepared, its directive
 * lines applied and checked, its failures worded alike, and the state
 * handed over or destroyed.
 */
#include "overlay.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dn.h"
#include "lumen_error.h"

int overlay_config_fail(const struct overlay_type *type, const struct overlay_setup *setup,
			char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(err, errlen, "%s: overlay %s: ", setup->overlay->origin, type->name);
	if (n >= 0 && (size_t)n < errlen) {
		va_start(ap, fmt);
		vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return LUMEN_EMALFORMED;
}

static int apply_lines(const struct overlay_type *type, void *state,
		       const struct overlay_setup *setup, char *err, size_t errlen)
{
	overlay_line_fn apply = type->steps.apply;
	int rc = LUMEN_OK;
	for (size_t i = 0; apply != NULL && i < setup->overlay->n_lines && rc == LUMEN_OK; i++)
		rc = apply(state, setup, &setup->overlay->lines[i], err, errlen);
	return rc;
}

/* Does setup hold a line of the directive `name`? (NULL: none is needed.) */
static bool has_directive(const struct overlay_setup *setup, const char *name)
{
	for (size_t i = 0; name != NULL && i < setup->overlay->n_lines; i++)
		if (strcasecmp(setup->overlay->lines[i].words[0], name) == 0)
			return true;
	return name == NULL;
}

int overlay_config_create(const struct overlay_type *type, const struct overlay_setup *setup,
			  void **out, char *err, size_t errlen)
{
	void *state = calloc(1, type->steps.state_size);
	int rc = state != NULL ? LUMEN_OK : LUMEN_ENOMEM;
	if (rc == LUMEN_OK && type->steps.prepare != NULL)
		rc = type->steps.prepare(state, setup, err, errlen);
	if (rc == LUMEN_OK)
		rc = apply_lines(type, state, setup, err, errlen);
	if (rc == LUMEN_OK && !has_directive(setup, type->steps.required))
		rc = overlay_config_fail(type, setup, err, errlen, "expected a \"%s\" line",
					 type->steps.required);
	if (rc == LUMEN_OK && type->steps.check != NULL)
		rc = type->steps.check(state, setup, err, errlen);
	if (rc == LUMEN_OK) {
		*out = state;
		return LUMEN_OK;
	}
	if (rc == LUMEN_ENOMEM)
		overlay_config_fail(type, setup, err, errlen, "out of memory");
	if (state != NULL)
		type->destroy(state);
	return rc;
}

int overlay_config_dn(const struct overlay_setup *setup, const struct config_overlay_line *line,
		      const char *usage, struct ber_view *ndn, char *err, size_t errlen)
{
	if (line->n_words != 2)
		return config_overlay_fail(line, err, errlen, "expected \"%s\"", usage);
	const char *dn = line->words[1];
	int rc = dn_normalize(setup->schema, dn, strlen(dn), setup->memory, ndn);
	if (rc == LUMEN_ENOMEM || rc == LUMEN_OK)
		return rc;
	return config_overlay_fail(line, err, errlen, "expected a DN");
}

const struct attribute_type *overlay_config_attribute(const struct overlay_type *type,
						      const struct overlay_setup *setup,
						      const char *name, char *err, size_t errlen)
{
	const struct attribute_type *at = schema_attribute_type(setup->schema, name, strlen(name));
	if (at == NULL)
		overlay_config_fail(type, setup, err, errlen, "the schema has no %s", name);
	return at;
}

static bool names_type(const char *name, const struct attribute_type *type)
{
	if (strcasecmp(name, type->oid) == 0)
		return true;
	for (size_t i = 0; i < type->n_names; i++)
		if (strcasecmp(name, type->names[i]) == 0)
			return true;
	return false;
}

bool overlay_setup_has_equality_index(const struct overlay_setup *setup,
				      const struct attribute_type *type)
{
	const struct config_database *db = setup->database;
	for (size_t i = 0; i < db->n_indexes; i++) {
		const struct config_index *ix = &db->indexes[i];
		if ((ix->kinds & INDEX_KIND_EQUALITY) == 0)
			continue;
		for (size_t j = 0; j < ix->n_attributes; j++)
			if (names_type(ix->attributes[j], type))
				return true;
	}
	return false;
}
