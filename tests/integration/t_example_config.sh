#!/usr/bin/env bash
# The shipped slapd.conf.example as `make run` uses it: the example directory
# loads with lumengen + lumenadd, and the access policy it ships holds —
# anonymous clients may only bind (and read the root DSE), users read the
# directory but not others' passwords, and change their own password.
. "$(dirname "$0")/lib.sh"
lumen_setup

# The example config with its paths moved into this test's directory.
sed -e "s|^directory .*|directory $TMP/db|" \
    -e "s|^pidfile .*|pidfile $TMP/lumend.pid|" \
    -e "s|^argsfile .*|argsfile $TMP/lumend.args|" \
    -e "s|^metrics-listen .*|metrics-listen none|" \
    -e "s|^include  *schema/|include $ROOT/schema/|" \
    "$ROOT/slapd.conf.example" > "$TMP/slapd.conf"

check "slapd.conf.example passes lumend -T" "$LUMEND" -T -f "$TMP/slapd.conf"
check "lumengen writes the example directory" \
  "$ROOT/$BUILD/lumengen" -n 300 --groups 10 --password password -o "$TMP/example.ldif"
check "lumenadd loads it" "$ROOT/$BUILD/lumenadd" -f "$TMP/slapd.conf" -l "$TMP/example.ldif"
lumen_start

P="ou=people,dc=example,dc=com"
U7="uid=user.7,$P"
U8="uid=user.8,$P"
as_user7=(-x -H "$URI" -D "$U7" -w password)

expect_eq "anonymous: the root DSE is readable" "namingContexts: dc=example,dc=com" \
  "$(ldapsearch -x -H "$URI" -LLL -b "" -s base namingContexts | sed -n '/^namingContexts/p')"
expect_eq "anonymous: a search of the directory finds nothing (noSuchObject)" 32 \
  "$(ldap_rc ldapsearch -x -H "$URI" -b "$P" '(uid=user.7)' 1.1)"
expect_eq "anonymous: binds as a user (auth on userPassword)" "dn:$U7" \
  "$(ldapwhoami "${as_user7[@]}")"
# Anonymous may not even learn that the parent exists (no disclose access),
# so the refusal is noSuchObject rather than insufficientAccessRights.
expect_eq "anonymous: add refused without disclosing the parent (noSuchObject)" 32 \
  "$(printf 'dn: cn=intruder,dc=example,dc=com\nobjectClass: device\ncn: intruder\n' |
     ldap_rc ldapadd -x -H "$URI")"

expect_eq "user: reads another user's entry" "mail: user.8@example.com" \
  "$(ldapsearch "${as_user7[@]}" -LLL -b "$U8" -s base mail | sed -n '/^mail/p')"
expect_eq "user: another user's userPassword is not returned" "" \
  "$(ldapsearch "${as_user7[@]}" -LLL -b "$U8" -s base userPassword | sed -n '/^userPassword/p')"
expect_eq "user: a filter on another's userPassword finds nothing" "" \
  "$(ldapsearch "${as_user7[@]}" -LLL -b "$P" '(&(uid=user.8)(userPassword=*))' 1.1 | sed -n '/^dn/p')"
expect_eq "user: own userPassword is readable" 1 \
  "$(ldapsearch "${as_user7[@]}" -LLL -b "$U7" -s base userPassword | grep -c '^userPassword')"
expect_eq "user: modifying another user's entry is refused" 50 \
  "$(printf 'dn: %s\nchangetype: modify\nreplace: description\ndescription: x\n' "$U8" |
     ldap_rc ldapmodify "${as_user7[@]}")"
check "user: changes their own password (Password Modify)" \
  ldappasswd "${as_user7[@]}" -a password -s n3w-secret
expect_eq "user: binds with the new password" "dn:$U7" \
  "$(ldapwhoami -x -H "$URI" -D "$U7" -w n3w-secret)"
expect_eq "user: the old password no longer binds" 49 \
  "$(ldap_rc ldapwhoami "${as_user7[@]}")"
expect_eq "rootdn: sees every person" 300 \
  "$(ldapsearch -x -H "$URI" -D "$ADMIN_DN" -w "$ADMIN_PW" -LLL -b "$P" '(objectClass=person)' 1.1 | grep -c '^dn:')"

lumen_stop
lumen_finish
