/*
 * config_global.c — the global directives of slapd.conf: process
 * (pidfile, threads, logging), frontend limits (PDU sizes, pending
 * operations, connections, time and size limits) and observability
 * (metrics-listen, slowop-threshold). Access control and TLS are in
 * config_security.c, the database section in config_database.c.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "array.h"
#include "config_internal.h"
#include "ldap_url.h"
#include "lumen_error.h"

static int apply_loglevel(struct parse_state *st, size_t argc, char **argv)
{
	unsigned level;
	if (config_parse_loglevel((const char *const *)argv + 1, argc - 1, &level) != LUMEN_OK)
		return config_fail_at(st, LUMEN_EMALFORMED,
				      "loglevel: expected numbers or level names (trace, packets, "
			       "args, conns, BER, filter, config, ACL, stats, stats2, shell, "
				      "parse, sync, none, any)");
	st->cfg->loglevel = level;
	return LUMEN_OK;
}

static int apply_sizelimit(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	return config_limit_arg(st, argv[0], argv[1],
				st->db != NULL ? &st->db->sizelimit : &st->cfg->sizelimit);
}

static int apply_timelimit(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	return config_limit_arg(st, argv[0], argv[1],
				st->db != NULL ? &st->db->timelimit : &st->cfg->timelimit);
}

/* `allow`/`disallow` features; only the bind ones exist so far. */
static int apply_allow(struct parse_state *st, size_t argc, char **argv)
{
	bool allow = strcasecmp(argv[0], "allow") == 0;
	for (size_t i = 1; i < argc; i++) {
		if (strcasecmp(argv[i], "bind_anon_dn") == 0)
			st->cfg->allow_bind_anon_dn = allow;
		else if (!allow || strcasecmp(argv[i], "none") != 0)
			return config_fail_at(st, LUMEN_EMALFORMED,
					      "%s: expected bind_anon_dn%s, got \"%s\"", argv[0],
					      allow ? " or none" : "", argv[i]);
		else
			st->cfg->allow_bind_anon_dn = false;
	}
	return LUMEN_OK;
}

/* debug-nagle on|off: leave TCP_NODELAY unset, for the benchmark experiment
 * that shows what Nagle's algorithm costs; never for production. */
static int apply_debug_nagle(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	if (strcasecmp(argv[1], "on") == 0)
		st->cfg->debug_nagle = true;
	else if (strcasecmp(argv[1], "off") == 0)
		st->cfg->debug_nagle = false;
	else
		return config_fail_at(st, LUMEN_EMALFORMED, "debug-nagle: expected on or off, got \"%s\"",
				      argv[1]);
	return LUMEN_OK;
}

/* inline-reads on|off: let I/O threads run short, bounded reads themselves
 * (run-to-completion); off sends every operation through the work queue. */
static int apply_inline_reads(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	if (strcasecmp(argv[1], "on") == 0)
		st->cfg->inline_reads = true;
	else if (strcasecmp(argv[1], "off") == 0)
		st->cfg->inline_reads = false;
	else
		return config_fail_at(st, LUMEN_EMALFORMED, "inline-reads: expected on or off, got \"%s\"",
				      argv[1]);
	return LUMEN_OK;
}

static int apply_metrics_listen(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	char *address = NULL;
	unsigned port = 0;
	int rc = config_parse_metrics_listen(argv[1], &address, &port);
	if (rc == LUMEN_EMALFORMED)
		return config_fail_at(st, rc, "metrics-listen: expected ADDRESS:PORT "
				      "([v6]:PORT) or none, got \"%s\"", argv[1]);
	if (rc != LUMEN_OK)
		return rc;
	free(st->cfg->metrics_address);
	st->cfg->metrics_address = address;
	st->cfg->metrics_port = port;
	return LUMEN_OK;
}

static int apply_slowop_threshold(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	if (config_parse_slowop_threshold(argv[1], &st->cfg->slowop_threshold_ms) != LUMEN_OK)
		return config_fail_at(st, LUMEN_EMALFORMED, "slowop-threshold: expected "
				      "milliseconds (0 = every operation) or off, got \"%s\"",
				      argv[1]);
	return LUMEN_OK;
}

/*
 * The default referral (slapd's `referral`): an LDAP URL naming a server
 * only, the DN and scope being the operation's. slapd also takes any
 * non-LDAP text; a URL a client cannot follow is refused here.
 */
static int apply_referral(struct parse_state *st, size_t argc, char **argv)
{
	struct ldap_url url;
	(void)argc;
	struct ber_view text = { (const uint8_t *)argv[1], strlen(argv[1]) };
	int rc = ldap_url_parse(text, &url);
	if (rc == LUMEN_OK && (url.dn.len > 0 || url.attributes.len > 0 ||
			       url.scope != LDAP_URL_SCOPE_ABSENT || url.filter.len > 0 ||
			       url.extensions.len > 0))
		return config_fail_at(st, LUMEN_EMALFORMED,
				      "referral: the URL names a server only (the DN and scope "
				      "are the operation's), got \"%s\"", argv[1]);
	if (rc != LUMEN_OK)
		return config_fail_at(st, LUMEN_EMALFORMED,
				      "referral: expected ldap://HOST[:PORT]/, ldaps://... or "
				      "ldapi://..., got \"%s\"", argv[1]);
	return config_push_string(&st->cfg->referrals, &st->cfg->n_referrals, argv[1]);
}

/* "dir/refint.la" -> "refint" */
static char *module_name(const char *word)
{
	const char *base = strrchr(word, '/');
	base = base != NULL ? base + 1 : word;
	size_t len = strcspn(base, ".");
	return strndup(base, len);
}

static int apply_moduleload(struct parse_state *st, size_t argc, char **argv)
{
	struct config *cfg = st->cfg;
	(void)argc;
	struct config_module *m = ARRAY_PUSH(cfg->modules, cfg->n_modules);
	if (m == NULL)
		return LUMEN_ENOMEM;
	m->name = module_name(argv[1]);
	m->origin = config_origin(st);
	return m->name != NULL && m->origin != NULL ? LUMEN_OK : LUMEN_ENOMEM;
}

/* modulepath: where OpenLDAP finds its modules; Lumen's are built in. */
static int apply_modulepath(struct parse_state *st, size_t argc, char **argv)
{
	(void)st;
	(void)argc;
	(void)argv;
	return LUMEN_OK;
}

void config_free_modules(struct config *cfg)
{
	for (size_t i = 0; i < cfg->n_modules; i++) {
		free(cfg->modules[i].name);
		free(cfg->modules[i].origin);
	}
	free(cfg->modules);
}

/*
 * Frontend PDU bounds: at least one small PDU, at most 1 GiB. Memory bounds
 * per connection (conn_max_memory[_auth]) and in total (conn_total_memory,
 * 0 = none): a connection always gets room for one request, so a
 * per-connection bound below the PDU size only serialises. The /metrics
 * listener's bounds: clients at once, seconds per exchange.
 */
static const struct directive rows[] = {
	{ "pidfile", SECTION_GLOBAL, 1, 1, "pidfile <file>", NULL, GLOBAL_STRING(pidfile) },
	/* Deeper filters are refused (protocolError); the recursions over a
	 * filter must fit a worker's stack, sanitizers included: the ceiling. */
	{ "maxfilterdepth", SECTION_GLOBAL, 1, 1, "maxfilterdepth <depth>", NULL,
	  GLOBAL_NUMBER(max_filter_depth, 1, CONFIG_MAX_FILTER_DEPTH, false) },
	/* Server-side sort and VLV: (key, DN) pairs one search may collect.
	 * (OpenLDAP's sssvlv_max counts concurrent sorts: `overlay sssvlv`
	 * accepts it with that meaning, overlay_sssvlv.c.) */
	{ "sortvlv-max", SECTION_GLOBAL, 1, 1, "sortvlv-max <entries>", NULL,
	  GLOBAL_NUMBER(sort_max, 1, 1u << 24, false) },
	{ "moduleload", SECTION_GLOBAL, 1, CONFIG_ARGS_UNBOUNDED, "moduleload <module> [args]",
	  apply_moduleload, NULL },
	{ "modulepath", SECTION_GLOBAL, 1, 1, "modulepath <directory>", apply_modulepath, NULL },
	{ "referral", SECTION_GLOBAL, 1, 1, "referral <ldap://host[:port]/>", apply_referral, NULL },
	{ "argsfile", SECTION_GLOBAL, 1, 1, "argsfile <file>", NULL, GLOBAL_STRING(argsfile) },
	{ "threads", SECTION_GLOBAL, 1, 1, "threads <count>", NULL,
	  GLOBAL_NUMBER(threads, 1, 1024, false) },
	{ "listener-threads", SECTION_GLOBAL, 1, 1, "listener-threads <count>", NULL,
	  GLOBAL_NUMBER(listener_threads, 1, 64, false) },
	{ "busy-poll", SECTION_GLOBAL, 1, 1, "busy-poll <microseconds>", NULL,
	  GLOBAL_NUMBER(busy_poll_us, 0, CONFIG_MAX_BUSY_POLL_US, false) },
	{ "loglevel", SECTION_GLOBAL, 1, CONFIG_ARGS_UNBOUNDED, "loglevel <level>...",
	  apply_loglevel, NULL },
	{ "sizelimit", SECTION_ANY, 1, 1, "sizelimit <entries>|unlimited", apply_sizelimit, NULL },
	{ "timelimit", SECTION_ANY, 1, 1, "timelimit <seconds>|unlimited", apply_timelimit, NULL },
	{ "idletimeout", SECTION_GLOBAL, 1, 1, "idletimeout <seconds>", NULL,
	  GLOBAL_NUMBER(idletimeout, 0, INT_MAX, false) },
	{ "writetimeout", SECTION_GLOBAL, 1, 1, "writetimeout <seconds>", NULL,
	  GLOBAL_NUMBER(writetimeout, 0, INT_MAX, false) },
	{ "sockbuf_max_incoming", SECTION_GLOBAL, 1, 1, "sockbuf_max_incoming <bytes>", NULL,
	  GLOBAL_NUMBER(max_incoming, 64, 1u << 30, true) },
	{ "sockbuf_max_incoming_auth", SECTION_GLOBAL, 1, 1,
	  "sockbuf_max_incoming_auth <bytes>", NULL,
	  GLOBAL_NUMBER(max_incoming_auth, 64, 1u << 30, true) },
	{ "conn_max_pending", SECTION_GLOBAL, 1, 1, "conn_max_pending <operations>", NULL,
	  GLOBAL_NUMBER(max_pending, 1, 65536, false) },
	{ "conn_max_pending_auth", SECTION_GLOBAL, 1, 1,
	  "conn_max_pending_auth <operations>", NULL,
	  GLOBAL_NUMBER(max_pending_auth, 1, 65536, false) },
	{ "conn_max_memory", SECTION_GLOBAL, 1, 1, "conn_max_memory <bytes>", NULL,
	  GLOBAL_NUMBER(conn_max_memory, 64u * 1024u, 1ull << 32, true) },
	{ "conn_max_memory_auth", SECTION_GLOBAL, 1, 1, "conn_max_memory_auth <bytes>", NULL,
	  GLOBAL_NUMBER(conn_max_memory_auth, 64u * 1024u, 1ull << 32, true) },
	{ "conn_total_memory", SECTION_GLOBAL, 1, 1, "conn_total_memory <bytes>", NULL,
	  GLOBAL_NUMBER(conn_total_memory, 0, 1ull << 40, true) },
	{ "first_pdu_timeout", SECTION_GLOBAL, 1, 1, "first_pdu_timeout <seconds>", NULL,
	  GLOBAL_NUMBER(first_pdu_timeout, 0, 3600, false) },
	{ "allow", SECTION_GLOBAL, 1, CONFIG_ARGS_UNBOUNDED, "allow <feature>...", apply_allow,
	  NULL },
	{ "disallow", SECTION_GLOBAL, 1, CONFIG_ARGS_UNBOUNDED, "disallow <feature>...",
	  apply_allow, NULL },
	{ "metrics-listen", SECTION_GLOBAL, 1, 1, "metrics-listen <address:port>|none",
	  apply_metrics_listen, NULL },
	{ "metrics-max-connections", SECTION_GLOBAL, 1, 1, "metrics-max-connections <clients>",
	  NULL, GLOBAL_NUMBER(metrics_max_connections, 1, 4096, false) },
	{ "metrics-timeout", SECTION_GLOBAL, 1, 1, "metrics-timeout <seconds>", NULL,
	  GLOBAL_NUMBER(metrics_timeout, 1, 3600, false) },
	{ "slowop-threshold", SECTION_GLOBAL, 1, 1, "slowop-threshold <milliseconds>|off",
	  apply_slowop_threshold, NULL },
	{ "logfile", SECTION_GLOBAL, 1, 1, "logfile <file>", NULL, GLOBAL_STRING(logfile) },
	{ "conn_max", SECTION_GLOBAL, 1, 1, "conn_max <connections>", NULL,
	  GLOBAL_NUMBER(conn_max, 0, 1u << 24, false) },
	{ "conn_max_per_ip", SECTION_GLOBAL, 1, 1, "conn_max_per_ip <connections>", NULL,
	  GLOBAL_NUMBER(conn_max_per_ip, 0, 1u << 24, false) },
	{ "debug-nagle", SECTION_GLOBAL, 1, 1, "debug-nagle on|off", apply_debug_nagle, NULL },
	{ "inline-reads", SECTION_GLOBAL, 1, 1, "inline-reads on|off", apply_inline_reads, NULL },
};

/* The global directives (sizelimit and timelimit also in a database). */
const struct directive_table config_global_directives = { rows, sizeof(rows) / sizeof(rows[0]) };
