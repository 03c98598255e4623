/*
 * access_rules_fixture.h — access rules from slapd.conf text, for the
 * suites that decide access (header-only).
 *
 * access_rules_split cuts one line into words as slapd.conf does (double
 * quotes group); access_rules_load parses '\n'-separated `access to`
 * directives split so into rules and compiles them against
 * entry_fixture.h's schema, failing the test on any error with the
 * parser's message. The caller frees the rules (access_rules_free) before
 * the schema.
 */
#ifndef LUMEN_ACCESS_RULES_FIXTURE_H
#define LUMEN_ACCESS_RULES_FIXTURE_H

#include <check.h>
#include <stdbool.h>
#include <string.h>

#include "access_rules.h"
#include "entry_fixture.h"
#include "lumen_error.h"

/* Split a line as slapd.conf does: whitespace separates, quotes group.
 * The words are cut out of text in place; at most max of them. */
static inline size_t access_rules_split(char *text, char **argv, size_t max)
{
	size_t n = 0;
	char *in = text;
	while (*in != '\0' && n < max) {
		while (*in == ' ')
			in++;
		if (*in == '\0')
			break;
		char *out = in;
		argv[n++] = out;
		bool quoted = false;
		while (*in != '\0' && (quoted || *in != ' ')) {
			if (*in == '"') {
				quoted = !quoted;
				in++;
			} else {
				*out++ = *in++;
			}
		}
		bool at_end = *in == '\0';
		*out = '\0';
		if (!at_end)
			in++;
	}
	return n;
}

static inline void access_rules_load(struct access_rules *rules, const char *text)
{
	char buf[2048], err[512] = "";
	ck_assert_uint_lt(strlen(text), sizeof(buf));
	strcpy(buf, text);
	char *save_line = NULL;
	unsigned line = 1;
	for (char *l = strtok_r(buf, "\n", &save_line); l; l = strtok_r(NULL, "\n", &save_line)) {
		char *argv[64];
		size_t argc = access_rules_split(l, argv, 64);
		int rc = access_rule_parse(rules, argc, argv, "test.conf", line++, err, sizeof(err));
		ck_assert_msg(rc == LUMEN_OK, "%s", err);
	}
	ck_assert_msg(access_rules_compile(rules, fixture_schema, err, sizeof(err)) == LUMEN_OK,
		      "%s", err);
}

#endif
