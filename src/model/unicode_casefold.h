/*
 * unicode_casefold.h — private to unicode.c: the generated simple case-fold
 * table (unicode_casefold.c, produced by gen_casefold.py). Read-only data.
 */
#ifndef LUMEN_UNICODE_CASEFOLD_H
#define LUMEN_UNICODE_CASEFOLD_H

#include <stddef.h>
#include <stdint.h>

struct unicode_fold_pair {
	uint32_t from;
	uint32_t to;
};

extern const struct unicode_fold_pair unicode_fold_table[];
extern const size_t unicode_fold_table_len;

#endif
