/*
 * config_server_id.c — `serverID` and `multiprovider`/`mirrormode`
 * (config_server_id.h): parsing with OpenLDAP's rules, and the choice of
 * this server's ID among URL-bearing lines from lumend's listeners.
 */
#include "config_server_id.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "array.h"
#include "config_internal.h"
#include "lumen_error.h"

int config_server_id_number(const char *text, unsigned *out)
{
	char *end;
	bool hex = text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
	const char *digits = hex ? text + 2 : text;
	if (!(hex ? isxdigit((unsigned char)digits[0]) : isdigit((unsigned char)digits[0])))
		return LUMEN_EMALFORMED;
	unsigned long n = strtoul(digits, &end, hex ? 16 : 10);
	if (*end != '\0' || n > CONFIG_SERVER_ID_MAX)
		return LUMEN_EMALFORMED;
	*out = (unsigned)n;
	return LUMEN_OK;
}

/* The length of u without one trailing '/'. */
static size_t url_length(const char *u)
{
	size_t n = strlen(u);
	return n > 0 && u[n - 1] == '/' ? n - 1 : n;
}

bool config_server_id_url_equal(const char *a, const char *b)
{
	size_t n = url_length(a);
	return n == url_length(b) && strncasecmp(a, b, n) == 0;
}

static bool known_scheme(const char *url)
{
	return strncasecmp(url, "ldap://", 7) == 0 || strncasecmp(url, "ldaps://", 8) == 0 ||
	       strncasecmp(url, "ldapi://", 8) == 0;
}

/* Another line with this ID or URL, or a mix of lines with and without URL. */
static int check_against_others(struct parse_state *st, unsigned id, const char *url)
{
	const struct config *cfg = st->cfg;
	for (size_t i = 0; i < cfg->n_server_ids; i++) {
		const struct config_server_id *o = &cfg->server_ids[i];
		if ((o->url == NULL) != (url == NULL))
			return config_fail_at(st, LUMEN_EMALFORMED, "serverID: lines with and "
					      "without URL do not mix (%s)", o->origin);
		if (url == NULL)
			return config_fail_at(st, LUMEN_EMALFORMED, "serverID: only one line "
					      "without URL is allowed (%s)", o->origin);
		if (o->id == id)
			return config_fail_at(st, LUMEN_EMALFORMED, "serverID: %u is already "
					      "defined (%s)", id, o->origin);
		if (config_server_id_url_equal(o->url, url))
			return config_fail_at(st, LUMEN_EMALFORMED, "serverID: URL %s is already "
					      "defined (%s)", url, o->origin);
	}
	return LUMEN_OK;
}

static int apply_server_id(struct parse_state *st, size_t argc, char **argv)
{
	unsigned id;
	const char *url = argc > 2 ? argv[2] : NULL;
	if (config_server_id_number(argv[1], &id) != LUMEN_OK)
		return config_fail_at(st, LUMEN_EMALFORMED, "serverID: expected a number from 0 "
				      "to 4095 (decimal or 0x hex), got \"%s\"", argv[1]);
	if (url != NULL && !known_scheme(url))
		return config_fail_at(st, LUMEN_EMALFORMED, "serverID: expected an ldap://, "
				      "ldaps:// or ldapi:// URL, got \"%s\"", url);
	int rc = check_against_others(st, id, url);
	if (rc != LUMEN_OK)
		return rc;
	struct config *cfg = st->cfg;
	struct config_server_id *s = ARRAY_PUSH(cfg->server_ids, cfg->n_server_ids);
	if (s == NULL)
		return LUMEN_ENOMEM;
	s->id = id;
	s->origin = config_origin(st);
	s->url = url != NULL ? strdup(url) : NULL;
	if (s->origin == NULL || (url != NULL && s->url == NULL))
		return LUMEN_ENOMEM;
	cfg->server_id = url == NULL ? id : 0;
	return LUMEN_OK;
}

static int apply_multiprovider(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	bool on = strcasecmp(argv[1], "on") == 0 || strcasecmp(argv[1], "true") == 0 ||
		  strcasecmp(argv[1], "yes") == 0;
	if (!on && strcasecmp(argv[1], "off") != 0 && strcasecmp(argv[1], "false") != 0 &&
	    strcasecmp(argv[1], "no") != 0)
		return config_fail_at(st, LUMEN_EMALFORMED, "%s: expected on or off, got \"%s\"",
				      argv[0], argv[1]);
	if (on && st->db->n_syncrepl == 0)
		return config_fail_at(st, LUMEN_EMALFORMED, "%s: must appear after a syncrepl "
				      "line (the database is not a replica)", argv[0]);
	if (on && st->cfg->n_server_ids == 0)
		return config_fail_at(st, LUMEN_EMALFORMED, "%s: needs a global serverID line "
				      "(each provider's CSNs must name it)", argv[0]);
	st->db->multiprovider = on;
	return LUMEN_OK;
}

/* Does the whitespace-separated list urls hold url? */
static bool listed(const char *urls, const char *url)
{
	char word[1024];
	for (const char *p = urls; *p != '\0';) {
		p += strspn(p, " \t\n");
		size_t n = strcspn(p, " \t\n");
		if (n > 0 && n < sizeof(word)) {
			memcpy(word, p, n);
			word[n] = '\0';
			if (config_server_id_url_equal(word, url))
				return true;
		}
		p += n;
	}
	return false;
}

int config_server_id_resolve(const struct config *cfg, const char *listener_urls,
			     unsigned *out, char *err, size_t errlen)
{
	*out = 0;
	for (size_t i = 0; i < cfg->n_server_ids; i++) {
		const struct config_server_id *s = &cfg->server_ids[i];
		if (s->url == NULL || listed(listener_urls, s->url)) {
			*out = s->id;
			return LUMEN_OK;
		}
	}
	if (cfg->n_server_ids == 0)
		return LUMEN_OK;
	snprintf(err, errlen, "%s: serverID: no serverID URL is one of the listeners (\"%s\"): "
		 "give lumend -h the URL of this server's serverID line",
		 cfg->server_ids[0].origin, listener_urls);
	return LUMEN_ENOTFOUND;
}

void config_free_server_ids(struct config *cfg)
{
	for (size_t i = 0; i < cfg->n_server_ids; i++) {
		free(cfg->server_ids[i].url);
		free(cfg->server_ids[i].origin);
	}
	free(cfg->server_ids);
}

static const struct directive rows[] = {
	{ "serverID", SECTION_GLOBAL, 1, 2, "serverID <0-4095> [<URL>]", apply_server_id, NULL },
	{ "multiprovider", SECTION_DATABASE, 1, 1, "multiprovider on|off", apply_multiprovider,
	  NULL },
	{ "mirrormode", SECTION_DATABASE, 1, 1, "mirrormode on|off", apply_multiprovider, NULL },
};

/* serverID (global), multiprovider and mirrormode (database). */
const struct directive_table config_replication_directives = {
	rows, sizeof(rows) / sizeof(rows[0])
};
