/*
 * access_parse.c — `access to … by …` directives: the grammar (parse phase,
 * no schema needed) and the resolution against the schema (compile phase).
 * See access_rules.h for the accepted syntax and the two phases.
 */
#include "access_rules.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "array.h"
#include "dn.h"
#include "lumen_error.h"

#define DEFAULT_GROUP_CLASS "groupOfNames"
#define DEFAULT_GROUP_MEMBER "member"

/* "FILE:LINE: access: " + message into err. Returns code. */
static int fail(char *err, size_t errlen, const char *file, unsigned line, int code,
		const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static int fail(char *err, size_t errlen, const char *file, unsigned line, int code,
		const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	code = lumen_vfail_at(err, errlen, file, line, "access", code, fmt, ap);
	va_end(ap);
	return code;
}

/* Where one directive is being parsed, for error messages. */
struct parse_site {
	const char *file;
	unsigned line;
	char *err;
	size_t errlen;
};

#define SITE_FAIL(site, code, ...) \
	fail((site)->err, (site)->errlen, (site)->file, (site)->line, (code), __VA_ARGS__)

const char *access_level_name(enum access_level level)
{
	static const char *const names[] = {
		[ACCESS_NONE] = "none", [ACCESS_DISCLOSE] = "disclose", [ACCESS_AUTH] = "auth",
		[ACCESS_COMPARE] = "compare", [ACCESS_SEARCH] = "search", [ACCESS_READ] = "read",
		[ACCESS_WRITE] = "write", [ACCESS_MANAGE] = "manage",
	};
	if ((unsigned)level >= sizeof(names) / sizeof(names[0]))
		return "unknown";
	return names[level];
}

static bool parse_level(const char *word, enum access_level *out)
{
	for (unsigned l = ACCESS_NONE; l <= ACCESS_MANAGE; l++) {
		if (strcasecmp(word, access_level_name((enum access_level)l)) == 0) {
			*out = (enum access_level)l;
			return true;
		}
	}
	return false;
}

static bool parse_control(const char *word, enum access_control *out)
{
	static const struct { const char *name; enum access_control control; } table[] = {
		{ "stop", ACCESS_STOP }, { "continue", ACCESS_CONTINUE }, { "break", ACCESS_BREAK },
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (strcasecmp(word, table[i].name) == 0) {
			*out = table[i].control;
			return true;
		}
	}
	return false;
}

/* The DN styles of slapd.access(5), by every name it accepts. */
static bool parse_dn_style(const char *name, size_t len, enum access_dn_style *out)
{
	static const struct { const char *name; enum access_dn_style style; } table[] = {
		{ "base", ACCESS_DN_BASE }, { "exact", ACCESS_DN_BASE },
		{ "baseobject", ACCESS_DN_BASE }, { "default", ACCESS_DN_BASE },
		{ "one", ACCESS_DN_ONE }, { "onelevel", ACCESS_DN_ONE },
		{ "sub", ACCESS_DN_SUBTREE }, { "subtree", ACCESS_DN_SUBTREE },
		{ "children", ACCESS_DN_CHILDREN }, { "regex", ACCESS_DN_REGEX },
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (strlen(table[i].name) == len && strncasecmp(name, table[i].name, len) == 0) {
			*out = table[i].style;
			return true;
		}
	}
	return false;
}

/* Strip one pair of enclosing double quotes, in place. */
static char *unquote(char *value)
{
	size_t len = strlen(value);
	if (len >= 2 && value[0] == '"' && value[len - 1] == '"') {
		value[len - 1] = '\0';
		return value + 1;
	}
	return value;
}

/* True if text holds a $N reference (a '$' followed by a digit). */
static bool has_capture_reference(const char *text)
{
	for (const char *p = strchr(text, '$'); p != NULL; p = strchr(p + 1, '$'))
		if (isdigit((unsigned char)p[1]))
			return true;
	return false;
}

static void dn_pattern_release(struct access_dn_pattern *p)
{
	if (p->regex_compiled)
		regfree(&p->regex);
	free(p->text);
	memset(p, 0, sizeof(*p));
}

/*
 * Fill a DN pattern from its style and text. Regexes are compiled here
 * (case-insensitive, extended; the WHAT regex keeps its groups for $N).
 * LUMEN_EMALFORMED (bad regex, $N in a WHO regex), LUMEN_ENOMEM.
 */
static int dn_pattern_set(const struct parse_site *site, struct access_dn_pattern *p,
			  enum access_dn_style style, const char *text, bool is_who)
{
	p->style = style;
	p->text = strdup(text);
	if (p->text == NULL)
		return LUMEN_ENOMEM;
	if (style != ACCESS_DN_REGEX) {
		p->expand = is_who && has_capture_reference(text);
		return LUMEN_OK;
	}
	if (is_who && has_capture_reference(text))
		return SITE_FAIL(site, LUMEN_EMALFORMED,
				 "$N substitution is not supported in a WHO regex \"%s\"", text);
	int flags = REG_EXTENDED | REG_ICASE | (is_who ? REG_NOSUB : 0);
	int status = regcomp(&p->regex, text, flags);
	if (status != 0) {
		char why[128];
		regerror(status, &p->regex, why, sizeof(why));
		return SITE_FAIL(site, LUMEN_EMALFORMED, "bad regex \"%s\": %s", text, why);
	}
	p->regex_compiled = true;
	return LUMEN_OK;
}

/*
 * "dn", "dn.STYLE": the style of a `dn...=` token (key = text before '=').
 * LUMEN_EMALFORMED for an unknown style.
 */
static int dn_key_style(const struct parse_site *site, const char *key, size_t key_len,
			enum access_dn_style *style)
{
	*style = ACCESS_DN_BASE;
	if (key_len == 2)
		return LUMEN_OK;
	if (key[2] != '.' || !parse_dn_style(key + 3, key_len - 3, style))
		return SITE_FAIL(site, LUMEN_EMALFORMED, "unknown DN style \"%.*s\"",
				 (int)key_len, key);
	return LUMEN_OK;
}

static bool key_is(const char *key, size_t key_len, const char *word)
{
	return strlen(word) == key_len && strncasecmp(key, word, key_len) == 0;
}

static bool key_is_dn(const char *key, size_t key_len)
{
	return key_len >= 2 && strncasecmp(key, "dn", 2) == 0 && (key_len == 2 || key[2] == '.');
}

/* One WHAT token: `*`, dn[.style]=, attrs=/attr=, filter=. */
static int parse_what_token(const struct parse_site *site, struct access_rules *rules,
			    struct access_rule *rule, char *token, bool *seen_dn)
{
	if (strcmp(token, "*") == 0) {
		if (*seen_dn)
			return SITE_FAIL(site, LUMEN_EMALFORMED, "WHAT names the entries twice (\"*\")");
		*seen_dn = true;
		return LUMEN_OK;
	}
	char *eq = strchr(token, '=');
	if (eq == NULL)
		return SITE_FAIL(site, LUMEN_EMALFORMED,
				 "unknown WHAT \"%s\" (expected *, dn=, attrs= or filter=)", token);
	size_t key_len = (size_t)(eq - token);
	char *value = unquote(eq + 1);
	if (key_is_dn(token, key_len)) {
		enum access_dn_style style;
		int rc = dn_key_style(site, token, key_len, &style);
		if (rc != LUMEN_OK)
			return rc;
		if (*seen_dn)
			return SITE_FAIL(site, LUMEN_EMALFORMED, "WHAT names the entries twice (\"%s\")",
					 token);
		*seen_dn = true;
		return dn_pattern_set(site, &rule->what, style, value, false);
	}
	if (key_is(token, key_len, "attrs") || key_is(token, key_len, "attr")) {
		if (rule->has_attrs)
			return SITE_FAIL(site, LUMEN_EMALFORMED, "attrs= given twice");
		if (*value == '\0')
			return SITE_FAIL(site, LUMEN_EMALFORMED, "attrs= needs a list of attributes");
		rule->attrs_text = strdup(value);
		if (rule->attrs_text == NULL)
			return LUMEN_ENOMEM;
		rule->has_attrs = true;
		return LUMEN_OK;
	}
	if (key_is(token, key_len, "filter")) {
		if (rule->has_filter)
			return SITE_FAIL(site, LUMEN_EMALFORMED, "filter= given twice");
		/* The parsed tree keeps views into its text (attribute names,
		 * plain values): parse a copy the rules own, not the caller's
		 * argv, which the config reader reuses for the next line. */
		size_t len = strlen(value), at = 0;
		const char *text = arena_strndup(&rules->arena, value, len);
		if (text == NULL)
			return LUMEN_ENOMEM;
		int rc = filter_text_parse(text, len, &rules->arena, NULL, &rule->filter_parsed,
					   &at);
		if (rc == LUMEN_ENOMEM)
			return rc;
		if (rc != LUMEN_OK)
			return SITE_FAIL(site, LUMEN_EMALFORMED, "bad filter \"%s\" at offset %zu",
					 value, at);
		rule->has_filter = true;
		return LUMEN_OK;
	}
	return SITE_FAIL(site, LUMEN_EMALFORMED,
			 "unknown WHAT \"%.*s\" (expected *, dn=, attrs= or filter=)",
			 (int)key_len, token);
}

/* "group", "group/CLASS", "group/CLASS/ATTR" (key before '='). */
static int parse_group_key(const struct parse_site *site, struct access_who *who,
			   const char *key, size_t key_len)
{
	if (key_len == 5)
		return LUMEN_OK;
	if (key[5] != '/')
		return SITE_FAIL(site, LUMEN_EMALFORMED,
				 "unknown WHO \"%.*s\" (group styles are not supported)",
				 (int)key_len, key);
	const char *cls = key + 6;
	const char *end = key + key_len;
	const char *slash = memchr(cls, '/', (size_t)(end - cls));
	const char *cls_end = slash != NULL ? slash : end;
	if (cls_end == cls || (slash != NULL && slash + 1 == end))
		return SITE_FAIL(site, LUMEN_EMALFORMED, "empty class or attribute in \"%.*s\"",
				 (int)key_len, key);
	who->group_class_name = strndup(cls, (size_t)(cls_end - cls));
	if (who->group_class_name == NULL)
		return LUMEN_ENOMEM;
	if (slash != NULL) {
		who->group_attribute_name = strndup(slash + 1, (size_t)(end - slash - 1));
		if (who->group_attribute_name == NULL)
			return LUMEN_ENOMEM;
	}
	return LUMEN_OK;
}

/* One WHO token. LUMEN_EMALFORMED for an unknown keyword or style. */
static int parse_who_token(const struct parse_site *site, struct access_who *who, char *token)
{
	static const struct { const char *name; enum access_who_kind kind; } plain[] = {
		{ "*", ACCESS_WHO_ANYONE }, { "anonymous", ACCESS_WHO_ANONYMOUS },
		{ "users", ACCESS_WHO_USERS }, { "self", ACCESS_WHO_SELF },
	};
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
		if (strcasecmp(token, plain[i].name) == 0) {
			who->kind = plain[i].kind;
			return LUMEN_OK;
		}
	}
	char *eq = strchr(token, '=');
	size_t key_len = eq != NULL ? (size_t)(eq - token) : strlen(token);
	if (eq != NULL && key_is_dn(token, key_len)) {
		enum access_dn_style style;
		int rc = dn_key_style(site, token, key_len, &style);
		if (rc != LUMEN_OK)
			return rc;
		who->kind = ACCESS_WHO_DN;
		return dn_pattern_set(site, &who->dn, style, unquote(eq + 1), true);
	}
	if (eq != NULL && key_len >= 5 && strncasecmp(token, "group", 5) == 0 &&
	    (key_len == 5 || token[5] == '/')) {
		who->kind = ACCESS_WHO_GROUP;
		int rc = parse_group_key(site, who, token, key_len);
		if (rc != LUMEN_OK)
			return rc;
		return dn_pattern_set(site, &who->dn, ACCESS_DN_BASE, unquote(eq + 1), true);
	}
	return SITE_FAIL(site, LUMEN_EMALFORMED,
			 "unknown WHO \"%.*s\" (expected *, anonymous, users, self, dn=, group=)",
			 (int)key_len, token);
}

static void who_release(struct access_who *who)
{
	dn_pattern_release(&who->dn);
	free(who->group_class_name);
	free(who->group_attribute_name);
}

static void rule_release(struct access_rule *rule)
{
	dn_pattern_release(&rule->what);
	free(rule->attrs_text);
	for (size_t i = 0; i < rule->n_who; i++)
		who_release(&rule->who[i]);
	free(rule->who);
	free(rule->file);
	memset(rule, 0, sizeof(*rule));
}

/*
 * `by WHO [ACCESS] [CONTROL]` starting at argv[*pos] (the word after `by`).
 * Advances *pos past the clause.
 */
static int parse_by_clause(const struct parse_site *site, struct access_rule *rule,
			   size_t argc, char **argv, size_t *pos)
{
	struct access_who *who = ARRAY_PUSH(rule->who, rule->n_who);
	if (who == NULL)
		return LUMEN_ENOMEM;

	if (*pos >= argc)
		return SITE_FAIL(site, LUMEN_EMALFORMED, "`by` without WHO");
	int rc = parse_who_token(site, who, argv[(*pos)++]);
	if (rc != LUMEN_OK)
		return rc;
	if (*pos < argc && strcasecmp(argv[*pos], "by") != 0 &&
	    parse_level(argv[*pos], &who->level))
		(*pos)++;
	if (*pos < argc && strcasecmp(argv[*pos], "by") != 0 &&
	    parse_control(argv[*pos], &who->control))
		(*pos)++;
	if (*pos < argc && strcasecmp(argv[*pos], "by") != 0)
		return SITE_FAIL(site, LUMEN_EMALFORMED,
				 "bad access level or control \"%s\" (expected none, disclose, "
				 "auth, compare, search, read, write, manage; stop, continue, break)",
				 argv[*pos]);
	return LUMEN_OK;
}

/* Parse argv (from "to") into rule. */
static int parse_rule(const struct parse_site *site, struct access_rules *rules,
		      struct access_rule *rule, size_t argc, char **argv)
{
	if (argc < 2 || strcasecmp(argv[1], "to") != 0)
		return SITE_FAIL(site, LUMEN_EMALFORMED, "expected \"access to WHAT by WHO ACCESS\"");
	size_t pos = 2;
	bool seen_dn = false;
	size_t n_what = 0;
	for (; pos < argc && strcasecmp(argv[pos], "by") != 0; pos++, n_what++) {
		int rc = parse_what_token(site, rules, rule, argv[pos], &seen_dn);
		if (rc != LUMEN_OK)
			return rc;
	}
	if (n_what == 0)
		return SITE_FAIL(site, LUMEN_EMALFORMED, "missing WHAT after \"to\"");
	if (pos == argc)
		return SITE_FAIL(site, LUMEN_EMALFORMED, "missing \"by\" clause");
	while (pos < argc) {
		pos++; /* "by" */
		int rc = parse_by_clause(site, rule, argc, argv, &pos);
		if (rc != LUMEN_OK)
			return rc;
	}
	return LUMEN_OK;
}

static int rules_reserve(struct access_rules *rules)
{
	if (!rules->arena_ready) {
		arena_init(&rules->arena, 0);
		rules->arena_ready = true;
	}
	struct access_rule *bigger = array_reserve(rules->rules, &rules->cap_rules,
						   rules->n_rules + 1, sizeof(*bigger), 8);
	if (bigger == NULL)
		return LUMEN_ENOMEM;
	rules->rules = bigger;
	return LUMEN_OK;
}

int access_rule_parse(struct access_rules *rules, size_t argc, char **argv,
		      const char *file, unsigned line, char *err, size_t errlen)
{
	const struct parse_site site = { file != NULL ? file : "(unknown)", line, err, errlen };
	if (rules == NULL || argv == NULL || rules->compiled)
		return SITE_FAIL(&site, LUMEN_EINVAL, "rules already compiled");
	int rc = rules_reserve(rules);
	if (rc != LUMEN_OK)
		return rc;
	struct access_rule *rule = &rules->rules[rules->n_rules];
	memset(rule, 0, sizeof(*rule));
	rule->line = line;
	rule->file = strdup(site.file);
	if (rule->file == NULL) {
		rc = LUMEN_ENOMEM;
		goto fail;
	}
	rc = parse_rule(&site, rules, rule, argc, argv);
	if (rc != LUMEN_OK)
		goto fail;
	rules->n_rules++;
	return LUMEN_OK;
fail:
	if (rc == LUMEN_ENOMEM)
		SITE_FAIL(&site, rc, "out of memory");
	rule_release(rule);
	return rc;
}

/* ------------------------------------------------------------ compile */

static void bit_set(uint64_t *bits, unsigned index)
{
	bits[index / 64] |= UINT64_C(1) << (index % 64);
}

/* Mark type and every subtype of it. */
static void mark_type_and_subtypes(const struct schema *s, uint64_t *bits,
				   const struct attribute_type *type)
{
	size_t n = schema_attribute_type_count(s);
	for (size_t i = 0; i < n; i++) {
		const struct attribute_type *t = schema_attribute_type_at(s, i);
		if (attribute_type_is_subtype(t, type))
			bit_set(bits, t->index);
	}
}

static void mark_class(const struct schema *s, uint64_t *bits, const struct object_class *oc)
{
	for (size_t i = 0; i < oc->n_must; i++)
		mark_type_and_subtypes(s, bits, oc->must[i]);
	for (size_t i = 0; i < oc->n_may; i++)
		mark_type_and_subtypes(s, bits, oc->may[i]);
}

/* One item of an attrs= list. LUMEN_ENOTFOUND for an unknown type or class. */
static int compile_attr_item(const struct parse_site *site, const struct schema *s,
			     struct access_rule *rule, const char *item, size_t len)
{
	if (len == 5 && strncasecmp(item, "entry", 5) == 0) {
		rule->attrs_entry = true;
		return LUMEN_OK;
	}
	if (len == 8 && strncasecmp(item, "children", 8) == 0) {
		rule->attrs_children = true;
		return LUMEN_OK;
	}
	if (len > 1 && item[0] == '@') {
		const struct object_class *oc = schema_object_class(s, item + 1, len - 1);
		if (oc == NULL)
			return SITE_FAIL(site, LUMEN_ENOTFOUND, "unknown object class \"%.*s\" in attrs=",
					 (int)len - 1, item + 1);
		mark_class(s, rule->attr_bits, oc);
		return LUMEN_OK;
	}
	const struct attribute_type *type = len > 0 ? schema_attribute_type(s, item, len) : NULL;
	if (type == NULL)
		return SITE_FAIL(site, LUMEN_ENOTFOUND, "unknown attribute \"%.*s\" in attrs=",
				 (int)len, item);
	mark_type_and_subtypes(s, rule->attr_bits, type);
	return LUMEN_OK;
}

static int compile_attrs(const struct parse_site *site, struct access_rules *rules,
			 struct access_rule *rule)
{
	const struct schema *s = rules->schema;
	rule->n_attr_words = (schema_attribute_type_count(s) + 63) / 64;
	rule->attr_bits = arena_calloc(&rules->arena, rule->n_attr_words + 1, sizeof(uint64_t));
	if (rule->attr_bits == NULL)
		return LUMEN_ENOMEM;
	const char *p = rule->attrs_text;
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);
		while (len > 0 && isspace((unsigned char)*p)) {
			p++;
			len--;
		}
		while (len > 0 && isspace((unsigned char)p[len - 1]))
			len--;
		int rc = compile_attr_item(site, s, rule, p, len);
		if (rc != LUMEN_OK)
			return rc;
		if (comma == NULL)
			return LUMEN_OK;
		p = comma + 1;
	}
}

static int compile_dn(const struct parse_site *site, struct access_rules *rules,
		      struct access_dn_pattern *p)
{
	if (p->style == ACCESS_DN_ANY || p->style == ACCESS_DN_REGEX || p->expand)
		return LUMEN_OK;
	int rc = dn_normalize(rules->schema, p->text, strlen(p->text), &rules->arena, &p->ndn);
	if (rc == LUMEN_ENOMEM)
		return rc;
	if (rc != LUMEN_OK)
		return SITE_FAIL(site, LUMEN_EMALFORMED, "bad DN \"%s\": %s", p->text,
				 lumen_strerror(rc));
	return LUMEN_OK;
}

/* $N references of a WHO template must name groups of the WHAT regex. */
static int check_expansion(const struct parse_site *site, const struct access_rule *rule,
			   const struct access_dn_pattern *p)
{
	if (rule->what.style != ACCESS_DN_REGEX)
		return SITE_FAIL(site, LUMEN_EMALFORMED,
				 "\"%s\" uses $N but the rule has no dn.regex WHAT", p->text);
	for (const char *d = strchr(p->text, '$'); d != NULL; d = strchr(d + 1, '$')) {
		if (!isdigit((unsigned char)d[1]))
			continue;
		size_t group = (size_t)(d[1] - '0');
		if (group > rule->what.regex.re_nsub)
			return SITE_FAIL(site, LUMEN_EMALFORMED,
					 "\"%s\" uses $%zu but the regex has %zu group(s)", p->text,
					 group, rule->what.regex.re_nsub);
	}
	return LUMEN_OK;
}

static int compile_group(const struct parse_site *site, const struct schema *s,
			 struct access_who *who)
{
	const char *cls = who->group_class_name ? who->group_class_name : DEFAULT_GROUP_CLASS;
	const char *attr = who->group_attribute_name ? who->group_attribute_name
						     : DEFAULT_GROUP_MEMBER;
	who->group_class = schema_object_class(s, cls, strlen(cls));
	if (who->group_class == NULL)
		return SITE_FAIL(site, LUMEN_ENOTFOUND, "unknown group object class \"%s\"", cls);
	who->group_member = schema_attribute_type(s, attr, strlen(attr));
	if (who->group_member == NULL)
		return SITE_FAIL(site, LUMEN_ENOTFOUND, "unknown group member attribute \"%s\"",
				 attr);
	return LUMEN_OK;
}

static int compile_who(const struct parse_site *site, struct access_rules *rules,
		       const struct access_rule *rule, struct access_who *who)
{
	if (who->kind != ACCESS_WHO_DN && who->kind != ACCESS_WHO_GROUP)
		return LUMEN_OK;
	int rc = who->dn.expand ? check_expansion(site, rule, &who->dn)
				: compile_dn(site, rules, &who->dn);
	if (rc == LUMEN_OK && who->kind == ACCESS_WHO_GROUP)
		rc = compile_group(site, rules->schema, who);
	return rc;
}

static int compile_rule(struct access_rules *rules, struct access_rule *rule,
			char *err, size_t errlen)
{
	const struct parse_site site = { rule->file, rule->line, err, errlen };
	int rc = compile_dn(&site, rules, &rule->what);
	if (rc == LUMEN_OK && rule->has_attrs)
		rc = compile_attrs(&site, rules, rule);
	if (rc == LUMEN_OK && rule->has_filter) {
		rc = filter_compile(rules->schema, rule->filter_parsed, NULL, &rules->arena,
				    &rule->filter);
		if (rc != LUMEN_OK && rc != LUMEN_ENOMEM)
			rc = SITE_FAIL(&site, LUMEN_EMALFORMED, "filter does not compile: %s",
				       lumen_strerror(rc));
	}
	for (size_t i = 0; rc == LUMEN_OK && i < rule->n_who; i++)
		rc = compile_who(&site, rules, rule, &rule->who[i]);
	if (rc == LUMEN_ENOMEM)
		SITE_FAIL(&site, rc, "out of memory");
	return rc;
}

int access_rules_compile(struct access_rules *rules, const struct schema *s,
			 char *err, size_t errlen)
{
	if (rules == NULL || s == NULL || rules->compiled) {
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "access: rules already compiled or no schema");
		return LUMEN_EINVAL;
	}
	if (!rules->arena_ready) {
		arena_init(&rules->arena, 0);
		rules->arena_ready = true;
	}
	rules->schema = s;
	for (size_t i = 0; i < rules->n_rules; i++) {
		int rc = compile_rule(rules, &rules->rules[i], err, errlen);
		if (rc != LUMEN_OK)
			return rc;
	}
	rules->compiled = true;
	return LUMEN_OK;
}

void access_rules_free(struct access_rules *rules)
{
	if (rules == NULL)
		return;
	for (size_t i = 0; i < rules->n_rules; i++)
		rule_release(&rules->rules[i]);
	free(rules->rules);
	if (rules->arena_ready)
		arena_free(&rules->arena);
	memset(rules, 0, sizeof(*rules));
}
