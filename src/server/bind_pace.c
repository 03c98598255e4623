/*
 * bind_pace.c — equal time for every failed simple bind (bind_pace.h).
 */
#include "bind_pace.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/rand.h>

#include "lumen_error.h"
#include "password.h"

/* Checks per scheme at start-up, after the timed hash that made the value:
 * the best (least disturbed) of them counts. Hashing a value costs what
 * checking it does (one derivation at the same parameters), so the hash is
 * a run too: every further run is one more derivation on every start. */
#define CALIBRATION_CHECKS 1
/* Margin over the measured cost: 1/8. */
#define MARGIN_SHIFT 3
/* The contention in 1/256ths. */
#define CONTENTION_ONE 256u
/* How a tracker (the contention, the path) follows what checks and failed
 * binds see: half the way toward a longer time, a sixteenth toward a
 * shorter one. It stays near the slower of them, which is what the hold
 * must cover: an answer held for an average would leave every slower
 * real bind to stand out. */
#define RISE_SHIFT 1
#define FALL_SHIFT 4

/* Every algorithm password.h checks, the costly ones first. {PBKDF2} is
 * {PBKDF2-SHA1} under its older name (the same function and digest):
 * measuring it again would only lengthen every start (the calibration is
 * most of a start's CPU). */
static const char *const measured_schemes[] = {
	"ARGON2", "PBKDF2-SHA512", "PBKDF2-SHA256", "PBKDF2-SHA1", "CRYPT",
	"SSHA512", "SSHA256", "SSHA", "SHA512", "SHA256", "SHA",
};

struct bind_pace {
	_Atomic uint64_t floor_ns;
	_Atomic uint64_t contention;    /* wall ÷ CPU of recent checks, × CONTENTION_ONE */
	_Atomic uint64_t path_ns;       /* recent failed binds' time outside their checks */
	char decoy[PASSWORD_HASH_MAX];
};

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;
	if (clock_gettime(clock, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t bind_pace_cpu_now(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

uint64_t bind_pace_wall_now(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* The CPU cost of checking a wrong password against `stored`, or `best`. */
static uint64_t check_cost(const char *stored, uint64_t best)
{
	static const char wrong[] = "not the password";
	for (int i = 0; i < CALIBRATION_CHECKS; i++) {
		bool match;
		uint64_t t0 = bind_pace_cpu_now();
		password_check(stored, strlen(stored), wrong, sizeof(wrong) - 1, &match);
		uint64_t spent = bind_pace_cpu_now() - t0;
		if (spent < best)
			best = spent;
	}
	return best;
}

/* The dearest scheme at the parameters new values get. */
static int measure(struct bind_pace *p)
{
	static const char secret[] = "calibration only";
	char stored[PASSWORD_HASH_MAX];
	uint64_t dearest = 0;
	for (size_t i = 0; i < sizeof(measured_schemes) / sizeof(measured_schemes[0]); i++) {
		uint64_t t0 = bind_pace_cpu_now();
		int rc = password_hash(measured_schemes[i], secret, sizeof(secret) - 1, stored,
				       sizeof(stored));
		uint64_t hashing = bind_pace_cpu_now() - t0;
		if (rc == LUMEN_EINVAL || rc == LUMEN_EUNSUPPORTED)
			continue;     /* e.g. a libcrypt without a default method */
		if (rc != LUMEN_OK)
			return rc;
		uint64_t cost = check_cost(stored, hashing);
		if (cost > dearest)
			dearest = cost;
	}
	dearest += dearest >> MARGIN_SHIFT;
	atomic_store(&p->floor_ns, dearest < BIND_PACE_MAX_NS ? dearest : BIND_PACE_MAX_NS);
	return LUMEN_OK;
}

int bind_pace_create(const char *default_scheme, struct bind_pace **out)
{
	uint8_t random[16];
	char secret[2 * sizeof(random) + 1];
	struct bind_pace *p = calloc(1, sizeof(*p));
	*out = NULL;
	if (p == NULL)
		return LUMEN_ENOMEM;
	atomic_init(&p->contention, CONTENTION_ONE);
	atomic_init(&p->path_ns, 0);
	/* Nobody knows the decoy's password (random, as hex: {CRYPT} takes no
	 * NUL byte), so it never matches. */
	int rc = RAND_bytes(random, sizeof(random)) == 1 ? LUMEN_OK : LUMEN_EIO;
	for (size_t i = 0; rc == LUMEN_OK && i < sizeof(random); i++)
		snprintf(secret + 2 * i, 3, "%02x", random[i]);
	if (rc == LUMEN_OK)
		rc = password_hash(default_scheme, secret, sizeof(secret) - 1, p->decoy,
				   sizeof(p->decoy));
	if (rc == LUMEN_OK)
		rc = measure(p);
	if (rc != LUMEN_OK) {
		free(p);
		return rc;
	}
	*out = p;
	return LUMEN_OK;
}

void bind_pace_free(struct bind_pace *p)
{
	free(p);
}

const char *bind_pace_decoy(const struct bind_pace *p)
{
	return p->decoy;
}

static void raise_floor(struct bind_pace *p, uint64_t cpu_ns)
{
	uint64_t want = cpu_ns + (cpu_ns >> MARGIN_SHIFT);
	if (want > BIND_PACE_MAX_NS)
		want = BIND_PACE_MAX_NS;
	uint64_t cur = atomic_load(&p->floor_ns);
	while (want > cur && !atomic_compare_exchange_weak(&p->floor_ns, &cur, want))
		;
}

/* wall ÷ cpu in 1/256ths, within [1, BIND_PACE_MAX_CONTENTION]. */
static uint64_t contention_of(uint64_t cpu_ns, uint64_t wall_ns)
{
	if (wall_ns <= cpu_ns)
		return CONTENTION_ONE;   /* the two clocks' granularity */
	if (wall_ns / BIND_PACE_MAX_CONTENTION >= cpu_ns)
		return BIND_PACE_MAX_CONTENTION * CONTENTION_ONE;
	return wall_ns * CONTENTION_ONE / cpu_ns;
}

/* Move a tracker toward seen: RISE_SHIFT or FALL_SHIFT of the way, at
 * least one unit (to reach it, not stop a few units short). */
static void follow(_Atomic uint64_t *tracker, uint64_t seen)
{
	uint64_t cur = atomic_load(tracker);
	for (;;) {
		int64_t gap = (int64_t)seen - (int64_t)cur;
		int64_t step = gap / (1 << (gap > 0 ? RISE_SHIFT : FALL_SHIFT));
		if (step == 0 && gap != 0)
			step = gap > 0 ? 1 : -1;
		if (atomic_compare_exchange_weak(tracker, &cur, (uint64_t)((int64_t)cur + step)))
			return;
	}
}

void bind_pace_observe(struct bind_pace *p, uint64_t cpu_ns, uint64_t wall_ns)
{
	raise_floor(p, cpu_ns);
	if (cpu_ns > 0)
		follow(&p->contention, contention_of(cpu_ns, wall_ns));
}

void bind_pace_observe_path(struct bind_pace *p, uint64_t total_ns, uint64_t checks_ns)
{
	uint64_t seen = total_ns > checks_ns ? total_ns - checks_ns : 0;
	if (seen > BIND_PACE_MAX_NS)
		seen = BIND_PACE_MAX_NS;
	follow(&p->path_ns, seen);
}

uint64_t bind_pace_floor(const struct bind_pace *p)
{
	return atomic_load(&((struct bind_pace *)p)->floor_ns);
}

uint64_t bind_pace_path(const struct bind_pace *p)
{
	return atomic_load(&((struct bind_pace *)p)->path_ns);
}

uint64_t bind_pace_hold(const struct bind_pace *p)
{
	uint64_t floor = bind_pace_floor(p);
	uint64_t contention = atomic_load(&((struct bind_pace *)p)->contention);
	/* floor and path <= 1 s, contention <= 16 × 256: no overflow */
	uint64_t hold = floor * contention / CONTENTION_ONE + bind_pace_path(p);
	return hold < BIND_PACE_MAX_NS ? hold : BIND_PACE_MAX_NS;
}

bool bind_pace_worth_timing(const char *stored, size_t len)
{
	static const char *const tunable[] = { "{PBKDF2", "{ARGON2", "{CRYPT" };
	for (size_t i = 0; i < sizeof(tunable) / sizeof(tunable[0]); i++) {
		size_t n = strlen(tunable[i]);
		if (len >= n && strncasecmp(stored, tunable[i], n) == 0)
			return true;
	}
	return false;
}

struct timeval bind_pace_remaining(const struct bind_pace *p, struct timespec arrived)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	int64_t elapsed = (int64_t)(now.tv_sec - arrived.tv_sec) * 1000000000ll +
			  (now.tv_nsec - arrived.tv_nsec);
	int64_t left = (int64_t)bind_pace_hold(p) - elapsed;
	if (left <= 0)
		return (struct timeval){ 0, 0 };
	return (struct timeval){ (time_t)(left / 1000000000ll),
				 (suseconds_t)((left % 1000000000ll) / 1000) };
}
