#!/usr/bin/env python3
# run.sh: sanitizer pass only (a sweep of failures; see tests/integration/run.sh)
"""Allocation failures during a TLS handshake (tests/fault/fault_inject.c:
lumend-faults fails the Nth allocation counted while the test holds the
window open with SIGUSR2). OpenSSL allocates through tls_memory.h's hooks,
which call the wrapped malloc, so its allocations fail too.

A traced run counts the allocations of the first ldaps:// connection
(accept, handshake, one search, close); then, for a spread of N over that
count (every 4th or so),
lumend-faults fails the Nth one and each run must show:
  - the client got its answer, or a failed handshake / closed connection;
    never a hang;
  - the daemon still serves a new ldaps:// connection (before tls.c's
    start-up handshake with itself, a failure in OpenSSL's one-time set-up
    during the first client handshake, e.g. alloc:246 and alloc:249 in
    crypto/stack/stack.c, made every later handshake fail);
  - once every connection is closed the TLS bytes in /metrics are 0 again
    (no session's account is left counted on an error path);
  - lumend exits 0 on SIGTERM, and the sanitizer build reports nothing.

Start-up: lumend-faults counting from its start fails, in turn, 50 of the
last 3,000 allocations before it is ready (the TLS context and its
handshake with itself) and every one of the last 40 (the threads): each
run exits 1 with a message, or starts and serves ldaps://; never a crash
(two were: begin_shutdown and io_thread_request_stop on a start-up that
failed before the accept events or an I/O thread's events existed).
"""
import os
import re
import socket
import ssl
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import lumen_harness as h  # noqa: E402

R = h.Results("t_tls_faults.py")
BUILD = os.path.join(h.ROOT, h.BUILD)
TMP = tempfile.mkdtemp(prefix="lumen-it-tlsfaults-")
POINTS = 160


def config_text(d, mport):
    schema = "".join(f"include {h.ROOT}/schema/{n}.schema\n" for n in ("core", "cosine"))
    return (schema + f"threads 2\nlistener-threads 1\nmetrics-listen 127.0.0.1:{mport}\n"
            f"TLSCertificateFile {TMP}/server.pem\nTLSCertificateKeyFile {TMP}/server.key\n"
            'database mdb\nsuffix "dc=example,dc=com"\n'
            f'rootdn "cn=admin,dc=example,dc=com"\nrootpw secret\ndirectory {d}/db\n')


class Faulty(h.FaultyLumend):
    """lumend-faults on ldaps:// with /metrics, failing `spec`."""

    def __init__(self, spec, name, armed_by_signal=True):
        d = os.path.join(TMP, name)
        os.makedirs(os.path.join(d, "db"))
        self.mport = h.free_port()
        with open(f"{d}/slapd.conf", "w") as f:
            f.write(config_text(d, self.mport))
        super().__init__(d, spec, scheme="ldaps", armed_by_signal=armed_by_signal,
                         must_start=False)

    def tls_bytes(self):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.mport}/metrics",
                                        timeout=5) as r:
                text = r.read().decode()
        except OSError:
            return None
        m = re.search(r"^lumen_connection_memory_tls_bytes (\d+)$", text, re.M)
        return int(m.group(1)) if m else None

    def settled_tls_bytes(self, seconds=5):
        deadline = time.time() + seconds
        while True:
            v = self.tls_bytes()
            if v == 0 or time.time() >= deadline:
                return v
            time.sleep(0.05)


def ldaps_search(port):
    """One ldaps connection answering one search: 'ok', 'closed' or 'timeout'."""
    try:
        with h.tls_client_context().wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10)) as s:
            s.sendall(h.search(1, attrs=("1.1",)))
            r, closed = h.read_responses(s, 2, timeout=10)
            if len(r) == 2 and r[-1].code == 0:
                return "ok"
            return "closed" if closed or r else "timeout"
    except socket.timeout:
        return "timeout"
    except (ssl.SSLError, OSError):
        return "closed"


def run(spec, name):
    """One run: (outcome, problems, stderr)."""
    problems = []
    srv = Faulty(spec, name)
    try:
        srv.window()
        outcome = ldaps_search(srv.port)
        time.sleep(0.05)
        srv.window()
        if outcome == "timeout":
            problems.append("no answer and not closed (timeout)")
        if ldaps_search(srv.port) != "ok":
            problems.append("a new ldaps connection is not served")
        left = srv.settled_tls_bytes()
        if left != 0:
            problems.append(f"TLS bytes left counted: {left}")
    finally:
        problems += srv.stop_problems()
    return outcome, problems, srv.stderr()


def start_up(spec, name):
    """lumend-faults counting from its start: (started, problems, stderr)."""
    problems = []
    srv = Faulty(spec, name, armed_by_signal=False)
    if srv.ready:
        # The count goes on past ready: the failure may fall on this first
        # connection, which is then closed; the next one is served.
        if ldaps_search(srv.port) != "ok" and ldaps_search(srv.port) != "ok":
            problems.append("started but does not serve ldaps")
        rc = srv.stop()
        if rc != 0:
            problems.append(f"exit status {rc}")
    else:
        rc = srv.stop()    # it exited (or hangs: killed)
        if rc == "hang" or rc <= 0:
            problems.append(f"start-up failed with exit status {rc}")
        elif "lumend: " not in srv.stderr():
            problems.append("start-up failed without saying why")
    reports = srv.sanitizer_reports()
    if reports:
        problems.append("sanitizer: " + reports[:2000])
    return srv.ready, problems, srv.stderr()


# The last 3,000 allocations before ready (the TLS context and its
# handshake with itself), 50 of them, and every one of the last 40 (the
# threads starting).
STARTUP_TAIL, STARTUP_POINTS, STARTUP_EVERY = 3000, 50, 40


def start_up_faults():
    """The allocations just before lumend is ready: the TLS context, its
    handshake with itself, the threads. Each failure ends start-up with a
    message and exit status 1, or lumend starts and serves (the handshake
    with itself is best effort); never a crash. (A failure starting the
    workers crashed in begin_shutdown, before the accept events existed.)"""
    ready, problems, err = start_up("trace", "startup-trace")
    before_ready = err[:err.find(" ready: ")] if ready else ""
    calls = re.findall(r"lumen-fault: call alloc #(\d+)", before_ready)
    last = int(calls[-1]) if calls else 0
    R.check("start-up: the trace counts allocations up to ready", ready and last > STARTUP_TAIL,
            (ready, problems, last))
    step = max(1, STARTUP_TAIL // STARTUP_POINTS)
    tally, failures = {}, []
    plan = sorted(set(range(last - STARTUP_TAIL + 1, last + 1, step))
                  | set(range(last - STARTUP_EVERY + 1, last + 1)))
    ends = h.map_in_parallel(lambda n: start_up(f"alloc:{n}", f"startup-{n}"), plan)
    for n, (started, problems, err) in zip(plan, ends):
        key = "started" if started else "refused to start"
        tally[key] = tally.get(key, 0) + 1
        if problems:
            failures.append(f"alloc:{n}: {key}: {problems} {err[-300:]}")
    print(f"  info start-up: {sum(tally.values())} failure points in the last {STARTUP_TAIL} "
          f"allocations: {tally}")
    R.check("start-up: each failure exits 1 with a message or starts and serves",
            not failures, "\n".join(failures[:4]))


def main():
    h.self_signed_certificate(TMP)
    outcome, problems, err = run("trace", "trace")
    m = re.findall(r"lumen-fault: counted alloc=(\d+)", err)
    total = int(m[0]) if m else 0
    R.check("clean run: served, nothing left counted", outcome == "ok" and not problems,
            (outcome, problems))
    R.check("the window counts the connection's allocations", total > 50, err[-500:])
    step = max(1, total // POINTS)
    plan = sorted(set(list(range(1, 6)) + list(range(6, total + 1, step))))
    tally, failures = {}, []
    ends = h.map_in_parallel(lambda n: run(f"alloc:{n}", f"alloc-{n}"), plan)
    for n, (outcome, problems, err) in zip(plan, ends):
        fired = "fired alloc" in err
        tally[outcome] = tally.get(outcome, 0) + 1
        if problems:
            failures.append(f"alloc:{n} (fired {fired}): {outcome}: {problems}")
    print(f"  info {len(plan)} failure points of {total} allocations: {tally}")
    R.check(f"{len(plan)} allocation failures: answered or closed, serving, TLS bytes back to 0",
            not failures, "\n".join(failures[:6]))
    R.check("some failures closed the connection", tally.get("closed", 0) > 0, tally)
    start_up_faults()
    R.finish()


if __name__ == "__main__":
    main()
