/*
 * overlay_lastbind.c — the time of each entry's last successful bind
 * (OpenLDAP's lastbind overlay and its directive): a successful simple
 * bind to an entry stores authTimestamp (operational, dsaOperation), at
 * most once per precision interval, so that a busy account does not turn
 * every bind into a write.
 *
 * Directives (after `overlay lastbind`):
 *   lastbind-precision SECONDS   skip the write while the stored value is
 *                                younger than this (default 0: every bind)
 *   lastbind_forward_updates     accepted; it matters only on a replica
 *
 * The write is an internal modify through the chain (overlay.h, Bind),
 * batched with the other writes by group commit; a bind whose write fails
 * still succeeds, and the log says why.
 */
#include "overlay.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "log.h"
#include "lumen_error.h"
#include "overlay_state.h"

struct lastbind {
	const struct attribute_type *auth_timestamp;
	long precision;                    /* seconds */
};

static int apply_line(void *state, const struct overlay_setup *setup,
		      const struct config_overlay_line *line, char *err, size_t errlen)
{
	struct lastbind *lb = state;
	const char *name = line->words[0];
	(void)setup;
	if (strcasecmp(name, "lastbind-precision") == 0) {
		if (line->n_words != 2 || !overlay_parse_seconds(line->words[1], &lb->precision))
			return config_overlay_fail(line, err, errlen,
						   "expected \"lastbind-precision <seconds>\"");
		return LUMEN_OK;
	}
	if (strcasecmp(name, "lastbind_forward_updates") == 0 && line->n_words <= 2)
		return LUMEN_OK;
	return config_overlay_unknown("lastbind", line, err, errlen);
}

static int lastbind_prepare(void *state, const struct overlay_setup *setup, char *err,
			    size_t errlen)
{
	struct lastbind *lb = state;
	lb->auth_timestamp = overlay_config_attribute(&overlay_lastbind, setup, "authTimestamp",
						      err, errlen);
	return lb->auth_timestamp != NULL ? LUMEN_OK : LUMEN_EMALFORMED;
}

/* Is the stored authTimestamp younger than the precision? */
static bool recent(const struct lastbind *lb, const struct entry *e, time_t now)
{
	const struct entry_attribute *a = entry_find_type(e, lb->auth_timestamp);
	time_t then;
	if (a == NULL || !overlay_parse_time(a->values[0].value, &then))
		return false;
	return now >= then && now - then < lb->precision;
}

static void lastbind_after(void *state, struct overlay_request *req)
{
	const struct lastbind *lb = state;
	const struct overlay_bind *b = req->u.bind;
	time_t now = time(NULL);
	if (!b->success || b->entry == NULL || recent(lb, b->entry, now))
		return;
	struct overlay_state_write w;
	overlay_state_begin(&w, req);
	overlay_state_replace_time(&w, lb->auth_timestamp, now);
	int rc = overlay_state_commit(&w);
	if (rc != LUMEN_OK)
		log_printf(0, "lastbind: cannot store authTimestamp of \"%.*s\": %s",
			   (int)b->dn.len, (const char *)b->dn.ptr, w.diagnostic);
}

const struct overlay_type overlay_lastbind = {
	.name = "lastbind",
	.steps = { .state_size = sizeof(struct lastbind), .prepare = lastbind_prepare,
		   .apply = apply_line },
	.destroy = free,
	.bind_after = lastbind_after,
};
