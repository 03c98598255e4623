#!/usr/bin/env bash
# -u/-g privilege drop: lumend started as root binds its listener, then runs
# as nobody:nogroup (checked in /proc/PID/status: real, effective, saved and
# file-system IDs, and no supplementary group left from root), still serves
# and writes its database; unknown names and non-root switches are refused.
# Skipped (passes) when not run as root.
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ]; then
  echo "  skip $TEST_NAME: needs root"
  echo "$TEST_NAME: 0 passed, 0 failed"
  exit 0
fi
lumen_setup
NOBODY_UID=$(id -u nobody)
NOGROUP_GID=$(getent group nogroup | cut -d: -f3)
# The database, pidfile and sanitizer logs must be writable as nobody.
chown -R nobody:nogroup "$TMP"
chmod 0755 "$TMP"

start_as() {   # start_as ARGS... — lumend with extra arguments, wait until it answers
  "$LUMEND" -f "$TMP/slapd.conf" -h "$URI/" -d stats "$@" 2> "$TMP/lumend.log" &
  LUMEN_PID=$!
  for _ in $(seq 1 100); do
    ldapsearch -x -H "$URI" -b "" -s base -LLL 1.1 >/dev/null 2>&1 && return 0
    kill -0 "$LUMEN_PID" 2>/dev/null || break
    sleep 0.1
  done
  return 1
}

if start_as -u nobody -g nogroup; then ok "lumend starts with -u nobody -g nogroup"; else
  fail "lumend starts with -u nobody -g nogroup" "$(cat "$TMP/lumend.log")"; lumen_finish; fi
status=$(cat "/proc/$LUMEN_PID/status")
expect_eq "Uid: real, effective, saved, fs" "Uid:	$NOBODY_UID	$NOBODY_UID	$NOBODY_UID	$NOBODY_UID" \
  "$(grep '^Uid:' <<< "$status")"
expect_eq "Gid: real, effective, saved, fs" "Gid:	$NOGROUP_GID	$NOGROUP_GID	$NOGROUP_GID	$NOGROUP_GID" \
  "$(grep '^Gid:' <<< "$status")"
groups=$(grep '^Groups:' <<< "$status" | cut -f2 | tr -d ' ')
if [ -z "$groups" ] || [ "$groups" = "$NOGROUP_GID" ]; then ok "no supplementary group of root kept"; else
  fail "no supplementary group of root kept" "$groups"; fi
# Every thread, not just the main one (set*id applies process-wide).
bad=$(grep -L "^Uid:	$NOBODY_UID	" /proc/"$LUMEN_PID"/task/*/status 2>/dev/null)
expect_eq "every thread runs as nobody" "" "$bad"
check "still serves after the drop" ldapsearch -x -H "$URI" -b "" -s base -LLL 1.1
check "writes its database as nobody" ldapadd -x -H "$URI" -D "$ADMIN_DN" -w "$ADMIN_PW" <<'LDIF'
dn: dc=example,dc=com
objectClass: dcObject
objectClass: organization
dc: example
o: Example
LDIF
expect_eq "database files belong to nobody" "nobody" "$(stat -c %U "$TMP/db/data.mdb")"
lumen_stop

# -u alone takes the user's primary group.
if start_as -u nobody; then
  expect_eq "-u alone: primary group" "Gid:	$NOGROUP_GID	$NOGROUP_GID	$NOGROUP_GID	$NOGROUP_GID" \
    "$(grep '^Gid:' "/proc/$LUMEN_PID/status")"
  lumen_stop
else
  fail "lumend starts with -u nobody" "$(cat "$TMP/lumend.log")"
fi

# refusals: exit 1 with a message naming the problem, nothing left running
expect_refusal() {   # expect_refusal NAME MESSAGE-PART RUNNER...
  local name=$1 part=$2; shift 2
  local out rc=0
  out=$("$@" "$LUMEND" -f "$TMP/slapd.conf" -h "$URI/" -d stats 2>&1) || rc=$?
  if [ "$rc" = 1 ] && [[ "$out" == *"$part"* ]]; then ok "$name"; else fail "$name" "exit $rc: $out"; fi
}
expect_refusal "unknown user: message" "no such user" bash -c '"$0" -u no-such-user-xyz "$@"'
expect_refusal "unknown group: message" "no such group" bash -c '"$0" -u nobody -g no-such-group-xyz "$@"'
expect_refusal "non-root cannot switch" "only root" \
  setpriv --reuid nobody --regid nogroup --clear-groups bash -c '"$0" -u root "$@"'
lumen_finish
