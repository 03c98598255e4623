#!/usr/bin/env bash
# Build every tests/fuzz/fuzz_*.c as a libFuzzer target and run each one.
#
#   tests/fuzz/run.sh smoke   20 s per target (CI, `make fuzz-smoke`)
#   tests/fuzz/run.sh long    FUZZ_SECONDS per target, default 600 (`make fuzz`)
#
# Targets link against all of src/proto and src/model. Seeds come from
# tests/fuzz/corpus/<target>/ (checked in) and, for fuzz_ldap_message, the
# PROTOS c06 PDUs in ../shared/testdata when present. New inputs found while
# fuzzing go to build-fuzz/corpus/<target>/, crashes to build-fuzz/crashes/.
# Exit status is non-zero if any target fails to build or finds a crash.
set -uo pipefail

mode=${1:-smoke}
case "$mode" in
  smoke) seconds=20 ;;
  long)  seconds=${FUZZ_SECONDS:-600} ;;
  *) echo "usage: $0 [smoke|long]" >&2; exit 2 ;;
esac

cd "$(dirname "$0")/../.." || exit 2
out=build-fuzz
mkdir -p "$out/corpus" "$out/crashes"

CC=${FUZZ_CC:-clang}
CFLAGS="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -Iinclude -D_GNU_SOURCE"
# The model layer may use libcrypto, libargon2 and crypt(3) for password schemes.
LIBS="$(pkg-config --libs libcrypto 2>/dev/null) -largon2 -lcrypt -lm -pthread"
shopt -s nullglob
lib_sources=(src/proto/*.c src/model/*.c)
targets=(tests/fuzz/fuzz_*.c)
# Protocol PDUs may be large; longer inputs are truncated to this when loaded.
max_len=${FUZZ_MAX_LEN:-65536}

if [ ${#targets[@]} -eq 0 ]; then
  echo "fuzz: no targets in tests/fuzz" >&2
  exit 1
fi

failed=()
for source in "${targets[@]}"; do
  name=$(basename "$source" .c)
  echo "== $name: build"
  if ! $CC $CFLAGS "$source" "${lib_sources[@]}" -o "$out/$name" $LIBS; then
    failed+=("$name(build)")
    continue
  fi
  seeds=()
  [ -d "tests/fuzz/corpus/$name" ] && seeds+=("tests/fuzz/corpus/$name")
  if [ "$name" = fuzz_ldap_message ] && [ -d ../shared/testdata/protos-c06-ldapv3-enc ]; then
    seeds+=(../shared/testdata/protos-c06-ldapv3-enc)
  fi
  mkdir -p "$out/corpus/$name"
  echo "== $name: run ${seconds}s (seeds: ${seeds[*]:-none})"
  # The first directory is the writable working corpus; the seed directories are only read.
  if ! "$out/$name" -max_total_time="$seconds" -max_len="$max_len" -timeout=10 \
       -print_final_stats=1 -artifact_prefix="$out/crashes/$name-" \
       "$out/corpus/$name" "${seeds[@]}"; then
    failed+=("$name")
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: FAILED: ${failed[*]} (reproducers in $out/crashes/)" >&2
  exit 1
fi
echo "fuzz: all ${#targets[@]} targets clean"
