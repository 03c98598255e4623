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
#include "index_postings.h"
#include "ldap_result_codes.h"
#include "ldif.h"
#include "lumen_error.h"
#include "tools.h"

enum slot_state { SLOT_EMPTY, SLOT_READ, SLOT_BUILDING, SLOT_BUILT };

/* A record, and once built, what the writer stores (all in the slot arena). */
struct load_record {
	size_t line;
	struct ber_view dn;          /* as written, for messages */
	struct ldif_record ldif;     /* views into the slot arena */
	struct ber_view entry_dn, entry_ndn;
	const uint8_t *encoded;      /* entry_encode of the prepared entry */
	size_t encoded_len;
	const struct index_key **keys; /* per index table */
	size_t *n_keys;
	const char *error;           /* slot-arena text when the record is bad */
	bool fatal;                  /* the load cannot go on after this one */
	bool referral;               /* a referral object (RFC 3296) */
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
	struct backend *be;          /* NULL: dry run */
	size_t n_tables;             /* index tables of be */
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
	enum backend_schema_check schema_check;  /* what the builders check */
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

/* Keeps what the writer needs of a prepared entry: its names, bytes and keys. */
static int keep_for_store(struct pipeline *p, struct load_slot *slot, struct load_record *r,
			  const struct entry *e, struct ber_writer *w)
{
	struct arena *a = &slot->arena;

	ber_writer_reset(w);
	int rc = entry_encode(e, w);
	if (rc != LUMEN_OK)
		return rc;
	r->encoded = arena_memdup(a, w->buf, w->len ? w->len : 1);
	r->encoded_len = w->len;
	r->entry_dn.ptr = arena_memdup(a, e->dn.ptr, e->dn.len ? e->dn.len : 1);
	r->entry_dn.len = e->dn.len;
	r->entry_ndn.ptr = arena_memdup(a, e->ndn.ptr, e->ndn.len ? e->ndn.len : 1);
	r->entry_ndn.len = e->ndn.len;
	r->keys = arena_calloc(a, p->n_tables ? p->n_tables : 1, sizeof(*r->keys));
	r->n_keys = arena_calloc(a, p->n_tables ? p->n_tables : 1, sizeof(*r->n_keys));
	if (r->encoded == NULL || r->entry_dn.ptr == NULL || r->entry_ndn.ptr == NULL ||
	    r->keys == NULL || r->n_keys == NULL)
		return LUMEN_ENOMEM;
	r->referral = backend_tool_is_referral(p->be, e);
	for (size_t t = 0; t < p->n_tables && rc == LUMEN_OK; t++)
		rc = backend_tool_entry_keys(p->be, t, e, a, &r->keys[t], &r->n_keys[t]);
	return rc;
}

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

/* Schema check, operational attributes, encoding and index keys of e. */
static void prepare_record(struct pipeline *p, struct load_slot *slot, struct load_record *r,
			   struct entry *e, struct ber_writer *w)
{
	char why[512];
	struct backend_op op = {
		.arena = &slot->arena, .requester_ndn = p->options->rootdn_ndn,
		.is_root = true, .from_tool = true,
	};
	int rc = backend_tool_prepare(p->be, &op, e, p->schema_check);
	if (rc == LUMEN_OK && op.result_code != LDAP_SUCCESS) {
		record_fail(slot, r, "line %zu: %.*s: %s", refusal_text(&op, why, sizeof(why)));
		return;
	}
	if (rc == LUMEN_OK)
		rc = keep_for_store(p, slot, r, e, w);
	if (rc != LUMEN_OK) {
		/* not the record's fault: the load cannot go on */
		record_fail(slot, r, "line %zu: %.*s: %s", lumen_strerror(rc));
		r->fatal = true;
	}
}

static void build_record(struct pipeline *p, struct load_slot *slot, struct load_record *r,
			 struct ber_writer *w)
{
	struct schema_violation v;
	struct ldap_attribute *attrs = NULL;
	struct entry *e = NULL;
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
				       attrs, n_attrs, false, &e, &v);
	if (rc == LUMEN_OK && p->be != NULL)
		prepare_record(p, slot, r, e, w);
	else if (rc == LUMEN_OK && p->schema_check == BACKEND_CHECK_FULL)
		rc = entry_check_add(e, &slot->arena, &v);
	else if (rc == LUMEN_OK && p->schema_check == BACKEND_CHECK_STRUCTURE)
		rc = entry_check_add_structure(e, &slot->arena, &v);
	entry_free(e);
	if (rc == LUMEN_OK)
		return;
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
	struct ber_writer w;
	bool have_writer = ber_writer_init(&w, 4096, 0) == LUMEN_OK;

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
		for (size_t i = 0; i < slot->n; i++) {
			if (have_writer) {
				build_record(p, slot, &slot->records[i], &w);
			} else if (slot->records[i].error == NULL) {
				record_fail(slot, &slot->records[i], "line %zu: %.*s: %s",
					    "out of memory");
				slot->records[i].fatal = true;
			}
		}
		pthread_mutex_lock(&p->lock);
		slot->state = SLOT_BUILT;
		pthread_cond_broadcast(&p->slot_built);
	}
	pthread_mutex_unlock(&p->lock);
	if (have_writer)
		ber_writer_free(&w);
	return NULL;
}

/* -------------------------------------------------------------- writer */

struct writer {
	struct pipeline *p;
	struct backend *be;
	struct backend_tool_load *load;
	struct postings *postings;
	size_t postings_limit;       /* bytes of postings before a flush */
	struct bulk_load_stats *stats;
	struct arena op_arena;
	struct tool_progress progress;
	char *err;
	size_t errlen;
};

/* Writes the postings held so far into the index tables, in key order. */
static int flush_postings(struct writer *w)
{
	int rc = backend_tool_index_postings(w->load, w->postings);
	if (rc != LUMEN_OK)
		snprintf(w->err, w->errlen, "writing the indexes: %s", lumen_strerror(rc));
	return rc;
}

/* Files the stored entry's keys under its ID; flushes when memory is due. */
static int file_keys(struct writer *w, const struct load_record *r, uint64_t id)
{
	int rc = LUMEN_OK;

	for (size_t t = 0; t < w->p->n_tables && rc == LUMEN_OK; t++)
		for (size_t k = 0; k < r->n_keys[t] && rc == LUMEN_OK; k++)
			rc = postings_add(w->postings, t, &r->keys[t][k], id);
	if (rc != LUMEN_OK) {
		snprintf(w->err, w->errlen, "line %zu: %.*s: keeping its index keys: %s", r->line,
			 (int)r->dn.len, (const char *)r->dn.ptr, lumen_strerror(rc));
		return rc;
	}
	if (postings_memory(w->postings) > w->postings_limit)
		rc = flush_postings(w);
	return rc;
}

/*
 * Stores one built entry. LUMEN_OK (stored), LUMEN_EMALFORMED (refused:
 * r->error set), or the backend's internal error (err set).
 */
static int store_record(struct writer *w, struct load_slot *slot, struct load_record *r)
{
	char why[512];
	struct backend_op op;
	uint64_t id = 0;

	memset(&op, 0, sizeof(op));
	arena_reset(&w->op_arena);
	op.arena = &w->op_arena;
	op.is_root = true;
	op.from_tool = true;
	int rc = backend_tool_store(w->load, &op, r->entry_dn, r->entry_ndn, r->encoded,
				    r->encoded_len, &id);
	if (rc != LUMEN_OK) {
		snprintf(w->err, w->errlen, "line %zu: %.*s: %s", r->line, (int)r->dn.len,
			 (const char *)r->dn.ptr,
			 op.diagnostic != NULL ? op.diagnostic : lumen_strerror(rc));
		return rc;
	}
	if (op.result_code == LDAP_SUCCESS && r->referral)
		rc = backend_tool_store_referral(w->load, id);
	if (rc != LUMEN_OK) {
		snprintf(w->err, w->errlen, "line %zu: %.*s: %s", r->line, (int)r->dn.len,
			 (const char *)r->dn.ptr, lumen_strerror(rc));
		return rc;
	}
	if (op.result_code == LDAP_SUCCESS)
		return file_keys(w, r, id);
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
		for (size_t i = 0; i < slot->n && rc == LUMEN_OK; i++)
			rc = write_record(w, slot, &slot->records[i]);
		tool_progress_update(&w->progress, w->stats->loaded, slot->bytes_end);
		pthread_mutex_lock(&p->lock);
		slot->state = SLOT_EMPTY;
		pthread_cond_broadcast(&p->slot_empty);
		pthread_mutex_unlock(&p->lock);
	}
	return rc;
}

/* ---------------------------------------------------------- the whole */

/* The share of the memory bound that records in flight may use. */
static size_t ring_memory(const struct bulk_load_options *o)
{
	size_t limit = o->memory_limit ? o->memory_limit : BULK_LOAD_DEFAULT_MEMORY;
	return limit / BULK_LOAD_RING_SHARE;
}

static int pipeline_init(struct pipeline *p, struct backend *be, const struct schema *schema,
			 FILE *input, const struct bulk_load_options *o)
{
	memset(p, 0, sizeof(*p));
	p->be = be;
	p->n_tables = be != NULL ? backend_index_count(be) : 0;
	p->schema = schema;
	p->options = o;
	p->input = input;
	p->schema_check = o->skip_schema ? BACKEND_CHECK_NONE
			  : o->quick ? BACKEND_CHECK_STRUCTURE : BACKEND_CHECK_FULL;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->slot_empty, NULL);
	pthread_cond_init(&p->slot_read, NULL);
	pthread_cond_init(&p->slot_built, NULL);
	/* two batches per builder keep everyone busy; the bound splits evenly */
	p->n_slots = 2 * (size_t)o->threads + 2;
	/* the built entries (keys, encoded form) take about as much as the text */
	p->slot_budget = ring_memory(o) / p->n_slots / 2;
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

/* The writer's side of a real load: the backend's load and the postings. */
static int writer_open(struct writer *w, const struct bulk_load_options *o)
{
	size_t limit = o->memory_limit ? o->memory_limit : BULK_LOAD_DEFAULT_MEMORY;

	w->postings_limit = limit - ring_memory(o);
	if (w->be == NULL)
		return LUMEN_OK;
	int rc = backend_tool_load_begin(w->be, &w->load);
	if (rc == LUMEN_OK)
		rc = postings_create(backend_index_count(w->be), &w->postings);
	return rc;
}

static void writer_close(struct writer *w)
{
	backend_tool_load_end(w->load);
	postings_free(w->postings);
	arena_free(&w->op_arena);
}

static int start_threads(struct pipeline *p, unsigned threads, pthread_t *reader,
			 bool *reader_started, pthread_t *builders, size_t *n_builders)
{
	if (pthread_create(reader, NULL, reader_main, p) != 0)
		return LUMEN_EIO;
	*reader_started = true;
	while (*n_builders < threads) {
		if (pthread_create(&builders[*n_builders], NULL, builder_main, p) != 0)
			return LUMEN_EIO;
		(*n_builders)++;
	}
	return LUMEN_OK;
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
	int rc = pipeline_init(&p, be, schema, input, options);
	if (rc == LUMEN_OK)
		rc = writer_open(&w, options);
	if (rc == LUMEN_OK)
		rc = start_threads(&p, options->threads, &reader, &reader_started, builders,
				   &n_builders);
	if (rc != LUMEN_OK)
		snprintf(err, errlen, "cannot start the load: %s", lumen_strerror(rc));
	else
		rc = writer_loop(&w);
	if (rc == LUMEN_OK && w.postings != NULL)
		rc = flush_postings(&w);
	if (reader_started)
		pipeline_stop(&p);
	if (reader_started)
		pthread_join(reader, NULL);
	for (size_t i = 0; i < n_builders; i++)
		pthread_join(builders[i], NULL);
	tool_progress_finish(&w.progress);
	pipeline_free(&p);
	writer_close(&w);
	stats->seconds = tool_now() - start;
	return rc;
}
