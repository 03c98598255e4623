/*
 * fake_bind_pace.h — bind_pace.h without its start-up measurement, for
 * targets that create a server per test or per fuzz input: the real
 * bind_pace_create hashes and checks every work-factor scheme (Argon2,
 * PBKDF2, crypt) a few times, ~70 ms of CPU each server, which was 98% of
 * fuzz_ops's time. Here the floor is 0 and stays 0, so no failed bind is
 * held back, and the decoy is a fixed {SSHA} value no password matches
 * (cheap to check). The pacing itself is test_bind_pace's.
 *
 * Link: name it with the other fakes (a fuzz target's `fuzz-fakes:` line,
 * a unit suite's UNIT_FAKES_<module>); this file then defines every
 * bind_pace.h function, so bind_pace.o is not pulled from libserver.a.
 * A function added to bind_pace.h must be added here too.
 *
 * Ownership: as bind_pace.h. Thread-safety: as bind_pace.h (nothing
 * changes after create).
 */
#ifndef LUMEN_FAKE_BIND_PACE_H
#define LUMEN_FAKE_BIND_PACE_H

#include "bind_pace.h"

#endif
