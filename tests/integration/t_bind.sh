#!/usr/bin/env bash
# Bind and WhoAmI through ldapwhoami: anonymous, rootdn, wrong password,
# unknown DN, unauthenticated bind, and a hashed rootpw.
. "$(dirname "$0")/lib.sh"
lumen_setup
lumen_start

expect_eq "anonymous whoami" "anonymous" "$(ldapwhoami -x -H "$URI" 2>&1)"
expect_eq "rootdn whoami" "dn:cn=admin,dc=example,dc=com" \
  "$(ldapwhoami -x -H "$URI" -D cn=admin,dc=example,dc=com -w secret 2>&1)"
expect_eq "rootdn spelled differently" "dn:cn=admin,dc=example,dc=com" \
  "$(ldapwhoami -x -H "$URI" -D 'CN=Admin, DC=Example,DC=COM' -w secret 2>&1)"
rc=0; wrong=$(ldapwhoami -x -H "$URI" -D cn=admin,dc=example,dc=com -w wrong 2>&1) || rc=$?
expect_eq "wrong password: 49" 49 "$rc"
rc=0; unknown=$(ldapwhoami -x -H "$URI" -D cn=nobody,dc=example,dc=com -w secret 2>&1) || rc=$?
expect_eq "unknown DN: 49" 49 "$rc"
expect_eq "unknown DN and wrong password answer alike" "$wrong" "$unknown"
rc=0; ldapwhoami -x -H "$URI" -D cn=admin,dc=example,dc=com -w '' >/dev/null 2>&1 || rc=$?
expect_eq "DN with empty password: unwillingToPerform" 53 "$rc"
rc=0; ldapwhoami -x -H "$URI" -D 'not a dn' -w secret >/dev/null 2>&1 || rc=$?
expect_eq "bad bind DN: invalidDNSyntax" 34 "$rc"
if grep -q 'secret' "$TMP/lumend.log"; then fail "log never shows passwords"; else ok "log never shows passwords"; fi
grep -q 'BIND dn="cn=admin,dc=example,dc=com" mech=SIMPLE ssf=0' "$TMP/lumend.log" &&
  ok "access log BIND mech line" || fail "access log BIND mech line"
lumen_stop

# A second server: {SSHA} rootpw and allow bind_anon_dn.
lumen_setup "allow bind_anon_dn"
sed -i 's/^rootpw secret$/rootpw {SSHA}UgCJjM+VJJYduihDuk0aPpDtY9RzYWx0eQ==/' "$TMP/slapd.conf"
lumen_start
expect_eq "{SSHA} rootpw" "dn:cn=admin,dc=example,dc=com" \
  "$(ldapwhoami -x -H "$URI" -D cn=admin,dc=example,dc=com -w secret 2>&1)"
rc=0; ldapwhoami -x -H "$URI" -D cn=admin,dc=example,dc=com -w secreT >/dev/null 2>&1 || rc=$?
expect_eq "{SSHA} wrong password: 49" 49 "$rc"
expect_eq "allow bind_anon_dn: DN without password is anonymous" "anonymous" \
  "$(ldapwhoami -x -H "$URI" -D cn=admin,dc=example,dc=com -w '' 2>&1)"
lumen_stop
lumen_finish
