/*
 * fuzz_ldif.c — libFuzzer target for the LDIF reader and writer (ldif.h).
 *
 * Each input is read record by record from memory (the reader must always
 * make progress and end, whatever the errors); every record that reads is
 * written back with ldif_write_record and must read back to the same
 * record. File URLs stay disabled, so inputs never touch the file system.
 * Seeds: tests/fuzz/corpus/fuzz_ldif/ (one LDIF file each).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ldif.h"
#include "lumen_error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool same(struct ber_view a, struct ber_view b)
{
	return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

static bool same_record(const struct ldif_record *a, const struct ldif_record *b)
{
	if (a->kind != b->kind || !same(a->dn, b->dn) || a->n_controls != b->n_controls ||
	    a->n_attributes != b->n_attributes || a->n_modifications != b->n_modifications ||
	    !same(a->new_rdn, b->new_rdn) || a->delete_old_rdn != b->delete_old_rdn ||
	    a->has_new_superior != b->has_new_superior || !same(a->new_superior, b->new_superior))
		return false;
	for (size_t i = 0; i < a->n_controls; i++)
		if (!same(a->controls[i].oid, b->controls[i].oid) ||
		    a->controls[i].critical != b->controls[i].critical ||
		    a->controls[i].has_value != b->controls[i].has_value ||
		    !same(a->controls[i].value, b->controls[i].value))
			return false;
	for (size_t i = 0; i < a->n_attributes; i++)
		if (!same(a->attributes[i].description, b->attributes[i].description) ||
		    !same(a->attributes[i].value, b->attributes[i].value))
			return false;
	for (size_t i = 0; i < a->n_modifications; i++) {
		const struct ldif_modification *x = &a->modifications[i], *y = &b->modifications[i];
		if (x->op != y->op || !same(x->description, y->description) ||
		    x->n_values != y->n_values)
			return false;
		for (size_t j = 0; j < x->n_values; j++)
			if (!same(x->values[j], y->values[j]))
				return false;
	}
	return true;
}

/* Write the record and read it back: it must come back unchanged. */
static void round_trip(const struct ldif_record *record, struct arena *arena)
{
	char *text = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&text, &len);
	if (fp == NULL)
		abort();
	if (ldif_write_record(fp, record) != LUMEN_OK)
		abort();
	fclose(fp);

	struct ldif_reader *r;
	struct ldif_record back, end;
	if (ldif_reader_open_memory(text, len, NULL, &r) != LUMEN_OK)
		abort();
	if (ldif_read(r, arena, &back) != LUMEN_OK || !same_record(record, &back) ||
	    ldif_read(r, arena, &end) != LDIF_END)
		abort();
	ldif_reader_free(r);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ldif_options options = { .allow_file_urls = false, .max_record = 1u << 20 };
	struct ldif_reader *r;
	struct arena arena;
	int rc;

	if (ldif_reader_open_memory(data, size, &options, &r) != LUMEN_OK)
		return 0;
	arena_init(&arena, 0);
	/* Each call consumes at least one line, so the loop is bounded by the input. */
	for (size_t records = 0; records <= size + 1; records++) {
		struct ldif_record record;
		rc = ldif_read(r, &arena, &record);
		if (rc == LDIF_END || rc == LUMEN_EPOISONED)
			break;
		if (rc == LUMEN_OK)
			round_trip(&record, &arena);
		else if (ldif_reader_error(r)[0] == '\0')
			abort(); /* every error explains itself */
		arena_reset(&arena);
	}
	if (rc != LDIF_END && rc != LUMEN_EPOISONED)
		abort();
	arena_free(&arena);
	ldif_reader_free(r);
	return 0;
}
