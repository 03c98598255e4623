/*
 * fuzz_access.c — libFuzzer target for `access to WHAT by WHO ...` parsing
 * and compiling (access_rules.h, src/config/access_parse.c).
 *
 * fuzz-layers: proto model config
 * fuzz-max-len: 8192
 *
 * Each input line is split into arguments exactly as slapd.conf's lexer
 * does (config_split, from the config layer's private config_lexer.h: the
 * only way the server ever calls access_rule_parse), then parsed with
 * access_rule_parse into one rule list; the list is compiled against the
 * shipped schema (core, cosine, inetorgperson, nis, lumen; loaded once).
 * Lines that do not split, or do not start with "access", are skipped;
 * so are inputs whose regexes glibc would expand beyond 2^16 copies
 * (fuzz_regex_guard.h: a known glibc blow-up, config-time only).
 * Invariants: every error is "fuzz.conf:LINE: access: reason" for the
 * right line; a failed parse appends nothing; a compiled rule list is
 * consistent (every rule has a WHO, levels and controls in range, an
 * attribute bit set when attrs= was given, normalized DNs that normalize
 * to themselves, compiled regexes for regex styles); freeing releases
 * everything on every path (LeakSanitizer).
 * Seeds: tests/fuzz/corpus/fuzz_access/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fuzz_shipped_schema.h"
#include "../../src/config/config_lexer.h"
#include "access_rules.h"
#include "dn.h"
#include "fuzz_regex_guard.h"
#include "lumen_error.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FILE_NAME "fuzz.conf"

static struct schema *schema;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{

	(void)argc;
	(void)argv;
	schema = fuzz_load_schema("fuzz_access", fuzz_schema_files, 5);
	return 0;
}

/* "fuzz.conf:LINE: access: ..." (line 0: any line). */
static void check_err(const char *err, unsigned line)
{
	char prefix[64];
	if (line != 0)
		snprintf(prefix, sizeof(prefix), FILE_NAME ":%u: access: ", line);
	else
		snprintf(prefix, sizeof(prefix), FILE_NAME ":");
	if (strncmp(err, prefix, strlen(prefix)) != 0 || strstr(err, ": access: ") == NULL ||
	    strlen(err) <= strlen(prefix)) {
		fprintf(stderr, "fuzz_access: error \"%s\" does not start with \"%s\"\n", err, prefix);
		abort();
	}
}

static void check_dn(const struct access_dn_pattern *p)
{
	struct arena arena;
	struct ber_view again;

	if (p->style == ACCESS_DN_REGEX) {
		if (!p->regex_compiled)
			abort();
		return;
	}
	if (p->style == ACCESS_DN_ANY || p->expand)
		return;
	/* A normalized DN normalizes to itself. */
	arena_init(&arena, 0);
	if (dn_normalize(schema, (const char *)p->ndn.ptr, p->ndn.len, &arena, &again) != LUMEN_OK ||
	    again.len != p->ndn.len || (again.len > 0 && memcmp(again.ptr, p->ndn.ptr, again.len) != 0)) {
		fprintf(stderr, "fuzz_access: \"%.*s\" is not normalized\n", (int)p->ndn.len,
			(const char *)p->ndn.ptr);
		abort();
	}
	arena_free(&arena);
}

static void check_compiled(const struct access_rules *rules)
{
	for (size_t i = 0; i < rules->n_rules; i++) {
		const struct access_rule *r = &rules->rules[i];
		if (r->n_who == 0 || r->who == NULL)
			abort();
		if (r->has_attrs && !r->attrs_entry && !r->attrs_children &&
		    (r->attr_bits == NULL || r->n_attr_words == 0))
			abort();
		if (r->has_filter && r->filter.root == NULL)
			abort();
		check_dn(&r->what);
		for (size_t w = 0; w < r->n_who; w++) {
			const struct access_who *who = &r->who[w];
			if (who->level > ACCESS_MANAGE || who->control > ACCESS_BREAK ||
			    who->kind > ACCESS_WHO_GROUP)
				abort();
			if (who->kind == ACCESS_WHO_DN || who->kind == ACCESS_WHO_GROUP)
				check_dn(&who->dn);
			if (who->kind == ACCESS_WHO_GROUP &&
			    (who->group_class == NULL || who->group_member == NULL))
				abort();
			if (strcmp(access_level_name(who->level), "unknown") == 0)
				abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct access_rules rules;
	char err[512];
	char *text = malloc(size + 1);
	unsigned line = 0;

	if (text == NULL)
		return 0;
	if (fuzz_regex_too_costly(data, size)) {
		free(text);
		return 0;
	}
	memcpy(text, data, size);
	text[size] = '\0';
	memset(&rules, 0, sizeof(rules));
	/* Logical lines as slapd.conf has them: a line starting with white
	 * space continues the previous one (joined with its newline kept, as
	 * config_file_next_line does); numbered by their first physical line. */
	char *logical = malloc(size + 1);
	if (logical == NULL) {
		free(text);
		return 0;
	}
	unsigned physical = 0;
	for (char *start = text; start != NULL;) {
		size_t used = 0;
		line = physical + 1;
		do {
			char *end = strchr(start, '\n');
			size_t len = end != NULL ? (size_t)(end - start) : strlen(start);
			if (used > 0)
				logical[used++] = '\n';
			memcpy(logical + used, start, len);
			used += len;
			physical++;
			start = end != NULL ? end + 1 : NULL;
		} while (start != NULL && (*start == ' ' || *start == '\t'));
		logical[used] = '\0';
		char *argv[CONFIG_MAX_ARGS];
		size_t argc = 0;
		const char *why = NULL;
		if (config_split(logical, argv, &argc, &why) == LUMEN_OK && argc > 0 &&
		    strcasecmp(argv[0], "access") == 0) {
			size_t before = rules.n_rules;
			err[0] = '\0';
			int rc = access_rule_parse(&rules, argc, argv, FILE_NAME, line, err, sizeof(err));
			if (rc == LUMEN_OK) {
				if (rules.n_rules != before + 1)
					abort();
			} else {
				if (rc != LUMEN_EMALFORMED && rc != LUMEN_ENOMEM)
					abort();
				if (rules.n_rules != before)
					abort();
				if (rc != LUMEN_ENOMEM)
					check_err(err, line);
			}
		}
	}
	free(logical);
	err[0] = '\0';
	int rc = access_rules_compile(&rules, schema, err, sizeof(err));
	if (rc == LUMEN_OK) {
		if (!rules.compiled)
			abort();
		check_compiled(&rules);
	} else if (rc != LUMEN_ENOMEM) {
		if (rc != LUMEN_ENOTFOUND && rc != LUMEN_EMALFORMED)
			abort();
		check_err(err, 0);
	}
	access_rules_free(&rules);
	free(text);
	return 0;
}
