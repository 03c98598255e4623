#!/usr/bin/env python3
"""Stored normalized forms against a schema change.

Entry records carry their values' normalized forms and reads take them as
stored. The database records each attribute type's equality rule; when a
type it holds gets another rule (here x-note: caseIgnoreMatch, then
caseExactMatch), lumend must say so at start and normalize every value
again on read, so that matching follows the new rule:
  - under caseIgnoreMatch, (x-note=hello) finds the entry whose value is
    "Hello";
  - after the change it must not (a read trusting the stored "hello" would),
    while (x-note=Hello) does, and lumend logs why reads are slower;
  - a restart with a new attribute type only keeps the stored forms trusted
    (no warning).
"""
import os
import signal
import subprocess
import sys
import tempfile
import time
import shutil

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lumen_harness as h  # noqa: E402

import ldap  # noqa: E402

R = h.Results("t_stored_forms.py")
BASE = "dc=example,dc=com"
WARNING = "stored under other matching rules"
NOTE = ("attributetype ( 1.3.6.1.4.1.99999.7.1 NAME 'x-note' EQUALITY {rule} "
        "SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 )\n")
EXTRA = ("attributetype ( 1.3.6.1.4.1.99999.7.2 NAME 'x-extra' EQUALITY caseIgnoreMatch "
         "SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 )\n")


def write_config(tmp, rule, extra=""):
    with open(os.path.join(tmp, "x.schema"), "w") as f:
        f.write(NOTE.format(rule=rule) + extra)
    schema = "".join(f"include {h.ROOT}/schema/{n}.schema\n"
                     for n in ("core", "cosine", "inetorgperson", "nis"))
    path = os.path.join(tmp, "slapd.conf")
    with open(path, "w") as f:
        f.write(schema + f"include {tmp}/x.schema\nthreads 2\n"
                f'database mdb\nsuffix "{BASE}"\nrootdn "cn=admin,{BASE}"\nrootpw secret\n'
                f"directory {tmp}/db\n")
    return path


STARTED = []


class Server:
    def __init__(self, tmp, config, run):
        self.port = h.free_port()
        self.log_path = os.path.join(tmp, f"lumend-{run}.log")
        self.log = open(self.log_path, "w")
        env = dict(os.environ)
        env["ASAN_OPTIONS"] = f"log_path={tmp}/asan:detect_leaks=1"
        env["UBSAN_OPTIONS"] = f"log_path={tmp}/ubsan:print_stacktrace=1"
        self.proc = subprocess.Popen([h.LUMEND, "-f", config, "-h",
                                      f"ldap://127.0.0.1:{self.port}/", "-d", "stats"],
                                     stderr=self.log, env=env)
        STARTED.append(self.proc)
        h.wait_port(self.port, 30)
        if self.proc.poll() is not None:
            raise RuntimeError("lumend did not start: " + self.log_text())
        self.conn = ldap.initialize(f"ldap://127.0.0.1:{self.port}")
        self.conn.simple_bind_s(f"cn=admin,{BASE}", "secret")

    def count(self, filt):
        return len(self.conn.search_s(BASE, ldap.SCOPE_SUBTREE, filt, ["1.1"]))

    def log_text(self):
        self.log.flush()
        with open(self.log_path) as f:
            return f.read()

    def stop(self):
        self.conn.unbind_s()
        self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(timeout=20)
        self.log.close()
        R.check("lumend exits 0 on SIGTERM", rc == 0, f"exit {rc}")


def main():
    tmp = tempfile.mkdtemp(prefix="lumen-forms-")
    os.makedirs(os.path.join(tmp, "db"))
    try:
        s = Server(tmp, write_config(tmp, "caseIgnoreMatch"), 1)
        s.conn.add_s(BASE, [("objectClass", [b"dcObject", b"organization"]),
                            ("dc", [b"example"]), ("o", [b"Example"])])
        s.conn.add_s(f"cn=note,{BASE}", [("objectClass", [b"device", b"extensibleObject"]),
                                         ("cn", [b"note"]), ("x-note", [b"Hello"])])
        R.check("caseIgnoreMatch: (x-note=hello) finds Hello", s.count("(x-note=hello)") == 1)
        s.stop()

        s = Server(tmp, write_config(tmp, "caseIgnoreMatch", EXTRA), 2)
        time.sleep(0.5)
        R.check("a new attribute type only: no warning", WARNING not in s.log_text(),
                s.log_text()[-1500:])
        R.check("a new attribute type only: (x-note=hello) still finds Hello",
                s.count("(x-note=hello)") == 1)
        s.stop()

        s = Server(tmp, write_config(tmp, "caseExactMatch"), 3)
        R.check("caseExactMatch: (x-note=hello) finds nothing", s.count("(x-note=hello)") == 0)
        R.check("caseExactMatch: (x-note=Hello) finds it", s.count("(x-note=Hello)") == 1)
        deadline = time.time() + 10
        while WARNING not in s.log_text() and time.time() < deadline:
            time.sleep(0.05)
        R.check("the changed rule is logged at start", WARNING in s.log_text(),
                s.log_text()[-1500:])
        s.stop()

        s = Server(tmp, write_config(tmp, "caseIgnoreMatch"), 4)
        R.check("back to caseIgnoreMatch: matching follows it",
                s.count("(x-note=hello)") == 1 and s.count("(x-note=HELLO)") == 1)
        time.sleep(0.5)
        R.check("back to caseIgnoreMatch: still normalizing on read (logged)",
                WARNING in s.log_text(), s.log_text()[-1500:])
        s.stop()
        reports = ""
        for name in os.listdir(tmp):
            if name.startswith(("asan", "ubsan")):
                with open(os.path.join(tmp, name)) as f:
                    reports += f.read()
        R.check("no sanitizer reports", reports == "", reports[:4000])
    finally:
        for proc in STARTED:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    R.finish()


main()
