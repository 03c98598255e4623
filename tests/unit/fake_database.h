/*
 * fake_database.h — a database (database.h) with canned answers, for unit
 * suites of the operation layer: every operation records its call (which
 * one, the target's normalized DN) and answers `result_code` (and
 * `diagnostic`); a search hands `entries` to the sink, in order, then
 * answers. Nothing is written: fetch (the server's own reads) finds the
 * entry of `stored` with its normalized DN, else nothing, and is not
 * recorded.
 *
 * Ownership: the test owns the struct and the entries it points to; close
 * does nothing. Thread-safety: none (one test thread).
 */
#ifndef LUMEN_FAKE_DATABASE_H
#define LUMEN_FAKE_DATABASE_H

#include <stddef.h>

#include "database.h"
#include "entry.h"

enum fake_database_call {
	FAKE_DB_NONE, FAKE_DB_SEARCH, FAKE_DB_COMPARE, FAKE_DB_ADD,
	FAKE_DB_DELETE, FAKE_DB_MODIFY, FAKE_DB_MODRDN,
};

struct fake_database {
	struct database db;              /* hand &f->db to the server */
	int result_code;                 /* the LDAP result of every operation */
	const char *diagnostic;
	const struct entry *const *entries;  /* a search's entries */
	size_t n_entries;
	const struct entry *const *stored;   /* what fetch finds, by e->ndn */
	size_t n_stored;
	/* what the last call asked */
	enum fake_database_call last_call;
	unsigned n_calls;
	char last_ndn[256];
	char requester[256];             /* bop->requester_ndn, "" anonymous */
};

/* A database answering success with no entries. */
void fake_database_init(struct fake_database *f);

#endif
