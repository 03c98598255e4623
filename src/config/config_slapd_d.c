/*
 * config_slapd_d.c — reading OpenLDAP's cn=config directory (slapd.d) as
 * the slapd.conf lines it stands for: the files (each one entry in LDIF,
 * its "# CRC32" header checked), the order slapd.conf needs (global,
 * schema, frontend, then each database followed by its overlays), and the
 * olc* attribute tables that turn values into directive lines. The lines
 * go to a caller's function with the file and line they came from, so
 * config.c applies them through the same directive tables as slapd.conf
 * and an error names the slapd.d file, and config_print_slapd_d writes
 * them out.
 *
 * Every olc* attribute is a row: one Lumen reads becomes its directive; a
 * value equal to what OpenLDAP writes for its own default (slaptest writes
 * every default out) is left out, so Lumen's default applies; an attribute
 * without a directive is ignorable, at any value or only at the one that
 * changes nothing. Any other attribute, database type or overlay is an
 * error naming the file, the entry's DN and the attribute.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base64.h"
#include "config_internal.h"
#include "file_read.h"
#include "lumen_error.h"

#define SLAPD_D_HEADER "# AUTO-GENERATED FILE - DO NOT EDIT!! Use ldapmodify.\n"
#define SLAPD_D_CRC "# CRC32 "
/* slapd.d files are small; a larger one is not a cn=config entry. */
#define SLAPD_D_MAX_FILE (16u << 20)

/* ------------------------------------------------------------ one file */

struct olc_value {
	char *name;           /* attribute description as written */
	char *value;          /* decoded, NUL-terminated */
	unsigned line;        /* where it starts in the file */
};

struct olc_entry {
	char *path;
	char *dn;
	struct olc_value *values;
	size_t n_values;
	char *text;           /* the file; names and values point into it */
};

static void olc_entry_free(struct olc_entry *e)
{
	free(e->path);
	free(e->values);
	free(e->text);
	memset(e, 0, sizeof(*e));
}

/* CRC-32 (ISO-HDLC, as zlib and OpenLDAP's back-ldif compute it). */
static uint32_t crc32_of(const char *data, size_t n)
{
	uint32_t crc = 0xffffffffu;
	for (size_t i = 0; i < n; i++) {
		crc ^= (uint8_t)data[i];
		for (int bit = 0; bit < 8; bit++)
			crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
	}
	return ~crc;
}

static int fail(char *err, size_t errlen, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return code;
}

static int read_whole(const char *path, char **out, size_t *len, char *err, size_t errlen)
{
	int rc = file_read_all(path, SLAPD_D_MAX_FILE, out, len);
	if (rc == LUMEN_EIO)
		return fail(err, errlen, rc, "%s: cannot read: %s", path, strerror(errno));
	if (rc == LUMEN_ELIMIT)
		return fail(err, errlen, rc, "%s: larger than %u MiB: not a cn=config entry", path,
			    SLAPD_D_MAX_FILE >> 20);
	return rc;
}

/*
 * The "# CRC32 xxxxxxxx" OpenLDAP writes as the second line covers the
 * rest of the file. A file without the header (written by hand) is
 * accepted, as slapd does. Returns the offset of the LDIF text.
 */
static int check_crc(const char *path, const char *data, size_t len, size_t *ldif_at,
		     char *err, size_t errlen)
{
	size_t header = strlen(SLAPD_D_HEADER);
	*ldif_at = 0;
	if (len < header || memcmp(data, SLAPD_D_HEADER, header) != 0)
		return LUMEN_OK;
	const char *crc_line = data + header;
	const char *end = strchr(crc_line, '\n');
	unsigned long stated;
	char *stop;
	if (end == NULL || strncmp(crc_line, SLAPD_D_CRC, strlen(SLAPD_D_CRC)) != 0 ||
	    (stated = strtoul(crc_line + strlen(SLAPD_D_CRC), &stop, 16), stop != end))
		return fail(err, errlen, LUMEN_EMALFORMED,
			    "%s:2: expected \"# CRC32 <8 hex digits>\" after OpenLDAP's header", path);
	*ldif_at = (size_t)(end + 1 - data);
	uint32_t actual = crc32_of(data + *ldif_at, len - *ldif_at);
	if (actual != (uint32_t)stated)
		return fail(err, errlen, LUMEN_EMALFORMED,
			    "%s: corrupt: its CRC32 header says %08lx, its content has %08x "
			    "(edited by hand, or damaged)", path, stated, actual);
	return LUMEN_OK;
}

/* Append one attribute line (already unfolded) to e. */
static int add_value(struct olc_entry *e, char *line, unsigned number, char *err, size_t errlen)
{
	char *colon = strchr(line, ':');
	if (colon == NULL || colon == line)
		return fail(err, errlen, LUMEN_EMALFORMED, "%s:%u: malformed LDIF: expected "
			    "\"attribute: value\"", e->path, number);
	*colon = '\0';
	char *value = colon + 1;
	bool encoded = *value == ':';
	if (*value == ':' || *value == '<')
		value++;
	if (colon[1] == '<')
		return fail(err, errlen, LUMEN_EUNSUPPORTED, "%s:%u: %s: URL values are not read",
			    e->path, number, line);
	while (*value == ' ')
		value++;
	if (encoded) {
		size_t n;
		if (base64_decode(value, strlen(value), (uint8_t *)value, &n) != LUMEN_OK ||
		    memchr(value, '\0', n) != NULL)
			return fail(err, errlen, LUMEN_EMALFORMED, "%s:%u: %s: invalid base64 value",
				    e->path, number, line);
		value[n] = '\0';
		/* a slapd.conf line is one line: line breaks separate words */
		for (char *c = value; *c != '\0'; c++)
			if (*c == '\n' || *c == '\r')
				*c = ' ';
	}
	if (strcasecmp(line, "dn") == 0) {
		if (e->dn != NULL)
			return fail(err, errlen, LUMEN_EMALFORMED, "%s:%u: a second entry: a "
				    "cn=config file holds one", e->path, number);
		e->dn = value;
		return LUMEN_OK;
	}
	if (e->dn == NULL)
		return fail(err, errlen, LUMEN_EMALFORMED, "%s:%u: malformed LDIF: the entry "
			    "must start with \"dn:\"", e->path, number);
	struct olc_value *bigger = realloc(e->values, (e->n_values + 1) * sizeof(*bigger));
	if (bigger == NULL)
		return LUMEN_ENOMEM;
	e->values = bigger;
	e->values[e->n_values++] = (struct olc_value){ line, value, number };
	return LUMEN_OK;
}

/*
 * Reads one slapd.d file into e: CRC checked, LDIF lines unfolded in place
 * (comments and the trailing blank lines dropped). Errors name the file
 * and line: LUMEN_EIO, LUMEN_EMALFORMED, LUMEN_EUNSUPPORTED, LUMEN_ELIMIT,
 * LUMEN_ENOMEM.
 */
static int olc_entry_read(const char *path, struct olc_entry *e, char *err, size_t errlen)
{
	size_t len = 0, at = 0;
	memset(e, 0, sizeof(*e));
	e->path = strdup(path);
	if (e->path == NULL)
		return LUMEN_ENOMEM;
	int rc = read_whole(path, &e->text, &len, err, errlen);
	if (rc == LUMEN_OK)
		rc = check_crc(path, e->text, len, &at, err, errlen);
	if (rc != LUMEN_OK)
		return rc;
	unsigned number = 1;
	for (const char *p = e->text; p < e->text + at; p++)
		number += *p == '\n';
	/* Unfold: a line starting with a space continues the previous one. */
	char *read = e->text + at, *write = read, *start = NULL;
	unsigned start_line = 0;
	bool comment = false, ended = false;
	while (*read != '\0' || start != NULL) {
		char *eol = strchr(read, '\n');
		size_t n = eol != NULL ? (size_t)(eol - read) : strlen(read);
		if (n > 0 && read[n - 1] == '\r')
			n--;
		if (*read == ' ' && (start != NULL || comment) && n > 0) {
			if (!comment) {
				memmove(write, read + 1, n - 1);
				write += n - 1;
			}
		} else {
			if (start != NULL) {
				*write++ = '\0';
				rc = add_value(e, start, start_line, err, errlen);
				if (rc != LUMEN_OK)
					return rc;
				start = NULL;
			}
			comment = n > 0 && *read == '#';
			if (n == 0 && e->dn != NULL && *read != '\0')
				ended = true;
			else if (n > 0 && !comment && ended)
				return fail(err, errlen, LUMEN_EMALFORMED, "%s:%u: a second entry: a "
					    "cn=config file holds one", path, number);
			else if (n > 0 && !comment) {
				memmove(write, read, n);
				start = write;
				start_line = number;
				write += n;
			}
		}
		if (eol == NULL)
			break;
		read = eol + 1;
		number++;
	}
	if (start != NULL) {
		*write = '\0';
		rc = add_value(e, start, start_line, err, errlen);
		if (rc != LUMEN_OK)
			return rc;
	}
	if (e->dn == NULL)
		return fail(err, errlen, LUMEN_EMALFORMED, "%s: no entry in the file", path);
	return LUMEN_OK;
}

/* ---------------------------------------------------- the olc* tables */

enum olc_form {
	OLC_WORDS = 0,    /* the value is the directive's arguments, as in slapd.conf */
	OLC_QUOTED,       /* the value is one argument: quoted */
	OLC_DIRECTORY,    /* OLC_QUOTED, a directory that must exist (when loading) */
	OLC_JOINED,       /* every value on one line (loglevel replaces, not adds) */
	OLC_FLAG,         /* TRUE: the directive alone; FALSE: nothing */
};

struct olc_row {
	const char *attribute;
	const char *directive;    /* NULL: ignorable */
	enum olc_form form;
	/* With a directive: the value OpenLDAP writes for its own default, left
	 * out so that Lumen's applies. Without: the only value that may be
	 * ignored (NULL: any). */
	const char *openldap_default;
};

/* What OpenLDAP keeps on every entry: never a setting. */
static const struct olc_row operational_rows[] = {
	{ "objectClass", NULL, 0, NULL },          { "structuralObjectClass", NULL, 0, NULL },
	{ "entryUUID", NULL, 0, NULL },            { "entryCSN", NULL, 0, NULL },
	{ "creatorsName", NULL, 0, NULL },         { "createTimestamp", NULL, 0, NULL },
	{ "modifiersName", NULL, 0, NULL },        { "modifyTimestamp", NULL, 0, NULL },
	{ "cn", NULL, 0, NULL },                   { "olcDatabase", NULL, 0, NULL },
	{ "olcOverlay", NULL, 0, NULL },
};

static const struct olc_row global_rows[] = {
	{ "olcArgsFile", "argsfile", OLC_QUOTED, NULL },
	{ "olcPidFile", "pidfile", OLC_QUOTED, NULL },
	{ "olcLogLevel", "loglevel", OLC_JOINED, NULL },
	{ "olcLogFile", "logfile", OLC_QUOTED, NULL },
	{ "olcThreads", "threads", OLC_WORDS, "16" },
	{ "olcListenerThreads", "listener-threads", OLC_WORDS, "1" },
	{ "olcIdleTimeout", "idletimeout", OLC_WORDS, "0" },
	{ "olcWriteTimeout", "writetimeout", OLC_WORDS, "0" },
	{ "olcSizeLimit", "sizelimit", OLC_WORDS, NULL },
	{ "olcTimeLimit", "timelimit", OLC_WORDS, NULL },
	{ "olcSockbufMaxIncoming", "sockbuf_max_incoming", OLC_WORDS, "262143" },
	{ "olcSockbufMaxIncomingAuth", "sockbuf_max_incoming_auth", OLC_WORDS, "16777215" },
	{ "olcConnMaxPending", "conn_max_pending", OLC_WORDS, "100" },
	{ "olcConnMaxPendingAuth", "conn_max_pending_auth", OLC_WORDS, "1000" },
	{ "olcAllows", "allow", OLC_WORDS, NULL },
	{ "olcDisallows", "disallow", OLC_WORDS, NULL },
	{ "olcSecurity", "security", OLC_WORDS, NULL },
	{ "olcAuthzRegexp", "authz-regexp", OLC_WORDS, NULL },
	{ "olcPasswordHash", "password-hash", OLC_WORDS, NULL },
	{ "olcTLSCertificateFile", "TLSCertificateFile", OLC_QUOTED, NULL },
	{ "olcTLSCertificateKeyFile", "TLSCertificateKeyFile", OLC_QUOTED, NULL },
	{ "olcTLSCACertificateFile", "TLSCACertificateFile", OLC_QUOTED, NULL },
	{ "olcTLSCipherSuite", "TLSCipherSuite", OLC_QUOTED, NULL },
	{ "olcTLSProtocolMin", "TLSProtocolMin", OLC_WORDS, "0.0" },
	{ "olcTLSVerifyClient", "TLSVerifyClient", OLC_WORDS, NULL },
	{ "olcServerID", "serverID", OLC_WORDS, NULL },
	{ "olcAuthzPolicy", "authz-policy", OLC_WORDS, "none" },
	{ "olcReferral", "referral", OLC_WORDS, NULL },
	/* slapd's own files and tuning of its own index and thread design */
	{ "olcConfigFile", NULL, 0, NULL },        { "olcConfigDir", NULL, 0, NULL },
	{ "olcToolThreads", NULL, 0, NULL },       { "olcThreadQueues", NULL, 0, NULL },
	{ "olcConcurrency", NULL, 0, NULL },       { "olcMaxFilterDepth", NULL, 0, NULL },
	{ "olcIndexSubstrIfMaxLen", NULL, 0, NULL }, { "olcIndexSubstrIfMinLen", NULL, 0, NULL },
	{ "olcIndexSubstrAnyLen", NULL, 0, NULL }, { "olcIndexSubstrAnyStep", NULL, 0, NULL },
	{ "olcIndexHash64", NULL, 0, NULL },       { "olcIndexIntLen", NULL, 0, NULL },
	/* ignorable at the value that asks for nothing Lumen lacks */
	{ "olcAttributeOptions", NULL, 0, "lang-" },
	{ "olcGentleHUP", NULL, 0, "FALSE" },      { "olcLocalSSF", NULL, 0, "71" },
	{ "olcReadOnly", NULL, 0, "FALSE" },       { "olcReverseLookup", NULL, 0, "FALSE" },
	{ "olcSaslAuxpropsDontUseCopyIgnore", NULL, 0, "FALSE" },
	{ "olcSaslSecProps", NULL, 0, "noplain,noanonymous" },
};

/* What every database entry (frontend included) may say. */
static const struct olc_row database_common_rows[] = {
	{ "olcAccess", "access", OLC_WORDS, NULL },
	{ "olcLimits", "limits", OLC_WORDS, NULL },
	{ "olcSizeLimit", "sizelimit", OLC_WORDS, NULL },
	{ "olcTimeLimit", "timelimit", OLC_WORDS, NULL },
	{ "olcMaxDerefDepth", NULL, 0, NULL },     { "olcMonitoring", NULL, 0, NULL },
	{ "olcAddContentAcl", NULL, 0, "FALSE" },  { "olcLastMod", NULL, 0, "TRUE" },
	{ "olcLastBind", NULL, 0, "FALSE" },       { "olcReadOnly", NULL, 0, "FALSE" },
	{ "olcSyncUseSubentry", NULL, 0, "FALSE" },
};

static const struct olc_row frontend_rows[] = {
	{ "olcPasswordHash", "password-hash", OLC_WORDS, NULL },
	{ "olcSchemaDN", NULL, 0, "cn=Subschema" },
};

static const struct olc_row mdb_rows[] = {
	{ "olcSuffix", "suffix", OLC_QUOTED, NULL },
	{ "olcRootDN", "rootdn", OLC_QUOTED, NULL },
	{ "olcRootPW", "rootpw", OLC_QUOTED, NULL },
	{ "olcDbDirectory", "directory", OLC_DIRECTORY, NULL },
	{ "olcDbIndex", "index", OLC_WORDS, NULL },
	{ "olcDbMaxSize", "maxsize", OLC_WORDS, "10485760" },
	{ "olcDbMaxReaders", "maxreaders", OLC_WORDS, "0" },
	{ "olcDbNoSync", "dbnosync", OLC_FLAG, NULL },
	/* a replica: slaptest writes olcSyncrepl before olcMultiProvider, the
	 * order `multiprovider` needs */
	{ "olcSyncrepl", "syncrepl", OLC_WORDS, NULL },
	{ "olcUpdateRef", "updateref", OLC_WORDS, NULL },
	{ "olcMultiProvider", "multiprovider", OLC_WORDS, "FALSE" },
	{ "olcMirrorMode", "mirrormode", OLC_WORDS, "FALSE" },
	/* LMDB file mode and slapd's own search and transaction tuning */
	{ "olcDbMode", NULL, 0, NULL },            { "olcDbSearchStack", NULL, 0, NULL },
	{ "olcDbRtxnSize", NULL, 0, NULL },        { "olcDbCheckpoint", NULL, 0, NULL },
	{ "olcDbMaxEntrySize", NULL, 0, "0" },
};

static const struct olc_row refint_rows[] = {
	{ "olcRefintAttribute", "refint_attributes", OLC_WORDS, NULL },
	{ "olcRefintNothing", "refint_nothing", OLC_QUOTED, NULL },
	{ "olcRefintModifiersName", "refint_modifiersName", OLC_QUOTED, NULL },
};

/* OpenLDAP's syncprov; olcSpSessionlogSource (a log kept in another
 * database) has no row: Lumen keeps the log in the database itself. */
static const struct olc_row syncprov_rows[] = {
	{ "olcSpCheckpoint", "syncprov-checkpoint", OLC_WORDS, NULL },
	{ "olcSpSessionlog", "syncprov-sessionlog", OLC_WORDS, NULL },
	{ "olcSpNoPresent", "syncprov-nopresent", OLC_WORDS, "FALSE" },
	{ "olcSpReloadHint", "syncprov-reloadhint", OLC_WORDS, "FALSE" },
};

static const struct olc_row memberof_rows[] = {
	{ "olcMemberOfDN", "memberof-dn", OLC_QUOTED, NULL },
	{ "olcMemberOfDangling", "memberof-dangling", OLC_WORDS, NULL },
	{ "olcMemberOfDanglingError", "memberof-dangling-error", OLC_WORDS, NULL },
	{ "olcMemberOfRefInt", "memberof-refint", OLC_WORDS, NULL },
	{ "olcMemberOfGroupOC", "memberof-group-oc", OLC_WORDS, NULL },
	{ "olcMemberOfMemberAD", "memberof-member-ad", OLC_WORDS, NULL },
	{ "olcMemberOfMemberOfAD", "memberof-memberof-ad", OLC_WORDS, NULL },
};

/* The legacy unique_base/attributes/ignore/strict forms are passed on, so
 * the overlay refuses them by name, as it does in a slapd.conf. */
static const struct olc_row unique_rows[] = {
	{ "olcUniqueURI", "unique_uri", OLC_WORDS, NULL },
	{ "olcUniqueBase", "unique_base", OLC_WORDS, NULL },
	{ "olcUniqueAttribute", "unique_attributes", OLC_WORDS, NULL },
	{ "olcUniqueIgnore", "unique_ignore", OLC_WORDS, NULL },
	{ "olcUniqueStrict", "unique_strict", OLC_WORDS, "FALSE" },
};

static const struct olc_row ppolicy_rows[] = {
	{ "olcPPolicyDefault", "ppolicy_default", OLC_QUOTED, NULL },
	{ "olcPPolicyUseLockout", "ppolicy_use_lockout", OLC_FLAG, NULL },
	{ "olcPPolicyHashCleartext", "ppolicy_hash_cleartext", OLC_FLAG, NULL },
	{ "olcPPolicyForwardUpdates", "ppolicy_forward_updates", OLC_FLAG, NULL },
	/* ignorable at the value that asks for nothing Lumen lacks */
	{ "olcPPolicySendNetscapeControls", NULL, 0, "FALSE" },
	{ "olcPPolicyDisableWrite", NULL, 0, "FALSE" },
};

static const struct olc_row lastbind_rows[] = {
	{ "olcLastBindPrecision", "lastbind-precision", OLC_WORDS, NULL },
	{ "olcLastBindForwardUpdates", "lastbind_forward_updates", OLC_FLAG, NULL },
};

static const struct olc_row sssvlv_rows[] = {
	{ "olcSssVlvMax", "sssvlv-max", OLC_WORDS, NULL },
	{ "olcSssVlvMaxKeys", "sssvlv-maxkeys", OLC_WORDS, NULL },
	{ "olcSssVlvMaxPerConn", "sssvlv-maxperconn", OLC_WORDS, NULL },
};

/* Schema entries: definitions as slapd.conf spells them. */
static const struct olc_row schema_rows[] = {
	{ "olcObjectIdentifier", "objectidentifier", OLC_WORDS, NULL },
	{ "olcAttributeTypes", "attributetype", OLC_WORDS, NULL },
	{ "olcObjectClasses", "objectclass", OLC_WORDS, NULL },
};

struct olc_table {
	const struct olc_row *rows;
	size_t n_rows;
};
#define TABLE(rows) { rows, sizeof(rows) / sizeof(rows[0]) }

/* Schema entries Lumen ships its own copy of (schema/NAME.schema): its
 * core.schema also holds what slapd builds into its cn=schema entry. */
static const char *const shipped_schemas[] = { "core", "cosine", "inetorgperson", "nis" };

/* ------------------------------------------------------ translation */

struct translation {
	config_line_fn emit;
	void *ctx;
	bool check_paths;
	char *err;
	size_t errlen;
};

static const struct olc_row *find_row(const struct olc_table *tables, size_t n_tables,
				      const char *attribute)
{
	for (size_t t = 0; t < n_tables; t++)
		for (size_t i = 0; i < tables[t].n_rows; i++)
			if (strcasecmp(tables[t].rows[i].attribute, attribute) == 0)
				return &tables[t].rows[i];
	return NULL;
}

/* "{3}value" → "value": X-ORDERED values carry their position. */
static const char *strip_order(const char *value)
{
	if (value[0] != '{')
		return value;
	const char *p = value + 1;
	if (*p == '-')
		p++;
	while (*p >= '0' && *p <= '9')
		p++;
	return *p == '}' && p > value + 1 ? p + 1 : value;
}

/* directive "value", with \ and " escaped as the lexer expects. */
static char *quoted_line(const char *directive, const char *value)
{
	size_t n = strlen(directive) + 4 + 2 * strlen(value);
	char *line = malloc(n), *w = line;
	if (line == NULL)
		return NULL;
	w += sprintf(w, "%s \"", directive);
	for (const char *r = value; *r != '\0'; r++) {
		if (*r == '"' || *r == '\\')
			*w++ = '\\';
		*w++ = *r;
	}
	strcpy(w, "\"");
	return line;
}

static int emit_line(struct translation *tr, const struct olc_entry *e, unsigned line,
		     const char *text)
{
	return tr->emit(tr->ctx, e->path, line, text);
}

/*
 * Translates every attribute of e through tables. An attribute no row
 * names, or an ignorable one at a value that would change something, is
 * LUMEN_EUNSUPPORTED naming the file, line, DN and attribute.
 */
static int translate_entry(struct translation *tr, const struct olc_entry *e,
			   const struct olc_table *tables, size_t n_tables)
{
	const struct olc_table with_operational[] = { TABLE(operational_rows) };
	for (size_t i = 0; i < e->n_values; i++) {
		const struct olc_value *v = &e->values[i];
		const struct olc_row *row = find_row(tables, n_tables, v->name);
		if (row == NULL && find_row(with_operational, 1, v->name) != NULL)
			continue;
		/* X-ORDERED values (access, limits, authz-regexp, schema) carry
		 * their position; single-argument ones never do. */
		bool single = row != NULL && (row->form == OLC_QUOTED || row->form == OLC_DIRECTORY);
		const char *value = single ? v->value : strip_order(v->value);
		if (row == NULL || (row->directive == NULL && row->openldap_default != NULL &&
				    strcasecmp(value, row->openldap_default) != 0))
			return fail(tr->err, tr->errlen, LUMEN_EUNSUPPORTED,
				    "%s:%u: \"%s\", attribute %s: %s", e->path, v->line, e->dn,
				    v->name, row == NULL ? "not supported by Lumen"
				    : "supported by Lumen only at its default");
		if (row->directive == NULL ||
		    (row->openldap_default != NULL && strcmp(value, row->openldap_default) == 0))
			continue;
		char *line = NULL;
		int rc = LUMEN_OK;
		struct stat sb;
		switch (row->form) {
		case OLC_DIRECTORY:
			if (tr->check_paths) {
				const char *why = stat(value, &sb) != 0 ? strerror(errno)
						  : !S_ISDIR(sb.st_mode) ? "not a directory" : NULL;
				if (why != NULL)
					return fail(tr->err, tr->errlen, LUMEN_ENOTFOUND,
						    "%s:%u: \"%s\", attribute %s: %s: %s", e->path,
						    v->line, e->dn, v->name, value, why);
			}
			/* fall through */
		case OLC_QUOTED:
			line = quoted_line(row->directive, value);
			break;
		case OLC_FLAG:
			if (strcasecmp(value, "TRUE") == 0)
				line = strdup(row->directive);
			else if (strcasecmp(value, "FALSE") != 0)
				return fail(tr->err, tr->errlen, LUMEN_EMALFORMED,
					    "%s:%u: \"%s\", attribute %s: expected TRUE or FALSE",
					    e->path, v->line, e->dn, v->name);
			else
				continue;
			break;
		case OLC_JOINED: {
			/* every value of this attribute, here; the later ones are skipped */
			bool first = true;
			for (size_t j = 0; j < i && first; j++)
				first = strcasecmp(e->values[j].name, v->name) != 0;
			if (!first)
				continue;
			size_t n = strlen(row->directive) + 1;
			for (size_t j = i; j < e->n_values; j++)
				if (strcasecmp(e->values[j].name, v->name) == 0)
					n += strlen(e->values[j].value) + 1;
			line = malloc(n);
			if (line == NULL)
				return LUMEN_ENOMEM;
			strcpy(line, row->directive);
			for (size_t j = i; j < e->n_values; j++)
				if (strcasecmp(e->values[j].name, v->name) == 0)
					strcat(strcat(line, " "), e->values[j].value);
			break;
		}
		case OLC_WORDS:
			if (asprintf(&line, "%s %s", row->directive, value) < 0)
				line = NULL;
			break;
		}
		if (line == NULL)
			return LUMEN_ENOMEM;
		rc = emit_line(tr, e, v->line, line);
		free(line);
		if (rc != LUMEN_OK)
			return rc;
	}
	return LUMEN_OK;
}

/* "olcDatabase={1}mdb" → 1 and "mdb"; "cn={0}core" → 0 and "core". */
static bool parse_ordered_name(const char *rdn_value, long *number, const char **name)
{
	char *end;
	if (rdn_value[0] != '{')
		return false;
	*number = strtol(rdn_value + 1, &end, 10);
	if (end == rdn_value + 1 || *end != '}')
		return false;
	*name = end + 1;
	return true;
}

static int translate_schema(struct translation *tr, const struct olc_entry *e, const char *name)
{
	for (size_t i = 0; i < sizeof(shipped_schemas) / sizeof(shipped_schemas[0]); i++) {
		if (strcasecmp(name, shipped_schemas[i]) != 0)
			continue;
		char line[64];
		snprintf(line, sizeof(line), "include schema/%s.schema", shipped_schemas[i]);
		return emit_line(tr, e, 1, line);
	}
	const struct olc_table tables[] = { TABLE(schema_rows) };
	return translate_entry(tr, e, tables, 1);
}

static int translate_database(struct translation *tr, const struct olc_entry *e, const char *type)
{
	const struct olc_table frontend[] = { TABLE(database_common_rows), TABLE(frontend_rows) };
	const struct olc_table mdb[] = { TABLE(database_common_rows), TABLE(mdb_rows) };
	if (strcasecmp(type, "frontend") == 0)
		return translate_entry(tr, e, frontend, 2);
	if (strcasecmp(type, "config") == 0)
		return LUMEN_OK;   /* cn=config itself: Lumen serves no configuration tree */
	if (strcasecmp(type, "mdb") != 0)
		return fail(tr->err, tr->errlen, LUMEN_EUNSUPPORTED,
			    "%s: \"%s\": database type %s is not supported by Lumen (only mdb; "
			    "Lumen serves cn=Monitor and cn=Subschema itself)", e->path, e->dn, type);
	int rc = emit_line(tr, e, 1, "database mdb");
	return rc == LUMEN_OK ? translate_entry(tr, e, mdb, 2) : rc;
}

/* The overlays Lumen reads from a slapd.d, with their attributes. */
static const struct {
	const char *type;
	struct olc_table table;
} overlay_tables[] = {
	{ "refint", TABLE(refint_rows) },
	{ "syncprov", TABLE(syncprov_rows) },
	{ "memberof", TABLE(memberof_rows) },
	{ "unique", TABLE(unique_rows) },
	{ "ppolicy", TABLE(ppolicy_rows) },
	{ "lastbind", TABLE(lastbind_rows) },
	{ "sssvlv", TABLE(sssvlv_rows) },
};

static int translate_overlay(struct translation *tr, const struct olc_entry *e, const char *type)
{
	for (size_t i = 0; i < sizeof(overlay_tables) / sizeof(overlay_tables[0]); i++) {
		if (strcasecmp(type, overlay_tables[i].type) != 0)
			continue;
		char line[64];
		snprintf(line, sizeof(line), "overlay %s", overlay_tables[i].type);
		int rc = emit_line(tr, e, 1, line);
		return rc == LUMEN_OK ? translate_entry(tr, e, &overlay_tables[i].table, 1) : rc;
	}
	return fail(tr->err, tr->errlen, LUMEN_EUNSUPPORTED,
		    "%s: \"%s\": overlay %s is not supported by Lumen (it reads refint, "
		    "syncprov, memberof, unique, ppolicy, lastbind and sssvlv)", e->path, e->dn,
		    type);
}

/* --------------------------------------------------------- the tree */

/* One file of a directory, and the position its RDN gives it. */
struct listed {
	char *file;
	long number;
	const char *name;   /* into file: after "{N}", before ".ldif" */
};

static int compare_listed(const void *a, const void *b)
{
	const struct listed *x = a, *y = b;
	return x->number < y->number ? -1 : x->number > y->number;
}

/*
 * The files DIR/PREFIX{N}NAME.ldif, sorted by N. Any other *.ldif file is
 * an error (a cn=config entry Lumen does not know), unless `others`
 * accepts its name. LUMEN_EIO, LUMEN_EUNSUPPORTED, LUMEN_ENOMEM.
 */
static int list_ordered(const char *dir, const char *prefix, bool (*others)(const char *),
			struct listed **out, size_t *n_out, char *err, size_t errlen)
{
	*out = NULL;
	*n_out = 0;
	DIR *d = opendir(dir);
	if (d == NULL)
		return errno == ENOENT ? LUMEN_OK
			: fail(err, errlen, LUMEN_EIO, "%s: cannot read: %s", dir, strerror(errno));
	int rc = LUMEN_OK;
	struct dirent *de;
	while (rc == LUMEN_OK && (de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name);
		if (len < 5 || strcmp(de->d_name + len - 5, ".ldif") != 0)
			continue;
		long number;
		const char *name;
		if (strncmp(de->d_name, prefix, strlen(prefix)) != 0 ||
		    !parse_ordered_name(de->d_name + strlen(prefix), &number, &name)) {
			if (others == NULL || !others(de->d_name))
				rc = fail(err, errlen, LUMEN_EUNSUPPORTED, "%s/%s: not a cn=config "
					  "entry Lumen reads", dir, de->d_name);
			continue;
		}
		struct listed *bigger = realloc(*out, (*n_out + 1) * sizeof(*bigger));
		char *file = bigger != NULL ? strdup(de->d_name) : NULL;
		if (bigger != NULL)
			*out = bigger;
		if (file == NULL) {
			rc = LUMEN_ENOMEM;
			break;
		}
		file[len - 5] = '\0';
		(*out)[(*n_out)++] = (struct listed){ file, number, file + (name - de->d_name) };
	}
	closedir(d);
	if (rc == LUMEN_OK && *n_out > 1)
		qsort(*out, *n_out, sizeof(**out), compare_listed);
	return rc;
}

static void listed_free(struct listed *l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(l[i].file);
	free(l);
}

/* Reads DIR/FILE.ldif and hands it to translate with name. */
static int translate_file(struct translation *tr, const char *dir, const char *file,
			  const char *name,
			  int (*translate)(struct translation *, const struct olc_entry *,
					   const char *))
{
	struct olc_entry e;
	char *path;
	if (asprintf(&path, "%s/%s.ldif", dir, file) < 0)
		return LUMEN_ENOMEM;
	int rc = olc_entry_read(path, &e, tr->err, tr->errlen);
	if (rc == LUMEN_OK && translate != NULL)
		rc = translate(tr, &e, name);
	olc_entry_free(&e);
	free(path);
	return rc;
}

static int translate_global(struct translation *tr, const struct olc_entry *e, const char *name)
{
	(void)name;
	const struct olc_table tables[] = { TABLE(global_rows) };
	return translate_entry(tr, e, tables, 1);
}

static bool top_level_other(const char *file)
{
	return strcmp(file, "cn=schema.ldif") == 0 || strncmp(file, "cn=module{", 10) == 0;
}

static bool any_other(const char *file)
{
	(void)file;
	return true;
}

/* Each database, then the overlays in its directory. */
static int translate_databases(struct translation *tr, const char *top)
{
	struct listed *dbs;
	size_t n_dbs;
	int rc = list_ordered(top, "olcDatabase=", top_level_other, &dbs, &n_dbs, tr->err,
			      tr->errlen);
	for (size_t i = 0; rc == LUMEN_OK && i < n_dbs; i++) {
		rc = translate_file(tr, top, dbs[i].file, dbs[i].name, translate_database);
		char *sub;
		if (rc != LUMEN_OK || asprintf(&sub, "%s/%s", top, dbs[i].file) < 0) {
			rc = rc != LUMEN_OK ? rc : LUMEN_ENOMEM;
			break;
		}
		struct listed *overlays;
		size_t n_overlays;
		rc = list_ordered(sub, "olcOverlay=", NULL, &overlays, &n_overlays, tr->err,
				  tr->errlen);
		for (size_t j = 0; rc == LUMEN_OK && j < n_overlays; j++)
			rc = translate_file(tr, sub, overlays[j].file, overlays[j].name,
					    translate_overlay);
		listed_free(overlays, n_overlays);
		free(sub);
	}
	listed_free(dbs, n_dbs);
	return rc;
}

int config_slapd_d_translate(const char *dir, bool check_paths, config_line_fn emit, void *ctx,
			     char *err, size_t errlen)
{
	struct translation tr = { emit, ctx, check_paths, err, errlen };
	struct listed *schemas = NULL, *modules = NULL;
	size_t n_schemas = 0, n_modules = 0;
	char *top = NULL, *schema_dir = NULL;
	int rc = translate_file(&tr, dir, "cn=config", NULL, translate_global);
	if (rc != LUMEN_OK)
		goto done;
	if (asprintf(&top, "%s/cn=config", dir) < 0 ||
	    asprintf(&schema_dir, "%s/cn=schema", top) < 0) {
		rc = LUMEN_ENOMEM;
		goto done;
	}
	/* cn=schema holds slapd's built-in schema (Lumen's is in its own
	 * files): read, so a corrupt one is found, and not translated; a tree
	 * written by hand may go without it. */
	char *builtin;
	if (asprintf(&builtin, "%s/cn=schema.ldif", top) < 0) {
		rc = LUMEN_ENOMEM;
		goto done;
	}
	if (access(builtin, F_OK) == 0)
		rc = translate_file(&tr, top, "cn=schema", NULL, NULL);
	free(builtin);
	if (rc == LUMEN_OK)
		rc = list_ordered(schema_dir, "cn=", NULL, &schemas, &n_schemas, err, errlen);
	for (size_t i = 0; rc == LUMEN_OK && i < n_schemas; i++)
		rc = translate_file(&tr, schema_dir, schemas[i].file, schemas[i].name,
				    translate_schema);
	/* Modules: the backends and overlays Lumen has are built in. */
	if (rc == LUMEN_OK)
		rc = list_ordered(top, "cn=module", any_other, &modules, &n_modules, err, errlen);
	for (size_t i = 0; rc == LUMEN_OK && i < n_modules; i++)
		rc = translate_file(&tr, top, modules[i].file, NULL, NULL);
	if (rc == LUMEN_OK)
		rc = translate_databases(&tr, top);
done:
	listed_free(schemas, n_schemas);
	listed_free(modules, n_modules);
	free(top);
	free(schema_dir);
	return rc;
}
