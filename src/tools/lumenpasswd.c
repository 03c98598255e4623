/*
 * lumenpasswd — print a userPassword / rootpw value (slappasswd's job).
 *
 *   lumenpasswd [-h SCHEME] [-s SECRET | -T FILE]
 *
 * Without -s or -T the secret is read from the terminal twice with echo
 * off, or as one line from standard input when that is not a terminal
 * (so `echo pw | lumenpasswd` works in scripts). A secret on the command
 * line is visible in ps(1): -s is for tests and throw-away passwords.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "lumen_error.h"
#include "password.h"
#include "tools.h"

#define SECRET_MAX 1024

static void usage(FILE *out)
{
	fprintf(out,
		"usage: lumenpasswd [-h SCHEME] [-s SECRET | -T FILE]\n"
		"       lumenpasswd -V | --help\n"
		"  -h SCHEME  {SSHA512} (default), {SSHA256}, {SSHA}, {SHA512}, {SHA256}, {SHA},\n"
		"             {PBKDF2-SHA512}, {PBKDF2-SHA256}, {PBKDF2-SHA1}, {PBKDF2},\n"
		"             {ARGON2} (argon2id), {CRYPT} (SHA-512 crypt); braces optional\n"
		"  -s SECRET  the password (visible to other users in ps: prefer the prompt)\n"
		"  -T FILE    read the password from the first line of FILE\n"
		"Without -s or -T the password is asked for on the terminal (twice, no echo)\n"
		"or read as one line from standard input.\n");
}

/* One line from fp without its line end. Returns its length, or -1. */
static long read_line(FILE *fp, char *buf, size_t size)
{
	if (fgets(buf, (int)size, fp) == NULL)
		return -1;
	size_t len = strcspn(buf, "\r\n");
	if (len == size - 1 && buf[len] == '\0')
		return -1;   /* longer than SECRET_MAX: refuse rather than truncate */
	buf[len] = '\0';
	return (long)len;
}

/* Prompts on /dev/tty with echo off. Returns the length, or -1. */
static long prompt_no_echo(FILE *tty, const char *prompt, char *buf, size_t size)
{
	struct termios saved, quiet;
	int fd = fileno(tty);
	bool restore = tcgetattr(fd, &saved) == 0;

	fputs(prompt, stderr);
	fflush(stderr);
	if (restore) {
		quiet = saved;
		quiet.c_lflag &= ~(tcflag_t)ECHO;
		tcsetattr(fd, TCSAFLUSH, &quiet);
	}
	long len = read_line(tty, buf, size);
	if (restore)
		tcsetattr(fd, TCSAFLUSH, &saved);
	fputc('\n', stderr);
	return len;
}

static long read_secret_interactive(char *buf, size_t size)
{
	char again[SECRET_MAX + 2];
	FILE *tty = fopen("/dev/tty", "r+");
	long len = -1;

	if (tty == NULL) {
		fprintf(stderr, "lumenpasswd: no terminal to ask on: %s\n", strerror(errno));
		return -1;
	}
	len = prompt_no_echo(tty, "New password: ", buf, size);
	if (len >= 0 && prompt_no_echo(tty, "Re-enter new password: ", again, sizeof(again)) != len)
		len = -2;
	else if (len >= 0 && strcmp(buf, again) != 0)
		len = -2;
	if (len == -2)
		fprintf(stderr, "lumenpasswd: the passwords do not match\n");
	memset(again, 0, sizeof(again));
	fclose(tty);
	return len < 0 ? -1 : len;
}

static long read_secret_file(const char *path, char *buf, size_t size)
{
	FILE *fp = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
	if (fp == NULL) {
		fprintf(stderr, "lumenpasswd: %s: %s\n", path, strerror(errno));
		return -1;
	}
	long len = read_line(fp, buf, size);
	if (len < 0)
		fprintf(stderr, "lumenpasswd: %s: no password line (or longer than %d bytes)\n",
			path, SECRET_MAX);
	if (fp != stdin)
		fclose(fp);
	return len;
}

int main(int argc, char **argv)
{
	const char *scheme = PASSWORD_DEFAULT_SCHEME, *secret_arg = NULL, *secret_file = NULL;
	char secret[SECRET_MAX + 2], hashed[PASSWORD_HASH_MAX];
	long len = -1;
	int opt;

	if (tool_answer_help_version("lumenpasswd", usage, argc, argv))
		return TOOL_EXIT_OK;
	while ((opt = getopt(argc, argv, "h:s:T:")) != -1) {
		switch (opt) {
		case 'h': scheme = optarg; break;
		case 's': secret_arg = optarg; break;
		case 'T': secret_file = optarg; break;
		default: usage(stderr); return TOOL_EXIT_USAGE;
		}
	}
	if (optind != argc || (secret_arg != NULL && secret_file != NULL)) {
		usage(stderr);
		return TOOL_EXIT_USAGE;
	}
	if (!password_scheme_known(scheme)) {
		fprintf(stderr, "lumenpasswd: unknown scheme \"%s\" (see --help)\n", scheme);
		return TOOL_EXIT_USAGE;
	}
	if (secret_arg != NULL) {
		len = (long)strlen(secret_arg);
		if (len > SECRET_MAX) {
			fprintf(stderr, "lumenpasswd: password longer than %d bytes\n", SECRET_MAX);
			return TOOL_EXIT_USAGE;
		}
		memcpy(secret, secret_arg, (size_t)len + 1);
	} else if (secret_file != NULL) {
		len = read_secret_file(secret_file, secret, sizeof(secret));
	} else if (isatty(STDIN_FILENO)) {
		len = read_secret_interactive(secret, sizeof(secret));
	} else {
		len = read_secret_file("-", secret, sizeof(secret));
	}
	if (len < 0)
		return TOOL_EXIT_FAILURE;
	int rc = password_hash(scheme, secret, (size_t)len, hashed, sizeof(hashed));
	memset(secret, 0, sizeof(secret));
	if (rc != LUMEN_OK) {
		fprintf(stderr, "lumenpasswd: cannot hash with %s: %s\n", scheme, lumen_strerror(rc));
		return TOOL_EXIT_FAILURE;
	}
	printf("%s\n", hashed);
	return fflush(stdout) == 0 ? TOOL_EXIT_OK : TOOL_EXIT_FAILURE;
}
