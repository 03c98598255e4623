/*
 * op_delete.c — the Delete operation (RFC 4511 §4.8) of a leaf entry;
 * Pre-Read is answered from the entry as it was. Access control: `write`
 * on the entry and on its parent's `children` (acl.h).
 */
#include "access_glue.h"
#include "access_write.h"
#include "config.h"
#include "conn.h"
#include "dn.h"
#include "log.h"
#include "ops.h"
#include "server.h"
#include "workq.h"

/* True when the delete may go on; else the answer was sent. */
static bool delete_allowed(struct op_context *ctx, struct op_target *t, struct access_op *a)
{
	struct entry *entry = NULL, *parent = NULL;
	struct ber_view rdn, parent_ndn;
	bool go_on = false;
	if (t->bop.is_root)
		return true;
	if (!op_target_fetch(ctx, t, t->ndn, &entry))
		return false;
	dn_split_first(t->ndn, &rdn, &parent_ndn);
	if (entry == NULL)          /* noSuchObject from the backend, matchedDN hidden */
		go_on = !op_target_refuse_unseen(ctx, t);
	else if (op_target_fetch(ctx, t, parent_ndn, &parent)) {
		go_on = acl_may_delete(&a->policy, &a->subject, parent, entry);
		if (!go_on)
			op_target_refuse(ctx, a, entry);
	}
	entry_free(entry);
	entry_free(parent);
	return go_on;
}

void op_delete(struct op_context *ctx)
{
	struct ber_view dn = ctx->msg->u.delete_dn;
	struct op_target t;
	struct access_op a;
	log_printf(LOG_LEVEL_STATS, "conn=%llu op=%u DEL dn=\"%s\"",
		   (unsigned long long)conn_number(ctx->conn), ctx->op->number, op_log_string(ctx, dn));
	if (!op_target_prepare_write(ctx, dn, &t) || !op_target_unrestricted(ctx, &t, false))
		return;
	op_target_access(ctx, &t, &a);
	if (!delete_allowed(ctx, &t, &a) || !op_commit(ctx))
		return;
	struct access_write again;
	access_write_delete(&again, &a, t.db, &t.bop);
	int rc = database_delete(t.db->database, &t.bop, t.ndn);
	op_target_answer(ctx, &t, rc);
}
