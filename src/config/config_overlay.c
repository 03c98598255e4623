/*
 * config_overlay.c — the failures and arguments every overlay directive
 * parser shares (config_overlay.h).
 */
#include "config_overlay.h"

#include <stdarg.h>
#include <stdio.h>
#include <strings.h>

#include "lumen_error.h"

int config_overlay_fail(const struct config_overlay_line *line, char *err, size_t errlen,
			const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(err, errlen, "%s: %s: ", line->origin, line->words[0]);
	if (n >= 0 && (size_t)n < errlen) {
		va_start(ap, fmt);
		vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return LUMEN_EMALFORMED;
}

int config_overlay_unknown(const char *overlay, const struct config_overlay_line *line,
			   char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: overlay %s: unknown directive \"%s\"", line->origin, overlay,
		 line->words[0]);
	return LUMEN_EMALFORMED;
}

bool config_overlay_boolean(const char *text, bool *out)
{
	static const char *const yes[] = { "true", "on", "yes" };
	static const char *const no[] = { "false", "off", "no" };
	*out = false;
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcasecmp(text, yes[i]) == 0) {
			*out = true;
			return true;
		}
		if (strcasecmp(text, no[i]) == 0)
			return true;
	}
	return false;
}
