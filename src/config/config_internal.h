/*
 * config_internal.h — private to the config layer: the state of one
 * config_load, the shape of a directive, the directive tables of each
 * group, and the argument helpers every handler shares.
 *
 * Files: config.c reads files and dispatches lines (include, schema
 * definitions, config_load/config_free); config_args.c holds the helpers
 * below; config_global.c, config_database.c and config_security.c each
 * own one table of directives and what those fill in; config_slapd_d.c
 * turns an OpenLDAP slapd.d directory into the same directive lines.
 *
 * Ownership: handlers store copies (strdup) in the struct config; the
 * config_free_* functions release what their group filled in.
 * Thread-safety: none needed (start-up only).
 * Caveats: argv strings belong to the lexer's current line; they may be
 * modified in place but must be copied to be kept.
 */
#ifndef LUMEN_CONFIG_INTERNAL_H
#define LUMEN_CONFIG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "config_lexer.h"

/* A directive's max_args when it takes any number of words. */
#define CONFIG_ARGS_UNBOUNDED CONFIG_MAX_ARGS

struct parse_state {
	struct config *cfg;
	struct config_database *db;      /* current database section, or NULL */
	struct config_file *file;        /* file being read */
	unsigned depth;                  /* include nesting */
	bool operational_schema_seen;    /* an include named lumen.schema */
	char *operational_schema_path;   /* lumen.schema next to an included file */
	bool monitor_schema_seen;        /* an include named monitor.schema */
	char *monitor_schema_path;       /* monitor.schema next to an included file */
	char *err;
	size_t errlen;
};

enum directive_section { SECTION_GLOBAL = 1, SECTION_DATABASE = 2,
			 SECTION_ANY = SECTION_GLOBAL | SECTION_DATABASE };

/*
 * A directive whose one argument fills one field: a copy of the string, or
 * a number checked against [min, max] (config_number_arg). The field is a
 * member of the struct config, or of the current database section's
 * struct config_database; a number field is an unsigned, a size_t or a
 * uint64_t (told apart by size). Rows build these with the macros below.
 */
struct config_field {
	enum config_field_kind { CONFIG_FIELD_STRING, CONFIG_FIELD_NUMBER } kind;
	bool in_database;
	size_t offset, size;
	uint64_t min, max;                /* numbers only */
	bool allow_suffix;                /* numbers only: K, M, G or T */
};

#define CONFIG_FIELD_OF(type, member) offsetof(type, member), sizeof(((type *)0)->member)
#define CONFIG_FIELD(kind, in_database, type, member, min, max, allow_suffix) \
	(&(const struct config_field){ kind, in_database, CONFIG_FIELD_OF(type, member), \
				       min, max, allow_suffix })
#define GLOBAL_STRING(member) \
	CONFIG_FIELD(CONFIG_FIELD_STRING, false, struct config, member, 0, 0, false)
#define GLOBAL_NUMBER(member, min, max, allow_suffix) \
	CONFIG_FIELD(CONFIG_FIELD_NUMBER, false, struct config, member, min, max, allow_suffix)
#define DATABASE_STRING(member) \
	CONFIG_FIELD(CONFIG_FIELD_STRING, true, struct config_database, member, 0, 0, false)
#define DATABASE_NUMBER(member, min, max, allow_suffix) \
	CONFIG_FIELD(CONFIG_FIELD_NUMBER, true, struct config_database, member, min, max, \
		     allow_suffix)

/*
 * One row of a table: config.c checks the section and the number of
 * arguments (not counting the directive itself) before the row applies,
 * so a handler may index argv[1 .. min_args] freely. A row has either a
 * handler, apply, or a field that its one argument fills
 * (config_apply_field). Both return LUMEN_OK or an error with st->err
 * filled in (config_fail_at), or LUMEN_ENOMEM.
 */
struct directive {
	const char *name;
	unsigned sections;
	size_t min_args;
	size_t max_args;
	const char *usage;                /* what was expected, for errors */
	int (*apply)(struct parse_state *st, size_t argc, char **argv);
	const struct config_field *field;  /* instead of apply */
};

struct directive_table {
	const struct directive *rows;
	size_t n_rows;
};

extern const struct directive_table config_global_directives;
extern const struct directive_table config_database_directives;
extern const struct directive_table config_security_directives;
extern const struct directive_table config_replication_directives;

/* Frees the `moduleload` lines (config_global.c). */
void config_free_modules(struct config *cfg);

/*
 * config_slapd_d.c: the slapd.conf lines an OpenLDAP cn=config directory
 * stands for, in slapd.conf's order, each handed to emit with the slapd.d
 * file and line it came from (emit's error ends the walk and is
 * returned). With check_paths, an olcDbDirectory must exist. Errors, with
 * err naming the file (and line, DN and attribute where there is one):
 * LUMEN_EIO (unreadable), LUMEN_EMALFORMED (bad LDIF, a CRC32 header that
 * does not match), LUMEN_EUNSUPPORTED (an attribute, database type,
 * overlay or file Lumen does not read), LUMEN_ENOTFOUND (no such database
 * directory), LUMEN_ELIMIT, LUMEN_ENOMEM.
 */
typedef int (*config_line_fn)(void *ctx, const char *file, unsigned line, const char *text);
int config_slapd_d_translate(const char *dir, bool check_paths, config_line_fn emit, void *ctx,
			     char *err, size_t errlen);

/* Keeps a line no table knows for the section's last `overlay` (its
 * parser is the server's). LUMEN_ENOMEM. */
int config_overlay_keep_line(struct parse_state *st, size_t argc, char **argv);

/* "FILE:LINE: " + message into st->err. Returns code. */
int config_fail_at(struct parse_state *st, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* "FILE:LINE" of the current line, malloc'd; NULL when out of memory. */
char *config_origin(const struct parse_state *st);
/* Replace *slot with a copy of value. LUMEN_ENOMEM. */
int config_set_string(char **slot, const char *value);
/* Append a copy of value to a string array. LUMEN_ENOMEM. */
int config_push_string(char ***array, size_t *n, const char *value);
/* Free n strings and the array. */
void config_free_strings(char **strings, size_t n);
/*
 * A decimal unsigned number in [min, max], with an optional K/M/G/T
 * suffix (powers of 1024) when allow_suffix is set. LUMEN_EMALFORMED.
 */
int config_parse_unsigned(const char *text, uint64_t min, uint64_t max, bool allow_suffix,
			  uint64_t *out);
/* config_parse_unsigned with the error message for `directive`. */
int config_number_arg(struct parse_state *st, const char *directive, const char *text,
		      uint64_t min, uint64_t max, bool allow_suffix, uint64_t *out);
/* Fills field with the directive's argument, argv[1]. */
int config_apply_field(struct parse_state *st, const struct config_field *field, char **argv);
/* A sizelimit/timelimit value: a count, "unlimited" or -1. LUMEN_EMALFORMED. */
int config_limit_arg(struct parse_state *st, const char *directive, const char *text,
		     long *out);

/* config_database.c: release what a database section holds. */
void config_free_database(struct config_database *db);

/*
 * config_security.c: what needs the final schema (access rules compiled,
 * limits DNs normalized), errors as "FILE:LINE: reason" in err; and the
 * release of the security settings.
 */
int config_finish_security(struct config *cfg, char *err, size_t errlen);
void config_free_limits(struct config_limit *limits, size_t n);
void config_free_security(struct config *cfg);

#endif
