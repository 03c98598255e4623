/*
 * tool_main.c — the main() the database tools share (tools.h): the common
 * options, --help and -V, opening the database and the data stream, and turning
 * the outcome into a message and an exit code.
 */
#include "tools.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lumen_error.h"
#include "version.h"

int tool_target_option(struct tool_target *t, int opt, const char *arg)
{
	char *end = NULL;
	long n;

	switch (opt) {
	case 'f':
	case 'F':
		if (t->config_path != NULL)
			return LUMEN_EINVAL;
		t->config_path = arg;
		t->slapd_d = opt == 'F';
		return 1;
	case 'b': t->suffix = arg; return 1;
	case 'l': t->stream_path = arg; return 1;
	case 'n':
		n = strtol(arg, &end, 10);
		if (end == arg || *end != '\0' || n < 1 || n > 1000)
			return LUMEN_EINVAL;
		t->number = (int)n;
		return 1;
	default:
		return 0;
	}
}

int tool_getopt(int argc, char **argv, const char *options, struct tool_target *t)
{
	int opt;
	while ((opt = getopt(argc, argv, options)) != -1) {
		int common = tool_target_option(t, opt, optarg);
		if (common == 0)
			return opt;
		if (common < 0)
			return '?';
	}
	return -1;
}

int tool_target_check(const struct tool_target *t)
{
	if (t->config_path == NULL || (t->suffix != NULL && t->number > 0))
		return LUMEN_EINVAL;
	return LUMEN_OK;
}

/* Open the stream, run, close the stream; the run's outcome, or the close's. */
static int run_with_stream(const struct tool_program *p, void *args, struct tool_database *db,
			   char *err, size_t errlen)
{
	const struct tool_target *target = args;
	FILE *fallback = NULL, *stream = NULL;

	if (p->stream_mode != NULL) {
		fallback = p->stream_mode[0] == 'r' ? stdin : stdout;
		stream = tool_stream_open(p->name, target->stream_path, p->stream_mode, fallback);
		if (stream == NULL) {
			err[0] = '\0';
			return LUMEN_EIO;   /* tool_stream_open said why */
		}
	}
	int rc = p->run(args, db, stream, err, errlen);
	if (rc != LUMEN_OK)
		fprintf(stderr, "%s: %s\n", p->name, err[0] != '\0' ? err : lumen_strerror(rc));
	int close_rc = tool_stream_close(p->name, target->stream_path, stream, fallback);
	return rc != LUMEN_OK ? rc : close_rc;
}

bool tool_answer_help_version(const char *name, void (*usage)(FILE *out), int argc,
			      char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--help") == 0) {
		usage(stdout);
		return true;
	}
	if (argc == 2 && strcmp(argv[1], "-V") == 0) {
		printf("%s %s\n", name, LUMEN_VERSION);
		return true;
	}
	return false;
}

int tool_main(const struct tool_program *p, void *args, int argc, char **argv)
{
	const struct tool_target *target = args;
	struct tool_database db;
	char err[1024] = "";

	if (tool_answer_help_version(p->name, p->usage, argc, argv))
		return TOOL_EXIT_OK;
	if (p->parse_args(argc, argv, args) != LUMEN_OK || tool_target_check(target) != LUMEN_OK) {
		p->usage(stderr);
		return TOOL_EXIT_USAGE;
	}
	if (tool_database_open(target->config_path, target->slapd_d, target->suffix, target->number,
			       &db, err, sizeof(err)) != LUMEN_OK) {
		fprintf(stderr, "%s: %s\n", p->name, err);
		return TOOL_EXIT_FAILURE;
	}
	int rc = run_with_stream(p, args, &db, err, sizeof(err));
	tool_database_close(&db);
	return rc == LUMEN_OK ? TOOL_EXIT_OK : TOOL_EXIT_FAILURE;
}
