/*
 * fake_bind_pace.c — bind_pace.h with no measurement and no floor
 * (fake_bind_pace.h).
 */
#include "fake_bind_pace.h"

#include <stdlib.h>

#include "lumen_error.h"

/* 24 bytes once decoded: a SHA-1 digest and a 4-byte salt. */
#define DECOY "{SSHA}ZmFrZS1iaW5kLXBhY2UtZGVjb3ktdmFs"

struct bind_pace {
	int unused;
};

int bind_pace_create(const char *default_scheme, struct bind_pace **out)
{
	(void)default_scheme;
	*out = calloc(1, sizeof(**out));
	return *out != NULL ? LUMEN_OK : LUMEN_ENOMEM;
}

void bind_pace_free(struct bind_pace *p)
{
	free(p);
}

const char *bind_pace_decoy(const struct bind_pace *p)
{
	(void)p;
	return DECOY;
}

bool bind_pace_worth_timing(const char *stored, size_t len)
{
	(void)stored, (void)len;
	return false;
}

uint64_t bind_pace_cpu_now(void)
{
	return 0;
}

uint64_t bind_pace_wall_now(void)
{
	return 0;
}

void bind_pace_observe(struct bind_pace *p, uint64_t cpu_ns, uint64_t wall_ns)
{
	(void)p, (void)cpu_ns, (void)wall_ns;
}

void bind_pace_observe_path(struct bind_pace *p, uint64_t total_ns, uint64_t checks_ns)
{
	(void)p, (void)total_ns, (void)checks_ns;
}

uint64_t bind_pace_floor(const struct bind_pace *p)
{
	(void)p;
	return 0;
}

uint64_t bind_pace_path(const struct bind_pace *p)
{
	(void)p;
	return 0;
}

uint64_t bind_pace_hold(const struct bind_pace *p)
{
	(void)p;
	return 0;
}

struct timeval bind_pace_remaining(const struct bind_pace *p, struct timespec arrived)
{
	(void)p, (void)arrived;
	return (struct timeval){ 0, 0 };
}
