/*
 * lumen_error.c — text for the project's error codes, and the FILE:LINE
 * form of start-up errors (lumen_error.h).
 */
#include "lumen_error.h"

#include <stddef.h>
#include <stdio.h>

/* Indexed by the negated code, so adding a code is adding a row. */
static const char *const error_text[] = {
	[0] = "success",
	[-LUMEN_ENOMEM] = "out of memory",
	[-LUMEN_EINCOMPLETE] = "input incomplete",
	[-LUMEN_EMALFORMED] = "malformed input",
	[-LUMEN_ELIMIT] = "limit exceeded",
	[-LUMEN_EINVAL] = "invalid argument",
	[-LUMEN_ENOTFOUND] = "not found",
	[-LUMEN_EEXIST] = "already exists",
	[-LUMEN_EIO] = "input/output error",
	[-LUMEN_EUNSUPPORTED] = "not supported",
	[-LUMEN_EBUSY] = "resource busy",
	[-LUMEN_EFULL] = "storage or queue full",
	[-LUMEN_ESCHEMA] = "schema violation",
	[-LUMEN_EPOISONED] = "object poisoned by an earlier failure",
};

const char *lumen_strerror(int err)
{
	if (err > 0 || err < -(int)(sizeof(error_text) / sizeof(error_text[0]) - 1))
		return "unknown error";
	const char *text = error_text[-err];
	return text != NULL ? text : "unknown error";
}

int lumen_vfail_at(char *err, size_t errlen, const char *file, unsigned line, const char *topic,
		   int code, const char *fmt, va_list ap)
{
	if (err == NULL || errlen == 0)
		return code;
	int n = snprintf(err, errlen, "%s:%u: %s%s", file, line, topic != NULL ? topic : "",
			 topic != NULL ? ": " : "");
	if (n >= 0 && (size_t)n < errlen)
		vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	return code;
}
