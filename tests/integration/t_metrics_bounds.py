#!/usr/bin/env python3
"""The /metrics listener's bounds (metrics_http.h): with descriptors
exhausted (lumend under a low RLIMIT_NOFILE, filled with LDAP connections)
a scrape does not make the listener spin or flood the log (CPU time of the
process stays small; the pause is logged once) and it answers again once
descriptors are free; a client dripping its request is closed at
metrics-timeout; a flood of idle connections beyond metrics-max-connections
waits in the backlog, is closed at the deadline, and scrapes work after."""
import os
import resource
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from lumen_harness import wait_port, Lumend, Results, free_port  # noqa: E402

R = Results("metrics_bounds")
NOFILE = 64
CAP, TIMEOUT = 4, 2
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK    # utime + stime


def open_fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def scrape(port, timeout=5):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
    data = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except socket.timeout:
        pass
    s.close()
    return data



def closed_by_server(sock, wait):
    """Wait up to `wait` s for EOF/reset from the server."""
    sock.settimeout(wait)
    try:
        return sock.recv(1) == b""
    except socket.timeout:
        return False
    except OSError:
        return True


def low_nofile():
    resource.setrlimit(resource.RLIMIT_NOFILE, (NOFILE, NOFILE))


def exhaustion():
    mport = free_port()
    srv = Lumend(f"metrics-listen 127.0.0.1:{mport}\n", preexec_fn=low_nofile)
    pid = srv.proc.pid
    held = []
    try:
        wait_port(mport)
        ok = scrape(mport)[:12] in (b"HTTP/1.1 200", b"HTTP/1.0 200")
        R.check("EMFILE: scrape works before", ok)
        # Fill every descriptor lumend has with idle LDAP connections.
        stuck = 0
        while stuck < 5 and len(held) < 2 * NOFILE:
            before = open_fds(pid)
            held.append(socket.create_connection(("127.0.0.1", srv.port), timeout=5))
            time.sleep(0.05)
            stuck = stuck + 1 if open_fds(pid) == before else 0
        R.check("EMFILE: lumend out of descriptors", open_fds(pid) >= NOFILE - 1, open_fds(pid))
        # A scrape now waits in the backlog: accept fails with EMFILE.
        pending = socket.create_connection(("127.0.0.1", mport), timeout=5)
        pending.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
        time.sleep(0.5)
        cpu0, t0 = cpu_seconds(pid), time.monotonic()
        time.sleep(3)
        cpu = cpu_seconds(pid) - cpu0
        wall = time.monotonic() - t0
        print(f"  info EMFILE: {cpu:.2f} CPU s in {wall:.2f} s")
        R.check("EMFILE: the listener does not spin (CPU < 20% of wall time)", cpu < 0.2 * wall,
                f"{cpu:.2f} CPU s in {wall:.2f} s")
        lines = [l for l in srv.log_text().splitlines() if "metrics listener: accept:" in l]
        R.check("EMFILE: logged once", len(lines) == 1, f"{len(lines)} lines: {lines[:3]}")
        for s in held[: len(held) // 2]:
            s.close()
        del held[: len(held) // 2]
        pending.settimeout(5)
        data = b""
        try:
            while True:
                chunk = pending.recv(65536)
                if not chunk:
                    break
                data += chunk
        except socket.timeout:
            pass
        pending.close()
        R.check("EMFILE: the waiting scrape is answered once descriptors are free",
                data[:12] in (b"HTTP/1.1 200", b"HTTP/1.0 200"), data[:60])
    finally:
        for s in held:
            s.close()
        srv.stop(R)


def flood():
    mport = free_port()
    srv = Lumend(f"metrics-listen 127.0.0.1:{mport}\nmetrics-max-connections {CAP}\n"
                 f"metrics-timeout {TIMEOUT}\n")
    pid = srv.proc.pid
    try:
        wait_port(mport)
        # A client dripping its request head is closed at the deadline.
        s = socket.create_connection(("127.0.0.1", mport), timeout=5)
        start, closed = time.monotonic(), False
        for b in b"GET /metrics HTTP/1.0\r\nX-Slow: " + b"a" * 100:
            try:
                s.send(bytes([b]))
            except OSError:
                closed = True
                break
            if closed_by_server(s, 0.3):
                closed = True
                break
            if time.monotonic() - start > 15:
                break
        after = time.monotonic() - start
        s.close()
        R.check("slowloris: dripping scrape closed at metrics-timeout",
                closed and after < TIMEOUT + 4, (closed, after))

        # Up to the cap, scrapes are answered while idle clients hold slots.
        idle = [socket.create_connection(("127.0.0.1", mport), timeout=5) for _ in range(CAP - 1)]
        time.sleep(0.2)
        R.check("below the cap: a scrape is answered",
                scrape(mport)[:12] in (b"HTTP/1.1 200", b"HTTP/1.0 200"))
        # A flood beyond the cap: every one closed at the deadline (in waves).
        flood = [socket.create_connection(("127.0.0.1", mport), timeout=5) for _ in range(20)]
        cpu0 = cpu_seconds(pid)
        everyone = idle + flood
        waves = (len(everyone) + CAP - 1) // CAP
        closed = sum(closed_by_server(s, (waves + 2) * TIMEOUT) for s in everyone)
        R.check("flood: every idle connection closed by its deadline", closed == len(everyone),
                f"{closed}/{len(everyone)}")
        cpu = cpu_seconds(pid) - cpu0
        R.check("flood: little CPU while waiting", cpu < 1.0, f"{cpu:.2f} s")
        for s in everyone:
            s.close()
        R.check("after the flood: a scrape is answered",
                scrape(mport)[:12] in (b"HTTP/1.1 200", b"HTTP/1.0 200"))
    finally:
        srv.stop(R)


def main():
    exhaustion()
    flood()
    R.finish()


if __name__ == "__main__":
    main()
