#!/usr/bin/python3
"""replication.py — replication figures of Lumen and of OpenLDAP (Debian's
slapd, back-mdb, overlay syncprov), measured in the same run on the same
data with the same clients. Each server kind replicates to its own kind.

For each server kind, in this order (each phase runs for both kinds back
to back before the next one starts, so that the machine's drifting load
falls on both alike):

  1. the provider is bulk loaded (lumenadd -q / slapadd -q) with lumengen's
     --entries users and started; write throughput with no consumer:
     `lumenbench -m modify` (replace description, --tput-connections
     connections, --duration s);
  2. initial refresh: an empty refreshAndPersist consumer is started; the
     time from its start until its suffix's contextCSN equals the
     provider's (then its entry count is checked), with both processes'
     CPU seconds for that time;
  3. a second refreshAndPersist consumer is started and converges; the same
     write throughput with the two persistent consumers attached;
  4. the second consumer is stopped; replication lag: one writer sends
     `--lag-rate` modifies a second (paced on a schedule, several may be
     outstanding) replacing the description of one entry with a sequence
     number, and records when each was acknowledged; one reader polls that
     entry on the consumer (base search, `--poll-gap` between polls) and
     records when each value first shows. A write's lag is the time from its
     acknowledgement to the first poll that shows it or a later write
     (0 when the consumer showed it before the acknowledgement arrived).
     --lag-rounds rounds of --lag-seconds, alternating with the other
     kind's; the percentiles are over all of them.
     Resolution: one poll (~0.2-0.5 ms here).

Both servers get the same settings: indexes objectClass, entryUUID,
entryCSN, uid eq; threads 4; dbnosync unless --sync (the figures are then
the replication machinery's, not the disk's: this VM's fsync takes ~3 ms);
OpenLDAP's provider `syncprov-checkpoint 100 10` and both
`syncprov-sessionlog 10000`; Lumen's cachesize entries + 1000 (its
default would also hold them). Writes are made as the rootdn.

Results: OUT/report.md (figures and Lumen / OpenLDAP ratios), OUT/raw/
(lumenbench JSON, logs, configuration files), OUT/meta.txt.
"""
import argparse
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import ldap

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SUFFIX = "dc=example,dc=com"
ROOTDN = "cn=admin," + SUFFIX
ROOTPW = "secret"
PEOPLE = "ou=people," + SUFFIX
OPENLDAP_SCHEMAS = ("core", "cosine", "inetorgperson", "nis")
LUMEN_SCHEMAS = ("core", "cosine", "inetorgperson", "nis", "lumen")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid):
    """utime + stime of pid, in seconds (None once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return None


def log(out, text):
    line = f"[{time.strftime('%H:%M:%S')}] {text}"
    print(line, file=sys.stderr, flush=True)
    with open(os.path.join(out, "run.log"), "a") as f:
        f.write(line + "\n")


class Server:
    """One provider or consumer: its directory, configuration, process."""

    def __init__(self, kind, name, work, args, db_lines):
        self.kind, self.name, self.args = kind, name, args
        self.dir = os.path.join(work, f"{kind}-{name}")
        self.db = os.path.join(self.dir, "db")
        os.makedirs(self.db)
        self.port = free_port()
        self.uri = f"ldap://127.0.0.1:{self.port}"
        self.conf = os.path.join(self.dir, "server.conf")
        self.logpath = os.path.join(self.dir, "server.log")
        self.proc = None
        with open(self.conf, "w") as f:
            f.write("\n".join(self.config(db_lines)) + "\n")

    def config(self, db_lines):
        common = ["threads 4", "sizelimit unlimited"]
        dbpart = ["database mdb", f"suffix {SUFFIX}", f"rootdn {ROOTDN}",
                  f"rootpw {ROOTPW}", f"directory {self.db}", "maxsize 17179869184",
                  "index objectClass,entryUUID,entryCSN,uid eq"]
        if not self.args.sync:
            dbpart.append("dbnosync")
        if self.kind == "openldap":
            head = [f"include /etc/ldap/schema/{s}.schema" for s in OPENLDAP_SCHEMAS]
            head += ["modulepath /usr/lib/ldap", "moduleload back_mdb",
                     "moduleload syncprov", f"pidfile {self.dir}/slapd.pid",
                     f"argsfile {self.dir}/slapd.args", "loglevel 0"]
            return head + common + dbpart + db_lines
        head = [f"include {ROOT}/schema/{s}.schema" for s in LUMEN_SCHEMAS
                if os.path.exists(f"{ROOT}/schema/{s}.schema")]
        head += [f"pidfile {self.dir}/lumend.pid", "loglevel none"]
        dbpart.append(f"cachesize {self.args.entries + 1000}")
        return head + common + dbpart + db_lines

    def load(self, ldif):
        """Bulk load; returns seconds."""
        if self.kind == "openldap":
            cmd = ["/usr/sbin/slapadd", "-q", "-f", self.conf, "-l", ldif]
        else:
            cmd = [os.path.join(self.args.build, "lumenadd"), "-q", "-f", self.conf, "-l", ldif]
        start = time.monotonic()
        with open(os.path.join(self.dir, "load.log"), "w") as f:
            subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, check=True)
        return time.monotonic() - start

    def start(self):
        if self.kind == "openldap":
            cmd = ["/usr/sbin/slapd", "-h", self.uri + "/", "-f", self.conf, "-d", "0"]
        else:
            cmd = [os.path.join(self.args.build, "lumend"), "-f", self.conf,
                   "-h", self.uri + "/", "-d", "none"]
        self.logfile = open(self.logpath, "a")
        self.proc = subprocess.Popen(["nice", "-n", str(self.args.nice), *cmd],
                                     stdout=self.logfile, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.kind} {self.name} exited: see {self.logpath}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                time.sleep(0.02)
        raise RuntimeError(f"{self.kind} {self.name} not listening after 30 s")

    @property
    def pid(self):
        return self.proc.pid

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def bound(self):
        conn = ldap.initialize(self.uri)
        conn.simple_bind_s(ROOTDN, ROOTPW)
        return conn


def provider_lines(kind):
    lines = ["overlay syncprov", "syncprov-sessionlog 10000"]
    if kind == "openldap":
        lines.insert(1, "syncprov-checkpoint 100 10")
    return lines


def consumer_lines(provider, rid):
    return [f"syncrepl rid={rid:03d} provider={provider.uri} bindmethod=simple "
            f"binddn={ROOTDN} credentials={ROOTPW} searchbase={SUFFIX} "
            'type=refreshAndPersist retry="1 +" timeout=5 network-timeout=5 '
            'attrs="*,+" schemachecking=off']


def context_csn(conn):
    try:
        res = conn.search_s(SUFFIX, ldap.SCOPE_BASE, "(objectClass=*)", ["contextCSN"])
    except (ldap.NO_SUCH_OBJECT, ldap.SERVER_DOWN):
        return None
    if not res:
        return None
    return sorted(res[0][1].get("contextCSN", []))


def count_entries(conn):
    msgid = conn.search_ext(SUFFIX, ldap.SCOPE_SUBTREE, "(objectClass=*)", ["1.1"])
    n = 0
    while True:
        kind, data = conn.result(msgid, all=0)
        if kind == ldap.RES_SEARCH_RESULT:
            return n
        n += len(data)


def marker(provider):
    """A write on the provider whose entryCSN is then its newest CSN (Lumen's
    provider keeps its contextCSN in memory, not in the suffix entry)."""
    dn = f"uid=user.2,{PEOPLE}"
    provider.modify_s(dn, [(ldap.MOD_REPLACE, "description", [f"marker {time.time()}".encode()])])
    res = provider.search_s(dn, ldap.SCOPE_BASE, "(objectClass=*)", ["entryCSN"])
    return res[0][1]["entryCSN"]


def wait_converged(want, consumer_server, timeout):
    """Seconds from now until the consumer's contextCSN is `want` (polled
    every 20 ms), or None on timeout."""
    start = time.monotonic()
    conn = None
    while time.monotonic() - start < timeout:
        try:
            if conn is None:
                conn = consumer_server.bound()
            if context_csn(conn) == want:
                return time.monotonic() - start
        except ldap.LDAPError:
            conn = None
        time.sleep(0.02)
    return None


def lumenbench(args, server, label, out):
    cmd = ["nice", "-n", str(args.nice), os.path.join(args.build, "lumenbench"),
           "-H", server.uri, "-m", "modify", "-c", str(args.tput_connections),
           "-d", str(args.duration), "-w", str(args.warmup), "--entries", str(args.entries),
           "-D", ROOTDN, "--bind-pw", ROOTPW, "--json", "--server-pid", str(server.pid)]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with open(os.path.join(out, "raw", f"{server.kind}-{label}.json"), "w") as f:
        f.write(p.stdout + p.stderr)
    result = json.loads(p.stdout)
    return result


# ------------------------------------------------------------------ lag
# A paced writer has a few writes in flight at most; thousands pipelined on
# one connection stall it on Lumen (see the report of 2026-11-25).
LAG_MAX_OUTSTANDING = 32


def lag_writer(uri, dn, rate, seconds, path):
    """Paced modifies; writes "seq ack_ns" lines to path. Runs in a child.
    Results are drained after every wait, ready or not: libldap may have
    read several answers in one go, and the socket then shows none."""
    conn = ldap.initialize(uri)
    conn.simple_bind_s(ROOTDN, ROOTPW)
    fd = conn.fileno()
    interval = 1e9 / rate
    start = time.monotonic_ns() + 200_000_000
    total = int(rate * seconds)
    give_up = start + int((seconds + 30) * 1e9)
    pending, acks, errors, seq = {}, [], 0, 0
    while (seq < total or pending) and time.monotonic_ns() < give_up:
        now = time.monotonic_ns()
        due = start + seq * interval if seq < total else now + 5_000_000
        if seq < total and now >= due and len(pending) < LAG_MAX_OUTSTANDING:
            msgid = conn.modify_ext(dn, [(ldap.MOD_REPLACE, "description", [str(seq + 1).encode()])])
            pending[msgid] = seq + 1
            seq += 1
            continue
        wait = max(0, (due - now) / 1e9) if len(pending) < LAG_MAX_OUTSTANDING else 0.001
        select.select([fd], [], [], wait)
        while pending:
            try:
                res = conn.result3(ldap.RES_ANY, all=1, timeout=0)
            except ldap.LDAPError:
                errors += 1
                break
            if res[0] is None:
                break
            acks.append((pending.pop(res[2]), time.monotonic_ns()))
    with open(path, "w") as f:
        f.write(f"# errors {errors} sent {seq} unanswered {len(pending)} start_ns {start}\n")
        for s, t in acks:
            f.write(f"{s} {t}\n")


def lag_reader(uri, dn, seconds, gap, path, writer_done):
    """Polls dn's description on the consumer until 3 s after the writer
    is done (writer_done exists; at most `seconds`); writes
    "value first_seen_ns"."""
    conn = ldap.initialize(uri)
    conn.simple_bind_s(ROOTDN, ROOTPW)
    end = time.monotonic_ns() + int(seconds * 1e9)
    last, seen, polls, grace = 0, [], 0, None
    while time.monotonic_ns() < end and (grace is None or time.monotonic_ns() < grace):
        if grace is None and polls % 256 == 0 and os.path.exists(writer_done):
            grace = time.monotonic_ns() + 3_000_000_000
        res = conn.search_s(dn, ldap.SCOPE_BASE, "(objectClass=*)", ["description"])
        now = time.monotonic_ns()
        polls += 1
        value = int(res[0][1].get("description", [b"0"])[0] or 0) if res else 0
        if value > last:
            seen.append((value, now))
            last = value
        if gap:
            time.sleep(gap)
    with open(path, "w") as f:
        f.write(f"# polls {polls}\n")
        for v, t in seen:
            f.write(f"{v} {t}\n")


def read_pairs(path):
    header, pairs = "", []
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                header = line
            else:
                a, b = line.split()
                pairs.append((int(a), int(b)))
    return header, pairs


def percentile(sorted_values, p):
    if not sorted_values:
        return float("nan")
    i = min(len(sorted_values) - 1, int(round(p / 100 * (len(sorted_values) - 1))))
    return sorted_values[i]


def measure_lag(args, provider, consumer, out, kind):
    dn = f"uid=user.1,{PEOPLE}"
    p = provider.bound()
    p.modify_s(dn, [(ldap.MOD_REPLACE, "description", [b"0"])])
    deadline = time.monotonic() + 30
    c = consumer.bound()
    while time.monotonic() < deadline:
        r = c.search_s(dn, ldap.SCOPE_BASE, "(objectClass=*)", ["description"])
        if r and r[0][1].get("description") == [b"0"]:
            break
        time.sleep(0.05)
    for server in (provider, consumer):
        if server.proc.poll() is not None:
            raise RuntimeError(f"{kind} {server.name} exited ({server.proc.returncode}) "
                               "before the lag run")
    wpath = os.path.join(out, "raw", f"{kind}-lag-acks.txt")
    rpath = os.path.join(out, "raw", f"{kind}-lag-seen.txt")
    for stale in (wpath, rpath):
        if os.path.exists(stale):
            os.unlink(stale)
    reader = os.fork()
    if reader == 0:
        try:
            lag_reader(consumer.uri, dn, 3 * args.lag_seconds + 40, args.poll_gap, rpath,
                       wpath)
        finally:
            os._exit(0)
    lag_writer(provider.uri, dn, args.lag_rate, args.lag_seconds, wpath)
    os.waitpid(reader, 0)
    whead, acks = read_pairs(wpath)
    rhead, seen = read_pairs(rpath)
    lags, unseen, j = [], 0, 0
    acks.sort()
    for s, t_ack in acks:
        while j < len(seen) and seen[j][0] < s:
            j += 1
        if j == len(seen):
            unseen += 1
            continue
        lags.append(max(0, seen[j][1] - t_ack) / 1e6)
    first, last = (acks[0][1], acks[-1][1]) if acks else (0, 1)
    return {"lags": lags, "writes": len(acks), "unseen": unseen,
            "rate": len(acks) / max(1e-9, (last - first) / 1e9),
            "writer": whead.strip("# \n"), "reader": rhead.strip("# \n")}


def merge_lag(rounds):
    """The rounds' lags as one distribution (percentiles over all writes)."""
    lags = sorted(x for r in rounds for x in r["lags"])
    return {"rounds": len(rounds), "writes": sum(r["writes"] for r in rounds),
            "unseen": sum(r["unseen"] for r in rounds),
            "rate": sum(r["rate"] for r in rounds) / max(1, len(rounds)),
            "p50_ms": percentile(lags, 50), "p90_ms": percentile(lags, 90),
            "p99_ms": percentile(lags, 99), "max_ms": lags[-1] if lags else float("nan"),
            "writer": "; ".join(r["writer"] for r in rounds),
            "reader": "; ".join(r["reader"] for r in rounds)}


# ------------------------------------------------------------- per kind
def run_kind(kind, res, args, ldif, work, out):
    """Fills res as it goes, so a failure keeps what was measured. A
    generator: it pauses after each phase, so that main runs each phase
    for both kinds back to back (the machine's load drifts)."""
    servers = []
    try:
        provider = Server(kind, "provider", work, args, provider_lines(kind))
        servers.append(provider)
        res["load_s"] = provider.load(ldif)
        log(out, f"{kind}: provider loaded in {res['load_s']:.1f} s")
        provider.start()
        pconn = provider.bound()
        res["provider_entries"] = count_entries(pconn)
        yield
        res["tput_0"] = lumenbench(args, provider, "modify-0-consumers", out)
        log(out, f"{kind}: modify, no consumer: {res['tput_0']['ops_per_s']:.0f}/s")
        yield

        want = marker(pconn)
        a = Server(kind, "consumer-a", work, args, consumer_lines(provider, 1))
        servers.append(a)
        pcpu0 = cpu_seconds(provider.pid)
        a.start()
        secs = wait_converged(want, a, args.refresh_timeout)
        res["refresh_s"] = secs
        res["refresh_provider_cpu_s"] = cpu_seconds(provider.pid) - pcpu0
        res["refresh_consumer_cpu_s"] = cpu_seconds(a.pid)
        res["consumer_entries"] = count_entries(a.bound())
        res["consumer_db_kib"] = int(subprocess.run(["du", "-sk", a.db], text=True,
                                                    stdout=subprocess.PIPE).stdout.split()[0])
        log(out, f"{kind}: initial refresh of {res['consumer_entries']} entries: {secs} s")
        yield

        b = Server(kind, "consumer-b", work, args, consumer_lines(provider, 2))
        servers.append(b)
        b.start()
        res["refresh_b_s"] = wait_converged(want, b, args.refresh_timeout)
        yield
        res["tput_2"] = lumenbench(args, provider, "modify-2-consumers", out)
        log(out, f"{kind}: modify, two consumers: {res['tput_2']['ops_per_s']:.0f}/s")
        want = marker(pconn)
        res["converged_after_tput_s"] = [wait_converged(want, c, 120) for c in (a, b)]
        b.stop()
        yield
        rounds = []
        for i in range(args.lag_rounds):   # alternating with the other kind's
            rounds.append(measure_lag(args, provider, a, out, f"{kind}-{i}"))
            res["lag"] = merge_lag(rounds)
            log(out, f"{kind}: lag round {i}: " + ", ".join(
                f"{k} {v:.2f}" for k, v in merge_lag(rounds[-1:]).items()
                if k.endswith("_ms")))
            if i + 1 < args.lag_rounds:
                yield
    finally:
        for s in servers:
            s.stop()
            if os.path.exists(s.logpath):
                shutil.copy(s.logpath, os.path.join(out, "raw", f"{kind}-{s.name}.log"))
            shutil.copy(s.conf, os.path.join(out, "raw", f"{kind}-{s.name}.conf"))


def fmt(v, spec=".1f"):
    return "—" if v is None else format(v, spec)


def ratio(lumen, openldap, higher_better=True):
    if not lumen or not openldap:
        return "—"
    return f"{(lumen / openldap if higher_better else openldap / lumen):.2f}×"


def report(args, results, out):
    L, O = results.get("lumen", {}), results.get("openldap", {})

    def g(r, *path):
        return _dig(r, path)
    lines = [f"# Replication: Lumen vs OpenLDAP ({time.strftime('%Y-%m-%d')})", "",
             f"{args.entries} entries (lumengen, ~500 bytes), each kind replicating to itself; "
             f"threads 4; Lumen cachesize {args.entries + 1000}; "
             f"{'synced writes' if args.sync else 'dbnosync on every database'}; "
             f"servers and clients under nice {args.nice} on a shared 2-core VM "
             "(other builds and tests were running: absolute figures move, "
             "ratios of one run count).", "",
             "Ratio: > 1 means Lumen is better (faster, less lag, less lost). "
             "The consumers run on the same two cores as the provider and the "
             "client, so the throughput lost to them is mostly their CPU taken "
             "from the provider; the provider's own cost is its CPU per modify.", "",
             "| figure | OpenLDAP | Lumen | Lumen vs OpenLDAP | goal |", "|---|---|---|---|---|"]

    def row(name, o, lu, higher_better, goal, spec=".1f"):
        lines.append(f"| {name} | {fmt(o, spec)} | {fmt(lu, spec)} | "
                     f"{ratio(lu, o, higher_better)} | {goal} |")

    row("initial refresh, s (consumer start → contextCSN equal)", g(O, "refresh_s"),
        g(L, "refresh_s"), False, "Lumen ≥ 2× faster", ".2f")
    row("  provider CPU s during it", g(O, "refresh_provider_cpu_s"),
        g(L, "refresh_provider_cpu_s"), False, "", ".2f")
    row("  consumer CPU s during it", g(O, "refresh_consumer_cpu_s"),
        g(L, "refresh_consumer_cpu_s"), False, "", ".2f")
    row("  consumer entries", g(O, "consumer_entries"), g(L, "consumer_entries"), True, "", "d")
    row("  consumer database KiB", g(O, "consumer_db_kib"), g(L, "consumer_db_kib"), False, "", "d")
    for name, key in (("modify/s, no consumer", "tput_0"), ("modify/s, two persist consumers", "tput_2")):
        row(name, g(O, key, "ops_per_s"), g(L, key, "ops_per_s"), True, "", ".0f")
    for name, key in (("  provider CPU µs per modify, no consumer", "tput_0"),
                      ("  provider CPU µs per modify, two consumers", "tput_2")):
        row(name, cpu_per_op(O, key), cpu_per_op(L, key), False, "", ".1f")
    loss = {}
    for k, r in (("openldap", O), ("lumen", L)):
        a, b = g(r, "tput_0", "ops_per_s"), g(r, "tput_2", "ops_per_s")
        loss[k] = 100 * (1 - b / a) if a and b else None
    lines.append(f"| modify throughput lost to two consumers, % | {fmt(loss['openldap'])} | "
                 f"{fmt(loss['lumen'])} | | < 15 % |")
    for p in ("p50", "p99", "max"):
        row(f"lag {p}, ms (at {args.lag_rate} modifies/s)", g(O, "lag", f"{p}_ms"),
            g(L, "lag", f"{p}_ms"), False, "p99 < 10 ms" if p == "p99" else "", ".2f")
    row("  lag: writes acknowledged", g(O, "lag", "writes"), g(L, "lag", "writes"), True, "", "d")
    row("  lag: achieved rate /s", g(O, "lag", "rate"), g(L, "lag", "rate"), True, "", ".0f")
    lines += ["", "Details:", ""]
    for k, r in (("OpenLDAP", O), ("Lumen", L)):
        lines.append(f"- {k}: load {fmt(g(r, 'load_s'), '.1f')} s; provider entries "
                     f"{g(r, 'provider_entries')}; second consumer's refresh "
                     f"{fmt(g(r, 'refresh_b_s'), '.2f')} s; caught up after the loaded run "
                     f"{g(r, 'converged_after_tput_s')}; modify p99 ms no consumer / two: "
                     f"{fmt(g(r, 'tput_0', 'latency_ms', 'p99'), '.2f')} / {fmt(g(r, 'tput_2', 'latency_ms', 'p99'), '.2f')}; "
                     f"errors {g(r, 'tput_0', 'errors', 'total')} / {g(r, 'tput_2', 'errors', 'total')}; "
                     f"lag writer {g(r, 'lag', 'writer')}, reader {g(r, 'lag', 'reader')}, "
                     f"writes never seen {g(r, 'lag', 'unseen')}")
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(results, f, indent=1, default=str)


def cpu_per_op(r, key):
    """The provider's CPU microseconds per modify of one lumenbench run."""
    cpu, ops = _dig(r, (key, "server", "cpu_s")), _dig(r, (key, "ops"))
    return 1e6 * cpu / ops if cpu and ops else None


def _dig(r, path):
    for p in path:
        if not isinstance(r, dict) or p not in r:
            return None
        r = r[p]
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--entries", type=int, default=100000)
    ap.add_argument("--servers", default="openldap lumen")
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--tput-connections", type=int, default=16)
    ap.add_argument("--lag-rate", type=int, default=1000)
    ap.add_argument("--lag-seconds", type=int, default=10)
    ap.add_argument("--lag-rounds", type=int, default=3)
    ap.add_argument("--poll-gap", type=float, default=0.0002)
    ap.add_argument("--refresh-timeout", type=int, default=900)
    ap.add_argument("--sync", action="store_true")
    ap.add_argument("--nice", type=int, default=10)
    ap.add_argument("--build", default=os.environ.get("BUILD", os.path.join(ROOT, "build")))
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    args.build = os.path.abspath(args.build)
    os.makedirs(os.path.join(args.out, "raw"), exist_ok=True)
    work = tempfile.mkdtemp(prefix="lumen-replbench-")
    try:
        ldif = os.path.join(work, "data.ldif")
        subprocess.run([os.path.join(args.build, "lumengen"), "-n", str(args.entries),
                        "-o", ldif], check=True, stdout=subprocess.DEVNULL)
        with open(os.path.join(args.out, "meta.txt"), "w") as f:
            f.write(f"date={time.strftime('%Y-%m-%dT%H:%M:%S%z')}\nhost={socket.gethostname()}\n"
                    f"cpus={os.cpu_count()}\nentries={args.entries}\nargs={vars(args)}\n"
                    f"loadavg={open('/proc/loadavg').read().strip()}\n")
        results = {kind: {} for kind in args.servers.split()}
        runs = {kind: run_kind(kind, results[kind], args, ldif, work, args.out)
                for kind in results}
        while runs:   # phase by phase, each kind in turn
            for kind in list(runs):
                try:
                    next(runs[kind])
                except StopIteration:
                    del runs[kind]
                except Exception as e:  # report what was measured, say what failed
                    log(args.out, f"{kind}: failed: {e!r}")
                    results[kind]["error"] = repr(e)
                    del runs[kind]
        report(args, results, args.out)
        with open(os.path.join(args.out, "meta.txt"), "a") as f:
            f.write(f"loadavg_end={open('/proc/loadavg').read().strip()}\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
