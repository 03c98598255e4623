/*
 * config_server_id.h — `serverID` (global) and `multiprovider` (database;
 * `mirrormode` is its older alias) as OpenLDAP 2.5 reads them (config
 * layer), for multi-provider replication.
 *
 *   serverID N                  this server's ID (no other serverID line)
 *   serverID N URL              one line per provider of the set; the one
 *                               whose URL is one of lumend's listeners
 *                               (-h) is this server's
 *   multiprovider on|off        after a syncrepl line, with a serverID:
 *   mirrormode on|off           the replica also takes client writes
 *
 * N is decimal or 0x hex, 0 to 4095 (the three hex digits of a CSN's sid
 * field). A URL is ldap://, ldaps:// or ldapi://; two URLs are the same
 * listener when they are equal ignoring the case of scheme and host and a
 * trailing '/'. Lines with and without URL do not mix, an ID or a URL is
 * given once.
 *
 * Resolution: config_load sets config.server_id when the one serverID line
 * has no URL (the tools then stamp with it too); with URLs, lumend calls
 * config_server_id_resolve with its listener URLs before it opens the
 * databases. Without any serverID line the ID is 0 (CSNs carry #000#).
 *
 * Ownership: the strings of struct config_server_id belong to the config
 * (config_free). Thread-safety: plain functions on caller memory.
 *
 * Errors: LUMEN_EMALFORMED with err naming what was expected (the loader
 * prefixes "FILE:LINE: "), LUMEN_ENOTFOUND when no URL is a listener's,
 * LUMEN_ENOMEM.
 *
 * Caveats:
 *  - OpenLDAP silently keeps serverID 0 when no URL matches a listener;
 *    lumend refuses to start instead (a provider of a multi-provider set
 *    stamping #000# would look like another server's changes).
 */
#ifndef LUMEN_CONFIG_SERVER_ID_H
#define LUMEN_CONFIG_SERVER_ID_H

#include <stdbool.h>
#include <stddef.h>

struct config;

#define CONFIG_SERVER_ID_MAX 0xfffu

struct config_server_id {
	unsigned id;
	char *url;                  /* NULL: the line had none */
	char *origin;               /* "FILE:LINE" */
};

/* "N" (decimal or 0x hex) into 0..CONFIG_SERVER_ID_MAX. LUMEN_EMALFORMED. */
int config_server_id_number(const char *text, unsigned *out);
/* True when a and b name the same listener (see above). */
bool config_server_id_url_equal(const char *a, const char *b);
/*
 * The serverID whose URL is one of the whitespace-separated listener URLs
 * (lumend's -h) into *out; without serverID lines 0, with one without URL
 * that one. LUMEN_ENOTFOUND (err lists why).
 */
int config_server_id_resolve(const struct config *cfg, const char *listener_urls,
			     unsigned *out, char *err, size_t errlen);
/* Frees the serverID lines of cfg. */
void config_free_server_ids(struct config *cfg);

#endif
