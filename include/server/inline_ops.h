/*
 * inline_ops.h — run-to-completion reads: which operations an I/O thread
 * runs itself instead of handing them to a worker (server layer).
 *
 * Handing every operation from an I/O thread to a worker and back costs
 * two thread wake-ups (futex, scheduler) per operation: on two cores as
 * much as a small search itself. So an I/O thread runs short, bounded
 * reads to completion (`inline-reads on`, the default) and queues only
 * what can take long. The decision has three sieves:
 *
 *  1. the envelope (inline_may_start): Bind, Compare and Search may start
 *     here, and only on a connection with nothing outstanding (an op queued
 *     on a worker keeps its successors behind it, in order); at most
 *     INLINE_OPS_PER_TURN per connection per read, so one pipelining
 *     client cannot hold the thread;
 *  2. the decoded request (inline_search_eligible, inline_password_cheap):
 *     a search with base scope or an equality term that can narrow it to
 *     a few candidates, and no control that can make it long (sort, VLV,
 *     sync, anything not known to be cheap); a bind whose password check
 *     is a fast digest (rootpw, the entry's values, or the pace's decoy)
 *     on a database with no overlay acting on binds (ppolicy and lastbind
 *     may write: the whole bind goes to a worker). A handler that
 *     finds its request too costly hands the op off (op_hand_off, ops.h)
 *     before it has sent or changed anything, and a worker runs it anew;
 *  3. the database (struct backend_search's examine_budget): a search
 *     started here examines at most INLINE_SEARCH_BUDGET candidates; a
 *     larger candidate set pauses it before the first entry, and a worker
 *     continues it from the pause point (nothing lost, nothing repeated).
 *
 * Everything else — writes, extended operations, large searches, costly
 * password hashes, binds whose overlays write (lastbind, ppolicy) — goes
 * through the work queue as before.
 *
 * LMDB on an I/O thread: the database's pool of read transactions serves
 * it as it serves a worker (the environment is MDB_NOTLS; a transaction
 * is reset when the operation lets it go, so no snapshot stays pinned
 * between operations).
 *
 * Ownership: the functions below are pure; they keep no state.
 * Thread-safety: any thread.
 *
 * Caveats:
 *  - The sieves decide cost, not correctness: an op runs through the same
 *    handler, access control, limits, overlays and logging wherever it
 *    runs, and its output goes to the connection's queue (never a blocking
 *    write on the I/O thread).
 */
#ifndef LUMEN_INLINE_OPS_H
#define LUMEN_INLINE_OPS_H

#include <stdbool.h>
#include <stddef.h>

#include "ldap_message.h"

/* Candidates a search started on an I/O thread may examine. */
#define INLINE_SEARCH_BUDGET 64u
/* Operations one connection may run inline per read of its socket. */
#define INLINE_OPS_PER_TURN 16u

/* May an operation with this protocolOp start on the I/O thread? */
bool inline_may_start(int tag);

/*
 * May this decoded search run on the I/O thread: base scope, or a filter
 * that is an equality match or an AND with one, and only controls known
 * to be cheap (ManageDsaIT, assertion, paged results)?
 */
bool inline_search_eligible(const struct ldap_message *msg);

/*
 * Is checking a password against this stored value cheap: a plain or
 * salted digest (cleartext, {SHA*}, {SSHA*}), not a KDF with a work
 * factor ({PBKDF2*}, {ARGON2}, {CRYPT}) or a scheme Lumen does not know?
 */
bool inline_password_cheap(const char *stored, size_t len);

#endif
