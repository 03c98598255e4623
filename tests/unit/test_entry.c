/* test_entry.c — entries: building, mutation, object classes, binary form. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "entry.h"
#include "entry_fixture.h"

static const char *const person_lines =
	"objectClass: top\n"
	"objectClass: inetOrgPerson\n"
	"cn: Barbara Jensen\n"
	"cn: Babs Jensen\n"
	"sn: Jensen\n"
	"uid: bjensen\n"
	"description: Ärger im Büro\n";

static struct entry *person(void)
{
	return fixture_entry("uid=bjensen,ou=People,dc=example,dc=com", person_lines);
}

static struct attribute_description ad_of(const char *text)
{
	struct attribute_description ad;
	ck_assert_int_eq(attribute_description_parse(fixture_schema, text, strlen(text), &ad),
			 LUMEN_OK);
	return ad;
}

START_TEST(create_and_find)
{
	struct entry *e = person();
	ck_assert_str_eq((const char *)e->dn.ptr, "uid=bjensen,ou=People,dc=example,dc=com");
	ck_assert_str_eq((const char *)e->ndn.ptr, "uid=bjensen,ou=people,dc=example,dc=com");
	struct attribute_description cn = ad_of("commonName");
	const struct entry_attribute *a = entry_find(e, &cn);
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(a->n_values, 2);
	ck_assert_int_eq((int)a->name.len, 2);
	ck_assert_int_eq(memcmp(a->name.ptr, "cn", 2), 0);
	ck_assert_ptr_eq(entry_find_type(e, cn.type), a);
	struct attribute_description cn_de = ad_of("cn;lang-de");
	ck_assert_ptr_null(entry_find(e, &cn_de));
	entry_free(e);
}
END_TEST

START_TEST(duplicate_values_rejected)
{
	struct entry *e = person();
	struct attribute_description cn = ad_of("cn");
	struct ber_view dup[] = { fixture_view("new one"), fixture_view("  BABS   jensen ") };
	size_t bad = 99;
	ck_assert_int_eq(entry_add_values(e, &cn, dup, 2, &bad), LUMEN_EEXIST);
	ck_assert_uint_eq(bad, 1);
	ck_assert_uint_eq(entry_find(e, &cn)->n_values, 2); /* all or nothing */
	struct ber_view twice[] = { fixture_view("x"), fixture_view("X") };
	ck_assert_int_eq(entry_add_values(e, &cn, twice, 2, &bad), LUMEN_EEXIST);
	ck_assert_int_eq(entry_add_values(e, &cn, twice, 0, &bad), LUMEN_EINVAL);
	entry_free(e);
}
END_TEST

START_TEST(unnormalizable_value)
{
	struct entry *e = person();
	struct attribute_description num = ad_of("uidNumber");
	struct ber_view v = fixture_view("abc");
	size_t bad = 9;
	ck_assert_int_eq(entry_add_values(e, &num, &v, 1, &bad), LUMEN_ESCHEMA);
	ck_assert_uint_eq(bad, 0);
	ck_assert_ptr_null(entry_find(e, &num));
	entry_free(e);
}
END_TEST

START_TEST(delete_and_replace)
{
	struct entry *e = person();
	struct attribute_description cn = ad_of("cn"), sn = ad_of("sn"), ou = ad_of("ou");
	struct ber_view babs = fixture_view("babs jensen"), nope = fixture_view("nope");
	ck_assert_int_eq(entry_delete_values(e, &cn, &nope, 1, NULL), LUMEN_ENOTFOUND);
	ck_assert_uint_eq(entry_find(e, &cn)->n_values, 2);
	ck_assert_int_eq(entry_delete_values(e, &cn, &babs, 1, NULL), LUMEN_OK);
	ck_assert_uint_eq(entry_find(e, &cn)->n_values, 1);
	ck_assert_int_eq(entry_delete_values(e, &sn, NULL, 0, NULL), LUMEN_OK);
	ck_assert_ptr_null(entry_find(e, &sn));
	ck_assert_int_eq(entry_delete_values(e, &ou, NULL, 0, NULL), LUMEN_ENOTFOUND);
	struct ber_view r[] = { fixture_view("A"), fixture_view("B") };
	ck_assert_int_eq(entry_replace_values(e, &cn, r, 2, NULL), LUMEN_OK);
	ck_assert_uint_eq(entry_find(e, &cn)->n_values, 2);
	struct ber_view rdup[] = { fixture_view("A"), fixture_view("a") };
	ck_assert_int_eq(entry_replace_values(e, &cn, rdup, 2, NULL), LUMEN_EEXIST);
	ck_assert_uint_eq(entry_find(e, &cn)->n_values, 2); /* unchanged */
	ck_assert_int_eq(entry_replace_values(e, &cn, NULL, 0, NULL), LUMEN_OK);
	ck_assert_ptr_null(entry_find(e, &cn));
	ck_assert_int_eq(entry_replace_values(e, &ou, NULL, 0, NULL), LUMEN_OK);
	entry_free(e);
}
END_TEST

/* fuzz_backend_ops: a description without options may have a NULL view;
 * comparing its options did NULL + 0 (clang's UBSan; gcc does not flag it). */
START_TEST(options_view_without_pointer)
{
	struct entry *e = person();
	struct attribute_description cn = ad_of("cn");
	struct ber_view babs = fixture_view("babs jensen");
	cn.options = (struct ber_view){ NULL, 0 };
	ck_assert_ptr_nonnull(entry_find(e, &cn));
	ck_assert_int_eq(entry_delete_values(e, &cn, &babs, 1, NULL), LUMEN_OK);
	ck_assert_uint_eq(entry_find(e, &cn)->n_values, 1);
	entry_free(e);
}
END_TEST

START_TEST(has_value_and_subtypes)
{
	struct entry *e = person();
	struct arena a;
	arena_init(&a, 0);
	bool found = false;
	struct attribute_description cn = ad_of("cn"), name = ad_of("name");
	ck_assert_int_eq(entry_has_value(e, &cn, fixture_view("BARBARA  JENSEN"), &a, &found), LUMEN_OK);
	ck_assert(found);
	ck_assert_int_eq(entry_has_value(e, &cn, fixture_view("Barbara"), &a, &found), LUMEN_OK);
	ck_assert(!found);
	ck_assert_int_eq(entry_has_value(e, &name, fixture_view("jensen"), &a, &found), LUMEN_OK);
	ck_assert(found); /* sn is a subtype of name */
	struct attribute_description num = ad_of("uidNumber");
	ck_assert_int_eq(entry_has_value(e, &num, fixture_view("x"), &a, &found), LUMEN_ESCHEMA);
	/* case folding beyond ASCII */
	struct attribute_description d = ad_of("description");
	ck_assert_int_eq(entry_has_value(e, &d, fixture_view("ÄRGER IM BÜRO"), &a, &found), LUMEN_OK);
	ck_assert(found);
	arena_free(&a);
	entry_free(e);
}
END_TEST

START_TEST(object_class_expansion)
{
	struct entry *e = person();
	const char *classes[] = { "top", "person", "organizationalPerson", "inetOrgPerson" };
	for (size_t i = 0; i < 4; i++) {
		const struct object_class *oc = schema_object_class(fixture_schema, classes[i],
								    strlen(classes[i]));
		ck_assert_ptr_nonnull(oc);
		ck_assert_msg(entry_is_instance_of(e, oc), "%s", classes[i]);
	}
	ck_assert(!entry_is_instance_of(e, schema_object_class(fixture_schema, "device", 6)));
	ck_assert_str_eq(object_class_name(e->structural), "inetOrgPerson");
	ck_assert(!e->two_structural);
	/* dropping the class drops the expansion */
	struct attribute_description oc = ad_of("objectClass");
	struct ber_view iop = fixture_view("inetorgperson");
	ck_assert_int_eq(entry_delete_values(e, &oc, &iop, 1, NULL), LUMEN_OK);
	ck_assert(!entry_is_instance_of(e, schema_object_class(fixture_schema, "person", 6)));
	ck_assert_ptr_null(e->structural);
	entry_free(e);
}
END_TEST

START_TEST(increment)
{
	struct entry *e = fixture_entry("cn=x", "objectClass: device\ncn: x\nuidNumber: 41\n");
	struct attribute_description num = ad_of("uidNumber"), cn = ad_of("cn");
	ck_assert_int_eq(entry_increment(e, &num, fixture_view("1")), LUMEN_OK);
	ck_assert_int_eq(memcmp(entry_find(e, &num)->values[0].value.ptr, "42", 2), 0);
	ck_assert_int_eq(entry_increment(e, &num, fixture_view("-50")), LUMEN_OK);
	ck_assert_int_eq((int)entry_find(e, &num)->values[0].value.len, 2);
	ck_assert_int_eq(memcmp(entry_find(e, &num)->values[0].value.ptr, "-8", 2), 0);
	static const struct { const char *delta; int rc; } bad[] = {
		{ "", LUMEN_EMALFORMED }, { "1x", LUMEN_EMALFORMED }, { "-", LUMEN_EMALFORMED },
		{ "99999999999999999999", LUMEN_ELIMIT }, { "9223372036854775807", LUMEN_ELIMIT },
	};
	ck_assert_int_eq(entry_increment(e, &num, fixture_view("16")), LUMEN_OK);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(entry_increment(e, &num, fixture_view(bad[i].delta)) == bad[i].rc,
			      "%s", bad[i].delta);
	ck_assert_int_eq(memcmp(entry_find(e, &num)->values[0].value.ptr, "8", 1), 0);
	ck_assert_int_eq(entry_increment(e, &cn, fixture_view("1")), LUMEN_EUNSUPPORTED);
	struct attribute_description gid = ad_of("gidNumber");
	ck_assert_int_eq(entry_increment(e, &gid, fixture_view("1")), LUMEN_ENOTFOUND);
	entry_free(e);
}
END_TEST

static void expect_same(const struct entry *a, const struct entry *b)
{
	ck_assert_str_eq((const char *)a->dn.ptr, (const char *)b->dn.ptr);
	ck_assert_str_eq((const char *)a->ndn.ptr, (const char *)b->ndn.ptr);
	ck_assert_uint_eq(a->n_attributes, b->n_attributes);
	for (size_t i = 0; i < a->n_attributes; i++) {
		const struct entry_attribute *x = &a->attributes[i], *y = &b->attributes[i];
		ck_assert_ptr_eq(x->desc.type, y->desc.type);
		ck_assert_uint_eq(x->name.len, y->name.len);
		ck_assert_int_eq(memcmp(x->name.ptr, y->name.ptr, x->name.len), 0);
		ck_assert_uint_eq(x->n_values, y->n_values);
		for (size_t j = 0; j < x->n_values; j++) {
			ck_assert_uint_eq(x->values[j].value.len, y->values[j].value.len);
			ck_assert_int_eq(memcmp(x->values[j].value.ptr, y->values[j].value.ptr,
						x->values[j].value.len), 0);
			ck_assert_uint_eq(x->values[j].normalized.len, y->values[j].normalized.len);
			ck_assert_int_eq(memcmp(x->values[j].normalized.ptr, y->values[j].normalized.ptr,
						x->values[j].normalized.len), 0);
		}
	}
	ck_assert_ptr_eq(a->structural, b->structural);
}

START_TEST(dup_is_deep)
{
	struct entry *e = person();
	struct entry *copy = NULL;
	ck_assert_int_eq(entry_dup(e, &copy), LUMEN_OK);
	expect_same(e, copy);
	ck_assert_ptr_ne(copy->attributes[0].values[0].value.ptr, e->attributes[0].values[0].value.ptr);
	ck_assert_int_eq(entry_add_text(copy, "cn", "third"), LUMEN_OK);
	struct attribute_description cn = ad_of("cn");
	ck_assert_uint_eq(entry_find(e, &cn)->n_values, 2);
	ck_assert_uint_eq(entry_find(copy, &cn)->n_values, 3);
	entry_free(e);
	entry_free(copy);
}
END_TEST

START_TEST(encode_decode_round_trip)
{
	struct entry *e = person();
	ck_assert_int_eq(entry_add_text(e, "cn;lang-de", "Bärbel"), LUMEN_OK);
	struct ber_writer w;
	ck_assert_int_eq(ber_writer_init(&w, 0, 0), LUMEN_OK);
	ck_assert_int_eq(entry_encode(e, &w), LUMEN_OK);
	struct entry *d = NULL;
	ck_assert_int_eq(entry_decode(fixture_schema, w.buf, w.len, NULL, &d), LUMEN_OK);
	expect_same(e, d);
	/* each decoded attribute carries its PartialAttribute for memcpy */
	for (size_t i = 0; i < d->n_attributes; i++)
		ck_assert_uint_gt(d->attributes[i].encoded.len, 0);
	ck_assert_int_eq(d->attributes[5].desc.options.len, 7);
	/* re-encoding the decoded entry gives the same bytes */
	struct ber_writer w2;
	ck_assert_int_eq(ber_writer_init(&w2, 0, 0), LUMEN_OK);
	ck_assert_int_eq(entry_encode(d, &w2), LUMEN_OK);
	ck_assert_uint_eq(w.len, w2.len);
	ck_assert_int_eq(memcmp(w.buf, w2.buf, w.len), 0);
	/* the walker sees the same attributes without decoding */
	struct entry_record rec;
	struct entry_record_attribute ra;
	ck_assert_int_eq(entry_record_open(w.buf, w.len, &rec), LUMEN_OK);
	ck_assert_uint_eq(rec.ndn.len, e->ndn.len);
	size_t n = 0;
	int more;
	while ((more = entry_record_next(&rec, &ra)) == 1) {
		ck_assert_uint_eq(ra.description.len, e->attributes[n].name.len);
		n++;
	}
	ck_assert_int_eq(more, 0);
	ck_assert_uint_eq(n, e->n_attributes);
	/* a modified decoded entry re-encodes the changed attribute */
	ck_assert_int_eq(entry_add_text(d, "sn", "Other"), LUMEN_OK);
	ber_writer_reset(&w2);
	ck_assert_int_eq(entry_encode(d, &w2), LUMEN_OK);
	struct entry *d2 = NULL;
	ck_assert_int_eq(entry_decode(fixture_schema, w2.buf, w2.len, NULL, &d2), LUMEN_OK);
	expect_same(d, d2);
	ber_writer_free(&w);
	ber_writer_free(&w2);
	entry_free(e);
	entry_free(d);
	entry_free(d2);
}
END_TEST

/*
 * Records denser than decoding's first guess (which sizes its arrays from
 * the record's length): many short values, and many short attributes,
 * are counted and decoded again, whole.
 */
START_TEST(dense_records_round_trip)
{
	struct entry *many_values = fixture_entry("cn=x,dc=example,dc=com", "objectClass: top\n");
	char value[16];
	for (int i = 0; i < 300; i++) {
		snprintf(value, sizeof(value), "%d", i);
		ck_assert_int_eq(entry_add_text(many_values, "description", value), LUMEN_OK);
	}
	/* short descriptions with options: 40 attributes of about 14 bytes */
	struct entry *many_types = fixture_entry("cn=y,dc=example,dc=com", "objectClass: top\n");
	for (int i = 0; i < 40; i++) {
		snprintf(value, sizeof(value), "l;x-%d", i);
		ck_assert_int_eq(entry_add_text(many_types, value, "1"), LUMEN_OK);
	}
	struct entry *cases[] = { many_values, many_types };
	for (size_t c = 0; c < 2; c++) {
		struct ber_writer w;
		struct entry *d = NULL;
		ck_assert_int_eq(ber_writer_init(&w, 0, 0), LUMEN_OK);
		ck_assert_int_eq(entry_encode(cases[c], &w), LUMEN_OK);
		ck_assert_int_eq(entry_decode(fixture_schema, w.buf, w.len, NULL, &d), LUMEN_OK);
		expect_same(cases[c], d);
		entry_free(d);
		ber_writer_free(&w);
		entry_free(cases[c]);
	}
}
END_TEST

/* The record of e, decoded keeping the selected types only. */
static struct entry *decode_only(const struct entry *e, const char *const *names, size_t n)
{
	const struct attribute_type *types[8];
	for (size_t i = 0; i < n; i++)
		types[i] = ad_of(names[i]).type;
	struct entry_selection only = { types, n, false };
	struct ber_writer w;
	struct entry *d = NULL;
	ck_assert_int_eq(ber_writer_init(&w, 0, 0), LUMEN_OK);
	ck_assert_int_eq(entry_encode(e, &w), LUMEN_OK);
	ck_assert_int_eq(entry_decode_selected(fixture_schema, w.buf, w.len, true, &only, NULL, &d),
			 LUMEN_OK);
	ber_writer_free(&w);
	return d;
}

/* Every attribute of `part` is e's, values and forms alike. */
static void expect_subset(const struct entry *e, const struct entry *part)
{
	ck_assert(ber_view_eq(e->dn, part->dn) && ber_view_eq(e->ndn, part->ndn));
	for (size_t i = 0; i < part->n_attributes; i++) {
		const struct entry_attribute *a = &part->attributes[i];
		const struct entry_attribute *full = entry_find(e, &a->desc);
		ck_assert_ptr_nonnull(full);
		ck_assert_uint_eq(a->n_values, full->n_values);
		for (size_t v = 0; v < a->n_values; v++) {
			ck_assert(ber_view_eq(a->values[v].value, full->values[v].value));
			ck_assert(ber_view_eq(a->values[v].normalized, full->values[v].normalized));
		}
	}
}

/*
 * Lengths either side of 128, where a BER length takes a second byte: the
 * walker reads an attribute whose lengths are all short with byte compares
 * and any other element by element. Each value length from 100 to 140 puts
 * the value, the SET, the attribute and its stored forms on either side at
 * different points; every one decodes to the entry, the walker's views
 * cover the attribute exactly, and a partial decode finds what follows it.
 */
START_TEST(record_lengths_around_128)
{
	for (size_t len = 100; len <= 140; len++) {
		char value[160];
		memset(value, 'a', len);
		value[len] = '\0';
		value[0] = 'A';   /* the stored form differs: the forms are as long */
		struct entry *e = fixture_entry("cn=x,dc=example,dc=com", "objectClass: top\n");
		ck_assert_int_eq(entry_add_text(e, "description", value), LUMEN_OK);
		ck_assert_int_eq(entry_add_text(e, "sn", "after"), LUMEN_OK);
		struct ber_writer w;
		struct entry *d = NULL;
		ck_assert_int_eq(ber_writer_init(&w, 0, 0), LUMEN_OK);
		ck_assert_int_eq(entry_encode(e, &w), LUMEN_OK);
		ck_assert_int_eq(entry_decode_stored(fixture_schema, w.buf, w.len, true, NULL, &d),
				 LUMEN_OK);
		expect_same(e, d);
		struct entry_record rec;
		struct entry_record_attribute ra;
		ck_assert_int_eq(entry_record_open(w.buf, w.len, &rec), LUMEN_OK);
		for (size_t i = 0; i < e->n_attributes; i++) {
			ck_assert_int_eq(entry_record_next(&rec, &ra), 1);
			ck_assert(ber_view_eq(ra.description, e->attributes[i].name));
			ck_assert(ber_view_eq(ra.encoded, d->attributes[i].encoded));
			size_t header = ra.encoded.len - 2 < 128 ? 2 : 3;
			ck_assert_ptr_eq(ra.description.ptr, ra.encoded.ptr + header + 2);
			ck_assert(ra.values.ptr + ra.values.len <= ra.encoded.ptr + ra.encoded.len);
			ck_assert(ra.normalized.ptr >= ra.encoded.ptr + ra.encoded.len);
		}
		ck_assert_int_eq(entry_record_next(&rec, &ra), 0);
		entry_free(d);
		const char *const after[] = { "sn" };
		d = decode_only(e, after, 1);
		ck_assert_uint_eq(d->n_attributes, 1);
		expect_subset(e, d);
		entry_free(d);
		ber_writer_free(&w);
		entry_free(e);
	}
}
END_TEST

/*
 * A partial decode keeps the selected types and their subtypes, in record
 * order, and nothing else; the DN always. A full decode right after still
 * has every attribute, and a truncated record is refused either way.
 */
START_TEST(selected_decode)
{
	struct entry *e = person();
	static const char *const name[] = { "name" }, *const uid[] = { "uid" },
				 *const two[] = { "description", "sn" };
	struct entry *d = decode_only(e, name, 1);       /* cn (2 values) and sn */
	ck_assert_uint_eq(d->n_attributes, 2);
	ck_assert_ptr_eq(d->attributes[0].desc.type, ad_of("cn").type);
	ck_assert_ptr_eq(d->attributes[1].desc.type, ad_of("sn").type);
	ck_assert_ptr_null(d->structural);                /* objectClass left out */
	expect_subset(e, d);
	entry_free(d);
	d = decode_only(e, uid, 1);
	ck_assert_uint_eq(d->n_attributes, 1);
	expect_subset(e, d);
	entry_free(d);
	d = decode_only(e, two, 2);
	ck_assert_uint_eq(d->n_attributes, 2);
	ck_assert_ptr_eq(d->attributes[0].desc.type, ad_of("sn").type);
	ck_assert_ptr_eq(d->attributes[1].desc.type, ad_of("description").type);
	expect_subset(e, d);
	entry_free(d);
	d = decode_only(e, NULL, 0);                      /* the DN alone */
	ck_assert_uint_eq(d->n_attributes, 0);
	expect_subset(e, d);
	entry_free(d);
	/* a full decode right after sees every attribute at its position */
	struct ber_writer w;
	ck_assert_int_eq(ber_writer_init(&w, 0, 0), LUMEN_OK);
	ck_assert_int_eq(entry_encode(e, &w), LUMEN_OK);
	ck_assert_int_eq(entry_decode_selected(fixture_schema, w.buf, w.len, true, NULL, NULL, &d),
			 LUMEN_OK);
	expect_same(e, d);
	entry_free(d);
	/* framing is still checked for what is skipped */
	for (size_t len = 3; len < w.len; len++) {
		ck_assert_int_eq(entry_decode_selected(fixture_schema, w.buf, len, true,
						       &(struct entry_selection){ NULL, 0, false }, NULL,
						       &d), LUMEN_EMALFORMED);
		ck_assert_ptr_null(d);
	}
	ber_writer_free(&w);
	entry_free(e);
}
END_TEST

/* Many attributes, most skipped or most kept: both array sizings. */
START_TEST(selected_decode_dense)
{
	struct entry *e = fixture_entry("cn=y,dc=example,dc=com", "objectClass: top\n");
	char value[16];
	for (int i = 0; i < 60; i++) {
		snprintf(value, sizeof(value), "l;x-%d", i);
		ck_assert_int_eq(entry_add_text(e, value, "1"), LUMEN_OK);
	}
	ck_assert_int_eq(entry_add_text(e, "description", "last"), LUMEN_OK);
	static const char *const locality[] = { "l" }, *const description[] = { "description" };
	struct entry *d = decode_only(e, locality, 1);
	ck_assert_uint_eq(d->n_attributes, 60);
	expect_subset(e, d);
	entry_free(d);
	d = decode_only(e, description, 1);
	ck_assert_uint_eq(d->n_attributes, 1);
	expect_subset(e, d);
	entry_free(d);
	entry_free(e);
}
END_TEST

/* The record of e decoded whole and, with an outline, keeping `types`. */
static void decode_outline(const struct entry *e, const struct attribute_type *const *types,
			   size_t n, struct entry **whole, struct entry **part)
{
	struct entry_selection only = { types, n, true };
	struct ber_writer w;
	ck_assert_int_eq(ber_writer_init(&w, 0, 0), LUMEN_OK);
	ck_assert_int_eq(entry_encode(e, &w), LUMEN_OK);
	ck_assert_int_eq(entry_decode_selected(fixture_schema, w.buf, w.len, true, NULL, NULL, whole),
			 LUMEN_OK);
	ck_assert_int_eq(entry_decode_selected(fixture_schema, w.buf, w.len, true, &only, NULL, part),
			 LUMEN_OK);
	for (size_t len = 3; len < w.len; len += 7) {
		struct entry *cut = NULL;
		ck_assert_int_eq(entry_decode_selected(fixture_schema, w.buf, len, true, &only, NULL,
						       &cut), LUMEN_EMALFORMED);
		ck_assert_ptr_null(cut);
	}
	ber_writer_free(&w);
}

/* A view inside the entry's own copy of its record. */
static bool in_record(const struct entry *e, struct ber_view v)
{
	return v.ptr >= e->record.ptr && v.ptr + v.len <= e->record.ptr + e->record.len;
}

/* The outline lists every stored attribute as the whole decode has it:
 * type, options, description and encoded bytes, in order, pointing into
 * the entry's copy of the record (the caller's buffer is gone by now). */
static void expect_outline_of(const struct entry *whole, const struct entry *part)
{
	ck_assert_ptr_nonnull(part->outline);
	ck_assert_uint_eq(part->n_outline, whole->n_attributes);
	ck_assert_uint_gt(part->record.len, 0);
	for (size_t i = 0; i < part->n_outline; i++) {
		const struct entry_outline_attribute *o = &part->outline[i];
		const struct entry_attribute *a = &whole->attributes[i];
		ck_assert_ptr_eq(o->desc.type, a->desc.type);
		ck_assert(ber_view_eq(o->desc.options, a->desc.options));
		ck_assert(ber_view_eq(o->name, a->name));
		ck_assert(a->encoded.len > 0 && ber_view_eq(o->encoded, a->encoded));
		ck_assert(in_record(part, o->name) && in_record(part, o->encoded));
	}
}

/*
 * An outline comes with the selected attributes decoded as without one;
 * with none selected it still lists them all. A record with more
 * attributes than the first pass's estimate is staged again, outline
 * included. Whole decodes, partial ones without it and copies have none.
 * entry_decode_whole gives back the whole entry, under the DN it has now.
 */
START_TEST(selected_decode_outline)
{
	struct entry *e = person(), *whole, *part;
	const struct attribute_type *name[] = { ad_of("name").type };
	decode_outline(e, name, 1, &whole, &part);
	expect_outline_of(whole, part);
	ck_assert_uint_eq(part->n_attributes, 2);       /* cn and sn */
	expect_subset(e, part);
	ck_assert_ptr_null(whole->outline);
	struct entry *copy, *again;
	ck_assert_int_eq(entry_decode_whole(whole, &again), LUMEN_EINVAL);
	ck_assert_int_eq(entry_decode_whole(part, &again), LUMEN_OK);
	expect_same(e, again);
	ck_assert_ptr_null(again->outline);
	entry_free(again);
	/* a DN corrected after the read (a rename above it) is the one kept */
	ck_assert_int_eq(entry_set_dn(part, fixture_view("uid=moved,dc=example,dc=com"),
				      (struct ber_view){ NULL, 0 }), LUMEN_OK);
	ck_assert_int_eq(entry_decode_whole(part, &again), LUMEN_OK);
	ck_assert(ber_view_eq_str(again->dn, "uid=moved,dc=example,dc=com"));
	ck_assert_uint_eq(again->n_attributes, whole->n_attributes);
	entry_free(again);
	ck_assert_int_eq(entry_dup(part, &copy), LUMEN_OK);
	ck_assert_ptr_null(copy->outline);
	entry_free(copy);
	entry_free(whole);
	entry_free(part);
	decode_outline(e, NULL, 0, &whole, &part);
	expect_outline_of(whole, part);
	ck_assert_uint_eq(part->n_attributes, 0);
	entry_free(whole);
	entry_free(part);
	static const char *const uid[] = { "uid" };
	part = decode_only(e, uid, 1);
	ck_assert_ptr_null(part->outline);
	entry_free(part);
	entry_free(e);

	e = fixture_entry("cn=y,dc=example,dc=com", "objectClass: top\n");
	char value[16];
	for (int i = 0; i < 300; i++) {
		snprintf(value, sizeof(value), "l;x-%d", i);
		ck_assert_int_eq(entry_add_text(e, value, "1"), LUMEN_OK);
	}
	const struct attribute_type *object_class[] = { ad_of("objectClass").type };
	decode_outline(e, object_class, 1, &whole, &part);
	expect_outline_of(whole, part);
	ck_assert_uint_eq(part->n_outline, 301);
	ck_assert_uint_eq(part->n_attributes, 1);
	entry_free(whole);
	entry_free(part);
	entry_free(e);
}
END_TEST

/*
 * Version 2 records carry the normalized forms: trusted, a read takes them
 * as stored (a planted one shows it); untrusted, it computes them again.
 * Version 1 records (no forms) still decode. A form list that does not
 * match the values one for one, or an unknown form tag, is corrupt.
 */
START_TEST(stored_normalized_forms)
{
	struct entry *e = person();
	struct attribute_description sn = ad_of("sn");
	struct entry_attribute *a = (struct entry_attribute *)entry_find(e, &sn);
	a->values[0].normalized = fixture_view("planted");
	struct ber_writer w;
	ck_assert_int_eq(ber_writer_init(&w, 0, 0), LUMEN_OK);
	ck_assert_int_eq(entry_encode(e, &w), LUMEN_OK);
	struct entry *trusted = NULL, *computed = NULL;
	ck_assert_int_eq(entry_decode_stored(fixture_schema, w.buf, w.len, true, NULL, &trusted),
			 LUMEN_OK);
	ck_assert_int_eq(entry_decode_stored(fixture_schema, w.buf, w.len, false, NULL, &computed),
			 LUMEN_OK);
	struct ber_view planted = entry_find(trusted, &sn)->values[0].normalized;
	ck_assert(planted.len == 7 && memcmp(planted.ptr, "planted", 7) == 0);
	struct ber_view real = entry_find(computed, &sn)->values[0].normalized;
	ck_assert(real.len == 6 && memcmp(real.ptr, "jensen", 6) == 0);
	/* the other values agree either way (same-as-value forms included) */
	struct attribute_description uid = ad_of("uid");
	ck_assert_ptr_eq(entry_find(trusted, &uid)->values[0].normalized.ptr,
			 entry_find(trusted, &uid)->values[0].value.ptr);
	entry_free(trusted);
	entry_free(computed);
	ber_writer_free(&w);
	entry_free(e);

	/* version 1: cn: x, normalized on read even when trusted */
	static const char v1[] = "L1\x04\x00\x04\x00\x30\x0b\x30\x09\x04\x02" "cn\x31\x03\x04\x01X";
	ck_assert_int_eq(entry_decode_stored(fixture_schema, v1, sizeof(v1) - 1, true, NULL,
					     &trusted), LUMEN_OK);
	ck_assert(trusted->attributes[0].values[0].normalized.len == 1 &&
		  trusted->attributes[0].values[0].normalized.ptr[0] == 'x');
	entry_free(trusted);

	static const struct { const char *name, *bytes; size_t len; } bad[] = {
		{ "fewer forms than values",
		  "L2\x04\x00\x04\x00\x30\x0d\x30\x09\x04\x02" "cn\x31\x03\x04\x01X\xa0\x00", 21 },
		{ "more forms than values",
		  "L2\x04\x00\x04\x00\x30\x11\x30\x09\x04\x02" "cn\x31\x03\x04\x01X\xa0\x04\x81\x00\x81\x00", 25 },
		{ "unknown form tag",
		  "L2\x04\x00\x04\x00\x30\x0f\x30\x09\x04\x02" "cn\x31\x03\x04\x01X\xa0\x02\x83\x00", 23 },
		{ "same-as-value with contents",
		  "L2\x04\x00\x04\x00\x30\x10\x30\x09\x04\x02" "cn\x31\x03\x04\x01X\xa0\x03\x81\x01x", 24 },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct entry *d = (struct entry *)1;
		ck_assert_msg(entry_decode_stored(fixture_schema, bad[i].bytes, bad[i].len, true, NULL,
						  &d) == LUMEN_EMALFORMED, "%s", bad[i].name);
		ck_assert_ptr_null(d);
		/* well framed: untrusted, the forms are not read at all */
		ck_assert_msg(entry_decode_stored(fixture_schema, bad[i].bytes, bad[i].len, false, NULL,
						  &d) == LUMEN_OK, "%s (untrusted)", bad[i].name);
		entry_free(d);
	}
}
END_TEST

/* Corrupt records: each must fail cleanly with the expected error. */
static const struct {
	const char *name;
	const char *bytes;
	size_t len;
	int rc;
} corrupt[] = {
	{ "empty", "", 0, LUMEN_EMALFORMED },
	{ "bad magic", "X1\x04\x00\x04\x00\x30\x00", 8, LUMEN_EMALFORMED },
	{ "bad version", "L3\x04\x00\x04\x00\x30\x00", 8, LUMEN_EMALFORMED },
	/* version 2: each PartialAttribute is followed by [0] { forms } */
	{ "v2 without forms", "L2\x04\x00\x04\x00\x30\x0b\x30\x09\x04\x02" "cn\x31\x03\x04\x01x",
	  19, LUMEN_EMALFORMED },
	{ "v2 forms not [0]", "L2\x04\x00\x04\x00\x30\x0f\x30\x09\x04\x02" "cn\x31\x03\x04\x01x"
	  "\x30\x02\x81\x00", 23, LUMEN_EMALFORMED },
	{ "magic only", "L1", 2, LUMEN_EMALFORMED },
	{ "dn length past end", "L1\x04\x09x", 5, LUMEN_EMALFORMED },
	{ "no ndn", "L1\x04\x01x", 5, LUMEN_EMALFORMED },
	{ "no attribute list", "L1\x04\x00\x04\x00", 6, LUMEN_EMALFORMED },
	{ "trailing bytes", "L1\x04\x00\x04\x00\x30\x00\x00", 9, LUMEN_EMALFORMED },
	{ "list not a sequence", "L1\x04\x00\x04\x00\x31\x00", 8, LUMEN_EMALFORMED },
	{ "attribute not a sequence", "L1\x04\x00\x04\x00\x30\x02\x04\x00", 10, LUMEN_EMALFORMED },
	{ "empty value set", "L1\x04\x00\x04\x00\x30\x08\x30\x06\x04\x02" "cn\x31\x00", 16,
	  LUMEN_EMALFORMED },
	{ "value not octets", "L1\x04\x00\x04\x00\x30\x0b\x30\x09\x04\x02" "cn\x31\x03\x02\x01\x01", 19,
	  LUMEN_EMALFORMED },
	{ "value past set", "L1\x04\x00\x04\x00\x30\x0b\x30\x09\x04\x02" "cn\x31\x03\x04\x05x", 19,
	  LUMEN_EMALFORMED },
	{ "empty description", "L1\x04\x00\x04\x00\x30\x09\x30\x07\x04\x00\x31\x03\x04\x01x", 17,
	  LUMEN_EMALFORMED },
	{ "bad description", "L1\x04\x00\x04\x00\x30\x0a\x30\x08\x04\x01!\x31\x03\x04\x01x", 18,
	  LUMEN_EMALFORMED },
	{ "unknown type", "L1\x04\x00\x04\x00\x30\x0e\x30\x0c\x04\x05zzzzz\x31\x03\x04\x01x", 22,
	  LUMEN_ENOTFOUND },
	{ "indefinite length", "L1\x04\x00\x04\x00\x30\x80\x00\x00", 10, LUMEN_EMALFORMED },
	{ "no value set", "L1\x04\x00\x04\x00\x30\x06\x30\x04\x04\x02" "cn", 14, LUMEN_EMALFORMED },
	{ "set past attribute", "L1\x04\x00\x04\x00\x30\x0c\x30\x09\x04\x02" "cn\x31\x04\x04\x01x\x00",
	  20, LUMEN_EMALFORMED },
	{ "description past attribute", "L1\x04\x00\x04\x00\x30\x0b\x30\x09\x04\x08" "cn\x31\x03\x04\x01x",
	  19, LUMEN_EMALFORMED },
	{ "v2 forms past record", "L2\x04\x00\x04\x00\x30\x0e\x30\x09\x04\x02" "cn\x31\x03\x04\x01x"
	  "\xa0\x02\x81", 22, LUMEN_EMALFORMED },
	{ "extra element in attribute",
	  "L1\x04\x00\x04\x00\x30\x0c\x30\x0a\x04\x02" "cn\x31\x03\x04\x01x\x05\x00", 20,
	  LUMEN_EMALFORMED },
};

START_TEST(corrupt_records)
{
	/* A buffer of the record's size exactly: a read past it is a fault
	 * under AddressSanitizer, not a look at the next literal. */
	uint8_t *bytes = malloc(corrupt[_i].len > 0 ? corrupt[_i].len : 1);
	ck_assert_ptr_nonnull(bytes);
	memcpy(bytes, corrupt[_i].bytes, corrupt[_i].len);
	struct entry *e = (struct entry *)1;
	int rc = entry_decode(fixture_schema, bytes, corrupt[_i].len, NULL, &e);
	ck_assert_msg(rc == corrupt[_i].rc, "%s: got %d", corrupt[_i].name, rc);
	ck_assert_ptr_null(e);
	free(bytes);
}
END_TEST

START_TEST(truncated_records)
{
	/* every strict prefix of a valid record is corrupt */
	struct entry *e = person();
	struct ber_writer w;
	ck_assert_int_eq(ber_writer_init(&w, 0, 0), LUMEN_OK);
	ck_assert_int_eq(entry_encode(e, &w), LUMEN_OK);
	for (size_t len = 0; len < w.len; len++) {
		uint8_t *copy = malloc(len ? len : 1);
		memcpy(copy, w.buf, len);
		struct entry *d = NULL;
		ck_assert_int_eq(entry_decode(fixture_schema, copy, len, NULL, &d), LUMEN_EMALFORMED);
		free(copy);
	}
	ber_writer_free(&w);
	entry_free(e);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("entry");
	TCase *tc = tcase_create("entry");
	tcase_add_checked_fixture(tc, fixture_schema_setup, fixture_schema_teardown);
	tcase_add_test(tc, create_and_find);
	tcase_add_test(tc, duplicate_values_rejected);
	tcase_add_test(tc, unnormalizable_value);
	tcase_add_test(tc, delete_and_replace);
	tcase_add_test(tc, options_view_without_pointer);
	tcase_add_test(tc, has_value_and_subtypes);
	tcase_add_test(tc, object_class_expansion);
	tcase_add_test(tc, increment);
	tcase_add_test(tc, dup_is_deep);
	tcase_add_test(tc, encode_decode_round_trip);
	tcase_add_test(tc, dense_records_round_trip);
	tcase_add_test(tc, record_lengths_around_128);
	tcase_add_test(tc, stored_normalized_forms);
	tcase_add_test(tc, selected_decode);
	tcase_add_test(tc, selected_decode_dense);
	tcase_add_test(tc, selected_decode_outline);
	tcase_add_loop_test(tc, corrupt_records, 0, (int)(sizeof(corrupt) / sizeof(corrupt[0])));
	tcase_add_test(tc, truncated_records);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
