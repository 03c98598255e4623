/*
 * bulk_load.c — lumenadd's reader / builders / writer pipeline
 * (bulk_load.h).
 *
 * The ring: BATCH slots, each holding up to BULK_LOAD_BATCH_RECORDS
 * records and the arena their text lives in. A slot goes EMPTY → READ
 * (reader) → BUILDING → BUILT (a builder) → EMPTY (writer). The reader
 * and the writer walk the slots in sequence order, builders take any READ
 * slot, so entries reach the writer in input order whatever the number of
 * builders. One mutex and three condition variables: the stages hand over
 * whole batches, so the lock is taken a few times per batch, not per
 * record.
 */
#include "bulk_load.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "arena.h"
#include "entry.h"
#include "ldap_result_codes.h"
#include "ldif.h"
#include "lumen_error.h"
#include "tools.h"

enum slot_state { SLOT_EMPTY, SLOT_READ, SLOT_BUILDING, SLOT_BUILT };

struct load_record {
	size_t line;
	struct ber_view dn;          /* as written, for messages */
	struct ldif_record ldif;     /* views into the slot arena */
	struct entry *entry;         /* built entry, NULL on error */
	const char *error;           /* slot-arena text when the record is bad */
	bool fatal;                  /* the reader cannot go on after this one */
};

struct load_slot {
	enum slot_state state;
	uint64_t seq;
	struct arena arena;
	struct load_record *records; /* BULK_LOAD_BATCH_RECORDS */
	size_t n;
	uint64_t bytes_end;          /* input offset after the batch (ETA) */
};

struct pipeline {
	const struct schema *schema;
	const struct bulk_load_options *options;
	FILE *input;
	struct ldif_reader *reader;
	size_t slot_budget;          /* arena bytes per slot before it is handed on */
	struct load_slot *slots;
	size_t n_slots;
	pthread_mutex_t lock;
	pthread_cond_t slot_empty, slot_read, slot_built;
	uint64_t read_seq;           /* next sequence the reader fills */
	bool input_done;             /* read_seq is final */
	bool stop;                   /* the writer gave up: everyone leaves */
	bool check_schema;           /* builders run entry_check_add (dry run only) */
};

/* ------------------------------------------------------------ helpers */

/* A formatted message in the slot's arena ("line N: ..."); NULL if no memory. */
static const char *slot_message(struct load_slot *slot, const char *fmt, ...)
{
	char text[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	return arena_strndup(&slot->arena, text, strnlen(text, sizeof(text)));
}

static void record_fail(struct load_slot *slot, struct load_record *r, const char *fmt,
			const char *detail)
{
	r->error = slot_message(slot, fmt, r->line, (int)r->dn.len, (const char *)r->dn.ptr,
				detail);
	if (r->error == NULL)
		r->error = "out of memory describing a bad record";
}

/* ------------------------------------------------------------- reader */

/* Reads one record into the slot. Returns false when the slot is full or input is over. */
static bool read_one(struct pipeline *p, struct load_slot *slot)
{
	struct load_record *r = &slot->records[slot->n];
	memset(r, 0, sizeof(*r));
	int rc = ldif_read(p->reader, &slot->arena, &r->ldif);
	if (rc == LDIF_END)
		return false;
	slot->n++;
	if (rc != LUMEN_OK) {
		r->line = ldif_reader_line(p->reader);
		r->error = slot_message(slot, "%s", ldif_reader_error(p->reader));
		if (r->error == NULL)
			r->error = "out of memory reading a record";
		/* the reader stands at the next record, except after these */
		r->fatal = rc == LUMEN_EIO || rc == LUMEN_ENOMEM || rc == LUMEN_EPOISONED;
		return !r->fatal;
	}
	r->line = r->ldif.line;
	r->dn = r->ldif.dn;
	return true;
}

static struct load_slot *wait_slot(struct pipeline *p, uint64_t seq, enum slot_state want,
				   pthread_cond_t *cond)
{
	struct load_slot *slot = &p->slots[seq % p->n_slots];
	while (!p->stop && !(slot->state == want && (want == SLOT_EMPTY || slot->seq == seq)))
		pthread_cond_wait(cond, &p->lock);
	return p->stop ? NULL : slot;
}

static void *reader_main(void *arg)
{
	struct pipeline *p = arg;
	bool more = true;

	while (more) {
		pthread_mutex_lock(&p->lock);
		struct load_slot *slot = wait_slot(p, p->read_seq, SLOT_EMPTY, &p->slot_empty);
		pthread_mutex_unlock(&p->lock);
		if (slot == NULL)
			break;
		arena_reset(&slot->arena);
		slot->n = 0;
		while (slot->n < BULK_LOAD_BATCH_RECORDS && slot->arena.used < p->slot_budget &&
		       (more = read_one(p, slot)))
			;
		if (slot->n > 0 && slot->records[slot->n - 1].fatal)
			more = false;
		off_t pos = ftello(p->input);
		slot->bytes_end = pos > 0 ? (uint64_t)pos : 0;
		pthread_mutex_lock(&p->lock);
		if (slot->n > 0) {
			slot->seq = p->read_seq++;
			slot->state = SLOT_READ;
			pthread_cond_broadcast(&p->slot_read);
		}
		if (!more) {
			p->input_done = true;
			pthread_cond_broadcast(&p->slot_read);
			pthread_cond_broadcast(&p->slot_built);
		}
		pthread_mutex_unlock(&p->lock);
	}
	return NULL;
}

/* ------------------------------------------------------------ builders */

/*
 * Groups the record's flat attribute lines by description (LDIF may
 * repeat a description non-adjacently) into AddRequest-style attributes.
 */
static int group_attributes(struct load_slot *slot, const struct ldif_record *rec,
			    struct ldap_attribute **out, size_t *n_out)
{
	size_t n_lines = rec->n_attributes, n = 0;
	struct ldap_attribute *attrs = arena_calloc(&slot->arena, n_lines ? n_lines : 1,
						    sizeof(*attrs));
	struct ber_view *values = arena_calloc(&slot->arena, n_lines ? n_lines : 1,
					       sizeof(*values));
	size_t *counts = arena_calloc(&slot->arena, n_lines ? n_lines : 1, sizeof(*counts));
	size_t *group_of = arena_calloc(&slot->arena, n_lines ? n_lines : 1, sizeof(*group_of));
	if (attrs == NULL || values == NULL || counts == NULL || group_of == NULL)
		return LUMEN_ENOMEM;
	for (size_t i = 0; i < n_lines; i++) {
		struct ber_view d = rec->attributes[i].description;
		size_t g = 0;
		/* records are short; a backwards scan finds the common adjacent case first */
		for (g = n; g > 0; g--)
			if (attrs[g - 1].type.len == d.len &&
			    strncasecmp((const char *)attrs[g - 1].type.ptr, (const char *)d.ptr,
					d.len) == 0)
				break;
		if (g == 0) {
			attrs[n].type = d;
			g = ++n;
		}
		group_of[i] = g - 1;
		counts[g - 1]++;
	}
	/* lay the values out group after group */
	size_t offset = 0;
	for (size_t g = 0; g < n; g++) {
		attrs[g].values = values + offset;
		offset += counts[g];
	}
	for (size_t i = 0; i < n_lines; i++) {
		struct ldap_attribute *a = &attrs[group_of[i]];
		a->values[a->n_values++] = rec->attributes[i].value;
	}
	*out = attrs;
	*n_out = n;
	return LUMEN_OK;
}

static void build_record(struct pipeline *p, struct load_slot *slot, struct load_record *r)
{
	struct schema_violation v;
	struct ldap_attribute *attrs = NULL;
	size_t n_attrs = 0;

	if (r->error != NULL)
		return;
	if (r->ldif.kind != LDIF_CONTENT && r->ldif.kind != LDIF_CHANGE_ADD) {
		record_fail(slot, r, "line %zu: %.*s: %s",
			    "only entries and \"changetype: add\" records can be loaded");
		return;
	}
	if (group_attributes(slot, &r->ldif, &attrs, &n_attrs) != LUMEN_OK) {
		record_fail(slot, r, "line %zu: %.*s: %s", "out of memory");
		return;
	}
	memset(&v, 0, sizeof(v));
	int rc = entry_from_attributes(p->schema, r->ldif.dn, (struct ber_view){ NULL, 0 },
				       attrs, n_attrs, false, &r->entry, &v);
	if (rc == LUMEN_OK && p->check_schema) {
		rc = entry_check_add(r->entry, &slot->arena, &v);
	}
	if (rc == LUMEN_OK)
		return;
	entry_free(r->entry);
	r->entry = NULL;
	if (rc == LUMEN_ESCHEMA)
		record_fail(slot, r, "line %zu: %.*s: %s", v.message);
	else if (rc == LUMEN_ELIMIT)
		record_fail(slot, r, "line %zu: %.*s: %s", "too many attributes or values");
	else if (rc == LUMEN_ENOMEM)
		record_fail(slot, r, "line %zu: %.*s: %s", "out of memory");
	else
		record_fail(slot, r, "line %zu: %.*s: %s", "invalid DN (or a type in it the "
			    "schema does not know)");
}

static void *builder_main(void *arg)
{
	struct pipeline *p = arg;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		struct load_slot *slot = NULL;
		for (size_t i = 0; i < p->n_slots && slot == NULL; i++)
			if (p->slots[i].state == SLOT_READ)
				slot = &p->slots[i];
		if (p->stop)
			break;
		if (slot == NULL) {
			if (p->input_done)
				break;
			pthread_cond_wait(&p->slot_read, &p->lock);
			continue;
		}
		slot->state = SLOT_BUILDING;
		pthread_mutex_unlock(&p->lock);
		for (size_t i = 0; i < slot->n; i++)
			build_record(p, slot, &slot->records[i]);
		pthread_mutex_lock(&p->lock);
		slot->state = SLOT_BUILT;
		pthread_cond_broadcast(&p->slot_built);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* -------------------------------------------------------------- writer */

struct writer {
	struct pipeline *p;
	struct backend *be;
	struct bulk_load_stats *stats;
	struct arena op_arena;
	struct tool_progress progress;
	char *err;
	size_t errlen;
};

/* Why the backend refused an entry, for the record's message. */
static const char *refusal_text(const struct backend_op *op, char *buf, size_t len)
{
	const char *name = ldap_result_name(op->result_code);
	if (op->result_code == LDAP_NO_SUCH_OBJECT)
		snprintf(buf, len, "parent entry missing (%s)%s%s", name,
			 op->diagnostic != NULL ? ": " : "", op->diagnostic ? op->diagnostic : "");
	else
		snprintf(buf, len, "%s%s%s", name, op->diagnostic != NULL ? ": " : "",
			 op->diagnostic != NULL ? op->diagnostic : "");
	return buf;
}

/*
 * Stores one built entry. LUMEN_OK (stored), LUMEN_EMALFORMED (refused:
 * r->error set), or the backend's internal error (err set).
 */
static int store_record(struct writer *w, struct load_slot *slot, struct load_record *r)
{
	char why[512];
	struct backend_op op;

	memset(&op, 0, sizeof(op));
	arena_reset(&w->op_arena);
	op.arena = &w->op_arena;
	op.requester_ndn = w->p->options->rootdn_ndn;
	op.is_root = true;
	op.from_tool = true;
	int rc = backend_add_entry(w->be, &op, r->entry);
	if (rc != LUMEN_OK) {
		snprintf(w->err, w->errlen, "line %zu: %.*s: %s", r->line, (int)r->dn.len,
			 (const char *)r->dn.ptr,
			 op.diagnostic != NULL ? op.diagnostic : lumen_strerror(rc));
		return rc;
	}
	if (op.result_code == LDAP_SUCCESS)
		return LUMEN_OK;
	record_fail(slot, r, "line %zu: %.*s: %s", refusal_text(&op, why, sizeof(why)));
	return LUMEN_EMALFORMED;
}

/* Handles one record in input order. Returns LUMEN_OK to go on. */
static int write_record(struct writer *w, struct load_slot *slot, struct load_record *r)
{
	const struct bulk_load_options *o = w->p->options;
	int rc = LUMEN_OK;

	w->stats->records++;
	if (r->error == NULL && w->be != NULL)
		rc = store_record(w, slot, r);
	entry_free(r->entry);
	r->entry = NULL;
	if (rc != LUMEN_OK && rc != LUMEN_EMALFORMED)
		return rc;
	if (r->error == NULL) {
		w->stats->loaded++;
		return LUMEN_OK;
	}
	tool_progress_finish(&w->progress);
	fprintf(o->errors, "lumenadd: %s\n", r->error);
	if (r->fatal || !o->continue_on_error) {
		snprintf(w->err, w->errlen, "%s", r->fatal ? r->error
			 : "stopped at the first bad record (-c skips bad records)");
		return LUMEN_EMALFORMED;
	}
	w->stats->skipped++;
	return LUMEN_OK;
}

static int writer_loop(struct writer *w)
{
	struct pipeline *p = w->p;
	int rc = LUMEN_OK;

	for (uint64_t seq = 0; rc == LUMEN_OK; seq++) {
		pthread_mutex_lock(&p->lock);
		struct load_slot *slot = &p->slots[seq % p->n_slots];
		while (!(slot->state == SLOT_BUILT && slot->seq == seq) &&
		       !(p->input_done && seq >= p->read_seq))
			pthread_cond_wait(&p->slot_built, &p->lock);
		bool done = slot->state != SLOT_BUILT || slot->seq != seq;
		pthread_mutex_unlock(&p->lock);
		if (done)
			break;
		for (size_t i = 0; i < slot->n; i++) {
			if (rc == LUMEN_OK)
				rc = write_record(w, slot, &slot->records[i]);
			entry_free(slot->records[i].entry);   /* left over after a stop */
			slot->records[i].entry = NULL;
		}
		tool_progress_update(&w->progress, w->stats->loaded, slot->bytes_end);
		pthread_mutex_lock(&p->lock);
		slot->state = SLOT_EMPTY;
		pthread_cond_broadcast(&p->slot_empty);
		pthread_mutex_unlock(&p->lock);
	}
	return rc;
}

/* ---------------------------------------------------------- the whole */

static int pipeline_init(struct pipeline *p, const struct schema *schema, FILE *input,
			 const struct bulk_load_options *o, bool dry_run)
{
	memset(p, 0, sizeof(*p));
	p->schema = schema;
	p->options = o;
	p->input = input;
	p->check_schema = dry_run && !o->skip_schema;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->slot_empty, NULL);
	pthread_cond_init(&p->slot_read, NULL);
	pthread_cond_init(&p->slot_built, NULL);
	/* two batches per builder keep everyone busy; the bound splits evenly */
	p->n_slots = 2 * (size_t)o->threads + 2;
	size_t limit = o->memory_limit ? o->memory_limit : BULK_LOAD_DEFAULT_MEMORY;
	p->slot_budget = limit / p->n_slots / 2;   /* the built entries take about as much */
	p->slots = calloc(p->n_slots, sizeof(*p->slots));
	if (p->slots == NULL)
		return LUMEN_ENOMEM;
	for (size_t i = 0; i < p->n_slots; i++) {
		arena_init(&p->slots[i].arena, 0);
		p->slots[i].records = calloc(BULK_LOAD_BATCH_RECORDS, sizeof(struct load_record));
		if (p->slots[i].records == NULL)
			return LUMEN_ENOMEM;
	}
	return ldif_reader_open_file(input, NULL, &p->reader);
}

static void pipeline_free(struct pipeline *p)
{
	for (size_t i = 0; p->slots != NULL && i < p->n_slots; i++) {
		for (size_t r = 0; p->slots[i].records != NULL && r < p->slots[i].n; r++)
			entry_free(p->slots[i].records[r].entry);
		free(p->slots[i].records);
		arena_free(&p->slots[i].arena);
	}
	free(p->slots);
	ldif_reader_free(p->reader);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->slot_empty);
	pthread_cond_destroy(&p->slot_read);
	pthread_cond_destroy(&p->slot_built);
}

static void pipeline_stop(struct pipeline *p)
{
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->slot_empty);
	pthread_cond_broadcast(&p->slot_read);
	pthread_cond_broadcast(&p->slot_built);
	pthread_mutex_unlock(&p->lock);
}

int bulk_load_run(struct backend *be, const struct schema *schema, FILE *input,
		  const struct bulk_load_options *options, struct bulk_load_stats *stats,
		  char *err, size_t errlen)
{
	struct pipeline p;
	struct writer w = { .p = &p, .be = be, .stats = stats, .err = err, .errlen = errlen };
	pthread_t reader, builders[BULK_LOAD_MAX_THREADS];
	size_t n_builders = 0;
	bool reader_started = false;

	memset(stats, 0, sizeof(*stats));
	if (options->threads == 0 || options->threads > BULK_LOAD_MAX_THREADS) {
		snprintf(err, errlen, "-j: between 1 and %d threads", BULK_LOAD_MAX_THREADS);
		return LUMEN_EINVAL;
	}
	double start = tool_now();
	arena_init(&w.op_arena, 0);
	tool_progress_start(&w.progress, options->progress ? options->input_size : 0);
	w.progress.enabled = w.progress.enabled && options->progress;
	int rc = pipeline_init(&p, schema, input, options, be == NULL);
	if (rc == LUMEN_OK)
		rc = pthread_create(&reader, NULL, reader_main, &p) == 0 ? LUMEN_OK : LUMEN_EIO;
	reader_started = rc == LUMEN_OK;
	while (rc == LUMEN_OK && n_builders < options->threads) {
		if (pthread_create(&builders[n_builders], NULL, builder_main, &p) != 0)
			rc = LUMEN_EIO;
		else
			n_builders++;
	}
	if (rc != LUMEN_OK)
		snprintf(err, errlen, "cannot start the load: %s", lumen_strerror(rc));
	else
		rc = writer_loop(&w);
	if (reader_started)
		pipeline_stop(&p);
	if (reader_started)
		pthread_join(reader, NULL);
	for (size_t i = 0; i < n_builders; i++)
		pthread_join(builders[i], NULL);
	tool_progress_finish(&w.progress);
	pipeline_free(&p);
	arena_free(&w.op_arena);
	stats->seconds = tool_now() - start;
	return rc;
}
