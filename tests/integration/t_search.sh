#!/usr/bin/env bash
# Search against a loaded directory: the whole tree back as loaded, scopes,
# every filter type, attribute selection, limits, noSuchObject with
# matchedDN, cn=Subschema, the unindexed-search log note, a large result.
. "$(dirname "$0")/lib.sh"
lumen_setup "sizelimit 10"
echo "index uid eq" >> "$TMP/slapd.conf"
lumen_start
lumen_load_tree
B="dc=example,dc=com"
P="ou=people,$B"
search() { ldapsearch -x -H "$URI" -LLL -o ldif-wrap=no "$@" 2>&1; }
admin_search() { search -D "$ADMIN_DN" -w "$ADMIN_PW" "$@"; }

# --- the tree comes back exactly as loaded ----------------------------------
expect_eq "subtree search returns the loaded tree" "$(grep -v '^#' "$DATA/tree.ldif" | sorted_ldif)" \
  "$(admin_search -b "$B" '(objectClass=*)' | sorted_ldif)"

# --- scopes ------------------------------------------------------------------
expect_eq "scope base" "$P" "$(dns_of -b "$P" -s base '(objectClass=*)')"
expect_eq "scope one" "cn=Smith\\, John,$P
ou=eng,$P
uid=alice,$P
uid=bob,$P
uid=juergen,$P" "$(dns_of -b "$P" -s one '(objectClass=*)')"
expect_eq "scope sub counts the base" 8 "$(dns_of -b "$P" -s sub '(objectClass=*)' | wc -l)"
expect_eq "scope children leaves the base out" 7 "$(dns_of -b "$P" -s children '(objectClass=*)' | wc -l)"

# --- filters -----------------------------------------------------------------
f() { dns_of -b "$B" "$1" | sed 's/,.*//' | tr '\n' ' ' | sed 's/ $//'; }
expect_eq "equality" "uid=alice" "$(f '(uid=alice)')"
expect_eq "equality is case-insensitive (caseIgnoreMatch)" "uid=alice" "$(f '(CN=ALICE ANDERS)')"
expect_eq "equality on a non-ASCII value" "uid=juergen" "$(f '(cn=jürgen müller)')"
expect_eq "equality on a value with an escaped comma" "cn=Smith\\, John,$P" "$(dns_of -b "$B" '(cn=Smith\2C John)')"
expect_eq "equality through a supertype (name)" "uid=alice" "$(f '(name=Ally)')"
expect_eq "equality with an option" "uid=alice" "$(f '(cn;lang-de=alicia)')"
expect_eq "option not carried: no match" "" "$(f '(cn;lang-fr=alicia)')"
expect_eq "objectClass matches subclasses" 6 "$(dns_of -b "$B" '(objectClass=person)' | wc -l)"
expect_eq "substring initial" "uid=alice" "$(f '(cn=Ali*)')"
expect_eq "substring any" "uid=bob" "$(f '(cn=*uil*)')"
expect_eq "substring final" "uid=dave" "$(f '(cn=*dev)')"
expect_eq "substring initial/any/final" "uid=erin" "$(f '(cn=E*n*ng)')"
expect_eq "greater or equal (integerOrderingMatch)" "uid=dave" "$(f '(uidNumber>=1010)')"
expect_eq "less or equal (integerOrderingMatch)" "uid=bob uid=erin" "$(f '(uidNumber<=1007)')"
expect_eq "presence" "uid=dave uid=erin" "$(f '(employeeNumber=*)')"
expect_eq "approx" "uid=bob" "$(f '(sn~=Bilder)')"
expect_eq "extensible with a rule" "uid=alice" "$(f '(cn:caseExactMatch:=Ally)')"
expect_eq "extensible with a rule: exact case differs" "" "$(f '(cn:caseExactMatch:=ally)')"
expect_eq "extensible dnAttributes" 3 "$(dns_of -b "$B" '(ou:dn:=eng)' | wc -l)"
expect_eq "and" "uid=alice" "$(f '(&(title=Engineer)(mail=*))')"
expect_eq "or" "uid=alice uid=bob" "$(f '(|(uid=alice)(uid=bob))')"
expect_eq "not" "uid=dave uid=erin" "$(f '(&(title=Engineer)(!(uid=alice)))')"
expect_eq "absolute true (&)" 14 "$(admin_search -b "$B" '(&)' 1.1 | grep -c '^dn:')"
expect_eq "absolute false (|)" 0 "$(admin_search -b "$B" '(|)' 1.1 | grep -c '^dn:')"
expect_eq "unknown attribute: undefined, no match" "" "$(f '(noSuchAttr=x)')"
expect_eq "not of undefined stays undefined" "" "$(f '(!(noSuchAttr=x))')"

# --- attribute selection -------------------------------------------------------
A="uid=alice,$P"
expect_eq "named attributes, case-insensitive, unknown ignored" "dn: $A
mail: alice@example.com
sn: Anders" "$(search -b "$A" -s base '(objectClass=*)' SN Mail unknownThing | sorted_ldif)"
expect_eq "supertype selects its subtypes (name)" "dn: $A
cn: Alice Anders
cn: Ally
cn;lang-de: Alicia
givenName: Alice
sn: Anders
title: Engineer" "$(search -b "$A" -s base '(objectClass=*)' name | sorted_ldif)"
expect_eq "an option selects only tagged values" "dn: $A
cn;lang-de: Alicia" "$(search -b "$A" -s base '(objectClass=*)' 'cn;lang-de' | sorted_ldif)"
expect_eq "1.1: no attributes" "dn: $A" "$(search -b "$A" -s base '(objectClass=*)' 1.1)"
expect_eq "typesOnly" "dn: $A
mail:
uid:" "$(search -A -b "$A" -s base '(objectClass=*)' uid mail | sorted_ldif)"
expect_eq "'*' has no operational attributes" "" \
  "$(search -b "$A" -s base '(objectClass=*)' '*' | grep -i -E '^(entryUUID|createTimestamp):')"
expect_eq "'+': every operational attribute, stored and computed" \
  "createTimestamp creatorsName entryCSN entryDN entryUUID hasSubordinates modifiersName modifyTimestamp numSubordinates structuralObjectClass subschemaSubentry" \
  "$(search -A -b "$A" -s base '(objectClass=*)' '+' | sed -n 's/^\([A-Za-z]*\):.*/\1/p' | grep -v '^dn$' | LC_ALL=C sort -f | tr '\n' ' ' | sed 's/ $//')"
expect_eq "'+' has no user attributes" "" "$(search -b "$A" -s base '(objectClass=*)' '+' | grep -E '^(cn|uid):')"
expect_eq "computed attributes by name" "dn: $P
entryDN: $P
hasSubordinates: TRUE
numSubordinates: 5
subschemaSubentry: cn=Subschema" \
  "$(search -b "$P" -s base '(objectClass=*)' entryDN hasSubordinates numSubordinates subschemaSubentry | sorted_ldif)"
expect_eq "structuralObjectClass and creatorsName" "dn: $A
creatorsName: $ADMIN_DN
structuralObjectClass: inetOrgPerson" \
  "$(search -b "$A" -s base '(objectClass=*)' structuralObjectClass creatorsName | sorted_ldif)"
expect_eq "@objectClass selects the class's attributes" "dn: cn=printer1,ou=devices,$B
cn: printer1
objectClass: device
serialNumber: SN-0001" "$(search -b "cn=printer1,ou=devices,$B" -s base '(objectClass=*)' @device | sorted_ldif)"

# --- limits ----------------------------------------------------------------------
rc=0; out=$(search -b "$B" -z 4 '(objectClass=*)' 1.1) || rc=$?
expect_eq "sizelimit 4: sizeLimitExceeded" 4 "$rc"
expect_eq "sizelimit 4: exactly 4 entries" 4 "$(grep -c '^dn:' <<<"$out")"
rc=0; out=$(search -b "$B" '(objectClass=*)' 1.1) || rc=$?
expect_eq "configured sizelimit 10 applies to anonymous" "4 10" "$rc $(grep -c '^dn:' <<<"$out")"
rc=0; out=$(search -b "$B" -z 12 '(objectClass=*)' 1.1) || rc=$?
expect_eq "the lower limit wins over the request" "4 10" "$rc $(grep -c '^dn:' <<<"$out")"
rc=0; out=$(admin_search -b "$B" '(objectClass=*)' 1.1) || rc=$?
expect_eq "rootdn escapes the configured limit" "0 14" "$rc $(grep -c '^dn:' <<<"$out")"
rc=0; out=$(admin_search -b "$B" -z 3 '(objectClass=*)' 1.1) || rc=$?
expect_eq "rootdn still gets the limit it asks for" "4 3" "$rc $(grep -c '^dn:' <<<"$out")"

# --- missing bases ---------------------------------------------------------------
rc=0; out=$(search -b "uid=nobody,ou=eng,$P" -s base) || rc=$?
expect_eq "missing base: noSuchObject" 32 "$rc"
case "$out" in *"Matched DN: ou=eng,$P"*) ok "noSuchObject names the matched DN";;
  *) fail "noSuchObject names the matched DN" "$out";; esac
rc=0; out=$(search -b "dc=other,dc=org" -s base) || rc=$?
expect_eq "outside every suffix: noSuchObject" 32 "$rc"
case "$out" in *matchedDN*) fail "outside every suffix: no matchedDN" "$out";; *) ok "outside every suffix: no matchedDN";; esac
expect_eq "bad base DN: invalidDNSyntax" 34 "$(ldap_rc ldapsearch -x -H "$URI" -b 'not a dn')"

# --- cn=Subschema -------------------------------------------------------------------
out=$(search -b cn=Subschema -s base '(objectClass=subschema)' objectClasses attributeTypes)
case "$out" in *"objectClasses: ( 2.16.840.1.113730.3.2.2 NAME 'inetOrgPerson'"*) ok "cn=Subschema publishes objectClasses";;
  *) fail "cn=Subschema publishes objectClasses" "$(head -5 <<<"$out")";; esac
case "$out" in *"attributeTypes: ( 1.3.6.1.1.16.4 NAME 'entryUUID'"*) ok "cn=Subschema publishes attributeTypes";;
  *) fail "cn=Subschema publishes attributeTypes" "$(head -5 <<<"$out")";; esac
expect_eq "cn=Subschema found by subschemaSubentry's spelling" "dn: cn=Subschema" \
  "$(search -b 'CN=SUBSCHEMA' -s base '(objectClass=*)' 1.1)"
expect_eq "cn=Subschema: a non-matching filter returns nothing" "" \
  "$(search -b cn=Subschema -s base '(objectClass=person)' 1.1)"

# --- the access log ---------------------------------------------------------------
search -b "$B" '(description=Everyone)' 1.1 >/dev/null
grep -Eq 'conn=[0-9]+ op=[0-9]+ SRCH unindexed attr=description$' "$TMP/lumend.log" &&
  ok "unindexed search noted with its attribute" ||
  fail "unindexed search noted with its attribute" "$(grep SRCH "$TMP/lumend.log" | tail -3)"
search -b "$B" '(uid=alice)' 1.1 >/dev/null
last_op=$(grep 'SRCH base=.* filter="(uid=alice)"' "$TMP/lumend.log" | tail -1 | sed 's/.*\(conn=[0-9]* op=[0-9]*\).*/\1/')
grep -q "$last_op SRCH unindexed" "$TMP/lumend.log" && fail "indexed search has no unindexed note" ||
  ok "indexed search has no unindexed note"
grep -q 'SRCH attr=SN Mail unknownThing' "$TMP/lumend.log" && ok "access log SRCH attr line" ||
  fail "access log SRCH attr line"

# --- a large result streams (several flushes) ---------------------------------------
"$PYTHON" - "$TMP/many.ldif" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("dn: ou=many,dc=example,dc=com\nobjectClass: organizationalUnit\nou: many\n\n")
    for i in range(1500):
        f.write("dn: cn=user%04d,ou=many,dc=example,dc=com\nobjectClass: person\ncn: user%04d\nsn: %s\n\n"
                % (i, i, "x" * 400))
PY
lumen_load_tree "$TMP/many.ldif"
rc=0; out=$(admin_search -b "ou=many,$B" -s one '(objectClass=person)' cn sn) || rc=$?
expect_eq "large result: every entry, in order" "0 1500 cn: user0000 cn: user1499" \
  "$rc $(grep -c '^dn:' <<<"$out") $(grep '^cn:' <<<"$out" | sed -n '1p;$p' | tr '\n' ' ' | sed 's/ $//')"

lumen_stop
lumen_finish
