#!/usr/bin/python3
"""hostile_load.py — the "Load" campaign: does lumend keep serving a normal
client while thousands of connections sit on it, some of them hostile?

    bench/hostile_load.py [--quick] [--entries N] [--connections N]
                          [--slowloris N] [--nonreading N] [--threads N]
                          [--listener-threads N] [--cachesize N]
                          [--conn-total-memory BYTES] [--conn-max-memory BYTES]
                          [--first-pdu-timeout S] [--sizelimit N|unlimited]
                          [--duration S] [--warmup S] [--open-rate R]
                          [--bench-connections N] [--out DIR] [--keep]

1. lumengen + lumenadd build a directory (default 100,000 entries) in a
   temporary dir; lumend serves it on a free loopback port with a cache
   smaller than the directory and the connection-memory directives that the
   binary accepts (each one checked with `lumend -T` first).
2. Phase A: lumenbench (search, uid equality, 4 connections) on the idle server.
3. Phase B: hold --connections connections (default 10,000): --slowloris
   (default 500) drip an LDAP search one byte a second (half before their
   first request, half after one answered request), --nonreading (default 500)
   pipeline whole-subtree searches of all attributes with a 4 KiB receive
   buffer and never read, the rest send one small search, read its answer and
   stay open. Slowloris connections the server closes are reopened (as an
   attacker would). While all are held, the same lumenbench run.
4. Report (stdout and bench/results/<date>-hostile/report.md): connections
   open (/proc fd count and cn=Monitor), lumend VmRSS/VmHWM before and
   during, cn=Memory* under cn=Connections,cn=Monitor, ops/s and p50/p99 of
   both phases and their p99 ratio, when the server closed hostile
   connections, and whether lumend stayed up and exited 0 on SIGTERM (sent
   while the connections are still held).

Run as root (it raises RLIMIT_NOFILE to 65536 for itself and lumend). Expects
`make all` done; BUILD (default build) names the build directory. Everything
goes to 127.0.0.1; every loop is bounded in time; lumend and lumenbench are
killed on the way out.
"""
import argparse
import datetime
import errno
import json
import os
import random
import resource
import select
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import lumen_harness as ber  # noqa: E402  (the BER helpers only)

SUFFIX = "dc=example,dc=com"
ROOTDN = "cn=admin,dc=example,dc=com"
ROOTPW = "secret"
NOFILE = 65536


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------ LDAP PDUs

def eq_search(msgid, uid, attrs=("cn",)):
    """searchRequest ou=people subtree (uid=UID), a few attributes."""
    flt = ber.tlv(0xA3, ber.octets("uid") + ber.octets(uid))
    body = (ber.octets("ou=people," + SUFFIX) + ber.integer(2, 0x0A) + ber.integer(0, 0x0A)
            + ber.integer(0) + ber.integer(0) + ber.tlv(0x01, b"\x00") + flt
            + ber.tlv(0x30, b"".join(ber.octets(a) for a in attrs)))
    return ber.message(msgid, ber.tlv(0x63, body))


def everything_search(msgid):
    """searchRequest SUFFIX subtree (objectClass=*), all attributes."""
    return ber.search(msgid, base=SUFFIX, scope=2, attrs=())


def frames(buf):
    """Split whole LDAPMessages off buf: (list of (msgid, op), rest)."""
    out = []
    while True:
        f = ber.parse_tlv(buf)
        if f is None:
            return out, buf
        raw, buf = buf[:f[2]], buf[f[2]:]
        try:
            r = ber.Response(raw)
            out.append((r.msgid, r.op))
        except Exception:           # malformed for our tiny decoder: count as "other"
            out.append((-1, -1))


# ------------------------------------------------------------ the hostile crowd

IDLE, SLOW_FIRST, SLOW_LATER, NONREAD = "idle", "slowloris-first", "slowloris-later", "nonreading"


class Conn:
    __slots__ = ("kind", "sock", "state", "opened", "buf", "drip", "drip_pos", "msgid",
                 "closed_at", "last_drip", "asked_at", "counted")

    def __init__(self, kind):
        self.kind, self.sock, self.state = kind, None, "new"
        self.opened = self.closed_at = None
        self.buf = b""
        self.drip, self.drip_pos, self.msgid, self.last_drip = b"", 0, 1, 0.0
        self.asked_at, self.counted = None, False    # counted: in Crowd.in_flight


class Crowd:
    """Opens and holds the connections in one epoll loop (its own thread)."""

    def __init__(self, port, n_idle, n_slow, n_nonread, entries, open_rate, pipeline,
                 drip_interval, deadline):
        self.port, self.entries = port, entries
        self.open_rate, self.pipeline, self.drip_interval = open_rate, pipeline, drip_interval
        self.deadline = deadline
        kinds = ([NONREAD] * n_nonread + [SLOW_FIRST] * (n_slow // 2)
                 + [SLOW_LATER] * (n_slow - n_slow // 2) + [IDLE] * n_idle)
        random.Random(7).shuffle(kinds)
        self.todo = kinds                  # kinds still to open (popped from the end)
        self.ep = select.epoll()
        self.by_fd = {}
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.ready = threading.Event()     # every target opened (or gave up)
        self.max_in_flight = 256
        self.in_flight = 0                 # connecting, or idle awaiting its answer
        self.answer_wait = 1.0             # then an unanswered one stops counting
        self.unanswered_given_up = 0
        self.stats = {k: dict(opened=0, held=0, closed_by_server=0, failed=0,
                              close_after=[], requests_answered=0, first_answer_late=0)
                      for k in (IDLE, SLOW_FIRST, SLOW_LATER, NONREAD)}
        self.connect_errors = {}
        self.first_close = {}              # kind -> seconds since Phase B start
        self.t0 = time.monotonic()
        self.open_done_at = None
        self.reopen = True
        self.thread = threading.Thread(target=self.run, daemon=True)

    # -- bookkeeping
    def _open(self, kind):
        c = Conn(kind)
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        if kind == NONREAD:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        rc = s.connect_ex(("127.0.0.1", self.port))
        if rc not in (0, errno.EINPROGRESS):
            self._fail(c, s, errno.errorcode.get(rc, str(rc)))
            return
        c.sock, c.state, c.opened = s, "connecting", time.monotonic()
        self.by_fd[s.fileno()] = c
        self.in_flight += 1
        self.ep.register(s.fileno(), select.EPOLLOUT | select.EPOLLRDHUP)

    def _fail(self, c, s, why):
        self.stats[c.kind]["failed"] += 1
        self.connect_errors[why] = self.connect_errors.get(why, 0) + 1
        s.close()

    def _connected(self, c):
        err = c.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        self.in_flight -= 1
        fd = c.sock.fileno()
        if err != 0:
            self.ep.unregister(fd)
            del self.by_fd[fd]
            self._fail(c, c.sock, errno.errorcode.get(err, str(err)))
            return
        self.stats[c.kind]["opened"] += 1
        self.stats[c.kind]["held"] += 1
        uid = f"user.{random.randint(1, self.entries)}"
        if c.kind == NONREAD:
            try:
                c.sock.send(b"".join(everything_search(i + 1) for i in range(self.pipeline)))
            except OSError:
                pass
            c.state = "held"
            # Never read: only hear of a reset or the peer's FIN.
            self.ep.modify(fd, select.EPOLLRDHUP)
        elif c.kind in (IDLE, SLOW_LATER):
            self._send(c, eq_search(1, uid))
            c.msgid = 2
            c.state = "asked"
            if c.kind == IDLE:
                self.in_flight += 1
                c.counted, c.asked_at = True, time.monotonic()
            self.ep.modify(fd, select.EPOLLIN | select.EPOLLRDHUP)
        else:                              # SLOW_FIRST: drip from the first byte
            self._start_drip(c)
            self.ep.modify(fd, select.EPOLLIN | select.EPOLLRDHUP)

    def _send(self, c, data):
        try:
            c.sock.send(data)
        except OSError:
            pass

    def _start_drip(self, c):
        c.drip = eq_search(c.msgid, f"user.{random.randint(1, self.entries)}")
        c.msgid += 1
        c.drip_pos, c.state = 0, "dripping"

    def _closed(self, c, now):
        fd = c.sock.fileno()
        try:
            self.ep.unregister(fd)
        except OSError:
            pass
        self.by_fd.pop(fd, None)
        c.sock.close()
        st = self.stats[c.kind]
        st["held"] -= 1
        st["closed_by_server"] += 1
        st["close_after"].append(now - c.opened)
        if c.counted:
            self.in_flight -= 1
            c.counted = False
        if self.open_done_at is not None and c.kind not in self.first_close:
            self.first_close[c.kind] = now - self.open_done_at
        if self.reopen and c.kind in (SLOW_FIRST, SLOW_LATER) and not self.stop.is_set():
            self.todo.append(c.kind)

    def _readable(self, c, now):
        try:
            data = c.sock.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._closed(c, now)
            return
        msgs, c.buf = frames(c.buf + data)
        for msgid, op in msgs:
            if op == 0x65:                 # SearchResultDone
                self.stats[c.kind]["requests_answered"] += 1
                if c.kind == IDLE and c.state == "asked":
                    c.state = "held"
                    if c.counted:
                        self.in_flight -= 1
                        c.counted = False
                    else:
                        self.stats[c.kind]["first_answer_late"] += 1
                elif c.kind in (SLOW_FIRST, SLOW_LATER):
                    self._start_drip(c)
            elif op == 0x78 and msgid == 0:  # notice of disconnection: FIN follows
                pass

    def _drip(self, now):
        for c in list(self.by_fd.values()):
            if c.state == "dripping" and now - c.last_drip >= self.drip_interval \
                    and c.drip_pos < len(c.drip):
                c.last_drip = now
                try:
                    c.sock.send(c.drip[c.drip_pos:c.drip_pos + 1])
                    c.drip_pos += 1
                except BlockingIOError:
                    pass
                except OSError:
                    self._closed(c, now)
                if c.drip_pos >= len(c.drip):
                    c.state = "waiting"

    def _give_up_waiting(self, now):
        """Idle connections unanswered for answer_wait s stop holding back the
        opening of the others (the server may be stalled: keep going)."""
        for c in self.by_fd.values():
            if c.counted and c.state == "asked" and now - c.asked_at > self.answer_wait:
                c.counted = False
                self.in_flight -= 1
                self.unanswered_given_up += 1

    # -- the loop
    def run(self):
        last_drip, opened_this_tick, tick = 0.0, 0, time.monotonic()
        while not self.stop.is_set() and time.monotonic() < self.deadline:
            now = time.monotonic()
            if now - tick >= 0.1:
                tick, opened_this_tick = now, 0
            budget = int(self.open_rate / 10) - opened_this_tick
            while self.todo and budget > 0 and self.in_flight < self.max_in_flight:
                self._open(self.todo.pop())
                budget -= 1
                opened_this_tick += 1
            if not self.todo and self.in_flight == 0 and not self.ready.is_set():
                self.open_done_at = time.monotonic()
                self.ready.set()
            for fd, ev in self.ep.poll(0.05, 2048):
                c = self.by_fd.get(fd)
                if c is None:
                    continue
                now = time.monotonic()
                if c.state == "connecting":
                    self._connected(c)
                elif c.kind == NONREAD:
                    if ev & (select.EPOLLRDHUP | select.EPOLLHUP | select.EPOLLERR):
                        self._closed(c, now)
                elif ev & (select.EPOLLIN | select.EPOLLRDHUP | select.EPOLLHUP | select.EPOLLERR):
                    self._readable(c, now)
            now = time.monotonic()
            if now - last_drip >= 0.2:
                last_drip = now
                self._drip(now)
                self._give_up_waiting(now)

    def snapshot(self):
        out = {"_unanswered": sum(1 for c in list(self.by_fd.values())
                                  if c.kind == IDLE and c.state == "asked"),
               "_gave_up_waiting": self.unanswered_given_up}
        for k, st in self.stats.items():
            ca = st["close_after"]
            out[k] = dict(opened=st["opened"], held=st["held"], failed=st["failed"],
                          closed_by_server=st["closed_by_server"],
                          answered=st["requests_answered"],
                          first_answer_late=st["first_answer_late"],
                          close_after_min=min(ca) if ca else None,
                          close_after_median=statistics.median(ca) if ca else None,
                          close_after_max=max(ca) if ca else None)
        return out

    def close_all(self):
        self.stop.set()
        self.thread.join(10)
        for c in list(self.by_fd.values()):
            try:
                c.sock.close()
            except OSError:
                pass
        self.by_fd.clear()
        self.ep.close()


# ------------------------------------------------------------------- lumend

def raise_nofile():
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (NOFILE, NOFILE))
    except (ValueError, OSError):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def proc_status(pid):
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("VmRSS", "VmHWM", "Threads"):
                    out[k] = int(v.split()[0])
    except OSError:
        pass
    return out


def fd_count(pid):
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return None
    n = 0
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:"):
                n += 1
        except OSError:
            pass
    return n


def monitor(url):
    """cn=Connections,cn=Monitor counters (as the rootdn), {} if unavailable."""
    try:
        import ldap
    except ImportError:
        return {}
    out = {}
    try:
        l = ldap.initialize(url)
        l.set_option(ldap.OPT_NETWORK_TIMEOUT, 5)
        l.set_option(ldap.OPT_TIMEOUT, 5)
        l.simple_bind_s(ROOTDN, ROOTPW)
        for cn in ("Total", "Current", "Memory", "Memory Base", "Memory Queued", "Memory Output",
                   "Memory Peak", "Memory Limit", "Memory Waits", "Memory Waiting",
                   "Memory Wakeups", "Memory Refused"):
            try:
                r = l.search_s(f"cn={cn},cn=Connections,cn=Monitor", ldap.SCOPE_BASE,
                               "(objectClass=*)", ["monitorCounter"])
                out[cn] = int(r[0][1]["monitorCounter"][0])
            except ldap.TIMEOUT:
                out["error"] = f"no answer within 5 s to cn={cn}"
                break
            except ldap.LDAPError:
                pass
        l.unbind_s()
    except ldap.LDAPError as e:
        out["error"] = f"{type(e).__name__} {e}"
    return out


class Server:
    def __init__(self, build, work, args):
        self.build, self.work, self.args = build, work, args
        self.port = free_port()
        self.url = f"ldap://127.0.0.1:{self.port}"
        self.conf = os.path.join(work, "lumend.conf")
        self.proc = None
        self.directives = {}

    def lumend(self, *a, **kw):
        return subprocess.run([os.path.join(self.build, "lumend"), *a],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=60, **kw)

    def write_config(self, optional):
        """Base config plus each optional directive `lumend -T` accepts."""
        a = self.args
        base = "".join(f"include {ROOT}/schema/{s}.schema\n"
                       for s in ("core", "cosine", "inetorgperson", "nis"))
        base += (f"pidfile {self.work}/lumend.pid\nthreads {a.threads}\n"
                 f"listener-threads {a.listener_threads}\nloglevel stats\n")
        tail = (f"database mdb\nsuffix {SUFFIX}\nrootdn {ROOTDN}\nrootpw {ROOTPW}\n"
                f"directory {self.work}/db\nmaxsize 17179869184\n"
                f"cachesize {a.cachesize}\nindex objectClass eq\nindex uid eq\n")
        if a.sizelimit:
            tail += f"sizelimit {a.sizelimit}\n"
        accepted = []
        for line in optional:
            with open(self.conf, "w") as f:
                f.write(base + "".join(l + "\n" for l in accepted + [line]) + tail)
            r = self.lumend("-T", "-f", self.conf)
            if r.returncode == 0:
                accepted.append(line)
                self.directives[line.split()[0]] = line.split(None, 1)[1]
            else:
                log(f"lumend -T rejects '{line}': left out ({r.stdout.strip()[-200:]})")
        with open(self.conf, "w") as f:
            f.write(base + "".join(l + "\n" for l in accepted) + tail)
        r = self.lumend("-T", "-f", self.conf)
        if r.returncode != 0:
            raise SystemExit(f"lumend -T rejects the configuration: {r.stdout}")

    def start(self):
        def limits():
            raise_nofile()
        self.logf = open(os.path.join(self.work, "lumend.log"), "w")
        self.proc = subprocess.Popen(
            [os.path.join(self.build, "lumend"), "-f", self.conf, "-h", self.url + "/",
             "-d", "stats"], stdout=self.logf, stderr=subprocess.STDOUT, preexec_fn=limits)
        deadline = time.time() + 30
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"lumend exited {self.proc.returncode} at start-up")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise SystemExit("lumend did not start listening in 30 s")

    def stop(self, timeout=30):
        """SIGTERM; (exit status or 'timeout', seconds taken)."""
        if self.proc is None or self.proc.poll() is not None:
            return (self.proc.returncode if self.proc else None), 0.0
        t = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
            rc = "timeout (killed)"
        return rc, time.monotonic() - t

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


def lumenbench(build, url, args, pid, label):
    cmd = [os.path.join(build, "lumenbench"), "-H", url, "-m", "search",
           "-c", str(args.bench_connections), "-d", str(args.duration), "-w", str(args.warmup),
           "--entries", str(args.entries), "--json", "--label", label, "--server-pid", str(pid)]
    log("lumenbench " + " ".join(cmd[1:]))
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=args.duration + args.warmup + 60)
    except subprocess.TimeoutExpired:
        return {"error": "lumenbench timed out"}
    try:
        return json.loads(r.stdout)
    except json.JSONDecodeError:
        return {"error": f"exit {r.returncode}: {r.stdout[-500:]} {r.stderr[-500:]}"}


# ------------------------------------------------------------------- report

def fmt(v, unit=""):
    if v is None:
        return "—"
    if isinstance(v, float):
        return f"{v:,.2f}{unit}"
    if isinstance(v, int):
        return f"{v:,}{unit}"
    return f"{v}{unit}"


def mib(kib):
    return None if kib is None else kib / 1024.0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="1,000 connections (50+50 hostile), 10k entries, 5 s phases")
    p.add_argument("--entries", type=int)
    p.add_argument("--connections", type=int, help="all held connections (default 10000)")
    p.add_argument("--slowloris", type=int)
    p.add_argument("--nonreading", type=int)
    p.add_argument("--threads", type=int, default=4)
    p.add_argument("--listener-threads", type=int, default=2)
    p.add_argument("--cachesize", type=int, help="entries (default entries/5)")
    p.add_argument("--conn-total-memory", type=int, default=256 << 20)
    p.add_argument("--conn-max-memory", type=int, default=1 << 20)
    p.add_argument("--first-pdu-timeout", type=int, default=20)
    p.add_argument("--sizelimit", default="unlimited",
                   help="global sizelimit (default unlimited: the non-reading "
                        "searches ask for the whole directory)")
    p.add_argument("--pipeline", type=int, default=4,
                   help="searches each non-reading connection sends")
    p.add_argument("--duration", type=int)
    p.add_argument("--warmup", type=int)
    p.add_argument("--bench-connections", type=int, default=4)
    p.add_argument("--open-rate", type=int, default=2000, help="connections opened per second")
    p.add_argument("--out")
    p.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = p.parse_args()
    q = args.quick
    args.entries = args.entries or (10000 if q else 100000)
    args.connections = args.connections or (1000 if q else 10000)
    args.slowloris = args.slowloris if args.slowloris is not None else (50 if q else 500)
    args.nonreading = args.nonreading if args.nonreading is not None else (50 if q else 500)
    args.duration = args.duration or (5 if q else 10)
    args.warmup = args.warmup if args.warmup is not None else (1 if q else 2)
    args.cachesize = args.cachesize or max(100, args.entries // 5)
    n_idle = args.connections - args.slowloris - args.nonreading
    if n_idle < 0:
        p.error("--connections must cover --slowloris + --nonreading")

    build = os.environ.get("BUILD", "build")
    build = build if os.path.isabs(build) else os.path.join(ROOT, build)
    for tool in ("lumend", "lumenadd", "lumengen", "lumenbench"):
        if not os.access(os.path.join(build, tool), os.X_OK):
            raise SystemExit(f"hostile_load: {build}/{tool} missing: run make all")
    raise_nofile()
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft < args.connections + 512:
        raise SystemExit(f"hostile_load: RLIMIT_NOFILE {soft} is too low for "
                         f"{args.connections} connections (run as root)")

    stamp = datetime.datetime.now().strftime("%Y-%m-%d-%H%M")
    out = args.out or os.path.join(HERE, "results", f"{stamp}-hostile")
    os.makedirs(out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="lumen-hostile-")
    os.makedirs(os.path.join(work, "db"))
    srv = Server(build, work, args)
    crowd = None
    fig = {}
    try:
        ldif = os.path.join(work, "data.ldif")
        log(f"lumengen {args.entries} entries")
        subprocess.run([os.path.join(build, "lumengen"), "-n", str(args.entries), "-o", ldif],
                       check=True, timeout=600)
        optional = [f"conn_max {args.connections + 1000}",
                    f"conn_total_memory {args.conn_total_memory}",
                    f"conn_max_memory {args.conn_max_memory}",
                    f"first_pdu_timeout {args.first_pdu_timeout}"]
        srv.write_config(optional)
        log("lumenadd")
        t = time.monotonic()
        subprocess.run([os.path.join(build, "lumenadd"), "-q", "-f", srv.conf, "-l", ldif],
                       check=True, timeout=1800, stdout=subprocess.DEVNULL)
        fig["load_s"] = time.monotonic() - t
        os.unlink(ldif)
        srv.start()
        pid = srv.proc.pid
        log(f"lumend pid {pid} on {srv.url}")
        # Warm the cache the same way for both phases.
        subprocess.run([os.path.join(build, "lumenbench"), "-H", srv.url, "-m", "search",
                        "-c", "4", "-d", "3" if q else "5", "-w", "0", "--entries",
                        str(args.entries)], stdout=subprocess.DEVNULL, timeout=120)

        # ---------------------------------------------------------- phase A
        fig["mem_idle"] = proc_status(pid)
        fig["mon_idle"] = monitor(srv.url)
        fig["A"] = lumenbench(build, srv.url, args, pid, "phase A (idle)")
        fig["mem_A"] = proc_status(pid)
        fig["fds_A"] = fd_count(pid)

        # ---------------------------------------------------------- phase B
        open_budget = max(90, args.connections / max(1, args.open_rate) * 6)
        hold = open_budget + args.duration + args.warmup + 120
        crowd = Crowd(srv.port, n_idle, args.slowloris, args.nonreading, args.entries,
                      args.open_rate, args.pipeline, 1.0, time.monotonic() + hold)
        log(f"opening {args.connections} connections: {n_idle} idle, {args.slowloris} "
            f"slowloris, {args.nonreading} non-reading")
        crowd.thread.start()
        t = time.monotonic()
        rss_peak = [0]
        sampling = threading.Event()

        def sample():
            while not sampling.is_set():
                st = proc_status(pid)
                rss_peak[0] = max(rss_peak[0], st.get("VmRSS", 0))
                sampling.wait(0.5)
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        crowd.ready.wait(open_budget)
        fig["open_s"] = time.monotonic() - t
        fig["open_complete"] = crowd.ready.is_set()
        log(f"opened in {fig['open_s']:.1f} s (complete: {fig['open_complete']}); settling")
        time.sleep(2)
        fig["fds_B0"] = fd_count(pid)
        fig["mon_B0"] = monitor(srv.url)
        fig["mon_B0_t"] = time.monotonic()
        fig["mem_B0"] = proc_status(pid)
        fig["crowd_B0"] = crowd.snapshot()
        fig["B"] = lumenbench(build, srv.url, args, pid, "phase B (hostile)")
        fig["fds_B"] = fd_count(pid)
        fig["mon_B"] = monitor(srv.url)
        fig["mon_B_t"] = time.monotonic()
        fig["mem_B"] = proc_status(pid)
        fig["crowd_B"] = crowd.snapshot()
        # Hold on until the slowest first_pdu_timeout could have fired.
        extra = args.first_pdu_timeout + 5 - (time.monotonic() - crowd.open_done_at
                                                if crowd.open_done_at else 0)
        if args.first_pdu_timeout and extra > 0:
            log(f"holding {extra:.0f} s more to see first_pdu_timeout act")
            time.sleep(extra)
        fig["crowd_end"] = crowd.snapshot()
        fig["first_close"] = dict(crowd.first_close)
        fig["connect_errors"] = dict(crowd.connect_errors)
        fig["fds_end"] = fd_count(pid)
        fig["mon_end"] = monitor(srv.url)
        fig["mem_end"] = proc_status(pid)
        sampling.set()
        fig["rss_peak_B"] = rss_peak[0]
        fig["alive_B"] = srv.proc.poll() is None
        crowd.reopen = False
        log("SIGTERM to lumend with the connections still held")
        fig["term_rc"], fig["term_s"] = srv.stop()
        crowd.close_all()
        crowd = None
    finally:
        if crowd is not None:
            crowd.close_all()
        srv.kill()
    with open(os.path.join(work, "lumend.log"), errors="replace") as f:
        lines = f.readlines()
    fig["log_lines"] = len(lines)
    # lumend's log without the per-operation lines (the full one can be large).
    with open(os.path.join(out, "lumend-events.log"), "w") as f:
        f.writelines(l for l in lines if not any(w in l for w in (
            " SRCH ", " SEARCH RESULT ", " RESULT ", " UNBIND", " BIND ")))
    interesting = [l for l in lines if " SRCH " not in l and any(w in l.lower() for w in (
        "error", "fail", "cannot", "refus", "emfile", "too many", "pausing", "limit", "assert"))]
    fig["log_interesting"] = interesting[:40]
    fig["log_close_reasons"] = {}
    for l in lines:
        if "closing:" in l:
            why = l.split("closing:", 1)[1].strip()
            fig["log_close_reasons"][why] = fig["log_close_reasons"].get(why, 0) + 1
    report = render(args, srv, fig, n_idle)
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write(report)
    with open(os.path.join(out, "figures.json"), "w") as f:
        json.dump({"args": vars(args), "directives": srv.directives, **fig}, f, indent=1,
                  default=str)
    shutil.copy(os.path.join(work, "lumend.conf"), os.path.join(out, "lumend.conf"))
    print(report)
    log(f"report: {out}/report.md")
    if args.keep:
        log(f"kept {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if fig.get("goals_met") else 1


def render(args, srv, fig, n_idle):
    A, B = fig.get("A", {}), fig.get("B", {})

    def bench(r, key):
        return r.get(key) if isinstance(r, dict) else None

    def lat(r, key):
        v = r.get("latency_ms", {}).get(key) if isinstance(r, dict) else None
        return v

    p99a, p99b = lat(A, "p99"), lat(B, "p99")
    ratio = (p99b / p99a) if p99a and p99b else None
    L = []
    L.append(f"# Hostile load — {datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}\n")
    L.append(f"{args.entries:,} entries, cachesize {args.cachesize:,} entries, threads "
             f"{args.threads}, listener-threads {args.listener_threads}, sizelimit "
             f"{args.sizelimit}; directives accepted: "
             + ", ".join(f"`{k} {v}`" for k, v in srv.directives.items()) + ".  ")
    L.append(f"Held in phase B: {args.connections:,} connections = {n_idle:,} idle + "
             f"{args.slowloris:,} slowloris (1 byte/s; half before their first request, "
             f"half after one) + {args.nonreading:,} non-reading ({args.pipeline} pipelined "
             f"`(objectClass=*)` subtree searches, all attributes, SO_RCVBUF 4 KiB). "
             f"Normal client: lumenbench search `(uid=user.[1-N])`, "
             f"{args.bench_connections} connections, {args.warmup} s warm-up + "
             f"{args.duration} s measured. Load took {fig.get('load_s', 0):.1f} s; "
             f"opening took {fig.get('open_s', 0):.1f} s.\n")
    L.append("| figure | phase A (idle) | phase B (hostile) |")
    L.append("|---|---|---|")
    L.append(f"| lumenbench ops/s | {fmt(bench(A, 'ops_per_s'))} | {fmt(bench(B, 'ops_per_s'))} |")
    for k in ("p50", "p90", "p99", "p99_9", "max"):
        L.append(f"| latency {k} (ms) | {fmt(lat(A, k))} | {fmt(lat(B, k))} |")
    L.append(f"| p99 B / p99 A | | **{fmt(ratio)}** (goal ≤ 2) |")
    def errs(r):
        if not isinstance(r, dict):
            return "—"
        if "error" in r:
            return r["error"][:200]
        e = r.get("errors", {})
        bad = {k: v for k, v in e.items() if v and k != "total"}
        res = {k: v for k, v in r.get("results", {}).items() if v}
        return f"{e.get('total', '?')} errors {bad or ''}; results {res}"
    L.append(f"| lumenbench errors, result codes | {errs(A)} | {errs(B)} |")
    cpu = lambda r: r.get("client_cpu", {}).get("percent_of_core") if isinstance(r, dict) else None
    L.append(f"| lumenbench client CPU (% of a core) | {fmt(cpu(A))} | {fmt(cpu(B))} |")
    mA, mB0, mB, mE = (fig.get(k, {}) for k in ("mem_A", "mem_B0", "mem_B", "mem_end"))
    L.append(f"| lumend sockets (/proc fd) | {fmt(fig.get('fds_A'))} | {fmt(fig.get('fds_B0'))} "
             f"before bench, {fmt(fig.get('fds_B'))} after, {fmt(fig.get('fds_end'))} at the end |")
    mi, mb0, mb, me = (fig.get(k, {}) for k in ("mon_idle", "mon_B0", "mon_B", "mon_end"))
    L.append(f"| cn=Current,cn=Connections | {fmt(mi.get('Current'))} | {fmt(mb0.get('Current'))} "
             f"before bench, {fmt(mb.get('Current'))} after, {fmt(me.get('Current'))} at the end |")
    L.append(f"| VmRSS (MiB) | {fmt(mib(mA.get('VmRSS')))} | {fmt(mib(mB0.get('VmRSS')))} before bench, "
             f"{fmt(mib(mB.get('VmRSS')))} after, peak sampled {fmt(mib(fig.get('rss_peak_B')))} |")
    L.append(f"| VmHWM (MiB) | {fmt(mib(mA.get('VmHWM')))} | {fmt(mib(mE.get('VmHWM')))} |")
    counts = ("Memory Waits", "Memory Waiting", "Memory Wakeups", "Memory Refused")
    for cn in ("Memory", "Memory Base", "Memory Queued", "Memory Output", "Memory Peak",
               "Memory Limit") + counts:
        conv = (lambda v: fmt(v / 1048576.0) + " MiB") if cn not in counts else fmt
        g = lambda m: conv(m[cn]) if cn in m else "—"
        L.append(f"| cn={cn},cn=Connections | {g(mi)} | {g(mb0)} before bench, {g(mb)} after, "
                 f"{g(me)} at the end |")
    # Waits per second while the bench ran: with the former 50 ms retry
    # timer every retry that found no room counted a wait again.
    span = (fig.get("mon_B_t") or 0) - (fig.get("mon_B0_t") or 0)
    for cn in ("Memory Waits", "Memory Wakeups"):
        if span > 0 and cn in mb and cn in mb0:
            L.append(f"| cn={cn} per second during the phase B bench | — | "
                     f"{fmt((mb[cn] - mb0[cn]) / span)} |")
    L.append("")
    L.append("Held connections, as the client saw them (at the end of phase B, then after "
             f"waiting out first_pdu_timeout):\n")
    L.append("| kind | target | opened | held (B) | held (end) | closed by server | "
             "first close after all were open (s) | open→close min / median / max (s) | "
             "requests answered | connect failures |")
    L.append("|---|---|---|---|---|---|---|---|---|---|")
    targets = {IDLE: n_idle, SLOW_FIRST: args.slowloris // 2,
               SLOW_LATER: args.slowloris - args.slowloris // 2, NONREAD: args.nonreading}
    cb, ce = fig.get("crowd_B", {}), fig.get("crowd_end", {})
    for k in (IDLE, SLOW_FIRST, SLOW_LATER, NONREAD):
        b, e = cb.get(k, {}), ce.get(k, {})
        fc = fig.get("first_close", {}).get(k)
        L.append(f"| {k} | {targets[k]:,} | {fmt(e.get('opened'))} | {fmt(b.get('held'))} | "
                 f"{fmt(e.get('held'))} | {fmt(e.get('closed_by_server'))} | {fmt(fc)} | "
                 f"{fmt(e.get('close_after_min'))} / {fmt(e.get('close_after_median'))} / "
                 f"{fmt(e.get('close_after_max'))} | {fmt(e.get('answered'))} | "
                 f"{fmt(e.get('failed'))} |")
    L.append("")
    L.append(f"Idle connections whose one search was still unanswered at the end of phase B: "
             f"{fmt(cb.get('_unanswered'))} (at the end: {fmt(ce.get('_unanswered'))}; "
             f"answered only after the client stopped waiting 1 s for them: "
             f"{fmt(ce.get(IDLE, {}).get('first_answer_late'))}).  ")
    for label, m in (("before phase B", mi), ("before the bench", mb0), ("after the bench", mb),
                     ("at the end", me)):
        if m.get("error"):
            L.append(f"cn=Monitor {label}: {m['error']}.  ")
    rss_growth = (mib(fig.get("rss_peak_B")) or 0) - (mib(mA.get("VmRSS")) or 0)
    L.append(f"VmRSS growth from phase A to the phase-B peak: {rss_growth:,.1f} MiB for "
             f"{args.connections:,} connections (conn_total_memory "
             f"{args.conn_total_memory / 1048576:,.0f} MiB).  ")
    ops_b = bench(B, "ops") if isinstance(B, dict) else None
    verdicts = [
        ("others kept being served (p99 B ≤ 2 × p99 A)",
         ratio is not None and ratio <= 2 and bool(ops_b),
         f"p99 ratio {fmt(ratio)}, {fmt(ops_b)} operations measured in phase B"),
        ("lumend's RSS growth stayed under conn_total_memory",
         rss_growth * 1048576 < args.conn_total_memory, f"{rss_growth:,.1f} MiB"),
        ("lumend stayed up and exited 0 on SIGTERM",
         bool(fig.get("alive_B")) and fig.get("term_rc") == 0, f"exit {fig.get('term_rc')}"),
    ]
    L.append("\n| goal | met | |\n|---|---|---|")
    L.extend(f"| {g} | **{'yes' if ok else 'NO'}** | {why} |" for g, ok, why in verdicts)
    fig["goals_met"] = all(ok for _, ok, _ in verdicts)
    L.append("")
    if fig.get("connect_errors"):
        L.append(f"Connect errors: {fig['connect_errors']}  ")
    L.append(f"lumend stayed up through phase B: **{fig.get('alive_B')}**; SIGTERM with "
             f"the connections held: exit **{fig.get('term_rc')}** after "
             f"{fig.get('term_s', 0):.2f} s.  ")
    L.append(f"Server-side closes in the log: {fig.get('log_close_reasons') or 'none'}.  ")
    if fig.get("log_interesting"):
        L.append("\nlumend log lines worth a look (first 40):\n\n```")
        L.extend(l.rstrip()[:300] for l in fig["log_interesting"])
        L.append("```")
    return "\n".join(L) + "\n"


if __name__ == "__main__":
    sys.exit(main())
