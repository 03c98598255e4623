#!/usr/bin/env bash
# Build every tests/fuzz/fuzz_*.c as a libFuzzer target and run each one.
#
#   tests/fuzz/run.sh smoke     20 s per target (CI, `make fuzz-smoke`)
#   tests/fuzz/run.sh long      FUZZ_SECONDS per target, default 600 (`make fuzz`)
#   tests/fuzz/run.sh campaign  FUZZ_SECONDS per target, default 600, with a
#                               summary per target (`make fuzz-campaign SECONDS=N`);
#                               FUZZ_MERGE=1 minimizes what it found into the
#                               checked-in corpus
#   tests/fuzz/run.sh build     build the targets only
#
# FUZZ_CPU_SECONDS=N (long, campaign) budgets each target in CPU seconds of
# the fuzzer itself instead of wall-clock seconds, so that a niced campaign on
# a shared machine still gets its full budget: the target is stopped
# gracefully (SIGUSR1, final stats printed) once it has used N seconds of CPU.
# FUZZ_SECONDS then only caps the wall-clock time (default: 24 hours). The
# campaign summary reports the CPU seconds each target used either way.
#
# FUZZ_TARGETS="fuzz_a fuzz_b" restricts any mode to those targets.
#
# Layers: the source layers (src/<layer>/) are built once, by the Makefile's
# own rules, into static libraries under build-fuzz/lib/ with the fuzzing
# sanitizer flags (BUILD=build-fuzz/lib). A target links proto and model by
# default; a line "fuzz-layers: proto model backmdb config server" in its
# header comment names the layers it needs instead (lowest first).
#
# A target that runs server code against stand-ins for some of its modules
# names them on a line "fuzz-fakes: conn" (tests/unit/fake_<name>.c, the unit
# suites' fakes): they are compiled with the target and linked before the
# layers, so the real modules are not pulled from the libraries.
#
# Inputs are at most 65536 bytes unless a target's "fuzz-max-len: N" line or
# FUZZ_MAX_LEN says otherwise.
#
# Seeds come from tests/fuzz/corpus/<target>/ (checked in), the reproducers
# of fixed bugs in tests/fuzz/crashes-fixed/<target>/, and, for
# fuzz_ldap_message, the PROTOS c06 PDUs in ../shared/testdata when present.
# New inputs found while fuzzing go to build-fuzz/corpus/<target>/, crashes to
# build-fuzz/crashes/. Exit status is non-zero if any target fails to build
# or finds a crash.
set -uo pipefail

mode=${1:-smoke}
case "$mode" in
  smoke)    seconds=20 ;;
  long|campaign) seconds=${FUZZ_SECONDS:-600} ;;
  build)    seconds=0 ;;
  *) echo "usage: $0 [smoke|long|campaign|build]" >&2; exit 2 ;;
esac
cpu_budget=${FUZZ_CPU_SECONDS:-0}
[ "$mode" = smoke ] && cpu_budget=0
if [ "$cpu_budget" != 0 ] && [ "$mode" != smoke ] && [ -z "${FUZZ_SECONDS:-}" ]; then
  seconds=86400
fi
case "$seconds$cpu_budget" in
  ''|*[!0-9]*) echo "fuzz: FUZZ_SECONDS and FUZZ_CPU_SECONDS must be whole numbers of seconds" >&2; exit 2 ;;
esac

cd "$(dirname "$0")/../.." || exit 2
out=build-fuzz
libdir=$out/lib
mkdir -p "$out/corpus" "$out/crashes"

CC=${FUZZ_CC:-clang}
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all"
includes=$(for l in proto model backmdb config server tools; do printf -- '-Iinclude/%s ' "$l"; done)
CFLAGS="-g -O1 -fsanitize=fuzzer $SAN $includes -D_GNU_SOURCE"
# Everything the layers may use (Makefile's LDLIBS); the linker only pulls the
# library members a target reaches.
LIBS="$(pkg-config --libs lmdb libevent libevent_pthreads libssl libcrypto 2>/dev/null) -largon2 -lcrypt -lm -pthread"
shopt -s nullglob
all_layers=(proto model backmdb config server)
# Protocol PDUs may be large; longer inputs are truncated to this when loaded.
# A target may ask for less ("fuzz-max-len: N" in its header comment: text
# formats are slow to mutate when huge); FUZZ_MAX_LEN overrides both.
default_max_len=65536

targets=()
if [ -n "${FUZZ_TARGETS:-}" ]; then
  for t in $FUZZ_TARGETS; do targets+=("tests/fuzz/$t.c"); done
else
  targets=(tests/fuzz/fuzz_*.c)
fi
if [ ${#targets[@]} -eq 0 ]; then
  echo "fuzz: no targets in tests/fuzz" >&2
  exit 1
fi

# The layers a target links, lowest first.
layers_of() {
  local line
  line=$(grep -m1 -o 'fuzz-layers:.*' "$1" | sed 's/fuzz-layers://; s/\*\///')
  echo "${line:-proto model}"
}

# The unit-suite fakes a target is linked with (tests/unit/fake_<name>.c).
fakes_of() {
  local name
  for name in $(grep -m1 -o 'fuzz-fakes:.*' "$1" | sed 's/fuzz-fakes://; s/\*\///'); do
    printf 'tests/unit/fake_%s.c ' "$name"
  done
}

# Build the layer libraries every selected target needs (incremental).
needed=()
for source in "${targets[@]}"; do
  [ -f "$source" ] || { echo "fuzz: no such target $source" >&2; exit 2; }
  for l in $(layers_of "$source"); do
    case " ${all_layers[*]} " in *" $l "*) ;; *) echo "fuzz: $source: unknown layer $l" >&2; exit 2 ;; esac
    case " ${needed[*]:-} " in *" $l "*) ;; *) needed+=("$l") ;; esac
  done
done
lib_targets=()
for l in "${needed[@]}"; do lib_targets+=("$libdir/lib$l.a"); done
echo "== layers: ${needed[*]}"
if ! ${MAKE:-make} --no-print-directory -s BUILD="$libdir" CC="$CC" OPT=-O1 \
     SANFLAGS="-fsanitize=fuzzer-no-link $SAN" "${lib_targets[@]}"; then
  echo "fuzz: the layer libraries do not build" >&2
  exit 1
fi

if [ "$mode" = campaign ]; then
  stamp=$(date -u +%Y%m%dT%H%M%SZ)
  campaign_dir=$out/campaign/$stamp
  mkdir -p "$campaign_dir"
  summary=$campaign_dir/summary.txt
  printf '%-22s %8s %8s %12s %9s %7s %7s %7s %s\n' target budget_s cpu_s execs exec/s cov ft corpus result > "$summary"
fi

# Every few seconds writes the fuzzer's CPU seconds (user + system) to
# $2; once they reach the budget $3 (0: none), asks it to stop (SIGUSR1:
# libFuzzer finishes the current input and prints its final stats).
watch_cpu() {
  local pid=$1 record=$2 budget=$3 ticks stat used
  ticks=$(getconf CLK_TCK)
  while stat=$(cat "/proc/$pid/stat" 2>/dev/null); do
    # Fields after the ")" that ends the command name: utime is the 12th, stime the 13th.
    read -r -a fields <<< "${stat##*) }"
    used=$(( (fields[11] + fields[12]) / ticks ))
    echo "$used" > "$record"
    if [ "$budget" -gt 0 ] && [ "$used" -ge "$budget" ]; then
      kill -USR1 "$pid" 2>/dev/null
      budget=0
    fi
    sleep 2
  done
}

# "#123 DONE cov: 45 ft: 67 corp: 8/100b ..." and "stat::name: value" lines.
stat_of() { grep -m1 "^stat::$2:" "$1" | awk '{print $2}'; }
field_of() { grep -E '^#[0-9]+' "$1" | tail -1 | grep -o "$2: [0-9/]*" | awk '{print $2}'; }

failed=()
for source in "${targets[@]}"; do
  name=$(basename "$source" .c)
  libs=()
  read -r -a layers <<< "$(layers_of "$source")"
  max_len=$(grep -m1 -o 'fuzz-max-len: *[0-9]*' "$source" | grep -o '[0-9]*$')
  max_len=${FUZZ_MAX_LEN:-${max_len:-$default_max_len}}
  for ((i = ${#layers[@]} - 1; i >= 0; i--)); do libs+=("$libdir/lib${layers[i]}.a"); done
  echo "== $name: build (layers: ${layers[*]})"
  read -r -a fakes <<< "$(fakes_of "$source")"
  if ! $CC $CFLAGS -Itests/unit "$source" "${fakes[@]}" "${libs[@]}" -o "$out/$name" $LIBS; then
    failed+=("$name(build)")
    continue
  fi
  [ "$mode" = build ] && continue
  seeds=()
  [ -d "tests/fuzz/corpus/$name" ] && seeds+=("tests/fuzz/corpus/$name")
  # Reproducers of fixed bugs are replayed first, like seeds.
  [ -d "tests/fuzz/crashes-fixed/$name" ] && seeds+=("tests/fuzz/crashes-fixed/$name")
  if [ "$name" = fuzz_ldap_message ] && [ -d ../shared/testdata/protos-c06-ldapv3-enc ]; then
    seeds+=(../shared/testdata/protos-c06-ldapv3-enc)
  fi
  mkdir -p "$out/corpus/$name"
  echo "== $name: run ${seconds}s (seeds: ${seeds[*]:-none})"
  log=$out/$name.log
  [ "$mode" = campaign ] && log=$campaign_dir/$name.log
  crashes_before=$(ls "$out/crashes" | grep -c "^$name-" || true)
  # The first directory is the writable working corpus; the seed directories are only read.
  "$out/$name" -max_total_time="$seconds" -max_len="$max_len" -timeout=10 \
       -print_final_stats=1 -artifact_prefix="$out/crashes/$name-" \
       "$out/corpus/$name" "${seeds[@]}" > "$log" 2>&1 &
  fuzzer=$!
  watch_cpu "$fuzzer" "$log.cpu" "$cpu_budget" &
  watcher=$!
  wait "$fuzzer"
  status=$?
  wait "$watcher"
  cpu_used=$(cat "$log.cpu" 2>/dev/null || echo "?")
  rm -f "$log.cpu"
  if [ "$mode" = campaign ]; then
    grep -E '^(#[0-9]+.*(INITED|DONE)|==[0-9]+==|SUMMARY|stat::)' "$log"
  else
    cat "$log"
  fi
  result=clean
  if [ "$status" -ne 0 ]; then
    failed+=("$name")
    result="FAILED(exit $status)"
  fi
  if [ "$mode" = campaign ]; then
    crashes_after=$(ls "$out/crashes" | grep -c "^$name-" || true)
    [ "$crashes_after" -gt "$crashes_before" ] && result="$result, $((crashes_after - crashes_before)) new reproducer(s)"
    budget=$seconds
    [ "$cpu_budget" != 0 ] && budget="${cpu_budget}cpu"
    printf '%-22s %8s %8s %12s %9s %7s %7s %7s %s\n' "$name" "$budget" "$cpu_used" \
      "$(stat_of "$log" number_of_executed_units)" "$(stat_of "$log" average_exec_per_sec)" \
      "$(field_of "$log" cov)" "$(field_of "$log" ft)" "$(field_of "$log" corp | cut -d/ -f1)" \
      "$result" >> "$summary"
    if [ "${FUZZ_MERGE:-0}" = 1 ] && [ "$status" -eq 0 ]; then
      mkdir -p "tests/fuzz/corpus/$name"
      before=$(ls "tests/fuzz/corpus/$name" | wc -l)
      "$out/$name" -merge=1 -max_len="$max_len" -timeout=10 \
        "tests/fuzz/corpus/$name" "$out/corpus/$name" > "$campaign_dir/$name.merge.log" 2>&1
      echo "== $name: merged $(( $(ls "tests/fuzz/corpus/$name" | wc -l) - before )) new seed(s) into tests/fuzz/corpus/$name"
    fi
  fi
done

if [ "$mode" = campaign ]; then
  echo "== summary ($summary)"
  cat "$summary"
fi
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: FAILED: ${failed[*]} (reproducers in $out/crashes/)" >&2
  exit 1
fi
echo "fuzz: all ${#targets[@]} targets clean"
