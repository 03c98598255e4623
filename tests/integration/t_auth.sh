#!/usr/bin/env bash
# Authentication rules and Password Modify with real clients: ldappasswd as
# self (an old password given is checked; without one, as slapd) and as the rootdn (generated
# password), stored hashed with password-hash; password-allow-cleartext off;
# SASL EXTERNAL over ldapi (ldapwhoami/ldapsearch -Y EXTERNAL, authz-regexp),
# EXTERNAL over TCP (48), other mechanisms (7); security simple_bind= (13).
. "$(dirname "$0")/lib.sh"
P="ou=people,dc=example,dc=com"
ALICE="uid=alice,$P"; BOB="uid=bob,$P"
# The LDAP result code ldappasswd reports (its exit status is 1 for all).
pw_code() {
  local out rc=0
  out=$(ldappasswd "$@" 2>&1) || rc=$?
  if [ $rc -eq 0 ]; then echo 0; else sed -n 's/^Result: .*(\([0-9]*\))$/\1/p' <<< "$out" | head -1; fi
}
# The result code of a raw SASL bind (python, so the client library cannot refuse first).
sasl_code() {
  (cd "$ROOT/tests/integration" && "$PYTHON" -c '
import socket, sys
from lumen_harness import bind_sasl, read_responses
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(bind_sasl(1, sys.argv[2]))
r, _ = read_responses(s, 1)
print(r[0].code if r else "none")' "$PORT" "$1")
}
# The root DSE obeys the rules too (as slapd): let anyone read it.
lumen_setup "access to dn.base=\"\" by * read
access to attrs=userPassword by self write by anonymous auth by * none
access to * by users read by * none
password-hash {SSHA256}
authz-regexp \"gidNumber=$(id -g)\\\\+uidNumber=$(id -u),cn=peercred,cn=external,cn=auth\" \"$ALICE\""
LDAPI="$TMP/ldapi"
LDAPI_URI="ldapi://$(printf %s "$LDAPI" | sed 's|/|%2F|g')"
"$LUMEND" -f "$TMP/slapd.conf" -h "$URI/ $LDAPI_URI/" -d stats 2> "$TMP/lumend.log" &
LUMEN_PID=$!
for _ in $(seq 1 100); do ldapsearch -x -H "$URI" -b "" -s base 1.1 >/dev/null 2>&1 && break; sleep 0.1; done
lumen_load_tree

# --- Password Modify -----------------------------------------------------
expect_eq "rootdn sets bob's password" 0 \
  "$(pw_code -x -H "$URI" -D "$ADMIN_DN" -w "$ADMIN_PW" -s bob-1 "$BOB")"
expect_eq "bob binds with it" "dn:$BOB" "$(ldapwhoami -x -H "$URI" -D "$BOB" -w bob-1 2>&1)"
stored=$(ldapsearch -x -H "$URI" -LLL -o ldif-wrap=no -D "$ADMIN_DN" -w "$ADMIN_PW" -b "$BOB" -s base userPassword |
  sed -n 's/^userPassword:: //p' | base64 -d)
case "$stored" in "{SSHA256}"*) ok "stored hashed with password-hash";; *) fail "stored hashed with password-hash" "$stored";; esac
expect_eq "self change with a wrong old password: unwillingToPerform (as slapd)" 53 \
  "$(pw_code -x -H "$URI" -D "$BOB" -w bob-1 -a wrong -s bob-2)"
expect_eq "the wrong old password changed nothing" "dn:$BOB" \
  "$(ldapwhoami -x -H "$URI" -D "$BOB" -w bob-1 2>&1)"
expect_eq "self change without the old password (as slapd; pwdSafeModify requires it)" 0 \
  "$(pw_code -x -H "$URI" -D "$BOB" -w bob-1 -s bob-1b)"
expect_eq "self change with the old password" 0 \
  "$(pw_code -x -H "$URI" -D "$BOB" -w bob-1b -a bob-1b -s bob-2)"
expect_eq "the new password binds" "dn:$BOB" "$(ldapwhoami -x -H "$URI" -D "$BOB" -w bob-2 2>&1)"
expect_eq "the old one does not" 49 "$(ldap_rc ldapwhoami -x -H "$URI" -D "$BOB" -w bob-1)"
expect_eq "a user cannot change another's password" 50 \
  "$(pw_code -x -H "$URI" -D "$BOB" -w bob-2 -a alice-secret -s x "$ALICE")"
expect_eq "anonymous cannot change a password" 53 "$(pw_code -x -H "$URI" -s x)"
expect_eq "unknown identity: noSuchObject" 32 \
  "$(pw_code -x -H "$URI" -D "$ADMIN_DN" -w "$ADMIN_PW" -s x "uid=nobody,$P")"
expect_eq "the rootdn's own password: unwillingToPerform" 53 \
  "$(pw_code -x -H "$URI" -D "$ADMIN_DN" -w "$ADMIN_PW" -s x "$ADMIN_DN")"
gen=$(ldappasswd -x -H "$URI" -D "$ADMIN_DN" -w "$ADMIN_PW" "$BOB" 2>&1 | sed -n 's/^New password: //p')
[ ${#gen} -ge 12 ] && ok "generated password returned" || fail "generated password returned" "$gen"
expect_eq "the generated password binds" "dn:$BOB" "$(ldapwhoami -x -H "$URI" -D "$BOB" -w "$gen" 2>&1)"

# --- SASL ------------------------------------------------------------------
expect_eq "EXTERNAL over ldapi: mapped by authz-regexp" "dn:$ALICE" \
  "$(ldapwhoami -Q -Y EXTERNAL -H "$LDAPI_URI" 2>&1)"
expect_eq "ldapsearch -Y EXTERNAL reads as that user" "$BOB" \
  "$(ldapsearch -Q -Y EXTERNAL -H "$LDAPI_URI" -LLL -b "$BOB" -s base 1.1 2>/dev/null | sed -n 's/^dn: //p')"
expect_eq "EXTERNAL over TCP without a certificate: inappropriateAuthentication" 48 \
  "$(sasl_code EXTERNAL)"
expect_eq "another mechanism: authMethodNotSupported" 7 \
  "$(sasl_code PLAIN)"
expect_eq "supportedSASLMechanisms lists EXTERNAL" "supportedSASLMechanisms: EXTERNAL" \
  "$(ldapsearch -x -H "$URI" -LLL -b "" -s base supportedSASLMechanisms | grep supportedSASL)"
grep -q 'mech=EXTERNAL ssf=71' "$TMP/lumend.log" && ok "log: BIND mech=EXTERNAL ssf=71" ||
  fail "log: BIND mech=EXTERNAL ssf=71"
lumen_stop
rm -rf "$TMP"

# --- password-allow-cleartext off, security simple_bind --------------------
lumen_setup "password-allow-cleartext off
security simple_bind=64"
LDAPI="$TMP/ldapi"
LDAPI_URI="ldapi://$(printf %s "$LDAPI" | sed 's|/|%2F|g')"
"$LUMEND" -f "$TMP/slapd.conf" -h "$URI/ $LDAPI_URI/" -d stats 2> "$TMP/lumend.log" &
LUMEN_PID=$!
for _ in $(seq 1 100); do ldapsearch -x -H "$URI" -b "" -s base 1.1 >/dev/null 2>&1 && break; sleep 0.1; done
out=$(ldapadd -x -H "$LDAPI_URI" -D "$ADMIN_DN" -w "$ADMIN_PW" -f "$DATA/tree.ldif" 2>&1) &&
  ok "rootdn binds over ldapi (local counts as protected)" || fail "rootdn binds over ldapi" "$out"
expect_eq "simple bind over plain TCP: confidentialityRequired" 13 \
  "$(ldap_rc ldapwhoami -x -H "$URI" -D "$ADMIN_DN" -w "$ADMIN_PW")"
expect_eq "Password Modify over plain TCP: confidentialityRequired" 13 \
  "$(pw_code -x -H "$URI" -s x "$BOB")"
ldapmodify -x -H "$LDAPI_URI" -D "$ADMIN_DN" -w "$ADMIN_PW" >/dev/null 2>&1 <<< "dn: $BOB
changetype: modify
replace: userPassword
userPassword: plain-pw"
expect_eq "cleartext userPassword refused when off" 49 \
  "$(ldap_rc ldapwhoami -x -H "$LDAPI_URI" -D "$BOB" -w plain-pw)"
expect_eq "hashed userPassword still accepted" "dn:$ALICE" \
  "$(ldapwhoami -x -H "$LDAPI_URI" -D "$ALICE" -w alice-secret 2>&1)"
lumen_stop
lumen_finish
