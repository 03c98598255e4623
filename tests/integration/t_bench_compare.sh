#!/usr/bin/env bash
# bench/compare.sh end to end on a small directory: both servers loaded and
# running at once, every row of the matrix run against each, one after the
# other with the first alternating from row to row, every run succeeding,
# report.md written with a ratio for each row, and nothing left running.
# A bad option is refused before anything starts. No timing is asserted:
# each row runs one second so that the test proves the tool, not a speed.
#
# The sanitizer pass would measure its own build and take as long again
# for nothing compare.sh does differently:
# run.sh: plain pass only
. "$(dirname "$0")/lib.sh"
TMP=$(mktemp -d /tmp/lumen-t-compare.XXXXXX)
trap 'pkill -f "$TMP/lumen-bench" 2>/dev/null; rm -rf "$TMP"' EXIT
OUT=$TMP/out
COMPARE="$ROOT/bench/compare.sh"
READS="search-c1 search-c4 search-c16 search-c32 search-c64 search-c256 search-c1000
       auth-c16 bind-c16 compare-c16 connperop-c16"
WRITES="modify-c16 add-c4 add-c16"
ROWS="$READS $WRITES"

rc=0
TMPDIR=$TMP BUILD=$BUILD "$COMPARE" --entry-cache 0 --out "$OUT/refused" > "$TMP/refused.txt" 2>&1 || rc=$?
check "an entry cache of 0 is refused (exit 2)" test "$rc" = 2
check "... saying what it takes" grep -q -- "--entry-cache default|off|full|N" "$TMP/refused.txt"
check "... before any result directory is made" test ! -e "$OUT/refused"
rc=0
TMPDIR=$TMP BUILD=$BUILD "$COMPARE" --rounds 0 --out "$OUT/refused" > "$TMP/refused.txt" 2>&1 || rc=$?
check "0 rounds are refused (exit 2)" test "$rc" = 2
check "... saying what it takes" grep -q -- "--rounds N (1 or more)" "$TMP/refused.txt"

check "compare.sh runs the matrix on 1,000 entries, the reads twice" \
  env TMPDIR="$TMP" BUILD="$BUILD" "$COMPARE" --quick --entries 1000 --duration 1 --warmup 0 \
  --rounds 2 --out "$OUT/run"
check "the run says it interleaved" grep -qx "interleave=1" "$OUT/run/meta.txt"

# Every run, both servers: a JSON result with operations and no failures.
complete=1
runs=$(for row in $READS; do echo "$row@1 $row@2"; done; echo "$WRITES")
for run in $runs; do
  for server in openldap lumen; do
    "$PYTHON" - "$OUT/run/raw/$server-$run.json" <<'PY' || { complete=0; echo "  $server $run"; }
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if r["ops"] > 0 and r["errors"]["total"] == 0 else 1)
PY
  done
done
check "every read ran twice and every write once, on both servers, without an error" \
  test $complete = 1

# run.log: the reads in the matrix's order, then again, then the writes,
# each taken by both servers back to back, OpenLDAP first on the first
# and the first alternating.
"$PYTHON" - "$OUT/run/run.log" "$READS" "$WRITES" > "$TMP/order.txt" <<'PY'
import re, sys
log, reads, writes = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
steps = ["%s (round %d)" % (r, k) for k in (1, 2) for r in reads] + writes
turns = [m.groups() for m in (re.search(r"\] (openldap|lumen): (.+)$", l.rstrip())
                              for l in open(log)) if m and m.group(2) in steps]
want = []
for i, step in enumerate(steps):
    pair = ["openldap", "lumen"] if i % 2 == 0 else ["lumen", "openldap"]
    want += [(s, step) for s in pair]
print("ok" if turns == want else "got %s" % turns[:6])
PY
check "each step runs against one server then the other, the first alternating" \
  grep -qx ok "$TMP/order.txt"
check "both servers were started before the first row" \
  "$PYTHON" -c '
import sys
lines = open(sys.argv[1]).read().splitlines()
first = next(i for i, l in enumerate(lines) if l.endswith(": search-c1 (round 1)"))
sys.exit(0 if any("lumen: warming" in l for l in lines[:first])
         and any("openldap: warming" in l for l in lines[:first]) else 1)' "$OUT/run/run.log"

ratios=0
for row in $ROWS; do
  grep -Eq "^\| $row \|.*\| [0-9.]+× \|" "$OUT/run/report.md" && ratios=$((ratios + 1))
done
check "report.md gives a Lumen/OpenLDAP ratio for all 14 rows" test $ratios = 14
check "report.md lists both rounds of every read, for each server" \
  test "$(grep -cE "^\| ($(echo $READS | tr ' ' '|')) \| (OpenLDAP|Lumen) \| [0-9,]+ \| [0-9,]+ \|$" \
          "$OUT/run/report.md")" = 22
# With two rounds the median is the slower: the row's figure is that one.
"$PYTHON" - "$OUT/run" > "$TMP/median.txt" <<'PY'
import json, sys
out = sys.argv[1]
rate = [json.load(open("%s/raw/lumen-search-c4@%d.json" % (out, k)))["ops_per_s"] for k in (1, 2)]
row = next(l for l in open(out + "/report.md") if l.startswith("| search-c4 |"))
print("ok" if row.split(" | ")[3] == "{:,.0f}".format(min(rate)) else row)
PY
check "the table gives a read's median round" grep -qx ok "$TMP/median.txt"
check "report.md says how the servers took turns" \
  grep -q "The servers ran at once, each row against one after the other" "$OUT/run/report.md"
check "each server's memory after the run is recorded" \
  grep -Eq "^openldap_vmrss_kib=[0-9]+$" "$OUT/run/meta.txt"
check "... Lumen's too" grep -Eq "^lumen_vmrss_kib=[0-9]+$" "$OUT/run/meta.txt"
check "report.md gives both servers' VmRSS after the read rows, with a ratio" \
  grep -Eq "^\| VmRSS after the read rows \(KiB\) \| [0-9]+ \| [0-9]+ \| [0-9.]+× \|$" \
  "$OUT/run/report.md"
# ([l]: the pattern must not match the checking shell's own command line)
# A server that cannot start is left out; the other runs the matrix alone.
mkdir -p "$TMP/nolumend"
for tool in lumenbench lumengen lumen-canned lumenadd; do ln -s "$ROOT/$BUILD/$tool" "$TMP/nolumend/$tool"; done
check "without lumend, compare.sh still measures OpenLDAP" \
  env TMPDIR="$TMP" BUILD="$TMP/nolumend" "$COMPARE" --quick --entries 1000 --duration 1 \
  --warmup 0 --out "$OUT/alone"
check "... saying Lumen was skipped" grep -q "lumen: .*lumend missing, skipped" "$OUT/alone/run.log"
check "... with every row of OpenLDAP's" test "$(ls "$OUT/alone/raw"/openldap-*.json | wc -l)" = 14
check "... none of Lumen's" bash -c "! ls '$OUT/alone/raw'/lumen-*.json 2>/dev/null"
check "... and not claiming it interleaved" grep -qx "interleave=0" "$OUT/alone/meta.txt"

check "no server is left running" bash -c "! pgrep -f '$TMP/[l]umen-bench'"
check "the temporary directory is removed" bash -c "! ls -d '$TMP'/lumen-bench.* 2>/dev/null"
lumen_finish
