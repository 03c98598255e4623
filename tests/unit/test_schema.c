/* test_schema.c — the .schema parser, finalize (inheritance, references),
 * the shipped schema files, and attribute descriptions. Run from the
 * repository root (the shipped files are read from schema/). */
#include <check.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lumen_error.h"
#include "schema.h"

static const char *const shipped[] = {
	"schema/core.schema", "schema/cosine.schema", "schema/inetorgperson.schema",
	"schema/nis.schema", "schema/lumen.schema",
};

static struct schema *full;

static void load_full(void)
{
	char err[256] = "";
	ck_assert_int_eq(schema_create(&full), LUMEN_OK);
	for (size_t i = 0; i < sizeof(shipped) / sizeof(shipped[0]); i++)
		ck_assert_msg(schema_load_file(full, shipped[i], err, sizeof(err)) == LUMEN_OK,
			      "%s", err);
	ck_assert_msg(schema_finalize(full, err, sizeof(err)) == LUMEN_OK, "%s", err);
}

static void free_full(void)
{
	schema_free(full);
	full = NULL;
}

static const struct attribute_type *type(const char *name)
{
	const struct attribute_type *at = schema_attribute_type(full, name, strlen(name));
	ck_assert_msg(at != NULL, "type %s", name);
	return at;
}

static const struct object_class *class(const char *name)
{
	const struct object_class *oc = schema_object_class(full, name, strlen(name));
	ck_assert_msg(oc != NULL, "class %s", name);
	return oc;
}

static bool has_type(const struct attribute_type *const *list, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (list[i] == type(name))
			return true;
	return false;
}

/* ------------------------------------------------------- shipped files */

START_TEST(shipped_files_load)
{
	ck_assert_uint_ge(schema_attribute_type_count(full), 150);
	ck_assert_uint_ge(schema_object_class_count(full), 45);
	for (size_t i = 0; i < schema_attribute_type_count(full); i++) {
		const struct attribute_type *at = schema_attribute_type_at(full, i);
		ck_assert_uint_eq(at->index, i);
		ck_assert_msg(at->syntax != NULL, "%s has a syntax", attribute_type_name(at));
		ck_assert(at->definition != NULL && at->definition[0] == '(');
		ck_assert(schema_attribute_type(full, at->oid, strlen(at->oid)) == at);
	}
	for (size_t i = 0; i < schema_object_class_count(full); i++)
		ck_assert_uint_eq(schema_object_class_at(full, i)->index, i);
	ck_assert(schema_attribute_type_at(full, schema_attribute_type_count(full)) == NULL);
}
END_TEST

/* Writes the whole of core.schema into a FIFO, then closes it. */
static void *feed_core_schema(void *path)
{
	FILE *in = fopen("schema/core.schema", "rb");
	FILE *out = fopen(path, "wb");
	int c;
	while (in != NULL && out != NULL && (c = fgetc(in)) != EOF)
		fputc(c, out);
	if (in != NULL)
		fclose(in);
	if (out != NULL)
		fclose(out);
	return NULL;
}

/* A schema file that is a pipe (include /dev/stdin, a process
 * substitution) is read to its end: a seek cannot size it. */
START_TEST(load_file_from_a_pipe)
{
	char dir_path[] = "/tmp/lumen_schema_pipe_XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir_path));
	char fifo[64];
	snprintf(fifo, sizeof(fifo), "%s/core", dir_path);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	signal(SIGPIPE, SIG_IGN);      /* a reader that gives up fails the check, not the run */
	pthread_t feeder;
	ck_assert_int_eq(pthread_create(&feeder, NULL, feed_core_schema, fifo), 0);
	struct schema *s;
	char err[256] = "";
	ck_assert_int_eq(schema_create(&s), LUMEN_OK);
	int rc = schema_load_file(s, fifo, err, sizeof(err));
	pthread_join(feeder, NULL);
	ck_assert_msg(rc == LUMEN_OK, "%s", err);
	ck_assert_msg(schema_finalize(s, err, sizeof(err)) == LUMEN_OK, "%s", err);
	ck_assert(schema_attribute_type(s, "userPassword", 12) != NULL);
	schema_free(s);
	unlink(fifo);
	rmdir(dir_path);
}
END_TEST

START_TEST(lumen_schema_after_core_alone)
{
	struct schema *s;
	char err[256];
	ck_assert_int_eq(schema_create(&s), LUMEN_OK);
	ck_assert_int_eq(schema_load_file(s, "schema/core.schema", err, sizeof(err)), LUMEN_OK);
	ck_assert_msg(schema_load_file(s, "schema/lumen.schema", err, sizeof(err)) == LUMEN_OK,
		      "%s", err);
	ck_assert_msg(schema_finalize(s, err, sizeof(err)) == LUMEN_OK, "%s", err);
	ck_assert(schema_attribute_type(s, "entryUUID", 9) != NULL);
	schema_free(s);
}
END_TEST

START_TEST(inheritance_through_sup)
{
	const struct attribute_type *cn = type("cn");
	ck_assert(cn == type("commonName") && cn == type("CN") && cn == type("2.5.4.3"));
	ck_assert(type("cOMMONnAME") == cn && type("telephonenumber") == type("telephoneNumber"));
	/* only letters fold: bytes that differ in bit 0x20 but are not letters
	 * name nothing ('@' is not '`', '\r' is not '-') */
	ck_assert_ptr_null(schema_attribute_type(full, "c@", 2));
	ck_assert_ptr_null(schema_attribute_type(full, "c`", 2));
	ck_assert_ptr_null(schema_attribute_type(full, "2.5\x0e" "4.3", 7));
	ck_assert_ptr_null(schema_attribute_type(full, "cn\0", 3));
	ck_assert(cn->sup == type("name"));
	ck_assert_str_eq(cn->equality->name, "caseIgnoreMatch");
	ck_assert_str_eq(cn->substr->name, "caseIgnoreSubstringsMatch");
	ck_assert_str_eq(cn->syntax->oid, "1.3.6.1.4.1.1466.115.121.1.15");
	ck_assert_str_eq(attribute_type_name(cn), "cn");
	ck_assert(attribute_type_is_subtype(cn, type("name")));
	ck_assert(!attribute_type_is_subtype(type("name"), cn));
	/* c overrides SYNTAX but inherits the rules */
	ck_assert_str_eq(type("c")->syntax->oid, "1.3.6.1.4.1.1466.115.121.1.11");
	ck_assert_str_eq(type("c")->equality->name, "caseIgnoreMatch");
	ck_assert(type("c")->single_value);
	ck_assert_str_eq(type("member")->equality->name, "distinguishedNameMatch");
	ck_assert_uint_eq(type("mail")->syntax_length, 256);
	ck_assert_str_eq(type("uidNumber")->ordering->name, "integerOrderingMatch");
}
END_TEST

START_TEST(operational_attributes)
{
	const struct attribute_type *ts = type("modifyTimestamp");
	ck_assert(ts->no_user_modification && ts->single_value);
	ck_assert_int_eq(ts->usage, ATTRIBUTE_DIRECTORY_OPERATION);
	ck_assert(attribute_type_is_operational(ts));
	ck_assert(!attribute_type_is_operational(type("cn")));
	ck_assert_int_eq(type("namingContexts")->usage, ATTRIBUTE_DSA_OPERATION);
	ck_assert_int_eq(type("supportedControl")->usage, ATTRIBUTE_DSA_OPERATION);
	ck_assert_str_eq(type("entryUUID")->equality->name, "uuidMatch");
	ck_assert_str_eq(type("attributeTypes")->equality->name,
			 "objectIdentifierFirstComponentMatch");
	static const char *const names[] = {
		"entryCSN", "createTimestamp", "creatorsName", "modifiersName",
		"structuralObjectClass", "hasSubordinates", "numSubordinates", "entryDN",
		"subschemaSubentry", "contextCSN", "objectClasses", "ldapSyntaxes",
		"matchingRules", "matchingRuleUse", "supportedExtension", "supportedFeatures",
		"supportedLDAPVersion", "supportedSASLMechanisms", "vendorName", "vendorVersion",
		"altServer",
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		ck_assert_msg(attribute_type_is_operational(type(names[i])), "%s", names[i]);
}
END_TEST

START_TEST(object_class_must_may)
{
	const struct object_class *iop = class("inetOrgPerson");
	ck_assert_int_eq(iop->kind, OBJECT_CLASS_STRUCTURAL);
	ck_assert(has_type(iop->must, iop->n_must, "sn"));
	ck_assert(has_type(iop->must, iop->n_must, "cn"));
	ck_assert(has_type(iop->must, iop->n_must, "objectClass"));
	ck_assert_uint_eq(iop->n_must, 3);
	ck_assert(has_type(iop->may, iop->n_may, "mail"));
	ck_assert(has_type(iop->may, iop->n_may, "title"));         /* organizationalPerson */
	ck_assert(has_type(iop->may, iop->n_may, "userPassword"));  /* person */
	ck_assert(!has_type(iop->may, iop->n_may, "cn"));
	for (size_t i = 0; i < iop->n_may; i++)     /* telephoneNumber is in two sups */
		for (size_t j = i + 1; j < iop->n_may; j++)
			ck_assert(iop->may[i] != iop->may[j]);
	ck_assert(object_class_is_subclass(iop, class("person")));
	ck_assert(object_class_is_subclass(iop, class("top")));
	ck_assert(!object_class_is_subclass(class("person"), iop));
	ck_assert_int_eq(class("top")->kind, OBJECT_CLASS_ABSTRACT);
	ck_assert_int_eq(class("posixAccount")->kind, OBJECT_CLASS_AUXILIARY);
	ck_assert(has_type(class("posixAccount")->must, class("posixAccount")->n_must,
			   "homeDirectory"));
	ck_assert_str_eq(object_class_name(class("2.5.6.6")), "person");
}
END_TEST

START_TEST(definitions_are_canonical)
{
	ck_assert_str_eq(type("cn")->definition, "( 2.5.4.3 NAME ( 'cn' 'commonName' ) SUP name )");
	/* macros expanded */
	ck_assert_str_eq(type("uidNumber")->definition,
			 "( 1.3.6.1.1.1.1.0 NAME 'uidNumber' DESC 'an integer uniquely "
			 "identifying a user in an administrative domain' EQUALITY integerMatch "
			 "ORDERING integerOrderingMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.27 "
			 "SINGLE-VALUE )");
	ck_assert_str_eq(class("person")->definition,
			 "( 2.5.6.6 NAME 'person' SUP top STRUCTURAL MUST ( sn $ cn ) MAY ( "
			 "userPassword $ telephoneNumber $ seeAlso $ description ) )");
	ck_assert(strstr(type("userCertificate")->definition, "SYNTAX 1.3.6.1.4.1.1466.115.121.1.8 ")
		  != NULL);
}
END_TEST

/* -------------------------------------------------- parser, table-driven */

static const char prelude[] =
	"attributetype ( 1.1.1 NAME 'base' EQUALITY caseIgnoreMatch\n"
	"  SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 )\n"
	"objectclass ( 1.1.2 NAME 'top' ABSTRACT MUST base )\n";

static const struct {
	const char *name;
	const char *text;       /* loaded after the prelude, as "t.schema" */
	int load_rc;
	int finalize_rc;        /* checked when load_rc == LUMEN_OK */
	const char *err;        /* substring of the error message */
} parse_cases[] = {
	{ "ok", "attributetype ( 1.2 NAME 'x' SUP base )\n", LUMEN_OK, LUMEN_OK, NULL },
	{ "comment and blank lines", "# c\n\nattributetype ( 1.2\n# inside\n  NAME 'x'\n\n"
	  "  SUP base )\n", LUMEN_OK, LUMEN_OK, NULL },
	{ "unknown keyword", "attribute ( 1.2 NAME 'x' SUP base )\n", LUMEN_EMALFORMED,
	  0, "t.schema:1: unknown keyword 'attribute'" },
	{ "unterminated paren", "attributetype ( 1.2 NAME 'x' SUP base\n", LUMEN_EMALFORMED,
	  0, "t.schema:1: unterminated '('" },
	{ "unterminated list", "objectclass ( 1.3 NAME 'o' MAY ( base $\n", LUMEN_EMALFORMED,
	  0, "unterminated '('" },
	{ "unterminated quote", "attributetype ( 1.2 NAME 'x SUP base )\n", LUMEN_EMALFORMED,
	  0, "unterminated quoted string" },
	{ "missing open paren", "attributetype 1.2 NAME 'x' SUP base )\n", LUMEN_EMALFORMED,
	  0, "'(' expected" },
	/* fuzz_schema: the OID was looked for in a token with no text (UBSan). */
	{ "input ends after open paren", "attributetype (", LUMEN_EMALFORMED, 0,
	  "t.schema:1: OID expected" },
	{ "class ends after open paren", "objectclass (", LUMEN_EMALFORMED, 0, "OID expected" },
	{ "bad oid", "attributetype ( foo NAME 'x' SUP base )\n", LUMEN_EMALFORMED, 0,
	  "neither an OID nor a known objectidentifier" },
	{ "unknown field", "attributetype ( 1.2 NAME 'x' SUP base FROB )\n", LUMEN_EMALFORMED,
	  0, "unknown keyword 'FROB'" },
	{ "field twice", "attributetype ( 1.2 NAME 'x' SUP base SUP base )\n",
	  LUMEN_EMALFORMED, 0, "'SUP' given twice" },
	{ "text after close", "attributetype ( 1.2 NAME 'x' SUP base ) junk\n",
	  LUMEN_EMALFORMED, 0, "after ')'" },
	{ "bad name", "attributetype ( 1.2 NAME '9x' SUP base )\n", LUMEN_EMALFORMED, 0,
	  "bad NAME '9x'" },
	{ "neither sup nor syntax", "attributetype ( 1.2 NAME 'x' )\n", LUMEN_EMALFORMED, 0,
	  "neither SUP nor SYNTAX" },
	{ "bad usage", "attributetype ( 1.2 NAME 'x' SUP base USAGE frob )\n",
	  LUMEN_EMALFORMED, 0, "unknown usage" },
	{ "nousermod needs operational", "attributetype ( 1.2 NAME 'x' SUP base "
	  "NO-USER-MODIFICATION )\n", LUMEN_EMALFORMED, 0, "NO-USER-MODIFICATION" },
	{ "bad syntax length", "attributetype ( 1.2 NAME 'x' SYNTAX "
	  "1.3.6.1.4.1.1466.115.121.1.15{12x} )\n", LUMEN_EMALFORMED, 0, "bad length" },
	{ "continuation first", "  attributetype ( 1.2 NAME 'x' SUP base )\n",
	  LUMEN_EMALFORMED, 0, "t.schema:1: continuation line outside a statement" },
	{ "oc list without dollar", "objectclass ( 1.3 NAME 'o' MAY ( base base ) )\n",
	  LUMEN_EMALFORMED, 0, "'$' or ')' expected" },
	{ "duplicate oid", "attributetype ( 1.1.1 NAME 'other' SUP base )\n", LUMEN_EEXIST, 0,
	  "t.schema:1: duplicate attribute type OID 1.1.1" },
	{ "duplicate name", "\nattributetype ( 1.2 NAME 'BASE' SUP base )\n", LUMEN_EEXIST, 0,
	  "t.schema:2: duplicate attribute type name 'BASE'" },
	{ "duplicate class", "objectclass ( 1.3 NAME 'TOP' )\n", LUMEN_EEXIST, 0,
	  "duplicate object class name 'TOP'" },
	{ "duplicate macro", "objectidentifier m 1.5\nobjectidentifier M 1.6\n", LUMEN_EEXIST,
	  0, "t.schema:2: duplicate objectidentifier 'M'" },
	{ "unknown macro", "attributetype ( nomacro:1 NAME 'x' SUP base )\n", LUMEN_EMALFORMED,
	  0, "'nomacro:1' is neither" },
	{ "macro ok", "objectidentifier m 1.5\nobjectidentifier mm m:7\n"
	  "attributetype ( mm:1 NAME 'x' SUP base )\n", LUMEN_OK, LUMEN_OK, NULL },
	{ "dangling sup", "\n\nattributetype ( 1.2 NAME 'x' SUP nothere )\n", LUMEN_OK,
	  LUMEN_ENOTFOUND, "t.schema:3: attribute type x: unknown SUP 'nothere'" },
	{ "unknown equality", "attributetype ( 1.2 NAME 'x' SUP base EQUALITY frobMatch )\n",
	  LUMEN_OK, LUMEN_ENOTFOUND, "unknown EQUALITY rule 'frobMatch'" },
	{ "wrong rule kind", "attributetype ( 1.2 NAME 'x' SUP base "
	  "ORDERING caseIgnoreMatch )\n", LUMEN_OK, LUMEN_EMALFORMED, "is not a ORDERING rule" },
	{ "unknown syntax", "attributetype ( 1.2 NAME 'x' SYNTAX 1.2.3.4 )\n", LUMEN_OK,
	  LUMEN_ENOTFOUND, "unknown SYNTAX 1.2.3.4" },
	{ "sup cycle", "attributetype ( 1.2 NAME 'x' SUP y )\n"
	  "attributetype ( 1.3 NAME 'y' SUP x )\n", LUMEN_OK, LUMEN_EMALFORMED, "SUP cycle" },
	{ "usage differs from sup", "attributetype ( 1.2 NAME 'x' SUP base "
	  "USAGE directoryOperation )\n", LUMEN_OK, LUMEN_EMALFORMED, "USAGE differs" },
	{ "dangling must", "objectclass ( 1.3 NAME 'o' SUP top MUST nothere )\n", LUMEN_OK,
	  LUMEN_ENOTFOUND, "t.schema:1: object class o: unknown MUST attribute 'nothere'" },
	{ "dangling may", "objectclass ( 1.3 NAME 'o' SUP top MAY ( base $ nope ) )\n",
	  LUMEN_OK, LUMEN_ENOTFOUND, "unknown MAY attribute 'nope'" },
	{ "dangling class sup", "objectclass ( 1.3 NAME 'o' SUP nope )\n", LUMEN_OK,
	  LUMEN_ENOTFOUND, "object class o: unknown SUP 'nope'" },
	{ "class sup cycle", "objectclass ( 1.3 NAME 'a' SUP b )\n"
	  "objectclass ( 1.4 NAME 'b' SUP a )\n", LUMEN_OK, LUMEN_EMALFORMED, "SUP cycle" },
};

START_TEST(parser_cases)
{
	struct schema *s;
	char err[256] = "";
	int rc;

	ck_assert_int_eq(schema_create(&s), LUMEN_OK);
	ck_assert_int_eq(schema_load_text(s, "prelude", prelude, err, sizeof(err)), LUMEN_OK);
	rc = schema_load_text(s, "t.schema", parse_cases[_i].text, err, sizeof(err));
	ck_assert_msg(rc == parse_cases[_i].load_rc, "%s: load rc %d (%s)", parse_cases[_i].name,
		      rc, err);
	if (rc == LUMEN_OK) {
		rc = schema_finalize(s, err, sizeof(err));
		ck_assert_msg(rc == parse_cases[_i].finalize_rc, "%s: finalize rc %d (%s)",
			      parse_cases[_i].name, rc, err);
	}
	if (parse_cases[_i].err != NULL)
		ck_assert_msg(strstr(err, parse_cases[_i].err) != NULL, "%s: error \"%s\"",
			      parse_cases[_i].name, err);
	schema_free(s);
}
END_TEST

START_TEST(extensions_and_quoting_kept)
{
	struct schema *s;
	char err[256];
	ck_assert_int_eq(schema_create(&s), LUMEN_OK);
	ck_assert_int_eq(schema_load_text(s, "p", prelude, err, sizeof(err)), LUMEN_OK);
	ck_assert_int_eq(schema_load_text(s, "x",
		"attributeType ( 1.2 NAME 'x' DESC 'it\\27s a \\5Cthing' SUP base "
		"X-ORIGIN ( 'RFC 1' 'RFC 2' ) X-ORDERED 'VALUES' )\n", err, sizeof(err)),
		LUMEN_OK);
	ck_assert_int_eq(schema_finalize(s, err, sizeof(err)), LUMEN_OK);
	const struct attribute_type *x = schema_attribute_type(s, "x", 1);
	ck_assert_str_eq(x->description, "it's a \\thing");
	ck_assert_str_eq(x->definition, "( 1.2 NAME 'x' DESC 'it\\27s a \\5Cthing' SUP base "
			 "X-ORIGIN ( 'RFC 1' 'RFC 2' ) X-ORDERED 'VALUES' )");
	ck_assert_int_eq(schema_load_text(s, "late", "", err, sizeof(err)), LUMEN_EINVAL);
	ck_assert_int_eq(schema_finalize(s, err, sizeof(err)), LUMEN_EINVAL);
	schema_free(s);
}
END_TEST

START_TEST(load_file_errors)
{
	struct schema *s;
	char err[256];
	char path[] = "/tmp/lumen_schema_XXXXXX";
	char path2[] = "/tmp/lumen_schema_big_XXXXXX";
	ck_assert_int_eq(schema_create(&s), LUMEN_OK);
	ck_assert_int_eq(schema_load_file(s, "/nonexistent/x.schema", err, sizeof(err)),
			 LUMEN_EIO);
	ck_assert(strstr(err, "/nonexistent/x.schema") != NULL);

	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "# ok\n\nobjectclass ( 1.3 NAME 'o' FROB )\n", 39), 39);
	close(fd);
	ck_assert_int_eq(schema_load_file(s, path, err, sizeof(err)), LUMEN_EMALFORMED);
	char want[64];
	snprintf(want, sizeof(want), "%s:3: unknown keyword 'FROB'", path);
	ck_assert_msg(strstr(err, want) != NULL, "%s", err);
	unlink(path);

	/* Past the 16 MiB bound: refused by name, not read in whole. */
	fd = mkstemp(path2);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (16 << 20) + 1), 0);     /* sparse: cheap */
	close(fd);
	ck_assert_int_eq(schema_load_file(s, path2, err, sizeof(err)), LUMEN_ELIMIT);
	ck_assert_msg(strstr(err, "larger than 16 MiB") != NULL && strstr(err, path2) != NULL,
		      "%s", err);
	unlink(path2);
	schema_free(s);
}
END_TEST

/* ------------------------------------------------ attribute descriptions */

static struct attribute_description ad(const char *text, int want_rc)
{
	struct attribute_description d;
	int rc = attribute_description_parse(full, text, strlen(text), &d);
	ck_assert_msg(rc == want_rc, "%s: rc %d", text, rc);
	return d;
}

START_TEST(description_parse)
{
	struct attribute_description d = ad("cn;lang-de;binary", LUMEN_OK);
	ck_assert(d.type == type("cn"));
	ck_assert(ber_view_eq_str(d.options, "lang-de;binary"));
	d = ad("2.5.4.3", LUMEN_OK);
	ck_assert(d.type == type("cn") && d.options.len == 0);
	d = ad("nosuchattr", LUMEN_ENOTFOUND);
	ck_assert(d.type == NULL);
	ad("", LUMEN_EMALFORMED);
	ad("cn;", LUMEN_EMALFORMED);
	ad("cn;;x", LUMEN_EMALFORMED);
	ad(";x", LUMEN_EMALFORMED);
	ad("c n", LUMEN_EMALFORMED);
	ad("cn;la_ng", LUMEN_EMALFORMED);
}
END_TEST

/* A schema of its own holding `x-memo` under the given OID. */
static struct schema *schema_with_memo_type(const char *oid)
{
	struct schema *s;
	char err[256] = "", text[256];
	snprintf(text, sizeof(text),
		 "attributetype ( %s NAME 'x-memo' SUP base )\n"
		 "attributetype ( %s.1 NAME 'x-a-name-longer-than-the-memo-keeps-of-any-name' SUP base )\n"
		 "objectclass ( %s.2 NAME 'x-memo-class' SUP top AUXILIARY )\n",
		 oid, oid, oid);
	ck_assert_int_eq(schema_create(&s), LUMEN_OK);
	ck_assert_int_eq(schema_load_text(s, "prelude", prelude, err, sizeof(err)), LUMEN_OK);
	ck_assert_msg(schema_load_text(s, "memo", text, err, sizeof(err)) == LUMEN_OK, "%s", err);
	ck_assert_msg(schema_finalize(s, err, sizeof(err)) == LUMEN_OK, "%s", err);
	return s;
}

static const char *parsed_oid(const struct schema *s, const char *text)
{
	struct attribute_description d;
	int rc = attribute_description_parse(s, text, strlen(text), &d);
	ck_assert_msg(rc == LUMEN_OK, "%s: rc %d", text, rc);
	return d.type->oid;
}

/*
 * attribute_description_parse keeps what each thread parsed last, by its
 * bytes: a name parsed again must give what the slow path gives, in the
 * schema it is parsed against (two schemas, and a schema freed and made
 * again, may hold the same name for different types), with options that
 * point into the text parsed now.
 */
START_TEST(description_memo)
{
	struct schema *one = schema_with_memo_type("1.9.1"), *two = schema_with_memo_type("1.9.2");
	for (int round = 0; round < 3; round++) {
		ck_assert_str_eq(parsed_oid(one, "x-memo"), "1.9.1");
		ck_assert_str_eq(parsed_oid(two, "x-memo"), "1.9.2");
		ck_assert_str_eq(parsed_oid(two, "X-MEMO"), "1.9.2");
		ck_assert_str_eq(schema_object_class(one, "x-memo-class", 12)->oid, "1.9.1.2");
		ck_assert_str_eq(schema_object_class(two, "x-memo-class", 12)->oid, "1.9.2.2");
	}
	const char *long_name = "x-a-name-longer-than-the-memo-keeps-of-any-name;lang-de";
	ck_assert_str_eq(parsed_oid(one, long_name), "1.9.1.1");
	ck_assert_str_eq(parsed_oid(one, long_name), "1.9.1.1");
	schema_free(one);
	for (int round = 0; round < 3; round++) {
		struct schema *again = schema_with_memo_type("1.9.3");
		ck_assert_str_eq(parsed_oid(again, "x-memo"), "1.9.3");
		schema_free(again);
	}
	schema_free(two);

	char first[] = "cn;lang-de", second[] = "cn;lang-de";
	struct attribute_description d = ad(first, LUMEN_OK);
	ck_assert_ptr_eq(d.options.ptr, (const uint8_t *)first + 3);
	d = ad(second, LUMEN_OK);
	ck_assert(d.type == type("cn"));
	ck_assert_ptr_eq(d.options.ptr, (const uint8_t *)second + 3);
	ck_assert_uint_eq(d.options.len, 7);
	d = ad("cn", LUMEN_OK);
	ck_assert(d.options.ptr == NULL && d.options.len == 0);
	/* A description kept with options is no type name. */
	ck_assert_ptr_null(schema_attribute_type(full, first, strlen(first)));
	ck_assert(schema_attribute_type(full, "CN", 2) == type("cn"));
	for (int round = 0; round < 2; round++) {
		ck_assert(schema_object_class(full, "person", 6) == class("Person"));
		ck_assert_ptr_null(schema_object_class(full, "cn", 2));   /* a type, not a class */
		ck_assert_ptr_null(schema_attribute_type(full, "person", 6));
	}
	/* Failures are never kept; a name parsed well before still is. */
	for (int round = 0; round < 2; round++) {
		ad("nosuchattr", LUMEN_ENOTFOUND);
		ad("cn;", LUMEN_EMALFORMED);
		ad("cx;n", LUMEN_ENOTFOUND);
		ck_assert(ad("cn", LUMEN_OK).type == type("cn"));
	}
}
END_TEST

static struct attribute_description ad_at(const struct schema *s, size_t position,
					  const char *text, int want_rc)
{
	struct attribute_description d;
	int rc = attribute_description_parse_at(s, position, text, strlen(text), &d);
	ck_assert_msg(rc == want_rc, "%s at %zu: rc %d", text, position, rc);
	return d;
}

/*
 * attribute_description_parse_at keeps the last description at each
 * position: a different name, a shorter one, other options, another schema
 * or a failure at that position must each give what a fresh parse gives.
 */
START_TEST(description_by_position)
{
	for (size_t position = 0; position < 70; position += 23) {
		for (int round = 0; round < 2; round++) {
			ck_assert(ad_at(full, position, "cn", LUMEN_OK).type == type("cn"));
			ck_assert(ad_at(full, position, "c", LUMEN_OK).type == type("c"));
			ck_assert(ad_at(full, position, "sn", LUMEN_OK).type == type("sn"));
			ck_assert(ad_at(full, position, "SN", LUMEN_OK).type == type("sn"));
		}
		char first[] = "cn;lang-de", second[] = "cn;lang-en";
		struct attribute_description d = ad_at(full, position, first, LUMEN_OK);
		ck_assert_ptr_eq(d.options.ptr, (const uint8_t *)first + 3);
		d = ad_at(full, position, first, LUMEN_OK);
		ck_assert_ptr_eq(d.options.ptr, (const uint8_t *)first + 3);
		ck_assert_uint_eq(d.options.len, 7);
		d = ad_at(full, position, second, LUMEN_OK);
		ck_assert(d.type == type("cn") && ber_view_eq_str(d.options, "lang-en"));
		d = ad_at(full, position, "cn", LUMEN_OK);
		ck_assert(d.options.ptr == NULL && d.options.len == 0);
		d = ad_at(full, position, "cn", LUMEN_OK);
		ck_assert(d.options.ptr == NULL && d.options.len == 0);
		/* Failures are never kept, nor do they drop what was. */
		for (int round = 0; round < 2; round++) {
			ad_at(full, position, "cx", LUMEN_ENOTFOUND);
			ad_at(full, position, "cn;", LUMEN_EMALFORMED);
			ck_assert(ad_at(full, position, "cn", LUMEN_OK).type == type("cn"));
		}
	}
	struct schema *one = schema_with_memo_type("1.9.1"), *two = schema_with_memo_type("1.9.2");
	const char *long_name = "x-a-name-longer-than-the-memo-keeps-of-any-name";
	for (int round = 0; round < 2; round++) {
		ck_assert_str_eq(ad_at(one, 5, "x-memo", LUMEN_OK).type->oid, "1.9.1");
		ck_assert_str_eq(ad_at(two, 5, "x-memo", LUMEN_OK).type->oid, "1.9.2");
		ck_assert_str_eq(ad_at(one, 6, long_name, LUMEN_OK).type->oid, "1.9.1.1");
		ck_assert_str_eq(ad_at(two, 6, long_name, LUMEN_OK).type->oid, "1.9.2.1");
	}
	ad_at(full, 5, "x-memo", LUMEN_ENOTFOUND);
	schema_free(one);
	schema_free(two);
}
END_TEST

/* A remembered name of each length must not answer for the same name with
 * any one byte changed, by either memo. */
START_TEST(memo_compares_every_byte)
{
	static const char *const names[] = {
		"c", "sn", "uid", "mail", "title", "street", "surname", "initials",
		"givenName", "postalCode", "description", "employeeType", "telephoneNumber",
		"destinationIndicator", "preferredDeliveryMethod", "facsimileTelephoneNumber",
		"physicalDeliveryOfficeName", "x121Address;lang-de;x-a-long-option",
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct attribute_type *want = ad_at(full, 1, names[i], LUMEN_OK).type;
		ck_assert(ad(names[i], LUMEN_OK).type == want);
		char changed[64];
		size_t len = strlen(names[i]), type_len = strcspn(names[i], ";");
		for (size_t at = 0; at < type_len; at++) {
			memcpy(changed, names[i], len + 1);
			changed[at] = changed[at] == 'q' ? 'w' : 'q';
			struct attribute_description d;
			int rc = attribute_description_parse_at(full, 1, changed, len, &d);
			ck_assert_msg(rc != LUMEN_OK || d.type != want, "%s at %zu", changed, at);
			rc = attribute_description_parse(full, changed, len, &d);
			ck_assert_msg(rc != LUMEN_OK || d.type != want, "%s", changed);
			ck_assert(ad_at(full, 1, names[i], LUMEN_OK).type == want);
			ck_assert(ad(names[i], LUMEN_OK).type == want);
		}
	}
}
END_TEST

static const struct {
	const char *want, *have;
	bool match;
} ad_cases[] = {
	{ "cn", "cn", true },
	{ "cn", "CN;lang-de", true },           /* the plain type asks for all of them */
	{ "cn;lang-de", "cn", false },
	{ "cn;lang-de", "cn;LANG-DE", true },
	{ "cn;lang-de", "cn;lang-en", false },
	{ "cn;lang-de", "cn;x-foo;lang-de", true },
	{ "cn;lang-", "cn;lang-de", true },     /* range */
	{ "cn;lang-en-", "cn;lang-en-us", true },
	{ "cn;lang-en-", "cn;lang-en", true },
	{ "cn;lang-en-", "cn;lang-eng", false },
	{ "name", "cn", true },                 /* subtype */
	{ "name", "sn;lang-fr", true },
	{ "cn", "name", false },
	{ "cn", "sn", false },
	{ "userCertificate;binary", "userCertificate", true },
	{ "name;lang-de", "cn;lang-de", true },
};

START_TEST(description_matches)
{
	struct attribute_description want = ad(ad_cases[_i].want, LUMEN_OK);
	struct attribute_description have = ad(ad_cases[_i].have, LUMEN_OK);
	ck_assert_msg(attribute_description_matches(&want, &have) == ad_cases[_i].match,
		      "%s vs %s", ad_cases[_i].want, ad_cases[_i].have);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("schema");
	TCase *shipped_tc = tcase_create("shipped");
	tcase_add_checked_fixture(shipped_tc, load_full, free_full);
	tcase_add_test(shipped_tc, shipped_files_load);
	tcase_add_test(shipped_tc, inheritance_through_sup);
	tcase_add_test(shipped_tc, operational_attributes);
	tcase_add_test(shipped_tc, object_class_must_may);
	tcase_add_test(shipped_tc, definitions_are_canonical);
	tcase_add_test(shipped_tc, description_parse);
	tcase_add_test(shipped_tc, description_memo);
	tcase_add_test(shipped_tc, description_by_position);
	tcase_add_test(shipped_tc, memo_compares_every_byte);
	tcase_add_loop_test(shipped_tc, description_matches, 0,
			    sizeof(ad_cases) / sizeof(ad_cases[0]));
	suite_add_tcase(s, shipped_tc);

	TCase *parser = tcase_create("parser");
	tcase_add_loop_test(parser, parser_cases, 0, sizeof(parse_cases) / sizeof(parse_cases[0]));
	tcase_add_test(parser, extensions_and_quoting_kept);
	tcase_add_test(parser, load_file_errors);
	tcase_add_test(parser, load_file_from_a_pipe);
	tcase_add_test(parser, lumen_schema_after_core_alone);
	suite_add_tcase(s, parser);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
