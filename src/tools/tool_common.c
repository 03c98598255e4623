/*
 * tool_common.c — configuration, database choice, progress and summary
 * lines shared by the operator tools (tools.h).
 */
#include "tools.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "arena.h"
#include "config_backend.h"
#include "dn.h"
#include "lumen_error.h"

/* Redraws of the progress line per second, at most. */
#define PROGRESS_INTERVAL 0.25

int tool_backend_settings(const struct config_database *db, struct backend_settings *out,
			  const char ***suffixes, struct backend_index_spec **indexes)
{
	int rc = config_backend_settings(db, out);
	*suffixes = rc == LUMEN_OK ? (const char **)out->suffixes : NULL;
	*indexes = rc == LUMEN_OK ? (struct backend_index_spec *)out->indexes : NULL;
	return rc;
}

/* True if ndn is one of db's suffixes or lies below one. */
static bool database_has_suffix(const struct schema *schema, const struct config_database *db,
				struct ber_view ndn, struct arena *arena)
{
	for (size_t i = 0; i < db->n_suffixes; i++) {
		struct ber_view candidate;
		if (dn_normalize(schema, db->suffixes[i], strlen(db->suffixes[i]), arena,
				 &candidate) == LUMEN_OK &&
		    dn_is_within(ndn, candidate))
			return true;
	}
	return false;
}

static int select_by_suffix(struct tool_database *t, const char *suffix, char *err,
			    size_t errlen)
{
	struct arena arena;
	struct ber_view ndn;
	int rc;

	arena_init(&arena, 0);
	rc = dn_normalize(t->config->schema, suffix, strlen(suffix), &arena, &ndn);
	if (rc != LUMEN_OK) {
		snprintf(err, errlen, "-b \"%s\": not a valid DN (%s)", suffix,
			 lumen_strerror(rc));
		goto done;
	}
	rc = LUMEN_ENOTFOUND;
	for (size_t i = 0; i < t->config->n_databases && t->db == NULL; i++)
		if (database_has_suffix(t->config->schema, &t->config->databases[i], ndn, &arena)) {
			t->db = &t->config->databases[i];
			rc = LUMEN_OK;
		}
	if (rc != LUMEN_OK)
		snprintf(err, errlen, "%s: no database holds \"%s\"", t->config->path, suffix);
done:
	arena_free(&arena);
	return rc;
}

static int select_database(struct tool_database *t, const char *suffix, int number,
			   char *err, size_t errlen)
{
	if (suffix != NULL)
		return select_by_suffix(t, suffix, err, errlen);
	if (number > 0) {
		if ((size_t)number > t->config->n_databases) {
			snprintf(err, errlen, "%s: -n %d: the file has %zu database section(s)",
				 t->config->path, number, t->config->n_databases);
			return LUMEN_ENOTFOUND;
		}
		t->db = &t->config->databases[number - 1];
		return LUMEN_OK;
	}
	for (size_t i = 0; i < t->config->n_databases && t->db == NULL; i++)
		if (strcasecmp(t->config->databases[i].type, "mdb") == 0)
			t->db = &t->config->databases[i];
	if (t->db == NULL) {
		snprintf(err, errlen, "%s: no `database mdb` section", t->config->path);
		return LUMEN_ENOTFOUND;
	}
	return LUMEN_OK;
}

int tool_database_open(const char *conf_path, bool slapd_d, const char *suffix, int number,
		       struct tool_database *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	int rc = slapd_d ? config_load_slapd_d(conf_path, &out->config, err, errlen)
			 : config_load(conf_path, &out->config, err, errlen);
	if (rc != LUMEN_OK)
		return rc;
	rc = select_database(out, suffix, number, err, errlen);
	if (rc != LUMEN_OK)
		goto fail;
	if (strcasecmp(out->db->type, "mdb") != 0) {
		snprintf(err, errlen, "%s: database type \"%s\" is not mdb", out->db->origin,
			 out->db->type);
		rc = LUMEN_EUNSUPPORTED;
		goto fail;
	}
	if (out->db->directory == NULL) {
		snprintf(err, errlen, "%s: the database has no `directory` line", out->db->origin);
		rc = LUMEN_EINVAL;
		goto fail;
	}
	rc = tool_backend_settings(out->db, &out->settings, &out->suffixes, &out->indexes);
	if (rc != LUMEN_OK) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	/* a serverID line without URL: the tools stamp with it too */
	out->settings.server_id = out->config->server_id;
	return LUMEN_OK;
fail:
	tool_database_close(out);
	return rc;
}

void tool_database_close(struct tool_database *t)
{
	free(t->suffixes);
	free(t->indexes);
	config_free(t->config);
	memset(t, 0, sizeof(*t));
}

void tool_error(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

double tool_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

uint64_t tool_peak_rss(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return (uint64_t)ru.ru_maxrss * 1024;   /* Linux reports KiB */
}

void tool_progress_start(struct tool_progress *p, uint64_t total_bytes)
{
	memset(p, 0, sizeof(*p));
	p->enabled = isatty(STDERR_FILENO) == 1;
	p->start = p->last = tool_now();
	p->total_bytes = total_bytes;
}

/* "1h02m03s" / "2m03s" / "3s" into buf. */
static void format_duration(double seconds, char *buf, size_t len)
{
	unsigned long s = seconds > 0 ? (unsigned long)(seconds + 0.5) : 0;
	if (s >= 3600)
		snprintf(buf, len, "%luh%02lum%02lus", s / 3600, s / 60 % 60, s % 60);
	else if (s >= 60)
		snprintf(buf, len, "%lum%02lus", s / 60, s % 60);
	else
		snprintf(buf, len, "%lus", s);
}

void tool_progress_update(struct tool_progress *p, uint64_t entries, uint64_t bytes_done)
{
	char elapsed_text[32], eta_text[32] = "?";

	if (!p->enabled)
		return;
	double now = tool_now();
	if (now - p->last < PROGRESS_INTERVAL)
		return;
	p->last = now;
	double elapsed = now - p->start;
	double rate = elapsed > 0 ? (double)entries / elapsed : 0;
	format_duration(elapsed, elapsed_text, sizeof(elapsed_text));
	if (p->total_bytes > 0 && bytes_done > 0 && bytes_done <= p->total_bytes)
		format_duration(elapsed * (double)(p->total_bytes - bytes_done) / (double)bytes_done,
				eta_text, sizeof(eta_text));
	fprintf(stderr, "\r%" PRIu64 " entries, %.0f entries/s, elapsed %s, ETA %s   ",
		entries, rate, elapsed_text, eta_text);
	fflush(stderr);
	p->printed = true;
}

void tool_progress_finish(struct tool_progress *p)
{
	if (p->printed)
		fprintf(stderr, "\r%-72s\r", "");
	p->printed = false;
}

void tool_print_summary(FILE *out, const char *verb, uint64_t entries, double seconds,
			const char *extra)
{
	double rate = seconds > 0 ? (double)entries / seconds : 0;
	fprintf(out, "%s: %" PRIu64 " entries in %.2f s (%.0f entries/s), peak memory %.1f MiB%s%s\n",
		verb, entries, seconds, rate, (double)tool_peak_rss() / (1024.0 * 1024.0),
		extra != NULL ? ", " : "", extra != NULL ? extra : "");
}

uint64_t tool_file_size(FILE *fp)
{
	struct stat st;
	if (fstat(fileno(fp), &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	return (uint64_t)st.st_size;
}

FILE *tool_stream_open(const char *tool, const char *path, const char *mode, FILE *fallback)
{
	if (path == NULL || strcmp(path, "-") == 0)
		return fallback;
	FILE *f = fopen(path, mode);
	if (f == NULL)
		fprintf(stderr, "%s: %s: %s\n", tool, path, strerror(errno));
	return f;
}

int tool_stream_close(const char *tool, const char *path, FILE *f, FILE *fallback)
{
	if (f == NULL || f == fallback)
		return LUMEN_OK;
	if (fclose(f) == 0)
		return LUMEN_OK;
	fprintf(stderr, "%s: %s: %s\n", tool, path, strerror(errno));
	return LUMEN_EIO;
}
