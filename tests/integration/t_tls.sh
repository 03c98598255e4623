#!/usr/bin/env bash
# TLS: a test CA and server certificate made here with openssl; ldaps:// and
# StartTLS with ldapsearch (with and without the CA), TLS 1.1 refused,
# StartTLS twice / on ldaps / behind another request (operationsError), a
# failed StartTLS handshake and a stalled ldaps handshake close the
# connection, security simple_bind=, StartTLS answers counted as successes
# in /metrics, and start-up errors naming the file.
. "$(dirname "$0")/lib.sh"
lumen_setup
H="$ROOT/tests/integration"

# --- certificates --------------------------------------------------------
(
  cd "$TMP" &&
  openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 \
    -subj "/CN=Lumen Test CA" >/dev/null 2>&1 &&
  openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr \
    -subj "/CN=localhost" >/dev/null 2>&1 &&
  printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' > san.ext &&
  openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
    -out server.pem -days 2 -extfile san.ext >/dev/null 2>&1 &&
  openssl req -newkey rsa:2048 -nodes -keyout other.key -out other.csr \
    -subj "/CN=other" >/dev/null 2>&1
) && ok "test CA and server certificate" || fail "test CA and server certificate"

TLSCONF="TLSCertificateFile $TMP/server.pem
TLSCertificateKeyFile $TMP/server.key
TLSCACertificateFile $TMP/ca.pem
tls_handshake_timeout 2"

# --- start-up errors name the file and the reason -------------------------
write_config "TLSCertificateFile $TMP/server.pem
TLSCertificateKeyFile $TMP/missing.key"
out=$("$LUMEND" -T -f "$TMP/slapd.conf" 2>&1)
case "$out" in *"$TMP/missing.key"*"No such file"*) ok "unreadable key: names the file";;
  *) fail "unreadable key: names the file" "$out";; esac
write_config "TLSCertificateFile $TMP/server.pem
TLSCertificateKeyFile $TMP/other.key"
out=$("$LUMEND" -T -f "$TMP/slapd.conf" 2>&1)
case "$out" in *"$TMP/other.key"*"does not match"*) ok "key/certificate mismatch: names the file";;
  *) fail "key/certificate mismatch: names the file" "$out";; esac
write_config "TLSProtocolMin 3.2"
out=$("$LUMEND" -T -f "$TMP/slapd.conf" 2>&1)
case "$out" in *"TLSProtocolMin"*"1.2"*) ok "TLSProtocolMin below TLS 1.2 refused";;
  *) fail "TLSProtocolMin below TLS 1.2 refused" "$out";; esac
write_config ""
out=$("$LUMEND" -f "$TMP/slapd.conf" -h "ldaps://127.0.0.1:$(free_port)/" -d stats 2>&1)
case "$out" in *"ldaps"*"TLSCertificateFile"*) ok "ldaps:// without TLS files refused";;
  *) fail "ldaps:// without TLS files refused" "$out";; esac

# --- a server with ldap:// and ldaps:// -----------------------------------
MPORT=$(free_port)
write_config "$TLSCONF
security simple_bind=128
metrics-listen 127.0.0.1:$MPORT"
SPORT=$(free_port)
SURI="ldaps://127.0.0.1:$SPORT"
"$LUMEND" -f "$TMP/slapd.conf" -h "$URI/ $SURI/" -d stats 2> "$TMP/lumend.log" &
LUMEN_PID=$!
for _ in $(seq 1 100); do
  ldapsearch -x -H "$URI" -b "" -s base -LLL 1.1 >/dev/null 2>&1 && break
  sleep 0.1
done
export LDAPTLS_REQCERT=demand
unset LDAPTLS_CACERT
CA=(env LDAPTLS_CACERT="$TMP/ca.pem")
NOCA=(env LDAPTLS_CACERT="$TMP/other.csr")

expect_eq "StartTLS advertised" "supportedExtension: 1.3.6.1.4.1.1466.20037" \
  "$(ldapsearch -x -H "$URI" -b "" -s base -LLL supportedExtension | grep 20037)"
check "ldapsearch -ZZ with the CA" "${CA[@]}" ldapsearch -x -ZZ -H "$URI" -b "" -s base 1.1
check "ldapsearch ldaps:// with the CA" "${CA[@]}" ldapsearch -x -H "$SURI" -b "" -s base 1.1
rc=$(ldap_rc "${NOCA[@]}" ldapsearch -x -ZZ -H "$URI" -b "" -s base 1.1)
[ "$rc" != 0 ] && ok "-ZZ without the CA fails" || fail "-ZZ without the CA fails"
rc=$(ldap_rc "${NOCA[@]}" ldapsearch -x -H "$SURI" -b "" -s base 1.1)
[ "$rc" != 0 ] && ok "ldaps:// without the CA fails" || fail "ldaps:// without the CA fails"

# security simple_bind=128: a password only over TLS.
expect_eq "simple bind in the clear: confidentialityRequired" 13 \
  "$(ldap_rc ldapwhoami -x -H "$URI" -D "$ADMIN_DN" -w "$ADMIN_PW")"
expect_eq "simple bind after StartTLS" "dn:$ADMIN_DN" \
  "$("${CA[@]}" ldapwhoami -x -ZZ -H "$URI" -D "$ADMIN_DN" -w "$ADMIN_PW" 2>&1)"
expect_eq "simple bind over ldaps" "dn:$ADMIN_DN" \
  "$("${CA[@]}" ldapwhoami -x -H "$SURI" -D "$ADMIN_DN" -w "$ADMIN_PW" 2>&1)"
expect_eq "anonymous bind in the clear still works" "anonymous" "$(ldapwhoami -x -H "$URI" 2>&1)"

# A directory over TLS reads the same as in the clear (bulk output, writes).
out=$("${CA[@]}" ldapadd -x -H "$SURI" -D "$ADMIN_DN" -w "$ADMIN_PW" -f "$DATA/tree.ldif" 2>&1) &&
  ok "ldapadd over ldaps" || fail "ldapadd over ldaps" "$out"
plain=$(ldapsearch -x -H "$URI" -LLL -b dc=example,dc=com -z 0 '*' '+' 2>&1 | sorted_ldif)
tls=$("${CA[@]}" ldapsearch -x -H "$SURI" -LLL -b dc=example,dc=com -z 0 '*' '+' 2>&1 | sorted_ldif)
expect_eq "search over ldaps equals the clear one" "$plain" "$tls"
[ -n "$plain" ] && ok "search found entries" || fail "search found entries"

# --- raw protocol checks (python ssl) ------------------------------------
PYOUT=$(cd "$H" && "$PYTHON" -W ignore - "$PORT" "$SPORT" "$TMP/ca.pem" 2>&1 <<'PY'
import socket, ssl, sys, time
sys.path.insert(0, ".")
from lumen_harness import extended, read_responses
port, sport, ca = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
STARTTLS = "1.3.6.1.4.1.1466.20037"
WHOAMI = "1.3.6.1.4.1.4203.1.11.3"
def ctx(maxv=None, minv=None):
    c = ssl.create_default_context(cafile=ca)
    c.check_hostname = False
    if maxv: c.maximum_version = maxv
    if minv: c.minimum_version = minv
    return c
def say(label, cond, detail=""):
    print(("ok " if cond else "FAIL ") + label + ("" if cond else " :: " + str(detail)))

# StartTLS, then StartTLS again over TLS: operationsError (1).
s = socket.create_connection(("127.0.0.1", port), timeout=5)
s.sendall(extended(1, STARTTLS))
r, _ = read_responses(s, 1)
say("StartTLS succeeds", r and r[0].code == 0, r and r[0].code)
t = ctx().wrap_socket(s, server_hostname="localhost")
t.sendall(extended(2, STARTTLS))
r, _ = read_responses(t, 1)
say("StartTLS twice: operationsError", r and r[0].code == 1, r and r[0].code)
t.sendall(extended(3, WHOAMI))
r, _ = read_responses(t, 1)
say("the TLS session still works", r and r[0].code == 0, r and r[0].code)
t.close()

# StartTLS on ldaps: operationsError.
t = ctx().wrap_socket(socket.create_connection(("127.0.0.1", sport), timeout=5),
                      server_hostname="localhost")
t.sendall(extended(1, STARTTLS))
r, _ = read_responses(t, 1)
say("StartTLS on ldaps: operationsError", r and r[0].code == 1, r and r[0].code)
t.close()

# StartTLS with another request right behind it: operationsError, and the
# other request is still answered in the clear.
s = socket.create_connection(("127.0.0.1", port), timeout=5)
s.sendall(extended(1, STARTTLS) + extended(2, WHOAMI))
r, _ = read_responses(s, 2)
codes = sorted((x.msgid, x.code) for x in r)
say("StartTLS with a request behind it: operationsError", codes == [(1, 1), (2, 0)], codes)
s.close()

# A failed StartTLS handshake closes the connection.
s = socket.create_connection(("127.0.0.1", port), timeout=5)
s.sendall(extended(1, STARTTLS))
r, _ = read_responses(s, 1)
s.sendall(b"this is not a TLS ClientHello\r\n" * 4)
r, closed = read_responses(s, 1, timeout=10)
say("failed StartTLS handshake: connection closed", closed and not r, (closed, r))
s.close()

# TLS 1.1 refused, TLS 1.2 and 1.3 accepted.
for name, version, expect in (("TLS 1.1 refused", ssl.TLSVersion.TLSv1_1, False),
                              ("TLS 1.2 accepted", ssl.TLSVersion.TLSv1_2, True),
                              ("TLS 1.3 accepted", ssl.TLSVersion.TLSv1_3, True)):
    c = ctx(maxv=version, minv=version)
    if version == ssl.TLSVersion.TLSv1_1:
        c.set_ciphers("ALL:@SECLEVEL=0")
    try:
        t = c.wrap_socket(socket.create_connection(("127.0.0.1", sport), timeout=5),
                          server_hostname="localhost")
        got = True
        t.close()
    except (ssl.SSLError, OSError) as e:
        got = False
    say(name, got == expect)

# A client that stalls mid-handshake is dropped (tls_handshake_timeout 2).
s = socket.create_connection(("127.0.0.1", sport), timeout=15)
s.sendall(b"\x16\x03\x01")            # the start of a record, then nothing
r, closed = read_responses(s, 1, timeout=12)
say("stalled handshake: dropped", closed, r)
s.close()
PY
)
while IFS= read -r line; do
  case "$line" in "ok "*) ok "${line#ok }";; "FAIL "*) fail "${line#FAIL }";; *) fail "python: $line";; esac
done <<< "$PYOUT"
# Every StartTLS above either succeeded or got operationsError: none may be
# counted as anything else (a success that skipped the result path was
# filed as "other").
ext=$(curl -s "http://127.0.0.1:$MPORT/metrics" | grep '^lumen_operations_total{type="extended"')
case "$ext" in *'result="success"'*) ok "metrics: extended operations counted as success";;
  *) fail "metrics: extended operations counted as success" "$ext";; esac
echo "$ext" | grep -v 'code="0"\|code="1"' | grep -q . &&
  fail "metrics: StartTLS counted only as success or operationsError" "$ext" ||
  ok "metrics: StartTLS counted only as success or operationsError"
grep -q "TLS handshake timed out" "$TMP/lumend.log" && ok "log: handshake timeout" ||
  fail "log: handshake timeout" "$(tail -5 "$TMP/lumend.log")"
grep -q "TLS established tls_ssf=" "$TMP/lumend.log" && ok "log: TLS established with its ssf" ||
  fail "log: TLS established with its ssf"
lumen_stop
lumen_finish
