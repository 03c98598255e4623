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
 */
#ifndef LUMEN_CONFIG_H
#define LUMEN_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct schema;

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
	char **attributes;          /* as written; "default" is never stored */
	size_t n_attributes;
	unsigned kinds;             /* enum config_index_kind bits */
	char *origin;               /* "FILE:LINE", for the backend's errors */
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
	size_t cachesize;           /* entries; 0 = the backend's default */
	size_t idlcachesize;        /* index lookups; 0 = the backend's default */
	long sizelimit;             /* CONFIG_LIMIT_INHERIT unless set here */
	long timelimit;             /* seconds; CONFIG_LIMIT_INHERIT unless set */
};

#define CONFIG_DEFAULT_THREADS 4
#define CONFIG_DEFAULT_LISTENER_THREADS 1
#define CONFIG_DEFAULT_SIZELIMIT 500L
#define CONFIG_DEFAULT_TIMELIMIT 3600L
#define CONFIG_DEFAULT_MAX_INCOMING (256u * 1024u)
#define CONFIG_DEFAULT_MAX_INCOMING_AUTH (4u * 1024u * 1024u)
#define CONFIG_DEFAULT_MAX_PENDING 64u
#define CONFIG_DEFAULT_MAX_PENDING_AUTH 256u
#define CONFIG_DEFAULT_MAXSIZE (10ull * 1024 * 1024 * 1024)
#define CONFIG_DEFAULT_MAXREADERS 126u

struct config {
	char *path;                 /* the top-level file as given */
	char *pidfile;              /* NULL when not configured */
	char *argsfile;             /* NULL when not configured */
	unsigned threads;           /* worker threads */
	unsigned listener_threads;  /* I/O threads (each with an event_base) */
	unsigned loglevel;          /* enum config_log_level bits */
	long sizelimit;             /* entries, or CONFIG_LIMIT_UNLIMITED */
	long timelimit;             /* seconds, or CONFIG_LIMIT_UNLIMITED */
	unsigned idletimeout;       /* seconds; 0 = never */
	size_t max_incoming;        /* sockbuf_max_incoming: PDU bound before bind */
	size_t max_incoming_auth;   /* sockbuf_max_incoming_auth: after bind */
	unsigned max_pending;       /* conn_max_pending: outstanding ops, anonymous */
	unsigned max_pending_auth;  /* conn_max_pending_auth: outstanding ops, bound */
	bool allow_bind_anon_dn;    /* `allow bind_anon_dn`: DN + empty password
				       binds anonymously instead of failing */
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

/* Release a config and everything it owns; NULL is allowed. */
void config_free(struct config *cfg);

/*
 * Parse a loglevel as slapd does: one or more words, each a number
 * (decimal or 0x hex) or a level name (trace, packets, args, conns, BER,
 * filter, config, ACL, stats, stats2, shell, parse, sync, none, any;
 * case-insensitive), OR-ed together. LUMEN_EMALFORMED for an unknown word.
 */
int config_parse_loglevel(const char *const *words, size_t n_words, unsigned *out);

/* The effective sizelimit/timelimit of a database (resolving INHERIT). */
long config_database_sizelimit(const struct config *cfg, const struct config_database *db);
long config_database_timelimit(const struct config *cfg, const struct config_database *db);

#endif
