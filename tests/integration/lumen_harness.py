"""lumen_harness.py — start/stop a lumend for a Python integration test, and a
minimal BER/LDAP codec on plain sockets (no third-party libraries).

Mirrors lib.sh: own temp dir, free loopback port, `$BUILD/lumend -d stats`,
SIGTERM at the end, failure if lumend did not exit 0 or a sanitizer wrote a
report (ASAN_OPTIONS/UBSAN_OPTIONS log_path point into the temp dir).
"""
import concurrent.futures
import glob
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("BUILD", "build")
LUMEND = os.path.join(ROOT, BUILD, "lumend")


class Results:
    def __init__(self, name):
        self.name, self.passed, self.failed = name, 0, 0

    def check(self, label, condition, detail=""):
        if condition:
            self.passed += 1
            print(f"  ok   {self.name}: {label}")
        else:
            self.failed += 1
            print(f"  FAIL {self.name}: {label}" + (f"\n       {detail}" if detail else ""))
        sys.stdout.flush()
        return condition

    def finish(self):
        print(f"{self.name}: {self.passed} passed, {self.failed} failed")
        sys.exit(0 if self.failed == 0 else 1)


def write_people_ldif(path, count, description_bytes=900):
    """The suffix, ou=People and `count` inetOrgPerson entries (uid=uN), each
    with a description of description_bytes: big results for output tests."""
    with open(path, "w") as f:
        f.write("dn: dc=example,dc=com\nobjectClass: dcObject\nobjectClass: organization\n"
                "dc: example\no: Example\n\n"
                "dn: ou=People,dc=example,dc=com\nobjectClass: organizationalUnit\n"
                "ou: People\n\n")
        for i in range(count):
            f.write(f"dn: uid=u{i},ou=People,dc=example,dc=com\nobjectClass: inetOrgPerson\n"
                    f"uid: u{i}\ncn: User {i}\nsn: {i}\n"
                    f"description: {'x' * description_bytes}\n\n")


def config_head(tmp, suffix="dc=example,dc=com"):
    """The lines a configuration test starts from: three schema includes and
    a database section (7 lines, so a test's own lines start at line 7)."""
    head = [f"include {ROOT}/schema/{n}.schema" for n in ("core", "cosine", "inetorgperson")]
    return head + ["database mdb", f"suffix {suffix}", f"directory {tmp}"]


def lumend_check(path):
    """`lumend -T -f path`: (exit code, output)."""
    p = subprocess.run([LUMEND, "-T", "-f", path], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=30)
    return p.returncode, p.stdout.decode(errors="replace")


def check_config_errors(results, tmp, head, cases):
    """Each case (label, lines, line_no, message): head + lines written to a
    file fails `lumend -T` (exit 1) naming FILE:LINE and the message."""
    for label, lines, line_no, message in cases:
        path = os.path.join(tmp, "bad.conf")
        with open(path, "w") as f:
            f.write("\n".join(head + lines) + "\n")
        rc, out = lumend_check(path)
        results.check(f"config: {label} fails -T", rc == 1, f"exit {rc}: {out}")
        results.check(f"config: {label} names file, line and reason",
                      f"{path}:{line_no}" in out and message in out, out)


def wait_for(predicate, seconds, interval=0.1):
    """Poll predicate every `interval` for at most `seconds`; its last value."""
    deadline = time.time() + seconds
    value = predicate()
    while not value and time.time() < deadline:
        time.sleep(interval)
        value = predicate()
    return value


def wait_port(port, seconds=10):
    """Wait until something accepts TCP connections on port (e.g. /metrics)."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except ConnectionRefusedError:
            time.sleep(0.05)


_ports_given = set()
_ports_lock = threading.Lock()


def free_port():
    """A loopback port nothing listens on, never the same twice in one test:
    a sweep starts servers from several threads, and the kernel may offer a
    port again between one server's choice of it and its listen()."""
    with _ports_lock:
        while True:
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
            if port not in _ports_given:
                _ports_given.add(port)
                return port


def sanitizer_reports(d):
    """What AddressSanitizer and UBSan wrote into directory d (their
    log_path, set by Lumend and FaultyLumend): empty when nothing went wrong."""
    out = ""
    for path in sorted(glob.glob(os.path.join(d, "asan*")) + glob.glob(os.path.join(d, "ubsan*"))):
        with open(path, errors="replace") as f:
            out += f.read()
    return out


def rss_bytes(pid):
    """The resident size of process pid, 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def self_signed_certificate(d, cn="localhost"):
    """(certificate, key): a fresh self-signed pair in d (server.pem,
    server.key) for a TLSCertificateFile / TLSCertificateKeyFile line."""
    cert, key = os.path.join(d, "server.pem"), os.path.join(d, "server.key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                    "-out", cert, "-days", "2", "-subj", f"/CN={cn}"],
                   check=True, capture_output=True)
    return cert, key


def tls_client_context():
    """A client context that accepts any certificate (the tests' own
    self-signed ones)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


def stop_process(proc, timeout=30):
    """SIGTERM unless it has ended; its exit status, or "hang" (then killed)."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return "hang"


def sweep_jobs():
    """How many runs of a fault sweep go at once: one per CPU (each run is
    its own lumend on its own copy of a database), LUMEN_TEST_JOBS if set."""
    return max(1, int(os.environ.get("LUMEN_TEST_JOBS", "0") or 0) or os.cpu_count() or 1)


def map_in_parallel(function, items, jobs=None):
    """[function(item) for item in items], the calls spread over `jobs`
    threads, the results in the items' order. An exception in a call is
    raised here, as the loop would have."""
    items = list(items)
    jobs = jobs or sweep_jobs()
    if jobs == 1 or len(items) < 2:
        return [function(item) for item in items]
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(function, items))


class Lumend:
    def __init__(self, extra_config="", extra_urls=(), preexec_fn=None, db_config="",
                 preload=None, listener_threads=2):
        """db_config: lines for the database section; preload: an LDIF
        loaded with lumenadd before lumend starts; listener_threads None
        leaves lumend its default."""
        self.tmp = tempfile.mkdtemp(prefix="lumen-it-")
        self.port = free_port()
        os.makedirs(os.path.join(self.tmp, "db"))
        schema = "".join(f"include {ROOT}/schema/{n}.schema\n"
                         for n in ("core", "cosine", "inetorgperson", "nis"))
        self.config = os.path.join(self.tmp, "slapd.conf")
        with open(self.config, "w") as f:
            threads_line = ("" if listener_threads is None
                            else f"listener-threads {listener_threads}\n")
            f.write(schema + f"threads 2\n{threads_line}{extra_config}\n"
                    'database mdb\nsuffix "dc=example,dc=com"\n'
                    'rootdn "cn=admin,dc=example,dc=com"\nrootpw secret\n'
                    f"directory {self.tmp}/db\n{db_config}\n")
        if preload is not None:
            subprocess.run([os.path.join(ROOT, BUILD, "lumenadd"), "-q", "-f", self.config,
                            "-l", preload], check=True, capture_output=True)
        env = dict(os.environ)
        env["ASAN_OPTIONS"] = f"log_path={self.tmp}/asan:detect_leaks=1"
        env["UBSAN_OPTIONS"] = f"log_path={self.tmp}/ubsan:print_stacktrace=1"
        self.log = open(os.path.join(self.tmp, "lumend.log"), "w")
        self.proc = subprocess.Popen(
            [LUMEND, "-f", self.config, "-h",
             " ".join((f"ldap://127.0.0.1:{self.port}/",) + tuple(extra_urls)), "-d", "stats"],
            stderr=self.log, env=env, preexec_fn=preexec_fn)
        # Ready means answering LDAP (lumend listens once it can, but the
        # check costs nothing and also proves the answer).
        deadline = time.time() + 30
        while time.time() < deadline:
            if self.proc.poll() is not None:
                break
            if self.answers():
                return
            time.sleep(0.05)
        raise RuntimeError("lumend did not start: " + self.log_text())

    def answers(self, timeout=2):
        """Does lumend answer a root DSE search (within timeout seconds)?"""
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=timeout) as s:
                s.sendall(search(1, attrs=("1.1",)))
                responses, _ = read_responses(s, count=2, timeout=timeout)
                return any(r.op == 0x65 for r in responses)
        except OSError:
            return False

    def connect(self, timeout=5):
        s = socket.create_connection(("127.0.0.1", self.port), timeout=timeout)
        return s

    def alive(self):
        return self.proc.poll() is None

    def log_text(self):
        self.log.flush()
        with open(os.path.join(self.tmp, "lumend.log")) as f:
            return f.read()

    def log_has(self, text, seconds=10):
        """Whether text reaches the log within seconds: lumend's logger thread
        writes behind the operations, later on a loaded machine."""
        deadline = time.time() + seconds
        while True:
            if text in self.log_text():
                return True
            if time.time() >= deadline:
                return False
            time.sleep(0.05)

    def sanitizer_reports(self):
        return sanitizer_reports(self.tmp)

    def stop(self, results):
        rc = stop_process(self.proc, timeout=20)
        results.check("lumend exits 0 on SIGTERM", rc == 0, f"exit {rc}: {self.log_text()[-2000:]}")
        reports = self.sanitizer_reports()
        results.check("no sanitizer reports", reports == "", reports[:4000])
        self.log.close()
        if not os.environ.get("KEEP_TMP"):
            shutil.rmtree(self.tmp, ignore_errors=True)


# ------------------------------------------------------------------ BER codec

def length_octets(n):
    if n < 0x80:
        return bytes([n])
    body = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(body)]) + body


def tlv(tag, content):
    return bytes([tag]) + length_octets(len(content)) + content


def integer(v, tag=0x02):
    n = max(1, (v.bit_length() + 8) // 8)
    return tlv(tag, v.to_bytes(n, "big", signed=True))


def octets(s, tag=0x04):
    return tlv(tag, s.encode() if isinstance(s, str) else s)


def boolean(value):
    return tlv(0x01, b"\xff" if value else b"\x00")


def message(msgid, op, controls=b""):
    """An LDAPMessage; controls: the encoded [0] Controls (see controls())."""
    return tlv(0x30, integer(msgid) + op + controls)


def control(oid, value=None, critical=False):
    """One Control: value is its encoded controlValue (bytes), or None."""
    return tlv(0x30, octets(oid) + (boolean(True) if critical else b"")
               + (octets(value) if value is not None else b""))


def controls(*items):
    """The [0] Controls of a message from control() items ("" for none)."""
    return tlv(0xA0, b"".join(items)) if items else b""


def bind_simple(msgid, dn="", password="", version=3):
    return message(msgid, tlv(0x60, integer(version) + octets(dn) + octets(password, 0x80)))


def bind_sasl(msgid, mechanism, dn="", credentials=None):
    creds = octets(credentials) if credentials is not None else b""
    return message(msgid, tlv(0x60, integer(3) + octets(dn) + tlv(0xA3, octets(mechanism) + creds)))


def search(msgid, base="", scope=0, attrs=("+",), filter_present="objectClass", filter=None,
           size=0, time=0, types_only=False, deref=0, controls=b""):
    """A SearchRequest; filter: an encoded Filter, else (filter_present=*)."""
    if filter is None:
        filter = octets(filter_present, 0x87)
    body = (octets(base) + integer(scope, 0x0A) + integer(deref, 0x0A) + integer(size)
            + integer(time) + boolean(types_only) + filter
            + tlv(0x30, b"".join(octets(a) for a in attrs)))
    return message(msgid, tlv(0x63, body), controls)


def abandon(msgid, target):
    return message(msgid, integer(target, 0x50))


def unbind(msgid):
    return message(msgid, tlv(0x42, b""))


def extended(msgid, oid, value=None, controls=b""):
    body = octets(oid, 0x80) + (octets(value, 0x81) if value is not None else b"")
    return message(msgid, tlv(0x77, body), controls)


def parse_tlv(buf, pos=0):
    """(tag, content_start, content_end) or None if buf is too short, or its
    length is not a definite one of at most 8 octets (never lumend's)."""
    if len(buf) < pos + 2:
        return None
    tag, first = buf[pos], buf[pos + 1]
    pos += 2
    if first < 0x80:
        length = first
    else:
        n = first & 0x7F
        if n == 0 or n > 8 or len(buf) < pos + n:
            return None
        length = int.from_bytes(buf[pos:pos + n], "big")
        pos += n
    if len(buf) < pos + length:
        return None
    return tag, pos, pos + length


class Response:
    """One LDAPMessage from the server: message id, op tag, result code."""

    def __init__(self, raw):
        self.raw = raw
        _, start, end = parse_tlv(raw)
        tag, s, e = parse_tlv(raw, start)
        self.msgid = int.from_bytes(raw[s:e], "big", signed=True)
        self.op, op_start, op_end = parse_tlv(raw, e)
        self.body = raw[op_start:op_end]
        self.code = None
        self.diagnostic = b""
        self.value = None
        if self.op in (0x61, 0x65, 0x67, 0x69, 0x6B, 0x6D, 0x6F, 0x78):
            t, s, e = parse_tlv(self.body)
            self.code = int.from_bytes(self.body[s:e], "big")
            t, s, e = parse_tlv(self.body, e)          # matchedDN
            t, s, e = parse_tlv(self.body, e)          # diagnosticMessage
            self.diagnostic = self.body[s:e]
            pos = e
            while pos < len(self.body):
                t, s, e = parse_tlv(self.body, pos)
                if t == 0x8B:
                    self.value = self.body[s:e]
                if t == 0x8A:
                    self.name = self.body[s:e]
                pos = e

    def is_notice_of_disconnection(self):
        return self.msgid == 0 and self.op == 0x78 and b"1.3.6.1.4.1.1466.20036" in self.body


def read_responses(sock, count=None, timeout=5):
    """Read until `count` messages arrived, the peer closed, or timeout.
    Returns (responses, closed)."""
    return read_messages_until(
        sock, lambda out: count is not None and len(out) >= count, timeout)


def read_messages_until(sock, done, timeout=5):
    """Read whole messages until done(messages so far) is true, the peer
    closed, or timeout. Returns (responses, closed). Reads no further than
    the message that satisfied done, so a test that reads a fixed count or
    up to one message never leaves the next scenario a cut message."""
    sock.settimeout(timeout)
    # One buffer and an offset into it: megabytes of results in small
    # messages would be copied once per message by slicing.
    buf, pos, out, closed = bytearray(), 0, [], False
    deadline = time.time() + timeout
    while not done(out):
        framed = parse_tlv(buf, pos)
        if framed is not None:
            out.append(Response(bytes(buf[pos:framed[2]])))
            pos = framed[2]
            continue
        if pos:
            del buf[:pos]
            pos = 0
        remaining = deadline - time.time()
        if remaining <= 0:
            break
        sock.settimeout(remaining)
        try:
            data = sock.recv(262144)
        except socket.timeout:
            break
        except (ConnectionError, ssl.SSLError):
            # A reset, or a TLS connection that ended without close_notify.
            closed = True
            break
        if not data:
            closed = True
            break
        buf += data
    return out, closed


# --- fault injection (tests/fault/fault_inject.c) ---------------------------

def fault_sites(stderr, word):
    """[(kind, n, site)] of lumend-faults' lines 'lumen-fault: WORD KIND #N at SITE'."""
    out = []
    for line in stderr.splitlines():
        parts = line.split()
        if len(parts) == 6 and parts[0] == "lumen-fault:" and parts[1] == word:
            out.append((parts[2], int(parts[3].lstrip("#")), parts[5]))
    return out


def first_of_each_site(calls):
    """[(kind, n)]: the first call of every distinct call site of a trace."""
    seen, plan = set(), []
    for kind, n, site in calls:
        if (kind, site) not in seen:
            seen.add((kind, site))
            plan.append((kind, n))
    return plan


def first_and_last_of_each_site(calls):
    """[(kind, n)]: the first and the last call of every distinct call site
    of a trace (an operation that reads its target, then its candidates,
    reaches the same site for both)."""
    last = {(kind, site): (kind, n) for kind, n, site in calls}
    plan = first_of_each_site(calls)
    return plan + sorted(set(last.values()) - set(plan), key=lambda c: (c[0], c[1]))


class FaultyLumend:
    """lumend-faults serving directory d (its slapd.conf) on a free loopback
    port (`scheme` ldap or ldaps), told to fail the call `spec` names
    (LUMEN_FAULT). With armed_by_signal it counts only between two window()
    calls (LUMEN_FAULT_ARM=signal), else from its start. `ready` says
    whether it started; with must_start a failed start raises. Sanitizer
    reports go into d."""

    def __init__(self, d, spec, scheme="ldap", armed_by_signal=True, must_start=True):
        self.d, self.port = d, free_port()
        env = dict(os.environ, LUMEN_FAULT=spec)
        if armed_by_signal:
            env["LUMEN_FAULT_ARM"] = "signal"
        env["ASAN_OPTIONS"] = f"log_path={d}/asan:detect_leaks=1"
        env["UBSAN_OPTIONS"] = f"log_path={d}/ubsan:print_stacktrace=1"
        self.err = open(os.path.join(d, "stderr"), "w")
        self.proc = subprocess.Popen([os.path.join(ROOT, BUILD, "lumend-faults"), "-f",
                                      os.path.join(d, "slapd.conf"), "-h",
                                      f"{scheme}://127.0.0.1:{self.port}/",
                                      "-d", os.environ.get("FAULT_DEBUG", "0")],
                                     stderr=self.err, stdout=subprocess.DEVNULL, env=env)
        self.ready = self.wait_ready()
        if must_start and not self.ready:
            raise RuntimeError("lumend-faults did not start: " + self.stderr())

    def wait_ready(self, seconds=60):
        """Until lumend says it is ready or exits; True if ready."""
        deadline = time.time() + seconds
        while time.time() < deadline:
            if " ready: " in self.stderr():
                return True
            if self.proc.poll() is not None:
                return False
            time.sleep(0.02)
        return False

    def connect(self, dn=None, password=None):
        """A python-ldap connection, bound as dn when one is given."""
        import ldap
        c = ldap.initialize(f"ldap://127.0.0.1:{self.port}")
        c.set_option(ldap.OPT_NETWORK_TIMEOUT, 10)
        c.set_option(ldap.OPT_TIMEOUT, 20)
        if dn is not None:
            c.simple_bind_s(dn, password)
        return c

    def window(self, seconds=20):
        """Open or close the counting window (SIGUSR2), and wait until
        lumend-faults says it did ("window open", or the closing count).
        A server that exited or does not say so within `seconds` is left to
        the caller's checks (no answer, the exit status)."""
        path = os.path.join(self.d, "stderr")
        start = os.path.getsize(path)
        self.proc.send_signal(signal.SIGUSR2)
        deadline = time.time() + seconds
        while time.time() < deadline and self.proc.poll() is None:
            with open(path, "rb") as f:
                f.seek(start)
                said = f.read()
            if b"lumen-fault: window open" in said or b"lumen-fault: counted " in said:
                return
            time.sleep(0.005)

    def stop(self):
        """SIGTERM; the exit status, or "hang"."""
        rc = stop_process(self.proc)
        self.err.close()
        return rc

    def stderr(self):
        if not self.err.closed:
            self.err.flush()
        with open(os.path.join(self.d, "stderr"), errors="replace") as f:
            return f.read()

    def stop_problems(self):
        """Stop it; what went wrong: an exit status but 0, sanitizer reports."""
        problems = []
        rc = self.stop()
        if rc != 0:
            problems.append(f"exit status {rc}")
        reports = self.sanitizer_reports()
        if reports:
            problems.append("sanitizer: " + reports[:2000])
        return problems

    def sanitizer_reports(self):
        return sanitizer_reports(self.d)


def fault_database(tmp, name, config_text, ldif, template=None):
    """Directory tmp/name with a slapd.conf from config_text(its db
    directory) and a database: a copy of template's, or ldif loaded by
    lumenadd."""
    d = os.path.join(tmp, name)
    if template is not None:
        shutil.copytree(template, d)
    else:
        os.makedirs(os.path.join(d, "db"))
    with open(os.path.join(d, "slapd.conf"), "w") as f:
        f.write(config_text(os.path.join(d, "db")))
    if template is None:
        with open(os.path.join(d, "base.ldif"), "w") as f:
            f.write(ldif)
        p = subprocess.run([os.path.join(ROOT, BUILD, "lumenadd"), "-f",
                            os.path.join(d, "slapd.conf"), "-l", os.path.join(d, "base.ldif")],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        if p.returncode != 0:
            raise RuntimeError("cannot load the template: " + p.stderr.decode(errors="replace"))
    return d
