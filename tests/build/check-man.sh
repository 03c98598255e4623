#!/usr/bin/env bash
# check-man.sh PROGRAM... — the man pages (man/) against the code:
#  - every PROGRAM has a page (man/PROGRAM.1 or .8);
#  - lumen.conf(5) documents exactly the directives of the config code's
#    tables (the `{ "name", SECTION_...` rows of src/config/*.c): each is
#    a `.TP` entry whose next line is `.B name ...` in a section whose
#    heading ends in DIRECTIVES, and no such entry names a directive the
#    code does not read;
#  - every page renders without a warning (groff -man -ww -z).
# Prints what is wrong and exits 1, or exits 0 silently.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
status=0
problem() { echo "check-man: $*"; status=1; }

for program in "$@"; do
  [ -e "man/$program.1" ] || [ -e "man/$program.8" ] ||
    problem "$program has no man page (man/$program.1 or man/$program.8)"
done

in_code=$(sed -n 's/^[[:space:]]*{ "\([^"]*\)", SECTION_.*/\1/p' src/config/*.c |
          tr 'A-Z' 'a-z' | LC_ALL=C sort -u)
in_page=$(awk '
  /^\.SH/     { in_directives = ($0 ~ /DIRECTIVES"?[[:space:]]*$/); next }
  /^\.TP/     { entry = 1; next }
  entry && in_directives && /^\.B / {
    name = $2; gsub(/\\-/, "-", name); gsub(/\\f[BIPR]/, "", name); gsub(/"/, "", name)
    print tolower(name)
  }
  { entry = 0 }' man/lumen.conf.5 | LC_ALL=C sort -u)
[ -n "$in_code" ] || problem "no directive rows found in src/config/*.c"
missing=$(LC_ALL=C comm -23 <(echo "$in_code") <(echo "$in_page"))
extra=$(LC_ALL=C comm -13 <(echo "$in_code") <(echo "$in_page"))
[ -z "$missing" ] || problem "directives read by src/config/ but not in lumen.conf(5):" $missing
[ -z "$extra" ] || problem "directives in lumen.conf(5) that src/config/ does not read:" $extra

command -v groff >/dev/null || { problem "groff is not installed (make deps)"; exit 1; }
for page in man/*.[1-8]; do
  warnings=$(groff -man -ww -z "$page" 2>&1)
  [ -z "$warnings" ] || problem "$page: groff warns:" "$warnings"
done
exit $status
