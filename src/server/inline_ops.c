/*
 * inline_ops.c — which operations an I/O thread runs itself (inline_ops.h).
 */
#include "inline_ops.h"

#include <string.h>
#include <strings.h>

#include "controls.h"

bool inline_may_start(int tag)
{
	return tag == LDAP_OP_BIND_REQUEST || tag == LDAP_OP_COMPARE_REQUEST ||
	       tag == LDAP_OP_SEARCH_REQUEST;
}

/* An equality term the backend can turn into a short candidate list. */
static bool narrows(const struct ldap_filter *f)
{
	if (f == NULL)
		return false;
	if (f->type == LDAP_FILTER_EQUALITY)
		return true;
	if (f->type != LDAP_FILTER_AND)
		return false;
	for (const struct ldap_filter *c = f->u.children; c != NULL; c = c->next)
		if (c->type == LDAP_FILTER_EQUALITY)
			return true;
	return false;
}

/* Controls whose work is bounded by the search's own (a whitelist: a
 * control added later runs on a worker until it is known to be cheap). */
static bool control_cheap(const struct ldap_control *c)
{
	static const char *const cheap[] = { CONTROL_MANAGE_DSA_IT, CONTROL_ASSERTION,
					     CONTROL_PAGED_RESULTS };
	for (size_t i = 0; i < sizeof(cheap) / sizeof(cheap[0]); i++)
		if (ber_view_eq_str(c->oid, cheap[i]))
			return true;
	return false;
}

bool inline_search_eligible(const struct ldap_message *msg)
{
	const struct ldap_search_request *req = &msg->u.search;
	for (size_t i = 0; i < msg->n_controls; i++)
		if (!control_cheap(&msg->controls[i]))
			return false;
	return req->scope == LDAP_SCOPE_BASE || narrows(req->filter);
}

bool inline_password_cheap(const char *stored, size_t len)
{
	static const char *const digests[] = { "{SHA}", "{SHA256}", "{SHA512}",
					       "{SSHA}", "{SSHA256}", "{SSHA512}" };
	if (len == 0 || stored[0] != '{')
		return true;                 /* cleartext */
	for (size_t i = 0; i < sizeof(digests) / sizeof(digests[0]); i++) {
		size_t n = strlen(digests[i]);
		if (len >= n && strncasecmp(stored, digests[i], n) == 0)
			return true;
	}
	return false;
}
