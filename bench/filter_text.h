/*
 * filter_text.h — RFC 4515 string filter straight to BER (bench).
 *
 * lumenbench keeps to the proto layer, so it carries this small encoder
 * instead of the model layer's filter parser: it turns "(&(uid=a)(cn=b*))"
 * into the Filter CHOICE of RFC 4511 §4.5.1 in a ber_writer, with no tree
 * and no allocation (escaped values are decoded into a stack buffer).
 * Supported: & | ! = ~= >= <= =* substrings, extensible match
 * (attr:dn:rule:=value), and the \HH escapes of RFC 4515. A bare item
 * without parentheses ("uid=x") is accepted as ldapsearch does.
 *
 * Ownership: writes into the caller's writer; nothing else.
 * Thread-safety: reentrant.
 *
 * Caveats:
 *  - nesting is limited to FILTER_TEXT_MAX_DEPTH; one value is at most
 *    FILTER_TEXT_MAX_VALUE bytes once unescaped.
 *  - attribute descriptions are not checked beyond being non-empty and
 *    free of filter syntax characters.
 */
#ifndef LUMEN_BENCH_FILTER_TEXT_H
#define LUMEN_BENCH_FILTER_TEXT_H

#include <stddef.h>

#include "ber.h"

#define FILTER_TEXT_MAX_DEPTH 32
#define FILTER_TEXT_MAX_VALUE 4096

/*
 * Encode the filter in text[0..len) into w. LUMEN_EMALFORMED for bad
 * syntax (unbalanced parentheses, bad escape, empty attribute, trailing
 * text), LUMEN_ELIMIT for nesting or value size beyond the limits, or the
 * writer's own error (LUMEN_ENOMEM, LUMEN_ELIMIT). *why (if non-NULL)
 * gets a static English reason. On error the writer's content is partial:
 * reset it.
 */
int bench_filter_encode(struct ber_writer *w, const char *text, size_t len,
			const char **why);

#endif
