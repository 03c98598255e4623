#!/usr/bin/env python3
"""A stop requested while lumend is still starting (its port just accepting
connections, its loop not yet running) ends in an orderly shutdown, exit 0,
not in SIGTERM's default action: lumend holds the stop signals from before it
binds until its loop handles them. Five starts, SIGTERM the moment the port
accepts a connection. (A SIGTERM while the databases open, before lumend
listens: t_listen_when_ready.py.)"""
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lumen_harness as h  # noqa: E402

R = h.Results("t_startup_signal.py")
tmp = tempfile.mkdtemp(prefix="lumen-it-")
os.makedirs(os.path.join(tmp, "db"))
conf = os.path.join(tmp, "slapd.conf")
with open(conf, "w") as f:
    f.write("".join(f"include {h.ROOT}/schema/{n}.schema\n" for n in ("core", "cosine"))
            + f'database mdb\nsuffix "dc=example,dc=com"\ndirectory {tmp}/db\n')
codes = []
for attempt in range(5):
    port = h.free_port()
    proc = subprocess.Popen([h.LUMEND, "-f", conf, "-h", f"ldap://127.0.0.1:{port}/", "-d", "0"],
                            stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    deadline = time.time() + 20
    while time.time() < deadline and proc.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            time.sleep(0.001)
    proc.send_signal(signal.SIGTERM)
    try:
        codes.append(proc.wait(timeout=30))
    except subprocess.TimeoutExpired:
        proc.kill()
        codes.append("hang")
R.check("every early SIGTERM: orderly exit 0", codes == [0] * 5, codes)
subprocess.run(["rm", "-rf", tmp])
R.finish()
