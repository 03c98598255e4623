#!/usr/bin/env bash
# The build's layering check (tests/build/check-layers.sh): clean on the real
# libraries, and failing, naming layer, object and symbol, when a lower
# layer's library is given a deliberate upward reference.
. "$(dirname "$0")/lib.sh"
lumen_setup
CHECK="$ROOT/tests/build/check-layers.sh"
CC=${CC:-cc}

out=$("$CHECK" "$ROOT/$BUILD" 2>&1); rc=$?
expect_eq "the real libraries pass" "0" "$rc"
expect_eq "and print nothing" "" "$out"

# A copy of the libraries whose proto layer calls into the server layer.
mkdir -p "$TMP/libs"
cp "$ROOT/$BUILD"/lib*.a "$TMP/libs/"
cat > "$TMP/upward.c" <<'C'
struct server;
struct ber_view { const unsigned char *ptr; unsigned long len; };
const void *server_find_database(const struct server *s, struct ber_view ndn);
const void *proto_reaches_up(const struct server *s)
{
	struct ber_view none = { 0, 0 };
	return server_find_database(s, none);
}
C
$CC -c "$TMP/upward.c" -o "$TMP/upward.o"
ar rs "$TMP/libs/libproto.a" "$TMP/upward.o" 2>/dev/null
out=$("$CHECK" "$TMP/libs" 2>&1); rc=$?
expect_eq "an upward reference fails the check" "1" "$rc"
check "it names layer, object, symbol and owner" \
  grep -q "proto: upward.o uses server_find_database (defined by server)" <<< "$out"

# A model object using config is caught too (not only proto -> server).
cp "$ROOT/$BUILD"/lib*.a "$TMP/libs/"
cat > "$TMP/upward2.c" <<'C'
int config_load(const char *path, void *out);
int model_reaches_up(void) { return config_load("x", 0); }
C
$CC -c "$TMP/upward2.c" -o "$TMP/upward2.o"
ar rs "$TMP/libs/libmodel.a" "$TMP/upward2.o" 2>/dev/null
out=$("$CHECK" "$TMP/libs" 2>&1); rc=$?
expect_eq "model -> config fails too" "1" "$rc"
check "names config_load" grep -q "model: upward2.o uses config_load (defined by config)" <<< "$out"

# The server calling back-mdb or LMDB directly (the old escape hatch) fails.
cp "$ROOT/$BUILD"/lib*.a "$TMP/libs/"
cat > "$TMP/hatch.c" <<'C'
struct backend;
void *backend_store(struct backend *be);
void *server_reaches_the_store(struct backend *be) { return backend_store(be); }
C
$CC -c "$TMP/hatch.c" -o "$TMP/hatch.o"
ar rs "$TMP/libs/libserver.a" "$TMP/hatch.o" 2>/dev/null
out=$("$CHECK" "$TMP/libs" 2>&1); rc=$?
expect_eq "the server reaching back-mdb directly fails" "1" "$rc"
check "names backend_store" grep -q "server: uses backend_store (storage only through database.h)" <<< "$out"

# Headers are grouped by layer (include/<layer>/) and a layer's sources are
# compiled with its own and the lower layers' folders only: an upward
# #include does not compile.
includes_of() {
  make -s -C "$ROOT" --no-print-directory --eval "print-includes: ; @echo \$(INCLUDES_$1)" \
    print-includes
}
model_includes=$(cd "$ROOT" && includes_of model)
expect_eq "model sees proto and model headers only" "-Iinclude/proto -Iinclude/model" \
  "$model_includes"
printf '#include "dn.h"\n#include "ber.h"\nint model_ok;\n' > "$TMP/model_ok.c"
check "a model source including model and proto headers compiles" \
  bash -c "cd '$ROOT' && $CC $model_includes -D_GNU_SOURCE -c '$TMP/model_ok.c' -o '$TMP/model_ok.o'"
printf '#include "server.h"\nint model_up;\n' > "$TMP/model_up.c"
rc=0; out=$(cd "$ROOT" && $CC $model_includes -c "$TMP/model_up.c" -o "$TMP/model_up.o" 2>&1) || rc=$?
expect_eq "a model source including a server header does not compile" "1" "$rc"
check "the compiler names the missing header" grep -q "server.h" <<< "$out"
proto_includes=$(cd "$ROOT" && includes_of proto)
printf '#include "dn.h"\nint proto_up;\n' > "$TMP/proto_up.c"
rc=0; (cd "$ROOT" && $CC $proto_includes -c "$TMP/proto_up.c" -o "$TMP/proto_up.o" 2>/dev/null) || rc=$?
expect_eq "a proto source including a model header does not compile" "1" "$rc"

rm -f "$TMP/libs/libserver.a"
"$CHECK" "$TMP/libs" >/dev/null 2>&1; rc=$?
expect_eq "a missing library is an error (2)" "2" "$rc"
lumen_finish
