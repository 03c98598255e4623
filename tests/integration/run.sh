#!/usr/bin/env bash
# Runs every tests/integration/t_*.sh and t_*.py (each starts its own lumend)
# and prints one closing line: "integration: N passed, M failed".
# A failing script's FAIL lines and its last lines are printed again just
# before that line: where only the head and tail of a long run's output
# are kept (CI), what failed stays in sight.
set -u
here=$(cd "$(dirname "$0")" && pwd)
export BUILD=${BUILD:-build}
PYTHON=/usr/bin/python3
[ -x "$PYTHON" ] || PYTHON=python3
export PYTHONUNBUFFERED=1   # the script's lines in order with its servers'
passed=0 failed=0 skipped=0 failed_names=()
logs=$(mktemp -d "${TMPDIR:-/tmp}/lumen-run.XXXXXX")
trap 'rm -rf "$logs"' EXIT

# What a failed script said that matters: each FAIL line with the detail
# under it, then its last lines (a traceback, a timeout).
recap() {
  echo "== recap of $1"
  grep -A 8 '^  FAIL' "$2" | cut -c 1-300 | head -n 80
  echo "   ... its last lines:"
  tail -n 15 "$2" | cut -c 1-300
}
for t in "$here"/t_*.sh "$here"/t_*.py; do
  [ -e "$t" ] || continue
  # The fault sweeps fail each allocation (or LMDB call) in turn. Their
  # answers are checked in both builds alike, but what only they can find
  # is a leak or a use after free on an error path, which only the
  # sanitizer build sees: they run in that pass alone (SANITIZED=1, set by
  # make test-san), saving the plain pass about 4 of its minutes.
  if [ -z "${SANITIZED:-}" ] && grep -q '^# run.sh: sanitizer pass only' "$t"; then
    echo "== $(basename "$t"): sanitizer pass only, skipped"
    skipped=$((skipped + 1))
    continue
  fi
  # A benchmark tool's end-to-end test would, in the sanitizer pass, only
  # time the sanitizer's build: it runs in the plain pass alone.
  if [ -n "${SANITIZED:-}" ] && grep -q '^# run.sh: plain pass only' "$t"; then
    echo "== $(basename "$t"): plain pass only, skipped"
    skipped=$((skipped + 1))
    continue
  fi
  echo "== $(basename "$t")"
  started=$SECONDS
  # Into a file, shown as it grows: a pipe would wait for every process
  # holding its end, a server a script left behind included.
  log="$logs/$(basename "$t").log"
  case "$t" in
    *.py) "$PYTHON" "$t" > "$log" 2>&1 & ;;
    *)    bash "$t" > "$log" 2>&1 & ;;
  esac
  pid=$!
  tail -n +1 -s 0.1 -f --pid=$pid "$log"
  wait $pid
  rc=$?
  # (what each script costs: make test must stay well under CI's limit)
  echo "-- $(basename "$t"): $((SECONDS - started)) s"
  if [ $rc -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); failed_names+=("$(basename "$t")"); fi
done
for name in "${failed_names[@]}"; do
  recap "$name" "$logs/$name.log"
done
[ $failed -gt 0 ] && echo "failed: ${failed_names[*]}"
echo "integration: $passed passed, $failed failed, $skipped skipped (for the other pass only)"
[ $failed -eq 0 ]
