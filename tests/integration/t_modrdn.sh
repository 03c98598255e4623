#!/usr/bin/env bash
# Modify DN through ldapmodrdn: rename with and without deleteoldrdn,
# newSuperior, moving a subtree (searches then show the new DNs), and the
# error codes.
. "$(dirname "$0")/lib.sh"
lumen_setup
lumen_start
lumen_load_tree
B="dc=example,dc=com"
P="ou=people,$B"
AUTH=(-x -H "$URI" -D "$ADMIN_DN" -w "$ADMIN_PW")
modrdn() { ldap_rc ldapmodrdn "${AUTH[@]}" "$@"; }
show() { ldapsearch -x -H "$URI" -LLL -o ldif-wrap=no -b "$1" -s base '(objectClass=*)' "${@:2}" 2>&1 | sorted_ldif; }

expect_eq "rename keeping the old RDN value" 0 "$(modrdn "uid=alice,$P" uid=alicia)"
expect_eq "old and new RDN values both kept" "dn: uid=alicia,$P
uid: alice
uid: alicia" "$(show "uid=alicia,$P" uid)"
expect_eq "old DN is gone" 32 "$(ldap_rc ldapsearch -x -H "$URI" -b "uid=alice,$P" -s base)"
expect_eq "rename deleting the old RDN value" 0 "$(modrdn -r "uid=alicia,$P" uid=ally)"
expect_eq "the old RDN value (alicia) removed, the earlier one kept" "dn: uid=ally,$P
uid: alice
uid: ally" "$(show "uid=ally,$P" uid)"
expect_eq "bind follows the rename" "dn:uid=ally,$P" "$(ldapwhoami -x -H "$URI" -D "uid=ally,$P" -w alice-secret 2>&1)"
expect_eq "rename to an escaped RDN" 0 "$(modrdn -r "uid=ally,$P" 'cn=Anders\, Alice')"
expect_eq "escaped RDN readable" "dn: cn=Anders\\, Alice,$P
cn: Alice Anders
cn: Ally
cn: Anders, Alice
cn;lang-de: Alicia" "$(show "cn=Anders\\, Alice,$P" cn)"

# --- move a subtree -------------------------------------------------------------------
expect_eq "move ou=eng below ou=groups with a new RDN" 0 \
  "$(modrdn -r -s "ou=groups,$B" "ou=eng,$P" ou=engineering)"
expect_eq "the subtree shows its new DNs" "ou=engineering,ou=groups,$B
uid=dave,ou=engineering,ou=groups,$B
uid=erin,ou=engineering,ou=groups,$B" "$(dns_of -b "ou=engineering,ou=groups,$B" '(objectClass=*)')"
expect_eq "nothing left at the old place" 32 "$(ldap_rc ldapsearch -x -H "$URI" -b "uid=dave,ou=eng,$P" -s base)"
expect_eq "filters find moved entries under their new DNs" "uid=dave,ou=engineering,ou=groups,$B
uid=erin,ou=engineering,ou=groups,$B" "$(dns_of -b "$B" '(title=Engineer)' | grep -v '^cn=Anders')"
expect_eq "entryDN follows the move" "dn: uid=erin,ou=engineering,ou=groups,$B
entryDN: uid=erin,ou=engineering,ou=groups,$B" "$(show "uid=erin,ou=engineering,ou=groups,$B" entryDN)"
expect_eq "old parent's count" "dn: $P
numSubordinates: 4" "$(show "$P" numSubordinates)"
expect_eq "move back keeping the RDN" 0 "$(modrdn -s "$P" "ou=engineering,ou=groups,$B" ou=engineering)"
expect_eq "moved back" 3 "$(dns_of -b "ou=engineering,$P" '(objectClass=*)' | wc -l)"

# --- errors ----------------------------------------------------------------------------
expect_eq "target exists: entryAlreadyExists" 68 "$(modrdn "uid=bob,$P" uid=juergen)"
expect_eq "missing entry: noSuchObject" 32 "$(modrdn "uid=nobody,$P" uid=x)"
expect_eq "missing new superior: noSuchObject" 32 "$(modrdn -s "ou=nowhere,$B" "uid=bob,$P" uid=bob)"
expect_eq "move below itself: unwillingToPerform" 53 "$(modrdn -s "uid=dave,ou=engineering,$P" "ou=engineering,$P" ou=x)"
expect_eq "new superior outside the database: affectsMultipleDSAs" 71 "$(modrdn -s "dc=other,dc=org" "uid=bob,$P" uid=bob)"
expect_eq "bad new superior DN: invalidDNSyntax" 34 "$(modrdn -s "=,bad" "uid=bob,$P" uid=bob)"
expect_eq "bad new RDN: invalidDNSyntax" 34 "$(modrdn "uid=bob,$P" 'nonsense')"
expect_eq "new RDN of an attribute the class forbids: objectClassViolation" 65 "$(modrdn "cn=printer1,ou=devices,$B" mail=x@example.com)"
expect_eq "the suffix entry cannot be renamed: unwillingToPerform" 53 "$(modrdn "$B" dc=other)"

grep -Eq "conn=[0-9]+ op=[0-9]+ MODRDN dn=\"uid=alice,$P\"" "$TMP/lumend.log" && ok "access log MODRDN line" ||
  fail "access log MODRDN line"
lumen_stop
lumen_finish
