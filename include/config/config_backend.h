/*
 * config_backend.h — a `database mdb` section of slapd.conf translated into
 * the settings the backend opens with (config layer; backend.h is below).
 *
 * lumend and the operator tools both open databases from the same struct
 * backend_settings, built here, so a tool sees the same suffixes, indexes
 * and sizes as the daemon.
 *
 * Ownership: the strings in the settings point into the struct
 * config_database (which must outlive them); the two arrays (suffixes,
 * indexes) are allocated here and released by config_backend_settings_free.
 * Thread-safety: plain functions on caller memory.
 *
 * Caveats:
 *  - One `index a,b kinds` line becomes one backend_index_spec per
 *    attribute; the config's index kind bits equal the backend's.
 *  - read_only and tool_mode are left false: callers set them.
 */
#ifndef LUMEN_CONFIG_BACKEND_H
#define LUMEN_CONFIG_BACKEND_H

#include "backend.h"
#include "config.h"

/*
 * Fill *out for db (zeroed first). Errors: LUMEN_ENOMEM (nothing is left
 * allocated).
 */
int config_backend_settings(const struct config_database *db, struct backend_settings *out);

/* Free the arrays config_backend_settings allocated; zeroes *settings. */
void config_backend_settings_free(struct backend_settings *settings);

#endif
