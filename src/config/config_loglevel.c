/*
 * config_loglevel.c — slapd's loglevel words (numbers and names).
 */
#include <errno.h>
#include <stdlib.h>
#include <strings.h>

#include "config.h"
#include "lumen_error.h"

static const struct {
	const char *name;
	unsigned bits;
} level_names[] = {
	{ "trace", LOG_LEVEL_TRACE },   { "packets", LOG_LEVEL_PACKETS },
	{ "args", LOG_LEVEL_ARGS },     { "conns", LOG_LEVEL_CONNS },
	{ "BER", LOG_LEVEL_BER },       { "filter", LOG_LEVEL_FILTER },
	{ "config", LOG_LEVEL_CONFIG }, { "ACL", LOG_LEVEL_ACL },
	{ "stats", LOG_LEVEL_STATS },   { "stats2", LOG_LEVEL_STATS2 },
	{ "shell", LOG_LEVEL_SHELL },   { "parse", LOG_LEVEL_PARSE },
	{ "sync", LOG_LEVEL_SYNC },     { "none", LOG_LEVEL_NONE },
	{ "any", LOG_LEVEL_ANY },
};

/* A number: decimal, 0x hex, or -1 (slapd's spelling of "any"). */
static int parse_level_number(const char *word, unsigned *out)
{
	if (word[0] == '-') {
		if (word[1] == '1' && word[2] == '\0') {
			*out = LOG_LEVEL_ANY;
			return LUMEN_OK;
		}
		return LUMEN_EMALFORMED;
	}
	errno = 0;
	char *end = NULL;
	unsigned long v = strtoul(word, &end, 0);
	if (errno != 0 || end == word || *end != '\0' || v > 0xffffffffUL)
		return LUMEN_EMALFORMED;
	*out = (unsigned)v;
	return LUMEN_OK;
}

int config_parse_loglevel(const char *const *words, size_t n_words, unsigned *out)
{
	unsigned level = 0;
	if (n_words == 0)
		return LUMEN_EMALFORMED;
	for (size_t i = 0; i < n_words; i++) {
		const char *word = words[i];
		unsigned bits = 0;
		bool named = false;
		for (size_t j = 0; j < sizeof(level_names) / sizeof(level_names[0]); j++) {
			if (strcasecmp(word, level_names[j].name) == 0) {
				bits = level_names[j].bits;
				named = true;
				break;
			}
		}
		if (!named && parse_level_number(word, &bits) != LUMEN_OK)
			return LUMEN_EMALFORMED;
		level |= bits;
	}
	*out = level;
	return LUMEN_OK;
}
