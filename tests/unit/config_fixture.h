/*
 * config_fixture.h — a struct config from slapd.conf text, for unit suites
 * of the server layer (header-only): the text is written to a fresh
 * temporary directory, whose path "%s" in the text stands for (a
 * database's `directory`). config_fixture_free removes it all.
 */
#ifndef LUMEN_CONFIG_FIXTURE_H
#define LUMEN_CONFIG_FIXTURE_H

#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "config.h"
#include "lumen_error.h"

static char config_fixture_dir[PATH_MAX];

/* Load text (with "%s" for the directory, at most once) or fail the test. */
static struct config *config_fixture_load(const char *text)
{
	char path[PATH_MAX + 16], err[512] = "";
	struct config *cfg = NULL;
	snprintf(config_fixture_dir, sizeof(config_fixture_dir), "/tmp/lumen-test-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(config_fixture_dir));
	snprintf(path, sizeof(path), "%s/slapd.conf", config_fixture_dir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, text, config_fixture_dir);
	fclose(f);
	ck_assert_msg(config_load(path, &cfg, err, sizeof(err)) == LUMEN_OK, "%s", err);
	return cfg;
}

static void config_fixture_free(struct config *cfg)
{
	char cmd[PATH_MAX + 16];
	config_free(cfg);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", config_fixture_dir);
	ck_assert_int_eq(system(cmd), 0);
}

#endif
