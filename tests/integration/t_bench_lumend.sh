#!/usr/bin/env bash
# lumenbench against a real lumend: a root DSE search (base "", scope base)
# for ~2 s; the operations lumenbench completed must equal the SEARCH RESULT
# lines lumend logged at -d stats.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$root/$BUILD ;; esac
[ -x "$BUILD/lumend" ] || { echo "t_bench_lumend: skipped (no lumend)"; exit 0; }
work=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"; return 0; }
trap cleanup EXIT
fail() { echo "t_bench_lumend: FAIL: $*" >&2; exit 1; }

mkdir "$work/db"
{
  for s in core cosine inetorgperson nis lumen; do
    [ -f "$root/schema/$s.schema" ] && echo "include $root/schema/$s.schema"
  done
  echo "database mdb"
  echo "suffix dc=example,dc=com"
  echo "directory $work/db"
} > "$work/lumend.conf"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$BUILD/lumend" -f "$work/lumend.conf" -h "ldap://127.0.0.1:$port/" -d stats 2> "$work/log" &
pid=$!
for _ in $(seq 100); do
  ldapsearch -x -H "ldap://127.0.0.1:$port" -b "" -s base -LLL 1.1 >/dev/null 2>&1 && break
  kill -0 "$pid" 2>/dev/null || fail "lumend exited: $(tail -3 "$work/log")"
  sleep 0.1
done
# The log is written by a logger thread: wait for the probe's RESULT line
# to land before counting, or it would be counted as lumenbench's.
for _ in $(seq 50); do
  grep -q 'SEARCH RESULT' "$work/log" && break
  sleep 0.1
done
before=$(grep -c 'SEARCH RESULT' "$work/log" || true)

"$BUILD/lumenbench" -H "ldap://127.0.0.1:$port" -m search -b "" -s base \
  -f "(objectClass=*)" -c 4 -d 2 -w 0 --json > "$work/out.json" ||
  fail "lumenbench exited $?"
# Stop lumend so its buffered log is complete.
kill "$pid"; wait "$pid" 2>/dev/null || true; pid=

completed=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["completed_total"]); sys.exit(0 if r["errors"]["total"]==0 and r["ops"]>0 else 1)' "$work/out.json") ||
  fail "lumenbench saw errors or no operations: $(cat "$work/out.json")"
logged=$(( $(grep -c 'SEARCH RESULT' "$work/log" || true) - before ))
[ "$completed" -eq "$logged" ] || fail "lumenbench completed $completed searches, lumend logged $logged"
echo "t_bench_lumend: ok ($completed searches)"
