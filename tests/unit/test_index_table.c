/*
 * test_index_table.c — index keys per kind, stored ID lists with their range
 * marker, runs of IDs added at once (bulk loads), and substring candidate
 * lookup.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backmdb_test_env.h"
#include "index_table.h"
#include "mdb_store.h"

static struct test_store t;
static MDB_txn *txn;
static MDB_dbi dbi;

static void setup(void)
{
	test_store_open(&t);
	ck_assert_int_eq(mdb_store_index_open(t.store, "cn", &dbi), LUMEN_OK);
	txn = test_write_txn(&t);
}

static void teardown(void)
{
	if (txn != NULL)
		mdb_txn_abort(txn);
	txn = NULL;
	test_store_close(&t);
}

static struct index_key key_of(enum index_kind kind, const char *s)
{
	struct index_key k;
	index_key_make(kind, (const uint8_t *)s, strlen(s), &k);
	return k;
}

static bool key_eq(struct index_key a, struct index_key b)
{
	return memcmp(a.bytes, b.bytes, INDEX_KEY_SIZE) == 0;
}

START_TEST(key_kinds)
{
	struct index_key eq = key_of(INDEX_EQUALITY, "alice");

	ck_assert_uint_eq(eq.bytes[0], INDEX_EQUALITY);
	ck_assert(key_eq(eq, key_of(INDEX_EQUALITY, "alice")));
	ck_assert(!key_eq(eq, key_of(INDEX_EQUALITY, "alicE")));
	ck_assert(!key_eq(eq, key_of(INDEX_APPROX, "alice")));
	ck_assert(key_eq(key_of(INDEX_PRESENCE, "x"), key_of(INDEX_PRESENCE, "y")));
	ck_assert(!key_eq(key_of(INDEX_SUB_INITIAL, "ali"), key_of(INDEX_SUB_FINAL, "ali")));
	ck_assert(!key_eq(key_of(INDEX_EQUALITY, ""), key_of(INDEX_EQUALITY, "a")));
	/* The hash is part of the on-disk format: pin it. */
	static const uint8_t pinned[INDEX_KEY_SIZE] = { 2, 0x31, 0x6e, 0x13, 0xa2, 0xad, 0x3b, 0x28, 0xa9 };
	struct index_key abc = key_of(INDEX_EQUALITY, "abcdefghijk");
	ck_assert_msg(memcmp(abc.bytes, pinned, INDEX_KEY_SIZE) == 0,
		      "hash changed: %02x%02x%02x%02x%02x%02x%02x%02x", abc.bytes[1], abc.bytes[2],
		      abc.bytes[3], abc.bytes[4], abc.bytes[5], abc.bytes[6], abc.bytes[7], abc.bytes[8]);
}
END_TEST

static const struct {
	const char *value;
	size_t keys;
} key_counts[] = {
	{ "", 0 }, { "a", 2 }, { "ab", 4 }, { "abc", 7 }, { "abcd", 8 }, { "abcdefgh", 12 },
};

START_TEST(substring_key_counts)
{
	const char *v = key_counts[_i].value;
	struct index_key keys[32];

	ck_assert_uint_eq(index_substring_key_count(strlen(v)), key_counts[_i].keys);
	ck_assert_uint_eq(index_substring_keys((const uint8_t *)v, strlen(v), keys, 32),
			  key_counts[_i].keys);
	/* a short array: still tells the full count, writes nothing beyond */
	keys[1] = key_of(INDEX_PRESENCE, "");
	ck_assert_uint_eq(index_substring_keys((const uint8_t *)v, strlen(v), keys, 1),
			  key_counts[_i].keys);
	ck_assert_uint_eq(keys[1].bytes[0], INDEX_PRESENCE);
}
END_TEST

START_TEST(substring_keys_content)
{
	struct index_key keys[8];

	ck_assert_uint_eq(index_substring_keys((const uint8_t *)"abcd", 4, keys, 8), 8);
	/* initial a, ab, abc; final d, cd, bcd; any abc, bcd */
	ck_assert(key_eq(keys[0], key_of(INDEX_SUB_INITIAL, "a")));
	ck_assert(key_eq(keys[1], key_of(INDEX_SUB_FINAL, "d")));
	ck_assert(key_eq(keys[4], key_of(INDEX_SUB_INITIAL, "abc")));
	ck_assert(key_eq(keys[5], key_of(INDEX_SUB_FINAL, "bcd")));
	ck_assert(key_eq(keys[6], key_of(INDEX_SUB_ANY, "abc")));
	ck_assert(key_eq(keys[7], key_of(INDEX_SUB_ANY, "bcd")));
}
END_TEST

START_TEST(key_set_algebra)
{
	struct index_key a[] = { key_of(INDEX_EQUALITY, "x"), key_of(INDEX_EQUALITY, "y"),
				 key_of(INDEX_EQUALITY, "x"), key_of(INDEX_EQUALITY, "z") };
	struct index_key b[] = { key_of(INDEX_EQUALITY, "y"), key_of(INDEX_EQUALITY, "w") };

	size_t na = index_keys_sort_unique(a, 4);
	size_t nb = index_keys_sort_unique(b, 2);
	ck_assert_uint_eq(na, 3);
	na = index_keys_subtract(a, na, b, nb);
	ck_assert_uint_eq(na, 2);
	for (size_t i = 0; i < na; i++)
		ck_assert(!key_eq(a[i], key_of(INDEX_EQUALITY, "y")));
}
END_TEST

/* l holds exactly the n IDs of want, as a list; released. */
static void assert_ids(struct idl *l, const uint64_t *want, size_t n)
{
	ck_assert(!l->is_range);
	ck_assert_uint_eq(l->count, n);
	for (size_t i = 0; i < n; i++)
		ck_assert_uint_eq(l->ids[i], want[i]);
	idl_release(l);
}

static void assert_read(const struct index_key *k, const uint64_t *want, size_t n)
{
	struct idl l;
	idl_init(&l);
	ck_assert_int_eq(index_read(txn, dbi, k, &l), LUMEN_OK);
	assert_ids(&l, want, n);
}

START_TEST(add_remove_read)
{
	struct index_key k = key_of(INDEX_EQUALITY, "alice");
	struct index_key other = key_of(INDEX_EQUALITY, "bob");

	assert_read(&k, NULL, 0);
	ck_assert_int_eq(index_add(txn, dbi, &k, 30), LUMEN_OK);
	ck_assert_int_eq(index_add(txn, dbi, &k, 7), LUMEN_OK);
	ck_assert_int_eq(index_add(txn, dbi, &k, 300), LUMEN_OK);
	ck_assert_int_eq(index_add(txn, dbi, &k, 7), LUMEN_OK); /* again: no-op */
	ck_assert_int_eq(index_add(txn, dbi, &other, 8), LUMEN_OK);
	ck_assert_int_eq(index_add(txn, dbi, &k, 0), LUMEN_EINVAL);
	assert_read(&k, (const uint64_t[]){ 7, 30, 300 }, 3);
	ck_assert_int_eq(index_remove(txn, dbi, &k, 30), LUMEN_OK);
	ck_assert_int_eq(index_remove(txn, dbi, &k, 31), LUMEN_OK); /* absent */
	struct index_key none = key_of(INDEX_EQUALITY, "none");
	ck_assert_int_eq(index_remove(txn, dbi, &none, 1), LUMEN_OK); /* no such key */
	assert_read(&k, (const uint64_t[]){ 7, 300 }, 2);
	assert_read(&other, (const uint64_t[]){ 8 }, 1);
	ck_assert_int_eq(index_remove(txn, dbi, &k, 7), LUMEN_OK);
	ck_assert_int_eq(index_remove(txn, dbi, &k, 300), LUMEN_OK);
	assert_read(&k, NULL, 0);
}
END_TEST

START_TEST(list_degrades_to_range)
{
	struct index_key k = key_of(INDEX_PRESENCE, "");
	struct idl l;

	for (uint64_t id = 1; id <= IDL_MAX_IDS; id++)
		ck_assert_int_eq(index_add(txn, dbi, &k, id + 10), LUMEN_OK);
	idl_init(&l);
	ck_assert_int_eq(index_read(txn, dbi, &k, &l), LUMEN_OK);
	ck_assert(!l.is_range);
	ck_assert_uint_eq(l.count, IDL_MAX_IDS);

	/* a caller buffer too small for the list: covering range */
	uint64_t small[4];
	struct idl s;
	idl_init_buffer(&s, small, 4);
	ck_assert_int_eq(index_read(txn, dbi, &k, &s), LUMEN_OK);
	ck_assert(s.is_range && s.lo == 11 && s.hi == IDL_MAX_IDS + 10);

	ck_assert_int_eq(index_add(txn, dbi, &k, 20), LUMEN_OK); /* present: stays a list */
	ck_assert_int_eq(index_read(txn, dbi, &k, &l), LUMEN_OK);
	ck_assert(!l.is_range);
	ck_assert_int_eq(index_add(txn, dbi, &k, 5), LUMEN_OK);
	ck_assert_int_eq(index_read(txn, dbi, &k, &l), LUMEN_OK);
	ck_assert(l.is_range && l.lo == 5 && l.hi == IDL_MAX_IDS + 10);

	/* a range widens on both ends and ignores removals */
	ck_assert_int_eq(index_add(txn, dbi, &k, 2), LUMEN_OK);
	ck_assert_int_eq(index_add(txn, dbi, &k, 1000000), LUMEN_OK);
	ck_assert_int_eq(index_add(txn, dbi, &k, 500), LUMEN_OK);
	ck_assert_int_eq(index_remove(txn, dbi, &k, 2), LUMEN_OK);
	ck_assert_int_eq(index_read(txn, dbi, &k, &l), LUMEN_OK);
	ck_assert(l.is_range && l.lo == 2 && l.hi == 1000000);
	idl_release(&l);
}
END_TEST

/* IDs first, first + step, ... (n of them) into a fresh array. */
static uint64_t *id_run(uint64_t first, uint64_t step, size_t n)
{
	uint64_t *ids = malloc(n * sizeof(*ids));
	ck_assert_ptr_nonnull(ids);
	for (size_t i = 0; i < n; i++)
		ids[i] = first + i * step;
	return ids;
}

static void assert_range(const struct index_key *k, uint64_t lo, uint64_t hi)
{
	struct idl l;
	idl_init(&l);
	ck_assert_int_eq(index_read(txn, dbi, k, &l), LUMEN_OK);
	ck_assert_msg(l.is_range && l.lo == lo && l.hi == hi,
		      "want range [%llu, %llu], got range=%d [%llu, %llu] count %zu",
		      (unsigned long long)lo, (unsigned long long)hi, (int)l.is_range,
		      (unsigned long long)l.lo, (unsigned long long)l.hi, l.count);
	idl_release(&l);
}

START_TEST(add_ids_merges_runs)
{
	struct index_key k = key_of(INDEX_EQUALITY, "run");

	ck_assert_int_eq(index_add_ids(txn, dbi, &k, (const uint64_t[]){ 3, 5, 9 }, 3), LUMEN_OK);
	assert_read(&k, (const uint64_t[]){ 3, 5, 9 }, 3);
	/* after every stored ID: appended */
	ck_assert_int_eq(index_add_ids(txn, dbi, &k, (const uint64_t[]){ 10, 11 }, 2), LUMEN_OK);
	/* interleaved, and one already there: merged, no duplicate */
	ck_assert_int_eq(index_add_ids(txn, dbi, &k, (const uint64_t[]){ 4, 5, 12 }, 3), LUMEN_OK);
	ck_assert_int_eq(index_add_ids(txn, dbi, &k, (const uint64_t[]){ 1, 9, 10, 13 }, 4),
			 LUMEN_OK);
	assert_read(&k, (const uint64_t[]){ 1, 3, 4, 5, 9, 10, 11, 12, 13 }, 9);
	/* a single ID behaves as index_add */
	ck_assert_int_eq(index_add_ids(txn, dbi, &k, (const uint64_t[]){ 7 }, 1), LUMEN_OK);
	assert_read(&k, (const uint64_t[]){ 1, 3, 4, 5, 7, 9, 10, 11, 12, 13 }, 10);

	ck_assert_int_eq(index_add_ids(txn, dbi, &k, (const uint64_t[]){ 1 }, 0), LUMEN_EINVAL);
	ck_assert_int_eq(index_add_ids(txn, dbi, &k, (const uint64_t[]){ 0, 2 }, 2), LUMEN_EINVAL);
	ck_assert_int_eq(index_add_ids(txn, dbi, &k, (const uint64_t[]){ 5, 2 }, 2), LUMEN_EINVAL);
	ck_assert_int_eq(index_add_ids(txn, dbi, &k, (const uint64_t[]){ 2, 2 }, 2), LUMEN_EINVAL);
	assert_read(&k, (const uint64_t[]){ 1, 3, 4, 5, 7, 9, 10, 11, 12, 13 }, 10);
}
END_TEST

START_TEST(add_ids_degrades_to_range)
{
	struct index_key full = key_of(INDEX_EQUALITY, "full");
	struct index_key over = key_of(INDEX_EQUALITY, "over");
	struct index_key grown = key_of(INDEX_EQUALITY, "grown");
	uint64_t *ids = id_run(100, 2, IDL_MAX_IDS + 1);
	struct idl l;

	/* exactly the limit in one run: still a list */
	ck_assert_int_eq(index_add_ids(txn, dbi, &full, ids, IDL_MAX_IDS), LUMEN_OK);
	idl_init(&l);
	ck_assert_int_eq(index_read(txn, dbi, &full, &l), LUMEN_OK);
	ck_assert(!l.is_range);
	ck_assert_uint_eq(l.count, IDL_MAX_IDS);
	ck_assert_uint_eq(l.ids[IDL_MAX_IDS - 1], ids[IDL_MAX_IDS - 1]);
	idl_release(&l);
	/* one more: the range covering the list and the newcomer */
	ck_assert_int_eq(index_add_ids(txn, dbi, &full, (const uint64_t[]){ 7 }, 1), LUMEN_OK);
	assert_range(&full, 7, ids[IDL_MAX_IDS - 1]);
	/* a range widens on both ends, never shrinks */
	ck_assert_int_eq(index_add_ids(txn, dbi, &full, (const uint64_t[]){ 2, 50, 9000000 }, 3),
			 LUMEN_OK);
	assert_range(&full, 2, 9000000);
	ck_assert_int_eq(index_add_ids(txn, dbi, &full, (const uint64_t[]){ 60 }, 1), LUMEN_OK);
	assert_range(&full, 2, 9000000);

	/* a new key given more than the limit at once is stored as a range */
	ck_assert_int_eq(index_add_ids(txn, dbi, &over, ids, IDL_MAX_IDS + 1), LUMEN_OK);
	assert_range(&over, 100, ids[IDL_MAX_IDS]);

	/* a stored list plus a run passing the limit together */
	ck_assert_int_eq(index_add_ids(txn, dbi, &grown, (const uint64_t[]){ 1, 5000000 }, 2),
			 LUMEN_OK);
	ck_assert_int_eq(index_add_ids(txn, dbi, &grown, ids, IDL_MAX_IDS - 2), LUMEN_OK);
	idl_init(&l);
	ck_assert_int_eq(index_read(txn, dbi, &grown, &l), LUMEN_OK);
	ck_assert(!l.is_range);
	ck_assert_uint_eq(l.count, IDL_MAX_IDS);
	idl_release(&l);
	ck_assert_int_eq(index_add_ids(txn, dbi, &grown, (const uint64_t[]){ 6000000 }, 1),
			 LUMEN_OK);
	assert_range(&grown, 1, 6000000);
	free(ids);
}
END_TEST

/* Keys handed to a run writer, with their IDs; reads them back. */
START_TEST(run_writer_appends_and_merges)
{
	enum { N_KEYS = 2000 };
	struct index_key keys[N_KEYS];
	struct index_run_writer w;
	char text[32];

	for (size_t i = 0; i < N_KEYS; i++) {
		snprintf(text, sizeof(text), "value %zu", i);
		keys[i] = key_of(INDEX_EQUALITY, text);
	}
	size_t n = index_keys_sort_unique(keys, N_KEYS);
	ck_assert_uint_eq(n, N_KEYS);

	/* first round: the even keys into the empty table, each with two IDs */
	ck_assert_int_eq(index_run_writer_open(&w, txn, dbi), LUMEN_OK);
	ck_assert(w.table_empty);
	for (size_t i = 0; i < n; i += 2)
		ck_assert_int_eq(index_run_add(&w, &keys[i], (const uint64_t[]){ i + 1, i + 2 }, 2),
				 LUMEN_OK);
	index_run_writer_close(&w);

	/* second round: every key; odd ones are new (some before the table's end, some
	 * after), even ones get a later ID; the last key becomes a range */
	ck_assert_int_eq(index_run_writer_open(&w, txn, dbi), LUMEN_OK);
	ck_assert(!w.table_empty);
	for (size_t i = 0; i + 1 < n; i++)
		ck_assert_int_eq(index_run_add(&w, &keys[i], (const uint64_t[]){ 10000 + i }, 1),
				 LUMEN_OK);
	ck_assert_int_eq(index_run_add_range(&w, &keys[n - 1], 20000, 30000), LUMEN_OK);
	/* out of order and bad input are still handled */
	ck_assert_int_eq(index_run_add(&w, &keys[0], (const uint64_t[]){ 50000 }, 1), LUMEN_OK);
	ck_assert_int_eq(index_run_add_range(&w, &keys[1], 9, 3), LUMEN_EINVAL);
	ck_assert_int_eq(index_run_add(&w, &keys[1], (const uint64_t[]){ 0 }, 1), LUMEN_EINVAL);
	index_run_writer_close(&w);

	for (size_t i = 0; i + 1 < n; i++) {
		if (i == 0)
			assert_read(&keys[0], (const uint64_t[]){ 1, 2, 10000, 50000 }, 4);
		else if (i % 2 == 0)
			assert_read(&keys[i], (const uint64_t[]){ i + 1, i + 2, 10000 + i }, 3);
		else
			assert_read(&keys[i], (const uint64_t[]){ 10000 + i }, 1);
	}
	/* the last key was odd (n is even): new, stored straight as a range */
	assert_range(&keys[n - 1], 20000, 30000);
}
END_TEST

static const char *const sub_values[] = {
	NULL, "alice", "alicia", "bob", "malice", "al", "xalicex", "bobby lice",
};
enum { N_SUB_VALUES = sizeof(sub_values) / sizeof(sub_values[0]) };

static void index_sub_values(void)
{
	struct index_key keys[64];

	for (uint64_t id = 1; id < N_SUB_VALUES; id++) {
		const char *v = sub_values[id];
		size_t n = index_substring_keys((const uint8_t *)v, strlen(v), keys, 64);
		ck_assert_uint_le(n, 64);
		for (size_t i = 0; i < n; i++)
			ck_assert_int_eq(index_add(txn, dbi, &keys[i], id), LUMEN_OK);
	}
}

/* Brute-force substring match, as the filter evaluator would do it. */
static bool sub_matches(const char *v, const char *initial, const char *const *any,
			const char *final)
{
	size_t len = strlen(v), pos = 0;

	if (strncmp(v, initial, strlen(initial)) != 0)
		return false;
	pos = strlen(initial);
	for (; any && *any; any++) {
		const char *hit = strstr(v + pos, *any);
		if (hit == NULL)
			return false;
		pos = (size_t)(hit - v) + strlen(*any);
	}
	return len - pos >= strlen(final) && strcmp(v + len - strlen(final), final) == 0;
}

struct sub_case {
	const char *initial;
	const char *any[3];
	const char *final;
	int rc;
	uint64_t want[N_SUB_VALUES]; /* exact candidate set, 0-terminated */
};

static const struct sub_case sub_cases[] = {
	{ "ali", { NULL }, "", LUMEN_OK, { 1, 2 } },
	{ "al", { NULL }, "", LUMEN_OK, { 1, 2, 5 } },
	{ "alic", { NULL }, "", LUMEN_OK, { 1, 2 } },
	{ "", { NULL }, "ce", LUMEN_OK, { 1, 4, 7 } },
	{ "", { "lic" }, "", LUMEN_OK, { 1, 2, 4, 6, 7 } },
	{ "", { "alice" }, "", LUMEN_OK, { 1, 4, 6 } },
	{ "a", { NULL }, "e", LUMEN_OK, { 1 } },
	{ "", { "bo" }, "b", LUMEN_OK, { 3 } },
	{ "b", { "by l" }, "", LUMEN_OK, { 7 } },
	{ "zzz", { NULL }, "", LUMEN_OK, { 0 } },
	{ "alice", { NULL }, "alice", LUMEN_OK, { 1 } },
	{ "", { "li", "ic" }, "", LUMEN_EUNSUPPORTED, { 0 } },
	{ "", { NULL }, "", LUMEN_EUNSUPPORTED, { 0 } },
};

START_TEST(substring_lookup)
{
	const struct sub_case *c = &sub_cases[_i];
	struct ber_view any[3];
	size_t n_any = 0;
	struct idl out, scratch;

	index_sub_values();
	for (; n_any < 3 && c->any[n_any]; n_any++)
		any[n_any] = TEST_VIEW(c->any[n_any]);
	struct index_substring a = { TEST_VIEW(c->initial), any, n_any, TEST_VIEW(c->final) };
	idl_init(&out);
	idl_init(&scratch);
	ck_assert_int_eq(index_read_substring(txn, dbi, &a, &out, &scratch), c->rc);
	/* through a cursor the caller keeps: the same answer */
	MDB_cursor *cursor;
	struct idl through;
	idl_init(&through);
	ck_assert_int_eq(mdb_cursor_open(txn, dbi, &cursor), 0);
	ck_assert_int_eq(index_read_substring_cursor(cursor, &a, &through, &scratch), c->rc);
	mdb_cursor_close(cursor);
	ck_assert_uint_eq(through.count, out.count);
	for (size_t i = 0; i < out.count; i++)
		ck_assert_uint_eq(through.ids[i], out.ids[i]);
	idl_release(&through);
	if (c->rc == LUMEN_OK) {
		/* never miss a true match ... */
		for (uint64_t id = 1; id < N_SUB_VALUES; id++)
			if (sub_matches(sub_values[id], c->initial, c->any, c->final))
				ck_assert_msg(idl_contains(&out, id), "case %d misses %s", _i,
					      sub_values[id]);
		/* ... and with these values, be exact */
		size_t n = 0;
		while (c->want[n])
			n++;
		ck_assert_msg(out.count == n, "case %d: %zu candidates, want %zu", _i, out.count, n);
		for (size_t i = 0; i < n; i++)
			ck_assert_uint_eq(out.ids[i], c->want[i]);
	}
	idl_release(&out);
	idl_release(&scratch);
}
END_TEST

START_TEST(presence_and_commit)
{
	struct index_key pres = key_of(INDEX_PRESENCE, "");

	ck_assert_int_eq(index_add(txn, dbi, &pres, 3), LUMEN_OK);
	ck_assert_int_eq(index_add(txn, dbi, &pres, 1), LUMEN_OK);
	ck_assert_int_eq(mdb_txn_commit(txn), 0);
	txn = test_read_txn(&t);
	assert_read(&pres, (const uint64_t[]){ 1, 3 }, 2);
	/* the same table handle comes back by name */
	MDB_dbi again;
	ck_assert_int_eq(mdb_store_index_open(t.store, "cn", &again), LUMEN_OK);
	ck_assert_uint_eq(again, dbi);
	ck_assert_int_eq(mdb_store_index_open(t.store, "", &again), LUMEN_EINVAL);
}
END_TEST

/* Reads key through the reader's kept cursor on table; its IDs in want. */
static void assert_kept_read(struct mdb_reader *r, MDB_dbi table, const struct index_key *k,
			     const uint64_t *want, size_t n)
{
	struct idl l;
	idl_init(&l);
	MDB_cursor *c = mdb_reader_cursor(r, table);
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(index_read_cursor(c, k, &l), LUMEN_OK);
	assert_ids(&l, want, n);
}

/*
 * A reader keeps one cursor per table from snapshot to snapshot: the same
 * cursor comes back, renewed, so an ID committed between two snapshots is
 * read in the second; it keeps at most MDB_READER_KEPT_CURSORS tables (the
 * next gets NULL: the caller opens its own), none while not active, and
 * mdb_reader_free closes them (the sanitizer build's leak check).
 */
START_TEST(reader_keeps_cursors_across_snapshots)
{
	struct index_key k = key_of(INDEX_EQUALITY, "alice");
	struct mdb_reader r;
	MDB_dbi tables[MDB_READER_KEPT_CURSORS + 1];

	ck_assert_int_eq(index_add(txn, dbi, &k, 5), LUMEN_OK);
	ck_assert_int_eq(mdb_txn_commit(txn), 0);
	txn = NULL;
	mdb_reader_init(&r, t.store);
	ck_assert_ptr_null(mdb_reader_cursor(&r, dbi));
	ck_assert_int_eq(mdb_reader_begin(&r), LUMEN_OK);
	MDB_cursor *first = mdb_reader_cursor(&r, dbi);
	assert_kept_read(&r, dbi, &k, (const uint64_t[]){ 5 }, 1);
	mdb_reader_end(&r);
	ck_assert_ptr_null(mdb_reader_cursor(&r, dbi));

	MDB_txn *w = test_write_txn(&t);
	ck_assert_int_eq(index_add(w, dbi, &k, 9), LUMEN_OK);
	ck_assert_int_eq(mdb_txn_commit(w), 0);
	ck_assert_int_eq(mdb_reader_begin(&r), LUMEN_OK);
	ck_assert_ptr_eq(mdb_reader_cursor(&r, dbi), first);
	assert_kept_read(&r, dbi, &k, (const uint64_t[]){ 5, 9 }, 2);

	/* dbi is kept already; fill the other slots, then one table more */
	for (size_t i = 0; i < MDB_READER_KEPT_CURSORS; i++) {
		char name[8];
		snprintf(name, sizeof(name), "t%zu", i);
		mdb_reader_end(&r);
		ck_assert_int_eq(mdb_store_index_open(t.store, name, &tables[i]), LUMEN_OK);
		ck_assert_int_eq(mdb_reader_begin(&r), LUMEN_OK);
		MDB_cursor *c = mdb_reader_cursor(&r, tables[i]);
		if (i + 1 < MDB_READER_KEPT_CURSORS)
			ck_assert_ptr_nonnull(c);
		else
			ck_assert_ptr_null(c);
	}
	ck_assert_ptr_eq(mdb_reader_cursor(&r, dbi), first);
	assert_kept_read(&r, dbi, &k, (const uint64_t[]){ 5, 9 }, 2);
	mdb_reader_free(&r);
	for (size_t i = 0; i < MDB_READER_KEPT_CURSORS; i++)
		ck_assert_ptr_null(r.kept[i].cursor);
}
END_TEST

/* Commits id under k in a write transaction of its own. */
static void commit_id(const struct index_key *k, uint64_t id)
{
	MDB_txn *w = test_write_txn(&t);
	ck_assert_int_eq(index_add(w, dbi, k, id), LUMEN_OK);
	ck_assert_int_eq(mdb_txn_commit(w), 0);
}

/*
 * A parked reader takes up its snapshot again while it is the newest: the
 * same transaction, its kept cursor not renewed. Once a write commits it is
 * older than the newest (what the pool's owner ends), and a begin moves it
 * to the newest; a snapshot that is no longer the newest is ended, not
 * parked.
 */
START_TEST(parked_reader_keeps_the_newest_snapshot)
{
	struct index_key k = key_of(INDEX_EQUALITY, "alice");
	struct mdb_reader r;

	ck_assert_int_eq(mdb_txn_commit(txn), 0);
	txn = NULL;
	commit_id(&k, 5);
	mdb_reader_init(&r, t.store);
	ck_assert_int_eq(mdb_reader_begin(&r), LUMEN_OK);
	MDB_txn *snapshot = r.txn;
	uint64_t id = (uint64_t)mdb_txn_id(r.txn), counted = r.snapshot;
	assert_kept_read(&r, dbi, &k, (const uint64_t[]){ 5 }, 1);

	mdb_reader_park(&r);
	ck_assert(r.parked);
	ck_assert(!mdb_reader_older_than(&r, id));
	ck_assert_int_eq(mdb_reader_begin(&r), LUMEN_OK);
	ck_assert(!r.parked);
	ck_assert_ptr_eq(r.txn, snapshot);
	ck_assert_uint_eq(r.snapshot, counted);            /* not renewed */
	ck_assert_uint_eq((uint64_t)mdb_txn_id(r.txn), id);
	assert_kept_read(&r, dbi, &k, (const uint64_t[]){ 5 }, 1);

	mdb_reader_park(&r);
	commit_id(&k, 9);
	ck_assert(mdb_reader_older_than(&r, id + 1));
	ck_assert_int_eq(mdb_reader_begin(&r), LUMEN_OK);
	ck_assert_uint_eq((uint64_t)mdb_txn_id(r.txn), id + 1);
	assert_kept_read(&r, dbi, &k, (const uint64_t[]){ 5, 9 }, 2);

	commit_id(&k, 11);                                  /* while in use */
	mdb_reader_park(&r);
	ck_assert(!r.parked);
	ck_assert(!r.active);
	ck_assert(!mdb_reader_older_than(&r, id + 2));
	mdb_reader_free(&r);
}
END_TEST

/*
 * An index table opened while a reader is parked: the snapshot does not
 * know its handle, and opening a table the file already holds commits
 * nothing, so the newest commit is unchanged. The reader renews anyway, and
 * reads the table.
 */
START_TEST(parked_reader_renews_for_a_table_opened_since)
{
	struct index_key k = key_of(INDEX_EQUALITY, "alice");
	MDB_dbi late;
	struct mdb_reader r;
	char err[256] = "";

	ck_assert_int_eq(mdb_txn_commit(txn), 0);
	txn = NULL;
	ck_assert_int_eq(mdb_store_index_open(t.store, "late", &late), LUMEN_OK);
	MDB_txn *w = test_write_txn(&t);
	ck_assert_int_eq(index_add(w, late, &k, 4), LUMEN_OK);
	ck_assert_int_eq(mdb_txn_commit(w), 0);
	/* the same files opened again: "late" exists, and no handle is open */
	mdb_store_close(t.store);
	struct mdb_store_options opts = { .directory = t.dir, .dbnosync = true };
	ck_assert_int_eq(mdb_store_open(&opts, &t.store, err, sizeof(err)), LUMEN_OK);
	mdb_reader_init(&r, t.store);
	ck_assert_int_eq(mdb_reader_begin(&r), LUMEN_OK);
	uint64_t newest = (uint64_t)mdb_txn_id(r.txn);
	mdb_reader_park(&r);
	ck_assert(r.parked);

	ck_assert_int_eq(mdb_store_index_open(t.store, "late", &late), LUMEN_OK);
	MDB_envinfo info;
	ck_assert_int_eq(mdb_env_info(t.store->env, &info), 0);
	ck_assert_uint_eq((uint64_t)info.me_last_txnid, newest);   /* nothing committed */
	ck_assert_int_eq(mdb_reader_begin(&r), LUMEN_OK);
	assert_kept_read(&r, late, &k, (const uint64_t[]){ 4 }, 1);
	mdb_reader_free(&r);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("index_table");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, key_kinds);
	tcase_add_loop_test(tc, substring_key_counts, 0, (int)(sizeof(key_counts) / sizeof(key_counts[0])));
	tcase_add_test(tc, substring_keys_content);
	tcase_add_test(tc, key_set_algebra);
	tcase_add_test(tc, add_remove_read);
	tcase_add_test(tc, list_degrades_to_range);
	tcase_add_test(tc, add_ids_merges_runs);
	tcase_add_test(tc, add_ids_degrades_to_range);
	tcase_add_test(tc, run_writer_appends_and_merges);
	tcase_add_loop_test(tc, substring_lookup, 0, (int)(sizeof(sub_cases) / sizeof(sub_cases[0])));
	tcase_add_test(tc, presence_and_commit);
	tcase_add_test(tc, reader_keeps_cursors_across_snapshots);
	tcase_add_test(tc, parked_reader_keeps_the_newest_snapshot);
	tcase_add_test(tc, parked_reader_renews_for_a_table_opened_since);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
