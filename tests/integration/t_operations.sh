#!/usr/bin/env bash
# Compare, add, delete and bind against a loaded directory, with every
# result code a client can provoke, and their access log lines.
. "$(dirname "$0")/lib.sh"
lumen_setup
lumen_start
lumen_load_tree
B="dc=example,dc=com"
P="ou=people,$B"
AUTH=(-x -H "$URI" -D "$ADMIN_DN" -w "$ADMIN_PW")
cmp_rc() { ldap_rc ldapcompare -x -H "$URI" "$@"; }
add_rc() { ldap_rc ldapadd "${AUTH[@]}"; }

# --- compare -----------------------------------------------------------------
expect_eq "compare true" 6 "$(cmp_rc "uid=alice,$P" 'cn:ally')"
expect_eq "compare false" 5 "$(cmp_rc "uid=alice,$P" 'cn:Bob')"
expect_eq "compare counts subtypes (name)" 6 "$(cmp_rc "uid=alice,$P" 'name:Alicia')"
expect_eq "compare a non-ASCII value" 6 "$(cmp_rc "uid=juergen,$P" 'sn:MÜLLER')"
expect_eq "compare an attribute the entry lacks: noSuchAttribute" 16 "$(cmp_rc "uid=alice,$P" 'uidNumber:1')"
expect_eq "compare an unknown type: undefinedAttributeType" 17 "$(cmp_rc "uid=alice,$P" 'fooBar:1')"
expect_eq "compare a missing entry: noSuchObject" 32 "$(cmp_rc "uid=nobody,$P" 'cn:x')"
expect_eq "compare a bad DN: invalidDNSyntax" 34 "$(cmp_rc "nonsense" 'cn:x')"
expect_eq "compare an escaped DN" 6 "$(cmp_rc "cn=Smith\\, John,$P" 'sn:smith')"

# --- add -----------------------------------------------------------------------
entry() { printf 'dn: %s\n' "$1"; shift; printf '%s\n' "$@"; }
expect_eq "add" 0 "$(entry "cn=new,$B" 'objectClass: device' 'cn: new' 'description: fresh' | add_rc)"
expect_eq "added entry is there" "dn: cn=new,$B
cn: new
description: fresh
objectClass: device" "$(ldapsearch -x -H "$URI" -LLL -b "cn=new,$B" -s base | sorted_ldif)"
expect_eq "add existing: entryAlreadyExists" 68 "$(entry "cn=new,$B" 'objectClass: device' 'cn: new' | add_rc)"
expect_eq "add existing, other spelling: entryAlreadyExists" 68 "$(entry "CN=NEW, DC=EXAMPLE,DC=COM" 'objectClass: device' 'cn: NEW' | add_rc)"
expect_eq "add below a missing parent: noSuchObject" 32 "$(entry "cn=x,ou=nope,$B" 'objectClass: device' 'cn: x' | add_rc)"
expect_eq "add without a MUST attribute: objectClassViolation" 65 "$(entry "cn=x,$B" 'objectClass: person' 'cn: x' | add_rc)"
expect_eq "add with an attribute the class forbids: objectClassViolation" 65 "$(entry "cn=x,$B" 'objectClass: device' 'cn: x' 'mail: x@example.com' | add_rc)"
expect_eq "add with a bad integer: invalidAttributeSyntax" 21 "$(entry "cn=x,$B" 'objectClass: device' 'objectClass: extensibleObject' 'cn: x' 'uidNumber: abc' | add_rc)"
expect_eq "add with two values of a single-valued type: constraintViolation" 19 "$(entry "uid=x,$P" 'objectClass: inetOrgPerson' 'uid: x' 'cn: x' 'sn: x' 'displayName: a' 'displayName: b' | add_rc)"
expect_eq "add with entryUUID from a client: constraintViolation" 19 "$(entry "cn=x,$B" 'objectClass: device' 'cn: x' 'entryUUID: 5f6b8c9e-1a2b-4c3d-9e8f-001122334455' | add_rc)"
expect_eq "add with an unknown type: undefinedAttributeType" 17 "$(entry "cn=x,$B" 'objectClass: device' 'cn: x' 'fooBar: 1' | add_rc)"
# RFC 4511 §4.7: the server supplies RDN values the client left out.
expect_eq "add whose RDN value is missing: the server adds it" 0 "$(entry "cn=rdnmissing,$B" 'objectClass: device' 'cn: other' | add_rc)"
expect_eq "the supplied RDN value is stored beside the given one" "cn: other|cn: rdnmissing" \
  "$(ldapsearch -x -H "$URI" -LLL -b "cn=rdnmissing,$B" -s base cn | sed -n 's/^cn: /cn: /p' | sort | paste -sd'|')"
expect_eq "RDN value of a single-valued type that holds another value: namingViolation" 64 \
  "$(entry "displayName=z,$P" 'objectClass: inetOrgPerson' 'cn: z' 'sn: z' 'displayName: a' | add_rc)"
expect_eq "add with a duplicate value: attributeOrValueExists" 20 "$(entry "cn=x,$B" 'objectClass: device' 'cn: x' 'serialNumber: 1' 'serialNumber: 1' | add_rc)"
expect_eq "add outside every suffix: unwillingToPerform (as slapd)" 53 "$(entry "cn=x,dc=other,dc=org" 'objectClass: device' 'cn: x' | add_rc)"
expect_eq "add with a bad DN: invalidDNSyntax" 34 "$(entry "cn=x,=bad" 'objectClass: device' 'cn: x' | add_rc)"
expect_eq "add non-ASCII DN and values" 0 "$(entry "cn=Zoë Ünal,$P" 'objectClass: person' 'cn: Zoë Ünal' 'sn: Ünal' | add_rc)"
expect_eq "non-ASCII entry found by a case-folded filter" "cn=Zoë Ünal,$P" \
  "$(ldapsearch -x -H "$URI" -LLL -o ldif-wrap=no -b "$P" '(sn=ünal)' 1.1 | sed -n 's/^dn:: //p' | base64 -d)"

# --- delete ----------------------------------------------------------------------
expect_eq "delete a non-leaf: notAllowedOnNonLeaf" 66 "$(ldap_rc ldapdelete "${AUTH[@]}" "$P")"
expect_eq "delete a missing entry: noSuchObject" 32 "$(ldap_rc ldapdelete "${AUTH[@]}" "cn=nothing,$B")"
expect_eq "delete" 0 "$(ldap_rc ldapdelete "${AUTH[@]}" "cn=new,$B")"
expect_eq "deleted entry is gone" 32 "$(ldap_rc ldapsearch -x -H "$URI" -b "cn=new,$B" -s base)"
expect_eq "delete an escaped DN" 0 "$(ldap_rc ldapdelete "${AUTH[@]}" "cn=Smith\\, John,$P")"
expect_eq "escaped DN is gone" 32 "$(cmp_rc "cn=Smith\\, John,$P" 'sn:smith')"

# --- bind as a directory entry ------------------------------------------------------
expect_eq "bind with the entry's {SSHA} userPassword, then WhoAmI" "dn:uid=alice,$P" \
  "$(ldapwhoami -x -H "$URI" -D "uid=alice,$P" -w alice-secret 2>&1)"
expect_eq "WhoAmI reports the stored DN for another spelling" "dn:uid=alice,$P" \
  "$(ldapwhoami -x -H "$URI" -D "UID=Alice, OU=People,DC=example,DC=com" -w alice-secret 2>&1)"
expect_eq "wrong password: invalidCredentials" 49 "$(ldap_rc ldapwhoami -x -H "$URI" -D "uid=alice,$P" -w wrong)"
expect_eq "entry without a password: invalidCredentials" 49 "$(ldap_rc ldapwhoami -x -H "$URI" -D "uid=bob,$P" -w x)"
expect_eq "unknown entry: invalidCredentials" 49 "$(ldap_rc ldapwhoami -x -H "$URI" -D "uid=nobody,$P" -w x)"
expect_eq "DN outside every suffix: invalidCredentials" 49 "$(ldap_rc ldapwhoami -x -H "$URI" -D "cn=x,dc=other" -w x)"
expect_eq "rootdn still binds" "dn:$ADMIN_DN" "$(ldapwhoami "${AUTH[@]}" 2>&1)"

# --- access log ---------------------------------------------------------------------
grep -Eq "conn=[0-9]+ op=[0-9]+ ADD dn=\"cn=new,$B\"" "$TMP/lumend.log" && ok "access log ADD line" || fail "access log ADD line"
grep -Eq "conn=[0-9]+ op=[0-9]+ DEL dn=\"cn=new,$B\"" "$TMP/lumend.log" && ok "access log DEL line" || fail "access log DEL line"
grep -Eq "conn=[0-9]+ op=[0-9]+ CMP dn=\"uid=alice,$P\" attr=\"cn\"" "$TMP/lumend.log" && ok "access log CMP line" || fail "access log CMP line"
grep -Eq "RESULT tag=105 err=68 " "$TMP/lumend.log" && ok "access log RESULT of a failed add" || fail "access log RESULT of a failed add"

lumen_stop
lumen_finish
