/*
 * config_syncrepl.c — a `syncrepl` line's keyword=value words into
 * settings, one table row per keyword (config_syncrepl.h).
 */
#include "config_syncrepl.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lumen_error.h"

#define MAX_SECONDS 31536000u   /* a year: bounds every timer */

static int fail(char *err, size_t errlen, const char *keyword, const char *what,
		const char *value)
{
	snprintf(err, errlen, "%s: %s \"%s\"", keyword, what, value);
	return LUMEN_EMALFORMED;
}

static int set_string(char **slot, const char *value)
{
	char *copy = strdup(value);
	if (copy == NULL)
		return LUMEN_ENOMEM;
	free(*slot);
	*slot = copy;
	return LUMEN_OK;
}

/* A decimal number in [min, max]. */
static bool parse_number(const char *text, unsigned long min, unsigned long max,
			 unsigned long *out)
{
	if (text[0] < '0' || text[0] > '9')
		return false;
	errno = 0;
	char *end = NULL;
	unsigned long v = strtoul(text, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return false;
	*out = v;
	return true;
}

/* One of names[] (case-insensitive): its index, or -1. */
static int pick(const char *value, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcasecmp(value, names[i]) == 0)
			return (int)i;
	return -1;
}

int config_syncrepl_interval(const char *text, unsigned *seconds)
{
	unsigned long part[4];
	static const unsigned long max[4] = { 365, 23, 59, 59 };
	char copy[32];
	if (strlen(text) >= sizeof(copy))
		return LUMEN_EMALFORMED;
	strcpy(copy, text);
	char *save = NULL, *word = strtok_r(copy, ":", &save);
	size_t n = 0;
	for (; word != NULL && n < 4; word = strtok_r(NULL, ":", &save), n++)
		if (!parse_number(word, 0, max[n], &part[n]))
			return LUMEN_EMALFORMED;
	if (n != 4 || word != NULL || text[strlen(text) - 1] == ':')
		return LUMEN_EMALFORMED;
	unsigned long total = ((part[0] * 24 + part[1]) * 60 + part[2]) * 60 + part[3];
	if (total == 0)
		return LUMEN_EMALFORMED;
	*seconds = (unsigned)total;
	return LUMEN_OK;
}

int config_syncrepl_retry(const char *text, struct syncrepl_retry *out, size_t max, size_t *n)
{
	char copy[256];
	if (strlen(text) >= sizeof(copy))
		return LUMEN_EMALFORMED;
	strcpy(copy, text);
	size_t words = 0;
	bool forever_seen = false;
	*n = 0;
	for (char *save = NULL, *w = strtok_r(copy, " \t", &save); w != NULL;
	     w = strtok_r(NULL, " \t", &save), words++) {
		unsigned long v;
		if (forever_seen)
			return LUMEN_EMALFORMED;   /* nothing after "+" */
		if (words % 2 == 0) {
			if (*n == max || !parse_number(w, 1, MAX_SECONDS, &v))
				return LUMEN_EMALFORMED;
			out[*n].seconds = (unsigned)v;
			continue;
		}
		if (strcmp(w, "+") == 0) {
			out[*n].count = SYNCREPL_RETRY_FOREVER;
			forever_seen = true;
		} else if (parse_number(w, 1, INT_MAX, &v)) {
			out[*n].count = (int)v;
		} else {
			return LUMEN_EMALFORMED;
		}
		(*n)++;
	}
	return words > 0 && words % 2 == 0 ? LUMEN_OK : LUMEN_EMALFORMED;
}

/* HOST[:PORT] of a URL (after the scheme); IPv6 in brackets. */
static int url_host_port(const char *rest, char **host, unsigned *port)
{
	size_t len = strcspn(rest, "/");
	if (rest[len] == '/' && rest[len + 1] != '\0')
		return LUMEN_EMALFORMED;    /* no DN, attributes or extensions */
	const char *colon;
	const char *start = rest;
	size_t host_len;
	if (rest[0] == '[') {
		const char *close = memchr(rest, ']', len);
		if (close == NULL)
			return LUMEN_EMALFORMED;
		start = rest + 1;
		host_len = (size_t)(close - start);
		colon = close + 1 < rest + len && close[1] == ':' ? close + 1 : NULL;
		if (colon == NULL && close + 1 != rest + len)
			return LUMEN_EMALFORMED;
	} else {
		colon = memchr(rest, ':', len);
		host_len = colon != NULL ? (size_t)(colon - rest) : len;
	}
	if (host_len == 0)
		return LUMEN_EMALFORMED;
	if (colon != NULL) {
		char digits[8];
		size_t n = (size_t)(rest + len - colon - 1);
		unsigned long v;
		if (n == 0 || n >= sizeof(digits))
			return LUMEN_EMALFORMED;
		memcpy(digits, colon + 1, n);
		digits[n] = '\0';
		if (!parse_number(digits, 1, 65535, &v))
			return LUMEN_EMALFORMED;
		*port = (unsigned)v;
	}
	*host = strndup(start, host_len);
	return *host != NULL ? LUMEN_OK : LUMEN_ENOMEM;
}

int config_syncrepl_url(const char *url, bool *ldaps, char **host, unsigned *port)
{
	*host = NULL;
	if (strncasecmp(url, "ldap://", 7) == 0) {
		*ldaps = false;
		*port = 389;
		return url_host_port(url + 7, host, port);
	}
	if (strncasecmp(url, "ldaps://", 8) == 0) {
		*ldaps = true;
		*port = 636;
		return url_host_port(url + 8, host, port);
	}
	return LUMEN_EMALFORMED;
}

/* ----------------------------------------------------------- keywords */

struct keyword {
	const char *name;
	int (*apply)(struct config_syncrepl *s, const char *value, char *err, size_t errlen);
};

static int kw_rid(struct config_syncrepl *s, const char *value, char *err, size_t errlen)
{
	unsigned long v;
	if (!parse_number(value, 0, 999, &v))
		return fail(err, errlen, "rid", "expected a number from 0 to 999, got", value);
	s->rid = (int)v;
	return LUMEN_OK;
}

static int kw_provider(struct config_syncrepl *s, const char *value, char *err, size_t errlen)
{
	free(s->host);
	int rc = config_syncrepl_url(value, &s->ldaps, &s->host, &s->port);
	if (rc == LUMEN_EMALFORMED)
		return fail(err, errlen, "provider", "expected ldap://HOST[:PORT] or "
			    "ldaps://HOST[:PORT], got", value);
	return rc == LUMEN_OK ? set_string(&s->provider, value) : rc;
}

static int kw_searchbase(struct config_syncrepl *s, const char *value, char *err,
			 size_t errlen)
{
	(void)err;
	(void)errlen;
	return set_string(&s->searchbase, value);
}

static int kw_type(struct config_syncrepl *s, const char *value, char *err, size_t errlen)
{
	static const char *const names[] = { "refreshOnly", "refreshAndPersist" };
	int i = pick(value, names, 2);
	if (i < 0)
		return fail(err, errlen, "type", "expected refreshOnly or refreshAndPersist, got",
			    value);
	s->type = i == 0 ? SYNCREPL_REFRESH_ONLY : SYNCREPL_REFRESH_AND_PERSIST;
	return LUMEN_OK;
}

static int kw_interval(struct config_syncrepl *s, const char *value, char *err, size_t errlen)
{
	if (config_syncrepl_interval(value, &s->interval) != LUMEN_OK)
		return fail(err, errlen, "interval", "expected dd:hh:mm:ss (not all zero), got",
			    value);
	return LUMEN_OK;
}

static int kw_retry(struct config_syncrepl *s, const char *value, char *err, size_t errlen)
{
	if (config_syncrepl_retry(value, s->retry, SYNCREPL_MAX_RETRY_PAIRS, &s->n_retry) !=
	    LUMEN_OK)
		return fail(err, errlen, "retry", "expected pairs of seconds and a count or \"+\" "
			    "(\"+\" last), e.g. \"5 10 60 +\", got", value);
	return LUMEN_OK;
}

static int kw_filter(struct config_syncrepl *s, const char *value, char *err, size_t errlen)
{
	if (value[0] != '(')
		return fail(err, errlen, "filter", "expected a parenthesized filter, got", value);
	return set_string(&s->filter, value);
}

static int kw_scope(struct config_syncrepl *s, const char *value, char *err, size_t errlen)
{
	static const char *const names[] = { "base", "one", "sub", "subord" };
	int i = pick(value, names, 4);
	if (i < 0)
		return fail(err, errlen, "scope", "expected sub, one, base or subord, got", value);
	s->scope = (enum syncrepl_scope)i;
	return LUMEN_OK;
}

static int kw_attrs(struct config_syncrepl *s, const char *value, char *err, size_t errlen)
{
	char *copy = strdup(value);
	if (copy == NULL)
		return LUMEN_ENOMEM;
	int rc = LUMEN_OK;
	for (size_t i = 0; i < s->n_attrs; i++)
		free(s->attrs[i]);
	s->n_attrs = 0;
	for (char *save = NULL, *w = strtok_r(copy, ", ", &save); w != NULL && rc == LUMEN_OK;
	     w = strtok_r(NULL, ", ", &save)) {
		char **bigger = realloc(s->attrs, (s->n_attrs + 1) * sizeof(*bigger));
		if (bigger == NULL) {
			rc = LUMEN_ENOMEM;
			break;
		}
		s->attrs = bigger;
		bigger[s->n_attrs] = strdup(w);
		if (bigger[s->n_attrs] == NULL)
			rc = LUMEN_ENOMEM;
		else
			s->n_attrs++;
	}
	free(copy);
	if (rc == LUMEN_OK && s->n_attrs == 0)
		return fail(err, errlen, "attrs", "expected a comma-separated list, got", value);
	return rc;
}

static int kw_bindmethod(struct config_syncrepl *s, const char *value, char *err,
			 size_t errlen)
{
	static const char *const names[] = { "simple", "sasl" };
	int i = pick(value, names, 2);
	if (i < 0)
		return fail(err, errlen, "bindmethod", "expected simple or sasl, got", value);
	s->bindmethod = i == 0 ? SYNCREPL_BIND_SIMPLE : SYNCREPL_BIND_SASL_EXTERNAL;
	return LUMEN_OK;
}

static int kw_saslmech(struct config_syncrepl *s, const char *value, char *err, size_t errlen)
{
	(void)s;
	if (strcasecmp(value, "EXTERNAL") != 0)
		return fail(err, errlen, "saslmech", "only EXTERNAL is supported, got", value);
	return LUMEN_OK;
}

static int kw_binddn(struct config_syncrepl *s, const char *value, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	return set_string(&s->binddn, value);
}

static int kw_credentials(struct config_syncrepl *s, const char *value, char *err,
			  size_t errlen)
{
	(void)err;
	(void)errlen;
	if (s->credentials != NULL)
		explicit_bzero(s->credentials, strlen(s->credentials));
	return set_string(&s->credentials, value);
}

static int kw_starttls(struct config_syncrepl *s, const char *value, char *err, size_t errlen)
{
	static const char *const names[] = { "no", "yes", "critical" };
	int i = pick(value, names, 3);
	if (i < 0)
		return fail(err, errlen, "starttls", "expected yes or critical, got", value);
	s->starttls = (enum syncrepl_starttls)i;
	return LUMEN_OK;
}

static int kw_tls_file(char **slot, const char *name, const char *value, char *err,
		       size_t errlen)
{
	if (value[0] == '\0')
		return fail(err, errlen, name, "expected a file name, got", value);
	return set_string(slot, value);
}

static int kw_tls_cacert(struct config_syncrepl *s, const char *value, char *err, size_t errlen)
{
	return kw_tls_file(&s->tls_cacert, "tls_cacert", value, err, errlen);
}

static int kw_tls_cert(struct config_syncrepl *s, const char *value, char *err, size_t errlen)
{
	return kw_tls_file(&s->tls_cert, "tls_cert", value, err, errlen);
}

static int kw_tls_key(struct config_syncrepl *s, const char *value, char *err, size_t errlen)
{
	return kw_tls_file(&s->tls_key, "tls_key", value, err, errlen);
}

static int kw_tls_reqcert(struct config_syncrepl *s, const char *value, char *err,
			  size_t errlen)
{
	static const char *const names[] = { "never", "allow", "try", "demand" };
	int i = pick(value, names, 4);
	if (i < 0)
		return fail(err, errlen, "tls_reqcert", "expected never, allow, try or demand, got",
			    value);
	s->tls_reqcert = (enum syncrepl_reqcert)i;
	return LUMEN_OK;
}

static int seconds(const char *name, const char *value, unsigned *out, char *err,
		   size_t errlen)
{
	unsigned long v;
	if (!parse_number(value, 1, MAX_SECONDS, &v))
		return fail(err, errlen, name, "expected seconds (1 or more), got", value);
	*out = (unsigned)v;
	return LUMEN_OK;
}

/* 0 is what slaptest writes for OpenLDAP's "wait forever": Lumen's
 * bounded default stays (a consumer thread must not hang). */
static int kw_timeout(struct config_syncrepl *s, const char *value, char *err, size_t errlen)
{
	if (strcmp(value, "0") == 0)
		return LUMEN_OK;
	return seconds("timeout", value, &s->timeout, err, errlen);
}

static int kw_network_timeout(struct config_syncrepl *s, const char *value, char *err,
			      size_t errlen)
{
	if (strcmp(value, "0") == 0)
		return LUMEN_OK;
	return seconds("network-timeout", value, &s->network_timeout, err, errlen);
}

/* keepalive=0:0:0 and tcp-user-timeout=0 are OpenLDAP's "off", written
 * out by slaptest into every olcSyncrepl: accepted at that value only. */
static int kw_keepalive(struct config_syncrepl *s, const char *value, char *err, size_t errlen)
{
	(void)s;
	if (strcmp(value, "0:0:0") == 0)
		return LUMEN_OK;
	return fail(err, errlen, "keepalive", "supported only at 0:0:0 (off), got", value);
}

static int kw_tcp_user_timeout(struct config_syncrepl *s, const char *value, char *err,
			       size_t errlen)
{
	(void)s;
	if (strcmp(value, "0") == 0)
		return LUMEN_OK;
	return fail(err, errlen, "tcp-user-timeout", "supported only at 0 (off), got", value);
}

static int kw_schemachecking(struct config_syncrepl *s, const char *value, char *err,
			     size_t errlen)
{
	static const char *const names[] = { "off", "on" };
	int i = pick(value, names, 2);
	if (i < 0)
		return fail(err, errlen, "schemachecking", "expected on or off, got", value);
	s->schemachecking = i == 1;
	return LUMEN_OK;
}

static const struct keyword keywords[] = {
	{ "rid", kw_rid },
	{ "provider", kw_provider },
	{ "searchbase", kw_searchbase },
	{ "type", kw_type },
	{ "interval", kw_interval },
	{ "retry", kw_retry },
	{ "filter", kw_filter },
	{ "scope", kw_scope },
	{ "attrs", kw_attrs },
	{ "bindmethod", kw_bindmethod },
	{ "saslmech", kw_saslmech },
	{ "binddn", kw_binddn },
	{ "credentials", kw_credentials },
	{ "starttls", kw_starttls },
	{ "tls_cacert", kw_tls_cacert },
	{ "tls_cert", kw_tls_cert },
	{ "tls_key", kw_tls_key },
	{ "tls_reqcert", kw_tls_reqcert },
	{ "timeout", kw_timeout },
	{ "network-timeout", kw_network_timeout },
	{ "keepalive", kw_keepalive },
	{ "tcp-user-timeout", kw_tcp_user_timeout },
	{ "schemachecking", kw_schemachecking },
};
#define N_KEYWORDS (sizeof(keywords) / sizeof(keywords[0]))

static int set_defaults(struct config_syncrepl *s)
{
	memset(s, 0, sizeof(*s));
	s->rid = -1;
	s->type = SYNCREPL_REFRESH_ONLY;
	s->interval = SYNCREPL_DEFAULT_INTERVAL;
	s->retry[0] = (struct syncrepl_retry){ 3600, SYNCREPL_RETRY_FOREVER };
	s->n_retry = 1;
	s->scope = SYNCREPL_SCOPE_SUB;
	s->tls_reqcert = SYNCREPL_REQCERT_DEMAND;
	s->timeout = SYNCREPL_DEFAULT_TIMEOUT;
	s->network_timeout = SYNCREPL_DEFAULT_NETWORK_TIMEOUT;
	int rc = set_string(&s->filter, "(objectClass=*)");
	if (rc == LUMEN_OK)
		rc = kw_attrs(s, "*,+", NULL, 0);
	return rc;
}

/* One keyword=value word; seen[] catches repeats. */
static int apply_word(struct config_syncrepl *s, char *word, bool *seen, char *err,
		      size_t errlen)
{
	char *eq = strchr(word, '=');
	if (eq == NULL) {
		snprintf(err, errlen, "expected keyword=value, got \"%s\"", word);
		return LUMEN_EMALFORMED;
	}
	*eq = '\0';
	int rc = LUMEN_EMALFORMED;
	size_t i = 0;
	while (i < N_KEYWORDS && strcasecmp(keywords[i].name, word) != 0)
		i++;
	if (i == N_KEYWORDS)
		snprintf(err, errlen, "unknown or unsupported keyword \"%s\"", word);
	else if (seen[i])
		snprintf(err, errlen, "%s: given twice", keywords[i].name);
	else
		rc = keywords[i].apply(s, eq + 1, err, errlen);
	seen[i < N_KEYWORDS ? i : 0] |= i < N_KEYWORDS;
	*eq = '=';
	return rc;
}

static int check_required(const struct config_syncrepl *s, char *err, size_t errlen)
{
	const char *missing = s->rid < 0 ? "rid" : s->provider == NULL ? "provider"
					      : s->searchbase == NULL ? "searchbase" : NULL;
	if (missing != NULL) {
		snprintf(err, errlen, "%s= is required", missing);
		return LUMEN_EMALFORMED;
	}
	if (s->bindmethod == SYNCREPL_BIND_SASL_EXTERNAL && !s->ldaps &&
	    s->starttls == SYNCREPL_STARTTLS_NO) {
		snprintf(err, errlen, "bindmethod=sasl (EXTERNAL) needs ldaps:// or starttls");
		return LUMEN_EMALFORMED;
	}
	if ((s->tls_cert == NULL) != (s->tls_key == NULL)) {
		snprintf(err, errlen, "tls_cert and tls_key go together");
		return LUMEN_EMALFORMED;
	}
	return LUMEN_OK;
}

int config_syncrepl_parse(char *const *words, size_t n_words, struct config_syncrepl *out,
			  char *err, size_t errlen)
{
	bool seen[N_KEYWORDS] = { false };
	int rc = set_defaults(out);
	for (size_t i = 0; i < n_words && rc == LUMEN_OK; i++)
		rc = apply_word(out, words[i], seen, err, errlen);
	if (rc == LUMEN_OK)
		rc = check_required(out, err, errlen);
	if (rc == LUMEN_ENOMEM)
		snprintf(err, errlen, "out of memory");
	if (rc != LUMEN_OK)
		config_syncrepl_free(out);
	return rc;
}

void config_syncrepl_free(struct config_syncrepl *s)
{
	free(s->provider);
	free(s->host);
	free(s->searchbase);
	free(s->filter);
	for (size_t i = 0; i < s->n_attrs; i++)
		free(s->attrs[i]);
	free(s->attrs);
	free(s->binddn);
	if (s->credentials != NULL)
		explicit_bzero(s->credentials, strlen(s->credentials));
	free(s->credentials);
	free(s->tls_cacert);
	free(s->tls_cert);
	free(s->tls_key);
	free(s->origin);
	memset(s, 0, sizeof(*s));
	s->rid = -1;
}
