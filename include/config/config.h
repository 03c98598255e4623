/*
 * config.h — slapd.conf parsing into plain settings structs (config layer).
 *
 * config_load reads an OpenLDAP-style slapd.conf (and every file it
 * `include`s), checks each directive against a table of known directives,
 * and fills a struct config. Schema definitions met along the way
 * (attributetype, objectclass, objectidentifier) are handed to the schema
 * engine with the origin "FILE:LINE", and the schema is finalized once the
 * whole configuration has been read.
 *
 * Syntax (as slapd.conf): one directive per line; a line beginning with
 * whitespace continues the previous line; lines beginning with '#' and blank
 * lines are ignored; arguments are separated by whitespace, and an argument
 * may be quoted ("a b") with \" and \\ escapes inside the quotes. Directives
 * before the first `database` line are global; after it they belong to that
 * database section. `include FILE` is allowed anywhere: a relative FILE is
 * looked up in the current working directory first (like slapd), then in
 * the including file's directory.
 *
 * Ownership: config_load allocates the struct config and everything it
 * points to (strings, arrays, the schema); config_free releases all of it.
 * Nothing here opens sockets, starts threads or touches a database.
 *
 * Thread-safety: config_load/config_free are not meant to be run
 * concurrently on one struct; a loaded config is read-only and may be read
 * by any number of threads.
 *
 * Errors: every failure fills the caller's err buffer with
 * "FILE:LINE: directive: what was expected" (schema errors keep the schema
 * engine's text, which also names FILE:LINE).
 *
 * Caveats:
 *  - Only whole lines starting with '#' are comments: a '#' inside a line
 *    is data (rootpw values may contain it).
 *  - sizelimit/timelimit inside a database section set that database's
 *    limit; CONFIG_LIMIT_INHERIT there means "use the global value".
 *  - rootpw is kept verbatim (cleartext or {SCHEME}...); never log it.
 *  - schema/lumen.schema (the operational attributes: entryUUID, the
 *    subschema and root DSE types) and schema/monitor.schema (cn=Monitor)
 *    are loaded automatically, after the whole file was read, when no
 *    `include` names them (by file name): from the directory of the first
 *    included file that has them next to it, else from LUMEN_SCHEMA_DIR
 *    ($(datadir)/lumen/schema, from the Makefile). Not finding them is not an error here (the
 *    server says what is missing). monitor.schema is skipped when
 *    core.schema's `name` and `cn` are not loaded (it builds on them). So
 *    a config's schema is never just what its includes name.
 *  - A relative `include` is looked for in the working directory (as
 *    slapd), then next to the including file, then in the installed data
 *    directory LUMEN_DATA_DIR ($(datadir)/lumen: "schema/core.schema"),
 *    then in LUMEN_SCHEMA_DIR ("core.schema").
 *  - metrics-listen is off unless configured: several lumend on one host
 *    (tests, staging) would otherwise fight over one default port.
 */
#ifndef LUMEN_CONFIG_H
#define LUMEN_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <regex.h>

#include "access_rules.h"

struct schema;
struct config_syncrepl;
struct config_server_id;

/* OpenLDAP's loglevel bits (slapd.conf(5)). */
enum config_log_level {
	LOG_LEVEL_TRACE = 0x1,
	LOG_LEVEL_PACKETS = 0x2,
	LOG_LEVEL_ARGS = 0x4,
	LOG_LEVEL_CONNS = 0x8,
	LOG_LEVEL_BER = 0x10,
	LOG_LEVEL_FILTER = 0x20,
	LOG_LEVEL_CONFIG = 0x40,
	LOG_LEVEL_ACL = 0x80,
	LOG_LEVEL_STATS = 0x100,
	LOG_LEVEL_STATS2 = 0x200,
	LOG_LEVEL_SHELL = 0x400,
	LOG_LEVEL_PARSE = 0x800,
	LOG_LEVEL_SYNC = 0x4000,
	LOG_LEVEL_NONE = 0x8000,
	LOG_LEVEL_ANY = 0xffff,
};

/* Index kinds of an `index` line, as bits. */
enum config_index_kind {
	INDEX_KIND_PRESENT = 0x1,   /* pres */
	INDEX_KIND_EQUALITY = 0x2,  /* eq */
	INDEX_KIND_SUBSTRING = 0x4, /* sub */
	INDEX_KIND_APPROX = 0x8,    /* approx */
};

/* sizelimit/timelimit value meaning "no limit" ("unlimited" or -1). */
#define CONFIG_LIMIT_UNLIMITED (-1L)
/* Database-section limit not set: the global value applies. */
#define CONFIG_LIMIT_INHERIT (-2L)

/* One `index attr[,attr...] kinds` line. */
struct config_index {
	char **attributes;          /* as written, "default" too (the backend applies it) */
	size_t n_attributes;
	unsigned kinds;             /* enum config_index_kind bits */
	char *origin;               /* "FILE:LINE", for the backend's errors */
};

/* `limits` subjects (OpenLDAP's slapd.conf(5) subset). */
enum config_limit_who {
	LIMIT_WHO_ANYONE,        /* * */
	LIMIT_WHO_ANONYMOUS,     /* anonymous */
	LIMIT_WHO_USERS,         /* users: any bound identity */
	LIMIT_WHO_DN_EXACT,      /* dn[.exact|.base]="DN" */
	LIMIT_WHO_DN_SUBTREE,    /* dn.subtree="DN" (the DN and below) */
};

/* One `limits WHO size=N time=N` line; values CONFIG_LIMIT_INHERIT when
 * not given, CONFIG_LIMIT_UNLIMITED for "unlimited". */
struct config_limit {
	enum config_limit_who who;
	char *ndn;                  /* DN kinds: normalized, NUL-terminated */
	size_t ndn_len;
	char *dn_text;              /* as written, normalized after the schema */
	long size;
	long time;
	char *origin;               /* "FILE:LINE" */
};

/* One `authz-regexp PATTERN REPLACEMENT` (POSIX extended, case-insensitive). */
struct config_authz_regexp {
	char *pattern;
	char *replacement;          /* $0..$9 name the pattern's groups */
	regex_t regex;
	bool compiled;
	char *origin;
};

/*
 * `authz-policy`: which rules let an identity act as another through the
 * Proxied Authorization control (RFC 4370): none, the authenticated
 * entry's authzTo (to), the target entry's authzFrom (from), either (any)
 * or both (all). OpenLDAP's names and meaning.
 */
enum config_authz_policy {
	CONFIG_AUTHZ_NONE = 0,
	CONFIG_AUTHZ_TO = 1,
	CONFIG_AUTHZ_FROM = 2,
	CONFIG_AUTHZ_ANY = CONFIG_AUTHZ_TO | CONFIG_AUTHZ_FROM,
	CONFIG_AUTHZ_ALL = 4 | CONFIG_AUTHZ_ANY,
};

/* TLSVerifyClient. */
enum config_tls_verify {
	CONFIG_TLS_VERIFY_NEVER = 0,
	CONFIG_TLS_VERIFY_ALLOW,
	CONFIG_TLS_VERIFY_DEMAND,
};

/* TLS protocol versions as on the wire (and as OpenSSL numbers them). */
#define CONFIG_TLS_1_0 0x0301u
#define CONFIG_TLS_1_2 0x0303u
#define CONFIG_TLS_1_3 0x0304u
#define CONFIG_DEFAULT_TLS_HANDSHAKE_TIMEOUT 10u

/* The TLS directives; certificate_file NULL = TLS not configured. */
struct config_tls {
	char *certificate_file;     /* TLSCertificateFile */
	char *key_file;             /* TLSCertificateKeyFile */
	char *ca_file;              /* TLSCACertificateFile; NULL = none */
	char *cipher_suite;         /* TLSCipherSuite; NULL = OpenSSL's default */
	unsigned protocol_min;      /* TLSProtocolMin; default CONFIG_TLS_1_2 */
	enum config_tls_verify verify_client;   /* TLSVerifyClient */
	unsigned handshake_timeout; /* tls_handshake_timeout, seconds */
};

/* `security ssf=N simple_bind=N`: the least security strength factor an
 * operation (resp. a simple bind with a password or a password change)
 * needs; 0 = none. ldapi counts as 71 (OpenLDAP's local SSF), TLS as its
 * cipher's bits. */
struct config_security {
	unsigned ssf;
	unsigned simple_bind;
};

#define CONFIG_DEFAULT_PASSWORD_HASH "{SSHA512}"

/*
 * One `overlay NAME` line of a database section and the lines after it
 * that no table of directives knows: those belong to the overlay, and the
 * server's overlay of that name parses them (an overlay's directives are
 * the server's business; config only keeps them with their origin).
 */
struct config_overlay_line {
	char **words;               /* the directive and its arguments */
	size_t n_words;
	char *origin;               /* "FILE:LINE" */
};

struct config_overlay {
	char *name;                 /* as written */
	char *origin;               /* "FILE:LINE" of the overlay line */
	struct config_overlay_line *lines;
	size_t n_lines;
};

/*
 * A `moduleload NAME` line (OpenLDAP's): Lumen's modules are built in, so
 * the server only checks that it has the named one and says the line is
 * ignored. name is the module's bare name ("refint" for
 * "/usr/lib/ldap/refint.la").
 */
struct config_module {
	char *name;
	char *origin;               /* "FILE:LINE" */
};

/* One `database` section. */
struct config_database {
	char *type;                 /* "mdb" */
	char *origin;               /* "FILE:LINE" of the database line */
	char **suffixes;            /* as written */
	size_t n_suffixes;
	char *rootdn;               /* NULL when not configured */
	char *rootpw;               /* NULL when not configured; verbatim */
	char *directory;            /* NULL when not configured */
	uint64_t maxsize;           /* bytes; default CONFIG_DEFAULT_MAXSIZE */
	unsigned maxreaders;        /* default 126 (LMDB's) */
	bool dbnosync;
	struct config_index *indexes;
	size_t n_indexes;
	size_t cachesize;           /* entries; 0 = the backend's default; CONFIG_CACHE_OFF */
	size_t idlcachesize;        /* index lookups; 0 = the backend's default; CONFIG_CACHE_OFF */
	long sizelimit;             /* CONFIG_LIMIT_INHERIT unless set here */
	long timelimit;             /* seconds; CONFIG_LIMIT_INHERIT unless set */
	struct access_rules access; /* this database's `access` lines */
	struct config_limit *limits;/* this database's `limits` lines, in order */
	size_t n_limits;
	struct config_overlay *overlays; /* in `overlay` line order */
	size_t n_overlays;
	/* `syncrepl` lines (config_syncrepl.h): the database is a replica,
	 * written only by its consumers; `updateref` URLs answer the writes
	 * of everyone else with a referral (without one: unwillingToPerform). */
	struct config_syncrepl *syncrepl;
	size_t n_syncrepl;
	char **updaterefs;
	size_t n_updaterefs;
	/* `multiprovider on` (or `mirrormode on`): a replica that also takes
	 * client writes (config_server_id.h). */
	bool multiprovider;
};

#define CONFIG_DEFAULT_THREADS 4
#define CONFIG_MAX_FILTER_DEPTH 4096
/* listener-threads unset: two I/O threads per online CPU, at most the
 * second figure (I/O threads run short reads themselves: inline_ops.h). */
#define CONFIG_DEFAULT_LISTENER_THREADS 0
#define CONFIG_AUTO_LISTENER_THREADS_MAX 8
/* busy-poll: microseconds an I/O thread that carries every connection
 * keeps looking for input before it sleeps (io_thread.c). */
#define CONFIG_DEFAULT_BUSY_POLL_US 50
#define CONFIG_MAX_BUSY_POLL_US 10000
#define CONFIG_DEFAULT_SIZELIMIT 500L
#define CONFIG_DEFAULT_TIMELIMIT 3600L
#define CONFIG_DEFAULT_MAX_INCOMING (256u * 1024u)
#define CONFIG_DEFAULT_MAX_INCOMING_AUTH (4u * 1024u * 1024u)
#define CONFIG_DEFAULT_MAX_PENDING 64u
/*
 * writetimeout: seconds a connection's pending output may make no progress
 * before the connection is closed. OpenLDAP's default is 0 (never), which
 * lets a client that stops reading hold its connection, its parked
 * operations and up to ~1 MiB of output forever; a client that reads at
 * all, however slowly, is never cut by it, so a bound this generous only
 * ends clients that are stuck or hostile. 0 in slapd.conf restores "never".
 */
#define CONFIG_DEFAULT_WRITETIMEOUT 120u
#define CONFIG_DEFAULT_MAX_PENDING_AUTH 256u
/* Bytes one connection may hold (input, queued requests, output) before
 * it is read no further: anonymous, bound, and all connections together. */
#define CONFIG_DEFAULT_CONN_MAX_MEMORY (1u * 1024u * 1024u)
#define CONFIG_DEFAULT_CONN_MAX_MEMORY_AUTH (32u * 1024u * 1024u)
#define CONFIG_DEFAULT_CONN_TOTAL_MEMORY (1024ull * 1024 * 1024)
/* Seconds from accept to the first complete PDU (plain LDAP). */
#define CONFIG_DEFAULT_FIRST_PDU_TIMEOUT 60u
#define CONFIG_DEFAULT_MAXSIZE (10ull * 1024 * 1024 * 1024)
#define CONFIG_DEFAULT_MAXREADERS 126u
/* cachesize/idlcachesize off: no cache. */
#define CONFIG_CACHE_OFF SIZE_MAX

/* slowop-threshold not set (or "off"): no stage breakdown in the log. */
#define CONFIG_SLOWOP_OFF (-1L)

/* sortvlv-max's default: entries one sorted search may collect. */
#define CONFIG_DEFAULT_SORT_MAX 100000u

struct config {
	char *path;                 /* the top-level file as given */
	char *pidfile;              /* NULL when not configured */
	char *argsfile;             /* NULL when not configured */
	struct config_module *modules; /* `moduleload` lines, in order */
	size_t n_modules;
	unsigned threads;           /* worker threads */
	unsigned listener_threads;  /* I/O threads (each with an event_base) */
	unsigned busy_poll_us;      /* busy-poll: 0 = sleep at once */
	unsigned loglevel;          /* enum config_log_level bits */
	long sizelimit;             /* entries, or CONFIG_LIMIT_UNLIMITED */
	long timelimit;             /* seconds, or CONFIG_LIMIT_UNLIMITED */
	unsigned idletimeout;       /* seconds; 0 = never */
	unsigned writetimeout;      /* seconds without output progress; 0 = never */
	size_t max_incoming;        /* sockbuf_max_incoming: PDU bound before bind */
	size_t max_incoming_auth;   /* sockbuf_max_incoming_auth: after bind */
	unsigned max_pending;       /* conn_max_pending: outstanding ops, anonymous */
	unsigned max_pending_auth;  /* conn_max_pending_auth: outstanding ops, bound */
	size_t conn_max_memory;     /* conn_max_memory: bytes one anonymous connection holds */
	size_t conn_max_memory_auth;/* conn_max_memory_auth: the same once bound */
	uint64_t conn_total_memory; /* conn_total_memory: all connections; 0 = no bound */
	unsigned first_pdu_timeout; /* first_pdu_timeout: seconds from accept (or from
				       the end of the TLS handshake) to the first
				       complete PDU; 0 = none */
	bool allow_bind_anon_dn;    /* `allow bind_anon_dn`: DN + empty password
				       binds anonymously instead of failing */
	unsigned conn_max;          /* conn_max: open connections; 0 = no bound */
	unsigned conn_max_per_ip;   /* conn_max_per_ip: per client address; 0 = none */
	unsigned max_filter_depth;  /* maxfilterdepth (OpenLDAP's; default 1000) */
	unsigned sort_max;          /* sortvlv-max: entries one
				       sorted search (RFC 2891, VLV) may collect */
	bool debug_nagle;           /* debug-nagle: leave TCP_NODELAY unset (experiment) */
	/* `referral URL` lines (OpenLDAP's default referral): operations on
	 * names outside every suffix are referred there. ldap[s|i]://host[:port]
	 * URLs without a DN or any field after it. */
	char **referrals;
	size_t n_referrals;
	bool inline_reads;          /* inline-reads (default on): I/O threads run short reads */
	struct config_tls tls;
	struct config_security security;
	bool password_allow_cleartext;  /* password-allow-cleartext (default on) */
	char *password_hash;        /* password-hash scheme, "{SSHA512}" by default */
	struct config_authz_regexp *authz_regexps;
	size_t n_authz_regexps;
	enum config_authz_policy authz_policy;  /* authz-policy (default none) */
	struct access_rules access; /* global `access` lines */
	struct config_limit *limits;/* global `limits` lines */
	size_t n_limits;
	/* Observability (config_observe.c). */
	char *metrics_address;      /* metrics-listen host; NULL = no /metrics */
	unsigned metrics_port;      /* metrics-listen port (0 = any free port) */
	unsigned metrics_max_connections; /* metrics-max-connections; 0 = the default */
	unsigned metrics_timeout;   /* metrics-timeout: seconds per scrape; 0 = default */
	long slowop_threshold_ms;   /* slowop-threshold; CONFIG_SLOWOP_OFF = off */
	char *logfile;              /* logfile: access log file; NULL = none */
	/* `serverID` lines (config_server_id.h) and this server's ID: set
	 * by config_load for one line without URL, else by lumend from its
	 * listeners; 0 without serverID. */
	struct config_server_id *server_ids;
	size_t n_server_ids;
	unsigned server_id;
	struct schema *schema;      /* finalized; owned */
	struct config_database *databases;
	size_t n_databases;
};

/*
 * Read `path` (and its includes) into a new struct config. On failure *out
 * is NULL and err holds "FILE:LINE: reason". Returns LUMEN_OK,
 * LUMEN_EIO (a file cannot be read), LUMEN_EMALFORMED (bad or unknown
 * directive, bad argument), LUMEN_ELIMIT (include nesting too deep), a
 * schema error (LUMEN_EMALFORMED, LUMEN_EEXIST, LUMEN_ENOTFOUND), or
 * LUMEN_ENOMEM.
 */
int config_load(const char *path, struct config **out, char *err, size_t errlen);

/*
 * As config_load, from an OpenLDAP cn=config directory (slapd.d, as
 * `slaptest -f slapd.conf -F DIR` or Debian's slapd leaves it): each
 * entry's olc* attributes become the slapd.conf directive lines they stand
 * for and are applied like a file's (config_slapd_d.c has the tables). A
 * value equal to the default OpenLDAP writes out is left out (Lumen's
 * default applies); cn=config's own database, slapd's built-in schema and
 * its modules are not translated; a schema entry Lumen ships (core,
 * cosine, inetorgperson, nis) becomes `include schema/NAME.schema`.
 * Errors as config_load, naming the slapd.d file and line (and the
 * entry's DN and attribute for one Lumen does not read:
 * LUMEN_EUNSUPPORTED); a file whose "# CRC32" header does not match its
 * content is LUMEN_EMALFORMED ("corrupt"). Lumen never writes to DIR.
 */
int config_load_slapd_d(const char *dir, struct config **out, char *err, size_t errlen);

/*
 * Writes the slapd.conf that config_load_slapd_d reads from dir to out,
 * each entry's lines under a comment naming its file. Errors as
 * config_load_slapd_d's translation (the directives themselves are checked
 * only by loading), or LUMEN_EIO writing out.
 */
int config_print_slapd_d(const char *dir, FILE *out, char *err, size_t errlen);

/* Release a config and everything it owns; NULL is allowed. */
void config_free(struct config *cfg);

/*
 * Parse a loglevel as slapd does: one or more words, each a number
 * (decimal or 0x hex) or a level name (trace, packets, args, conns, BER,
 * filter, config, ACL, stats, stats2, shell, parse, sync, none, any;
 * case-insensitive), OR-ed together. LUMEN_EMALFORMED for an unknown word.
 */
int config_parse_loglevel(const char *const *words, size_t n_words, unsigned *out);

/*
 * `metrics-listen ADDRESS:PORT|none` (an IPv6 address in brackets): a
 * malloc'ed host in *address (NULL for none) and the port. LUMEN_EMALFORMED,
 * LUMEN_ENOMEM.
 */
int config_parse_metrics_listen(const char *text, char **address, unsigned *port);
/* `slowop-threshold MILLISECONDS|off`: CONFIG_SLOWOP_OFF for off; 0 = every
 * operation. LUMEN_EMALFORMED. */
int config_parse_slowop_threshold(const char *text, long *out);

/* The effective sizelimit/timelimit of a database (resolving INHERIT). */
long config_database_sizelimit(const struct config *cfg, const struct config_database *db);
long config_database_timelimit(const struct config *cfg, const struct config_database *db);

#endif
