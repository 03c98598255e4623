#!/usr/bin/env bash
# lumend -T: a good config passes, a bad one fails naming file and line;
# bad listener URLs are refused at start-up.
. "$(dirname "$0")/lib.sh"
lumen_setup

check "-T accepts a good config" "$LUMEND" -T -f "$TMP/slapd.conf"
check "-T accepts slapd.conf.example" bash -c "cd '$ROOT' && '$LUMEND' -T -f slapd.conf.example"

printf 'threads 2\nthreads many\n' > "$TMP/bad.conf"
rc=0; out=$("$LUMEND" -T -f "$TMP/bad.conf" 2>&1) || rc=$?
expect_eq "-T exits 1 on a bad config" 1 "$rc"
case "$out" in *"$TMP/bad.conf:2: threads: expected an integer"*) ok "error names file and line";;
  *) fail "error names file and line" "$out";; esac

printf 'include %s\n' "$TMP/bad.schema" > "$TMP/schema.conf"
printf '# x\nattributetype ( 1.2.3.4 NAME )\n' > "$TMP/bad.schema"
rc=0; out=$("$LUMEND" -T -f "$TMP/schema.conf" 2>&1) || rc=$?
expect_eq "-T exits 1 on a schema error" 1 "$rc"
case "$out" in *"$TMP/bad.schema:2"*) ok "schema error names file and line";;
  *) fail "schema error names file and line" "$out";; esac

printf 'database mdb\nsuffix "not a dn"\n' > "$TMP/suffix.conf"
rc=0; out=$("$LUMEND" -T -f "$TMP/suffix.conf" 2>&1) || rc=$?
expect_eq "-T exits 1 on a bad suffix" 1 "$rc"
case "$out" in *"$TMP/suffix.conf:1"*"suffix"*) ok "bad suffix names the database";;
  *) fail "bad suffix names the database" "$out";; esac

rc=0; out=$("$LUMEND" -f "$TMP/slapd.conf" -h "ldaps://127.0.0.1:$PORT/" -d 0 2>&1) || rc=$?
expect_eq "ldaps URL refused" 1 "$rc"
rc=0; out=$("$LUMEND" -f "$TMP/slapd.conf" -h "ldap://127.0.0.1:99999/" -d 0 2>&1) || rc=$?
expect_eq "bad port refused" 1 "$rc"
case "$out" in *"port"*) ok "bad port message";; *) fail "bad port message" "$out";; esac
rc=0; "$LUMEND" -x >/dev/null 2>&1 || rc=$?
expect_eq "unknown option refused" 1 "$rc"

# ldapi: percent-encoded path, stale socket removed, socket removed at exit.
sock="$TMP/ldapi.sock"
"$PYTHON" -c "import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])" "$sock"
enc=$(printf '%s' "$sock" | sed 's|/|%2F|g')
"$LUMEND" -f "$TMP/slapd.conf" -h "ldapi://$enc/ $URI/" -d stats 2> "$TMP/lumend.log" &
LUMEN_PID=$!
for _ in $(seq 1 100); do ldapwhoami -x -H "ldapi://$enc/" >/dev/null 2>&1 && break; sleep 0.1; done
expect_eq "ldapi whoami (stale socket replaced)" anonymous "$(ldapwhoami -x -H "ldapi://$enc/" 2>&1)"
grep -q "ACCEPT from PATH=$sock" "$TMP/lumend.log" && ok "ldapi ACCEPT log" || fail "ldapi ACCEPT log" "$(cat "$TMP/lumend.log")"
lumen_stop
[ ! -e "$sock" ] && ok "ldapi socket removed at exit" || fail "ldapi socket removed at exit"
lumen_finish
