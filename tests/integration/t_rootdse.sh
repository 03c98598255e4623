#!/usr/bin/env bash
# Root DSE through ldapsearch: exact attributes, selection, typesOnly, filter.
. "$(dirname "$0")/lib.sh"
lumen_setup
lumen_start

search() { ldapsearch -x -H "$URI" -LLL -o ldif-wrap=no "$@" 2>&1; }

expect_eq "'*' '+' returns every root DSE attribute" "dn:
objectClass: top
objectClass: extensibleObject
namingContexts: dc=example,dc=com
monitorContext: cn=Monitor
subschemaSubentry: cn=Subschema
supportedControl: 2.16.840.1.113730.3.4.2
supportedControl: 1.3.6.1.1.12
supportedControl: 1.3.6.1.1.13.1
supportedControl: 1.3.6.1.1.13.2
supportedControl: 1.2.840.113556.1.4.319
supportedControl: 1.2.840.113556.1.4.473
supportedControl: 2.16.840.1.113730.3.4.9
supportedControl: 1.3.6.1.1.21.2
supportedControl: 2.16.840.1.113730.3.4.18
supportedControl: 1.3.6.1.1.22
supportedControl: 1.3.6.1.4.1.4203.1.10.1
supportedControl: 1.2.826.0.1.3344810.2.3
supportedExtension: 1.3.6.1.4.1.4203.1.11.3
supportedExtension: 1.3.6.1.4.1.4203.1.11.1
supportedExtension: 1.3.6.1.1.8
supportedExtension: 1.3.6.1.1.21.1
supportedExtension: 1.3.6.1.1.21.3
supportedFeatures: 1.3.6.1.1.14
supportedFeatures: 1.3.6.1.4.1.4203.1.5.1
supportedFeatures: 1.3.6.1.4.1.4203.1.5.2
supportedFeatures: 1.3.6.1.4.1.4203.1.5.3
supportedLDAPVersion: 3
vendorName: Lumen
vendorVersion: 0.1.0" "$(search -b "" -s base '*' '+')"

expect_eq "'+' alone: all but objectClass (a user attribute)" \
  "$(search -b "" -s base '*' '+' | grep -v '^objectClass:')" "$(search -b "" -s base '+')"
expect_eq "no attributes: user attributes only (objectClass, as slapd)" "dn:
objectClass: top
objectClass: extensibleObject" "$(search -b "" -s base)"
expect_eq "'*' alone: objectClass" "$(search -b "" -s base)" "$(search -b "" -s base '*')"
expect_eq "1.1: none" "dn:" "$(search -b "" -s base 1.1)"
expect_eq "named attributes, case-insensitive" "dn:
namingContexts: dc=example,dc=com
vendorName: Lumen" "$(search -b "" -s base NAMINGCONTEXTS vendorname)"
expect_eq "attribute by OID" "dn:
supportedLDAPVersion: 3" "$(search -b "" -s base 1.3.6.1.4.1.1466.101.120.15)"
expect_eq "typesOnly" "dn:
supportedLDAPVersion:" "$(search -A -b "" -s base supportedLDAPVersion)"
expect_eq "(objectClass=*) matches" "dn:" "$(search -b "" -s base '(objectClass=*)' 1.1)"
expect_eq "(vendorName=Lumen) matches" "dn:" "$(search -b "" -s base '(vendorName=Lumen)' 1.1)"
expect_eq "(vendorName=lumen): caseExactIA5Match (RFC 3045)" "" \
  "$(search -b "" -s base '(vendorName=lumen)' 1.1)"
expect_eq "(vendorName=other) does not match" "" "$(search -b "" -s base '(vendorName=other)' 1.1)"
expect_eq "(!(objectClass=*)) does not match" "" "$(search -b "" -s base '(!(objectClass=*))' 1.1)"
expect_eq "(objectClass=top) matches, as on slapd" "dn:" "$(search -b "" -s base '(objectClass=top)' 1.1)"
expect_eq "(objectClass=extensibleObject) matches" "dn:" \
  "$(search -b "" -s base '(objectClass=extensibleObject)' 1.1)"
expect_eq "(objectClass=person) does not match" "" "$(search -b "" -s base '(objectClass=person)' 1.1)"

rc=0; ldapsearch -x -H "$URI" -b "dc=nowhere" -s base >/dev/null 2>&1 || rc=$?
expect_eq "search outside every suffix: noSuchObject" 32 "$rc"
rc=0; ldapsearch -x -H "$URI" -b "ou=people,dc=example,dc=com" >/dev/null 2>&1 || rc=$?
expect_eq "search inside an empty database: noSuchObject" 32 "$rc"
rc=0; ldapsearch -x -H "$URI" -b "not a dn" >/dev/null 2>&1 || rc=$?
expect_eq "bad base DN: invalidDNSyntax" 34 "$rc"
rc=0; ldapdelete -x -H "$URI" "cn=x,dc=nowhere" >/dev/null 2>&1 || rc=$?
expect_eq "delete outside every suffix: unwillingToPerform (as slapd)" 53 "$rc"
rc=0; ldapcompare -x -H "$URI" "cn=x,dc=example,dc=com" "cn:x" >/dev/null 2>&1 || rc=$?
expect_eq "compare inside an empty database: noSuchObject" 32 "$rc"

grep -q 'SRCH base="" scope=0 deref=0 filter="(objectClass=\*)"' "$TMP/lumend.log" &&
  ok "access log SRCH line" || fail "access log SRCH line" "$(grep SRCH "$TMP/lumend.log" | head -3)"
grep -Eq 'SEARCH RESULT tag=101 err=0 qtime=[0-9.]+ etime=[0-9.]+ nentries=1 text=' "$TMP/lumend.log" &&
  ok "access log RESULT line" || fail "access log RESULT line"
grep -Eq 'conn=[0-9]+ fd=[0-9]+ ACCEPT from IP=127\.0\.0\.1:[0-9]+ \(IP=127\.0\.0\.1:'"$PORT"'\)' "$TMP/lumend.log" &&
  ok "access log ACCEPT line" || fail "access log ACCEPT line"
lumen_stop
lumen_finish
