/*
 * config_args.c — what every directive's handler shares: errors that name
 * FILE:LINE, "FILE:LINE" origins kept for later errors, string copies and
 * the number and limit arguments (config_internal.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "array.h"
#include "config_internal.h"
#include "lumen_error.h"

int config_fail_at(struct parse_state *st, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	code = lumen_vfail_at(st->err, st->errlen, st->file->path, st->file->line, NULL, code, fmt,
			      ap);
	va_end(ap);
	return code;
}

char *config_origin(const struct parse_state *st)
{
	char *s = NULL;
	if (asprintf(&s, "%s:%u", st->file->path, st->file->line) < 0)
		return NULL;
	return s;
}

/* Replace *slot with a copy of value. */
int config_set_string(char **slot, const char *value)
{
	char *copy = strdup(value);
	if (copy == NULL)
		return LUMEN_ENOMEM;
	free(*slot);
	*slot = copy;
	return LUMEN_OK;
}

/* Append a copy of value to a string array. */
int config_push_string(char ***array, size_t *n, const char *value)
{
	char **added = ARRAY_PUSH(*array, *n);
	if (added == NULL)
		return LUMEN_ENOMEM;
	*added = strdup(value);
	return *added != NULL ? LUMEN_OK : LUMEN_ENOMEM;
}

/* Decimal unsigned number in [min, max], with an optional K/M/G/T suffix
 * (powers of 1024) when allow_suffix is set. */
int config_parse_unsigned(const char *text, uint64_t min, uint64_t max,
			  bool allow_suffix, uint64_t *out)
{
	if (text[0] < '0' || text[0] > '9')
		return LUMEN_EMALFORMED;
	errno = 0;
	char *end = NULL;
	unsigned long long v = strtoull(text, &end, 10);
	if (errno != 0)
		return LUMEN_EMALFORMED;
	if (allow_suffix && *end != '\0' && end[1] == '\0') {
		unsigned shift = 0;
		switch (*end) {
		case 'k': case 'K': shift = 10; break;
		case 'm': case 'M': shift = 20; break;
		case 'g': case 'G': shift = 30; break;
		case 't': case 'T': shift = 40; break;
		default: return LUMEN_EMALFORMED;
		}
		if (v > (UINT64_MAX >> shift))
			return LUMEN_EMALFORMED;
		v <<= shift;
		end++;
	}
	if (*end != '\0' || v < min || v > max)
		return LUMEN_EMALFORMED;
	*out = v;
	return LUMEN_OK;
}

int config_number_arg(struct parse_state *st, const char *directive, const char *text,
		      uint64_t min, uint64_t max, bool allow_suffix, uint64_t *out)
{
	if (config_parse_unsigned(text, min, max, allow_suffix, out) != LUMEN_OK)
		return config_fail_at(st, LUMEN_EMALFORMED,
				      "%s: expected an integer between %llu and %llu%s, got \"%s\"",
				      directive, (unsigned long long)min, (unsigned long long)max,
				      allow_suffix ? " (optionally with K, M, G or T)" : "", text);
	return LUMEN_OK;
}

/* v into a number field of size bytes (an unsigned, a size_t or a uint64_t). */
static void store_number(void *at, size_t size, uint64_t v)
{
	if (size == sizeof(unsigned)) {
		unsigned u = (unsigned)v;
		memcpy(at, &u, sizeof(u));
	} else if (size == sizeof(uint64_t)) {
		memcpy(at, &v, sizeof(v));
	} else {
		size_t z = (size_t)v;
		memcpy(at, &z, sizeof(z));
	}
}

int config_apply_field(struct parse_state *st, const struct config_field *field, char **argv)
{
	char *base = field->in_database ? (char *)st->db : (char *)st->cfg;
	char *at = base + field->offset;
	if (field->kind == CONFIG_FIELD_STRING)
		return config_set_string((char **)(void *)at, argv[1]);
	uint64_t v;
	int rc = config_number_arg(st, argv[0], argv[1], field->min, field->max,
				   field->allow_suffix, &v);
	if (rc == LUMEN_OK)
		store_number(at, field->size, v);
	return rc;
}

/* A sizelimit/timelimit value: a count, "unlimited" or -1. */
int config_limit_arg(struct parse_state *st, const char *directive, const char *text,
		     long *out)
{
	uint64_t v;
	if (strcasecmp(text, "unlimited") == 0 || strcmp(text, "-1") == 0) {
		*out = CONFIG_LIMIT_UNLIMITED;
		return LUMEN_OK;
	}
	if (config_parse_unsigned(text, 0, INT_MAX, false, &v) != LUMEN_OK)
		return config_fail_at(st, LUMEN_EMALFORMED,
			       "%s: expected a non-negative integer or \"unlimited\", got \"%s\"",
				      directive, text);
	*out = (long)v;
	return LUMEN_OK;
}

void config_free_strings(char **strings, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(strings[i]);
	free(strings);
}
