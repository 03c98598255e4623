/*
 * fuzz_entry_record.c — libFuzzer target for the id2entry record decoder
 * (entry.h: entry_decode_stored, the record walker).
 *
 * fuzz-max-len: 16384
 *
 * A record comes from the database, but a damaged file must not crash the
 * server: every input is decoded trusting its stored normalized forms and
 * not. Invariants on a record that decodes: the walker sees as many
 * attributes; the entry re-encodes to a record that decodes again, under
 * both modes, to the same DN, attributes, values and normalized forms
 * (trusted: the forms just written; untrusted: computed again, which for
 * a version 2 input must equal what the trusted decode of the re-encoded
 * record holds); a decode that fails returns a documented error and no
 * entry. On every input the record walker agrees, attribute by attribute,
 * with the framing rules read again element by element (its byte-compare
 * path for short lengths must accept and refuse exactly what they do).
 * Seeds: tests/fuzz/corpus/fuzz_entry_record/ (records of version
 * 1 and 2 written by hand and by entry_encode).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_shipped_schema.h"
#include "entry.h"
#include "lumen_error.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct schema *schema;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{

	(void)argc;
	(void)argv;
	schema = fuzz_load_schema("fuzz_entry_record", fuzz_schema_files, 5);
	return 0;
}

static bool same(struct ber_view a, struct ber_view b)
{
	if (a.ptr == NULL || b.ptr == NULL)
		return a.ptr == b.ptr;
	return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

static void expect_same(const struct entry *a, const struct entry *b)
{
	if (!same(a->dn, b->dn) || !same(a->ndn, b->ndn) || a->n_attributes != b->n_attributes)
		abort();
	for (size_t i = 0; i < a->n_attributes; i++) {
		const struct entry_attribute *x = &a->attributes[i], *y = &b->attributes[i];
		if (x->desc.type != y->desc.type || !same(x->name, y->name) ||
		    x->n_values != y->n_values)
			abort();
		for (size_t j = 0; j < x->n_values; j++)
			if (!same(x->values[j].value, y->values[j].value) ||
			    !same(x->values[j].normalized, y->values[j].normalized))
				abort();
	}
}

static void check_walker(const uint8_t *data, size_t size, const struct entry *e)
{
	struct entry_record rec;
	struct entry_record_attribute a;
	size_t n = 0;
	int more;

	if (entry_record_open(data, size, &rec) != LUMEN_OK)
		abort();
	while ((more = entry_record_next(&rec, &a)) == 1)
		n++;
	if (more != 0 || n != e->n_attributes)
		abort();
}

/* The stored framing's tag for an attribute's normalized forms (version 2). */
#define STORED_FORMS_TAG BER_TAG(BER_CLASS_CONTEXT, 1, 0)

/* The next attribute's framing, read with the general readers alone. */
static int reference_next(struct ber_reader *list, bool has_normalized,
			  struct entry_record_attribute *out)
{
	if (ber_reader_at_end(list))
		return 0;
	const uint8_t *start = list->pos;
	struct ber_reader attr, values, forms;
	if (ber_enter_general(list, BER_TAG_SEQUENCE, &attr) != LUMEN_OK ||
	    ber_read_octets_general(&attr, BER_TAG_OCTET_STRING, &out->description) != LUMEN_OK ||
	    ber_enter_general(&attr, BER_TAG_SET, &values) != LUMEN_OK || !ber_reader_at_end(&attr))
		return LUMEN_EMALFORMED;
	out->encoded = (struct ber_view){ start, (size_t)(list->pos - start) };
	out->values = (struct ber_view){ values.pos, (size_t)(values.end - values.pos) };
	out->normalized = (struct ber_view){ NULL, 0 };
	if (has_normalized) {
		if (ber_enter_general(list, STORED_FORMS_TAG, &forms) != LUMEN_OK)
			return LUMEN_EMALFORMED;
		out->normalized = (struct ber_view){ forms.pos, (size_t)(forms.end - forms.pos) };
	}
	return 1;
}

static bool same_place(struct ber_view a, struct ber_view b)
{
	return a.ptr == b.ptr && a.len == b.len;
}

/* entry_record_next against reference_next, on any record that opens. */
static void check_walker_framing(const uint8_t *data, size_t size)
{
	struct entry_record rec;
	if (entry_record_open(data, size, &rec) != LUMEN_OK)
		return;
	struct ber_reader list = rec.attributes;
	for (;;) {
		struct entry_record_attribute a, b;
		int more = entry_record_next(&rec, &a);
		if (more != reference_next(&list, rec.has_normalized, &b))
			abort();
		if (more != 1)
			return;
		if (!same_place(a.description, b.description) || !same_place(a.encoded, b.encoded) ||
		    !same_place(a.values, b.values) || !same_place(a.normalized, b.normalized) ||
		    rec.attributes.pos != list.pos)
			abort();
	}
}

static struct entry *decode(const void *bytes, size_t len, bool trusted)
{
	struct entry *e = (struct entry *)1;
	int rc = entry_decode_stored(schema, bytes, len, trusted, NULL, &e);
	if (rc != LUMEN_OK) {
		if (e != NULL || (rc != LUMEN_EMALFORMED && rc != LUMEN_ELIMIT &&
				  rc != LUMEN_ENOTFOUND && rc != LUMEN_ENOMEM))
			abort();
		return NULL;
	}
	return e;
}

/* Encode e, decode it back both ways: the forms written are the forms read,
 * and computing them again gives e's when e's were computed. */
static void check_round_trip(const struct entry *e, bool e_computed)
{
	struct ber_writer w;
	if (ber_writer_init(&w, 0, 0) != LUMEN_OK)
		abort();
	if (entry_encode(e, &w) != LUMEN_OK)
		abort();
	struct entry *trusted = decode(w.buf, w.len, true);
	struct entry *computed = decode(w.buf, w.len, false);
	if (trusted == NULL || computed == NULL)
		abort();
	expect_same(e, trusted);
	if (e_computed)
		expect_same(e, computed);
	entry_free(trusted);
	entry_free(computed);
	ber_writer_free(&w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct entry *trusted = decode(data, size, true);
	struct entry *computed = decode(data, size, false);

	check_walker_framing(data, size);
	/* Trust changes which forms are read, never whether the framing holds,
	 * except that a trusted decode also checks the stored forms. */
	if (trusted != NULL && computed == NULL)
		abort();
	if (computed != NULL) {
		check_walker(data, size, computed);
		check_round_trip(computed, true);
	}
	if (trusted != NULL) {
		check_walker(data, size, trusted);
		check_round_trip(trusted, false);
	}
	entry_free(trusted);
	entry_free(computed);
	return 0;
}
