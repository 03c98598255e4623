/*
 * fuzz_config.c — libFuzzer target for slapd.conf (config.h): every
 * directive, `access to` lines, `limits`, `authz-regexp`, TLS and security
 * settings, schema definitions inline, database sections, includes.
 *
 * fuzz-layers: proto model backmdb config
 * fuzz-max-len: 16384
 *
 * config_load reads a path, so each input is written to one temporary file
 * (made once per process in $TMPDIR, removed at exit) and loaded from
 * there. The working directory is the repository root (run.sh), so
 * `include schema/core.schema` works and the fuzzer can build on it. To
 * keep inputs away from the rest of the file system, an input is skipped
 * when it holds ".." or an `include` of an absolute path (a FIFO or
 * /dev/zero would only stall the fuzzer), or regexes glibc would expand
 * exponentially (fuzz_regex_guard.h).
 *
 * Invariants: the return code is one config_load documents; on failure
 * *out is NULL and err holds a "FILE:LINE: ..." message naming a file; on
 * success the settings hold together (a schema, one type per database,
 * index and limit origins, compiled access rules, effective limits that
 * are never "inherit"); loading is deterministic (same code and message
 * twice); nothing leaks on any path (LeakSanitizer).
 * Seeds: tests/fuzz/corpus/fuzz_config/.
 */
#include <strings.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "fuzz_regex_guard.h"
#include "lumen_error.h"
#include "schema.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[4096];

static void remove_file(void)
{
	unlink(path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("TMPDIR");
	(void)argc;
	(void)argv;
	snprintf(path, sizeof(path), "%s/fuzz_config-XXXXXX", dir && dir[0] ? dir : "/tmp");
	int fd = mkstemp(path);
	if (fd < 0) {
		perror("fuzz_config: mkstemp");
		abort();
	}
	close(fd);
	atexit(remove_file);
	return 0;
}

/* ".." anywhere, or "include" followed (after blanks and quotes) by '/'. */
static bool escapes(const uint8_t *data, size_t size)
{
	static const char word[] = "include";
	for (size_t i = 0; i + 1 < size; i++) {
		if (data[i] == '.' && data[i + 1] == '.')
			return true;
		if (i + sizeof(word) - 1 <= size &&
		    strncasecmp((const char *)data + i, word, sizeof(word) - 1) == 0) {
			size_t j = i + sizeof(word) - 1;
			while (j < size && (data[j] == ' ' || data[j] == '\t' || data[j] == '"' ||
					    data[j] == '\n' || data[j] == '\r'))
				j++;
			if (j < size && data[j] == '/')
				return true;
		}
	}
	return false;
}

static void write_input(const uint8_t *data, size_t size)
{
	FILE *fp = fopen(path, "w");
	if (fp == NULL || (size > 0 && fwrite(data, 1, size, fp) != size) || fclose(fp) != 0) {
		perror("fuzz_config: writing the input");
		abort();
	}
}

static void check_loaded(const struct config *cfg)
{
	if (cfg->schema == NULL || cfg->path == NULL || strcmp(cfg->path, path) != 0)
		abort();
	if (cfg->access.n_rules > 0 && !cfg->access.compiled)
		abort();
	/* listener-threads 0 is its default: as many as the machine's CPUs suggest. */
	if (cfg->threads == 0)
		abort();
	for (size_t i = 0; i < cfg->n_limits; i++)
		if (cfg->limits[i].origin == NULL)
			abort();
	for (size_t i = 0; i < cfg->n_authz_regexps; i++)
		if (!cfg->authz_regexps[i].compiled || cfg->authz_regexps[i].replacement == NULL)
			abort();
	for (size_t d = 0; d < cfg->n_databases; d++) {
		const struct config_database *db = &cfg->databases[d];
		if (db->type == NULL || db->origin == NULL)
			abort();
		if (db->access.n_rules > 0 && !db->access.compiled)
			abort();
		for (size_t i = 0; i < db->n_suffixes; i++)
			if (db->suffixes[i] == NULL)
				abort();
		for (size_t i = 0; i < db->n_indexes; i++) {
			const struct config_index *ix = &db->indexes[i];
			if (ix->origin == NULL || ix->kinds == 0 || ix->kinds > 0xf)
				abort();
			for (size_t a = 0; a < ix->n_attributes; a++)
				if (ix->attributes[a] == NULL || ix->attributes[a][0] == '\0')
					abort();
		}
		for (size_t i = 0; i < db->n_limits; i++)
			if (db->limits[i].origin == NULL)
				abort();
		long size = config_database_sizelimit(cfg, db);
		long time = config_database_timelimit(cfg, db);
		if (size == CONFIG_LIMIT_INHERIT || time == CONFIG_LIMIT_INHERIT)
			abort();
	}
}

static bool documented(int rc)
{
	return rc == LUMEN_EIO || rc == LUMEN_EMALFORMED || rc == LUMEN_ELIMIT ||
	       rc == LUMEN_EEXIST || rc == LUMEN_ENOTFOUND || rc == LUMEN_ENOMEM;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config *cfg = NULL, *again = NULL;
	char err[1024] = "", err_again[1024] = "";

	if (escapes(data, size) || fuzz_regex_too_costly(data, size))
		return 0;
	write_input(data, size);
	int rc = config_load(path, &cfg, err, sizeof(err));
	if (rc == LUMEN_OK) {
		if (cfg == NULL)
			abort();
		check_loaded(cfg);
	} else {
		if (cfg != NULL || !documented(rc)) {
			fprintf(stderr, "fuzz_config: rc %d, cfg %p\n", rc, (void *)cfg);
			abort();
		}
		/* "FILE:LINE: ..." — at least a colon after a non-empty name. */
		const char *colon = strchr(err, ':');
		if (rc != LUMEN_ENOMEM && (colon == NULL || colon == err)) {
			fprintf(stderr, "fuzz_config: error without FILE:LINE: \"%s\"\n", err);
			abort();
		}
	}
	int rc_again = config_load(path, &again, err_again, sizeof(err_again));
	if (rc_again != rc || (rc != LUMEN_OK && strcmp(err, err_again) != 0)) {
		fprintf(stderr, "fuzz_config: not deterministic: %d \"%s\" then %d \"%s\"\n", rc, err,
			rc_again, err_again);
		abort();
	}
	config_free(cfg);
	config_free(again);
	return 0;
}
