/*
 * lumenbench — LDAP load generator: throughput and latency percentiles for
 * search, auth, bind, compare, modify, add, delete or a weighted mix,
 * against any LDAPv3 server. See bench/README.md and `lumenbench --help`.
 */
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "client.h"
#include "lumen_error.h"
#include "version.h"
#include "report.h"
#include "workload.h"

#define TEMPLATE_TEXT_MAX 512

struct options {
	const char *url;
	const char *mode;
	const char *mix;
	const char *label;
	unsigned entries;
	enum report_format format;
	int csv_header;
	uint64_t first_sequence;
	struct workload_settings settings;
	struct bench_config config;
	/* default templates, built from --entries */
	char filter[TEMPLATE_TEXT_MAX], dn[TEMPLATE_TEXT_MAX],
	     compare_value[TEMPLATE_TEXT_MAX];
};

static void usage(FILE *out)
{
	fputs(
"usage: lumenbench [options]\n"
"  -H, --url URL            ldap://host:port (default ldap://127.0.0.1:389)\n"
"  -m, --mode MODE          search | auth | bind | compare | modify | add |\n"
"                           delete | mix (default search)\n"
"      --mix LIST           weights for mix, e.g. search=65,auth=30,modify=5\n"
"  -c, --connections N      connections (default 16)\n"
"  -t, --threads N          client threads, each an event loop (default 1)\n"
"  -d, --duration S         measured seconds (default 10)\n"
"  -w, --warmup S           seconds before measuring (default 2)\n"
"      --depth N            outstanding operations per connection (default 1)\n"
"      --rate R             fixed offered rate, ops/s over all connections\n"
"      --reuse P            percent of operations reusing their connection;\n"
"                           the rest connect, bind, run one op, unbind\n"
"      --new-connection-per-op   same as --reuse 0\n"
"      --nagle              leave TCP_NODELAY off (experiment)\n"
"  -D, --bind-dn DN         bind as DN on each connection first\n"
"      --bind-pw PW         its password\n"
"      --entries N          the N in the default templates (default 100000)\n"
"  -b, --base T             search base (default ou=people,dc=example,dc=com)\n"
"  -s, --scope S            base | one | sub (default sub)\n"
"      --deref D            never | search | find | always: the search's\n"
"                           derefAliases (default never, as ldapsearch)\n"
"  -f, --filter T           search filter (default (uid=user.[1-N]))\n"
"  -a, --attrs LIST         attributes to return, comma-separated (default all)\n"
"      --sort KEY           a critical sort control on each search, as\n"
"                           ldapsearch -E sss= spells a key: [-]attr[/rule]\n"
"      --vlv B/A/O/C        a critical VLV control on each search: B before,\n"
"                           A after, offset O (a template), contentCount C\n"
"      --vlv-context        send back on each VLV search the contextID the\n"
"                           server returned on the connection's last one\n"
"                           (scroll a kept sorted list, as VLV clients do)\n"
"      --fill F             random | sequential numbers for [A-B] (default random)\n"
"      --dn T               target of bind/compare/modify\n"
"                           (default uid=user.[1-N],ou=people,dc=example,dc=com)\n"
"      --password PW        password for auth and bind (default password)\n"
"      --auth-base T, --auth-filter T   the search of auth (default base, filter)\n"
"      --compare-attr A, --compare-value T   (default employeeNumber, [1-N])\n"
"      --modify-attr A, --modify-value T     (default description)\n"
"      --modify-op OP       replace (default) | add | delete | toggle: add on\n"
"                           even passes over the widest range of --dn and\n"
"                           --modify-value, delete on odd ones (with\n"
"                           --fill sequential, every delete finds its value)\n"
"      --add-dn T, --delete-dn T   filled sequentially from --first\n"
"      --first N            first number for add/delete (default 0: the low bound)\n"
"      --seed N             random seed (default 1)\n"
"      --server-pid PID     also report that process's CPU and memory\n"
"      --json | --csv [--no-header]   output format (default a table)\n"
"      --label TEXT         name this run in the output\n"
"  -V, --version            print the version and exit\n"
"  -h, --help               this text\n"
"Templates: [A-B] is a number from A to B; every range in one operation\n"
"uses the same draw, so the DN and value templates name the same entry.\n", out);
}

enum long_only {
	OPT_MIX = 256, OPT_DEPTH, OPT_RATE, OPT_REUSE, OPT_NEW_CONN, OPT_NAGLE,
	OPT_BIND_PW, OPT_ENTRIES, OPT_FILL, OPT_DN, OPT_PASSWORD, OPT_AUTH_BASE,
	OPT_AUTH_FILTER, OPT_COMPARE_ATTR, OPT_COMPARE_VALUE, OPT_MODIFY_ATTR,
	OPT_MODIFY_VALUE, OPT_MODIFY_OP, OPT_ADD_DN, OPT_DELETE_DN, OPT_FIRST, OPT_SEED,
	OPT_SERVER_PID, OPT_JSON, OPT_CSV, OPT_NO_HEADER, OPT_LABEL, OPT_DRAIN,
	OPT_SORT, OPT_VLV, OPT_VLV_CONTEXT, OPT_DEREF,
};

static const struct option long_options[] = {
	{ "url", required_argument, NULL, 'H' },
	{ "mode", required_argument, NULL, 'm' },
	{ "mix", required_argument, NULL, OPT_MIX },
	{ "connections", required_argument, NULL, 'c' },
	{ "threads", required_argument, NULL, 't' },
	{ "duration", required_argument, NULL, 'd' },
	{ "warmup", required_argument, NULL, 'w' },
	{ "depth", required_argument, NULL, OPT_DEPTH },
	{ "rate", required_argument, NULL, OPT_RATE },
	{ "reuse", required_argument, NULL, OPT_REUSE },
	{ "new-connection-per-op", no_argument, NULL, OPT_NEW_CONN },
	{ "nagle", no_argument, NULL, OPT_NAGLE },
	{ "bind-dn", required_argument, NULL, 'D' },
	{ "bind-pw", required_argument, NULL, OPT_BIND_PW },
	{ "entries", required_argument, NULL, OPT_ENTRIES },
	{ "base", required_argument, NULL, 'b' },
	{ "scope", required_argument, NULL, 's' },
	{ "deref", required_argument, NULL, OPT_DEREF },
	{ "filter", required_argument, NULL, 'f' },
	{ "attrs", required_argument, NULL, 'a' },
	{ "fill", required_argument, NULL, OPT_FILL },
	{ "sort", required_argument, NULL, OPT_SORT },
	{ "vlv", required_argument, NULL, OPT_VLV },
	{ "vlv-context", no_argument, NULL, OPT_VLV_CONTEXT },
	{ "dn", required_argument, NULL, OPT_DN },
	{ "password", required_argument, NULL, OPT_PASSWORD },
	{ "auth-base", required_argument, NULL, OPT_AUTH_BASE },
	{ "auth-filter", required_argument, NULL, OPT_AUTH_FILTER },
	{ "compare-attr", required_argument, NULL, OPT_COMPARE_ATTR },
	{ "compare-value", required_argument, NULL, OPT_COMPARE_VALUE },
	{ "modify-attr", required_argument, NULL, OPT_MODIFY_ATTR },
	{ "modify-value", required_argument, NULL, OPT_MODIFY_VALUE },
	{ "modify-op", required_argument, NULL, OPT_MODIFY_OP },
	{ "add-dn", required_argument, NULL, OPT_ADD_DN },
	{ "delete-dn", required_argument, NULL, OPT_DELETE_DN },
	{ "first", required_argument, NULL, OPT_FIRST },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "server-pid", required_argument, NULL, OPT_SERVER_PID },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "csv", no_argument, NULL, OPT_CSV },
	{ "no-header", no_argument, NULL, OPT_NO_HEADER },
	{ "label", required_argument, NULL, OPT_LABEL },
	{ "drain", required_argument, NULL, OPT_DRAIN },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static int parse_number(const char *text, double min, double max, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(text, &end);
	if (errno != 0 || end == text || *end != '\0' || v < min || v > max)
		return LUMEN_EINVAL;
	*out = v;
	return LUMEN_OK;
}

static int parse_unsigned(const char *text, unsigned min, unsigned max, unsigned *out)
{
	double v;
	int rc = parse_number(text, min, max, &v);
	if (rc == LUMEN_OK && v != (double)(unsigned)v)
		rc = LUMEN_EINVAL;
	if (rc == LUMEN_OK)
		*out = (unsigned)v;
	return rc;
}

/* "search=65,auth=30,modify=5" into weights. */
static int parse_mix(const char *text, unsigned *weights)
{
	char copy[256];
	if (strlen(text) >= sizeof(copy))
		return LUMEN_EINVAL;
	strcpy(copy, text);
	memset(weights, 0, sizeof(unsigned) * BENCH_OP_COUNT);
	char *save = NULL;
	for (char *item = strtok_r(copy, ",", &save); item != NULL;
	     item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '=');
		enum bench_op op;
		if (eq == NULL)
			return LUMEN_EINVAL;
		*eq = '\0';
		if (bench_op_from_name(item, &op) != LUMEN_OK ||
		    parse_unsigned(eq + 1, 0, 1000000, &weights[op]) != LUMEN_OK)
			return LUMEN_EINVAL;
	}
	return LUMEN_OK;
}

static int parse_scope(const char *text, int *scope)
{
	static const char *const names[] = { "base", "one", "sub" };
	for (int i = 0; i < 3; i++) {
		if (strcmp(text, names[i]) == 0) {
			*scope = i;
			return LUMEN_OK;
		}
	}
	if (strcmp(text, "subtree") == 0 || strcmp(text, "children") == 0) {
		*scope = strcmp(text, "subtree") == 0 ? 2 : 3;
		return LUMEN_OK;
	}
	return LUMEN_EINVAL;
}

static void set_defaults(struct options *o)
{
	memset(o, 0, sizeof(*o));
	o->url = "ldap://127.0.0.1:389";
	o->mode = "search";
	o->entries = 100000;
	o->csv_header = 1;
	struct workload_settings *s = &o->settings;
	s->base = "ou=people,dc=example,dc=com";
	s->scope = 2;
	s->password = "password";
	s->compare_attribute = "employeeNumber";
	s->modify_attribute = "description";
	s->modify_value = "modified by lumenbench [0-999999999]";
	s->add_dn = "uid=bench.[0-999999999],ou=people,dc=example,dc=com";
	s->delete_dn = s->add_dn;
	struct bench_config *c = &o->config;
	c->connections = 16;
	c->threads = 1;
	c->depth = 1;
	c->reuse_percent = 100;
	c->fill = BENCH_FILL_RANDOM;
	c->seed = 1;
	c->warmup_seconds = 2;
	c->duration_seconds = 10;
	c->drain_seconds = 5;
}

/* Map a parse result to the option-group convention below. */
static int handled(int rc)
{
	return rc == LUMEN_OK ? 1 : rc;
}

/* Options that shape the load; 1 if handled, 0 if not this group's, <0 bad. */
static int parse_load_option(struct options *o, int opt, const char *arg)
{
	struct bench_config *c = &o->config;
	switch (opt) {
	case 'c': return handled(parse_unsigned(arg, 1, 1000000, &c->connections));
	case 't': return handled(parse_unsigned(arg, 1, 1024, &c->threads));
	case 'd': return handled(parse_number(arg, 0.001, 1e7, &c->duration_seconds));
	case 'w': return handled(parse_number(arg, 0, 1e7, &c->warmup_seconds));
	case OPT_DRAIN: return handled(parse_number(arg, 0, 1e4, &c->drain_seconds));
	case OPT_DEPTH: return handled(parse_unsigned(arg, 1, 65536, &c->depth));
	case OPT_RATE: return handled(parse_number(arg, 0, 1e9, &c->rate));
	case OPT_REUSE: return handled(parse_unsigned(arg, 0, 100, &c->reuse_percent));
	case OPT_NEW_CONN: c->reuse_percent = 0; return 1;
	case OPT_NAGLE: c->nagle = true; return 1;
	case 'D': c->bind_dn = arg; return 1;
	case OPT_BIND_PW: c->bind_password = arg; return 1;
	case OPT_SERVER_PID: {
		unsigned pid = 0;
		int rc = parse_unsigned(arg, 1, 1u << 30, &pid);
		c->server_pid = (int)pid;
		return handled(rc);
	}
	default: return 0;
	}
}

/* Options that shape the requests; same return convention. */
static int parse_request_option(struct options *o, int opt, const char *arg)
{
	struct workload_settings *s = &o->settings;
	double seed;
	int rc;
	switch (opt) {
	case 'b': s->base = arg; return 1;
	case 's': return handled(parse_scope(arg, &s->scope));
	case OPT_DEREF: {
		static const char *const names[] = { "never", "search", "find", "always" };
		for (int i = 0; i < 4; i++)
			if (strcmp(arg, names[i]) == 0) {
				s->deref = i;
				return 1;
			}
		return LUMEN_EINVAL;
	}
	case 'f': s->filter = arg; return 1;
	case 'a': s->attributes = arg; return 1;
	case OPT_ENTRIES: return handled(parse_unsigned(arg, 1, 2000000000u, &o->entries));
	case OPT_FILL:
		if (strcmp(arg, "random") != 0 && strcmp(arg, "sequential") != 0)
			return LUMEN_EINVAL;
		o->config.fill = arg[0] == 'r' ? BENCH_FILL_RANDOM : BENCH_FILL_SEQUENTIAL;
		return 1;
	case OPT_DN: s->dn = arg; return 1;
	case OPT_PASSWORD: s->password = arg; return 1;
	case OPT_AUTH_BASE: s->auth_base = arg; return 1;
	case OPT_AUTH_FILTER: s->auth_filter = arg; return 1;
	case OPT_COMPARE_ATTR: s->compare_attribute = arg; return 1;
	case OPT_COMPARE_VALUE: s->compare_value = arg; return 1;
	case OPT_MODIFY_ATTR: s->modify_attribute = arg; return 1;
	case OPT_MODIFY_VALUE: s->modify_value = arg; return 1;
	case OPT_SORT: s->sort = arg; return 1;
	case OPT_VLV: s->vlv = arg; return 1;
	case OPT_VLV_CONTEXT: s->vlv_context = true; return 1;
	case OPT_MODIFY_OP: {
		static const char *const names[] = { "replace", "add", "delete", "toggle" };
		for (int i = 0; i < 4; i++)
			if (strcmp(arg, names[i]) == 0) {
				s->modify_op = i;
				return 1;
			}
		return LUMEN_EINVAL;
	}
	case OPT_ADD_DN: s->add_dn = arg; return 1;
	case OPT_DELETE_DN: s->delete_dn = arg; return 1;
	case OPT_FIRST:
		rc = parse_number(arg, 0, 1e15, &seed);
		o->first_sequence = (uint64_t)seed;
		return handled(rc);
	case OPT_SEED:
		rc = parse_number(arg, 0, 1e15, &seed);
		o->config.seed = (uint64_t)seed;
		return handled(rc);
	default: return 0;
	}
}

static int parse_output_option(struct options *o, int opt, const char *arg)
{
	switch (opt) {
	case 'H': o->url = arg; return 1;
	case 'm': o->mode = arg; return 1;
	case OPT_MIX: o->mix = arg; return 1;
	case OPT_JSON: o->format = REPORT_JSON; return 1;
	case OPT_CSV: o->format = REPORT_CSV; return 1;
	case OPT_NO_HEADER: o->csv_header = 0; return 1;
	case OPT_LABEL: o->label = arg; return 1;
	default: return 0;
	}
}

/* Fill in the templates the user did not give, from --entries. */
static void finish_templates(struct options *o)
{
	struct workload_settings *s = &o->settings;
	snprintf(o->filter, sizeof(o->filter), "(uid=user.[1-%u])", o->entries);
	snprintf(o->dn, sizeof(o->dn),
		 "uid=user.[1-%u],ou=people,dc=example,dc=com", o->entries);
	snprintf(o->compare_value, sizeof(o->compare_value), "[1-%u]", o->entries);
	if (s->filter == NULL)
		s->filter = o->filter;
	if (s->dn == NULL)
		s->dn = o->dn;
	if (s->compare_value == NULL)
		s->compare_value = o->compare_value;
	if (s->auth_base == NULL)
		s->auth_base = s->base;
	if (s->auth_filter == NULL)
		s->auth_filter = s->filter;
}

static int parse_options(struct options *o, int argc, char **argv)
{
	int opt;
	set_defaults(o);
	while ((opt = getopt_long(argc, argv, "H:m:c:t:d:w:D:b:s:f:a:hV",
				  long_options, NULL)) != -1) {
		if (opt == 'h') {
			usage(stdout);
			exit(EXIT_SUCCESS);
		}
		if (opt == 'V') {
			printf("lumenbench %s\n", LUMEN_VERSION);
			exit(EXIT_SUCCESS);
		}
		int rc = parse_load_option(o, opt, optarg);
		if (rc == 0)
			rc = parse_request_option(o, opt, optarg);
		if (rc == 0)
			rc = parse_output_option(o, opt, optarg);
		if (rc <= 0) {
			if (rc < 0)
				fprintf(stderr, "lumenbench: bad value for option: %s\n",
					argv[optind - 1]);
			return LUMEN_EINVAL;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "lumenbench: unexpected argument: %s\n", argv[optind]);
		return LUMEN_EINVAL;
	}
	finish_templates(o);
	enum bench_op op;
	if (strcmp(o->mode, "mix") == 0) {
		if (o->mix == NULL || parse_mix(o->mix, o->settings.weights) != LUMEN_OK) {
			fprintf(stderr, "lumenbench: --mode mix needs --mix "
				"name=weight,... (names: search auth bind compare "
				"modify add delete)\n");
			return LUMEN_EINVAL;
		}
	} else if (bench_op_from_name(o->mode, &op) == LUMEN_OK) {
		o->settings.weights[op] = 1;
	} else {
		fprintf(stderr, "lumenbench: unknown mode '%s'\n", o->mode);
		return LUMEN_EINVAL;
	}
	if (o->config.reuse_percent < 100 && o->config.depth != 1) {
		fprintf(stderr, "lumenbench: --reuse below 100 needs --depth 1\n");
		return LUMEN_EINVAL;
	}
	if (o->config.threads > o->config.connections) {
		fprintf(stderr, "lumenbench: more threads than connections\n");
		return LUMEN_EINVAL;
	}
	return LUMEN_OK;
}

/* ldap://host[:port][/] into a socket address. */
static int resolve_url(const char *url, struct bench_config *c)
{
	char host[256], port[16] = "389";
	const char *p = url;
	if (strncmp(p, "ldap://", 7) == 0)
		p += 7;
	const char *end = p + strcspn(p, "/");
	const char *colon = NULL;
	if (*p == '[') {                       /* [v6]:port */
		const char *close = memchr(p, ']', (size_t)(end - p));
		if (close == NULL)
			return LUMEN_EINVAL;
		colon = close[1] == ':' ? close + 1 : NULL;
		snprintf(host, sizeof(host), "%.*s", (int)(close - p - 1), p + 1);
	} else {
		colon = memchr(p, ':', (size_t)(end - p));
		const char *host_end = colon != NULL ? colon : end;
		snprintf(host, sizeof(host), "%.*s", (int)(host_end - p), p);
	}
	if (colon != NULL)
		snprintf(port, sizeof(port), "%.*s", (int)(end - colon - 1), colon + 1);
	if (host[0] == '\0')
		strcpy(host, "127.0.0.1");
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *found;
	int err = getaddrinfo(host, port, &hints, &found);
	if (err != 0) {
		fprintf(stderr, "lumenbench: %s: %s\n", url, gai_strerror(err));
		return LUMEN_ENOTFOUND;
	}
	memcpy(&c->address, found->ai_addr, found->ai_addrlen);
	c->address_len = found->ai_addrlen;
	freeaddrinfo(found);
	return LUMEN_OK;
}

/* 1,000 connections need more descriptors than the usual soft limit. */
static void raise_file_limit(unsigned connections)
{
	struct rlimit lim;
	if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < connections + 64u) {
		lim.rlim_cur = lim.rlim_max;
		setrlimit(RLIMIT_NOFILE, &lim);
	}
}

int main(int argc, char **argv)
{
	static struct options o;
	struct bench_workload workload;
	struct bench_stats *stats = NULL;
	const char *why = NULL;
	int rc = parse_options(&o, argc, argv);
	if (rc != LUMEN_OK) {
		fprintf(stderr, "try lumenbench --help\n");
		return 2;
	}
	rc = resolve_url(o.url, &o.config);
	if (rc != LUMEN_OK)
		return 2;
	rc = bench_workload_init(&workload, &o.settings, o.first_sequence, &why);
	if (rc != LUMEN_OK) {
		fprintf(stderr, "lumenbench: cannot build the requests: %s (%s)\n", why,
			lumen_strerror(rc));
		return 2;
	}
	o.config.workload = &workload;
	raise_file_limit(o.config.connections);
	stats = malloc(sizeof(*stats));
	if (stats == NULL) {
		rc = LUMEN_ENOMEM;
		goto done;
	}
	bench_stats_init(stats);
	struct bench_result result = { .stats = stats };
	rc = bench_run(&o.config, &result);
	if (rc != LUMEN_OK)
		goto done;
	struct report_context ctx = { .label = o.label, .mode = o.mode,
				      .config = &o.config, .result = &result };
	rc = report_write(stdout, o.format, &ctx, o.csv_header);
done:
	if (rc != LUMEN_OK)
		fprintf(stderr, "lumenbench: %s\n", lumen_strerror(rc));
	free(stats);
	bench_workload_free(&workload);
	return rc == LUMEN_OK ? 0 : 1;
}
