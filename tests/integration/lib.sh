# lib.sh — helpers for the shell integration tests (sourced, never run).
#
# A test does:   . "$(dirname "$0")/lib.sh"; lumen_setup; lumen_start;
#                check "name" command...; ...; lumen_stop; lumen_finish
# Each test gets its own temp dir, free loopback port and lumend
# ($BUILD/lumend; BUILD is build or build-san). lumen_stop sends SIGTERM and
# fails the test if lumend did not exit 0 or if ASan/UBSan wrote a report.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-build}
LUMEND="$ROOT/$BUILD/lumend"
PYTHON=/usr/bin/python3
[ -x "$PYTHON" ] || PYTHON=python3
TEST_NAME=$(basename "$0")
PASSED=0
FAILED=0
LUMEN_PID=

free_port() {
  "$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Write the default test config to $TMP/slapd.conf (extra lines from $1).
write_config() {
  cat > "$TMP/slapd.conf" <<CONF
include $ROOT/schema/core.schema
include $ROOT/schema/cosine.schema
include $ROOT/schema/inetorgperson.schema
include $ROOT/schema/nis.schema
pidfile $TMP/lumend.pid
threads 2
listener-threads 2
${1:-}
database mdb
suffix "dc=example,dc=com"
rootdn "cn=admin,dc=example,dc=com"
rootpw secret
directory $TMP/db
index objectClass eq
CONF
}

lumen_setup() {
  TMP=$(mktemp -d "${TMPDIR:-/tmp}/lumen-it-XXXXXX")
  mkdir -p "$TMP/db"
  PORT=$(free_port)
  URI="ldap://127.0.0.1:$PORT"
  write_config "${1:-}"
  export ASAN_OPTIONS="log_path=$TMP/asan:detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
  export UBSAN_OPTIONS="log_path=$TMP/ubsan:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
  trap lumen_cleanup EXIT
}

lumen_cleanup() {
  if [ -n "$LUMEN_PID" ] && kill -0 "$LUMEN_PID" 2>/dev/null; then
    kill -KILL "$LUMEN_PID" 2>/dev/null
  fi
  [ -n "${KEEP_TMP:-}" ] || rm -rf "$TMP"
}

ok()   { PASSED=$((PASSED + 1)); echo "  ok   $TEST_NAME: $1"; }
fail() { FAILED=$((FAILED + 1)); echo "  FAIL $TEST_NAME: $1"; [ -n "${2:-}" ] && printf '%s\n' "$2" | sed 's/^/       /'; }

# check NAME COMMAND... — passes if the command exits 0.
check() {
  local name=$1; shift
  local out
  if out=$("$@" 2>&1); then ok "$name"; else fail "$name" "$out"; fi
}

# expect_eq NAME EXPECTED ACTUAL
expect_eq() {
  if [ "$2" == "$3" ]; then ok "$1"; else fail "$1" "expected:
$2
got:
$3"; fi
}

lumen_start() {
  "$LUMEND" -f "$TMP/slapd.conf" -h "$URI/" -d stats 2> "$TMP/lumend.log" &
  LUMEN_PID=$!
  for _ in $(seq 1 100); do
    if ldapsearch -x -H "$URI" -b "" -s base -LLL 1.1 >/dev/null 2>&1; then
      return 0
    fi
    kill -0 "$LUMEN_PID" 2>/dev/null || break
    sleep 0.1
  done
  fail "lumend starts" "$(cat "$TMP/lumend.log")"
  lumen_finish
}

sanitizer_reports() {
  cat "$TMP"/asan.* "$TMP"/ubsan.* 2>/dev/null
}

lumen_stop() {
  kill -TERM "$LUMEN_PID"
  local rc=0
  wait "$LUMEN_PID" || rc=$?
  LUMEN_PID=
  if [ $rc -eq 0 ]; then ok "lumend exits 0 on SIGTERM"; else
    fail "lumend exits 0 on SIGTERM (exit $rc)" "$(tail -20 "$TMP/lumend.log")"; fi
  local reports
  reports=$(sanitizer_reports)
  if [ -z "$reports" ]; then ok "no sanitizer reports"; else fail "no sanitizer reports" "$reports"; fi
  if [ ! -e "$TMP/lumend.pid" ]; then ok "pidfile removed"; else fail "pidfile removed"; fi
}

lumen_finish() {
  echo "$TEST_NAME: $PASSED passed, $FAILED failed"
  [ $FAILED -eq 0 ] && exit 0
  exit 1
}

# --- helpers for tests against a loaded directory ---------------------------
ADMIN_DN="cn=admin,dc=example,dc=com"
ADMIN_PW=secret
DATA="$ROOT/tests/integration/data"

# lumen_load_tree [LDIF] — ldapadd the fixture tree (default data/tree.ldif)
# as the rootdn; fails the test when it does not load.
lumen_load_tree() {
  local out
  if out=$(ldapadd -x -H "$URI" -D "$ADMIN_DN" -w "$ADMIN_PW" -f "${1:-$DATA/tree.ldif}" 2>&1); then
    ok "ldapadd loads $(basename "${1:-$DATA/tree.ldif}")"
  else
    fail "ldapadd loads $(basename "${1:-$DATA/tree.ldif}")" "$out"
  fi
}

# sorted_ldif < LDIF — entries sorted by DN, attributes by name, values by
# value, one "name: value" line each (base64 only for non-UTF-8), so two
# searches compare with expect_eq whatever the order the server used.
sorted_ldif() {
  "$PYTHON" -c '
import sys, ldif, base64
records = ldif.LDIFRecordList(sys.stdin.buffer); records.parse()
def line(name, value):
    if not value:
        return name + ":"
    try:
        return "%s: %s" % (name, value.decode("utf-8"))
    except UnicodeDecodeError:
        return "%s:: %s" % (name, base64.b64encode(value).decode())
out = []
for dn, attrs in sorted(records.all_records, key=lambda r: r[0].lower()):
    out.append("dn: " + dn)
    for name in sorted(attrs, key=str.lower):
        out.extend(line(name, v) for v in sorted(attrs[name]))
    out.append("")
print("\n".join(out).rstrip("\n"))
'
}

# dns_of ARGS... — the DNs an ldapsearch returns (sorted, one per line).
dns_of() {
  ldapsearch -x -H "$URI" -LLL -o ldif-wrap=no "$@" 1.1 2>/dev/null | sed -n 's/^dn: //p' | LC_ALL=C sort
}

# ldap_rc COMMAND... — the exit status (the LDAP result code for ldap tools).
ldap_rc() {
  local rc=0
  "$@" >/dev/null 2>&1 || rc=$?
  echo "$rc"
}
