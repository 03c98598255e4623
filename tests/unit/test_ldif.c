/*
 * test_ldif.c — LDIF reader and writer (src/model/ldif_*.c): the RFC 2849
 * examples, folding and comments, every malformed-record error with its
 * message, recovery after an error, file input with long lines, and
 * writer/reader round trips of random binary values.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base64.h"
#include "ldif.h"
#include "lumen_error.h"

static struct arena arena;

static void setup(void)
{
	arena_init(&arena, 0);
}

static void teardown(void)
{
	arena_free(&arena);
}

static bool view_eq(struct ber_view v, const char *s)
{
	return v.len == strlen(s) && memcmp(v.ptr, s, v.len) == 0;
}

#define ck_assert_view(v, s) \
	ck_assert_msg(view_eq((v), (s)), "expected '%s', got '%.*s'", (s), (int)(v).len, \
		      (const char *)(v).ptr)

/* Reader over a NUL-terminated string. */
static struct ldif_reader *open_text(const char *text, const struct ldif_options *options)
{
	struct ldif_reader *r;
	ck_assert_int_eq(ldif_reader_open_memory(text, strlen(text), options, &r), LUMEN_OK);
	return r;
}

/* ------------------------------------------------------- RFC 2849 examples */

static const char example1[] =
	"version: 1\n"
	"dn: cn=Barbara Jensen, ou=Product Development, dc=airius, dc=com\n"
	"objectclass: top\n"
	"objectclass: person\n"
	"objectclass: organizationalPerson\n"
	"cn: Barbara Jensen\n"
	"cn: Barbara J Jensen\n"
	"cn: Babs Jensen\n"
	"sn: Jensen\n"
	"uid: bjensen\n"
	"telephonenumber: +1 408 555 1212\n"
	"description: A big sailing fan.\n"
	"\n"
	"dn: cn=Bjorn Jensen, ou=Accounting, dc=airius, dc=com\n"
	"objectclass: top\n"
	"objectclass: person\n"
	"objectclass: organizationalPerson\n"
	"cn: Bjorn Jensen\n"
	"sn: Jensen\n"
	"telephonenumber: +1 408 555 1212\n";

START_TEST(rfc_example1_two_entries)
{
	struct ldif_reader *r = open_text(example1, NULL);
	struct ldif_record rec;

	ck_assert_int_eq(ldif_read(r, &arena, &rec), LUMEN_OK);
	ck_assert_int_eq(rec.kind, LDIF_CONTENT);
	ck_assert_uint_eq(rec.line, 2);
	ck_assert_view(rec.dn, "cn=Barbara Jensen, ou=Product Development, dc=airius, dc=com");
	ck_assert_uint_eq(rec.n_attributes, 10);
	ck_assert_view(rec.attributes[0].description, "objectclass");
	ck_assert_view(rec.attributes[0].value, "top");
	ck_assert_view(rec.attributes[9].description, "description");
	ck_assert_view(rec.attributes[9].value, "A big sailing fan.");

	ck_assert_int_eq(ldif_read(r, &arena, &rec), LUMEN_OK);
	ck_assert_uint_eq(rec.line, 14);
	ck_assert_view(rec.dn, "cn=Bjorn Jensen, ou=Accounting, dc=airius, dc=com");
	ck_assert_uint_eq(rec.n_attributes, 6);
	ck_assert_view(rec.attributes[5].value, "+1 408 555 1212");
	ck_assert_int_eq(ldif_read(r, &arena, &rec), LDIF_END);
	ck_assert_int_eq(ldif_read(r, &arena, &rec), LDIF_END);
	ldif_reader_free(r);
}
END_TEST

START_TEST(rfc_example2_folded_no_space)
{
	static const char text[] =
		"version: 1\n"
		"dn:cn=Barbara Jensen, ou=Product Development, dc=airius, dc=com\n"
		"objectclass:top\n"
		"cn:Babs Jensen\n"
		"description:Babs is a big sailing fan, and travels extensively in sea\n"
		" rch of perfect sailing conditions.\n"
		"title:Product Manager, Rod and Reel Division\n";
	struct ldif_reader *r = open_text(text, NULL);
	struct ldif_record rec;

	ck_assert_int_eq(ldif_read(r, &arena, &rec), LUMEN_OK);
	ck_assert_view(rec.dn, "cn=Barbara Jensen, ou=Product Development, dc=airius, dc=com");
	ck_assert_uint_eq(rec.n_attributes, 4);
	ck_assert_view(rec.attributes[2].value, "Babs is a big sailing fan, and travels extensively "
			"in search of perfect sailing conditions.");
	ck_assert_view(rec.attributes[3].value, "Product Manager, Rod and Reel Division");
	ck_assert_int_eq(ldif_read(r, &arena, &rec), LDIF_END);
	ldif_reader_free(r);
}
END_TEST

START_TEST(rfc_example3_base64_value)
{
	static const char text[] =
		"version: 1\n"
		"dn: cn=Gern Jensen, ou=Product Testing, dc=airius, dc=com\n"
		"objectclass: top\n"
		"cn: Gern Jensen\n"
		"description:: V2hhdCBhIGNhcmVmdWwgcmVhZGVyIHlvdSBhcmUhICBUaGlzIHZhbHVlIGlzIGJhc2UtNjQtZW5j\n"
		" b2RlZCBiZWNhdXNlIGl0IGhhcyBhIGNvbnRyb2wgY2hhcmFjdGVyIGluIGl0IChhIENSKS4NICBCeSB0aGUg\n"
		" d2F5LCB5b3Ugc2hvdWxkIHJlYWxseSBnZXQgb3V0IG1vcmUu\n";
	struct ldif_reader *r = open_text(text, NULL);
	struct ldif_record rec;

	ck_assert_int_eq(ldif_read(r, &arena, &rec), LUMEN_OK);
	ck_assert_uint_eq(rec.n_attributes, 3);
	ck_assert_view(rec.attributes[2].value,
		       "What a careful reader you are!  This value is base-64-encoded because it "
		       "has a control character in it (a CR).\r  By the way, you should really get "
		       "out more.");
	ldif_reader_free(r);
}
END_TEST

/* Example 4: UTF-8 through base64, options, and folded comments. */
START_TEST(rfc_example4_utf8_and_options)
{
	static const char text[] =
		"version: 1\n"
		"dn:: b3U95Za25qWt6YOoLG89QWlyaXVz\n"
		"# dn:: ou=<JapaneseOU>,o=Airius\n"
		"objectclass: top\n"
		"objectclass: organizationalUnit\n"
		"ou:: 5Za25qWt6YOo\n"
		"# ou:: <JapaneseOU>\n"
		"ou;lang-ja:: 5Za25qWt6YOo\n"
		"# ou;lang-ja:: <JapaneseOU>\n"
		"ou;lang-ja;phonetic:: 44GI44GE44GO44KH44GG44G2\n"
		"# ou;lang-ja:: <JapaneseOU_in_phonetic_representation>\n"
		"ou;lang-en: Sales\n"
		"description: Japanese office\n"
		"\n"
		"dn:: dWlkPXJvZ2FzYXdhcmEsb3U95Za25qWt6YOoLG89QWlyaXVz\n"
		"# dn:: uid=<uid>,ou=<JapaneseOU>,o=Airius\n"
		"userpassword: {SHA}O3HSv1MusyL4kTjP+HKI5uxuNoM=\n"
		"uid: rogasawara\n"
		"cn;lang-ja:: 5bCP56yg5Y6fIOODreODieODi+ODvA==\n"
		"# givenname;lang-ja;phonetic::\n"
		" <JapaneseGivenname_in_phonetic_representation_kana>\n"
		"preferredlanguage: ja\n";
	struct ldif_reader *r = open_text(text, NULL);
	struct ldif_record rec;

	ck_assert_int_eq(ldif_read(r, &arena, &rec), LUMEN_OK);
	ck_assert_view(rec.dn, "ou=営業部,o=Airius");
	ck_assert_uint_eq(rec.n_attributes, 7);
	ck_assert_view(rec.attributes[2].value, "営業部");
	ck_assert_view(rec.attributes[3].description, "ou;lang-ja");
	ck_assert_view(rec.attributes[4].description, "ou;lang-ja;phonetic");
	ck_assert_view(rec.attributes[4].value, "えいぎょうぶ");
	ck_assert_view(rec.attributes[5].description, "ou;lang-en");

	ck_assert_int_eq(ldif_read(r, &arena, &rec), LUMEN_OK);
	ck_assert_view(rec.dn, "uid=rogasawara,ou=営業部,o=Airius");
	ck_assert_uint_eq(rec.n_attributes, 4);
	ck_assert_view(rec.attributes[2].value, "小笠原 ロドニー");
	ck_assert_view(rec.attributes[3].description, "preferredlanguage");
	ck_assert_int_eq(ldif_read(r, &arena, &rec), LDIF_END);
	ldif_reader_free(r);
}
END_TEST

static const char example5_head[] =
	"version: 1\n"
	"dn: cn=Horatio Jensen, ou=Product Testing, dc=airius, dc=com\n"
	"objectclass: top\n"
	"cn: Horatio Jensen\n"
	"jpegphoto:< file://";

START_TEST(rfc_example5_url_refused_by_default)
{
	char text[512];
	snprintf(text, sizeof(text), "%s/usr/local/directory/photos/hjensen.jpg\n", example5_head);
	struct ldif_reader *r = open_text(text, NULL);
	struct ldif_record rec;

	ck_assert_int_eq(ldif_read(r, &arena, &rec), LUMEN_EUNSUPPORTED);
	ck_assert_str_eq(ldif_reader_error(r), "line 5: URL value of 'jpegphoto' refused: "
			 "file URLs are not enabled (record at line 2)");
	ck_assert_int_eq(ldif_read(r, &arena, &rec), LDIF_END);
	ldif_reader_free(r);
}
END_TEST

START_TEST(rfc_example5_url_when_enabled)
{
	char path[] = "/tmp/lumen-ldif-XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "\xff\xd8\x00photo", 8), 8);
	close(fd);

	char text[512];
	snprintf(text, sizeof(text), "%s%s\n", example5_head, path);
	struct ldif_options options = { .allow_file_urls = true };
	struct ldif_reader *r = open_text(text, &options);
	struct ldif_record rec;

	ck_assert_int_eq(ldif_read(r, &arena, &rec), LUMEN_OK);
	ck_assert_uint_eq(rec.n_attributes, 3);
	ck_assert_uint_eq(rec.attributes[2].value.len, 8);
	ck_assert_mem_eq(rec.attributes[2].value.ptr, "\xff\xd8\x00photo", 8);
	ldif_reader_free(r);

	/* localhost form and a missing file. */
	snprintf(text, sizeof(text), "%slocalhost%s\n", example5_head, path);
	r = open_text(text, &options);
	ck_assert_int_eq(ldif_read(r, &arena, &rec), LUMEN_OK);
	ck_assert_uint_eq(rec.attributes[2].value.len, 8);
	ldif_reader_free(r);
	unlink(path);
	r = open_text(text, &options);
	ck_assert_int_eq(ldif_read(r, &arena, &rec), LUMEN_EIO);
	ck_assert_ptr_nonnull(strstr(ldif_reader_error(r), "cannot read"));
	ck_assert_int_eq(ldif_read(r, &arena, &rec), LDIF_END);
	ldif_reader_free(r);
}
END_TEST

static const char example6[] =
	"version: 1\n"
	"# Add a new entry\n"
	"dn: cn=Fiona Jensen, ou=Marketing, dc=airius, dc=com\n"
	"changetype: add\n"
	"objectclass: top\n"
	"cn: Fiona Jensen\n"
	"jpegphoto:< file:///usr/local/directory/photos/fiona.jpg\n"
	"\n"
	"# Delete an existing entry\n"
	"dn: cn=Robert Jensen, ou=Marketing, dc=airius, dc=com\n"
	"changetype: delete\n"
	"\n"
	"# Modify an entry's relative distinguished name\n"
	"dn: cn=Paul Jensen, ou=Product Development, dc=airius, dc=com\n"
	"changetype: modrdn\n"
	"newrdn: cn=Paula Jensen\n"
	"deleteoldrdn: 1\n"
	"\n"
	"# Rename an entry and move all of its children to a new location in\n"
	"# the directory tree (only implemented by LDAPv3 servers).\n"
	"dn: ou=PD Accountants, ou=Product Development, dc=airius, dc=com\n"
	"changetype: modrdn\n"
	"newrdn: ou=Product Development Accountants\n"
	"deleteoldrdn: 0\n"
	"newsuperior: ou=Accounting, dc=airius, dc=com\n"
	"\n"
	"# Modify an entry: add an additional value to the postaladdress\n"
	"# attribute, completely delete the description attribute, replace\n"
	"# the telephonenumber attribute with two values, and delete a specific\n"
	"# value from the facsimiletelephonenumber attribute\n"
	"dn: cn=Paula Jensen, ou=Product Development, dc=airius, dc=com\n"
	"changetype: modify\n"
	"add: postaladdress\n"
	"postaladdress: 123 Anystreet $ Sunnyvale, CA $ 94086\n"
	"-\n"
	"delete: description\n"
	"-\n"
	"replace: telephonenumber\n"
	"telephonenumber: +1 408 555 1234\n"
	"telephonenumber: +1 408 555 5678\n"
	"-\n"
	"delete: facsimiletelephonenumber\n"
	"facsimiletelephonenumber: +1 408 555 9876\n"
	"-\n"
	"\n"
	"# Modify an entry: replace the postaladdress attribute with an empty\n"
	"# set of values (which will cause the attribute to be removed), and\n"
	"# delete the entire description attribute.\n"
	"dn: cn=Ingrid Jensen, ou=Product Support, dc=airius, dc=com\n"
	"changetype: modify\n"
	"replace: postaladdress\n"
	"-\n"
	"delete: description\n"
	"-\n";

START_TEST(rfc_example6_change_records)
{
	struct ldif_reader *r = open_text(example6, NULL);
	struct ldif_record rec;

	/* The add names a file URL: refused, and the reader goes on. */
	ck_assert_int_eq(ldif_read(r, &arena, &rec), LUMEN_EUNSUPPORTED);
	ck_assert_ptr_nonnull(strstr(ldif_reader_error(r), "line 7:"));
	ck_assert_ptr_nonnull(strstr(ldif_reader_error(r), "(record at line 3)"));

	ck_assert_int_eq(ldif_read(r, &arena, &rec), LUMEN_OK);
	ck_assert_int_eq(rec.kind, LDIF_CHANGE_DELETE);
	ck_assert_uint_eq(rec.line, 10);
	ck_assert_view(rec.dn, "cn=Robert Jensen, ou=Marketing, dc=airius, dc=com");

	ck_assert_int_eq(ldif_read(r, &arena, &rec), LUMEN_OK);
	ck_assert_int_eq(rec.kind, LDIF_CHANGE_MODDN);
	ck_assert_view(rec.new_rdn, "cn=Paula Jensen");
	ck_assert(rec.delete_old_rdn);
	ck_assert(!rec.has_new_superior);

	ck_assert_int_eq(ldif_read(r, &arena, &rec), LUMEN_OK);
	ck_assert_int_eq(rec.kind, LDIF_CHANGE_MODDN);
	ck_assert_view(rec.new_rdn, "ou=Product Development Accountants");
	ck_assert(!rec.delete_old_rdn);
	ck_assert(rec.has_new_superior);
	ck_assert_view(rec.new_superior, "ou=Accounting, dc=airius, dc=com");

	ck_assert_int_eq(ldif_read(r, &arena, &rec), LUMEN_OK);
	ck_assert_int_eq(rec.kind, LDIF_CHANGE_MODIFY);
	ck_assert_uint_eq(rec.n_modifications, 4);
	ck_assert_int_eq(rec.modifications[0].op, LDIF_MOD_ADD);
	ck_assert_view(rec.modifications[0].description, "postaladdress");
	ck_assert_uint_eq(rec.modifications[0].n_values, 1);
	ck_assert_view(rec.modifications[0].values[0], "123 Anystreet $ Sunnyvale, CA $ 94086");
	ck_assert_int_eq(rec.modifications[1].op, LDIF_MOD_DELETE);
	ck_assert_uint_eq(rec.modifications[1].n_values, 0);
	ck_assert_int_eq(rec.modifications[2].op, LDIF_MOD_REPLACE);
	ck_assert_uint_eq(rec.modifications[2].n_values, 2);
	ck_assert_view(rec.modifications[2].values[1], "+1 408 555 5678");
	ck_assert_int_eq(rec.modifications[3].op, LDIF_MOD_DELETE);
	ck_assert_view(rec.modifications[3].values[0], "+1 408 555 9876");

	ck_assert_int_eq(ldif_read(r, &arena, &rec), LUMEN_OK);
	ck_assert_int_eq(rec.kind, LDIF_CHANGE_MODIFY);
	ck_assert_uint_eq(rec.n_modifications, 2);
	ck_assert_int_eq(rec.modifications[0].op, LDIF_MOD_REPLACE);
	ck_assert_uint_eq(rec.modifications[0].n_values, 0);
	ck_assert_int_eq(ldif_read(r, &arena, &rec), LDIF_END);
	ldif_reader_free(r);
}
END_TEST

START_TEST(rfc_example7_control)
{
	static const char text[] =
		"version: 1\n"
		"# Delete an entry. The operation will attach the LDAPv3\n"
		"# Tree Delete Control.\n"
		"dn: ou=Product Development, dc=airius, dc=com\n"
		"control: 1.2.840.113556.1.4.805 true\n"
		"changetype: delete\n"
		"\n"
		"dn: cn=x\n"
		"control: 1.2.3.4 false: plain value\n"
		"control: 1.2.3.5:: AAEC\n"
		"changetype: delete\n";
	struct ldif_reader *r = open_text(text, NULL);
	struct ldif_record rec;

	ck_assert_int_eq(ldif_read(r, &arena, &rec), LUMEN_OK);
	ck_assert_int_eq(rec.kind, LDIF_CHANGE_DELETE);
	ck_assert_uint_eq(rec.n_controls, 1);
	ck_assert_view(rec.controls[0].oid, "1.2.840.113556.1.4.805");
	ck_assert(rec.controls[0].critical);
	ck_assert(!rec.controls[0].has_value);

	ck_assert_int_eq(ldif_read(r, &arena, &rec), LUMEN_OK);
	ck_assert_uint_eq(rec.n_controls, 2);
	ck_assert(!rec.controls[0].critical);
	ck_assert(rec.controls[0].has_value);
	ck_assert_view(rec.controls[0].value, "plain value");
	ck_assert_view(rec.controls[1].oid, "1.2.3.5");
	ck_assert(rec.controls[1].has_value);
	ck_assert_uint_eq(rec.controls[1].value.len, 3);
	ck_assert_mem_eq(rec.controls[1].value.ptr, "\x00\x01\x02", 3);
	ldif_reader_free(r);
}
END_TEST

/* ----------------------------------------------------- lines and framing */

START_TEST(folding_at_end_of_file_without_newline)
{
	struct ldif_reader *r = open_text("dn: cn=a\ncn: fo\n o\n \n  bar", NULL);
	struct ldif_record rec;

	ck_assert_int_eq(ldif_read(r, &arena, &rec), LUMEN_OK);
	ck_assert_uint_eq(rec.n_attributes, 1);
	ck_assert_view(rec.attributes[0].value, "foo bar");
	ck_assert_int_eq(ldif_read(r, &arena, &rec), LDIF_END);
	ldif_reader_free(r);
}
END_TEST

START_TEST(crlf_comments_and_blank_runs)
{
	static const char text[] =
		"\r\n\r\n# leading comment\r\n folded into the comment\r\n\r\n"
		"dn: cn=a,\r\n\tdc=b\r\n# inside\r\n continued: not an attribute\r\n"
		"cn:  two spaces of FILL, trailing kept \r\n"
		"empty:\r\n\r\n\r\n\r\n"
		"# only a comment block\r\n\r\n";
	struct ldif_reader *r = open_text(text, NULL);
	struct ldif_record rec;

	ck_assert_int_eq(ldif_read(r, &arena, &rec), LUMEN_OK);
	ck_assert_uint_eq(rec.line, 6);
	ck_assert_view(rec.dn, "cn=a,dc=b");
	ck_assert_uint_eq(rec.n_attributes, 2);
	ck_assert_view(rec.attributes[0].value, "two spaces of FILL, trailing kept ");
	ck_assert_view(rec.attributes[1].description, "empty");
	ck_assert_uint_eq(rec.attributes[1].value.len, 0);
	ck_assert_int_eq(ldif_read(r, &arena, &rec), LDIF_END);
	ck_assert_uint_eq(ldif_reader_line(r), 16);
	ldif_reader_free(r);
}
END_TEST

START_TEST(empty_input_and_version_only)
{
	static const char *const inputs[] = { "", "\n\n", "# nothing\n", "version: 1\n",
					      "version: 1\n\n\n" };
	struct ldif_record rec;

	for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		struct ldif_reader *r = open_text(inputs[i], NULL);
		ck_assert_int_eq(ldif_read(r, &arena, &rec), LDIF_END);
		ck_assert_str_eq(ldif_reader_error(r), "");
		ldif_reader_free(r);
	}
}
END_TEST

/* --------------------------------------------------------------- errors */

struct bad_record {
	const char *name;
	const char *text;
	int rc;
	const char *message; /* exact */
};

static const struct bad_record bad_records[] = {
	{ "truncated base64", "dn: cn=a\ncn:: Zm9\n", LUMEN_EMALFORMED,
	  "line 2: invalid base64 in value of 'cn' (record at line 1)" },
	{ "invalid base64 character", "dn: cn=a\ncn:: Zm9v*A==\n", LUMEN_EMALFORMED,
	  "line 2: invalid base64 in value of 'cn' (record at line 1)" },
	{ "misplaced padding", "dn: cn=a\ncn:: Zg==Zm9v\n", LUMEN_EMALFORMED,
	  "line 2: invalid base64 in value of 'cn' (record at line 1)" },
	{ "invalid base64 dn", "dn:: Y249YQ=\ncn: a\n", LUMEN_EMALFORMED,
	  "line 1: invalid base64 in value of 'dn'" },
	{ "bad changetype", "dn: cn=a\nchangetype: frobnicate\n", LUMEN_EMALFORMED,
	  "line 2: unknown changetype 'frobnicate' (record at line 1)" },
	{ "missing dn", "cn: a\nsn: b\n", LUMEN_EMALFORMED,
	  "line 1: record does not start with 'dn:'" },
	{ "modify section without '-'", "dn: cn=a\nchangetype: modify\nadd: cn\ncn: x\n",
	  LUMEN_EMALFORMED, "line 3: modify section for 'cn' not ended by '-' (record at line 1)" },
	{ "next section without '-'",
	  "dn: cn=a\nchangetype: modify\nadd: cn\ncn: x\nreplace: sn\nsn: y\n-\n",
	  LUMEN_EMALFORMED,
	  "line 5: attribute 'replace' in a modify section for 'cn' (missing '-'?)"
	  " (record at line 1)" },
	{ "bad modify op", "dn: cn=a\nchangetype: modify\nfrob: cn\n-\n", LUMEN_EMALFORMED,
	  "line 3: expected add:, delete:, replace: or increment:, found 'frob:' (record at line 1)" },
	{ "attribute line without ':'", "dn: cn=a\ncn a\n", LUMEN_EMALFORMED,
	  "line 2: missing ':' in line 'cn a' (record at line 1)" },
	{ "empty attribute description", "dn: cn=a\n: a\n", LUMEN_EMALFORMED,
	  "line 2: empty attribute description in line ': a' (record at line 1)" },
	{ "bad attribute description", "dn: cn=a\nc_n: a\n", LUMEN_EMALFORMED,
	  "line 2: invalid attribute description 'c_n' (record at line 1)" },
	{ "empty option", "dn: cn=a\ncn;: a\n", LUMEN_EMALFORMED,
	  "line 2: invalid attribute description 'cn;' (record at line 1)" },
	{ "bad oid description", "dn: cn=a\n2..5: a\n", LUMEN_EMALFORMED,
	  "line 2: invalid attribute description '2..5' (record at line 1)" },
	{ "no attributes", "dn: cn=a\n", LUMEN_EMALFORMED,
	  "line 1: record has no attributes" },
	{ "add without attributes", "dn: cn=a\nchangetype: add\n", LUMEN_EMALFORMED,
	  "line 2: record has no attributes (record at line 1)" },
	{ "url refused", "dn: cn=a\njpegPhoto:< file:///etc/passwd\n", LUMEN_EUNSUPPORTED,
	  "line 2: URL value of 'jpegPhoto' refused: file URLs are not enabled"
	  " (record at line 1)" },
	{ "url dn", "dn:< file:///x\ncn: a\n", LUMEN_EMALFORMED,
	  "line 1: a DN cannot be given as a URL" },
	{ "delete with lines", "dn: cn=a\nchangetype: delete\ncn: a\n", LUMEN_EMALFORMED,
	  "line 3: unexpected line after changetype: delete (record at line 1)" },
	{ "modrdn without newrdn", "dn: cn=a\nchangetype: modrdn\ndeleteoldrdn: 1\n",
	  LUMEN_EMALFORMED, "line 3: expected 'newrdn:', found 'deleteoldrdn:' (record at line 1)" },
	{ "modrdn without deleteoldrdn", "dn: cn=a\nchangetype: moddn\nnewrdn: cn=b\n",
	  LUMEN_EMALFORMED, "line 3: missing 'deleteoldrdn:' line (record at line 1)" },
	{ "bad deleteoldrdn", "dn: cn=a\nchangetype: modrdn\nnewrdn: cn=b\ndeleteoldrdn: 2\n",
	  LUMEN_EMALFORMED, "line 4: deleteoldrdn must be 0 or 1 (record at line 1)" },
	{ "modrdn trailing line",
	  "dn: cn=a\nchangetype: modrdn\nnewrdn: cn=b\ndeleteoldrdn: 0\ncn: x\n",
	  LUMEN_EMALFORMED, "line 5: unexpected line after a modrdn change (record at line 1)" },
	{ "control without changetype", "dn: cn=a\ncontrol: 1.2.3\ncn: a\n", LUMEN_EMALFORMED,
	  "line 1: control lines without a changetype" },
	{ "bad control oid", "dn: cn=a\ncontrol: foo true\nchangetype: delete\n",
	  LUMEN_EMALFORMED, "line 2: malformed control line (record at line 1)" },
	{ "bad control criticality", "dn: cn=a\ncontrol: 1.2.3 maybe\nchangetype: delete\n",
	  LUMEN_EMALFORMED, "line 2: malformed control line (record at line 1)" },
	{ "version 2", "version: 2\ndn: cn=a\ncn: a\n", LUMEN_EMALFORMED,
	  "line 1: unsupported LDIF version (only 1 is)" },
	{ "continuation first", " cn=a\ndn: cn=a\ncn: a\n", LUMEN_EMALFORMED,
	  "line 1: continuation line with no line to continue" },
	{ "nul in value", "dn: cn=a\ncn: a\0b\n", LUMEN_EMALFORMED, NULL },
	{ "dn inside record", "dn: cn=a\ncn: a\ndn: cn=b\ncn: b\n", LUMEN_EMALFORMED,
	  "line 3: 'dn:' inside a record (missing blank line?) (record at line 1)" },
	{ "value of wrong attribute in section",
	  "dn: cn=a\nchangetype: modify\ndelete: cn\nsn: x\n-\n", LUMEN_EMALFORMED,
	  "line 4: attribute 'sn' in a modify section for 'cn' (missing '-'?) (record at line 1)" },
	{ "base64 description in section", "dn: cn=a\nchangetype: modify\nadd:: Y24=\n-\n",
	  LUMEN_EMALFORMED, "line 3: invalid attribute description 'Y24=' (record at line 1)" },
};

/* Each bad record fails with its message, then a good record still reads. */
START_TEST(malformed_records)
{
	const struct bad_record *t = &bad_records[_i];
	char text[512];
	size_t len = strlen(t->text);

	if (strcmp(t->name, "nul in value") == 0)
		len = 17; /* the literal holds a NUL */
	memcpy(text, t->text, len);
	static const char good[] = "\ndn: cn=good\ncn: good\n";
	memcpy(text + len, good, sizeof(good));
	len += sizeof(good) - 1;

	struct ldif_reader *r;
	struct ldif_record rec;
	ck_assert_int_eq(ldif_reader_open_memory(text, len, NULL, &r), LUMEN_OK);
	int rc = ldif_read(r, &arena, &rec);
	ck_assert_msg(rc == t->rc, "%s: rc %d, expected %d (%s)", t->name, rc, t->rc,
		      ldif_reader_error(r));
	if (t->message != NULL)
		ck_assert_str_eq(ldif_reader_error(r), t->message);
	else
		ck_assert_str_ne(ldif_reader_error(r), "");
	ck_assert_int_eq(ldif_read(r, &arena, &rec), LUMEN_OK);
	ck_assert_view(rec.dn, "cn=good");
	ck_assert_str_eq(ldif_reader_error(r), "");
	ck_assert_int_eq(ldif_read(r, &arena, &rec), LDIF_END);
	ldif_reader_free(r);
}
END_TEST

START_TEST(record_over_bound)
{
	struct ldif_options options = { .max_record = 64 };
	char text[512];
	memset(text, 0, sizeof(text));
	strcpy(text, "dn: cn=a\ndescription: ");
	memset(text + strlen(text), 'x', 100);
	strcat(text, "\n\ndn: cn=b\ncn: b\n");

	struct ldif_reader *r = open_text(text, &options);
	struct ldif_record rec;
	ck_assert_int_eq(ldif_read(r, &arena, &rec), LUMEN_ELIMIT);
	ck_assert_str_eq(ldif_reader_error(r),
			 "line 2: record larger than the bound on one record (record at line 1)");
	ck_assert_int_eq(ldif_read(r, &arena, &rec), LUMEN_OK);
	ck_assert_view(rec.dn, "cn=b");
	ldif_reader_free(r);
}
END_TEST

/* ----------------------------------------------------------- FILE input */

START_TEST(file_input_long_lines_and_many_records)
{
	FILE *fp = tmpfile();
	ck_assert_ptr_nonnull(fp);
	size_t big = 300000; /* several times the reader's 64 KiB chunk */
	char *value = malloc(big);
	ck_assert_ptr_nonnull(value);
	for (size_t i = 0; i < big; i++)
		value[i] = (char)('a' + i % 26);
	for (int i = 0; i < 2000; i++)
		fprintf(fp, "dn: cn=user%d,dc=example\r\ncn: user%d\r\n\r\n", i, i);
	fprintf(fp, "dn: cn=big\ndescription: %.*s\n\n", (int)big, value);
	fprintf(fp, "dn: cn=last\ncn: last");
	rewind(fp);

	struct ldif_reader *r;
	struct ldif_record rec;
	ck_assert_int_eq(ldif_reader_open_file(fp, NULL, &r), LUMEN_OK);
	for (int i = 0; i < 2000; i++) {
		char dn[64];
		snprintf(dn, sizeof(dn), "cn=user%d,dc=example", i);
		ck_assert_int_eq(ldif_read(r, &arena, &rec), LUMEN_OK);
		ck_assert_view(rec.dn, dn);
		ck_assert_uint_eq(rec.line, (size_t)i * 3 + 1);
		arena_reset(&arena);
	}
	ck_assert_int_eq(ldif_read(r, &arena, &rec), LUMEN_OK);
	ck_assert_uint_eq(rec.attributes[0].value.len, big);
	ck_assert_mem_eq(rec.attributes[0].value.ptr, value, big);
	ck_assert_int_eq(ldif_read(r, &arena, &rec), LUMEN_OK);
	ck_assert_view(rec.attributes[0].value, "last");
	ck_assert_int_eq(ldif_read(r, &arena, &rec), LDIF_END);
	ldif_reader_free(r);

	/* The same file with a bound below the long line: that record fails alone. */
	rewind(fp);
	struct ldif_options options = { .max_record = 1000 };
	ck_assert_int_eq(ldif_reader_open_file(fp, &options, &r), LUMEN_OK);
	int ok = 0, limited = 0, rc;
	while ((rc = ldif_read(r, &arena, &rec)) != LDIF_END) {
		if (rc == LUMEN_OK)
			ok++;
		else if (rc == LUMEN_ELIMIT)
			limited++;
		else
			ck_abort_msg("unexpected %d: %s", rc, ldif_reader_error(r));
		arena_reset(&arena);
	}
	ck_assert_int_eq(ok, 2001);
	ck_assert_int_eq(limited, 1);
	ldif_reader_free(r);
	fclose(fp);
	free(value);
}
END_TEST

/* ----------------------------------------------------------------- writer */

static char *write_to_string(const struct ldif_record *records, size_t n, size_t *len)
{
	char *buf = NULL;
	FILE *fp = open_memstream(&buf, len);
	ck_assert_ptr_nonnull(fp);
	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(ldif_write_record(fp, &records[i]), LUMEN_OK);
	fclose(fp);
	return buf;
}

#define VIEW(s) ((struct ber_view){ (const uint8_t *)(s), sizeof(s) - 1 })

START_TEST(writer_base64_rules)
{
	static const struct {
		const char *value;
		size_t len;
		bool base64;
	} cases[] = {
		{ "plain", 5, false },
		{ "", 0, false },
		{ " leading space", 14, true },
		{ "trailing space ", 15, true },
		{ ":colon", 6, true },
		{ "<angle", 6, true },
		{ "inner: colon < ok", 17, false },
		{ "nul\0", 4, true },
		{ "cr\r", 3, true },
		{ "lf\n", 3, true },
		{ "tab\t", 4, true },
		{ "caf\xc3\xa9", 5, true },
		{ "del\x7f", 4, true },
		{ "#hash-", 6, false },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(ldif_value_needs_base64((const uint8_t *)cases[i].value,
						      cases[i].len) == cases[i].base64,
			      "case %zu", i);
}
END_TEST

START_TEST(writer_output_exact)
{
	struct ldif_attribute_value attributes[] = {
		{ VIEW("cn"), VIEW("Babs") },
		{ VIEW("description"), VIEW(" x") },
		{ VIEW("empty"), VIEW("") },
	};
	struct ber_view values[] = { VIEW("a"), VIEW("b") };
	struct ldif_modification mods[] = {
		{ LDIF_MOD_REPLACE, VIEW("mail"), values, 2 },
		{ LDIF_MOD_DELETE, VIEW("sn"), NULL, 0 },
	};
	struct ldif_control control = { VIEW("1.2.3"), true, true, VIEW("v") };
	struct ldif_record records[] = {
		{ .kind = LDIF_CONTENT, .dn = VIEW("cn=Babs,dc=x"), .attributes = attributes,
		  .n_attributes = 3 },
		{ .kind = LDIF_CHANGE_MODIFY, .dn = VIEW("cn=Babs,dc=x"), .controls = &control,
		  .n_controls = 1, .modifications = mods, .n_modifications = 2 },
		{ .kind = LDIF_CHANGE_MODDN, .dn = VIEW("cn=a"), .new_rdn = VIEW("cn=b"),
		  .delete_old_rdn = true, .has_new_superior = true, .new_superior = VIEW("dc=y") },
		{ .kind = LDIF_CHANGE_DELETE, .dn = VIEW("") },
	};
	size_t len;
	char *out = write_to_string(records, 4, &len);
	ck_assert_str_eq(out,
			 "dn: cn=Babs,dc=x\ncn: Babs\ndescription:: IHg=\nempty:\n\n"
			 "dn: cn=Babs,dc=x\ncontrol: 1.2.3 true: v\nchangetype: modify\n"
			 "replace: mail\nmail: a\nmail: b\n-\ndelete: sn\n-\n\n"
			 "dn: cn=a\nchangetype: modrdn\nnewrdn: cn=b\ndeleteoldrdn: 1\n"
			 "newsuperior: dc=y\n\n"
			 "dn:\nchangetype: delete\n\n");
	free(out);

	struct ldif_record bad = { .kind = LDIF_CONTENT, .dn = VIEW("cn=a"),
				   .controls = &control, .n_controls = 1 };
	FILE *fp = fopen("/dev/null", "w");
	ck_assert_int_eq(ldif_write_record(fp, &bad), LUMEN_EINVAL);
	bad.kind = (enum ldif_record_kind)42;
	bad.n_controls = 0;
	ck_assert_int_eq(ldif_write_record(fp, &bad), LUMEN_EINVAL);
	fclose(fp);
}
END_TEST

START_TEST(writer_folds_at_76)
{
	char value[400];
	for (size_t i = 0; i < sizeof(value); i++)
		value[i] = (char)('A' + i % 26);
	struct ldif_attribute_value attributes[] = {
		{ VIEW("description"), { (const uint8_t *)value, sizeof(value) } },
	};
	struct ldif_record rec = { .kind = LDIF_CONTENT, .dn = VIEW("cn=a"),
				   .attributes = attributes, .n_attributes = 1 };
	size_t len;
	char *out = write_to_string(&rec, 1, &len);
	size_t lines = 0;
	for (char *line = out; *line != '\0'; lines++) {
		char *nl = strchr(line, '\n');
		ck_assert_ptr_nonnull(nl);
		ck_assert_uint_le((size_t)(nl - line), LDIF_FOLD_COLUMN);
		if (lines > 1 && nl > line)
			ck_assert_int_eq(line[0], ' ');
		line = nl + 1;
	}
	/* dn, 13 + 400 = 413 bytes = 76 + 5*75 = 451 > 413: 1 + 5 lines, blank */
	ck_assert_uint_eq(lines, 1 + 6 + 1);
	/* The first line carries 63 value bytes, the next starts with byte 63. */
	const char *first = out + strlen("dn: cn=a\n");
	ck_assert_int_eq(strncmp(first, "description: ", 13), 0);
	ck_assert_int_eq(first[76], '\n');
	ck_assert_int_eq(first[77], ' ');
	ck_assert_int_eq(first[78], value[63]);
	free(out);

	/* "cn: " + 72 bytes is exactly 76 columns: no fold. */
	char exact[72 + 1];
	memset(exact, 'e', 72);
	exact[72] = '\0';
	attributes[0].description = VIEW("cn");
	attributes[0].value = (struct ber_view){ (const uint8_t *)exact, 72 };
	out = write_to_string(&rec, 1, &len);
	ck_assert_uint_eq(len, strlen("dn: cn=a\n") + 76 + 1 + 1);
	free(out);
}
END_TEST

/* Deterministic pseudo-random bytes (xorshift), so failures reproduce. */
static uint32_t random_state = 0x12345678u;

static uint32_t next_random(void)
{
	random_state ^= random_state << 13;
	random_state ^= random_state >> 17;
	random_state ^= random_state << 5;
	return random_state;
}

static struct ber_view random_value(struct arena *a, size_t max_len)
{
	size_t len = next_random() % (max_len + 1);
	uint8_t *p = arena_alloc(a, len + 1);
	ck_assert_ptr_nonnull(p);
	int flavour = (int)(next_random() % 3);
	for (size_t i = 0; i < len; i++) {
		uint32_t x = next_random();
		/* Mix fully random bytes with mostly printable text and edge spaces. */
		p[i] = flavour == 0 ? (uint8_t)x : flavour == 1 ? (uint8_t)(' ' + x % 95)
				  : (uint8_t)(x % 4 == 0 ? ' ' : 'a' + x % 26);
	}
	return (struct ber_view){ p, len };
}

static void assert_same_view(struct ber_view a, struct ber_view b)
{
	ck_assert_uint_eq(a.len, b.len);
	if (a.len > 0)
		ck_assert_mem_eq(a.ptr, b.ptr, a.len);
}

static void assert_same_record(const struct ldif_record *a, const struct ldif_record *b)
{
	ck_assert_int_eq(a->kind, b->kind);
	assert_same_view(a->dn, b->dn);
	ck_assert_uint_eq(a->n_controls, b->n_controls);
	for (size_t i = 0; i < a->n_controls; i++) {
		assert_same_view(a->controls[i].oid, b->controls[i].oid);
		ck_assert_int_eq(a->controls[i].critical, b->controls[i].critical);
		ck_assert_int_eq(a->controls[i].has_value, b->controls[i].has_value);
		assert_same_view(a->controls[i].value, b->controls[i].value);
	}
	ck_assert_uint_eq(a->n_attributes, b->n_attributes);
	for (size_t i = 0; i < a->n_attributes; i++) {
		assert_same_view(a->attributes[i].description, b->attributes[i].description);
		assert_same_view(a->attributes[i].value, b->attributes[i].value);
	}
	ck_assert_uint_eq(a->n_modifications, b->n_modifications);
	for (size_t i = 0; i < a->n_modifications; i++) {
		ck_assert_int_eq(a->modifications[i].op, b->modifications[i].op);
		assert_same_view(a->modifications[i].description, b->modifications[i].description);
		ck_assert_uint_eq(a->modifications[i].n_values, b->modifications[i].n_values);
		for (size_t j = 0; j < a->modifications[i].n_values; j++)
			assert_same_view(a->modifications[i].values[j], b->modifications[i].values[j]);
	}
	assert_same_view(a->new_rdn, b->new_rdn);
	ck_assert_int_eq(a->delete_old_rdn, b->delete_old_rdn);
	ck_assert_int_eq(a->has_new_superior, b->has_new_superior);
	assert_same_view(a->new_superior, b->new_superior);
}

static void random_record(struct arena *a, struct ldif_record *rec)
{
	static const char *const names[] = { "cn", "jpegPhoto;binary", "description;lang-de",
					     "2.5.4.3", "userPassword" };
	memset(rec, 0, sizeof(*rec));
	rec->kind = (enum ldif_record_kind)(next_random() % 5);
	rec->dn = random_value(a, 120);
	size_t n = 1 + next_random() % 6;
	if (rec->kind != LDIF_CONTENT && next_random() % 2) {
		rec->controls = arena_calloc(a, 1, sizeof(*rec->controls));
		rec->controls[0] = (struct ldif_control){ VIEW("1.3.6.1.4.1.4203.1.10.1"),
							  next_random() % 2 == 0, true,
							  random_value(a, 50) };
		rec->n_controls = 1;
	}
	switch (rec->kind) {
	case LDIF_CONTENT:
	case LDIF_CHANGE_ADD:
		rec->attributes = arena_alloc(a, n * sizeof(*rec->attributes));
		for (size_t i = 0; i < n; i++) {
			const char *name = names[next_random() % 5];
			rec->attributes[i].description = (struct ber_view){ (const uint8_t *)name,
									    strlen(name) };
			rec->attributes[i].value = random_value(a, 300);
		}
		rec->n_attributes = n;
		break;
	case LDIF_CHANGE_MODIFY:
		rec->modifications = arena_alloc(a, n * sizeof(*rec->modifications));
		for (size_t i = 0; i < n; i++) {
			struct ldif_modification *m = &rec->modifications[i];
			const char *name = names[next_random() % 5];
			m->op = (enum ldif_modify_op)(next_random() % 4);
			m->description = (struct ber_view){ (const uint8_t *)name, strlen(name) };
			m->n_values = next_random() % 3;
			m->values = arena_alloc(a, 3 * sizeof(*m->values));
			for (size_t j = 0; j < m->n_values; j++)
				m->values[j] = random_value(a, 100);
		}
		rec->n_modifications = n;
		break;
	case LDIF_CHANGE_MODDN:
		rec->new_rdn = random_value(a, 60);
		rec->delete_old_rdn = next_random() % 2;
		rec->has_new_superior = next_random() % 2;
		if (rec->has_new_superior)
			rec->new_superior = random_value(a, 60);
		break;
	case LDIF_CHANGE_DELETE:
		break;
	}
}

START_TEST(round_trip_random_records)
{
	enum { N = 300 };
	struct ldif_record *records = arena_alloc(&arena, N * sizeof(*records));
	for (size_t i = 0; i < N; i++)
		random_record(&arena, &records[i]);
	size_t len;
	char *text = write_to_string(records, N, &len);

	struct ldif_reader *r;
	ck_assert_int_eq(ldif_reader_open_memory(text, len, NULL, &r), LUMEN_OK);
	for (size_t i = 0; i < N; i++) {
		struct ldif_record back;
		int rc = ldif_read(r, &arena, &back);
		ck_assert_msg(rc == LUMEN_OK, "record %zu: %s", i, ldif_reader_error(r));
		assert_same_record(&records[i], &back);
	}
	struct ldif_record end;
	ck_assert_int_eq(ldif_read(r, &arena, &end), LDIF_END);
	ldif_reader_free(r);

	/* And through a FILE*: same bytes, same records. */
	FILE *fp = fmemopen(text, len, "r");
	ck_assert_ptr_nonnull(fp);
	ck_assert_int_eq(ldif_reader_open_file(fp, NULL, &r), LUMEN_OK);
	for (size_t i = 0; i < N; i++) {
		struct ldif_record back;
		ck_assert_int_eq(ldif_read(r, &arena, &back), LUMEN_OK);
		assert_same_record(&records[i], &back);
	}
	ck_assert_int_eq(ldif_read(r, &arena, &end), LDIF_END);
	ldif_reader_free(r);
	fclose(fp);
	free(text);
}
END_TEST

/* ----------------------------------------------------------------- base64 */

START_TEST(base64_vectors)
{
	static const struct { const char *plain, *encoded; } vectors[] = {
		{ "", "" }, { "f", "Zg==" }, { "fo", "Zm8=" }, { "foo", "Zm9v" },
		{ "foob", "Zm9vYg==" }, { "fooba", "Zm9vYmE=" }, { "foobar", "Zm9vYmFy" },
	};
	for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
		char enc[16];
		uint8_t dec[16];
		size_t n = strlen(vectors[i].plain), out;
		ck_assert_uint_eq(base64_encoded_length(n), strlen(vectors[i].encoded));
		base64_encode((const uint8_t *)vectors[i].plain, n, enc);
		ck_assert_mem_eq(enc, vectors[i].encoded, strlen(vectors[i].encoded));
		ck_assert_int_eq(base64_decode(vectors[i].encoded, strlen(vectors[i].encoded),
					       dec, &out), LUMEN_OK);
		ck_assert_uint_eq(out, n);
		ck_assert_mem_eq(dec, vectors[i].plain, n);
	}
	static const char *const bad[] = { "Zg=", "Zg", "Z===", "=Zm9", "Zm=v", "Zh==", "Zm9=",
					   "Zm9v Zm9v", "Zm9\n", "Zg==Zg==" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint8_t dec[16];
		size_t out;
		ck_assert_msg(base64_decode(bad[i], strlen(bad[i]), dec, &out) == LUMEN_EMALFORMED,
			      "'%s' accepted", bad[i]);
	}
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("ldif");
	TCase *tc = tcase_create("reader");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, rfc_example1_two_entries);
	tcase_add_test(tc, rfc_example2_folded_no_space);
	tcase_add_test(tc, rfc_example3_base64_value);
	tcase_add_test(tc, rfc_example4_utf8_and_options);
	tcase_add_test(tc, rfc_example5_url_refused_by_default);
	tcase_add_test(tc, rfc_example5_url_when_enabled);
	tcase_add_test(tc, rfc_example6_change_records);
	tcase_add_test(tc, rfc_example7_control);
	tcase_add_test(tc, folding_at_end_of_file_without_newline);
	tcase_add_test(tc, crlf_comments_and_blank_runs);
	tcase_add_test(tc, empty_input_and_version_only);
	tcase_add_loop_test(tc, malformed_records, 0,
			    (int)(sizeof(bad_records) / sizeof(bad_records[0])));
	tcase_add_test(tc, record_over_bound);
	tcase_add_test(tc, file_input_long_lines_and_many_records);
	suite_add_tcase(s, tc);

	tc = tcase_create("writer");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, writer_base64_rules);
	tcase_add_test(tc, writer_output_exact);
	tcase_add_test(tc, writer_folds_at_76);
	tcase_add_test(tc, round_trip_random_records);
	tcase_add_test(tc, base64_vectors);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
