#!/usr/bin/env bash
# lumenbench against lumen-canned: every mode runs ~1 s, exits 0, completes
# a plausible number of operations, and sees no errors; the same for the
# shared-set model on the modes that stress it (many threads, pipelining,
# connection churn); --work-us costs what it says; bad options are refused.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$root/$BUILD ;; esac
work=$(mktemp -d)
canned_pid=
cleanup() { [ -n "$canned_pid" ] && kill "$canned_pid" 2>/dev/null; rm -rf "$work"; return 0; }
trap cleanup EXIT
fail() { echo "t_bench_canned: FAIL: $*" >&2; exit 1; }

# Start lumen-canned with the given options (the one running is stopped);
# sets url.
start_canned() {
  if [ -n "$canned_pid" ]; then kill "$canned_pid"; wait "$canned_pid" 2>/dev/null || true; fi
  rm -f "$work/port"
  "$BUILD/lumen-canned" -p 0 "$@" > "$work/port" &
  canned_pid=$!
  for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.05; done
  local port
  port=$(awk '{print $2}' "$work/port")
  [ -n "$port" ] || fail "lumen-canned $* printed no port"
  url=ldap://127.0.0.1:$port
}

# mode | extra arguments
cases=(
  "search|"
  "auth|"
  "bind|"
  "compare|"
  "modify|--bind-dn cn=admin,dc=example,dc=com --bind-pw secret"
  "add|"
  "delete|"
  "mix|--mix search=65,auth=30,modify=5"
  "search|--depth 4 -c 4"
  "search|--reuse 50"
  "search|--new-connection-per-op"
  "search|--rate 500"
  "compare|-t 2 -c 4"
)
shared_cases=(
  "search|-c 64"
  "search|--depth 4 -c 4"
  "search|--new-connection-per-op"
  "compare|-t 2 -c 4"
  "mix|--mix search=65,auth=30,modify=5"
)
run_cases() {
for c in "$@"; do
  mode=${c%%|*} extra=${c#*|}
  out=$work/out.json
  # shellcheck disable=SC2086
  "$BUILD/lumenbench" -H "$url" -m "$mode" -c 8 -d 1 -w 0.2 --json $extra > "$out" ||
    fail "$mode $extra: lumenbench exited $?"
  python3 - "$out" "$mode $extra" <<'PY' || exit 1
import json, sys
r = json.load(open(sys.argv[1])); what = sys.argv[2]
def fail(msg):
    print("t_bench_canned: FAIL: %s: %s" % (what, msg), file=sys.stderr); sys.exit(1)
# Loose bounds: even a loaded, sanitized build does 100 ops in 1 s; nothing
# on loopback does 10 million.
if not 100 <= r["ops"] <= 10_000_000: fail("implausible op count %d" % r["ops"])
if r["errors"]["total"] != 0: fail("errors %s" % r["errors"])
ok = sum(v for k, v in r["results"].items() if k in ("success", "compareTrue"))
if ok != r["ops"]: fail("results %s do not add up to %d ops" % (r["results"], r["ops"]))
if "--rate 500" in what and not 250 <= r["ops"] <= 600:
    fail("offered 500/s for 1 s but completed %d" % r["ops"])
if what.startswith("search") and r["entries"] < r["ops"] - 16:
    fail("%d entries for %d searches" % (r["entries"], r["ops"]))
if "--new-connection-per-op" in what and r["connections_opened"] < r["ops"]:
    fail("%d connections for %d ops" % (r["connections_opened"], r["ops"]))
PY
done
}
start_canned
run_cases "${cases[@]}"
start_canned --model shared --threads 3
run_cases "${shared_cases[@]}"

# --work-us: every answer costs at least that much CPU, so no search on one
# connection, one at a time, can come back sooner (a floor, not a speed).
start_canned --work-us 20000
"$BUILD/lumenbench" -H "$url" -m search -c 1 -d 0.5 -w 0 --json > "$work/work.json" ||
  fail "lumenbench against --work-us exited $?"
python3 - "$work/work.json" <<'PY' || exit 1
import json, sys
r = json.load(open(sys.argv[1]))
def fail(msg):
    print("t_bench_canned: FAIL: --work-us 20000: %s" % msg, file=sys.stderr); sys.exit(1)
if r["errors"]["total"] != 0 or r["ops"] < 1: fail("ops %d, errors %s" % (r["ops"], r["errors"]))
# 0.5 s at >= 20 ms each: at most 25 searches (26 with one begun in warm-up)
if r["ops"] > 26: fail("%d searches in 0.5 s, each should take 20 ms of CPU" % r["ops"])
PY
for bad in "--work-us -1" "--work-us 1000001" "--work-us x" "--work-us ''" "-t 0" "-p 65536" \
           "--model nosuch" "--model ''"; do
  if eval "timeout 5 \"$BUILD/lumen-canned\" -p 0 $bad" > /dev/null 2> "$work/err"; then
    fail "lumen-canned accepted '$bad'"
  fi
  grep -q "^usage: lumen-canned" "$work/err" || fail "no usage for '$bad'"
done

# Bad input gets a clear error and exit status 2.
for bad in "-m nosuch" "-f (uid=x" "--dn uid=[1-" "-c 0" "--reuse 50 --depth 4" "-m mix"; do
  # shellcheck disable=SC2086
  if "$BUILD/lumenbench" -H "$url" $bad -d 1 > /dev/null 2> "$work/err"; then
    fail "lumenbench accepted '$bad'"
  fi
  [ -s "$work/err" ] || fail "no message for '$bad'"
done
echo "t_bench_canned: ok"
