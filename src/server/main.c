/*
 * main.c — lumend: command line, config check (-T), daemonizing, pid and
 * args files, then the server until SIGTERM/SIGINT.
 *
 *   lumend [-f FILE] [-h URLS] [-d LEVEL] [-T]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>

#include "config.h"
#include "log.h"
#include "lumen_error.h"
#include "server.h"

#define DEFAULT_CONFIG_FILE "/etc/lumen/slapd.conf"
#define DEFAULT_URLS "ldap:///"
#define MAX_DEBUG_WORDS 32

struct options {
	const char *config_file;
	const char *urls;
	bool foreground;            /* -d given */
	unsigned debug_level;
	bool test_only;             /* -T */
};

static void usage(FILE *to)
{
	fprintf(to, "usage: lumend [-f config-file] [-h \"URL ...\"] [-d level] [-T]\n"
		    "  -f FILE   configuration file (default " DEFAULT_CONFIG_FILE ")\n"
		    "  -h URLS   listeners, e.g. \"ldap://127.0.0.1:389/ ldapi://%%2Frun%%2Fldapi\"\n"
		    "            (default " DEFAULT_URLS ")\n"
		    "  -d LEVEL  stay in the foreground and log at LEVEL to stderr\n"
		    "            (numbers or names: stats, conns, trace, any, none, ...)\n"
		    "  -T        check the configuration and exit\n");
}

static int parse_options(int argc, char **argv, struct options *o)
{
	int c;
	*o = (struct options){ .config_file = DEFAULT_CONFIG_FILE, .urls = DEFAULT_URLS };
	while ((c = getopt(argc, argv, "f:h:d:T")) != -1) {
		switch (c) {
		case 'f':
			o->config_file = optarg;
			break;
		case 'h':
			o->urls = optarg;
			break;
		case 'd': {
			unsigned level;
			const char *word = optarg;
			if (config_parse_loglevel(&word, 1, &level) != LUMEN_OK) {
				fprintf(stderr, "lumend: -d %s: expected a number or a level name\n",
					optarg);
				return LUMEN_EMALFORMED;
			}
			o->foreground = true;
			o->debug_level |= level;
			break;
		}
		case 'T':
			o->test_only = true;
			break;
		default:
			usage(stderr);
			return LUMEN_EMALFORMED;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return LUMEN_EMALFORMED;
	}
	return LUMEN_OK;
}

/* Classic double fork: no controlling terminal, not a process group leader. */
static int daemonize(void)
{
	pid_t pid = fork();
	if (pid < 0)
		return LUMEN_EIO;
	if (pid > 0)
		_exit(0);
	if (setsid() < 0)
		return LUMEN_EIO;
	pid = fork();
	if (pid < 0)
		return LUMEN_EIO;
	if (pid > 0)
		_exit(0);
	int null_fd = open("/dev/null", O_RDWR);
	if (null_fd < 0)
		return LUMEN_EIO;
	dup2(null_fd, STDIN_FILENO);
	dup2(null_fd, STDOUT_FILENO);
	dup2(null_fd, STDERR_FILENO);
	if (null_fd > STDERR_FILENO)
		close(null_fd);
	return LUMEN_OK;
}

static int write_small_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (f == NULL)
		return LUMEN_EIO;
	int ok = fputs(text, f) >= 0;
	if (fclose(f) != 0)
		ok = 0;
	return ok ? LUMEN_OK : LUMEN_EIO;
}

/* The pidfile and argsfile slapd writes (for init scripts). */
static int write_run_files(const struct config *cfg, int argc, char **argv)
{
	char text[4096];
	if (cfg->pidfile != NULL) {
		snprintf(text, sizeof(text), "%ld\n", (long)getpid());
		if (write_small_file(cfg->pidfile, text) != LUMEN_OK) {
			log_printf(0, "cannot write pidfile %s: %s", cfg->pidfile, strerror(errno));
			return LUMEN_EIO;
		}
	}
	if (cfg->argsfile != NULL) {
		size_t used = 0;
		text[0] = '\0';
		for (int i = 0; i < argc && used < sizeof(text); i++) {
			int n = snprintf(text + used, sizeof(text) - used, "%s%s", i ? " " : "",
					 argv[i]);
			if (n < 0)
				break;
			used += (size_t)n;
		}
		if (used < sizeof(text) - 1)
			strcat(text, "\n");
		if (write_small_file(cfg->argsfile, text) != LUMEN_OK) {
			log_printf(0, "cannot write argsfile %s: %s", cfg->argsfile, strerror(errno));
			return LUMEN_EIO;
		}
	}
	return LUMEN_OK;
}

static void remove_run_files(const struct config *cfg)
{
	if (cfg->pidfile != NULL)
		unlink(cfg->pidfile);
	if (cfg->argsfile != NULL)
		unlink(cfg->argsfile);
}

static int serve(struct server *server, const struct config *cfg,
		 const struct options *opts, int argc, char **argv)
{
	char err[1024] = "";
	int rc = server_listen(server, opts->urls, err, sizeof(err));
	if (rc != LUMEN_OK) {
		fprintf(stderr, "lumend: %s\n", err);
		return rc;
	}
	if (!opts->foreground && daemonize() != LUMEN_OK) {
		fprintf(stderr, "lumend: cannot become a daemon: %s\n", strerror(errno));
		return LUMEN_EIO;
	}
	rc = log_start(opts->foreground ? opts->debug_level : cfg->loglevel,
		       opts->foreground ? LOG_TO_STDERR : LOG_TO_SYSLOG);
	if (rc != LUMEN_OK) {
		fprintf(stderr, "lumend: cannot start the logger: %s\n", lumen_strerror(rc));
		return rc;
	}
	/* After daemonize: the backends start threads, which fork would lose. */
	rc = server_open_databases(server, err, sizeof(err));
	if (rc != LUMEN_OK) {
		log_printf(0, "lumend: %s", err);
		return rc;
	}
	rc = write_run_files(cfg, argc, argv);
	if (rc == LUMEN_OK) {
		rc = server_run(server, err, sizeof(err));
		if (rc != LUMEN_OK)
			log_printf(0, "lumend: %s", err);
		remove_run_files(cfg);
	}
	log_printf(0, "lumend stopped");
	return rc;
}

int main(int argc, char **argv)
{
	struct options opts;
	struct config *cfg = NULL;
	struct server *server = NULL;
	char err[1024] = "";
	int rc = parse_options(argc, argv, &opts);
	if (rc != LUMEN_OK)
		return 1;
	rc = config_load(opts.config_file, &cfg, err, sizeof(err));
	if (rc == LUMEN_OK)
		rc = server_create(cfg, &server, err, sizeof(err));
	if (rc != LUMEN_OK) {
		fprintf(stderr, "lumend: %s\n", err);
		if (opts.test_only)
			fprintf(stderr, "config file testing failed\n");
		goto done;
	}
	if (opts.test_only) {
		fprintf(stderr, "config file testing succeeded\n");
		goto done;
	}
	rc = serve(server, cfg, &opts, argc, argv);
done:
	server_destroy(server);
	log_stop();
	config_free(cfg);
	libevent_global_shutdown();
	return rc == LUMEN_OK ? 0 : 1;
}
