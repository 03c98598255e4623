/*
 * config_security.c — the security directives of slapd.conf: access
 * rules, limits, TLS files and settings, `security` SSF rules, password
 * hashing and authz-regexp; and what of them needs the final schema
 * (compiled access rules, normalized limits DNs).
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "array.h"
#include "config_internal.h"
#include "dn.h"
#include "lumen_error.h"
#include "password.h"

/* `access to ...`: grammar now, schema names after the whole file. */
static int apply_access(struct parse_state *st, size_t argc, char **argv)
{
	struct access_rules *rules = st->db != NULL ? &st->db->access : &st->cfg->access;
	return access_rule_parse(rules, argc, argv, st->file->path, st->file->line, st->err,
				 st->errlen);
}

static int apply_tls_file(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	struct config_tls *tls = &st->cfg->tls;
	if (argv[1][0] == '\0')
		return config_fail_at(st, LUMEN_EMALFORMED, "%s: expected a file name", argv[0]);
	if (strcasecmp(argv[0], "TLSCertificateFile") == 0)
		return config_set_string(&tls->certificate_file, argv[1]);
	if (strcasecmp(argv[0], "TLSCertificateKeyFile") == 0)
		return config_set_string(&tls->key_file, argv[1]);
	if (strcasecmp(argv[0], "TLSCACertificateFile") == 0)
		return config_set_string(&tls->ca_file, argv[1]);
	return config_set_string(&tls->cipher_suite, argv[1]);
}

/* TLSProtocolMin: OpenLDAP's "3.3" (= TLS 1.2) form, or "TLS1.2"/"1.2". */
static int apply_tls_protocol_min(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	static const struct { const char *name; unsigned version; } names[] = {
		{ "3.1", 0x0301 }, { "3.2", 0x0302 }, { "3.3", 0x0303 }, { "3.4", 0x0304 },
		{ "TLS1.0", 0x0301 }, { "TLS1.1", 0x0302 }, { "TLS1.2", 0x0303 },
		{ "TLS1.3", 0x0304 }, { "1.0", 0x0301 }, { "1.1", 0x0302 }, { "1.2", 0x0303 },
		{ "1.3", 0x0304 },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcasecmp(argv[1], names[i].name) != 0)
			continue;
		if (names[i].version < CONFIG_TLS_1_2)
			return config_fail_at(st, LUMEN_EMALFORMED,
				       "TLSProtocolMin: TLS older than 1.2 (3.3) is not supported, "
					      "got \"%s\"", argv[1]);
		st->cfg->tls.protocol_min = names[i].version;
		return LUMEN_OK;
	}
	return config_fail_at(st, LUMEN_EMALFORMED,
			      "TLSProtocolMin: expected 3.3 (TLS 1.2) or 3.4 (TLS 1.3), got \"%s\"",
			      argv[1]);
}

static int apply_tls_verify_client(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	static const struct { const char *name; enum config_tls_verify v; } names[] = {
		{ "never", CONFIG_TLS_VERIFY_NEVER }, { "allow", CONFIG_TLS_VERIFY_ALLOW },
		{ "try", CONFIG_TLS_VERIFY_ALLOW }, { "demand", CONFIG_TLS_VERIFY_DEMAND },
		{ "hard", CONFIG_TLS_VERIFY_DEMAND }, { "true", CONFIG_TLS_VERIFY_DEMAND },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcasecmp(argv[1], names[i].name) == 0) {
			st->cfg->tls.verify_client = names[i].v;
			return LUMEN_OK;
		}
	return config_fail_at(st, LUMEN_EMALFORMED,
			      "TLSVerifyClient: expected never, allow, try or demand, got \"%s\"", argv[1]);
}

/* `security ssf=N simple_bind=N ...`: each word NAME=N. */
static int apply_security(struct parse_state *st, size_t argc, char **argv)
{
	for (size_t i = 1; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		uint64_t v;
		unsigned *slot = NULL;
		if (eq != NULL) {
			*eq = '\0';
			if (strcasecmp(argv[i], "ssf") == 0)
				slot = &st->cfg->security.ssf;
			else if (strcasecmp(argv[i], "simple_bind") == 0)
				slot = &st->cfg->security.simple_bind;
			*eq = '=';
		}
		if (slot == NULL || config_parse_unsigned(eq + 1, 0, 65535, false, &v) != LUMEN_OK)
			return config_fail_at(st, LUMEN_EMALFORMED,
				       "security: expected ssf=N or simple_bind=N (N from 0 to "
					      "65535), got \"%s\"", argv[i]);
		*slot = (unsigned)v;
	}
	return LUMEN_OK;
}

static int apply_password_hash(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	if (!password_scheme_known(argv[1]))
		return config_fail_at(st, LUMEN_EMALFORMED,
			       "password-hash: unknown scheme \"%s\" (expected {SSHA512}, {SSHA}, "
				      "{PBKDF2-SHA512}, {ARGON2}, {CRYPT}, ...)", argv[1]);
	return config_set_string(&st->cfg->password_hash, argv[1]);
}

static int apply_password_cleartext(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	if (strcasecmp(argv[1], "on") == 0 || strcasecmp(argv[1], "yes") == 0)
		st->cfg->password_allow_cleartext = true;
	else if (strcasecmp(argv[1], "off") == 0 || strcasecmp(argv[1], "no") == 0)
		st->cfg->password_allow_cleartext = false;
	else
		return config_fail_at(st, LUMEN_EMALFORMED,
			       "password-allow-cleartext: expected on or off, got \"%s\"", argv[1]);
	return LUMEN_OK;
}

static int apply_authz_regexp(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	struct config *cfg = st->cfg;
	struct config_authz_regexp *r = ARRAY_PUSH(cfg->authz_regexps, cfg->n_authz_regexps);
	if (r == NULL)
		return LUMEN_ENOMEM;
	r->origin = config_origin(st);
	r->pattern = strdup(argv[1]);
	r->replacement = strdup(argv[2]);
	if (r->origin == NULL || r->pattern == NULL || r->replacement == NULL)
		return LUMEN_ENOMEM;
	int err = regcomp(&r->regex, r->pattern, REG_EXTENDED | REG_ICASE);
	if (err != 0) {
		char why[160];
		regerror(err, &r->regex, why, sizeof(why));
		return config_fail_at(st, LUMEN_EMALFORMED, "authz-regexp: bad pattern \"%s\": %s",
				      r->pattern, why);
	}
	r->compiled = true;
	if (r->regex.re_nsub > 9)
		return config_fail_at(st, LUMEN_EMALFORMED,
				      "authz-regexp: at most 9 groups can be substituted");
	for (const char *p = r->replacement; (p = strchr(p, '$')) != NULL; p++)
		if (p[1] < '0' || p[1] > '9' || (size_t)(p[1] - '0') > r->regex.re_nsub)
			return config_fail_at(st, LUMEN_EMALFORMED,
				       "authz-regexp: \"%s\": $ must be followed by the number of "
					      "a group of the pattern", r->replacement);
	return LUMEN_OK;
}

static int apply_authz_policy(struct parse_state *st, size_t argc, char **argv)
{
	static const struct { const char *name; enum config_authz_policy policy; } names[] = {
		{ "none", CONFIG_AUTHZ_NONE }, { "to", CONFIG_AUTHZ_TO },
		{ "from", CONFIG_AUTHZ_FROM }, { "any", CONFIG_AUTHZ_ANY },
		{ "all", CONFIG_AUTHZ_ALL },
	};
	(void)argc;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcasecmp(argv[1], names[i].name) == 0) {
			st->cfg->authz_policy = names[i].policy;
			return LUMEN_OK;
		}
	}
	return config_fail_at(st, LUMEN_EMALFORMED,
			      "authz-policy: expected none, to, from, any or all, got \"%s\"",
			      argv[1]);
}

/* `limits WHO LIMIT...`: WHO as slapd.conf(5) (a subset), LIMIT size=/time=. */
static int limit_who(struct parse_state *st, const char *text, struct config_limit *l)
{
	static const struct { const char *prefix; enum config_limit_who who; } dn_forms[] = {
		{ "dn=", LIMIT_WHO_DN_EXACT }, { "dn.exact=", LIMIT_WHO_DN_EXACT },
		{ "dn.base=", LIMIT_WHO_DN_EXACT }, { "dn.subtree=", LIMIT_WHO_DN_SUBTREE },
	};
	if (strcmp(text, "*") == 0) {
		l->who = LIMIT_WHO_ANYONE;
		return LUMEN_OK;
	}
	if (strcasecmp(text, "anonymous") == 0) {
		l->who = LIMIT_WHO_ANONYMOUS;
		return LUMEN_OK;
	}
	if (strcasecmp(text, "users") == 0) {
		l->who = LIMIT_WHO_USERS;
		return LUMEN_OK;
	}
	for (size_t i = 0; i < sizeof(dn_forms) / sizeof(dn_forms[0]); i++) {
		size_t n = strlen(dn_forms[i].prefix);
		if (strncasecmp(text, dn_forms[i].prefix, n) != 0)
			continue;
		const char *dn = text + n;
		size_t len = strlen(dn);
		if (len >= 2 && dn[0] == '"' && dn[len - 1] == '"')
			l->dn_text = strndup(dn + 1, len - 2);
		else
			l->dn_text = strdup(dn);
		l->who = dn_forms[i].who;
		return l->dn_text != NULL ? LUMEN_OK : LUMEN_ENOMEM;
	}
	return config_fail_at(st, LUMEN_EMALFORMED,
			      "limits: expected *, anonymous, users, dn.exact=\"DN\" or "
			      "dn.subtree=\"DN\", got \"%s\"", text);
}

static int limit_value(struct parse_state *st, const char *text, struct config_limit *l)
{
	static const struct { const char *name; bool is_size; } kinds[] = {
		{ "size=", true }, { "size.soft=", true }, { "size.hard=", true },
		{ "time=", false }, { "time.soft=", false }, { "time.hard=", false },
	};
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		size_t n = strlen(kinds[i].name);
		if (strncasecmp(text, kinds[i].name, n) == 0)
			return config_limit_arg(st, "limits", text + n, kinds[i].is_size ? &l->size : &l->time);
	}
	return config_fail_at(st, LUMEN_EMALFORMED,
		       "limits: expected size=N|unlimited or time=N|unlimited, got \"%s\"", text);
}

static int apply_limits(struct parse_state *st, size_t argc, char **argv)
{
	struct config_limit **list = st->db != NULL ? &st->db->limits : &st->cfg->limits;
	size_t *n = st->db != NULL ? &st->db->n_limits : &st->cfg->n_limits;
	struct config_limit *l = ARRAY_PUSH(*list, *n);
	if (l == NULL)
		return LUMEN_ENOMEM;
	l->size = l->time = CONFIG_LIMIT_INHERIT;
	l->origin = config_origin(st);
	if (l->origin == NULL)
		return LUMEN_ENOMEM;
	int rc = limit_who(st, argv[1], l);
	for (size_t i = 2; rc == LUMEN_OK && i < argc; i++)
		rc = limit_value(st, argv[i], l);
	return rc;
}

static const struct directive rows[] = {
	{ "access", SECTION_ANY, 3, CONFIG_ARGS_UNBOUNDED, "access to <what> by <who> <access>...",
	  apply_access, NULL },
	{ "limits", SECTION_ANY, 2, CONFIG_ARGS_UNBOUNDED,
	  "limits <*|anonymous|users|dn.exact=DN|dn.subtree=DN> size=N time=N", apply_limits,
	  NULL },
	{ "security", SECTION_GLOBAL, 1, CONFIG_ARGS_UNBOUNDED, "security ssf=N simple_bind=N",
	  apply_security, NULL },
	{ "password-hash", SECTION_GLOBAL, 1, 1, "password-hash <{SCHEME}>", apply_password_hash,
	  NULL },
	{ "password-allow-cleartext", SECTION_GLOBAL, 1, 1, "password-allow-cleartext on|off",
	  apply_password_cleartext, NULL },
	{ "authz-regexp", SECTION_GLOBAL, 2, 2, "authz-regexp <pattern> <replacement>",
	  apply_authz_regexp, NULL },
	{ "authz-policy", SECTION_GLOBAL, 1, 1, "authz-policy none|from|to|any|all",
	  apply_authz_policy, NULL },
	{ "TLSCertificateFile", SECTION_GLOBAL, 1, 1, "TLSCertificateFile <file>", apply_tls_file,
	  NULL },
	{ "TLSCertificateKeyFile", SECTION_GLOBAL, 1, 1, "TLSCertificateKeyFile <file>",
	  apply_tls_file, NULL },
	{ "TLSCACertificateFile", SECTION_GLOBAL, 1, 1, "TLSCACertificateFile <file>",
	  apply_tls_file, NULL },
	{ "TLSCipherSuite", SECTION_GLOBAL, 1, 1, "TLSCipherSuite <OpenSSL cipher list>",
	  apply_tls_file, NULL },
	{ "TLSProtocolMin", SECTION_GLOBAL, 1, 1, "TLSProtocolMin 3.3|3.4", apply_tls_protocol_min,
	  NULL },
	{ "TLSVerifyClient", SECTION_GLOBAL, 1, 1, "TLSVerifyClient never|allow|demand",
	  apply_tls_verify_client, NULL },
	{ "tls_handshake_timeout", SECTION_GLOBAL, 1, 1, "tls_handshake_timeout <seconds>",
	  NULL, GLOBAL_NUMBER(tls.handshake_timeout, 1, 3600, false) },
};

/* Access control, limits, TLS and passwords. */
const struct directive_table config_security_directives = { rows, sizeof(rows) / sizeof(rows[0]) };

/* Normalize the DN of each `limits` line of a list. */
static int finish_limits(struct config *cfg, struct config_limit *limits, size_t n,
			 struct arena *arena, char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		struct config_limit *l = &limits[i];
		struct ber_view ndn;
		if (l->dn_text == NULL)
			continue;
		arena_reset(arena);
		int rc = dn_normalize(cfg->schema, l->dn_text, strlen(l->dn_text), arena, &ndn);
		if (rc != LUMEN_OK) {
			snprintf(err, errlen, "%s: limits: \"%s\" is not a valid DN (%s)", l->origin,
				 l->dn_text, lumen_strerror(rc));
			return LUMEN_EMALFORMED;
		}
		l->ndn = strndup((const char *)ndn.ptr, ndn.len);
		if (l->ndn == NULL)
			return LUMEN_ENOMEM;
		l->ndn_len = ndn.len;
	}
	return LUMEN_OK;
}

/* What needs the final schema: access rules and limits DNs. */
int config_finish_security(struct config *cfg, char *err, size_t errlen)
{
	struct arena arena;
	arena_init(&arena, 0);
	int rc = access_rules_compile(&cfg->access, cfg->schema, err, errlen);
	if (rc == LUMEN_OK)
		rc = finish_limits(cfg, cfg->limits, cfg->n_limits, &arena, err, errlen);
	for (size_t i = 0; rc == LUMEN_OK && i < cfg->n_databases; i++) {
		struct config_database *db = &cfg->databases[i];
		rc = access_rules_compile(&db->access, cfg->schema, err, errlen);
		if (rc == LUMEN_OK)
			rc = finish_limits(cfg, db->limits, db->n_limits, &arena, err, errlen);
	}
	arena_free(&arena);
	return rc;
}

void config_free_limits(struct config_limit *limits, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(limits[i].ndn);
		free(limits[i].dn_text);
		free(limits[i].origin);
	}
	free(limits);
}

void config_free_security(struct config *cfg)
{
	access_rules_free(&cfg->access);
	config_free_limits(cfg->limits, cfg->n_limits);
	for (size_t i = 0; i < cfg->n_authz_regexps; i++) {
		struct config_authz_regexp *r = &cfg->authz_regexps[i];
		if (r->compiled)
			regfree(&r->regex);
		free(r->pattern);
		free(r->replacement);
		free(r->origin);
	}
	free(cfg->authz_regexps);
	free(cfg->tls.certificate_file);
	free(cfg->tls.key_file);
	free(cfg->tls.ca_file);
	free(cfg->tls.cipher_suite);
	free(cfg->password_hash);
}
