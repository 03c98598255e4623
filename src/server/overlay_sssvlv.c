/*
 * overlay_sssvlv.c — `overlay sssvlv` from an OpenLDAP slapd.conf. Lumen
 * serves server-side sort (RFC 2891) and Virtual List View in every
 * database without an overlay (search_sort.h), so this type has no hooks:
 * it exists so that a configuration written for slapd's sssvlv module
 * starts unchanged, and says what its directives mean here.
 *
 * Directives (after `overlay sssvlv`), each a positive whole number:
 *   sssvlv-max N          slapd: sorts in progress at once. Lumen keeps
 *                         one VLV result per connection, bounded by its
 *                         memory; the global `sortvlv-max` bounds the
 *                         entries one sorted search collects.
 *   sssvlv-maxperconn N   slapd: paged or VLV sorts kept per connection;
 *                         Lumen keeps one VLV result per connection.
 *   sssvlv-maxkeys N      slapd: sort keys per request. Lumen takes up to
 *                         CONTROLS_MAX_SORT_KEYS (8) whatever N says, and
 *                         refuses a request with more (protocolError).
 * Each accepted line is logged once at start-up with what Lumen does
 * instead; anything else after `overlay sssvlv` stops start-up.
 */
#include "overlay.h"

#include <limits.h>
#include <stdlib.h>
#include <strings.h>

#include "controls.h"
#include "log.h"
#include "lumen_error.h"

#define TEXT_OF(n) #n
#define NUMBER_TEXT(n) TEXT_OF(n)
#define MAX_KEYS_TEXT NUMBER_TEXT(CONTROLS_MAX_SORT_KEYS)

/* The directives' values, kept only to validate and log them. */
struct sssvlv {
	long max, max_per_connection, max_keys;
};

static bool parse_positive(const char *text, long *out)
{
	char *end;
	long v = strtol(text, &end, 10);
	if (end == text || *end != '\0' || v <= 0 || v == LONG_MAX)
		return false;
	*out = v;
	return true;
}

static int apply_line(void *state, const struct overlay_setup *setup,
		      const struct config_overlay_line *line, char *err, size_t errlen)
{
	struct sssvlv *s = state;
	const char *name = line->words[0];
	long *slot = NULL;
	const char *meaning = NULL;
	(void)setup;
	if (strcasecmp(name, "sssvlv-max") == 0) {
		slot = &s->max;
		meaning = "Lumen keeps one VLV result per connection; sortvlv-max bounds each sort";
	} else if (strcasecmp(name, "sssvlv-maxperconn") == 0) {
		slot = &s->max_per_connection;
		meaning = "Lumen keeps one VLV result per connection, within its memory bound";
	} else if (strcasecmp(name, "sssvlv-maxkeys") == 0) {
		slot = &s->max_keys;
		meaning = "Lumen sorts by up to " MAX_KEYS_TEXT " keys per request, whatever this says";
	} else {
		return config_overlay_unknown("sssvlv", line, err, errlen);
	}
	if (line->n_words != 2 || !parse_positive(line->words[1], slot))
		return config_overlay_fail(line, err, errlen, "expected \"%s <positive number>\"",
					   name);
	log_printf(0, "%s: %s %ld accepted: %s", line->origin, name, *slot, meaning);
	return LUMEN_OK;
}

const struct overlay_type overlay_sssvlv = {
	.name = "sssvlv",
	.steps = { .state_size = sizeof(struct sssvlv), .apply = apply_line },
	.destroy = free,
};
