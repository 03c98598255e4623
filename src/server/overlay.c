/*
 * overlay.c — the overlay chain (overlay.h): a database whose operations
 * run each overlay's before hook, the database below with the chain's
 * write hook, and the after hooks in reverse.
 */
#include "overlay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ldap_result_codes.h"
#include "log.h"
#include "lumen_error.h"

static const struct overlay_type *const overlay_types[] = {
	&overlay_refint,
	&overlay_memberof,
	&overlay_unique,
	&overlay_ppolicy,
	&overlay_lastbind,
	&overlay_syncprov,
	&overlay_sssvlv,
};
/* For messages: "refint, memberof, ...". */
static const char *type_names(char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(overlay_types) / sizeof(overlay_types[0]); i++) {
		int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
				 overlay_types[i]->name);
		if (n < 0 || (size_t)n >= len - used)
			break;
		used += (size_t)n;
	}
	return buf;
}

struct overlay_instance {
	const struct overlay_type *type;
	void *state;
};

struct overlay_chain {
	struct database database;          /* what the server calls */
	struct database_ops ops;           /* chain_ops, less what below lacks */
	struct database *below;
	struct arena memory;               /* the overlays' configuration */
	struct overlay_instance *overlays;
	size_t n_overlays;
	struct database_write_hook hook;   /* NULL on_write: no overlay acts on writes */
	bool binds;                        /* an overlay has a bind hook */
};

const struct overlay_type *overlay_type_find(const char *name)
{
	for (size_t i = 0; i < sizeof(overlay_types) / sizeof(overlay_types[0]); i++)
		if (strcasecmp(name, overlay_types[i]->name) == 0)
			return overlay_types[i];
	return NULL;
}

int overlay_add_response_control(struct backend_op *op, const struct ldap_control *control)
{
	size_t n = op->n_response_controls;
	struct ldap_control *grown = arena_alloc(op->arena, (n + 1) * sizeof(*grown));
	if (grown == NULL)
		return LUMEN_ENOMEM;
	if (n > 0)
		memcpy(grown, op->response_controls, n * sizeof(*grown));
	grown[n] = *control;
	op->response_controls = grown;
	op->n_response_controls = n + 1;
	return LUMEN_OK;
}

int overlay_check_modules(const struct config *config, char *err, size_t errlen)
{
	static const char *const databases[] = { "back_mdb", "back_monitor" };
	for (size_t i = 0; i < config->n_modules; i++) {
		const struct config_module *m = &config->modules[i];
		bool known = overlay_type_find(m->name) != NULL;
		for (size_t j = 0; j < sizeof(databases) / sizeof(databases[0]); j++)
			known = known || strcasecmp(m->name, databases[j]) == 0;
		if (!known) {
			char names[256];
			snprintf(err, errlen, "%s: moduleload: Lumen has no module \"%s\" (built in: "
				 "back_mdb, back_monitor, %s)", m->origin, m->name,
				 type_names(names, sizeof(names)));
			return LUMEN_EUNSUPPORTED;
		}
		log_printf(0, "%s: moduleload %s: built into Lumen; line ignored", m->origin,
			   m->name);
	}
	return LUMEN_OK;
}

/* ------------------------------------------------------------ dispatch */

static int chain_on_write(void *ctx, struct database_txn *txn,
			  const struct database_txn_ops *ops, struct backend_op *op,
			  const struct database_write *w)
{
	const struct overlay_chain *chain = ctx;
	int rc = LUMEN_OK;
	for (size_t i = 0; i < chain->n_overlays && rc == LUMEN_OK; i++) {
		const struct overlay_instance *o = &chain->overlays[i];
		if (o->type->on_write != NULL)
			rc = o->type->on_write(o->state, txn, ops, op, w);
	}
	return rc;
}

static void chain_on_commit(void *ctx, struct backend_op *op,
			    const struct database_change *changes, size_t n)
{
	const struct overlay_chain *chain = ctx;
	for (size_t i = 0; i < chain->n_overlays; i++) {
		const struct overlay_instance *o = &chain->overlays[i];
		if (o->type->on_commit != NULL)
			o->type->on_commit(o->state, op, changes, n);
	}
}

static int call_below(struct overlay_chain *chain, struct overlay_request *req)
{
	struct database *db = chain->below;
	struct backend_op *op = req->op;

	switch (req->operation) {
	case OVERLAY_SEARCH:
		return database_search(db, op, req->u.search);
	case OVERLAY_COMPARE:
		return database_compare(db, op, req->ndn, req->u.compare.attribute,
					req->u.compare.value);
	case OVERLAY_ADD:
		return database_add(db, op, req->u.add.dn, req->ndn, req->u.add.attributes,
				    req->u.add.n);
	case OVERLAY_DELETE:
		return database_delete(db, op, req->ndn);
	case OVERLAY_MODIFY:
		return database_modify(db, op, req->ndn, req->u.modify.changes, req->u.modify.n);
	case OVERLAY_MODRDN:
		return database_modrdn(db, op, req->ndn, req->u.modrdn.new_rdn,
				       req->u.modrdn.delete_old_rdn, req->u.modrdn.has_new_superior,
				       req->u.modrdn.new_superior_ndn);
	case OVERLAY_BIND:
		break;   /* the server checks binds (overlay_chain_bind_*) */
	}
	return LUMEN_EINVAL;
}

static const struct database_ops chain_ops;

/* A paused search runs the before hooks on every call (each call has a
 * fresh sink to wrap) and the after hooks once, at its end. */
static bool search_ends(const struct overlay_request *req)
{
	return req->operation != OVERLAY_SEARCH || !req->u.search->paused;
}

static void run_after(struct overlay_chain *chain, struct overlay_request *req, size_t n)
{
	for (size_t i = n; i-- > 0;) {
		const struct overlay_instance *o = &chain->overlays[i];
		if (o->type->after != NULL)
			o->type->after(o->state, req);
	}
}

static int run(struct overlay_chain *chain, struct overlay_request *req)
{
	size_t passed = 0;
	req->database = &chain->database;
	int verdict = OVERLAY_CONTINUE;

	for (; passed < chain->n_overlays; passed++) {
		const struct overlay_instance *o = &chain->overlays[passed];
		verdict = o->type->before != NULL ? o->type->before(o->state, req)
						  : OVERLAY_CONTINUE;
		if (verdict != OVERLAY_CONTINUE) {
			passed++;   /* the answering overlay sees its answer go */
			break;
		}
	}
	if (verdict == OVERLAY_CONTINUE) {
		const struct database_write_hook *outer = req->op->write_hook;
		if (chain->hook.on_write != NULL)
			req->op->write_hook = &chain->hook;
		req->rc = call_below(chain, req);
		req->op->write_hook = outer;
		passed = chain->n_overlays;
	} else {
		req->rc = verdict == OVERLAY_ANSWERED ? LUMEN_OK : verdict;
	}
	if (search_ends(req))
		run_after(chain, req, passed);
	return req->rc;
}

/* ------------------------------------------------------------------ bind */

bool overlay_database_has(const struct database *db, const char *name)
{
	if (db == NULL || db->ops->close != chain_ops.close)
		return false;
	const struct overlay_chain *chain = db->impl;
	for (size_t i = 0; i < chain->n_overlays; i++)
		if (strcasecmp(chain->overlays[i].type->name, name) == 0)
			return true;
	return false;
}

bool overlay_chain_binds(const struct overlay_chain *chain)
{
	return chain != NULL && chain->binds;
}

void overlay_chain_bind_before(struct overlay_chain *chain, struct overlay_request *req)
{
	req->database = &chain->database;
	for (size_t i = 0; i < chain->n_overlays; i++) {
		const struct overlay_instance *o = &chain->overlays[i];
		if (o->type->bind_before != NULL)
			o->type->bind_before(o->state, req);
	}
}

void overlay_chain_bind_after(struct overlay_chain *chain, struct overlay_request *req)
{
	req->database = &chain->database;
	for (size_t i = chain->n_overlays; i-- > 0;) {
		const struct overlay_instance *o = &chain->overlays[i];
		if (o->type->bind_after != NULL)
			o->type->bind_after(o->state, req);
	}
}

/* ---------------------------------------------------- the database table */

static struct overlay_chain *chain_of(struct database *db)
{
	return db->impl;
}

static int chain_search(struct database *db, struct backend_op *op, struct backend_search *s)
{
	struct overlay_request req = { .operation = OVERLAY_SEARCH, .op = op,
				       .ndn = s->base_ndn, .u.search = s };
	return run(chain_of(db), &req);
}

static int chain_fetch(struct database *db, struct backend_op *op, struct ber_view ndn,
		       backend_entry_fn fn, void *ctx)
{
	return database_fetch(chain_of(db)->below, op, ndn, fn, ctx);
}

/* Like fetch: the IDs are the database's below, no overlay acts on them. */
static int chain_fetch_ids(struct database *db, struct backend_op *op, const uint64_t *ids,
			   size_t n, bool want_counts, backend_entry_fn fn, void *ctx)
{
	return database_fetch_ids(chain_of(db)->below, op, ids, n, want_counts, fn, ctx);
}

static int chain_compare(struct database *db, struct backend_op *op, struct ber_view ndn,
			 struct ber_view attribute, struct ber_view value)
{
	struct overlay_request req = { .operation = OVERLAY_COMPARE, .op = op, .ndn = ndn,
				       .u.compare = { attribute, value } };
	return run(chain_of(db), &req);
}

static int chain_add(struct database *db, struct backend_op *op, struct ber_view dn,
		     struct ber_view ndn, const struct ldap_attribute *attributes, size_t n)
{
	struct overlay_request req = { .operation = OVERLAY_ADD, .op = op, .ndn = ndn,
				       .u.add = { dn, attributes, n } };
	return run(chain_of(db), &req);
}

static int chain_delete(struct database *db, struct backend_op *op, struct ber_view ndn)
{
	struct overlay_request req = { .operation = OVERLAY_DELETE, .op = op, .ndn = ndn };
	return run(chain_of(db), &req);
}

static int chain_modify(struct database *db, struct backend_op *op, struct ber_view ndn,
			const struct ldap_change *changes, size_t n)
{
	struct overlay_request req = { .operation = OVERLAY_MODIFY, .op = op, .ndn = ndn,
				       .u.modify = { changes, n } };
	return run(chain_of(db), &req);
}

static int chain_modrdn(struct database *db, struct backend_op *op, struct ber_view ndn,
			struct ber_view new_rdn, bool delete_old_rdn, bool has_new_superior,
			struct ber_view new_superior_ndn)
{
	struct overlay_request req = {
		.operation = OVERLAY_MODRDN, .op = op, .ndn = ndn,
		.u.modrdn = { new_rdn, delete_old_rdn, has_new_superior, new_superior_ndn },
	};
	return run(chain_of(db), &req);
}

static void chain_figures(struct database *db, struct database_figures *out)
{
	database_figures(chain_of(db)->below, out);
}

static size_t chain_unbuilt_indexes(struct database *db, const char **names, size_t max)
{
	return database_unbuilt_indexes(chain_of(db)->below, names, max);
}

static int chain_journal_read(struct database *db, struct ber_view after_csn,
			      database_journal_fn fn, void *ctx)
{
	return database_journal_read(chain_of(db)->below, after_csn, fn, ctx);
}

static int chain_group_begin(struct database *db, const struct backend_op *op,
			     struct database_group **out)
{
	return database_group_begin(chain_of(db)->below, op, out);
}

static int chain_group_end(struct database *db, const struct backend_op *op,
			   struct database_group *group, bool commit)
{
	return database_group_end(chain_of(db)->below, op, group, commit);
}

static void chain_close(struct database *db)
{
	struct overlay_chain *chain = chain_of(db);
	database_close(chain->below);
	chain->below = NULL;
	overlay_chain_free(chain);
}

static const struct database_ops chain_ops = {
	.search = chain_search,
	.fetch = chain_fetch,
	.fetch_ids = chain_fetch_ids,
	.compare = chain_compare,
	.add = chain_add,
	.delete = chain_delete,
	.modify = chain_modify,
	.modrdn = chain_modrdn,
	.figures = chain_figures,
	.unbuilt_indexes = chain_unbuilt_indexes,
	.journal_read = chain_journal_read,
	.group_begin = chain_group_begin,
	.group_end = chain_group_end,
	.close = chain_close,
};

/* ------------------------------------------------------- create and free */

static int create_one(const struct overlay_setup *setup, struct overlay_instance *out,
		      char *err, size_t errlen)
{
	const struct config_overlay *o = setup->overlay;
	const struct overlay_type *type = overlay_type_find(o->name);
	if (type == NULL) {
		char names[256];
		snprintf(err, errlen, "%s: overlay: unknown overlay \"%s\" (Lumen has: %s)",
			 o->origin, o->name, type_names(names, sizeof(names)));
		return LUMEN_EMALFORMED;
	}
	out->type = type;
	if (type->create != NULL)
		return type->create(setup, &out->state, err, errlen);
	return overlay_config_create(type, setup, &out->state, err, errlen);
}

static struct overlay_chain *chain_alloc(size_t n)
{
	struct overlay_chain *chain = calloc(1, sizeof(*chain));
	if (chain != NULL) {
		arena_init(&chain->memory, 0);
		chain->overlays = calloc(n, sizeof(*chain->overlays));
	}
	if (chain != NULL && chain->overlays == NULL) {
		free(chain);
		return NULL;
	}
	return chain;
}

/* The chain's write hook exists when one of its overlays writes. */
static void take(struct overlay_chain *chain, const struct overlay_type *type, void *state)
{
	chain->overlays[chain->n_overlays++] = (struct overlay_instance){ type, state };
	if (type->on_write != NULL || type->on_commit != NULL)
		chain->hook.on_write = chain_on_write, chain->hook.ctx = chain;
	if (type->on_commit != NULL)
		chain->hook.on_commit = chain_on_commit;
	if (type->bind_before != NULL || type->bind_after != NULL)
		chain->binds = true;
}

int overlay_chain_create_from(const struct overlay_type *const *types, void *const *states,
			      size_t n, struct overlay_chain **out)
{
	struct overlay_chain *chain = chain_alloc(n);
	*out = chain;
	if (chain == NULL)
		return LUMEN_ENOMEM;
	for (size_t i = 0; i < n; i++)
		take(chain, types[i], states[i]);
	return LUMEN_OK;
}

int overlay_chain_create(const struct schema *schema, const struct config_database *config,
			 const char *password_hash, int server_id, struct overlay_chain **out,
			 char *err, size_t errlen)
{
	*out = NULL;
	if (config->n_overlays == 0)
		return LUMEN_OK;
	struct overlay_chain *chain = chain_alloc(config->n_overlays);
	if (chain == NULL) {
		snprintf(err, errlen, "%s: overlays: out of memory", config->origin);
		return LUMEN_ENOMEM;
	}
	int rc = LUMEN_OK;
	for (size_t i = 0; i < config->n_overlays && rc == LUMEN_OK; i++) {
		struct overlay_instance made;
		struct overlay_setup setup = { .schema = schema, .database = config,
					       .overlay = &config->overlays[i],
					       .password_hash = password_hash,
					       .server_id = server_id,
					       .memory = &chain->memory };
		rc = create_one(&setup, &made, err, errlen);
		if (rc == LUMEN_OK)
			take(chain, made.type, made.state);
	}
	if (rc != LUMEN_OK) {
		overlay_chain_free(chain);
		return rc;
	}
	*out = chain;
	return LUMEN_OK;
}

struct database *overlay_chain_wrap(struct overlay_chain *chain, struct database *below)
{
	if (chain == NULL)
		return below;
	chain->below = below;
	chain->ops = chain_ops;
	if (!database_has_fetch_ids(below))
		chain->ops.fetch_ids = NULL;
	chain->database = (struct database){ .ops = &chain->ops, .impl = chain };
	return &chain->database;
}

void overlay_chain_free(struct overlay_chain *chain)
{
	if (chain == NULL)
		return;
	for (size_t i = 0; i < chain->n_overlays; i++)
		if (chain->overlays[i].type->destroy != NULL)
			chain->overlays[i].type->destroy(chain->overlays[i].state);
	arena_free(&chain->memory);
	free(chain->overlays);
	free(chain);
}
