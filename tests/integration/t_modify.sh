#!/usr/bin/env bash
# Modify through ldapmodify: add/delete/replace/increment, all-or-nothing
# atomicity, every error code, and the access log lines.
. "$(dirname "$0")/lib.sh"
lumen_setup
lumen_start
lumen_load_tree
B="dc=example,dc=com"
P="ou=people,$B"
BOB="uid=bob,$P"
AUTH=(-x -H "$URI" -D "$ADMIN_DN" -w "$ADMIN_PW")
modify() { ldap_rc ldapmodify "${AUTH[@]}"; }
show() { ldapsearch -x -H "$URI" -LLL -o ldif-wrap=no -b "$1" -s base '(objectClass=*)' "${@:2}" 2>&1 | sorted_ldif; }
change() { printf 'dn: %s\nchangetype: modify\n%s\n' "$1" "$2" | modify; }

expect_eq "add, delete a value, replace in one request" 0 "$(change "$BOB" 'add: mail
mail: builder@example.com
-
delete: mail
mail: bob@example.com
-
replace: title
title: Boss
title: Owner
-
add: description
description:: R3LDvMOfZQ==')"
expect_eq "the entry shows every change" "dn: $BOB
description: Grüße
mail: builder@example.com
title: Boss
title: Owner" "$(show "$BOB" mail title description)"
expect_eq "increment" 0 "$(change "$BOB" $'increment: uidNumber\nuidNumber: 5')"
expect_eq "incremented value" "dn: $BOB
uidNumber: 1006" "$(show "$BOB" uidNumber)"
expect_eq "negative increment" 0 "$(change "$BOB" $'increment: uidNumber\nuidNumber: -10')"
expect_eq "value after negative increment" "dn: $BOB
uidNumber: 996" "$(show "$BOB" uidNumber)"
expect_eq "delete a whole attribute" 0 "$(change "$BOB" 'delete: description')"
expect_eq "attribute gone" "dn: $BOB" "$(show "$BOB" description)"
expect_eq "replace with no values removes the attribute" 0 "$(change "$BOB" 'replace: title')"
expect_eq "title removed" "dn: $BOB" "$(show "$BOB" title)"
expect_eq "modifiersName is the modifier" "dn: $BOB
modifiersName: $ADMIN_DN" "$(show "$BOB" modifiersName)"

# --- atomicity: a failing later change leaves the entry unchanged -------------------
before=$(show "$BOB" '*' '+')
expect_eq "second change fails: noSuchAttribute" 16 "$(change "$BOB" 'replace: sn
sn: Changed
-
delete: mail
mail: not-there@example.com')"
expect_eq "nothing of the failed modify was applied (operational attributes included)" \
  "$before" "$(show "$BOB" '*' '+')"

# --- errors -------------------------------------------------------------------------
expect_eq "add an existing value: attributeOrValueExists" 20 "$(change "$BOB" $'add: mail\nmail: BUILDER@example.com')"
expect_eq "delete a missing value: noSuchAttribute" 16 "$(change "$BOB" $'delete: mail\nmail: x@example.com')"
expect_eq "delete a missing attribute: noSuchAttribute" 16 "$(change "$BOB" 'delete: telephoneNumber')"
expect_eq "delete the RDN value: notAllowedOnRDN" 67 "$(change "$BOB" $'delete: uid\nuid: bob')"
expect_eq "change the structural class: objectClassModsProhibited" 69 \
  "$(change "$BOB" $'replace: objectClass\nobjectClass: device\nobjectClass: posixAccount')"
expect_eq "remove a MUST attribute: objectClassViolation" 65 "$(change "$BOB" 'delete: sn')"
expect_eq "increment a non-integer: constraintViolation" 19 "$(change "$BOB" $'increment: cn\ncn: 1')"
expect_eq "increment a missing attribute: noSuchAttribute" 16 "$(change "uid=alice,$P" $'increment: uidNumber\nuidNumber: 1')"
expect_eq "bad syntax: invalidAttributeSyntax" 21 "$(change "$BOB" $'replace: uidNumber\nuidNumber: many')"
expect_eq "unknown attribute: undefinedAttributeType" 17 "$(change "$BOB" $'add: fooBar\nfooBar: 1')"
expect_eq "NO-USER-MODIFICATION attribute: constraintViolation" 19 \
  "$(change "$BOB" $'replace: entryUUID\nentryUUID: 5f6b8c9e-1a2b-4c3d-9e8f-001122334455')"
expect_eq "second value of a single-valued type: constraintViolation" 19 \
  "$(change "$BOB" $'add: displayName\ndisplayName: a\ndisplayName: b')"
expect_eq "missing entry: noSuchObject" 32 "$(change "uid=nobody,$P" $'add: mail\nmail: x@example.com')"
expect_eq "bad DN: invalidDNSyntax" 34 "$(change "uid=x,,bad" $'add: mail\nmail: x@example.com')"
expect_eq "after all the errors the entry is as before" "$before" "$(show "$BOB" '*' '+')"

grep -Eq "conn=[0-9]+ op=[0-9]+ MOD dn=\"$BOB\"" "$TMP/lumend.log" && ok "access log MOD dn line" || fail "access log MOD dn line"
grep -Eq "conn=[0-9]+ op=[0-9]+ MOD attr=mail mail title description$" "$TMP/lumend.log" &&
  ok "access log MOD attr line" || fail "access log MOD attr line" "$(grep 'MOD attr' "$TMP/lumend.log" | head -3)"
grep -Eq "RESULT tag=103 err=16 " "$TMP/lumend.log" && ok "access log RESULT of a failed modify" ||
  fail "access log RESULT of a failed modify"

lumen_stop
lumen_finish
