/*
 * main.c — lumend: command line, config check (-T), daemonizing, pid and
 * args files, then the server until SIGTERM/SIGINT.
 *
 *   lumend [-f FILE | -F SLAPD.D] [-h URLS] [-d LEVEL] [-u USER] [-g GROUP] [-T]
 *   lumend -V | --help
 *
 * Order at start-up: open the listeners (as root, for port 389), drop to
 * -u/-g, fork into the background (unless -d), start the logger (log file
 * opened as the final user, so SIGHUP reopens work), open the databases.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>

#include "config.h"
#include "config_server_id.h"
#include "log.h"
#include "lumen_error.h"
#include "server.h"
#include "tls_memory.h"
#include "version.h"

/* $(sysconfdir)/lumen/slapd.conf: the Makefile passes it from its install paths. */
#ifndef LUMEN_CONFIG_FILE
#define LUMEN_CONFIG_FILE "/etc/lumen/slapd.conf"
#endif
#define DEFAULT_CONFIG_FILE LUMEN_CONFIG_FILE
/* As Debian's slapd: TCP on every address, and the local socket. */
#define DEFAULT_URLS "ldap:/// ldapi:///"
#define DEFAULT_LDAPI_DIR "/run/lumen"
#define MAX_DEBUG_WORDS 32

struct options {
	const char *config_file;
	const char *config_dir;     /* -F: OpenLDAP's slapd.d instead */
	const char *urls;
	bool urls_given;            /* -h given */
	const char *user;           /* -u */
	const char *group;          /* -g */
	bool foreground;            /* -d given */
	unsigned debug_level;
	bool test_only;             /* -T */
	bool exit_now;              /* -V or --help answered */
};

static void usage(FILE *to)
{
	fprintf(to, "usage: lumend [-f config-file | -F slapd.d] [-h \"URL ...\"] [-d level] "
		    "[-u user] [-g group] [-T]\n"
		    "       lumend -V | --help\n"
		    "  -f FILE   configuration file (default " DEFAULT_CONFIG_FILE ")\n"
		    "  -F DIR    OpenLDAP's cn=config directory instead (read only)\n"
		    "  -h URLS   listeners, e.g. \"ldap://127.0.0.1:389/ ldapi://%%2Frun%%2Fldapi\"\n"
		    "            (default " DEFAULT_URLS ")\n"
		    "  -d LEVEL  stay in the foreground and log at LEVEL to stderr\n"
		    "            (numbers or names: stats, conns, trace, any, none, ...;\n"
		    "            0: the configured loglevel, as under systemd)\n"
		    "  -u USER   run as USER once the listeners are open (root only)\n"
		    "  -g GROUP  run as GROUP (default: USER's primary group)\n"
		    "  -T        check the configuration and exit\n"
		    "  -V        print the version and exit\n");
}

static int parse_options(int argc, char **argv, struct options *o)
{
	int c;
	*o = (struct options){ .config_file = DEFAULT_CONFIG_FILE, .urls = DEFAULT_URLS };
	if (argc == 2 && strcmp(argv[1], "--help") == 0) {
		usage(stdout);
		o->exit_now = true;
		return LUMEN_OK;
	}
	bool file_given = false;
	while ((c = getopt(argc, argv, "f:F:h:d:u:g:TV")) != -1) {
		switch (c) {
		case 'f':
			o->config_file = optarg;
			file_given = true;
			break;
		case 'F':
			o->config_dir = optarg;
			break;
		case 'h':
			o->urls = optarg;
			o->urls_given = true;
			break;
		case 'u':
			o->user = optarg;
			break;
		case 'g':
			o->group = optarg;
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
		case 'V':
			printf("lumend %s\n", LUMEN_VERSION);
			o->exit_now = true;
			return LUMEN_OK;
		default:
			usage(stderr);
			return LUMEN_EMALFORMED;
		}
	}
	if (optind != argc || (file_given && o->config_dir != NULL)) {
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

/* name as a uid or gid number ("" is none). */
static bool numeric_id(const char *name, unsigned long *out)
{
	char *end = NULL;
	*out = strtoul(name, &end, 10);
	return name[0] != '\0' && *end == '\0';
}

/* A user or group by name or number. LUMEN_ENOTFOUND. */
static int lookup_user(const char *name, uid_t *uid, gid_t *gid)
{
	const struct passwd *pw = getpwnam(name);
	unsigned long n;
	if (pw == NULL && numeric_id(name, &n))
		pw = getpwuid((uid_t)n);
	if (pw == NULL)
		return LUMEN_ENOTFOUND;
	*uid = pw->pw_uid;
	*gid = pw->pw_gid;
	return LUMEN_OK;
}

static int lookup_group(const char *name, gid_t *gid)
{
	const struct group *gr = getgrnam(name);
	unsigned long n;
	if (gr == NULL && numeric_id(name, &n))
		gr = getgrgid((gid_t)n);
	if (gr == NULL)
		return LUMEN_ENOTFOUND;
	*gid = gr->gr_gid;
	return LUMEN_OK;
}

/* Leave root for -u/-g: supplementary groups, then the group, then the user. */
static int switch_identity(const char *user, uid_t uid, gid_t gid)
{
	int rc = user != NULL ? initgroups(user, gid) : setgroups(1, &gid);
	if (rc != 0 || setgid(gid) != 0 || setuid(uid) != 0)
		return LUMEN_EIO;
	/* Paranoia: a root that could come back was not dropped. */
	if (uid != 0 && (setuid(0) == 0 || seteuid(0) == 0))
		return LUMEN_EIO;
	return LUMEN_OK;
}

/*
 * -u USER -g GROUP, after the listeners are bound. Only root may switch;
 * anyone else may name their own identity (a no-op). err says why.
 * LUMEN_ENOTFOUND (no such user or group), LUMEN_EINVAL (not root),
 * LUMEN_EIO (a set*id call failed).
 */
static int drop_privileges(const struct options *o, char *err, size_t errlen)
{
	uid_t uid = geteuid();
	gid_t gid = getegid();
	if (o->user == NULL && o->group == NULL)
		return LUMEN_OK;
	if (o->user != NULL && lookup_user(o->user, &uid, &gid) != LUMEN_OK) {
		snprintf(err, errlen, "-u %s: no such user", o->user);
		return LUMEN_ENOTFOUND;
	}
	if (o->group != NULL && lookup_group(o->group, &gid) != LUMEN_OK) {
		snprintf(err, errlen, "-g %s: no such group", o->group);
		return LUMEN_ENOTFOUND;
	}
	if (geteuid() != 0) {
		if (uid == geteuid() && gid == getegid())
			return LUMEN_OK;
		snprintf(err, errlen, "-u/-g: only root can change the user or group");
		return LUMEN_EINVAL;
	}
	if (switch_identity(o->user, uid, gid) != LUMEN_OK) {
		snprintf(err, errlen, "-u/-g: cannot switch to uid %ld gid %ld: %s", (long)uid,
			 (long)gid, strerror(errno));
		return LUMEN_EIO;
	}
	return LUMEN_OK;
}

/* The default ldapi:/// needs its directory (systemd's RuntimeDirectory). */
static void prepare_default_ldapi(const struct options *o)
{
	if (!o->urls_given && mkdir(DEFAULT_LDAPI_DIR, 0755) != 0 && errno != EEXIST)
		fprintf(stderr, "lumend: cannot create %s: %s\n", DEFAULT_LDAPI_DIR,
			strerror(errno));
}

/*
 * The log: `logfile` if configured, else stderr in the foreground, else
 * syslog. -d LEVEL wins over loglevel; -d 0 keeps the configured level.
 */
static int start_log(const struct config *cfg, const struct options *o)
{
	unsigned level = o->foreground && o->debug_level != 0 ? o->debug_level : cfg->loglevel;
	enum log_target target = o->foreground ? LOG_TO_STDERR : LOG_TO_SYSLOG;
	if (cfg->logfile != NULL) {
		int rc = log_open_file(cfg->logfile);
		if (rc != LUMEN_OK) {
			fprintf(stderr, "lumend: %s: logfile %s: %s\n", cfg->path, cfg->logfile,
				rc == LUMEN_EIO ? strerror(errno) : lumen_strerror(rc));
			return rc;
		}
		target = LOG_TO_FILE;
	}
	int rc = log_start(level, target);
	if (rc != LUMEN_OK)
		fprintf(stderr, "lumend: cannot start the logger: %s\n", lumen_strerror(rc));
	return rc;
}

static int serve(struct server *server, const struct config *cfg,
		 const struct options *opts, int argc, char **argv)
{
	char err[1024] = "";
	server_hold_signals();
	prepare_default_ldapi(opts);
	int rc = server_listen(server, opts->urls, err, sizeof(err));
	if (rc == LUMEN_OK)
		rc = drop_privileges(opts, err, sizeof(err));
	if (rc != LUMEN_OK) {
		fprintf(stderr, "lumend: %s\n", err);
		return rc;
	}
	if (!opts->foreground && daemonize() != LUMEN_OK) {
		fprintf(stderr, "lumend: cannot become a daemon: %s\n", strerror(errno));
		return LUMEN_EIO;
	}
	rc = start_log(cfg, opts);
	if (rc != LUMEN_OK)
		return rc;
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
	/* Before anything calls OpenSSL (the configuration may hash a
	 * password): TLS sessions are counted from their first byte. */
	bool tls_counted = tls_memory_install() == LUMEN_OK;
	int rc = parse_options(argc, argv, &opts);
	if (rc != LUMEN_OK)
		return 1;
	if (opts.exit_now)
		return 0;
	rc = opts.config_dir != NULL ? config_load_slapd_d(opts.config_dir, &cfg, err, sizeof(err))
				     : config_load(opts.config_file, &cfg, err, sizeof(err));
	if (rc == LUMEN_OK)
		rc = config_server_id_resolve(cfg, opts.urls, &cfg->server_id, err, sizeof(err));
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
	if (!tls_counted)
		fprintf(stderr, "lumend: OpenSSL allocated before its allocation functions could be "
			"set: TLS sessions are counted by estimate\n");
	rc = serve(server, cfg, &opts, argc, argv);
done:
	server_destroy(server);
	log_stop();
	config_free(cfg);
	libevent_global_shutdown();
	return rc == LUMEN_OK ? 0 : 1;
}
