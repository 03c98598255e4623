/*
 * test_config_syncrepl.c — a `syncrepl` line's words into settings
 * (config_syncrepl.h): OpenLDAP's defaults, every keyword, the interval
 * and retry forms, provider URLs, and the errors naming the keyword;
 * `syncrepl` and `updateref` in a whole slapd.conf with FILE:LINE errors.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "config_syncrepl.h"
#include "lumen_error.h"

/* Parses space-separated words (no quoting) into s. */
static int parse(const char *line, struct config_syncrepl *s, char *err, size_t errlen)
{
	static char text[1024];
	char *words[32];
	size_t n = 0;
	snprintf(text, sizeof(text), "%s", line);
	for (char *save = NULL, *w = strtok_r(text, " ", &save); w != NULL && n < 32;
	     w = strtok_r(NULL, " ", &save))
		words[n++] = w;
	return config_syncrepl_parse(words, n, s, err, errlen);
}

START_TEST(defaults)
{
	struct config_syncrepl s;
	char err[256] = "";
	ck_assert_int_eq(parse("rid=7 provider=ldap://h.example searchbase=dc=example,dc=com", &s,
			       err, sizeof(err)), LUMEN_OK);
	ck_assert_int_eq(s.rid, 7);
	ck_assert_str_eq(s.host, "h.example");
	ck_assert_uint_eq(s.port, 389);
	ck_assert(!s.ldaps);
	ck_assert_int_eq(s.type, SYNCREPL_REFRESH_ONLY);
	ck_assert_uint_eq(s.interval, 24 * 3600);
	ck_assert_uint_eq(s.n_retry, 1);
	ck_assert_uint_eq(s.retry[0].seconds, 3600);
	ck_assert_int_eq(s.retry[0].count, SYNCREPL_RETRY_FOREVER);
	ck_assert_str_eq(s.filter, "(objectClass=*)");
	ck_assert_int_eq(s.scope, SYNCREPL_SCOPE_SUB);
	ck_assert_uint_eq(s.n_attrs, 2);
	ck_assert_str_eq(s.attrs[0], "*");
	ck_assert_str_eq(s.attrs[1], "+");
	ck_assert_int_eq(s.bindmethod, SYNCREPL_BIND_SIMPLE);
	ck_assert_int_eq(s.tls_reqcert, SYNCREPL_REQCERT_DEMAND);
	ck_assert_uint_eq(s.timeout, SYNCREPL_DEFAULT_TIMEOUT);
	ck_assert_uint_eq(s.network_timeout, SYNCREPL_DEFAULT_NETWORK_TIMEOUT);
	config_syncrepl_free(&s);
}
END_TEST

START_TEST(every_keyword)
{
	struct config_syncrepl s;
	char err[256] = "";
	ck_assert_msg(parse("rid=001 provider=ldaps://[::1]:1636/ searchbase=ou=x,dc=e "
			    "type=refreshAndPersist interval=01:02:03:04 retry=5,10,60,+ "
			    "filter=(uid=*) scope=one attrs=cn,sn,+ bindmethod=sasl saslmech=external "
			    "binddn=cn=r credentials=pw starttls=critical tls_cacert=/ca "
			    "tls_cert=/c tls_key=/k tls_reqcert=never timeout=9 network-timeout=11 "
			    "schemachecking=on", &s, err, sizeof(err)) == LUMEN_EMALFORMED, "%s", err);
	/* retry takes spaces (the config lexer's quotes keep them in one word) */
	char *words[] = { "rid=001", "provider=ldaps://[::1]:1636/", "searchbase=ou=x,dc=e",
			  "type=refreshAndPersist", "interval=01:02:03:04", "retry=5 10 60 +",
			  "filter=(uid=*)", "scope=one", "attrs=cn,sn,+", "bindmethod=sasl",
			  "saslmech=external", "binddn=cn=r", "credentials=pw",
			  "starttls=critical", "tls_cacert=/ca", "tls_cert=/c", "tls_key=/k",
			  "tls_reqcert=never", "timeout=9", "network-timeout=11",
			  "schemachecking=on" };
	char *copies[21];
	for (size_t i = 0; i < 21; i++)
		copies[i] = strdup(words[i]);
	ck_assert_msg(config_syncrepl_parse(copies, 21, &s, err, sizeof(err)) == LUMEN_OK, "%s",
		      err);
	for (size_t i = 0; i < 21; i++)
		free(copies[i]);
	ck_assert_int_eq(s.rid, 1);
	ck_assert(s.ldaps);
	ck_assert_str_eq(s.host, "::1");
	ck_assert_uint_eq(s.port, 1636);
	ck_assert_int_eq(s.type, SYNCREPL_REFRESH_AND_PERSIST);
	ck_assert_uint_eq(s.interval, ((1 * 24 + 2) * 60 + 3) * 60 + 4);
	ck_assert_uint_eq(s.n_retry, 2);
	ck_assert_uint_eq(s.retry[1].seconds, 60);
	ck_assert_int_eq(s.retry[0].count, 10);
	ck_assert_int_eq(s.retry[1].count, SYNCREPL_RETRY_FOREVER);
	ck_assert_str_eq(s.filter, "(uid=*)");
	ck_assert_int_eq(s.scope, SYNCREPL_SCOPE_ONE);
	ck_assert_uint_eq(s.n_attrs, 3);
	ck_assert_int_eq(s.bindmethod, SYNCREPL_BIND_SASL_EXTERNAL);
	ck_assert_str_eq(s.binddn, "cn=r");
	ck_assert_str_eq(s.credentials, "pw");
	ck_assert_int_eq(s.starttls, SYNCREPL_STARTTLS_CRITICAL);
	ck_assert_str_eq(s.tls_key, "/k");
	ck_assert_int_eq(s.tls_reqcert, SYNCREPL_REQCERT_NEVER);
	ck_assert_uint_eq(s.timeout, 9);
	ck_assert_uint_eq(s.network_timeout, 11);
	ck_assert(s.schemachecking);
	config_syncrepl_free(&s);
}
END_TEST

START_TEST(interval_and_retry_forms)
{
	unsigned secs;
	struct syncrepl_retry r[4];
	size_t n;
	ck_assert_int_eq(config_syncrepl_interval("00:00:00:01", &secs), LUMEN_OK);
	ck_assert_uint_eq(secs, 1);
	const char *bad_intervals[] = { "00:00:00:00", "1:2:3", "00:24:00:00", "00:00:60:00",
					"00:00:00:0x", "00:00:00:01:", "a", "" };
	for (size_t i = 0; i < sizeof(bad_intervals) / sizeof(bad_intervals[0]); i++)
		ck_assert_msg(config_syncrepl_interval(bad_intervals[i], &secs) == LUMEN_EMALFORMED,
			      "%s", bad_intervals[i]);
	ck_assert_int_eq(config_syncrepl_retry("5 10 60 +", r, 4, &n), LUMEN_OK);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(config_syncrepl_retry("30 3", r, 4, &n), LUMEN_OK);
	ck_assert_int_eq(r[0].count, 3);
	const char *bad_retries[] = { "5", "5 + 10 2", "0 1", "5 0", "5 x", "", "1 1 1 1 1 1 1 1 1 1" };
	for (size_t i = 0; i < sizeof(bad_retries) / sizeof(bad_retries[0]); i++)
		ck_assert_msg(config_syncrepl_retry(bad_retries[i], r, 4, &n) == LUMEN_EMALFORMED,
			      "%s", bad_retries[i]);
}
END_TEST

START_TEST(urls)
{
	bool ldaps;
	char *host;
	unsigned port;
	ck_assert_int_eq(config_syncrepl_url("LDAPS://h:7", &ldaps, &host, &port), LUMEN_OK);
	ck_assert(ldaps);
	ck_assert_str_eq(host, "h");
	ck_assert_uint_eq(port, 7);
	free(host);
	const char *bad[] = { "http://h", "ldap://", "ldap://h:", "ldap://h:0", "ldap://h:70000",
			      "ldap://h/dc=x", "ldap://[::1", "ldap://[::1]x", "ldapi:///x" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(config_syncrepl_url(bad[i], &ldaps, &host, &port) == LUMEN_EMALFORMED,
			      "%s", bad[i]);
		ck_assert_ptr_null(host);
	}
}
END_TEST

START_TEST(errors_name_the_keyword)
{
	static const struct { const char *line, *want; } cases[] = {
		{ "provider=ldap://h searchbase=dc=e", "rid= is required" },
		{ "rid=1 searchbase=dc=e", "provider= is required" },
		{ "rid=1 provider=ldap://h", "searchbase= is required" },
		{ "rid=1 rid=2 provider=ldap://h searchbase=dc=e", "rid: given twice" },
		{ "rid=1 provider=ldap://h searchbase=dc=e syncdata=accesslog",
		  "unknown or unsupported keyword \"syncdata\"" },
		{ "rid=1 provider=ldap://h searchbase=dc=e scope=deep", "scope: expected" },
		{ "rid=1 provider=ldap://h searchbase=dc=e bindmethod=sasl",
		  "bindmethod=sasl (EXTERNAL) needs ldaps:// or starttls" },
		{ "rid=1 provider=ldap://h searchbase=dc=e saslmech=DIGEST-MD5",
		  "saslmech: only EXTERNAL" },
		{ "rid=1 provider=ldap://h searchbase=dc=e tls_cert=/c", "tls_cert and tls_key" },
		{ "rid=1 provider=ldap://h searchbase=dc=e timeout=x", "timeout: expected seconds" },
		{ "rid=1 provider=ldap://h searchbase=dc=e keepalive=240:10:30",
		  "keepalive: supported only at 0:0:0" },
		{ "rid=1 provider=ldap://h searchbase=dc=e tcp-user-timeout=5",
		  "tcp-user-timeout: supported only at 0" },
		{ "rid=1 provider=ldap://h searchbase=dc=e filter=uid=x", "filter: expected" },
		{ "rid=1 provider=ldap://h searchbase=dc=e junk", "expected keyword=value" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct config_syncrepl s;
		char err[256] = "";
		ck_assert_int_eq(parse(cases[i].line, &s, err, sizeof(err)), LUMEN_EMALFORMED);
		ck_assert_msg(strstr(err, cases[i].want) != NULL, "%s: %s", cases[i].line, err);
		ck_assert_ptr_null(s.provider);   /* freed on failure */
	}
}
END_TEST

/* What slaptest writes into every olcSyncrepl: OpenLDAP's "forever" and
 * "off", which keep Lumen's bounded defaults. */
START_TEST(slaptest_defaults)
{
	struct config_syncrepl s;
	char err[256] = "";
	ck_assert_int_eq(parse("rid=1 provider=ldap://h searchbase=dc=e timeout=0 "
			       "network-timeout=0 keepalive=0:0:0 tcp-user-timeout=0 starttls=no",
			       &s, err, sizeof(err)), LUMEN_OK);
	ck_assert_uint_eq(s.timeout, SYNCREPL_DEFAULT_TIMEOUT);
	ck_assert_uint_eq(s.network_timeout, SYNCREPL_DEFAULT_NETWORK_TIMEOUT);
	ck_assert_int_eq(s.starttls, SYNCREPL_STARTTLS_NO);
	config_syncrepl_free(&s);
}
END_TEST

static int load_text(const char *text, struct config **cfg, char *err, size_t errlen)
{
	char path[] = "/tmp/lumen-syncrepl-XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	int rc = config_load(path, cfg, err, errlen);
	unlink(path);
	return rc;
}

START_TEST(in_slapd_conf)
{
	struct config *cfg = NULL;
	char err[512] = "";
	int rc = load_text("database mdb\nsuffix dc=e\n"
			   "syncrepl rid=3 provider=ldap://p:3389 searchbase=\"dc=e\"\n"
			   "  retry=\"1 2 3 +\" credentials=\"a b\"\n"
			   "updateref ldap://p:3389\nupdateref ldaps://q\n", &cfg, err, sizeof(err));
	ck_assert_msg(rc == LUMEN_OK, "%s", err);
	const struct config_database *db = &cfg->databases[0];
	ck_assert_uint_eq(db->n_syncrepl, 1);
	ck_assert_str_eq(db->syncrepl[0].credentials, "a b");
	ck_assert_uint_eq(db->syncrepl[0].n_retry, 2);
	ck_assert_ptr_nonnull(strstr(db->syncrepl[0].origin, ":3"));
	ck_assert_uint_eq(db->n_updaterefs, 2);
	ck_assert_str_eq(db->updaterefs[1], "ldaps://q");
	config_free(cfg);

	rc = load_text("database mdb\nsuffix dc=e\nupdateref ldap://p\n", &cfg, err, sizeof(err));
	ck_assert_int_eq(rc, LUMEN_EMALFORMED);
	ck_assert_msg(strstr(err, ":3: updateref: must appear after a syncrepl line") != NULL,
		      "%s", err);
	rc = load_text("database mdb\nsuffix dc=e\n"
		       "syncrepl rid=3 provider=ldap://p searchbase=dc=e\n"
		       "syncrepl rid=3 provider=ldap://q searchbase=dc=e\n", &cfg, err, sizeof(err));
	ck_assert_int_eq(rc, LUMEN_EMALFORMED);
	ck_assert_msg(strstr(err, ":4: syncrepl: rid=003 is already used") != NULL, "%s", err);
	rc = load_text("database mdb\nsuffix dc=e\n"
		       "syncrepl rid=3 provider=ldap://p searchbase=dc=e interval=0\n", &cfg, err,
		       sizeof(err));
	ck_assert_msg(strstr(err, ":3: syncrepl: interval: expected dd:hh:mm:ss") != NULL, "%s",
		      err);
	rc = load_text("syncrepl rid=3 provider=ldap://p searchbase=dc=e\n", &cfg, err,
		       sizeof(err));
	ck_assert_int_eq(rc, LUMEN_EMALFORMED);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("config_syncrepl");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, defaults);
	tcase_add_test(tc, every_keyword);
	tcase_add_test(tc, interval_and_retry_forms);
	tcase_add_test(tc, urls);
	tcase_add_test(tc, errors_name_the_keyword);
	tcase_add_test(tc, slaptest_defaults);
	tcase_add_test(tc, in_slapd_conf);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
