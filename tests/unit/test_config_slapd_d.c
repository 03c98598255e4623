/*
 * test_config_slapd_d.c — OpenLDAP's cn=config directory (slapd.d) read as
 * slapd.conf: the order of the translated lines, OpenLDAP's defaults left
 * out, X-ORDERED positions stripped, base64 values, the CRC32 header, and
 * an error naming the file (line, DN, attribute) for everything Lumen does
 * not read. tests/integration/t_slapd_d.sh does the same on directories
 * Debian's slaptest writes.
 */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "lumen_error.h"
#include "schema.h"

#include "scratch_dir_fixture.h"

#define HEADER "# AUTO-GENERATED FILE - DO NOT EDIT!! Use ldapmodify.\n"
/* CRC32 of global_entry, as slapd writes it. */
static const char global_file[] =
	HEADER "# CRC32 6cb03622\n"
	"dn: cn=config\nobjectClass: olcGlobal\ncn: config\nolcThreads: 8\n";

/* A small slapd.d: the global entry, a schema of our own, the frontend,
 * one mdb database with an overlay, the config database and a module. */
static void write_tree(const char *db_dir)
{
	char mdb[1024];
	write_file("cn=config.ldif", global_file);
	write_file("cn=config/cn=schema.ldif",
		   "dn: cn=schema,cn=config\ncn: schema\n"
		   "olcAttributeTypes: ( 1.3.6.1.1.16.4 NAME 'entryUUID' SYNTAX 1.3.6.1.1.16.1 )\n");
	write_file("cn=config/cn=schema/cn={0}test.ldif",
		   "dn: cn={0}test,cn=schema,cn=config\n"
		   "objectClass: olcSchemaConfig\ncn: {0}test\n"
		   "olcObjectIdentifier: {0}TestRoot 1.3.6.1.4.1.99999\n"
		   "olcAttributeTypes: {0}( TestRoot:1 NAME 'testName' EQUALITY caseIgnoreMatch\n"
		   "  SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 )\n");
	write_file("cn=config/cn=module{0}.ldif",
		   "dn: cn=module{0},cn=config\ncn: module{0}\nolcModuleLoad: {0}back_mdb\n");
	write_file("cn=config/olcDatabase={-1}frontend.ldif",
		   "dn: olcDatabase={-1}frontend,cn=config\n"
		   "olcDatabase: {-1}frontend\n"
		   "olcAccess: {0}to attrs=testName by * read\n"
		   "olcLastMod: TRUE\n"
		   "olcSchemaDN: cn=Subschema\n");
	write_file("cn=config/olcDatabase={0}config.ldif",
		   "dn: olcDatabase={0}config,cn=config\nolcDatabase: {0}config\n"
		   "olcRootDN: cn=config\nolcAccess: {0}to * by * none\n");
	snprintf(mdb, sizeof(mdb),
		 "dn: olcDatabase={1}mdb,cn=config\n"
		 "objectClass: olcMdbConfig\n"
		 "olcDatabase: {1}mdb\n"
		 "olcSuffix: o=test\n"
		 "olcRootDN: cn=admin,o=test\n"
		 "olcRootPW:: c2VjcmV0\n"
		 "olcDbDirectory: %s\n"
		 "olcDbIndex: testName eq\n"
		 "olcDbMaxSize: 10485760\n"
		 "olcDbNoSync: TRUE\n"
		 "olcDbMode: 0600\n"
		 "olcLimits: {0}dn.exact=\"testName=admin\" size=unlimited\n",
		 db_dir);
	write_file("cn=config/olcDatabase={1}mdb.ldif", mdb);
	write_file("cn=config/olcDatabase={1}mdb/olcOverlay={0}refint.ldif",
		   "dn: olcOverlay={0}refint,olcDatabase={1}mdb,cn=config\n"
		   "olcOverlay: {0}refint\nolcRefintAttribute: testName\n");
}

START_TEST(test_print_order_and_forms)
{
	make_dir();
	write_tree("/nonexistent/db");
	char err[512] = "", *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	int rc = config_print_slapd_d(dir, out, err, sizeof(err));
	fclose(out);
	ck_assert_msg(rc == LUMEN_OK, "%s", err);
	/* no directory check when only printing */
	char *expected = NULL;
	ck_assert_int_ge(asprintf(&expected,
		 "# slapd.conf for Lumen, translated from OpenLDAP's %1$s\n"
		 "\n# %1$s/cn=config.ldif\nthreads 8\n"
		 "\n# %1$s/cn=config/cn=schema/cn={0}test.ldif\n"
		 "objectidentifier TestRoot 1.3.6.1.4.1.99999\n"
		 "attributetype ( TestRoot:1 NAME 'testName' EQUALITY caseIgnoreMatch "
		 "SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 )\n"
		 "\n# %1$s/cn=config/olcDatabase={-1}frontend.ldif\naccess to attrs=testName by * read\n"
		 "\n# %1$s/cn=config/olcDatabase={1}mdb.ldif\n"
		 "database mdb\nsuffix \"o=test\"\nrootdn \"cn=admin,o=test\"\n"
		 "rootpw \"secret\"\ndirectory \"/nonexistent/db\"\nindex testName eq\n"
		 "dbnosync\nlimits dn.exact=\"testName=admin\" size=unlimited\n"
		 "\n# %1$s/cn=config/olcDatabase={1}mdb/olcOverlay={0}refint.ldif\n"
		 "overlay refint\nrefint_attributes testName\n", dir), 0);
	ck_assert_str_eq(text, expected);
	free(expected);
	free(text);
	remove_dir();
}
END_TEST

/* A fresh directory holding the small slapd.d and its database directory
 * (its path in db_dir). */
static void make_tree(char *db_dir, size_t len)
{
	make_dir();
	snprintf(db_dir, len, "%s/db", dir);
	ck_assert_int_eq(mkdir(db_dir, 0700), 0);
	write_tree(db_dir);
}

START_TEST(test_load)
{
	char db_dir[PATH_MAX + 8];
	make_tree(db_dir, sizeof(db_dir));
	struct config *cfg = NULL;
	char err[512] = "";
	int rc = config_load_slapd_d(dir, &cfg, err, sizeof(err));
	ck_assert_msg(rc == LUMEN_OK, "%s", err);
	ck_assert_uint_eq(cfg->threads, 8);
	ck_assert_ptr_nonnull(schema_attribute_type(cfg->schema, "testName", 8));
	ck_assert_uint_eq(cfg->access.n_rules, 1);
	ck_assert_uint_eq(cfg->n_databases, 1);
	const struct config_database *db = &cfg->databases[0];
	ck_assert_str_eq(db->suffixes[0], "o=test");
	ck_assert_str_eq(db->rootpw, "secret");
	ck_assert_str_eq(db->directory, db_dir);
	ck_assert(db->dbnosync);
	ck_assert_uint_eq(db->n_indexes, 1);
	ck_assert_uint_eq(db->n_limits, 1);
	/* OpenLDAP's default map size: Lumen's default instead */
	ck_assert_uint_eq(db->maxsize, CONFIG_DEFAULT_MAXSIZE);
	ck_assert_uint_eq(db->n_overlays, 1);
	ck_assert_str_eq(db->overlays[0].name, "refint");
	ck_assert_uint_eq(db->overlays[0].n_lines, 1);
	config_free(cfg);
	remove_dir();
}
END_TEST

/* A replica's entries, as slaptest writes them: the syncrepl line with
 * OpenLDAP's defaults spelled out, updateref, multiprovider off (left
 * out), and the syncprov overlay with its defaults (left out). */
START_TEST(test_replica_entries)
{
	make_dir();
	write_tree("/nonexistent/db");
	write_file("cn=config.ldif",
		   "dn: cn=config\nolcThreads: 8\nolcServerID: 1 ldap://a.example/\n");
	write_file("cn=config/olcDatabase={1}mdb.ldif",
		   "dn: olcDatabase={1}mdb,cn=config\nolcDatabase: {1}mdb\nolcSuffix: o=test\n"
		   "olcSyncrepl: {0}rid=001 provider=ldap://b.example timeout=0 network-timeout=0\n"
		   "  keepalive=0:0:0 tcp-user-timeout=0 starttls=no searchbase=\"o=test\"\n"
		   "olcUpdateRef: ldap://b.example\nolcMultiProvider: FALSE\n");
	write_file("cn=config/olcDatabase={1}mdb/olcOverlay={1}syncprov.ldif",
		   "dn: olcOverlay={1}syncprov,olcDatabase={1}mdb,cn=config\n"
		   "olcOverlay: {1}syncprov\nolcSpCheckpoint: 100 10\nolcSpSessionlog: 500\n"
		   "olcSpNoPresent: FALSE\nolcSpReloadHint: FALSE\n");
	char err[512] = "", *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	int rc = config_print_slapd_d(dir, out, err, sizeof(err));
	fclose(out);
	ck_assert_msg(rc == LUMEN_OK, "%s", err);
	ck_assert_ptr_nonnull(strstr(text, "\nserverID 1 ldap://a.example/\n"));
	ck_assert_ptr_nonnull(strstr(text, "\nsyncrepl rid=001 provider=ldap://b.example timeout=0 "
					   "network-timeout=0 keepalive=0:0:0 tcp-user-timeout=0 "
					   "starttls=no searchbase=\"o=test\"\n"));
	ck_assert_ptr_nonnull(strstr(text, "\nupdateref ldap://b.example\n"));
	ck_assert_ptr_null(strstr(text, "multiprovider"));
	ck_assert_ptr_nonnull(strstr(text, "\noverlay syncprov\nsyncprov-checkpoint 100 10\n"
					   "syncprov-sessionlog 500\n"));
	ck_assert_ptr_null(strstr(text, "nopresent"));
	free(text);
	remove_dir();
}
END_TEST

/* One file of the tree replaced (or added); the error load reports. */
struct bad_tree {
	const char *name;
	const char *file;
	const char *text;        /* NULL: the file is removed */
	int rc;
	const char *message;     /* a part of err, after "<dir>/" */
};

static const struct bad_tree bad_trees[] = {
	{ "CRC32 that does not match", "cn=config.ldif",
	  HEADER "# CRC32 6cb03622\n"
	  "dn: cn=config\nobjectClass: olcGlobal\ncn: config\nolcThreads: 9\n",
	  LUMEN_EMALFORMED, "cn=config.ldif: corrupt: its CRC32 header says 6cb03622" },
	{ "CRC32 line that is not one", "cn=config.ldif", HEADER "# CRC 1\ndn: cn=config\n",
	  LUMEN_EMALFORMED, "cn=config.ldif:2: expected \"# CRC32" },
	{ "no cn=config.ldif", "cn=config.ldif", NULL, LUMEN_EIO,
	  "cn=config.ldif: cannot read: No such file" },
	{ "LDIF without dn", "cn=config.ldif", "olcThreads: 4\n", LUMEN_EMALFORMED,
	  "cn=config.ldif:1: malformed LDIF: the entry must start with \"dn:\"" },
	{ "LDIF line without colon", "cn=config.ldif", "dn: cn=config\nolcThreads 4\n",
	  LUMEN_EMALFORMED, "cn=config.ldif:2: malformed LDIF" },
	{ "bad base64", "cn=config.ldif", "dn: cn=config\nolcThreads:: ***\n", LUMEN_EMALFORMED,
	  "cn=config.ldif:2: olcThreads: invalid base64" },
	{ "two entries", "cn=config.ldif", "dn: cn=config\n\ndn: cn=other\n", LUMEN_EMALFORMED,
	  "cn=config.ldif:3: a second entry" },
	{ "attribute Lumen does not read", "cn=config.ldif",
	  "dn: cn=config\nolcThreads: 4\nolcPluginLogFile: plugin.log\n", LUMEN_EUNSUPPORTED,
	  "cn=config.ldif:3: \"cn=config\", attribute olcPluginLogFile: not supported by Lumen" },
	{ "ignorable only at its default", "cn=config/olcDatabase={-1}frontend.ldif",
	  "dn: olcDatabase={-1}frontend,cn=config\nolcReadOnly: TRUE\n", LUMEN_EUNSUPPORTED,
	  "frontend.ldif:2: \"olcDatabase={-1}frontend,cn=config\", attribute olcReadOnly: "
	  "supported by Lumen only at its default" },
	{ "database type Lumen lacks", "cn=config/olcDatabase={2}hdb.ldif",
	  "dn: olcDatabase={2}hdb,cn=config\n", LUMEN_EUNSUPPORTED,
	  "database type hdb is not supported by Lumen" },
	{ "overlay Lumen lacks", "cn=config/olcDatabase={1}mdb/olcOverlay={1}accesslog.ldif",
	  "dn: olcOverlay={1}accesslog,olcDatabase={1}mdb,cn=config\n", LUMEN_EUNSUPPORTED,
	  "overlay accesslog is not supported by Lumen" },

	{ "entry Lumen does not know", "cn=config/olcBackend={0}mdb.ldif",
	  "dn: olcBackend={0}mdb,cn=config\n", LUMEN_EUNSUPPORTED,
	  "cn=config/olcBackend={0}mdb.ldif: not a cn=config entry Lumen reads" },
	{ "database directory missing", "cn=config/olcDatabase={1}mdb.ldif",
	  "dn: olcDatabase={1}mdb,cn=config\nolcSuffix: o=test\nolcDbDirectory: /nonexistent/db\n",
	  LUMEN_ENOTFOUND, "mdb.ldif:3: \"olcDatabase={1}mdb,cn=config\", attribute "
	  "olcDbDirectory: /nonexistent/db: No such file or directory" },
	{ "a directive's own check names the slapd.d line", "cn=config.ldif",
	  "dn: cn=config\ncn: config\nolcThreads: many\n", LUMEN_EMALFORMED,
	  "cn=config.ldif:3: threads" },
	{ "schema entry missing: the access rule names its line",
	  "cn=config/cn=schema/cn={0}test.ldif", NULL, LUMEN_ENOTFOUND,
	  "olcDatabase={-1}frontend.ldif:3: access: unknown attribute \"testName\"" },
};

START_TEST(test_bad_tree)
{
	const struct bad_tree *t = &bad_trees[_i];
	char db_dir[PATH_MAX + 8];
	make_tree(db_dir, sizeof(db_dir));
	if (t->text != NULL)
		write_file(t->file, t->text);
	else
		ck_assert_int_eq(unlink(write_file(t->file, "")), 0);
	struct config *cfg = NULL;
	char err[512] = "";
	int rc = config_load_slapd_d(dir, &cfg, err, sizeof(err));
	ck_assert_ptr_null(cfg);
	ck_assert_msg(rc == t->rc, "%s: rc %d, err %s", t->name, rc, err);
	ck_assert_msg(strstr(err, dir) != NULL && strstr(err, t->message) != NULL,
		      "%s: expected \"%s\" in \"%s\"", t->name, t->message, err);
	remove_dir();
}
END_TEST

/* An entry file past the 16 MiB bound is refused by name. */
START_TEST(test_entry_file_too_large)
{
	char db_dir[PATH_MAX + 8];
	make_tree(db_dir, sizeof(db_dir));
	const char *path = write_file("cn=config.ldif", "");
	ck_assert_int_eq(truncate(path, (16 << 20) + 1), 0);     /* sparse: cheap */
	struct config *cfg = NULL;
	char err[512] = "";
	int rc = config_load_slapd_d(dir, &cfg, err, sizeof(err));
	ck_assert_ptr_null(cfg);
	ck_assert_int_eq(rc, LUMEN_ELIMIT);
	ck_assert_msg(strstr(err, "cn=config.ldif: larger than 16 MiB: not a cn=config entry"),
		      "%s", err);
	remove_dir();
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("config_slapd_d");
	TCase *tc = tcase_create("config_slapd_d");
	tcase_add_test(tc, test_print_order_and_forms);
	tcase_add_test(tc, test_entry_file_too_large);
	tcase_add_test(tc, test_load);
	tcase_add_test(tc, test_replica_entries);
	tcase_add_loop_test(tc, test_bad_tree, 0, sizeof(bad_trees) / sizeof(bad_trees[0]));
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
