/*
 * Replays fuzz inputs through a target without libFuzzer, so that every
 * `make test` (and its sanitizer pass) builds each tests/fuzz/fuzz_*.c with
 * the project's own compiler and flags and runs it over the checked-in
 * seeds and the reproducers of fixed bugs.
 *
 *   replay [-max_len=N] FILE|DIR ...
 *
 * Each regular file (directories are read one level deep) is given to
 * LLVMFuzzerTestOneInput in a buffer of exactly its size, truncated to N
 * bytes as libFuzzer truncates what it loads. A target's own checks abort
 * on a violated property; the sanitizers report memory errors. Exit status:
 * 0 when every input ran, 2 on a usage or I/O error.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static size_t max_len = 65536;
static size_t replayed;

/* Reads the file whole into a buffer of its own size: a read past the end
 * of the input is then a heap overflow the sanitizer sees. */
static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	uint8_t *data = malloc(max_len > 0 ? max_len : 1);
	if (data == NULL) {
		fclose(f);
		fprintf(stderr, "replay: out of memory\n");
		return -1;
	}
	size_t size = fread(data, 1, max_len, f);
	int failed = ferror(f);
	fclose(f);
	if (failed) {
		free(data);
		fprintf(stderr, "replay: %s: read error\n", path);
		return -1;
	}
	uint8_t *exact = malloc(size > 0 ? size : 1);
	if (exact == NULL) {
		free(data);
		fprintf(stderr, "replay: out of memory\n");
		return -1;
	}
	memcpy(exact, data, size);
	free(data);
	LLVMFuzzerTestOneInput(exact, size);
	free(exact);
	replayed++;
	return 0;
}

static int replay_directory(const char *path)
{
	DIR *dir = opendir(path);
	if (dir == NULL) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	int rc = 0;
	struct dirent *d;
	while (rc == 0 && (d = readdir(dir)) != NULL) {
		char file[4096];
		struct stat st;
		if (d->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(file, sizeof(file), "%s/%s", path, d->d_name) >= sizeof(file)) {
			fprintf(stderr, "replay: %s/%s: path too long\n", path, d->d_name);
			rc = -1;
		} else if (stat(file, &st) == 0 && S_ISREG(st.st_mode)) {
			rc = replay_file(file);
		}
	}
	closedir(dir);
	return rc;
}

int main(int argc, char **argv)
{
	int first = 1;
	if (argc > 1 && strncmp(argv[1], "-max_len=", 9) == 0) {
		char *end;
		max_len = strtoul(argv[1] + 9, &end, 10);
		if (*end != '\0' || max_len == 0) {
			fprintf(stderr, "replay: bad %s\n", argv[1]);
			return 2;
		}
		first = 2;
	}
	if (LLVMFuzzerInitialize != NULL)
		LLVMFuzzerInitialize(&argc, &argv);
	for (int i = first; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
			return 2;
		}
		if ((S_ISDIR(st.st_mode) ? replay_directory(argv[i]) : replay_file(argv[i])) != 0)
			return 2;
	}
	printf("%zu inputs replayed\n", replayed);
	return 0;
}
