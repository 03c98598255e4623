#!/usr/bin/env bash
# The access log: `logfile` receives the lines; RESULT lines have slapd
# 2.5's qtime=/etime=; with `slowop-threshold 0` every RESULT line carries
# the stage breakdown, whose stages add up to etime (compared as sums,
# within the rounding of the printed microseconds: no speed is asserted);
# SIGHUP after a rename continues in a new file (rotation); passwords never
# appear in the log (adds of userPassword, binds, failed binds, modifies,
# password modify); -d 0 logs the configured loglevel to stderr.
. "$(dirname "$0")/lib.sh"
lumen_setup
write_config "loglevel stats
slowop-threshold 0
logfile $TMP/access.log"
LOG="$TMP/access.log"
lumen_start

# wait_for FILE PATTERN — the logger writes asynchronously: poll (bounded).
wait_for() {
  for _ in $(seq 1 100); do
    grep -Eq "$2" "$1" 2>/dev/null && return 0
    sleep 0.05
  done
  return 1
}

ADD_PW='Add-Secret-7731'
NEW_PW='Changed-Secret-4402'
MOD_PW='Modified-Secret-9150'
WRONG_PW='Wrong-Secret-5528'
lumen_load_tree
check "add an entry with userPassword" ldapadd -x -H "$URI" -D "$ADMIN_DN" -w "$ADMIN_PW" <<LDIF
dn: uid=logtest,dc=example,dc=com
objectClass: inetOrgPerson
uid: logtest
cn: Log Test
sn: Test
userPassword: $ADD_PW
LDIF
USER_DN="uid=logtest,dc=example,dc=com"
check "bind with that password" ldapwhoami -x -H "$URI" -D "$USER_DN" -w "$ADD_PW"
rc=$(ldap_rc ldapwhoami -x -H "$URI" -D "$USER_DN" -w "$WRONG_PW")
expect_eq "a wrong password fails (invalidCredentials)" 49 "$rc"
check "modify userPassword" ldapmodify -x -H "$URI" -D "$ADMIN_DN" -w "$ADMIN_PW" <<LDIF
dn: $USER_DN
changetype: modify
replace: userPassword
userPassword: $MOD_PW
LDIF
# Password modify (RFC 3062) where supported; the log must not show it either way.
ldappasswd -x -H "$URI" -D "$ADMIN_DN" -w "$ADMIN_PW" -s "$NEW_PW" "$USER_DN" >/dev/null 2>&1
ldapsearch -x -H "$URI" -b "dc=example,dc=com" -LLL "(uid=logtest)" 1.1 >/dev/null 2>&1

if wait_for "$LOG" 'SRCH base="dc=example,dc=com".*uid=logtest'; then ok "logfile receives the access log"; else
  fail "logfile receives the access log" "$(tail -5 "$LOG" 2>&1)"; fi
if grep -q 'ACCEPT from' "$TMP/lumend.log"; then
  fail "access lines go to the file, not stderr" "$(grep -m3 ACCEPT "$TMP/lumend.log")"
else ok "access lines go to the file, not stderr"; fi
wait_for "$LOG" 'EXT oid=1.3.6.1.4.1.4203.1.11.1|RESULT oid=' >/dev/null
# "secret" (the rootpw) is a common word: only flag it where a value would go.
leaks=$(grep -F -e "$ADD_PW" -e "$NEW_PW" -e "$MOD_PW" -e "$WRONG_PW" "$LOG" "$TMP/lumend.log" || true)
expect_eq "no password in the log" "" "$leaks"
if grep -Eq '(=|: ?)secret\b' "$LOG"; then fail "rootpw not in the log" "$(grep -E '(=|: ?)secret' "$LOG" | head -3)"
else ok "rootpw not in the log"; fi

# --- RESULT lines: slapd 2.5 shape plus the stage breakdown -----------------
STAGES='qtime=[0-9]+\.[0-9]{6} decode=[0-9.]+ acl=[0-9.]+ candidates=[0-9.]+ entries=[0-9.]+ filter=[0-9.]+ encode=[0-9.]+ send=[0-9.]+ etime=[0-9]+\.[0-9]{6}'
if grep -Eq "SEARCH RESULT tag=101 err=0 $STAGES nentries=1 text=" "$LOG"; then
  ok "SEARCH RESULT line has every stage and etime"; else
  fail "SEARCH RESULT line has every stage and etime" "$(grep -m3 'SEARCH RESULT' "$LOG")"; fi
if grep -Eq "RESULT tag=97 err=0 $STAGES text=" "$LOG"; then ok "BIND RESULT line has the stages"; else
  fail "BIND RESULT line has the stages" "$(grep -m3 'tag=97' "$LOG")"; fi
# Each printed stage is truncated to the microsecond (and so is etime): the
# sum may fall short of etime by at most one microsecond per field.
sums=$("$PYTHON" - "$LOG" <<'PY'
import re, sys
bad, n = [], 0
names = ("qtime", "decode", "acl", "candidates", "entries", "filter", "encode", "send")
for line in open(sys.argv[1]):
    if " etime=" not in line or "RESULT" not in line:
        continue
    f = dict(re.findall(r"(\w+)=(\d+\.\d{6})", line))
    if not all(k in f for k in names):
        bad.append("missing stages: " + line.strip()); continue
    n += 1
    total = sum(round(float(f[k]) * 1e6) for k in names)
    etime = round(float(f["etime"]) * 1e6)
    if not (etime - len(names) <= total <= etime + 1):
        bad.append(f"sum {total} us vs etime {etime} us: " + line.strip())
print(n)
print("\n".join(bad))
PY
)
count=$(head -1 <<< "$sums")
problems=$(tail -n +2 <<< "$sums")
if [ "$count" -ge 10 ] && [ -z "$problems" ]; then ok "stage sums match etime on $count RESULT lines"; else
  fail "stage sums match etime ($count lines)" "$problems"; fi

# --- rotation by SIGHUP -----------------------------------------------------
mv "$LOG" "$LOG.1"
ldapsearch -x -H "$URI" -b "" -s base -LLL '(vendorName=before-hup)' 1.1 >/dev/null 2>&1
# The logger thread writes behind the operations: a line still queued when
# SIGHUP comes lands in the new file, which loses nothing. What must hold is
# that a line written before SIGHUP stays where it was written.
wait_for "$LOG.1" 'before-hup' || true
kill -HUP "$LUMEN_PID"
sleep 0.2
ldapsearch -x -H "$URI" -b "" -s base -LLL '(vendorName=after-hup)' 1.1 >/dev/null 2>&1
if wait_for "$LOG" 'after-hup'; then ok "after SIGHUP new lines go to a new file"; else
  fail "after SIGHUP new lines go to a new file" "$(ls -l "$TMP"; tail -3 "$LOG.1")"; fi
if grep -q 'before-hup' "$LOG.1"; then ok "lines before SIGHUP stay in the renamed file"; else
  fail "lines before SIGHUP stay in the renamed file" "$(tail -3 "$LOG.1")"; fi
if grep -q 'after-hup' "$LOG.1"; then fail "the renamed file stops growing"; else ok "the renamed file stops growing"; fi
kill -0 "$LUMEN_PID" 2>/dev/null && ok "SIGHUP does not stop lumend" || fail "SIGHUP does not stop lumend"
lumen_stop

# --- -d 0: the configured loglevel on stderr (for systemd's journal) -------
# Run as systemd's Type=notify would: $NOTIFY_SOCKET gets READY=1 once
# clients can connect and STOPPING=1 when SIGTERM starts the shutdown.
write_config "loglevel stats"
"$PYTHON" - "$TMP/notify.sock" "$TMP/notify.txt" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(60)
with open(sys.argv[2], "w") as out:
    try:
        while True:
            msg = s.recv(4096).decode()
            out.write(msg + "\n"); out.flush()
            if "STOPPING=1" in msg:
                break
    except socket.timeout:
        pass
PY
notify_pid=$!
for _ in $(seq 1 100); do [ -S "$TMP/notify.sock" ] && break; sleep 0.05; done
NOTIFY_SOCKET="$TMP/notify.sock" "$LUMEND" -f "$TMP/slapd.conf" -h "$URI/" -d 0 2> "$TMP/d0.log" &
LUMEN_PID=$!
for _ in $(seq 1 100); do
  ldapsearch -x -H "$URI" -b "" -s base -LLL 1.1 >/dev/null 2>&1 && break
  sleep 0.1
done
if wait_for "$TMP/d0.log" 'ACCEPT from'; then ok "-d 0 logs the configured level to stderr"; else
  fail "-d 0 logs the configured level to stderr" "$(cat "$TMP/d0.log")"; fi
kill -0 "$LUMEN_PID" 2>/dev/null && ok "-d 0 stays in the foreground" || fail "-d 0 stays in the foreground"
if wait_for "$TMP/notify.txt" '^READY=1'; then ok "READY=1 sent to NOTIFY_SOCKET"; else
  fail "READY=1 sent to NOTIFY_SOCKET" "$(cat "$TMP/notify.txt" 2>&1)"; fi
cp "$TMP/d0.log" "$TMP/lumend.log"
lumen_stop
wait "$notify_pid"
if grep -q '^STOPPING=1' "$TMP/notify.txt"; then ok "STOPPING=1 sent on SIGTERM"; else
  fail "STOPPING=1 sent on SIGTERM" "$(cat "$TMP/notify.txt")"; fi
lumen_finish
