/*
 * config_syncrepl.h — a database section's `syncrepl` lines (an RFC 4533
 * consumer, OpenLDAP's keywords) and `updateref` URLs, parsed into plain
 * settings (config layer) for the server's consumer threads.
 *
 *   syncrepl rid=NNN provider=ldap[s]://HOST[:PORT] searchbase=DN
 *            [type=refreshOnly|refreshAndPersist] [interval=dd:hh:mm:ss]
 *            [retry="INTERVAL COUNT [INTERVAL COUNT ...]"] (COUNT "+": forever)
 *            [filter=FILTER] [scope=sub|one|base|subord] [attrs=A,B,...]
 *            [bindmethod=simple|sasl] [binddn=DN] [credentials=PW]
 *            [saslmech=EXTERNAL] [starttls=yes|critical]
 *            [tls_cacert=FILE] [tls_cert=FILE] [tls_key=FILE]
 *            [tls_reqcert=never|allow|try|demand] [timeout=SECONDS]
 *            [network-timeout=SECONDS] [schemachecking=on|off]
 *            [keepalive=0:0:0] [tcp-user-timeout=0]
 *   updateref ldap[s]://HOST[:PORT]    (after a syncrepl line)
 *
 * Defaults are OpenLDAP's (slapd.conf(5)): type refreshOnly, interval one
 * day, retry every hour forever ("3600 +"), filter (objectClass=*), scope
 * sub, attrs "*,+", bindmethod simple (anonymous without binddn),
 * tls_reqcert demand, schemachecking off. timeout (each request's answer)
 * defaults to 5 seconds as OpenLDAP's; network-timeout (connecting, and
 * any silence of the provider during a refresh) to 30 seconds where
 * OpenLDAP waits forever: a consumer thread must not hang on a provider
 * that stopped answering. timeout=0 and network-timeout=0 (OpenLDAP's
 * "forever", which slaptest writes into every olcSyncrepl of a slapd.d)
 * keep these defaults; keepalive and tcp-user-timeout are accepted at
 * slaptest's 0:0:0 and 0 (off) only.
 *
 * Ownership: config_syncrepl_parse fills a caller's struct whose strings
 * it allocates; config_syncrepl_free releases them. Thread-safety: plain
 * functions on caller memory.
 *
 * Errors: LUMEN_EMALFORMED with err naming the keyword and what was
 * expected (the config loader adds "FILE:LINE: syncrepl: "), LUMEN_ENOMEM.
 *
 * Caveats:
 *  - Keywords OpenLDAP has and Lumen does not implement (exattrs,
 *    syncdata, logbase, suffixmassage, ...) are refused, not ignored: a
 *    replica that silently replicates something else is worse than none.
 *  - credentials is a secret: never log it.
 */
#ifndef LUMEN_CONFIG_SYNCREPL_H
#define LUMEN_CONFIG_SYNCREPL_H

#include <stdbool.h>
#include <stddef.h>

enum syncrepl_type { SYNCREPL_REFRESH_ONLY = 1, SYNCREPL_REFRESH_AND_PERSIST = 3 };
enum syncrepl_bind { SYNCREPL_BIND_SIMPLE, SYNCREPL_BIND_SASL_EXTERNAL };
enum syncrepl_starttls { SYNCREPL_STARTTLS_NO, SYNCREPL_STARTTLS_YES,
			 SYNCREPL_STARTTLS_CRITICAL };
enum syncrepl_reqcert { SYNCREPL_REQCERT_NEVER, SYNCREPL_REQCERT_ALLOW,
			SYNCREPL_REQCERT_TRY, SYNCREPL_REQCERT_DEMAND };
/* LDAP's scopes (ldap_message.h's numbers). */
enum syncrepl_scope { SYNCREPL_SCOPE_BASE = 0, SYNCREPL_SCOPE_ONE = 1,
		      SYNCREPL_SCOPE_SUB = 2, SYNCREPL_SCOPE_SUBORD = 3 };

#define SYNCREPL_MAX_RETRY_PAIRS 16
#define SYNCREPL_RETRY_FOREVER (-1)
#define SYNCREPL_DEFAULT_INTERVAL (24u * 3600u)
#define SYNCREPL_DEFAULT_TIMEOUT 5u
#define SYNCREPL_DEFAULT_NETWORK_TIMEOUT 30u

/* One pair of a retry schedule: wait seconds, count times (or forever). */
struct syncrepl_retry {
	unsigned seconds;
	int count;                      /* SYNCREPL_RETRY_FOREVER for "+" */
};

struct config_syncrepl {
	int rid;                        /* 0-999 */
	char *provider;                 /* the URL as written */
	bool ldaps;
	char *host;                     /* without brackets */
	unsigned port;
	char *searchbase;
	enum syncrepl_type type;
	unsigned interval;              /* seconds between polls (refreshOnly) */
	struct syncrepl_retry retry[SYNCREPL_MAX_RETRY_PAIRS];
	size_t n_retry;
	char *filter;                   /* RFC 4515 text */
	enum syncrepl_scope scope;
	char **attrs;
	size_t n_attrs;
	enum syncrepl_bind bindmethod;
	char *binddn;                   /* NULL: anonymous (simple) */
	char *credentials;              /* NULL: none; secret */
	enum syncrepl_starttls starttls;
	char *tls_cacert;
	char *tls_cert;
	char *tls_key;
	enum syncrepl_reqcert tls_reqcert;
	unsigned timeout;               /* seconds */
	unsigned network_timeout;       /* seconds */
	bool schemachecking;
	char *origin;                   /* "FILE:LINE" (filled by the loader) */
};

/*
 * The keyword=value words of one syncrepl line (without the directive)
 * into out, defaults first. rid, provider and searchbase are required;
 * a keyword given twice is an error.
 */
int config_syncrepl_parse(char *const *words, size_t n_words, struct config_syncrepl *out,
			  char *err, size_t errlen);
void config_syncrepl_free(struct config_syncrepl *s);

/* "dd:hh:mm:ss" (hh < 24, mm and ss < 60) into seconds. LUMEN_EMALFORMED. */
int config_syncrepl_interval(const char *text, unsigned *seconds);
/* "5 10 60 +" into pairs (only the last count may be "+"). LUMEN_EMALFORMED. */
int config_syncrepl_retry(const char *text, struct syncrepl_retry *out, size_t max,
			  size_t *n);
/*
 * ldap://HOST[:PORT][/] or ldaps://...: host malloc'd into *host (an
 * IPv6 address in brackets is given without them), the port (389 / 636
 * by default). LUMEN_EMALFORMED, LUMEN_ENOMEM.
 */
int config_syncrepl_url(const char *url, bool *ldaps, char **host, unsigned *port);

#endif
