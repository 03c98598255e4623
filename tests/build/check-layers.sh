#!/usr/bin/env bash
# check-layers.sh BUILD_DIR — fail when a layer's library uses a symbol that a
# higher layer defines (DESIGN.md: a lower layer never includes or links a
# higher one), or when the server or config layer reaches LMDB or back-mdb
# other than through the database interface. Layers, lowest first: proto
# model backmdb config server.
#
# Every undefined symbol of lib<layer>.a is looked up among the symbols the
# libraries above it define; any hit is printed as
#   layer: object uses symbol (defined by higher-layer)
# and the exit status is 1. Exit 2 when a library is missing.
set -euo pipefail
export LC_ALL=C
build=${1:-build}
layers=(proto model backmdb config server)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for layer in "${layers[@]}"; do
  lib="$build/lib$layer.a"
  [ -f "$lib" ] || { echo "check-layers: $lib missing" >&2; exit 2; }
  nm -g --defined-only "$lib" | awk 'NF == 3 { print $3 }' | sort -u > "$tmp/defined.$layer"
done

bad=0
for i in "${!layers[@]}"; do
  layer=${layers[$i]}
  # "object.o:" headers, then "U symbol" lines: keep object and symbol.
  nm -u "$build/lib$layer.a" |
    awk '/:$/ { object = substr($0, 1, length($0) - 1); next }
         NF >= 2 { print $NF "\t" object }' | sort -u > "$tmp/undefined.$layer"
  for j in "${!layers[@]}"; do
    [ "$j" -gt "$i" ] || continue
    higher=${layers[$j]}
    hits=$(join -t $'\t' "$tmp/undefined.$layer" "$tmp/defined.$higher" || true)
    if [ -n "$hits" ]; then
      while IFS=$'\t' read -r symbol object; do
        echo "check-layers: $layer: $object uses $symbol (defined by $higher)" >&2
      done <<< "$hits"
      bad=1
    fi
  done
done
# The server and the configuration reach storage only through the database
# interface (database.h): no LMDB call, no back-mdb function but the one
# that opens a database behind the interface.
for layer in config server; do
  direct=$(nm -u "$build/lib$layer.a" | awk '{ print $NF }' |
           grep -E '^(mdb_|backend_)' | grep -vx 'mdb_database_open' | sort -u || true)
  if [ -n "$direct" ]; then
    for symbol in $direct; do
      echo "check-layers: $layer: uses $symbol (storage only through database.h)" >&2
    done
    bad=1
  fi
done
exit $bad
