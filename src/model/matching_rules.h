/*
 * matching_rules.h — private to src/model/matching*.c: the normalizers and
 * comparators the built-in rule table (matching.c) points at. Each normalizer
 * has the contract of struct matching_rule.normalize in schema.h:
 * LUMEN_EMALFORMED for a value the rule cannot normalize, LUMEN_ENOMEM.
 */
#ifndef LUMEN_MATCHING_RULES_H
#define LUMEN_MATCHING_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "ber.h"

#define NORMALIZER(name) \
	int name(const uint8_t *v, size_t len, struct arena *a, struct ber_view *out)

/* matching_string.c */
NORMALIZER(norm_case_ignore);
NORMALIZER(norm_case_ignore_piece);
NORMALIZER(norm_case_exact);
NORMALIZER(norm_case_exact_piece);
NORMALIZER(norm_ia5_ignore);
NORMALIZER(norm_ia5_ignore_piece);
NORMALIZER(norm_ia5_exact);
NORMALIZER(norm_ia5_exact_piece);
NORMALIZER(norm_numeric_string);
NORMALIZER(norm_telephone);
NORMALIZER(norm_case_ignore_list);

/* matching_value.c */
NORMALIZER(norm_integer);
NORMALIZER(norm_generalized_time);
NORMALIZER(norm_octet_string);
NORMALIZER(norm_object_identifier);
NORMALIZER(norm_boolean);
NORMALIZER(norm_bit_string);
NORMALIZER(norm_uuid);
NORMALIZER(norm_csn);
NORMALIZER(norm_oid_first_component);
NORMALIZER(norm_integer_first_component);
NORMALIZER(norm_distinguished_name);
NORMALIZER(norm_unique_member);

/*
 * An RFC 4512 oid: a numericoid ("2.5.4.3", no leading zeros in an arc)
 * or a descr ("cn"). The OID syntax and objectIdentifierMatch share it.
 */
bool oid_valid(const uint8_t *v, size_t len);

/* The RFC 4517 GeneralizedTime grammar and calendar check (no allocation). */
bool generalized_time_valid(const uint8_t *v, size_t len);

int compare_integer(struct ber_view a, struct ber_view b);
int compare_generalized_time(struct ber_view a, struct ber_view b);

#endif
