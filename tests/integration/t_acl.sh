#!/usr/bin/env bash
# Access control with real clients: for each WHAT kind (dn.base, dn.subtree,
# dn.regex with $1, attrs=, filter=, *) and WHO kind (self, users, anonymous,
# dn.exact, group=, *) an allowed and a denied case; the filter-oracle rule;
# noSuchObject vs insufficientAccessRights; anonymous writes denied; the
# default policy without rules (everyone reads, only the rootdn writes).
. "$(dirname "$0")/lib.sh"
P="ou=people,dc=example,dc=com"
G="ou=groups,dc=example,dc=com"
ALICE="uid=alice,$P"; BOB="uid=bob,$P"; DAVE="uid=dave,ou=eng,$P"

# --- no access directive: everyone reads, only the rootdn writes ---------
lumen_setup
lumen_start
lumen_load_tree
expect_eq "no rules: anonymous reads" "$ALICE" "$(dns_of -b "$ALICE" -s base)"
expect_eq "no rules: anonymous write denied" 50 \
  "$(ldap_rc ldapmodify -x -H "$URI" <<< "dn: $ALICE
changetype: modify
replace: title
title: x")"
expect_eq "no rules: a user's write denied" 50 \
  "$(ldap_rc ldapmodify -x -H "$URI" -D "$ALICE" -w alice-secret <<< "dn: $ALICE
changetype: modify
replace: title
title: x")"
expect_eq "no rules: anonymous delete denied" 50 "$(ldap_rc ldapdelete -x -H "$URI" "cn=printer1,ou=devices,dc=example,dc=com")"
expect_eq "no rules: rootdn writes" 0 \
  "$(ldap_rc ldapmodify -x -H "$URI" -D "$ADMIN_DN" -w "$ADMIN_PW" <<< "dn: $ALICE
changetype: modify
replace: title
title: Boss")"
lumen_stop
rm -rf "$TMP"

# --- a policy ------------------------------------------------------------
lumen_setup 'access to attrs=userPassword by self write by anonymous auth by * none
access to dn.base="" by * read
access to dn.base="cn=Subschema" by * read
access to dn.subtree="ou=groups,dc=example,dc=com" by group="cn=admins,ou=groups,dc=example,dc=com" write by users read by * none
access to dn.regex="^uid=([^,]+),ou=people,dc=example,dc=com$" attrs=title by dn.exact="uid=$1,ou=people,dc=example,dc=com" write by users read
access to attrs=mail by users search by * none
access to filter=(objectClass=device) by users read by anonymous disclose
access to dn.base="uid=bob,ou=people,dc=example,dc=com" by dn.exact="uid=alice,ou=people,dc=example,dc=com" write by users read
access to * by self write by users read by * none'
lumen_start
lumen_load_tree
# Give bob and dave passwords (Password Modify as the rootdn).
ldappasswd -x -H "$URI" -D "$ADMIN_DN" -w "$ADMIN_PW" -s bob-pw "$BOB" >/dev/null 2>&1
ldappasswd -x -H "$URI" -D "$ADMIN_DN" -w "$ADMIN_PW" -s dave-pw "$DAVE" >/dev/null 2>&1
AS_ALICE=(-D "$ALICE" -w alice-secret)
AS_BOB=(-D "$BOB" -w bob-pw)
AS_DAVE=(-D "$DAVE" -w dave-pw)
mod() { # mod WHO... -- DN ATTR VALUE → exit code
  local args=(); while [ "$1" != "--" ]; do args+=("$1"); shift; done; shift
  ldap_rc ldapmodify -x -H "$URI" "${args[@]}" <<< "dn: $1
changetype: modify
replace: $2
$2: $3"
}
val() { # val WHO... -- DN ATTR → the values read
  local args=(); while [ "$1" != "--" ]; do args+=("$1"); shift; done; shift
  ldapsearch -x -H "$URI" -LLL -o ldif-wrap=no "${args[@]}" -b "$1" -s base "$2" 2>/dev/null |
    sed -n "s/^$2: //p"
}

# WHO anonymous (auth) / self (write) on attrs=userPassword.
check "anonymous may bind (auth)" ldapwhoami -x -H "$URI" "${AS_ALICE[@]}"
expect_eq "anonymous cannot read userPassword" "" "$(val -- "$ALICE" userPassword)"
expect_eq "a user cannot read another's userPassword" "" "$(val "${AS_BOB[@]}" -- "$ALICE" userPassword)"
ldapsearch -x -H "$URI" -LLL "${AS_ALICE[@]}" -b "$ALICE" -s base userPassword 2>/dev/null | grep -q "^userPassword" && ok "self reads its own userPassword" ||
  fail "self reads its own userPassword"
expect_eq "self writes its own userPassword" 0 "$(mod "${AS_BOB[@]}" -- "$BOB" userPassword bob-pw2)"
AS_BOB=(-D "$BOB" -w bob-pw2)
expect_eq "a user cannot write another's userPassword" 50 "$(mod "${AS_BOB[@]}" -- "$DAVE" userPassword x)"

# WHAT dn.base="" / cn=Subschema: readable by anyone.
[ -n "$(ldapsearch -x -H "$URI" -LLL -b "" -s base namingContexts 2>/dev/null | grep namingContexts)" ] &&
  ok "root DSE readable anonymously" || fail "root DSE readable anonymously"
[ -n "$(ldapsearch -x -H "$URI" -LLL -b cn=Subschema -s base objectClasses 2>/dev/null | grep -i objectClasses)" ] &&
  ok "cn=Subschema readable anonymously" || fail "cn=Subschema readable anonymously"

# WHAT * with WHO users / anonymous / self.
expect_eq "users read entries" "$DAVE" "$(dns_of "${AS_BOB[@]}" -b "$DAVE" -s base)"
expect_eq "anonymous reads nothing" "" "$(dns_of -b "$P" -s sub)"
expect_eq "anonymous search of a hidden base: noSuchObject" 32 "$(ldap_rc ldapsearch -x -H "$URI" -b "$ALICE" -s base)"
expect_eq "self writes its own entry" 0 "$(mod "${AS_DAVE[@]}" -- "$DAVE" description mine)"
expect_eq "users cannot write others' entries" 50 "$(mod "${AS_DAVE[@]}" -- "uid=erin,ou=eng,$P" description x)"
expect_eq "anonymous write: noSuchObject (nothing disclosed)" 32 "$(mod -- "$DAVE" description x)"
expect_eq "anonymous add denied" 32 "$(ldap_rc ldapadd -x -H "$URI" <<< "dn: cn=x,ou=devices,dc=example,dc=com
objectClass: device
cn: x")"
expect_eq "anonymous delete of a disclosed entry: insufficientAccessRights" 50 "$(ldap_rc ldapdelete -x -H "$URI" "cn=printer1,ou=devices,dc=example,dc=com")"

# WHAT dn.subtree + WHO group=.
expect_eq "group member writes in ou=groups" 0 "$(mod "${AS_ALICE[@]}" -- "cn=staff,$G" description by-alice)"
expect_eq "non-member cannot write in ou=groups" 50 "$(mod "${AS_BOB[@]}" -- "cn=staff,$G" description by-bob)"
expect_eq "group member adds below ou=groups" 0 "$(ldap_rc ldapadd -x -H "$URI" "${AS_ALICE[@]}" <<< "dn: cn=new,$G
objectClass: groupOfNames
cn: new
member: $ALICE")"
expect_eq "non-member cannot add below ou=groups" 50 "$(ldap_rc ldapadd -x -H "$URI" "${AS_BOB[@]}" <<< "dn: cn=new2,$G
objectClass: groupOfNames
cn: new2
member: $ALICE")"
expect_eq "non-member cannot delete in ou=groups" 50 "$(ldap_rc ldapdelete -x -H "$URI" "${AS_BOB[@]}" "cn=new,$G")"
expect_eq "group member deletes in ou=groups" 0 "$(ldap_rc ldapdelete -x -H "$URI" "${AS_ALICE[@]}" "cn=new,$G")"

# WHAT dn.regex with $1 + WHO dn.exact (attrs=title).
expect_eq "dn.regex \$1: own title writable" 0 "$(mod "${AS_BOB[@]}" -- "$BOB" title Builder2)"
expect_eq "dn.regex \$1: another's title not writable" 50 "$(mod "${AS_BOB[@]}" -- "$ALICE" title x)"

# WHAT dn.base + WHO dn.exact.
expect_eq "dn.exact writer may write bob" 0 "$(mod "${AS_ALICE[@]}" -- "$BOB" description by-alice)"
expect_eq "others may not write bob" 50 "$(mod "${AS_DAVE[@]}" -- "$BOB" description by-dave)"

# attrs=mail by users search: matching works, the value is not returned.
expect_eq "search on mail matches" "$ALICE" "$(dns_of "${AS_BOB[@]}" -b "$P" '(mail=alice@example.com)')"
expect_eq "mail is not returned" "" "$(val "${AS_BOB[@]}" -- "$ALICE" mail)"
expect_eq "compare on another's userPassword denied" 50 \
  "$(ldap_rc ldapcompare -x -H "$URI" "${AS_BOB[@]}" "$ALICE" userPassword:alice-secret)"
expect_eq "compare on a readable attribute" 6 \
  "$(ldap_rc ldapcompare -x -H "$URI" "${AS_BOB[@]}" "$ALICE" sn:Anders)"
expect_eq "anonymous compare: noSuchObject" 32 \
  "$(ldap_rc ldapcompare -x -H "$URI" "$ALICE" sn:Anders)"

# The filter-oracle rule: filters on unreadable/unsearchable attributes
# match nothing extra.
expect_eq "filter on userPassword matches only self (no search right on others)" "$BOB" \
  "$(dns_of "${AS_BOB[@]}" -b "$P" '(userPassword=*)')"
expect_eq "NOT of it matches nothing either" "" \
  "$(dns_of "${AS_BOB[@]}" -b "$P" '(&(uid=alice)(!(userPassword=x)))')"
expect_eq "the rest of an OR still matches" "$ALICE
$BOB" \
  "$(dns_of "${AS_BOB[@]}" -b "$P" '(|(userPassword=*)(uid=alice))')"

# WHAT filter=: devices readable by users, only disclosed to anonymous.
expect_eq "filter= rule: users read devices" "cn=printer1,ou=devices,dc=example,dc=com" \
  "$(dns_of "${AS_BOB[@]}" -b "cn=printer1,ou=devices,dc=example,dc=com" -s base)"
expect_eq "filter= rule: anonymous gets insufficientAccessRights (disclose)" 50 \
  "$(ldap_rc ldapsearch -x -H "$URI" -b "cn=printer1,ou=devices,dc=example,dc=com" -s base)"

# A matchedDN is never disclosed under rules.
out=$(ldapsearch -x -H "$URI" -b "uid=nobody,$P" -s base 2>&1)
case "$out" in *"Matched DN"*) fail "no matchedDN for anonymous" "$out";; *) ok "no matchedDN for anonymous";; esac
lumen_stop
lumen_finish
