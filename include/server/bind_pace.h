/*
 * bind_pace.h — making a failed simple bind cost the same whoever it names
 * (server layer): an unknown DN, an entry without a password (or without
 * `auth` on it), a wrong password checked against any stored scheme, and,
 * a locked account (ppolicy), all answer
 * invalidCredentials after the same time.
 *
 * The parts:
 *  - Work: where no stored value is checked, a decoy value is (hashed at
 *    start-up with the configured `password-hash` scheme), so the CPU spent
 *    looks like a real check of a default-scheme value.
 *  - Time: a failed bind does not answer before `floor` has passed since its
 *    request arrived. The floor is the CPU time of the most
 *    expensive scheme Lumen checks, at the parameters password_hash gives
 *    new values (ARGON2, PBKDF2-*, CRYPT, ...; measured at start-up, the
 *    cheaper of hashing a value and checking it, plus a margin), raised for
 *    good whenever a real stored value turns out costlier (a larger work
 *    factor), up to
 *    BIND_PACE_MAX_NS. Measuring thread CPU time, not wall time, keeps a
 *    check that was merely descheduled from raising it. A "cheap" {SSHA}
 *    user then looks like an {ARGON2} one, and both like an unknown DN.
 *    (OpenLDAP answers an unknown DN at once: its timing tells which DNs
 *    exist; Lumen does not follow it there.)
 *  - Load: on a busy machine a real check is descheduled and ends later on
 *    the wall clock than its CPU time, while a held answer waits on a timer
 *    and needs no CPU; with two busy processes on two CPUs, wrong {ARGON2}
 *    and {PBKDF2} passwords answered 2x later than an unknown DN. So every
 *    timed check also reports its wall time, the pace tracks wall ÷ CPU
 *    (the contention, 1 on an idle machine, at most
 *    BIND_PACE_MAX_CONTENTION), and a held answer waits for the floor times
 *    that.
 *  - The path around the check: a real check also costs its journey — the
 *    hand-off to a worker, the overlays' writes (ppolicy's pwdFailureTime)
 *    and their commit, each a wake-up that a loaded machine delays by
 *    milliseconds (27 ms against 16 for a held answer, on a busier host).
 *    A failed bind that checked an entry's stored values (any scheme)
 *    reports how long it took from its request's arrival to its verdict;
 *    the time not spent in work-factor checks is the path, tracked and
 *    added to the hold. (On a disk whose commits take 20 ms, a wrong
 *    {SSHA} password under ppolicy answered 13 ms after an unknown DN, on
 *    an idle machine.) A held answer thus waits floor × contention + path:
 *    as long as a real failed bind takes now.
 *  - Tracking: each measure moves its tracker half the way toward a
 *    longer time and a sixteenth toward a shorter one, so it stays near
 *    the slower real binds. The hold must cover them: held for an
 *    average, every slower one would stand out (a locked account writes
 *    nothing, a wrong password writes pwdFailureTime; with both seen, an
 *    average left the writing ones 1.3x later than an unknown DN).
 *
 * For a lockout (ppolicy) or any other refusal: compute the verdict after
 * the password checks, never return early — the checks run and the delay
 * applies whatever the account's state (an overlay's bind_before sets
 * overlay_bind.refused; op_bind.c holds the answer before the overlays'
 * bind_after hooks write their state, so those writes are hidden too).
 *
 * Nothing sleeps: bind_pace_remaining says how long the answer must still
 * wait, and the server holds it back on the connection (conn_hold_output)
 * while the worker goes on with other clients' work, so a flood of failed
 * binds costs their hashes, not idle workers. Successful binds are not
 * delayed: the client that knows the password learns nothing from the
 * time.
 *
 * Ownership: bind_pace_create allocates, bind_pace_free releases.
 * Thread-safety: bind_pace_* may be called from any number of threads (the
 * floor is an atomic that only grows, the contention and the path atomic
 * trackers).
 * Caveats:
 *  - Values costlier than BIND_PACE_MAX_NS to check stay distinguishable.
 *  - The contention and the path follow the checks: after load ends, the
 *    next few dozen real checks bring the hold back down (each moves it a
 *    sixteenth of the way); a directory whose values have no work factor
 *    never measures the contention (nor needs to: their checks cost next
 *    to nothing).
 *  - The path is one tracker for the server: where one database writes
 *    on a failed bind (ppolicy) and another does not, the one that does
 *    not holds its failures as long as the writing one's.
 */
#ifndef LUMEN_BIND_PACE_H
#define LUMEN_BIND_PACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* The floor never grows beyond this (1 s), nor does a held answer wait longer. */
#define BIND_PACE_MAX_NS 1000000000ull
/* Wall time over CPU time counted at most this much (a check that waited
 * longer was stopped, not merely sharing CPUs). */
#define BIND_PACE_MAX_CONTENTION 16u

struct bind_pace;

/*
 * Hash the decoy with `default_scheme` (the configured password-hash) and
 * measure the schemes. LUMEN_ENOMEM, LUMEN_EUNSUPPORTED (unknown scheme),
 * LUMEN_EIO (no random bytes, a hash failed).
 */
int bind_pace_create(const char *default_scheme, struct bind_pace **out);
void bind_pace_free(struct bind_pace *p);

/* The decoy value (NUL-terminated, "{SCHEME}..."). */
const char *bind_pace_decoy(const struct bind_pace *p);

/*
 * May checking this stored value cost more than the floor? Only schemes
 * with a work factor can ({PBKDF2-*}, {ARGON2}, {CRYPT}); the fixed-cost
 * salted hashes and cleartext never do, so their checks are not timed
 * (the thread CPU clock is a system call, not free on every bind).
 */
bool bind_pace_worth_timing(const char *stored, size_t len);
/* The thread's CPU clock and the monotonic clock now, for bind_pace_observe. */
uint64_t bind_pace_cpu_now(void);
uint64_t bind_pace_wall_now(void);
/*
 * A real stored value took cpu_ns of CPU and wall_ns on the wall clock to
 * check: raise the floor if costlier, and move the contention toward
 * wall_ns / cpu_ns (a check with no measurable CPU time moves nothing).
 */
void bind_pace_observe(struct bind_pace *p, uint64_t cpu_ns, uint64_t wall_ns);
/*
 * A failed bind that checked an entry's stored values took total_ns from
 * its request's arrival to its verdict (its overlays' writes included),
 * checks_ns of it in work-factor checks (their wall time): move the path
 * toward the difference.
 */
void bind_pace_observe_path(struct bind_pace *p, uint64_t total_ns, uint64_t checks_ns);
/* The current floor, in nanoseconds of CPU. */
uint64_t bind_pace_floor(const struct bind_pace *p);
/* The path's tracker, in nanoseconds. */
uint64_t bind_pace_path(const struct bind_pace *p);
/* How long a held answer waits now: floor × contention + path, capped. */
uint64_t bind_pace_hold(const struct bind_pace *p);

/* How much of the hold after arrived (the request's arrival on the
 * monotonic clock) is still ahead (zero when past). */
struct timeval bind_pace_remaining(const struct bind_pace *p, struct timespec arrived);

#endif
