#!/usr/bin/env bash
# Runs every unit-suite binary given and prints one closing tally.
set -u
passed=0 failed=0 failed_names=()
for bin in "$@"; do
  if "$bin"; then passed=$((passed + 1)); else failed=$((failed + 1)); failed_names+=("$(basename "$bin")"); fi
done
[ $failed -gt 0 ] && echo "failed suites: ${failed_names[*]}"
echo "unit: $passed passed, $failed failed"
[ $failed -eq 0 ]
