#!/usr/bin/env python3
"""lumend listens on its TCP ports only once it can answer (as slapd, which
calls listen() after opening its databases): while a database is still
opening, a client, or a load balancer's TCP health check, is refused at
once instead of connecting and waiting with no answer.

The open is slowed with lumend-faults' LUMEN_FAULT=stall:MS (each write
transaction of its own waits MS milliseconds; opening a database runs two).
  - during the open: every connection is refused (ECONNREFUSED);
  - once lumend says it is ready: a search answers;
  - SIGTERM during the open: the held signal ends it in order, exit 0;
  - two lumends bound to one port while both open: the one that becomes
    ready second fails with a message naming the address, exit 1.
"""
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lumen_harness as h  # noqa: E402

import ldap  # noqa: E402

R = h.Results("t_listen_when_ready.py")
TMP = tempfile.mkdtemp(prefix="lumen-it-listen-")
FAULTS = os.path.join(h.ROOT, h.BUILD, "lumend-faults")
STALL_MS = 1500


def database(name):
    """A directory with slapd.conf and a loaded database."""
    d = os.path.join(TMP, name)
    os.makedirs(os.path.join(d, "db"))
    conf = os.path.join(d, "slapd.conf")
    with open(conf, "w") as f:
        f.write("".join(f"include {h.ROOT}/schema/{n}.schema\n" for n in ("core", "cosine"))
                + 'database mdb\nsuffix "dc=example,dc=com"\n'
                + f'rootdn "cn=admin,dc=example,dc=com"\nrootpw secret\ndirectory {d}/db\n')
    ldif = os.path.join(d, "base.ldif")
    with open(ldif, "w") as f:
        f.write("dn: dc=example,dc=com\nobjectClass: dcObject\nobjectClass: organization\n"
                "dc: example\no: Example\n")
    subprocess.run([os.path.join(h.ROOT, h.BUILD, "lumenadd"), "-q", "-f", conf, "-l", ldif],
                   check=True, capture_output=True)
    return d


def start(d, port, stall=True):
    """lumend-faults on d and port; its stderr goes to d/stderr."""
    env = dict(os.environ, ASAN_OPTIONS=f"log_path={d}/asan:detect_leaks=1",
               UBSAN_OPTIONS=f"log_path={d}/ubsan:print_stacktrace=1")
    if stall:
        env["LUMEN_FAULT"] = f"stall:{STALL_MS}"
    err = open(os.path.join(d, "stderr"), "w")
    proc = subprocess.Popen([FAULTS, "-f", os.path.join(d, "slapd.conf"), "-h",
                             f"ldap://127.0.0.1:{port}/", "-d", "0"],
                            stdout=subprocess.DEVNULL, stderr=err, env=env)
    err.close()
    return proc


def said(d):
    with open(os.path.join(d, "stderr"), errors="replace") as f:
        return f.read()


def connect_errors(port, seconds):
    """Connection attempts for `seconds` (or until one is accepted): the
    errno of each, 0 for an accepted one."""
    out, deadline = [], time.time() + seconds
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
            out.append(0)
            break
        except ConnectionRefusedError:
            out.append("refused")
        except OSError as e:
            out.append(repr(e))
        time.sleep(0.05)
    return out


def wait_said(d, text, proc, seconds=30):
    deadline = time.time() + seconds
    while time.time() < deadline and text not in said(d) and proc.poll() is None:
        time.sleep(0.02)
    return text in said(d)


def sanitizer_reports(d):
    return [n for n in os.listdir(d) if n.startswith(("asan", "ubsan"))]


def refused_while_opening():
    d, port = database("opening"), h.free_port()
    proc = start(d, port)
    attempts = connect_errors(port, STALL_MS / 1000.0)
    ready_then = " ready: " in said(d)
    R.check("while the database opens, every connection is refused",
            attempts and all(a == "refused" for a in attempts) and not ready_then,
            (attempts[-3:], ready_then))
    R.check("then lumend says it is ready", wait_said(d, " ready: ", proc), said(d)[-300:])
    try:
        c = ldap.initialize(f"ldap://127.0.0.1:{port}")
        c.set_option(ldap.OPT_NETWORK_TIMEOUT, 10)
        found = c.search_s("dc=example,dc=com", ldap.SCOPE_BASE, "(objectClass=*)", ["o"])
        c.unbind_s()
    except ldap.LDAPError as e:
        found = repr(e)
    R.check("and answers a search", found == [("dc=example,dc=com", {"o": [b"Example"]})], found)
    R.check("stops with exit 0, no sanitizer report",
            h.stop_process(proc) == 0 and not sanitizer_reports(d), said(d)[-300:])


def sigterm_while_opening():
    d, port = database("sigterm"), h.free_port()
    proc = start(d, port)
    time.sleep(STALL_MS / 2000.0)
    proc.send_signal(signal.SIGTERM)
    rc = h.stop_process(proc)
    R.check("SIGTERM while the database opens: orderly exit 0",
            rc == 0 and "lumend stopped" in said(d) and not sanitizer_reports(d),
            (rc, said(d)[-300:]))


def listen_lost_to_another():
    """Both bound before either listens (SO_REUSEADDR lets a second bind a
    port nobody listens on yet): the first ready serves, the other says why
    it cannot."""
    port = h.free_port()
    slow, fast = database("slow"), database("fast")
    slow_proc = start(slow, port)
    time.sleep(0.2)
    fast_proc = start(fast, port, stall=False)
    fast_ready = wait_said(fast, " ready: ", fast_proc)
    rc = slow_proc.wait(timeout=30) if fast_ready else h.stop_process(slow_proc)
    R.check("two bound to one port: the first ready serves",
            fast_ready and fast_proc.poll() is None, said(fast)[-300:])
    R.check("the second exits 1, naming the address it cannot listen on",
            rc == 1 and f"IP=127.0.0.1:{port}: cannot listen: Address already in use"
            in said(slow), (rc, said(slow)[-300:]))
    R.check("both stop cleanly", h.stop_process(fast_proc) == 0 and not sanitizer_reports(fast)
            and not sanitizer_reports(slow), said(fast)[-300:])


refused_while_opening()
sigterm_while_opening()
listen_lost_to_another()
shutil.rmtree(TMP, ignore_errors=True)
sys.exit(R.finish())
