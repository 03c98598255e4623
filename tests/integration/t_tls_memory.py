#!/usr/bin/env python3
"""TLS sessions in the connections' memory (conn_memory.h, tls_memory.h).

Idle: 60 ldaps:// and 20 StartTLS connections, each answered once, then
idle: /metrics (lumen_connection_memory_tls_bytes) and cn=Monitor
(cn=Memory TLS) show what OpenSSL holds for them, close to the per-session
figure measured in tests/unit/test_tls_memory.c (14.4 KiB; at most
TLS_MEMORY_IDLE each, with some slack for first fetches); the
reported total is the sum of its kinds plus the I/O threads' scratch
buffers; 20 stalled handshakes (TCP open, no ClientHello) are each counted
at the room reserved for a handshake (TLS_MEMORY_HANDSHAKE_PEAK); once all
close the TLS bytes are 0 again.

Refused: under a conn_total_memory of 256 KiB, ldaps:// connections are
admitted while their base and handshake room fit (each served), then
refused (closed at once, logged once, counted), while plain connections
are still admitted and served; the bases and TLS sessions stay under the
bound; a StartTLS that would pass it is answered busy (51) and the
connection goes on in the clear; once the TLS connections close, StartTLS
works again and its session is counted.

Hostile ClientHello: a first record announcing a 120 KB ClientHello makes
OpenSSL allocate room for all of it; that is counted (past the handshake's
reserved room), and under a bound it does not fit the handshake is closed
("TLS handshake stopped", cn=Memory TLS Refused) while others are served.

OpenLDAP's slapd has no memory accounting to compare with.
"""
import os
import re
import socket
import ssl
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from lumen_harness import (ROOT, wait_port, Lumend, Results, free_port,  # noqa: E402
                           read_responses, search, extended, self_signed_certificate,
                           tls_client_context)

R = Results("tls_memory")
STARTTLS = "1.3.6.1.4.1.1466.20037"


def header_constant(name):
    with open(os.path.join(ROOT, "include", "server", "tls_memory.h")) as f:
        return int(re.search(rf"#define {name} (\d+)u", f.read()).group(1))


PEAK = header_constant("TLS_MEMORY_HANDSHAKE_PEAK")
IDLE = header_constant("TLS_MEMORY_IDLE")


class TlsServer(Lumend):
    """lumend on ldap:// and ldaps:// with a self-signed certificate."""

    def __init__(self, extra=""):
        import tempfile
        self.cert_dir = tempfile.mkdtemp(prefix="lumen-tlsmem-")
        self_signed_certificate(self.cert_dir)
        self.ldaps_port = free_port()
        self.mport = free_port()
        super().__init__(f"TLSCertificateFile {self.cert_dir}/server.pem\n"
                         f"TLSCertificateKeyFile {self.cert_dir}/server.key\n"
                         f"metrics-listen 127.0.0.1:{self.mport}\n{extra}",
                         extra_urls=(f"ldaps://127.0.0.1:{self.ldaps_port}/",))
        wait_port(self.mport)

    def ldaps(self):
        raw = socket.create_connection(("127.0.0.1", self.ldaps_port), timeout=10)
        return tls_client_context().wrap_socket(raw)

    def starttls(self, msgid=1):
        """A plain connection and its StartTLS answer: (socket, code)."""
        s = self.connect(timeout=10)
        s.sendall(extended(msgid, STARTTLS))
        r, _ = read_responses(s, 1, timeout=10)
        return s, (r[0].code if r else None)


def served(s, msgid=7):
    s.sendall(search(msgid, attrs=("1.1",)))
    r, _ = read_responses(s, 2, timeout=10)
    return len(r) == 2 and r[-1].code == 0


def metrics(srv):
    with urllib.request.urlopen(f"http://127.0.0.1:{srv.mport}/metrics", timeout=5) as r:
        text = r.read().decode()
    figures = {k: 0 for k in ("bytes", "base_bytes", "queued_bytes", "output_bytes",
                              "scratch_bytes", "peak_bytes")}
    figures.update({m.group(1): int(m.group(2))
                    for m in re.finditer(r"^lumen_connection_memory_(\w+) (\d+)$", text, re.M)})
    return figures


def monitor_memory(port):
    import ldap
    mon = ldap.initialize(f"ldap://127.0.0.1:{port}")
    mon.simple_bind_s("cn=admin,dc=example,dc=com", "secret")
    rs = mon.search_s("cn=Connections,cn=Monitor", ldap.SCOPE_ONELEVEL,
                      "(cn=Memory*)", ["cn", "monitorCounter"])
    mon.unbind_s()
    return {e[1]["cn"][0].decode(): int(e[1]["monitorCounter"][0]) for e in rs}


def connection_memories(port):
    """monitorConnectionMemory of every connection in cn=Monitor."""
    import ldap
    mon = ldap.initialize(f"ldap://127.0.0.1:{port}")
    mon.simple_bind_s("cn=admin,dc=example,dc=com", "secret")
    rs = mon.search_s("cn=Connections,cn=Monitor", ldap.SCOPE_ONELEVEL,
                      "(monitorConnectionMemory=*)", ["monitorConnectionMemory"])
    mon.unbind_s()
    return [int(e[1]["monitorConnectionMemory"][0]) for e in rs]


def settle(srv, key, want, seconds=5):
    """Wait until metric `key` satisfies want(value); returns the figures."""
    deadline = time.time() + seconds
    while True:
        f = metrics(srv)
        if want(f.get(key)) or time.time() >= deadline:
            return f
        time.sleep(0.1)


N_LDAPS, N_STARTTLS, N_STALLED = 60, 20, 20


def idle():
    srv = TlsServer()
    try:
        before = metrics(srv)
        R.check("idle: /metrics has the TLS kind and the scratch buffers",
                "tls_bytes" in before and before.get("scratch_bytes", 0) >= 2 * 16384, before)
        socks = []
        for i in range(N_LDAPS):
            s = srv.ldaps()
            if not served(s, i + 1):
                R.check(f"idle: ldaps connection {i} served", False)
            socks.append(s)
        for i in range(N_STARTTLS):
            s, code = srv.starttls()
            if code != 0:
                R.check(f"idle: StartTLS {i} succeeds", False, code)
                continue
            s = tls_client_context().wrap_socket(s)
            if not served(s, 2):
                R.check(f"idle: StartTLS connection {i} served", False)
            socks.append(s)
        f = settle(srv, "tls_bytes", lambda v: v is not None and v < (N_LDAPS + N_STARTTLS) * IDLE)
        mon = monitor_memory(srv.port)
        n = N_LDAPS + N_STARTTLS
        tls = f.get("tls_bytes", 0)
        print(f"  info {n} idle TLS connections: tls {tls} ({tls / n:.0f} each), "
              f"base {f.get('base_bytes')}, total {f.get('bytes')}, scratch {f.get('scratch_bytes')}")
        R.check(f"idle: {n} idle TLS sessions counted, 8 KiB to TLS_MEMORY_IDLE each "
                "(plus slack for OpenSSL's first fetches)",
                n * 8192 <= tls <= n * IDLE + 64 * 1024, (tls, n * 8192, n * IDLE))
        R.check("idle: the total is its kinds plus the scratch buffers",
                f["bytes"] == f["base_bytes"] + f["queued_bytes"] + f["output_bytes"]
                + f.get("tls_bytes", 1 << 40) + f["scratch_bytes"], f)
        R.check("idle: cn=Monitor publishes Memory TLS and Memory Scratch",
                abs(mon.get("Memory TLS", -1 << 40) - tls) <= 4 * IDLE
                and mon.get("Memory Scratch") == f["scratch_bytes"]
                and "Memory TLS Refused" in mon, mon)
        per_conn = sorted(connection_memories(srv.port))
        R.check("idle: each TLS connection's cn=Monitor entry counts its session",
                len(per_conn) >= n and per_conn[-n] >= 8192, per_conn[-n - 2:][:4])
        stalled = [socket.create_connection(("127.0.0.1", srv.ldaps_port), timeout=10)
                   for _ in range(N_STALLED)]
        f2 = settle(srv, "tls_bytes", lambda v: v is not None and v >= tls + N_STALLED * PEAK)
        grew = f2.get("tls_bytes", 0) - tls
        print(f"  info {N_STALLED} stalled handshakes: tls grew by {grew} "
              f"({grew / N_STALLED:.0f} each; reserved {PEAK})")
        R.check("idle: a handshake under way is counted at its reserved room",
                N_STALLED * PEAK <= grew <= N_STALLED * PEAK + 2 * IDLE, (grew, N_STALLED * PEAK))
        for s in socks + stalled:
            s.close()
        f3 = settle(srv, "tls_bytes", lambda v: v == 0)
        R.check("idle: closed TLS connections give their TLS bytes back (0)",
                f3.get("tls_bytes") == 0, f3)
        R.check("idle: lumend is up", srv.alive())
    finally:
        srv.stop(R)


REFUSE_TOTAL = 256 * 1024


def refuse():
    srv = TlsServer(f"conn_total_memory {REFUSE_TOTAL}")
    try:
        tls_socks, refused_at = [], None
        for i in range(40):
            try:
                s = srv.ldaps()
            except (ssl.SSLError, OSError):
                refused_at = i
                break
            if not served(s, 1):
                R.check(f"refuse: admitted ldaps connection {i} served", False)
            tls_socks.append(s)
        f = metrics(srv)
        print(f"  info conn_total_memory {REFUSE_TOTAL}: {len(tls_socks)} ldaps admitted, "
              f"refused from #{refused_at}; base {f.get('base_bytes')}, tls {f.get('tls_bytes')}")
        R.check("refuse: ldaps connections are admitted, then refused at the bound",
                len(tls_socks) >= 3 and refused_at is not None, (len(tls_socks), refused_at))
        R.check("refuse: ... at the room a handshake needs",
                f["base_bytes"] + f.get("tls_bytes", 0) + PEAK > REFUSE_TOTAL, f)
        R.check("refuse: bases and TLS sessions stay under conn_total_memory",
                f["base_bytes"] + f.get("tls_bytes", 1 << 40) <= REFUSE_TOTAL, f)
        # Requests do not count against admission (they wait): the peak may
        # pass the bound by about one small request per connection.
        R.check("refuse: the peak stays under the bound and a request per connection",
                f["peak_bytes"] - f["scratch_bytes"] <= REFUSE_TOTAL + (len(tls_socks) + 2) * 1024,
                f)
        R.check("refuse: the refusal is counted", f.get("refused_total", 0) >= 1, f)
        R.check("refuse: the log says so, once",
                srv.log_has("refusing new connections until some close")
                and srv.log_text().count("refusing new connections") == 1,
                srv.log_text()[-600:])
        plain = [srv.connect(timeout=10) for _ in range(8)]
        ok = sum(served(s, 3) for s in plain)
        R.check("refuse: plain connections below the bound are still served", ok == len(plain),
                f"{ok}/{len(plain)}")
        s, code = srv.starttls(5)
        R.check("refuse: StartTLS past the bound is answered busy (51)", code == 51, code)
        R.check("refuse: ... and the connection goes on in the clear", served(s, 6))
        plain.append(s)
        f = metrics(srv)
        R.check("refuse: the StartTLS refusal is counted",
                f.get("tls_refused_total", 0) >= 1 and f.get("tls_bytes", 1 << 40) + f["base_bytes"]
                <= REFUSE_TOTAL, f)
        for t in tls_socks:
            t.close()
        settle(srv, "tls_bytes", lambda v: v == 0)
        s, code = srv.starttls(1)
        R.check("refuse: once TLS connections close, StartTLS succeeds", code == 0, code)
        if code == 0:
            s = tls_client_context().wrap_socket(s)
            R.check("refuse: ... its session serves and is counted",
                    served(s, 2) and 8192 <= metrics(srv).get("tls_bytes", 0) <= IDLE + 32768,
                    metrics(srv))
        s.close()
        t = srv.ldaps()
        R.check("refuse: and ldaps:// is admitted again", served(t, 1))
        t.close()
        for p in plain:
            p.close()
        f = settle(srv, "tls_bytes", lambda v: v == 0)
        R.check("refuse: TLS bytes back to 0", f.get("tls_bytes") == 0, f)
    finally:
        srv.stop(R)


def hello_start(claimed):
    """The first record of a ClientHello that says it is `claimed` bytes
    long: OpenSSL makes room for all of it at once."""
    body = b"\x03\x03" + os.urandom(32) + b"\x00" + b"\x00" * 1000
    handshake = b"\x01" + claimed.to_bytes(3, "big") + body
    return b"\x16\x03\x01" + len(handshake).to_bytes(2, "big") + handshake


HELLO_CLAIMED = 120000
HELLO_TOTAL = 320 * 1024


def hostile_hello():
    """A ClientHello announced at 120 KB: the session holds that much while
    it waits for the rest. Counted exactly; under a bound it does not fit,
    the handshake is stopped (closed, logged, counted) and the others go on."""
    srv = TlsServer(f"conn_total_memory {HELLO_TOTAL}")
    try:
        h = socket.create_connection(("127.0.0.1", srv.ldaps_port), timeout=10)
        h.sendall(hello_start(HELLO_CLAIMED))
        f = settle(srv, "tls_bytes", lambda v: v is not None and v > HELLO_CLAIMED)
        print(f"  info a ClientHello announced at {HELLO_CLAIMED} bytes: tls {f.get('tls_bytes')}")
        R.check("hello: a large ClientHello's buffer is counted, past the reserved room",
                HELLO_CLAIMED < f.get("tls_bytes", 0) <= HELLO_CLAIMED + 2 * PEAK, f)
        R.check("hello: ... within the bound, the handshake goes on",
                srv.alive() and "TLS handshake stopped" not in srv.log_text(), f)
        h.close()
        settle(srv, "tls_bytes", lambda v: v == 0)
        # Fill the bound with stalled handshakes (each at its room), then
        # the same ClientHello no longer fits.
        stalled = []
        for _ in range(3):
            stalled.append(socket.create_connection(("127.0.0.1", srv.ldaps_port), timeout=10))
        settle(srv, "tls_bytes", lambda v: v is not None and v >= 3 * PEAK)
        # The plain connection is admitted (served once) before the hostile
        # handshake starts: admission weighs the fixed bytes of every
        # connection, and one accepted while the ClientHello's 120 KB are
        # held would rightly be refused.
        plain = srv.connect(timeout=10)
        R.check("hello: a plain connection is admitted beside the stalled handshakes",
                served(plain, 1))
        h = socket.create_connection(("127.0.0.1", srv.ldaps_port), timeout=10)
        h.sendall(hello_start(HELLO_CLAIMED))
        _, closed = read_responses(h, 1, timeout=10)
        f = metrics(srv)
        R.check("hello: a handshake growing past the bound is closed", closed, f)
        R.check("hello: ... logged and counted",
                srv.log_has("TLS handshake stopped") and f.get("tls_refused_total", 0) >= 1,
                (f, srv.log_text()[-600:]))
        f = settle(srv, "tls_bytes", lambda v: v is not None and v <= 3 * PEAK + IDLE)
        R.check("hello: ... its bytes are given back",
                f.get("tls_bytes", 1 << 40) <= 3 * PEAK + IDLE
                and f["base_bytes"] + f.get("tls_bytes", 1 << 40) <= HELLO_TOTAL, f)
        R.check("hello: ... and other connections are served", served(plain, 2))
        for s in stalled + [plain, h]:
            s.close()
    finally:
        srv.stop(R)


def main():
    idle()
    refuse()
    hostile_hello()
    R.finish()


if __name__ == "__main__":
    main()
