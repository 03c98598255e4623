/*
 * scratch_dir_fixture.h — the scratch directory of the config suites
 * (test_config.c, test_config_slapd_d.c): make_dir creates it, write_file
 * puts a file in it (creating the directories on its way), remove_dir
 * deletes it with everything in it. One directory at a time per process.
 */
#ifndef LUMEN_SCRATCH_DIR_FIXTURE_H
#define LUMEN_SCRATCH_DIR_FIXTURE_H

#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char dir[PATH_MAX];

static void make_dir(void)
{
	snprintf(dir, sizeof(dir), "/tmp/lumen-test-config-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void remove_dir(void)
{
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* Write dir/name and return its path in a static buffer. */
static const char *write_file(const char *name, const char *text)
{
	static char path[PATH_MAX + 128];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	for (char *slash = strchr(path + strlen(dir) + 1, '/'); slash != NULL;
	     slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	return path;
}

#endif
