/*
 * config_backend.c — struct backend_settings from a database section
 * (config_backend.h).
 */
#include "config_backend.h"

#include <stdlib.h>
#include <string.h>

#include "lumen_error.h"

/* The config's bits are named after the same slapd.conf words as the backend's. */
_Static_assert((unsigned)INDEX_KIND_PRESENT == (unsigned)BACKEND_INDEX_PRESENT &&
		       (unsigned)INDEX_KIND_EQUALITY == (unsigned)BACKEND_INDEX_EQUALITY &&
		       (unsigned)INDEX_KIND_SUBSTRING == (unsigned)BACKEND_INDEX_SUBSTRING &&
		       (unsigned)INDEX_KIND_APPROX == (unsigned)BACKEND_INDEX_APPROX,
	       "index kind bits of config.h and backend.h must agree");

int config_backend_settings(const struct config_database *db, struct backend_settings *out)
{
	size_t n_specs = 0;
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < db->n_indexes; i++)
		n_specs += db->indexes[i].n_attributes;
	const char **suffixes = calloc(db->n_suffixes ? db->n_suffixes : 1, sizeof(*suffixes));
	struct backend_index_spec *indexes = calloc(n_specs ? n_specs : 1, sizeof(*indexes));
	if (suffixes == NULL || indexes == NULL) {
		free(suffixes);
		free(indexes);
		return LUMEN_ENOMEM;
	}
	for (size_t i = 0; i < db->n_suffixes; i++)
		suffixes[i] = db->suffixes[i];
	n_specs = 0;
	for (size_t i = 0; i < db->n_indexes; i++)
		for (size_t a = 0; a < db->indexes[i].n_attributes; a++) {
			indexes[n_specs].attribute = db->indexes[i].attributes[a];
			indexes[n_specs].kinds = db->indexes[i].kinds;
			n_specs++;
		}
	out->suffixes = suffixes;
	out->n_suffixes = db->n_suffixes;
	out->directory = db->directory;
	out->maxsize = (size_t)db->maxsize;
	out->maxreaders = db->maxreaders;
	out->dbnosync = db->dbnosync;
	out->indexes = indexes;
	out->n_indexes = n_specs;
	out->cachesize = db->cachesize == CONFIG_CACHE_OFF ? BACKEND_CACHE_OFF : db->cachesize;
	out->idlcachesize = db->idlcachesize == CONFIG_CACHE_OFF ? BACKEND_CACHE_OFF
								   : db->idlcachesize;
	out->name = db->origin;
	return LUMEN_OK;
}

void config_backend_settings_free(struct backend_settings *settings)
{
	free((void *)settings->suffixes);
	free((void *)settings->indexes);
	memset(settings, 0, sizeof(*settings));
}
