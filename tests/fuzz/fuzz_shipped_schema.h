/*
 * fuzz_shipped_schema.h — the shipped schema files, loaded and finalized
 * once by a fuzz target's LLVMFuzzerInitialize. Targets run from the
 * repository root (run.sh, replay.sh); anything else is a set-up error:
 * the reason goes to stderr and the process aborts.
 */
#ifndef LUMEN_FUZZ_SHIPPED_SCHEMA_H
#define LUMEN_FUZZ_SHIPPED_SCHEMA_H

#include <stdio.h>
#include <stdlib.h>

#include "lumen_error.h"
#include "schema.h"

/* Every file of schema/, in load order; a target takes the first n. */
static const char *const fuzz_schema_files[] = {
	"schema/core.schema", "schema/cosine.schema", "schema/inetorgperson.schema",
	"schema/nis.schema", "schema/lumen.schema",
};

/* files[0..n) loaded into a new finalized schema; `target` names the
 * fuzzer in the message. Never returns NULL. */
static inline struct schema *fuzz_load_schema(const char *target, const char *const *files,
					      size_t n)
{
	struct schema *s;
	char err[256];

	if (schema_create(&s) != LUMEN_OK)
		abort();
	for (size_t i = 0; i < n; i++) {
		if (schema_load_file(s, files[i], err, sizeof(err)) != LUMEN_OK) {
			fprintf(stderr, "%s: %s (run from the repository root)\n", target, err);
			abort();
		}
	}
	if (schema_finalize(s, err, sizeof(err)) != LUMEN_OK) {
		fprintf(stderr, "%s: %s\n", target, err);
		abort();
	}
	return s;
}

#endif
