/*
 * fuzz_dn.c — libFuzzer target for RFC 4514 DN strings (dn.h).
 *
 * Each input is parsed and normalized under the shipped core, cosine and
 * inetorgperson schema (loaded once, from the repository root, which is
 * where run.sh starts targets). Invariants checked on every DN that
 * parses: dn_format's output parses again to the same ndn, the ndn helpers
 * agree with the parsed form (RDN count, split/within), and normalizing is
 * deterministic. On every input, parsing or not: dn_normalize, memos and
 * all, answers as the whole parse (ndn or error): the input itself below
 * its own parent remembered first, and DNs below the input. Seeds: tests/fuzz/corpus/fuzz_dn/ (one DN per file).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_shipped_schema.h"
#include "dn.h"
#include "lumen_error.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct schema *schema;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{

	(void)argc;
	(void)argv;
	schema = fuzz_load_schema("fuzz_dn", fuzz_schema_files, 3);
	return 0;
}

static bool same(struct ber_view a, struct ber_view b)
{
	return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

static void check_ndn_helpers(const struct dn *dn, struct ber_view ndn)
{
	struct ber_view rdn, parent;

	if (dn_rdn_count(ndn) != dn->n_rdns)
		abort();
	dn_split_first(ndn, &rdn, &parent);
	if (!dn_is_within(ndn, parent) || !dn_is_within(ndn, ndn))
		abort();
	if (dn->n_rdns > 0 && dn_rdn_count(parent) != dn->n_rdns - 1)
		abort();
	if (dn->n_rdns > 1 && dn_is_within(parent, ndn))
		abort();
}

/* dn_normalize (and its memos) answers as the whole parse does, errors too. */
static void check_as_whole(const char *text, size_t len, struct arena *arena)
{
	struct dn whole;
	struct ber_view want = { NULL, 0 }, got = { NULL, 0 };
	int want_rc = dn_parse(schema, text, len, arena, &whole);
	if (want_rc == LUMEN_OK)
		want_rc = dn_normalize_parsed(&whole, arena, &want);
	int got_rc = dn_normalize(schema, text, len, arena, &got);
	if (got_rc != want_rc || (got_rc == LUMEN_OK && !same(got, want)))
		abort();
}

/*
 * Two DNs below the input: the first fills the parent memo when the
 * input is a parent that parses, the second takes its shortcut.
 */
static void check_below_input(const uint8_t *data, size_t size, struct arena *arena)
{
	char *text = arena_alloc(arena, size + 5);
	if (text == NULL)
		abort();
	memcpy(text + 5, data, size);
	memcpy(text, "cn=p,", 5);
	check_as_whole(text, size + 5, arena);
	memcpy(text, "cn=q,", 5);
	check_as_whole(text, size + 5, arena);
}

/*
 * The input below a remembered parent with the first RDN the fuzzer chose:
 * its text after the first comma is made a parent first (under "cn=p,"),
 * then the input itself may take the shortcut. False: no comma.
 */
static bool check_below_own_parent(const uint8_t *data, size_t size, struct arena *arena)
{
	const uint8_t *comma = memchr(data, ',', size);
	if (comma == NULL)
		return false;
	size_t parent_len = size - (size_t)(comma + 1 - data);
	char *text = arena_alloc(arena, parent_len + 5);
	if (text == NULL)
		abort();
	memcpy(text, "cn=p,", 5);
	memcpy(text + 5, comma + 1, parent_len);
	check_as_whole(text, parent_len + 5, arena);
	check_as_whole((const char *)data, size, arena);
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct arena arena;
	struct dn dn, again;
	struct ber_view ndn, ndn_again, formatted;

	arena_init(&arena, 0);
	if (!check_below_own_parent(data, size, &arena))
		check_as_whole((const char *)data, size, &arena);
	check_below_input(data, size, &arena);
	if (dn_parse(schema, (const char *)data, size, &arena, &dn) != LUMEN_OK)
		goto done;
	int rc = dn_normalize_parsed(&dn, &arena, &ndn);
	if (rc == LUMEN_EMALFORMED)
		goto done; /* an RDN repeating an AVA */
	if (rc != LUMEN_OK)
		abort();
	check_ndn_helpers(&dn, ndn);

	if (dn_normalize(schema, (const char *)data, size, &arena, &ndn_again) != LUMEN_OK ||
	    !same(ndn, ndn_again))
		abort();
	if (dn_format(&dn, &arena, &formatted) != LUMEN_OK)
		abort();
	if (dn_parse(schema, (const char *)formatted.ptr, formatted.len, &arena, &again) != LUMEN_OK ||
	    dn_normalize_parsed(&again, &arena, &ndn_again) != LUMEN_OK || !same(ndn, ndn_again))
		abort();
done:
	arena_free(&arena);
	return 0;
}
