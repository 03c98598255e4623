#!/usr/bin/env bash
# Runs every tests/integration/t_*.sh and t_*.py (each starts its own lumend)
# and prints one closing line: "integration: N passed, M failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
export BUILD=${BUILD:-build}
PYTHON=/usr/bin/python3
[ -x "$PYTHON" ] || PYTHON=python3
passed=0 failed=0 failed_names=()
for t in "$here"/t_*.sh "$here"/t_*.py; do
  [ -e "$t" ] || continue
  echo "== $(basename "$t")"
  case "$t" in
    *.py) "$PYTHON" "$t" ;;
    *)    bash "$t" ;;
  esac
  if [ $? -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); failed_names+=("$(basename "$t")"); fi
done
[ $failed -gt 0 ] && echo "failed: ${failed_names[*]}"
echo "integration: $passed passed, $failed failed"
[ $failed -eq 0 ]
