#!/usr/bin/env bash
# Replays the checked-in seeds and the reproducers of fixed bugs through every
# fuzz target built with the project's compiler (BUILD/fuzz-replay/<target>,
# linked with replay_main.c instead of libFuzzer): part of `make test` and of
# its sanitizer pass, so a target that no longer builds, or a fixed bug that
# comes back, fails the suite. Prints one line per target and a closing
# "fuzz-replay: N passed, M failed".
set -u
build=${1:-build}
cd "$(dirname "$0")/../.." || exit 2
passed=0 failed=0 failed_names=()
for source in tests/fuzz/fuzz_*.c; do
  name=$(basename "$source" .c)
  binary=$build/fuzz-replay/$name
  inputs=()
  for dir in tests/fuzz/corpus/$name tests/fuzz/crashes-fixed/$name; do
    [ -d "$dir" ] && inputs+=("$dir")
  done
  if [ "$name" = fuzz_ldap_message ] && [ -d ../shared/testdata/protos-c06-ldapv3-enc ]; then
    inputs+=(../shared/testdata/protos-c06-ldapv3-enc)
  fi
  max_len=$(grep -m1 -o 'fuzz-max-len: *[0-9]*' "$source" | grep -o '[0-9]*$')
  if [ ${#inputs[@]} -eq 0 ]; then
    echo "$name: no seeds (tests/fuzz/corpus/$name)"
    failed=$((failed + 1)); failed_names+=("$name"); continue
  fi
  if out=$("$binary" -max_len="${max_len:-65536}" "${inputs[@]}" 2>&1); then
    echo "$name: ${out##*$'\n'}"
    passed=$((passed + 1))
  else
    printf '%s\n' "$out" | tail -30
    echo "$name: FAILED"
    failed=$((failed + 1)); failed_names+=("$name")
  fi
done
[ $failed -gt 0 ] && echo "failed: ${failed_names[*]}"
echo "fuzz-replay: $passed passed, $failed failed"
[ $failed -eq 0 ]
