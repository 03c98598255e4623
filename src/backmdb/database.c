/*
 * database.c — what every database shares through the database interface
 * (database.h): a search's size limit and time limit's deadline, with the
 * rootdn held to its request's limits only, and a read-only database's
 * refusal of writes.
 */
#include "database.h"

#include "ldap_result_codes.h"

static long size_limit(const struct backend_op *op)
{
	return op->is_root ? op->request_size_limit : op->size_limit;
}

static long time_limit(const struct backend_op *op)
{
	return op->is_root ? op->request_time_limit : op->time_limit;
}

void database_clock_start(struct database_clock *c, const struct backend_op *op,
			  const struct backend_search *s)
{
	long limit = time_limit(op);
	if (s->resume.active) {
		c->has_deadline = s->resume.has_deadline;
		c->deadline = s->resume.deadline;
	} else if (limit > 0) {
		clock_gettime(CLOCK_MONOTONIC, &c->deadline);
		c->deadline.tv_sec += limit;
		c->has_deadline = true;
	} else {
		c->has_deadline = false;
	}
}

bool database_clock_expired(const struct database_clock *c)
{
	struct timespec now;
	if (!c->has_deadline)
		return false;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > c->deadline.tv_sec ||
	       (now.tv_sec == c->deadline.tv_sec && now.tv_nsec >= c->deadline.tv_nsec);
}

bool database_size_reached(const struct backend_op *op, uint64_t sent)
{
	long limit = size_limit(op);
	return limit > 0 && sent >= (uint64_t)limit;
}

int database_refuse_change(struct backend_op *op)
{
	op->result_code = LDAP_UNWILLING_TO_PERFORM;
	op->diagnostic = "the database is read-only";
	op->matched_dn = (struct ber_view){ NULL, 0 };
	return LUMEN_OK;
}
