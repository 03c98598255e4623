#!/bin/sh
# replication.sh — replication lag, initial refresh and write throughput
# with persistent consumers, Lumen→Lumen against OpenLDAP→OpenLDAP in one
# run (bench/replication.py says what is measured and how).
#
#   bench/replication.sh --out DIR [--entries N] [--servers "openldap lumen"]
#                        [--lag-rate R] [--lag-seconds S] [--duration S]
#                        [--sync] [--nice N]
#
# BUILD=DIR (default build) picks lumend, lumenadd, lumengen, lumenbench
# (make all bench-build). Debian's slapd is installed when missing, with
# its service start blocked (install-deps.sh); nothing system-wide runs.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$(pwd)/$BUILD ;; esac
for tool in lumend lumenadd lumengen lumenbench; do
  [ -x "$BUILD/$tool" ] || { echo "replication.sh: $BUILD/$tool missing: make all bench-build" >&2; exit 1; }
done
"$here/install-deps.sh"
[ -e /usr/lib/ldap/syncprov.so ] || ls /usr/lib/ldap/syncprov* >/dev/null 2>&1 ||
  { echo "replication.sh: OpenLDAP's syncprov module missing from /usr/lib/ldap" >&2; exit 1; }
exec /usr/bin/python3 "$here/replication.py" --build "$BUILD" "$@"
