#!/usr/bin/env python3
"""Read scale-out behind a real load balancer: one lumend provider
(`overlay syncprov`), two lumend replicas (`syncrepl ...
type=refreshAndPersist` to the provider) and Debian's haproxy in TCP mode
with `option ldap-check`, all on loopback.

haproxy is the test's own child: `haproxy -f <tmp>/haproxy.cfg -db` in the
foreground on a free port, with a stats socket in the temp dir, stopped by
its PID at the end (never the system service).

  - haproxy's health check (an anonymous simple bind, messageID 1) gets a
    bindResponse success from lumend: both replicas are UP with L7OK;
  - reads through haproxy are spread over both replicas;
  - reader threads keep reading through haproxy (a new connection, an
    anonymous bind and a search each time, one reconnect on serverDown as
    any client does) while one replica is killed with SIGKILL and
    restarted: every read gets its answer; haproxy marks the replica DOWN
    (stats socket and its log) and sends the reads to the other one, then
    marks it UP again after the restart and sends it reads again;
  - a write to the provider while the replica is down reaches it after its
    restart (it resumes from its cookie), and a write after it is pushed to
    both replicas and read back through haproxy.
"""
import csv
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lumen_harness as h  # noqa: E402
import slapd_harness as sh  # noqa: E402

import ldap  # noqa: E402

R = h.Results("t_haproxy.py")
B = sh.SUFFIX
PEOPLE = "ou=people," + B
COUNT = 200
HAPROXY = shutil.which("haproxy") or "/usr/sbin/haproxy"
READERS = 4
DEADLINE = time.time() + 90          # hard bound on the whole test


def ldif():
    out = [f"dn: {B}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: E\n",
           f"dn: {PEOPLE}\nobjectClass: organizationalUnit\nou: people\n"]
    for i in range(COUNT):
        out.append(f"dn: uid=u{i},{PEOPLE}\nobjectClass: inetOrgPerson\nuid: u{i}\n"
                   f"cn: User {i}\nsn: S{i}\n")
    return "\n".join(out) + "\n"


def replica_lines(provider_uri, rid):
    return ["index objectClass,uid,entryUUID,entryCSN eq", "dbnosync",
            f'syncrepl rid={rid} provider={provider_uri} bindmethod=simple '
            f'binddn="{sh.ROOTDN}" credentials={sh.ROOTPW} searchbase="{B}" '
            'type=refreshAndPersist retry="1 +" timeout=5 network-timeout=5 '
            'attrs="*,+" schemachecking=off',
            f"updateref {provider_uri}"]


def wait_for(predicate, seconds):
    """h.wait_for, within the whole test's DEADLINE."""
    return h.wait_for(predicate, max(0.0, min(seconds, DEADLINE - time.time())))


def has_entry(uri, dn):
    try:
        conn = ldap.initialize(uri)
        conn.set_option(ldap.OPT_NETWORK_TIMEOUT, 2)
        conn.set_option(ldap.OPT_TIMEOUT, 5)
        res = conn.search_s(dn, ldap.SCOPE_BASE, "(objectClass=*)", ["1.1"])
        conn.unbind_s()
        return len(res) == 1
    except ldap.LDAPError:
        return False


def count_entries(uri):
    try:
        conn = ldap.initialize(uri)
        conn.set_option(ldap.OPT_NETWORK_TIMEOUT, 2)
        conn.set_option(ldap.OPT_TIMEOUT, 10)
        res = conn.search_s(PEOPLE, ldap.SCOPE_ONELEVEL, "(objectClass=inetOrgPerson)", ["1.1"])
        conn.unbind_s()
        return len(res)
    except ldap.LDAPError:
        return -1


class HAProxy:
    """A private haproxy in the foreground (-db), stopped by its PID."""

    def __init__(self, tmp, replicas):
        self.tmp = tmp
        self.port = sh.free_port()
        self.uri = f"ldap://127.0.0.1:{self.port}"
        self.sock = os.path.join(tmp, "haproxy.sock")
        self.config = os.path.join(tmp, "haproxy.cfg")
        self.logpath = os.path.join(tmp, "haproxy.log")
        servers = "".join(f"    server replica{i + 1} 127.0.0.1:{r.port} check\n"
                          for i, r in enumerate(replicas))
        with open(self.config, "w") as f:
            f.write(f"""global
    stats socket {self.sock} mode 600 level admin
    log stdout format raw local0 info

defaults
    mode tcp
    log global
    option tcplog
    option redispatch 1
    retries 2
    timeout connect 1s
    timeout check 2s
    timeout client 30s
    timeout server 30s

listen ldap_read
    bind 127.0.0.1:{self.port}
    balance roundrobin
    option ldap-check
    default-server inter 300ms fastinter 150ms downinter 300ms fall 2 rise 2
{servers}""")
        self.proc = None
        self.log = None

    def check_config(self):
        p = subprocess.run([HAPROXY, "-c", "-f", self.config], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=30)
        return p.returncode, p.stdout.decode(errors="replace")

    def start(self):
        self.log = open(self.logpath, "a")
        self.proc = subprocess.Popen([HAPROXY, "-f", self.config, "-db"], stdout=self.log,
                                     stderr=self.log, stdin=subprocess.DEVNULL)
        if not sh.wait_listening(self.port, self.proc, seconds=10):
            raise RuntimeError(f"haproxy did not start: {self.log_text()[-2000:]}")

    def stats(self):
        """{server name: row of `show stat`} for the ldap_read backend."""
        try:
            with socket.socket(socket.AF_UNIX) as s:
                s.settimeout(2)
                s.connect(self.sock)
                s.sendall(b"show stat\n")
                data = b""
                while True:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    data += chunk
        except OSError:
            return {}
        lines = data.decode(errors="replace").splitlines()
        if not lines or not lines[0].startswith("# "):
            return {}
        rows = csv.DictReader([lines[0][2:]] + [x for x in lines[1:] if x])
        return {r["svname"]: r for r in rows if r["pxname"] == "ldap_read"}

    def status(self, name):
        return self.stats().get(name, {}).get("status", "?")

    def sessions(self, name):
        return int(self.stats().get(name, {}).get("stot", "0") or 0)

    def log_text(self):
        if self.log:
            self.log.flush()
        try:
            with open(self.logpath, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def stop(self):
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self.proc = None
        if self.log:
            self.log.close()
            self.log = None
        return rc


class Readers:
    """READERS threads reading through haproxy until stopped (bounded by
    DEADLINE): each read is a new connection, an anonymous simple bind and
    a search for one entry; a read whose connection is lost (serverDown) is
    retried once on a new connection, as clients do."""

    def __init__(self, uri):
        self.uri = uri
        self.stop_flag = threading.Event()
        self.lock = threading.Lock()
        self.records = []        # (time, ok, first attempt ok, error)
        self.threads = [threading.Thread(target=self.run, args=(n,), daemon=True)
                        for n in range(READERS)]

    def read_once(self, n):
        conn = ldap.initialize(self.uri)
        conn.set_option(ldap.OPT_NETWORK_TIMEOUT, 3)
        conn.set_option(ldap.OPT_TIMEOUT, 5)
        try:
            conn.simple_bind_s("", "")
            uid = f"u{(n * 37 + len(self.records)) % COUNT}"
            res = conn.search_s(PEOPLE, ldap.SCOPE_ONELEVEL, f"(uid={uid})", ["uid"])
            if len(res) != 1 or res[0][1].get("uid") != [uid.encode()]:
                raise AssertionError(f"wrong answer for {uid}: {res}")
        finally:
            try:
                conn.unbind_s()
            except ldap.LDAPError:
                pass

    def run(self, n):
        while not self.stop_flag.is_set() and time.time() < DEADLINE:
            first, ok, err = True, True, ""
            try:
                self.read_once(n)
            except (ldap.SERVER_DOWN, ldap.CONNECT_ERROR) as e:
                first, err = False, f"first attempt: {e!r}"
                try:
                    self.read_once(n)
                except Exception as e2:  # noqa: BLE001
                    ok, err = False, err + f"; retry: {e2!r}"
            except Exception as e:  # noqa: BLE001
                first, ok, err = False, False, repr(e)
            with self.lock:
                self.records.append((time.time(), ok, first, err))
            time.sleep(0.01)

    def start(self):
        for t in self.threads:
            t.start()

    def stop(self):
        self.stop_flag.set()
        for t in self.threads:
            t.join(timeout=15)

    def between(self, t0, t1):
        with self.lock:
            return [r for r in self.records if t0 <= r[0] <= t1]


def main():
    if not os.access(HAPROXY, os.X_OK):
        R.check("haproxy installed (make deps installs Debian's haproxy)", False, HAPROXY)
        R.finish()
    provider = sh.make_server("lumend", db_lines=["index objectClass,uid,entryUUID,entryCSN eq",
                                                  "dbnosync", "overlay syncprov"])
    provider.start()
    replicas, proxy, readers = [], None, None
    try:
        path = os.path.join(provider.tmp, "data.ldif")
        with open(path, "w") as f:
            f.write(ldif())
        rc, out = provider.ldapadd(path)
        R.check("provider loaded", rc == 0, out)
        for rid in ("001", "002"):
            replicas.append(sh.make_server("lumend",
                                           db_lines=replica_lines(provider.uri, rid)).start())
        for i, r in enumerate(replicas):
            R.check(f"replica{i + 1} holds the provider's {COUNT} entries after its refresh",
                    wait_for(lambda r=r: count_entries(r.uri) == COUNT, 30),
                    f"{count_entries(r.uri)} entries")

        proxy = HAProxy(provider.tmp, replicas)
        rc, out = proxy.check_config()
        R.check("haproxy -c accepts the configuration", rc == 0, out)
        proxy.start()
        R.check("haproxy's ldap-check finds both replicas UP",
                wait_for(lambda: all(proxy.status(f"replica{i}") == "UP" for i in (1, 2)), 10),
                str(proxy.stats()))
        st = proxy.stats()
        R.check("the checks pass at layer 7 (lumend answers the anonymous check bind)",
                all(st.get(f"replica{i}", {}).get("check_status") == "L7OK" for i in (1, 2)),
                str({k: v.get("check_status") for k, v in st.items()}))
        logs = [r.log_text() for r in replicas]
        R.check("each replica logged haproxy's check: an anonymous simple bind, err=0",
                all('BIND dn="" method=128' in x and "RESULT tag=97 err=0" in x for x in logs),
                logs[0][-1500:])

        before = [proxy.sessions(f"replica{i}") for i in (1, 2)]
        for _ in range(20):
            conn = ldap.initialize(proxy.uri)
            conn.simple_bind_s("", "")
            conn.search_s(B, ldap.SCOPE_BASE, "(objectClass=*)", ["1.1"])
            conn.unbind_s()
        after = [proxy.sessions(f"replica{i}") for i in (1, 2)]
        R.check("reads through haproxy are spread over both replicas (roundrobin)",
                all(a - b >= 5 for a, b in zip(after, before)), f"{before} -> {after}")

        readers = Readers(proxy.uri)
        readers.start()
        time.sleep(1)
        t_kill = time.time()
        replicas[0].kill9()
        R.check("haproxy marks the killed replica DOWN",
                wait_for(lambda: proxy.status("replica1").startswith("DOWN"), 10),
                str(proxy.stats().get("replica1")))
        t_down = time.time()
        p = ldap.initialize(provider.uri)
        p.simple_bind_s(sh.ROOTDN, sh.ROOTPW)
        while_down = f"uid=whiledown,{PEOPLE}"
        p.add_s(while_down, [("objectClass", [b"inetOrgPerson"]), ("uid", [b"whiledown"]),
                             ("cn", [b"While Down"]), ("sn", [b"D"])])
        s2 = proxy.sessions("replica2")
        s1 = proxy.sessions("replica1")
        time.sleep(2)
        R.check("while it is down, reads go to the other replica",
                proxy.sessions("replica2") - s2 >= 10 and proxy.sessions("replica1") == s1,
                f"replica1 {s1} -> {proxy.sessions('replica1')}, "
                f"replica2 {s2} -> {proxy.sessions('replica2')}")
        R.check("the write made during the outage reached the live replica",
                wait_for(lambda: has_entry(replicas[1].uri, while_down), 10))
        t_restart = time.time()
        replicas[0].start()
        R.check("haproxy marks the restarted replica UP again",
                wait_for(lambda: proxy.status("replica1") == "UP", 15),
                str(proxy.stats().get("replica1")))
        t_up = time.time()
        s1 = proxy.sessions("replica1")
        time.sleep(1.5)
        readers.stop()
        R.check("once UP again, the restarted replica gets reads again",
                proxy.sessions("replica1") - s1 >= 3, f"{s1} -> {proxy.sessions('replica1')}")

        records = readers.between(0, time.time())
        failed = [r for r in records if not r[1]]
        retried = [r for r in records if not r[2]]
        outage = readers.between(t_kill, t_up)
        down = readers.between(t_down, t_restart)
        R.check(f"every read through haproxy got its answer ({len(records)} reads, "
                f"{len(outage)} between the kill and UP, {len(retried)} reconnected)",
                len(records) > 50 and not failed and len(outage) > 20,
                "; ".join(r[3] for r in failed[:5]))
        R.check("only reads in flight at the kill needed a reconnect",
                len(retried) <= READERS, "; ".join(r[3] for r in retried[:5]))
        R.check("reads succeeded all through the time the replica was down",
                len(down) > 20 and all(r[1] and r[2] for r in down),
                f"{len(down)} reads")
        log = proxy.log_text()
        R.check("haproxy's log says replica1 went DOWN and came back UP",
                "Server ldap_read/replica1 is DOWN" in log and
                "Server ldap_read/replica1 is UP" in log, log[-2000:])
        R.check("haproxy's log has the reads sent to each replica",
                "ldap_read ldap_read/replica1 " in log and "ldap_read ldap_read/replica2 " in log,
                log[-1000:])

        R.check("the restarted replica caught up with the write made while it was down",
                wait_for(lambda: has_entry(replicas[0].uri, while_down), 15))
        after_dn = f"uid=afterwards,{PEOPLE}"
        p.add_s(after_dn, [("objectClass", [b"inetOrgPerson"]), ("uid", [b"afterwards"]),
                           ("cn", [b"Afterwards"]), ("sn", [b"A"])])
        p.unbind_s()
        for i, r in enumerate(replicas):
            R.check(f"a write through the provider is pushed to replica{i + 1}",
                    wait_for(lambda r=r: has_entry(r.uri, after_dn), 10))
        R.check("both replicas hold the same entries as the provider",
                all(count_entries(r.uri) == count_entries(provider.uri) == COUNT + 2
                    for r in replicas),
                str([count_entries(x.uri) for x in [provider] + replicas]))
        before = [proxy.sessions(f"replica{i}") for i in (1, 2)]
        seen = [has_entry(proxy.uri, after_dn) for _ in range(10)]
        after = [proxy.sessions(f"replica{i}") for i in (1, 2)]
        R.check("the write is read back through haproxy from both replicas",
                all(seen) and all(a > b for a, b in zip(after, before)),
                f"{seen} {before} -> {after}")
        R.check("replicas refuse writes through haproxy with a referral to the provider",
                refused_with_referral(proxy.uri, provider.uri))
    finally:
        if readers:
            readers.stop()
        if proxy:
            rc = proxy.stop()
            R.check("haproxy stopped by its PID", rc is not None and proxy.proc is None,
                    f"exit {rc}")
        for r in replicas:
            r.stop(R)
        provider.stop(R)
    R.finish()


def refused_with_referral(uri, provider_uri):
    conn = ldap.initialize(uri)
    conn.set_option(ldap.OPT_REFERRALS, 0)
    conn.simple_bind_s(sh.ROOTDN, sh.ROOTPW)
    try:
        conn.modify_s(f"uid=u1,{PEOPLE}", [(ldap.MOD_REPLACE, "sn", [b"X"])])
        return False
    except ldap.REFERRAL as e:
        return provider_uri in str(e)
    except ldap.LDAPError:
        return False
    finally:
        conn.unbind_s()


main()
