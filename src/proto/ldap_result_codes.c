/*
 * ldap_result_codes.c — names of LDAP result codes (ldap_result_codes.h),
 * spelled as in RFC 4511 Appendix A so logs match what operators look up.
 */
#include "ldap_result_codes.h"

#include <stddef.h>

struct result_name {
	int code;
	const char *name;
};

static const struct result_name result_names[] = {
	{ LDAP_SUCCESS, "success" },
	{ LDAP_OPERATIONS_ERROR, "operationsError" },
	{ LDAP_PROTOCOL_ERROR, "protocolError" },
	{ LDAP_TIME_LIMIT_EXCEEDED, "timeLimitExceeded" },
	{ LDAP_SIZE_LIMIT_EXCEEDED, "sizeLimitExceeded" },
	{ LDAP_COMPARE_FALSE, "compareFalse" },
	{ LDAP_COMPARE_TRUE, "compareTrue" },
	{ LDAP_AUTH_METHOD_NOT_SUPPORTED, "authMethodNotSupported" },
	{ LDAP_STRONGER_AUTH_REQUIRED, "strongerAuthRequired" },
	{ LDAP_REFERRAL, "referral" },
	{ LDAP_ADMIN_LIMIT_EXCEEDED, "adminLimitExceeded" },
	{ LDAP_UNAVAILABLE_CRITICAL_EXTENSION, "unavailableCriticalExtension" },
	{ LDAP_CONFIDENTIALITY_REQUIRED, "confidentialityRequired" },
	{ LDAP_SASL_BIND_IN_PROGRESS, "saslBindInProgress" },
	{ LDAP_NO_SUCH_ATTRIBUTE, "noSuchAttribute" },
	{ LDAP_UNDEFINED_ATTRIBUTE_TYPE, "undefinedAttributeType" },
	{ LDAP_INAPPROPRIATE_MATCHING, "inappropriateMatching" },
	{ LDAP_CONSTRAINT_VIOLATION, "constraintViolation" },
	{ LDAP_ATTRIBUTE_OR_VALUE_EXISTS, "attributeOrValueExists" },
	{ LDAP_INVALID_ATTRIBUTE_SYNTAX, "invalidAttributeSyntax" },
	{ LDAP_NO_SUCH_OBJECT, "noSuchObject" },
	{ LDAP_ALIAS_PROBLEM, "aliasProblem" },
	{ LDAP_INVALID_DN_SYNTAX, "invalidDNSyntax" },
	{ LDAP_ALIAS_DEREFERENCING_PROBLEM, "aliasDereferencingProblem" },
	{ LDAP_INAPPROPRIATE_AUTHENTICATION, "inappropriateAuthentication" },
	{ LDAP_INVALID_CREDENTIALS, "invalidCredentials" },
	{ LDAP_INSUFFICIENT_ACCESS_RIGHTS, "insufficientAccessRights" },
	{ LDAP_BUSY, "busy" },
	{ LDAP_UNAVAILABLE, "unavailable" },
	{ LDAP_UNWILLING_TO_PERFORM, "unwillingToPerform" },
	{ LDAP_LOOP_DETECT, "loopDetect" },
	{ LDAP_NAMING_VIOLATION, "namingViolation" },
	{ LDAP_OBJECT_CLASS_VIOLATION, "objectClassViolation" },
	{ LDAP_NOT_ALLOWED_ON_NON_LEAF, "notAllowedOnNonLeaf" },
	{ LDAP_NOT_ALLOWED_ON_RDN, "notAllowedOnRDN" },
	{ LDAP_ENTRY_ALREADY_EXISTS, "entryAlreadyExists" },
	{ LDAP_OBJECT_CLASS_MODS_PROHIBITED, "objectClassModsProhibited" },
	{ LDAP_AFFECTS_MULTIPLE_DSAS, "affectsMultipleDSAs" },
	{ LDAP_OTHER, "other" },
	{ LDAP_CANCELED, "canceled" },
	{ LDAP_NO_SUCH_OPERATION, "noSuchOperation" },
	{ LDAP_TOO_LATE, "tooLate" },
	{ LDAP_CANNOT_CANCEL, "cannotCancel" },
	{ LDAP_ASSERTION_FAILED, "assertionFailed" },
	{ LDAP_PROXIED_AUTHORIZATION_DENIED, "authorizationDenied" },
	{ LDAP_TXN_ID_INVALID, "txnIdInvalid" },
};

const char *ldap_result_name(int code)
{
	/* A linear scan: this runs when logging, never per entry. */
	for (size_t i = 0; i < sizeof(result_names) / sizeof(result_names[0]); i++) {
		if (result_names[i].code == code)
			return result_names[i].name;
	}
	return "unknown";
}
