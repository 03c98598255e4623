/*
 * stored_forms.c — the record of the rules stored normalized forms follow
 * (stored_forms.h).
 *
 * The meta value: "LN", the revision (8 bytes, little-endian), then one
 * "OID\0rule\0" pair per attribute type ("" for a type without an equality
 * rule). "never" marks a database whose forms are not to be trusted again.
 */
#include "stored_forms.h"

#include <stdlib.h>
#include <string.h>

#include "entry.h"
#include "little_endian.h"

static const char meta_key[] = "normalization";
static const char never[] = "never";
#define HEADER_BYTES 10

struct rules_buffer {
	char *bytes;
	size_t len, cap;
};

static int append(struct rules_buffer *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 4096;
		while (cap < b->len + n)
			cap *= 2;
		char *bigger = realloc(b->bytes, cap);
		if (bigger == NULL)
			return LUMEN_ENOMEM;
		b->bytes = bigger;
		b->cap = cap;
	}
	memcpy(b->bytes + b->len, p, n);
	b->len += n;
	return LUMEN_OK;
}

static const char *rule_of(const struct attribute_type *t)
{
	return t->equality != NULL ? t->equality->name : "";
}

static int append_pair(struct rules_buffer *b, const char *oid, const char *rule)
{
	int rc = append(b, oid, strlen(oid) + 1);
	return rc == LUMEN_OK ? append(b, rule, strlen(rule) + 1) : rc;
}

/* The header and the schema's own pairs, in type order. */
static int current_rules(const struct schema *schema, struct rules_buffer *b)
{
	uint8_t header[HEADER_BYTES] = { 'L', 'N' };
	little_endian_put64((uint8_t *)header + 2, ENTRY_NORMALIZATION_REVISION);
	int rc = append(b, header, sizeof(header));
	size_t n = schema_attribute_type_count(schema);
	for (size_t i = 0; i < n && rc == LUMEN_OK; i++) {
		const struct attribute_type *t = schema_attribute_type_at(schema, i);
		rc = append_pair(b, t->oid, rule_of(t));
	}
	return rc;
}

/*
 * Checks the stored pairs against schema and appends to b those of types
 * schema no longer has (kept: their records may come back with them).
 * false: a rule changed, or the value is not a record of ours.
 */
static bool stored_rules_hold(MDB_val stored, const struct schema *schema,
			      struct rules_buffer *b, int *rc)
{
	const char *p = stored.mv_data, *end = p + stored.mv_size;
	*rc = LUMEN_OK;
	if (stored.mv_size < HEADER_BYTES || p[0] != 'L' || p[1] != 'N' ||
	    little_endian_get64((const uint8_t *)p + 2) != ENTRY_NORMALIZATION_REVISION)
		return false;
	for (p += HEADER_BYTES; p < end;) {
		const char *oid = p, *oid_end = memchr(oid, '\0', (size_t)(end - oid));
		if (oid_end == NULL)
			return false;
		const char *rule = oid_end + 1;
		const char *rule_end = rule < end ? memchr(rule, '\0', (size_t)(end - rule)) : NULL;
		if (rule_end == NULL)
			return false;
		p = rule_end + 1;
		const struct attribute_type *t =
			schema_attribute_type(schema, oid, (size_t)(oid_end - oid));
		if (t != NULL && strcmp(rule_of(t), rule) != 0)
			return false;
		if (t == NULL && (*rc = append_pair(b, oid, rule)) != LUMEN_OK)
			return false;
	}
	return true;
}

static int put(MDB_txn *txn, struct mdb_store *store, const void *bytes, size_t len)
{
	MDB_val key = { sizeof(meta_key) - 1, (void *)meta_key };
	MDB_val data = { len, (void *)bytes };
	return mdb_store_map_error(mdb_put(txn, store->meta, &key, &data, 0));
}

/* Decides within txn; rewrites the record when writable and it changed. */
static int decide(MDB_txn *txn, struct mdb_store *store, const struct schema *schema,
		  bool writable, bool *trusted, struct rules_buffer *b)
{
	MDB_val key = { sizeof(meta_key) - 1, (void *)meta_key }, stored;
	int rc = current_rules(schema, b);
	if (rc != LUMEN_OK)
		return rc;
	int mrc = mdb_get(txn, store->meta, &key, &stored);
	if (mrc == MDB_NOTFOUND) {
		/* records so far hold no forms (format version 1) */
		*trusted = writable;
		return writable ? put(txn, store, b->bytes, b->len) : LUMEN_OK;
	}
	if (mrc != MDB_SUCCESS)
		return mdb_store_map_error(mrc);
	*trusted = stored_rules_hold(stored, schema, b, &rc);
	if (rc != LUMEN_OK || !writable)
		return rc;
	if (!*trusted)
		return stored.mv_size == sizeof(never) - 1 &&
				       memcmp(stored.mv_data, never, stored.mv_size) == 0
			       ? LUMEN_OK : put(txn, store, never, sizeof(never) - 1);
	if (stored.mv_size == b->len && memcmp(stored.mv_data, b->bytes, b->len) == 0)
		return LUMEN_OK;
	return put(txn, store, b->bytes, b->len);
}

int stored_forms_check(struct mdb_store *store, const struct schema *schema, bool *trusted)
{
	struct rules_buffer b = { 0 };
	unsigned env_flags = 0;
	MDB_txn *txn;

	*trusted = false;
	mdb_env_get_flags(store->env, &env_flags);
	bool writable = (env_flags & MDB_RDONLY) == 0;
	int rc = mdb_store_map_error(mdb_txn_begin(store->env, NULL, writable ? 0 : MDB_RDONLY,
						   &txn));
	if (rc != LUMEN_OK)
		return rc;
	rc = decide(txn, store, schema, writable, trusted, &b);
	free(b.bytes);
	if (rc != LUMEN_OK || !writable) {
		mdb_txn_abort(txn);
		if (rc != LUMEN_OK)
			*trusted = false;
		return rc;
	}
	rc = mdb_store_map_error(mdb_txn_commit(txn));
	if (rc != LUMEN_OK)
		*trusted = false;
	return rc;
}
