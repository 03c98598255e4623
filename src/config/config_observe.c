/*
 * config_observe.c — arguments of the observability directives
 * (metrics-listen, slowop-threshold); config.c applies them.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "lumen_error.h"

/* A decimal port 1..65535 (0 too: "any free port", for tests). */
static int parse_port(const char *text, unsigned *port)
{
	char *end = NULL;
	if (text[0] < '0' || text[0] > '9')
		return LUMEN_EMALFORMED;
	errno = 0;
	unsigned long v = strtoul(text, &end, 10);
	if (errno != 0 || *end != '\0' || v > 65535)
		return LUMEN_EMALFORMED;
	*port = (unsigned)v;
	return LUMEN_OK;
}

int config_parse_metrics_listen(const char *text, char **address, unsigned *port)
{
	*address = NULL;
	*port = 0;
	if (strcasecmp(text, "none") == 0 || strcasecmp(text, "off") == 0)
		return LUMEN_OK;
	const char *colon = strrchr(text, ':');
	const char *host = text, *host_end = colon;
	if (colon == NULL || colon == text)
		return LUMEN_EMALFORMED;
	/* "[::1]:9330": the brackets only delimit the address. */
	if (text[0] == '[') {
		if (colon[-1] != ']' || colon - text < 3)
			return LUMEN_EMALFORMED;
		host = text + 1;
		host_end = colon - 1;
	} else if (memchr(text, ':', (size_t)(colon - text)) != NULL) {
		return LUMEN_EMALFORMED;   /* an IPv6 address needs brackets */
	}
	if (parse_port(colon + 1, port) != LUMEN_OK)
		return LUMEN_EMALFORMED;
	*address = strndup(host, (size_t)(host_end - host));
	return *address != NULL ? LUMEN_OK : LUMEN_ENOMEM;
}

int config_parse_slowop_threshold(const char *text, long *out)
{
	if (strcasecmp(text, "off") == 0 || strcasecmp(text, "none") == 0) {
		*out = CONFIG_SLOWOP_OFF;
		return LUMEN_OK;
	}
	char *end = NULL;
	if (text[0] < '0' || text[0] > '9')
		return LUMEN_EMALFORMED;
	errno = 0;
	unsigned long v = strtoul(text, &end, 10);
	if (errno != 0 || *end != '\0' || v > (unsigned long)INT_MAX)
		return LUMEN_EMALFORMED;
	*out = (long)v;
	return LUMEN_OK;
}
