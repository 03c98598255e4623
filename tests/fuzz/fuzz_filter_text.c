/*
 * fuzz_filter_text.c — libFuzzer target for RFC 4515 filter strings.
 *
 * Each input is parsed; a filter that parses is printed, the printed form
 * must parse again and print identically (the printer is canonical), and
 * it is compiled and evaluated against a small entry under a small inline
 * schema, so the compile and evaluation paths see hostile trees too.
 * Seeds: tests/fuzz/corpus/fuzz_filter_text/ (one filter per file; add a
 * seed for every new filter feature or regression).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "entry.h"
#include "filter.h"
#include "ldap_filter_text.h"

static const char fuzz_schema_text[] =
	"attributetype ( 2.5.4.0 NAME 'objectClass' EQUALITY objectIdentifierMatch"
	" SYNTAX 1.3.6.1.4.1.1466.115.121.1.38 )\n"
	"attributetype ( 2.5.4.41 NAME 'name' EQUALITY caseIgnoreMatch"
	" SUBSTR caseIgnoreSubstringsMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 )\n"
	"attributetype ( 2.5.4.3 NAME 'cn' SUP name )\n"
	"attributetype ( 2.5.4.4 NAME 'sn' SUP name )\n"
	"attributetype ( 1.3.6.1.1.1.1.0 NAME 'uidNumber' EQUALITY integerMatch"
	" ORDERING integerOrderingMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.27 )\n"
	"objectclass ( 2.5.6.0 NAME 'top' ABSTRACT MUST objectClass )\n"
	"objectclass ( 2.5.6.6 NAME 'person' SUP top STRUCTURAL MUST ( sn $ cn ) MAY uidNumber )\n";

static struct schema *schema;
static struct entry *entry;

static void setup_once(void)
{
	char err[256];
	if (schema_create(&schema) != LUMEN_OK ||
	    schema_load_text(schema, "fuzz", fuzz_schema_text, err, sizeof(err)) != LUMEN_OK ||
	    schema_finalize(schema, err, sizeof(err)) != LUMEN_OK)
		abort();
	const char dn[] = "cn=Fuzz Person,sn=Tester";
	if (entry_create(schema, (struct ber_view){ (const uint8_t *)dn, sizeof(dn) - 1 },
			 (struct ber_view){ NULL, 0 }, &entry) != LUMEN_OK ||
	    entry_add_text(entry, "objectClass", "person") != LUMEN_OK ||
	    entry_add_text(entry, "cn", "Fuzz Person") != LUMEN_OK ||
	    entry_add_text(entry, "sn", "Tester") != LUMEN_OK ||
	    entry_add_text(entry, "uidNumber", "1000") != LUMEN_OK)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (schema == NULL)
		setup_once();
	struct arena arena;
	arena_init(&arena, 0); /* inputs are bounded by -max_len */
	struct ldap_filter *f = NULL;
	if (ldap_filter_text_parse((const char *)data, size, &arena, NULL, &f, NULL) == LUMEN_OK) {
		struct ber_view once, twice;
		struct ldap_filter *again = NULL;
		if (ldap_filter_text_print(f, &arena, &once) != LUMEN_OK ||
		    ldap_filter_text_parse((const char *)once.ptr, once.len, &arena, NULL, &again,
					   NULL) != LUMEN_OK ||
		    ldap_filter_text_print(again, &arena, &twice) != LUMEN_OK ||
		    once.len != twice.len || memcmp(once.ptr, twice.ptr, once.len) != 0)
			abort();
		struct filter compiled;
		if (filter_compile(schema, f, NULL, &arena, &compiled) == LUMEN_OK) {
			enum filter_result r = filter_evaluate(&compiled, entry);
			if (r != FILTER_TRUE && r != FILTER_FALSE && r != FILTER_UNDEFINED)
				abort();
		}
	}
	arena_free(&arena);
	return 0;
}
