/*
 * op_search.c — the Search operation: the root DSE now; searches inside a
 * suffix wait for the backend.
 */
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "conn.h"
#include "filter.h"
#include "log.h"
#include "lumen_error.h"
#include "ops.h"
#include "rootdse.h"
#include "server.h"

static void log_request(struct op_context *ctx, const struct ldap_search_request *req)
{
	if (!log_enabled(LOG_LEVEL_STATS))
		return;
	struct ber_view filter = { (const uint8_t *)"?", 1 };
	if (req->filter != NULL)
		filter_text_print(req->filter, ctx->arena, &filter);
	unsigned long long conn_id = (unsigned long long)ctx->conn->id;
	log_printf(LOG_LEVEL_STATS, "conn=%llu op=%u SRCH base=\"%s\" scope=%d deref=%d filter=\"%s\"",
		   conn_id, ctx->op->number, op_log_string(ctx, req->base), (int)req->scope,
		   (int)req->deref, op_log_string(ctx, filter));
	if (req->n_attributes == 0)
		return;
	char line[LOG_LINE_MAX];
	size_t used = 0;
	for (size_t i = 0; i < req->n_attributes && used + 2 < sizeof(line); i++) {
		int n = snprintf(line + used, sizeof(line) - used, "%s%s", i ? " " : "",
				 op_log_string(ctx, req->attributes[i]));
		if (n < 0)
			break;
		used += (size_t)n;
	}
	log_printf(LOG_LEVEL_STATS, "conn=%llu op=%u SRCH attr=%s", conn_id, ctx->op->number,
		   line);
}

void op_search(struct op_context *ctx)
{
	const struct ldap_search_request *req = &ctx->msg->u.search;
	log_request(ctx, req);

	if (req->base.len == 0 && req->scope == LDAP_SCOPE_BASE) {
		if (rootdse_matches(ctx->server->rootdse, req->filter)) {
			rootdse_encode(ctx->server->rootdse, ctx->out, ctx->op->message_id,
				       req->attributes, req->n_attributes, req->types_only);
			ctx->n_entries = 1;
		}
		op_send_result(ctx, LDAP_SUCCESS, NULL, NULL);
		return;
	}
	struct ber_view ndn;
	if (server_normalize_dn(ctx->server, req->base, ctx->arena, &ndn) != LUMEN_OK) {
		op_send_result(ctx, LDAP_INVALID_DN_SYNTAX, NULL, "invalid DN");
		return;
	}
	if (ndn.len == 0 || server_find_database(ctx->server, ndn) == NULL) {
		op_send_result(ctx, LDAP_NO_SUCH_OBJECT, NULL, NULL);
		return;
	}
	op_send_result(ctx, LDAP_UNWILLING_TO_PERFORM, NULL, "no backend for this operation yet");
}
