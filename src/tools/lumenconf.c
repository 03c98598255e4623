/*
 * lumenconf — writes the slapd.conf equivalent of an OpenLDAP cn=config
 * directory (slapd.d), for moving a Debian slapd to Lumen:
 *
 *   lumenconf -F /etc/ldap/slapd.d [-o FILE] [-s]
 *
 * The translation is config_print_slapd_d's (config.h); before writing,
 * lumenconf loads the directory as lumend -F would (schema, access rules,
 * every directive), so what it writes is a configuration lumend accepts.
 * It reads the directory only; -s skips the check (translating on a
 * machine without Lumen's schema files installed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "lumen_error.h"
#include "tools.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: lumenconf -F slapd.d [-o FILE] [-s]\n"
		"       lumenconf -V | --help\n"
		"  -F DIR      OpenLDAP's cn=config directory (e.g. /etc/ldap/slapd.d)\n"
		"  -o FILE     write the slapd.conf to FILE (default: standard output)\n"
		"  -s          skip checking the result as lumend -F would load it\n"
		"Reads DIR only: Lumen never writes to a slapd.d.\n");
}

int main(int argc, char **argv)
{
	const char *dir = NULL, *output = NULL;
	bool check = true;
	char err[1024] = "";
	int opt;

	if (tool_answer_help_version("lumenconf", usage, argc, argv))
		return TOOL_EXIT_OK;
	while ((opt = getopt(argc, argv, "F:o:s")) != -1) {
		switch (opt) {
		case 'F': dir = optarg; break;
		case 'o': output = optarg; break;
		case 's': check = false; break;
		default: usage(stderr); return TOOL_EXIT_USAGE;
		}
	}
	if (dir == NULL || optind != argc) {
		usage(stderr);
		return TOOL_EXIT_USAGE;
	}
	if (check) {
		struct config *cfg = NULL;
		int rc = config_load_slapd_d(dir, &cfg, err, sizeof(err));
		config_free(cfg);
		if (rc != LUMEN_OK) {
			fprintf(stderr, "lumenconf: %s\n", err);
			return TOOL_EXIT_FAILURE;
		}
	}
	FILE *out = tool_stream_open("lumenconf", output, "w", stdout);
	if (out == NULL)
		return TOOL_EXIT_FAILURE;
	int rc = config_print_slapd_d(dir, out, err, sizeof(err));
	if (rc != LUMEN_OK)
		fprintf(stderr, "lumenconf: %s\n", err);
	int close_rc = tool_stream_close("lumenconf", output, out, stdout);
	return rc == LUMEN_OK && close_rc == LUMEN_OK ? TOOL_EXIT_OK : TOOL_EXIT_FAILURE;
}
