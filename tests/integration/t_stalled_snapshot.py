#!/usr/bin/env python3
"""A search whose client stops reading must not pin its LMDB snapshot
(backend.h): while it waits, a few hundred modifies run, and data.mdb
must not grow by more than a small bound. With the snapshot pinned, LMDB
cannot reuse a page freed after it, so every modify's copied pages are
new pages at the end of the file (measured: several MB for 300 modifies);
with the reader released while the search is paused, freed pages are
reused and the file barely moves.

That the searches are still stalled is read from lumend's log, which its
logger thread writes behind the operations: the stalled connection's own
SEARCH RESULT lines, looked for once the last modify's RESULT (logged
after them, were they there) has been written. (Counting every SEARCH
RESULT against a count taken at the start failed when the harness's
start-up probe's line was written after the count: 3 runs in 10 with the
test on a CPU shared with a busy loop.)"""
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lumen_harness import write_people_ldif, Lumend, Results, bind_simple, integer, message, octets, tlv, \
    read_responses

R = Results("t_stalled_snapshot.py")
ENTRIES = 4000
MODIFIES = 300
# Bytes data.mdb may grow by while the search is stalled: a few dozen
# pages of tree growth; a pinned snapshot costs several MB here.
GROWTH_BOUND = 1 << 20
ROOTDN, ROOTPW = "cn=admin,dc=example,dc=com", "secret"


def modifies_ldif(path):
    with open(path, "w") as f:
        for i in range(MODIFIES):
            f.write(f"dn: uid=u{(i * 7) % ENTRIES},ou=People,dc=example,dc=com\n"
                    f"changetype: modify\nreplace: description\n"
                    f"description: {chr(97 + i % 26) * 900}\n\n")


tmp = tempfile.mkdtemp(prefix="lumen-snap-")
ldif, mods = os.path.join(tmp, "people.ldif"), os.path.join(tmp, "mods.ldif")
write_people_ldif(ldif, ENTRIES)
modifies_ldif(mods)
# (an index line: lumenadd without any index trips a UBSan report)
srv = Lumend("threads 4\nsizelimit unlimited\nwritetimeout 0\n",
             db_config="index objectClass eq", preload=ldif)
data = os.path.join(srv.tmp, "db", "data.mdb")

stalled = socket.socket()
stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
stalled.connect(("127.0.0.1", srv.port))
stalled.sendall(bind_simple(1, ROOTDN, ROOTPW))
r, _ = read_responses(stalled, 1)
R.check("bind", bool(r) and r[0].code == 0)
body = (octets("ou=People,dc=example,dc=com") + integer(2, 0x0A) + integer(0, 0x0A)
        + integer(0) + integer(0) + tlv(0x01, b"\x00") + octets("objectClass", 0x87)
        + tlv(0x30, b""))
# Two searches of ~4 MB each, never read: more than the connection's
# output bound and the kernel's socket buffers hold. (threads 4: before
# searches paused, each stalled one held a worker; the modifies need one.)
port = stalled.getsockname()[1]
R.check("the stalled connection is logged", srv.log_has(f"ACCEPT from IP=127.0.0.1:{port} "))
conn = re.search(rf"conn=(\d+) fd=\d+ ACCEPT from IP=127\.0\.0\.1:{port} ", srv.log_text())
conn = conn.group(1) if conn else "?"
stalled.sendall(b"".join(message(i, tlv(0x63, body)) for i in range(2, 4)))
time.sleep(1.5)

before = os.stat(data).st_size
run = subprocess.run(["ldapmodify", "-x", "-H", f"ldap://127.0.0.1:{srv.port}", "-D", ROOTDN,
                      "-w", ROOTPW, "-f", mods], capture_output=True, text=True, timeout=120)
R.check(f"{MODIFIES} modifies succeed while a search is stalled", run.returncode == 0,
        run.stderr[-500:])
after = os.stat(data).st_size
growth = after - before
print(f"  info data.mdb: {before} bytes before, {after} after {MODIFIES} modifies "
      f"(growth {growth} bytes)")
R.check(f"data.mdb grew by at most {GROWTH_BOUND} bytes", growth <= GROWTH_BOUND, growth)
R.check("the last modify's result is logged", srv.log_has(f"op={MODIFIES} RESULT tag=103"))
ended = [line for line in srv.log_text().splitlines()
         if f"conn={conn} op=" in line and "SEARCH RESULT" in line]
R.check("the stalled searches had not ended", not ended, ended)
R.check("the server is alive", srv.alive())
srv.stop(R)                    # with the searches still parked: clean exit
stalled.close()
for p in (ldif, mods):
    os.unlink(p)
os.rmdir(tmp)
R.finish()
