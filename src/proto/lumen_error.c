/*
 * lumen_error.c — text for the project's error codes (lumen_error.h).
 */
#include "lumen_error.h"

#include <stddef.h>

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
