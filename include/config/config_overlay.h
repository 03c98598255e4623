/*
 * config_overlay.h — what every parser of an overlay's directive lines
 * shares (config layer): the "FILE:LINE: directive: reason" and "unknown
 * directive" failures, and the TRUE/FALSE argument. The parsers are
 * config_memberof.c here and the server's overlays (overlay.h), each of
 * which reads the lines config kept after its `overlay` line
 * (struct config_overlay).
 *
 * Memory: messages go into the caller's err buffer (truncated to errlen).
 * Thread-safety: plain functions.
 * Caveats:
 *  - The messages name the directive as written (line->words[0]) and the
 *    overlay by the name the caller gives, not as the `overlay` line
 *    spells it.
 */
#ifndef LUMEN_CONFIG_OVERLAY_H
#define LUMEN_CONFIG_OVERLAY_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

/*
 * "ORIGIN: DIRECTIVE: " and the printf-formatted reason into err.
 * Returns LUMEN_EMALFORMED.
 */
int config_overlay_fail(const struct config_overlay_line *line, char *err, size_t errlen,
			const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/*
 * "ORIGIN: overlay NAME: unknown directive \"DIRECTIVE\"" into err, for
 * a line no directive of the overlay `overlay` knows. LUMEN_EMALFORMED.
 */
int config_overlay_unknown(const char *overlay, const struct config_overlay_line *line,
			   char *err, size_t errlen);

/*
 * A boolean argument as slapd reads one: TRUE, on or yes; FALSE, off or
 * no (any case). False when text is neither (*out is then false).
 */
bool config_overlay_boolean(const char *text, bool *out);

#endif
