/*
 * test_config.c — slapd.conf parsing: every directive, includes, schema
 * lines, and one test per kind of error (each names FILE:LINE).
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

static const char full_config[] =
	"# a comment\n"
	"pidfile /tmp/x.pid\n"
	"argsfile \"/tmp/with space.args\"\n"
	"threads 8\n"
	"listener-threads 2\n"
	"loglevel stats conns\n"
	"sizelimit 1000\n"
	"timelimit unlimited\n"
	"idletimeout 30\n"
	"writetimeout 15\n"
	"sockbuf_max_incoming 128K\n"
	"sockbuf_max_incoming_auth 8388608\n"
	"conn_max_pending 10\n"
	"conn_max_pending_auth 20\n"
	"conn_max_memory 512K\n"
	"conn_max_memory_auth 64M\n"
	"conn_total_memory 2G\n"
	"first_pdu_timeout 15\n"
	"metrics-max-connections 4\n"
	"metrics-timeout 3\n"
	"allow bind_anon_dn\n"
	"authz-policy ALL\n"
	"debug-nagle on\n"
	"busy-poll 0\n"
	"database mdb\n"
	"suffix \"dc=example,dc=com\"\n"
	"suffix dc=other\n"
	"rootdn \"cn=admin,dc=example,dc=com\"\n"
	"rootpw \"se cret#1\"\n"
	"directory /var/lib/lumen\n"
	"maxsize 1G\n"
	"maxreaders 200\n"
	"dbnosync\n"
	"index objectClass eq\n"
	"index cn,sn,mail\n"
	"  pres,eq,sub,approx\n"
	"index uid\n"
	"cachesize 5000\n"
	"idlcachesize off\n"
	"sizelimit 10\n";

START_TEST(test_every_directive)
{
	struct config *cfg = NULL;
	char err[512];
	make_dir();
	const char *path = write_file("slapd.conf", full_config);
	int rc = config_load(path, &cfg, err, sizeof(err));
	ck_assert_msg(rc == LUMEN_OK, "%s", err);
	ck_assert_str_eq(cfg->pidfile, "/tmp/x.pid");
	ck_assert_str_eq(cfg->argsfile, "/tmp/with space.args");
	ck_assert_uint_eq(cfg->threads, 8);
	ck_assert_uint_eq(cfg->listener_threads, 2);
	ck_assert_uint_eq(cfg->busy_poll_us, 0);
	ck_assert_uint_eq(cfg->loglevel, LOG_LEVEL_STATS | LOG_LEVEL_CONNS);
	ck_assert_int_eq(cfg->sizelimit, 1000);
	ck_assert_int_eq(cfg->timelimit, CONFIG_LIMIT_UNLIMITED);
	ck_assert_uint_eq(cfg->idletimeout, 30);
	ck_assert_uint_eq(cfg->writetimeout, 15);
	ck_assert_uint_eq(cfg->max_incoming, 128 * 1024);
	ck_assert_uint_eq(cfg->max_incoming_auth, 8388608);
	ck_assert_uint_eq(cfg->max_pending, 10);
	ck_assert_uint_eq(cfg->max_pending_auth, 20);
	ck_assert_uint_eq(cfg->conn_max_memory, 512 * 1024);
	ck_assert_uint_eq(cfg->conn_max_memory_auth, 64 * 1024 * 1024);
	ck_assert_uint_eq(cfg->conn_total_memory, 2ull << 30);
	ck_assert_uint_eq(cfg->first_pdu_timeout, 15);
	ck_assert_uint_eq(cfg->metrics_max_connections, 4);
	ck_assert_uint_eq(cfg->metrics_timeout, 3);
	ck_assert(cfg->allow_bind_anon_dn);
	ck_assert_int_eq(cfg->authz_policy, CONFIG_AUTHZ_ALL);
	ck_assert(cfg->debug_nagle);
	ck_assert_uint_eq(cfg->n_databases, 1);
	const struct config_database *db = &cfg->databases[0];
	ck_assert_str_eq(db->type, "mdb");
	ck_assert_uint_eq(db->n_suffixes, 2);
	ck_assert_str_eq(db->suffixes[0], "dc=example,dc=com");
	ck_assert_str_eq(db->suffixes[1], "dc=other");
	ck_assert_str_eq(db->rootdn, "cn=admin,dc=example,dc=com");
	ck_assert_str_eq(db->rootpw, "se cret#1");
	ck_assert_str_eq(db->directory, "/var/lib/lumen");
	ck_assert_uint_eq(db->maxsize, 1ull << 30);
	ck_assert_uint_eq(db->maxreaders, 200);
	ck_assert(db->dbnosync);
	ck_assert_uint_eq(db->n_indexes, 3);
	ck_assert_uint_eq(db->indexes[0].n_attributes, 1);
	ck_assert_str_eq(db->indexes[0].attributes[0], "objectClass");
	ck_assert_uint_eq(db->indexes[0].kinds, INDEX_KIND_EQUALITY);
	ck_assert_uint_eq(db->indexes[1].n_attributes, 3);
	ck_assert_str_eq(db->indexes[1].attributes[2], "mail");
	ck_assert_uint_eq(db->indexes[1].kinds, INDEX_KIND_PRESENT | INDEX_KIND_EQUALITY |
						INDEX_KIND_SUBSTRING | INDEX_KIND_APPROX);
	ck_assert_uint_eq(db->indexes[2].kinds, INDEX_KIND_EQUALITY);
	ck_assert_ptr_nonnull(strstr(db->indexes[1].origin, "slapd.conf:35"));
	ck_assert_ptr_nonnull(strstr(db->origin, "slapd.conf:25"));
	ck_assert_uint_eq(db->cachesize, 5000);
	ck_assert(db->idlcachesize == CONFIG_CACHE_OFF);
	ck_assert_int_eq(config_database_sizelimit(cfg, db), 10);
	ck_assert_int_eq(config_database_timelimit(cfg, db), CONFIG_LIMIT_UNLIMITED);
	config_free(cfg);
	remove_dir();
}
END_TEST

START_TEST(test_defaults)
{
	struct config *cfg = NULL;
	char err[512];
	make_dir();
	int rc = config_load(write_file("empty.conf", "# nothing\n"), &cfg, err, sizeof(err));
	ck_assert_msg(rc == LUMEN_OK, "%s", err);
	ck_assert_uint_eq(cfg->threads, CONFIG_DEFAULT_THREADS);
	ck_assert_uint_eq(cfg->listener_threads, CONFIG_DEFAULT_LISTENER_THREADS);
	ck_assert_uint_eq(cfg->busy_poll_us, CONFIG_DEFAULT_BUSY_POLL_US);
	ck_assert_uint_eq(cfg->loglevel, LOG_LEVEL_STATS);
	ck_assert_int_eq(cfg->sizelimit, CONFIG_DEFAULT_SIZELIMIT);
	ck_assert_int_eq(cfg->timelimit, CONFIG_DEFAULT_TIMELIMIT);
	ck_assert_uint_eq(cfg->writetimeout, CONFIG_DEFAULT_WRITETIMEOUT);
	ck_assert_uint_eq(cfg->max_incoming, 256 * 1024);
	ck_assert_uint_eq(cfg->max_incoming_auth, 4 * 1024 * 1024);
	ck_assert_uint_eq(cfg->conn_max_memory, 1024 * 1024);
	ck_assert_uint_eq(cfg->conn_max_memory_auth, 32 * 1024 * 1024);
	ck_assert_uint_eq(cfg->conn_total_memory, 1ull << 30);
	ck_assert_uint_eq(cfg->first_pdu_timeout, 60);
	ck_assert(!cfg->allow_bind_anon_dn);
	ck_assert_int_eq(cfg->authz_policy, CONFIG_AUTHZ_NONE);
	ck_assert(!cfg->debug_nagle);
	ck_assert_ptr_null(cfg->pidfile);
	ck_assert_uint_eq(cfg->n_databases, 0);
	ck_assert_ptr_nonnull(cfg->schema);
	config_free(cfg);
	remove_dir();
}
END_TEST

static const char small_schema[] =
	"# a schema file\n"
	"objectidentifier TestRoot 1.3.6.1.4.1.99999\n"
	"attributetype ( TestRoot:1 NAME 'testName'\n"
	"\tEQUALITY caseIgnoreMatch\n"
	"\tSYNTAX 1.3.6.1.4.1.1466.115.121.1.15 )\n"
	"objectclass ( TestRoot:2 NAME 'testThing' AUXILIARY\n"
	"  MUST testName )\n";

START_TEST(test_include_relative_to_including_file)
{
	struct config *cfg = NULL;
	char err[512];
	make_dir();
	char sub[PATH_MAX + 8];
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	write_file("sub/test.schema", small_schema);
	write_file("sub/more.conf", "include test.schema\nthreads 3\n");
	const char *path = write_file("main.conf", "include sub/more.conf\nloglevel none\n");
	int rc = config_load(path, &cfg, err, sizeof(err));
	ck_assert_msg(rc == LUMEN_OK, "%s", err);
	ck_assert_uint_eq(cfg->threads, 3);
	ck_assert_uint_eq(cfg->loglevel, LOG_LEVEL_NONE);
	const struct attribute_type *at = schema_attribute_type(cfg->schema, "testname", 8);
	ck_assert_ptr_nonnull(at);
	ck_assert_str_eq(at->oid, "1.3.6.1.4.1.99999.1");
	ck_assert_ptr_nonnull(schema_object_class(cfg->schema, "testThing", 9));
	config_free(cfg);
	remove_dir();
}
END_TEST

START_TEST(test_include_relative_to_working_directory)
{
	struct config *cfg = NULL;
	char err[512], cwd[PATH_MAX];
	make_dir();
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	write_file("inc.conf", "threads 5\n");
	const char *path = write_file("main.conf", "include inc.conf\n");
	char main_path[PATH_MAX + 64];
	snprintf(main_path, sizeof(main_path), "%s", path);
	ck_assert_int_eq(chdir(dir), 0);
	int rc = config_load("main.conf", &cfg, err, sizeof(err));
	ck_assert_int_eq(chdir(cwd), 0);
	ck_assert_msg(rc == LUMEN_OK, "%s", err);
	ck_assert_uint_eq(cfg->threads, 5);
	config_free(cfg);
	remove_dir();
}
END_TEST

/* `referral` lines (slapd's default referral), kept in order. */
START_TEST(test_referral_lines)
{
	struct config *cfg = NULL;
	char err[512];
	make_dir();
	const char *path = write_file("slapd.conf", "referral ldap://a.example/\n"
				      "referral LDAPS://b.example:636\n");
	ck_assert_msg(config_load(path, &cfg, err, sizeof(err)) == LUMEN_OK, "%s", err);
	ck_assert_uint_eq(cfg->n_referrals, 2);
	ck_assert_str_eq(cfg->referrals[0], "ldap://a.example/");
	ck_assert_str_eq(cfg->referrals[1], "LDAPS://b.example:636");
	config_free(cfg);
	remove_dir();
}
END_TEST

struct bad_config {
	const char *name;
	const char *text;
	int rc;
	const char *expect;       /* substring of the error, after "FILE:" */
};

static const struct bad_config bad_configs[] = {
	{ "referral with a DN", "referral ldap://h.example/o=up\n", LUMEN_EMALFORMED,
	  "main.conf:1: referral: the URL names a server only" },
	{ "referral with a scope", "referral ldap://h.example/??one\n", LUMEN_EMALFORMED,
	  "main.conf:1: referral: the URL names a server only" },
	{ "referral that is no LDAP URL", "referral http://h.example/\n", LUMEN_EMALFORMED,
	  "main.conf:1: referral: expected ldap://HOST[:PORT]/" },
	{ "referral in a database", "database mdb\nreferral ldap://h.example/\n",
	  LUMEN_EMALFORMED, "main.conf:2: referral" },
	{ "unknown directive", "threads 2\nfrobnicate 1\n", LUMEN_EMALFORMED,
	  "main.conf:2: unknown directive \"frobnicate\"" },
	{ "bad number", "threads lots\n", LUMEN_EMALFORMED,
	  "main.conf:1: threads: expected an integer between 1 and 1024, got \"lots\"" },
	{ "number out of range", "threads 0\n", LUMEN_EMALFORMED, "main.conf:1: threads: expected" },
	{ "number with junk", "idletimeout 10s\n", LUMEN_EMALFORMED,
	  "main.conf:1: idletimeout: expected" },
	{ "writetimeout with junk", "writetimeout 2m\n", LUMEN_EMALFORMED,
	  "main.conf:1: writetimeout: expected an integer between 0 and" },
	{ "writetimeout negative", "writetimeout -5\n", LUMEN_EMALFORMED,
	  "main.conf:1: writetimeout: expected" },
	{ "writetimeout missing", "writetimeout\n", LUMEN_EMALFORMED,
	  "main.conf:1: writetimeout: wrong number of arguments, expected \"writetimeout <seconds>\"" },
	{ "negative number", "listener-threads -1\n", LUMEN_EMALFORMED,
	  "main.conf:1: listener-threads: expected" },
	{ "busy-poll too long", "busy-poll 10001\n", LUMEN_EMALFORMED,
	  "main.conf:1: busy-poll: expected an integer between 0 and 10000, got \"10001\"" },
	{ "busy-poll with a unit", "busy-poll 50us\n", LUMEN_EMALFORMED,
	  "main.conf:1: busy-poll: expected" },
	{ "missing argument", "\n\npidfile\n", LUMEN_EMALFORMED,
	  "main.conf:3: pidfile: wrong number of arguments, expected \"pidfile <file>\"" },
	{ "too many arguments", "threads 1 2\n", LUMEN_EMALFORMED,
	  "main.conf:1: threads: wrong number of arguments" },
	{ "bad loglevel", "loglevel stats bogus\n", LUMEN_EMALFORMED,
	  "main.conf:1: loglevel: expected numbers or level names" },
	{ "bad sizelimit", "sizelimit many\n", LUMEN_EMALFORMED,
	  "main.conf:1: sizelimit: expected a non-negative integer or \"unlimited\"" },
	{ "unterminated quote", "pidfile \"/tmp/x\n", LUMEN_EMALFORMED,
	  "main.conf:1: unterminated quoted argument" },
	{ "database directive in global section", "suffix dc=x\n", LUMEN_EMALFORMED,
	  "main.conf:1: suffix: allowed only inside a database section" },
	{ "global directive in database section", "database mdb\nthreads 2\n", LUMEN_EMALFORMED,
	  "main.conf:2: threads: a global directive" },
	{ "unknown backend", "database bdb\n", LUMEN_EMALFORMED,
	  "main.conf:1: database: expected \"mdb\"" },
	{ "bad index kind", "database mdb\nindex cn eq,fuzzy\n", LUMEN_EMALFORMED,
	  "main.conf:2: index: expected index kinds from pres,eq,sub,approx, got \"fuzzy\"" },
	{ "empty index attribute list", "database mdb\nindex , eq\n", LUMEN_EMALFORMED,
	  "main.conf:2: index: expected a comma-separated attribute list" },
	{ "bad maxsize", "database mdb\nmaxsize 10X\n", LUMEN_EMALFORMED,
	  "main.conf:2: maxsize: expected an integer" },
	{ "empty rootpw", "database mdb\nrootpw \"\"\n", LUMEN_EMALFORMED,
	  "main.conf:2: rootpw: expected a non-empty password" },
	{ "bad allow", "allow everything\n", LUMEN_EMALFORMED,
	  "main.conf:1: allow: expected bind_anon_dn" },
	{ "bad cachesize", "database mdb\ncachesize none\n", LUMEN_EMALFORMED,
	  "main.conf:2: cachesize: expected" },
	{ "bad debug-nagle", "debug-nagle maybe\n", LUMEN_EMALFORMED,
	  "main.conf:1: debug-nagle: expected on or off, got \"maybe\"" },
	{ "dbnosync takes no argument", "database mdb\ndbnosync yes\n", LUMEN_EMALFORMED,
	  "main.conf:2: dbnosync: wrong number of arguments" },
	{ "missing include", "threads 2\ninclude nowhere.conf\n", LUMEN_EIO,
	  "main.conf:2: include: cannot read \"nowhere.conf\"" },
	{ "error inside include names the included file", "include bad.conf\n",
	  LUMEN_EMALFORMED, "bad.conf:2: unknown directive \"nope\"" },
	{ "schema error names file and line", "threads 1\nattributetype ( 1.2.3 NAME 'x'\n",
	  LUMEN_EMALFORMED, "main.conf:2" },
	{ "conn_max_memory below one PDU's room", "conn_max_memory 1000\n", LUMEN_EMALFORMED,
	  "main.conf:1: conn_max_memory: expected an integer between 65536 and 4294967296 "
	  "(optionally with K, M, G or T), got \"1000\"" },
	{ "conn_max_memory_auth not a size", "conn_max_memory_auth lots\n", LUMEN_EMALFORMED,
	  "main.conf:1: conn_max_memory_auth: expected an integer" },
	{ "conn_total_memory too large", "conn_total_memory 2T\n", LUMEN_EMALFORMED,
	  "main.conf:1: conn_total_memory: expected an integer between 0 and 1099511627776" },
	{ "first_pdu_timeout not seconds", "first_pdu_timeout 5s\n", LUMEN_EMALFORMED,
	  "main.conf:1: first_pdu_timeout: expected an integer between 0 and 3600" },
	{ "metrics-max-connections zero", "metrics-max-connections 0\n", LUMEN_EMALFORMED,
	  "main.conf:1: metrics-max-connections: expected an integer between 1 and 4096" },
	{ "metrics-timeout not seconds", "metrics-timeout soon\n", LUMEN_EMALFORMED,
	  "main.conf:1: metrics-timeout: expected an integer between 1 and 3600" },
	{ "authz-policy unknown", "authz-policy some\n", LUMEN_EMALFORMED,
	  "main.conf:1: authz-policy: expected none, to, from, any or all, got \"some\"" },
	{ "authz-policy in a database", "database mdb\nauthz-policy to\n", LUMEN_EMALFORMED,
	  "main.conf:2: authz-policy" },
	{ "include loop", "include loop.conf\n", LUMEN_ELIMIT, "include: nested more than 16" },
	{ "maxfilterdepth zero", "maxfilterdepth 0\n", LUMEN_EMALFORMED,
	  "main.conf:1: maxfilterdepth: expected an integer between 1 and 4096" },
	{ "maxfilterdepth past the stack's bound", "maxfilterdepth 5000\n", LUMEN_EMALFORMED,
	  "main.conf:1: maxfilterdepth: expected an integer between 1 and 4096" },
	{ "overlay without a name", "database mdb\noverlay\n", LUMEN_EMALFORMED,
	  "main.conf:2: overlay: wrong number of arguments, expected \"overlay <name>\"" },
	{ "overlay in the global section", "overlay refint\n", LUMEN_EMALFORMED,
	  "main.conf:1: overlay: allowed only inside a database section" },
	{ "unknown directive before any overlay", "database mdb\nrefint_attributes member\n",
	  LUMEN_EMALFORMED, "main.conf:2: unknown directive \"refint_attributes\"" },
	{ "an overlay's lines end at the next database", "database mdb\noverlay refint\n"
	  "database mdb\nrefint_attributes member\n", LUMEN_EMALFORMED,
	  "main.conf:4: unknown directive \"refint_attributes\"" },
};

START_TEST(test_bad_config)
{
	const struct bad_config *t = &bad_configs[_i];
	struct config *cfg = (struct config *)1;
	char err[512];
	make_dir();
	write_file("bad.conf", "threads 1\nnope\n");
	write_file("loop.conf", "include loop.conf\n");
	char cwd[PATH_MAX];
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	ck_assert_int_eq(chdir(dir), 0);
	write_file("main.conf", t->text);
	int rc = config_load("main.conf", &cfg, err, sizeof(err));
	ck_assert_int_eq(chdir(cwd), 0);
	ck_assert_msg(rc == t->rc, "%s: rc %d, expected %d (%s)", t->name, rc, t->rc, err);
	ck_assert_ptr_null(cfg);
	ck_assert_msg(strstr(err, t->expect) != NULL, "%s: error \"%s\" lacks \"%s\"", t->name,
		      err, t->expect);
	remove_dir();
}
END_TEST

/* Lines after `overlay` that no table knows are the overlay's, with their
 * origin; known database directives still apply to the database. */
START_TEST(test_overlay_lines)
{
	struct config *cfg = NULL;
	char err[512];
	make_dir();
	const char *path = write_file("main.conf", "database mdb\nsuffix dc=x\n"
				      "overlay refint\nrefint_attributes member \"see also\"\n"
				      "index cn eq\nrefint_nothing cn=nobody\n"
				      "overlay unique\n");
	ck_assert_msg(config_load(path, &cfg, err, sizeof(err)) == LUMEN_OK, "%s", err);
	const struct config_database *db = &cfg->databases[0];
	ck_assert_uint_eq(db->n_indexes, 1);
	ck_assert_uint_eq(db->n_overlays, 2);
	const struct config_overlay *o = &db->overlays[0];
	ck_assert_str_eq(o->name, "refint");
	ck_assert_ptr_nonnull(strstr(o->origin, "main.conf:3"));
	ck_assert_uint_eq(o->n_lines, 2);
	ck_assert_uint_eq(o->lines[0].n_words, 3);
	ck_assert_str_eq(o->lines[0].words[2], "see also");
	ck_assert_ptr_nonnull(strstr(o->lines[0].origin, "main.conf:4"));
	ck_assert_str_eq(o->lines[1].words[0], "refint_nothing");
	ck_assert_ptr_nonnull(strstr(o->lines[1].origin, "main.conf:6"));
	ck_assert_str_eq(db->overlays[1].name, "unique");
	ck_assert_uint_eq(db->overlays[1].n_lines, 0);
	config_free(cfg);
	remove_dir();
}
END_TEST

START_TEST(test_missing_file)
{
	struct config *cfg = NULL;
	char err[512];
	int rc = config_load("/nonexistent/lumen.conf", &cfg, err, sizeof(err));
	ck_assert_int_eq(rc, LUMEN_EIO);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/lumen.conf: cannot read"));
}
END_TEST

/* A file past the 64 MiB bound is refused by name, not read in whole. */
START_TEST(test_file_too_large)
{
	make_dir();
	const char *path = write_file("huge.conf", "");
	ck_assert_int_eq(truncate(path, (64 << 20) + 1), 0);     /* sparse: cheap */
	struct config *cfg = NULL;
	char err[512] = "";
	int rc = config_load(path, &cfg, err, sizeof(err));
	ck_assert_int_eq(rc, LUMEN_EIO);
	ck_assert_ptr_null(cfg);
	ck_assert_msg(strstr(err, "huge.conf: cannot read: File too large") != NULL, "%s", err);
	remove_dir();
}
END_TEST

START_TEST(test_continuation_and_comments)
{
	struct config *cfg = NULL;
	char err[512];
	make_dir();
	const char *path = write_file("c.conf",
				      "loglevel\n"
				      "# comment between\n"
				      "  stats\n"
				      "\tsync\r\n"
				      "database mdb\n"
				      "suffix dc=a\n"
				      "rootpw pass#word\n");
	int rc = config_load(path, &cfg, err, sizeof(err));
	ck_assert_msg(rc == LUMEN_OK, "%s", err);
	ck_assert_uint_eq(cfg->loglevel, LOG_LEVEL_STATS | LOG_LEVEL_SYNC);
	ck_assert_str_eq(cfg->databases[0].rootpw, "pass#word");
	config_free(cfg);
	remove_dir();
}
END_TEST

struct loglevel_case {
	const char *words[3];
	size_t n;
	int rc;
	unsigned level;
};

static const struct loglevel_case loglevel_cases[] = {
	{ { "stats" }, 1, LUMEN_OK, 0x100 },
	{ { "STATS", "conns" }, 2, LUMEN_OK, 0x108 },
	{ { "256" }, 1, LUMEN_OK, 256 },
	{ { "0x100", "trace" }, 2, LUMEN_OK, 0x101 },
	{ { "any" }, 1, LUMEN_OK, LOG_LEVEL_ANY },
	{ { "-1" }, 1, LUMEN_OK, LOG_LEVEL_ANY },
	{ { "none" }, 1, LUMEN_OK, LOG_LEVEL_NONE },
	{ { "0" }, 1, LUMEN_OK, 0 },
	{ { "stat" }, 1, LUMEN_EMALFORMED, 0 },
	{ { "12abc" }, 1, LUMEN_EMALFORMED, 0 },
	{ { "-2" }, 1, LUMEN_EMALFORMED, 0 },
	{ { "" }, 1, LUMEN_EMALFORMED, 0 },
	{ { NULL }, 0, LUMEN_EMALFORMED, 0 },
};

START_TEST(test_loglevel)
{
	const struct loglevel_case *t = &loglevel_cases[_i];
	unsigned level = 12345;
	int rc = config_parse_loglevel(t->words, t->n, &level);
	ck_assert_int_eq(rc, t->rc);
	if (rc == LUMEN_OK)
		ck_assert_uint_eq(level, t->level);
}
END_TEST

/* Rows that fill one field straight from the table (config_apply_field). */
START_TEST(test_field_rows)
{
	struct config *cfg = NULL;
	char err[512];
	make_dir();
	const char *path = write_file("slapd.conf",
				      "logfile /tmp/lumen.log\n"
				      "conn_max 5000\n"
				      "CONN_MAX_PER_IP 7\n"
				      "tls_handshake_timeout 12\n");
	int rc = config_load(path, &cfg, err, sizeof(err));
	ck_assert_msg(rc == LUMEN_OK, "%s", err);
	ck_assert_str_eq(cfg->logfile, "/tmp/lumen.log");
	ck_assert_uint_eq(cfg->conn_max, 5000);
	ck_assert_uint_eq(cfg->conn_max_per_ip, 7);
	ck_assert_uint_eq(cfg->tls.handshake_timeout, 12);
	config_free(cfg);
	cfg = NULL;
	path = write_file("slapd.conf", "tls_handshake_timeout 0\n");
	ck_assert_int_eq(config_load(path, &cfg, err, sizeof(err)), LUMEN_EMALFORMED);
	ck_assert_ptr_nonnull(strstr(err, "slapd.conf:1: tls_handshake_timeout: expected an "
				     "integer between 1 and 3600, got \"0\""));
	remove_dir();
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("config");
	tcase_add_test(tc, test_every_directive);
	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_include_relative_to_including_file);
	tcase_add_test(tc, test_include_relative_to_working_directory);
	tcase_add_loop_test(tc, test_bad_config, 0, sizeof(bad_configs) / sizeof(bad_configs[0]));
	tcase_add_test(tc, test_referral_lines);
	tcase_add_test(tc, test_overlay_lines);
	tcase_add_test(tc, test_missing_file);
	tcase_add_test(tc, test_file_too_large);
	tcase_add_test(tc, test_continuation_and_comments);
	tcase_add_test(tc, test_field_rows);
	tcase_add_loop_test(tc, test_loglevel, 0,
			    sizeof(loglevel_cases) / sizeof(loglevel_cases[0]));
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
