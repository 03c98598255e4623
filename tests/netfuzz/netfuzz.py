#!/usr/bin/env python3
"""netfuzz.py — the network fuzzer's runner: a campaign of hostile and
odd clients against one real lumend, normally the sanitizer build.

    BUILD=build-san python3 tests/netfuzz/netfuzz.py [--minutes N] [--seed S]
        [--only cat1,cat2] [--out DIR] [--smoke]

What it does: starts lumend the way the integration tests do
(lumen_harness.Lumend: own temp dir, config, lumenadd preload, sanitizer
logs in the temp dir) with LDAP and LDAPS, 400 people, syncprov and access
rules; runs the fixed regression cases (regressions.py), then rounds of
the categories (categories.py) until the minutes are up. After every batch
it checks that lumend is alive, that a root DSE search on a new
connection is answered, and that no sanitizer report appeared; it logs
lumend's resident size. --smoke runs each category once at its smoke size
(make test), with every wait cut to at most 20 s, and prints one line of
cases per category and time.

Needs: $BUILD/lumend and $BUILD/lumenadd (BUILD defaults to build-san),
openssl for a certificate, the PROTOS c06 vectors in
../shared/testdata/protos-c06-ldapv3-enc beside the repository (skipped
when absent), gdb for a thread dump of a hung lumend (optional).

A finding: a hang (an answer due and not sent, see categories.py), a
crash (lumend exited), an unresponsive or slow server (root DSE
unanswered after a batch), a sanitizer report, or a non-zero exit status
at the end. Each is printed as it is found and written under the output
directory (printed first and last) with the bytes that led to it
(finding-NNN-CATEGORY-KIND.bin), the details in summary.json; lumend's
directory (log, sanitizer reports) is kept. Exit status 1 on any finding.
"""
import argparse
import glob
import json
import os
import random
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
os.environ.setdefault("BUILD", "build-san")
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import lumen_harness as h  # noqa: E402
import pdus as p  # noqa: E402
from categories import CATEGORIES, FIXED_LISTS  # noqa: E402
import regressions  # noqa: E402

PROTOS = os.path.join(h.ROOT, "..", "shared", "testdata", "protos-c06-ldapv3-enc")
CORPUS = os.path.join(h.ROOT, "tests", "fuzz", "corpus", "fuzz_ldap_message")
SMOKE_WAIT = 20            # the longest wait for an answer in the smoke, s
DB_CONFIG = ("index uid,cn eq,sub\noverlay syncprov\n"
             "access to attrs=userPassword by self write by anonymous auth by * none\n"
             "access to * by self write by * read\n")


def start_server(files):
    """A lumend on ldap:// and ldaps:// (server.ldaps_port) with the people."""
    ldaps = h.free_port()
    server = h.Lumend(extra_config=f"TLSCertificateFile {files}/server.pem\n"
                                   f"TLSCertificateKeyFile {files}/server.key",
                      extra_urls=(f"ldaps://127.0.0.1:{ldaps}/",), db_config=DB_CONFIG,
                      preload=os.path.join(files, "people.ldif"))
    server.ldaps_port = ldaps
    return server


def log_tail(server, size=4000):
    path = os.path.join(server.tmp, "lumend.log")
    server.log.flush()
    with open(path, "rb") as f:
        f.seek(max(0, os.path.getsize(path) - size))
        return f.read().decode(errors="replace")


class Campaign:
    """What a category sees of the run (see categories.py)."""

    def __init__(self, args):
        self.args, self.smoke = args, args.smoke
        self.rng = random.Random(args.seed)
        self.out = args.out
        self.cases, self.details, self.findings, self.rss = {}, {}, [], []
        self.seconds = {}         # per category, for sizing the smoke
        self.valid = p.valid_pdus()
        self.seeds = list(self.valid.values())
        for path in sorted(glob.glob(os.path.join(CORPUS, "*"))):
            with open(path, "rb") as f:
                data = f.read()
            if 0 < len(data) < 20000:
                self.seeds.append(data)
        self.protos = []
        for path in sorted(glob.glob(os.path.join(PROTOS, "*"))):
            with open(path, "rb") as f:
                self.protos.append((os.path.basename(path), f.read()))
        # The certificate and the LDIF outlive a restarted server.
        self.files = tempfile.mkdtemp(prefix="lumen-netfuzz-files-")
        h.self_signed_certificate(self.files, "127.0.0.1")
        p.people_ldif(os.path.join(self.files, "people.ldif"))
        self.server, self.reported = None, ""
        self.kept = []            # lumend directories kept for a finding

    # -- what categories call
    def wait(self, seconds):
        """How long to wait for an answer: the smoke waits at most SMOKE_WAIT."""
        return min(seconds, SMOKE_WAIT) if self.smoke else seconds

    def sleep(self, seconds):
        time.sleep(seconds)

    def case(self, category, detail=None, n=1):
        self.cases[category] = self.cases.get(category, 0) + n
        if detail is not None:
            key = f"{category}:{detail}"
            self.details[key] = self.details.get(key, 0) + n

    def connect(self, port=None):
        for _ in range(50):
            try:
                return socket.create_connection(("127.0.0.1", port or self.server.port), timeout=10)
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("cannot connect to lumend")

    def close(self, s, rst=None):
        """Close s, with a reset (SO_LINGER 0) when rst, else as rng says."""
        rst = self.rng.random() < 0.5 if rst is None else rst
        try:
            if rst:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()
        except OSError:
            pass

    def expect(self, category, s, msgids, data, timeout=30, detail=""):
        """Read until each of msgids has its final answer; a hang finding
        (with data, what was sent) when they do not come in time.
        Returns (answers, closed, timed_out)."""
        msgids = list(msgids)
        out, closed, timed_out = p.read_until(s, p.final_for(msgids), self.wait(timeout))
        if timed_out:
            got = {r.msgid for r in out if r.op not in p.NOT_FINAL}
            missing = sorted(set(msgids) - got)
            self.finding("hang", category, f"{detail + ': ' if detail else ''}no final answer "
                         f"for message IDs {missing[:10]} in {self.wait(timeout)} s (got "
                         f"{len(out)} messages, last {[(r.msgid, r.op, r.code) for r in out[-3:]]})",
                         data)
        return out, closed, timed_out

    def finding(self, kind, category, detail, data=None):
        path = None
        if data is not None:
            path = os.path.join(self.out, f"finding-{len(self.findings):03d}-{category}-{kind}.bin")
            with open(path, "wb") as f:
                f.write(data)
        self.findings.append({"kind": kind, "category": category, "detail": detail, "file": path,
                              "seed": self.args.seed, "lumend_dir": self.server.tmp})
        if self.server.tmp not in self.kept:
            self.kept.append(self.server.tmp)
        print(f"!!! FINDING {kind} in {category}: {detail}" + (f" [{path}]" if path else ""),
              flush=True)

    # -- the runner's own checks
    def health(self, category):
        """After a batch: no new sanitizer report, alive, answering."""
        server = self.server
        reports = server.sanitizer_reports()
        if reports != self.reported:
            self.finding("sanitizer", category, reports[len(self.reported):][:6000])
            self.reported = reports
        if not server.alive():
            self.finding("crash", category,
                         f"lumend exited {server.proc.returncode}: {log_tail(server)}")
            self.restart()
            return
        started = time.time()
        if server.answers(self.wait(10)):
            self.rss.append((round(time.time()), category, h.rss_bytes(server.proc.pid) // 1024))
            return
        slow = time.time() - started
        time.sleep(2)
        again = server.answers(self.wait(10))
        self.finding("slow-rootdse" if again else "unresponsive", category,
                     f"root DSE unanswered in {slow:.1f} s (a second try "
                     f"{'answered' if again else 'did not either'})")
        if not again:
            self.dump_threads()
            self.restart()

    def dump_threads(self):
        """Every thread's stack of a hung lumend, beside the findings."""
        if shutil.which("gdb") is None:
            return
        try:
            r = subprocess.run(["gdb", "-p", str(self.server.proc.pid), "-batch",
                                "-ex", "thread apply all bt"], capture_output=True, text=True,
                               timeout=60)
            with open(os.path.join(self.out, f"threads-{int(time.time())}.txt"), "w") as f:
                f.write(r.stdout + r.stderr)
        except (OSError, subprocess.SubprocessError) as e:
            print(f"netfuzz: no thread dump: {e}", flush=True)

    def restart(self):
        rc = h.stop_process(self.server.proc)
        print(f"netfuzz: restarting lumend (the old one ended: {rc}; its directory "
              f"{self.server.tmp} is kept)", flush=True)
        self.server.log.close()
        self.server, self.reported = start_server(self.files), ""

    def batch(self, name, fn, n, bounds=None):
        started = time.time()
        try:
            fn(self, n, **(bounds or {}))
        except Exception as e:  # a client-side surprise: counted, shown, not a finding
            print(f"[{name}] client-side exception: {e!r}", flush=True)
            traceback.print_exc()
            self.case("client-exception")
        self.health(name)
        self.seconds[name] = round(self.seconds.get(name, 0) + time.time() - started, 1)
        if not self.smoke:
            print(f"[{time.strftime('%H:%M:%S')}] {name}: {time.time() - started:.1f} s, "
                  f"rss {h.rss_bytes(self.server.proc.pid) // 1024} kB, "
                  f"findings {len(self.findings)}", flush=True)

    # -- the whole run
    def run(self):
        a = self.args
        self.server = start_server(self.files)
        started = time.time()
        print(f"netfuzz: seed {a.seed}, {'smoke' if self.smoke else f'{a.minutes:g} minutes'}, "
              f"lumend {self.server.tmp} (pid {self.server.proc.pid}), output {self.out}",
              flush=True)
        only = set(a.only.split(",")) if a.only else None
        categories = [c for c in CATEGORIES if only is None or c[0] in only]
        if only is None or "regressions" in only:
            for case in regressions.CASES:
                self.batch("regressions", lambda run, n, case=case: case(run), 1)
        if self.smoke:
            for name, fn, _, n, bounds in categories:
                if self.findings:
                    break             # make test fails anyway: fail it soon
                self.batch(name, fn, n, bounds)
        else:
            deadline = started + a.minutes * 60
            round_no = 0
            while time.time() < deadline:
                round_no += 1
                for name, fn, n, _, _ in categories:
                    if time.time() >= deadline:
                        break
                    if round_no > 1 and name in FIXED_LISTS and round_no % 3:
                        continue
                    self.batch(name, fn, n)
                self.save()
        self.finish()
        self.save()
        seconds = time.time() - started
        counts = ", ".join(f"{k} {v}" for k, v in self.cases.items())
        print(f"netfuzz{' smoke' if self.smoke else ''}: seed {a.seed}, {seconds:.0f} s, "
              f"{sum(self.cases.values())} cases ({counts}); {len(self.findings)} findings",
              flush=True)
        if self.findings:
            print(f"netfuzz: findings in {self.out} (summary.json), lumend directories kept: "
                  + " ".join(self.kept), flush=True)
        elif not self.smoke:
            print(f"netfuzz: counts in {self.out}/summary.json", flush=True)
        return 1 if self.findings else 0

    def finish(self):
        """Stop lumend: it must exit 0 and leave no sanitizer report."""
        server = self.server
        rc = h.stop_process(server.proc)
        reports = server.sanitizer_reports()
        if reports != self.reported:
            self.finding("sanitizer-at-exit", "shutdown", reports[len(self.reported):][:8000])
        if rc != 0:
            self.finding("exit-status", "shutdown", f"lumend exit {rc}: {log_tail(server, 3000)}")
        server.log.close()
        if server.tmp not in self.kept and not os.environ.get("KEEP_TMP"):
            shutil.rmtree(server.tmp, ignore_errors=True)
        shutil.rmtree(self.files, ignore_errors=True)

    def save(self):
        with open(os.path.join(self.out, "summary.json"), "w") as f:
            json.dump({"seed": self.args.seed, "cases": self.cases, "details": self.details,
                       "seconds": self.seconds,
                       "findings": self.findings, "rss_kb": self.rss[-200:]},
                      f, indent=1, sort_keys=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=30)
    ap.add_argument("--seed", type=int, default=None,
                    help="the run's seed (default: one drawn and printed)")
    ap.add_argument("--only", default="", help="categories to run, comma-separated")
    ap.add_argument("--out", default="", help="findings directory (default: a new temp dir)")
    ap.add_argument("--smoke", action="store_true",
                    help="each category once at its smoke size (make test)")
    args = ap.parse_args()
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(1, 2**31)
    fresh = not args.out
    args.out = args.out or tempfile.mkdtemp(prefix="lumen-netfuzz-")
    os.makedirs(args.out, exist_ok=True)
    rc = Campaign(args).run()
    # A clean smoke leaves nothing behind; a campaign keeps its summary.
    if rc == 0 and args.smoke and fresh:
        shutil.rmtree(args.out, ignore_errors=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
