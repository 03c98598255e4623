/*
 * lumen_error.h — the project's one error vocabulary.
 *
 * Contract: every internal function that can fail returns an int that is
 * LUMEN_OK (0) or one of the negative codes below. LDAP result codes are a
 * different vocabulary (ldap_result_codes.h) used only at the protocol edge,
 * where the server maps a lumen_err to the result code the client sees.
 *
 * Thread-safety: lumen_strerror() returns static strings; safe anywhere.
 */
#ifndef LUMEN_ERROR_H
#define LUMEN_ERROR_H

#include <stdarg.h>
#include <stddef.h>

enum lumen_err {
	LUMEN_OK = 0,
	LUMEN_ENOMEM = -1,      /* allocation failed */
	LUMEN_EINCOMPLETE = -2, /* input ends before the element does: read more */
	LUMEN_EMALFORMED = -3,  /* input violates the encoding or grammar */
	LUMEN_ELIMIT = -4,      /* a configured bound (size, depth, count) exceeded */
	LUMEN_EINVAL = -5,      /* caller passed an invalid argument or state */
	LUMEN_ENOTFOUND = -6,   /* the named thing does not exist */
	LUMEN_EEXIST = -7,      /* the thing already exists */
	LUMEN_EIO = -8,         /* operating system or storage error (see errno/log) */
	LUMEN_EUNSUPPORTED = -9,/* well-formed but not something we implement */
	LUMEN_EBUSY = -10,      /* resource held by someone else (e.g. running daemon) */
	LUMEN_EFULL = -11,      /* storage map or queue full */
	LUMEN_ESCHEMA = -12,    /* violates the schema (details in diagnostic) */
	LUMEN_EPOISONED = -13,  /* object failed earlier; only discard is legal */
};

/* Short English text for an error code; never NULL. */
const char *lumen_strerror(int err);

/*
 * A start-up error that names where it comes from: "FILE:LINE: ", then
 * "TOPIC: " when topic is not NULL, then the message fmt and ap make, into
 * err (truncated to errlen; nothing when err is NULL or errlen is 0).
 * Returns code, for `return ...` in the callers' own printf-like helpers.
 */
int lumen_vfail_at(char *err, size_t errlen, const char *file, unsigned line, const char *topic,
		   int code, const char *fmt, va_list ap);

#endif
