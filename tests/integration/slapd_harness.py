"""slapd_harness.py — start a private OpenLDAP slapd (back-mdb) or a lumend with
a test-chosen database section, for the heavyweight integration tests
(t_differential.py, t_crash.py, t_concurrency.py).

Both servers get the same shape of slapd.conf: schema includes, one `database
mdb` with suffix dc=example,dc=com, rootdn cn=admin,dc=example,dc=com /
secret, a temp directory, and whatever extra database lines the test passes
(indexes, dbnosync, ...). Each server runs in its own temp dir on a free
loopback port, in the foreground (`-d 0` for slapd, `-d stats` for lumend) as
the current user, and is stopped by its PID only (SIGTERM, or SIGKILL when a
test crashes it on purpose).

slapd is Debian's OpenLDAP 2.5 (/usr/sbin/slapd, modules in /usr/lib/ldap,
schema in /etc/ldap/schema). bench/install-deps.sh installs it without
starting a system service; `slapd_missing()` says why it cannot be used.
"""
import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("BUILD", "build")
# How Debian's slapd 2.5.13 has been seen to end on SIGTERM after its
# scenario (t_memberof, t_syncprov): a crash in its own shutdown.
ORACLE_SHUTDOWN_CRASHES = (-signal.SIGSEGV, -signal.SIGABRT)
LUMEND = os.path.join(ROOT, BUILD, "lumend")
SUFFIX = "dc=example,dc=com"
ROOTDN = "cn=admin,dc=example,dc=com"
ROOTPW = "secret"

SLAPD = shutil.which("slapd") or "/usr/sbin/slapd"
SLAPADD = shutil.which("slapadd") or "/usr/sbin/slapadd"
OPENLDAP_SCHEMA_DIR = "/etc/ldap/schema"
OPENLDAP_MODULE_DIR = "/usr/lib/ldap"
OPENLDAP_SCHEMAS = ("core", "cosine", "inetorgperson", "nis")
LUMEN_SCHEMAS = ("core", "cosine", "inetorgperson", "nis", "lumen")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def slapd_missing():
    """None when a private slapd with back-mdb can be started, else the reason."""
    if not os.access(SLAPD, os.X_OK):
        return f"{SLAPD} not installed (bench/install-deps.sh installs Debian's slapd)"
    for name in OPENLDAP_SCHEMAS:
        if not os.path.exists(f"{OPENLDAP_SCHEMA_DIR}/{name}.schema"):
            return f"{OPENLDAP_SCHEMA_DIR}/{name}.schema missing"
    if not glob.glob(f"{OPENLDAP_MODULE_DIR}/back_mdb*"):
        return f"back_mdb module missing from {OPENLDAP_MODULE_DIR}"
    return None


def wait_listening(port, proc, seconds=15):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if proc.poll() is not None:
            return False
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


class Server:
    """Common part: temp dir, config file, start/stop/kill by PID."""
    kind = "?"

    def __init__(self, db_lines=(), global_lines=(), tmp=None):
        self.tmp = tmp or tempfile.mkdtemp(prefix=f"lumen-it-{self.kind}-")
        self.dbdir = os.path.join(self.tmp, "db")
        os.makedirs(self.dbdir, exist_ok=True)
        self.port = free_port()
        self.uri = f"ldap://127.0.0.1:{self.port}"
        self.config = os.path.join(self.tmp, "slapd.conf")
        self.logpath = os.path.join(self.tmp, f"{self.kind}.log")
        self.proc = None
        self.log = None
        with open(self.config, "w") as f:
            f.write(self.config_text(list(global_lines), list(db_lines)))

    # -- to be provided by subclasses
    def config_text(self, global_lines, db_lines):
        raise NotImplementedError

    def command(self):
        raise NotImplementedError

    def env(self):
        return dict(os.environ)

    # -- life cycle
    def start(self):
        if self.log:
            self.log.close()
        self.log = open(self.logpath, "a")
        self.proc = subprocess.Popen(self.command(), stdout=self.log, stderr=self.log,
                                     env=self.env(), stdin=subprocess.DEVNULL)
        if not wait_listening(self.port, self.proc):
            rc = self.proc.poll()
            if rc is None:
                self.proc.kill()
                self.proc.wait()
            raise RuntimeError(f"{self.kind} did not start (exit {rc}): {self.log_text()[-3000:]}")
        return self

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def kill9(self):
        """SIGKILL by PID (a crash on purpose); waits for the process to go."""
        if self.alive():
            os.kill(self.proc.pid, signal.SIGKILL)
        if self.proc is not None:
            self.proc.wait()
        self.proc = None

    def terminate(self, timeout=30):
        """SIGTERM by PID; returns the exit status (or 'timeout' after SIGKILL)."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            rc = "timeout"
        self.proc = None
        return rc

    def log_text(self):
        if self.log:
            self.log.flush()
        try:
            with open(self.logpath, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def sanitizer_reports(self):
        out = ""
        for path in glob.glob(f"{self.tmp}/asan*") + glob.glob(f"{self.tmp}/ubsan*"):
            with open(path, errors="replace") as f:
                out += f.read()
        return out

    def stop(self, results=None):
        """SIGTERM; with `results`, record that the server exited 0 and (lumend)
        wrote no sanitizer report. Removes the temp dir unless KEEP_TMP."""
        rc = self.terminate()
        if results is not None and self.kind == "slapd" and rc in ORACLE_SHUTDOWN_CRASHES:
            # The reference server's answers were compared before it was
            # stopped; OpenLDAP 2.5's shutdown with syncprov or memberof
            # loaded now and then dies by a signal, which says nothing of
            # Lumen and must not fail the run. Shown, not hidden.
            print(f"  info {results.name}: slapd (the reference) died by signal {-rc} "
                  f"after SIGTERM; its answers were already compared")
        elif results is not None:
            results.check(f"{self.kind} exits 0 on SIGTERM", rc == 0,
                          f"exit {rc}: {self.log_text()[-2000:]}")
            if self.kind == "lumend":
                reports = self.sanitizer_reports()
                results.check("no sanitizer reports", reports == "", reports[:4000])
        if self.log:
            self.log.close()
            self.log = None
        self.cleanup()
        return rc

    def cleanup(self):
        if self.alive():
            self.kill9()
        if not os.environ.get("KEEP_TMP"):
            shutil.rmtree(self.tmp, ignore_errors=True)

    def ldapadd(self, ldif_path, continue_on_error=False, timeout=300):
        """Load an LDIF file with ldapadd as the rootdn; returns (exit, output)."""
        cmd = ["ldapadd", "-x", "-H", self.uri, "-D", ROOTDN, "-w", ROOTPW, "-f", ldif_path]
        if continue_on_error:
            cmd.insert(1, "-c")
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout)
        # stderr holds the errors; the last "adding new entry" line says which.
        last = [x for x in p.stdout.decode(errors="replace").splitlines() if x.strip()][-1:]
        return p.returncode, "\n".join(last) + "\n" + p.stderr.decode(errors="replace")


class Slapd(Server):
    """OpenLDAP slapd with back-mdb and the Debian schema files."""
    kind = "slapd"

    def config_text(self, global_lines, db_lines):
        lines = [f"include {OPENLDAP_SCHEMA_DIR}/{n}.schema" for n in OPENLDAP_SCHEMAS]
        lines += [f"modulepath {OPENLDAP_MODULE_DIR}", "moduleload back_mdb",
                  f"pidfile {self.tmp}/slapd.pid", f"argsfile {self.tmp}/slapd.args",
                  "threads 4", "loglevel 0", "sizelimit unlimited"]
        lines += global_lines
        lines += ["database mdb", f'suffix "{SUFFIX}"', f'rootdn "{ROOTDN}"',
                  f"rootpw {ROOTPW}", f"directory {self.dbdir}", "maxsize 1073741824"]
        lines += db_lines
        return "\n".join(lines) + "\n"

    def command(self):
        return [SLAPD, "-h", f"{self.uri}/", "-f", self.config, "-d", "0"]

    def slapadd(self, ldif_path):
        p = subprocess.run([SLAPADD, "-q", "-f", self.config, "-l", ldif_path],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        return p.returncode, p.stdout.decode(errors="replace")

    def index_check(self):
        """slapd has no index checker; nothing to verify."""
        return 0, ""


class Lumend(Server):
    """lumend ($BUILD/lumend) with the project's schema files."""
    kind = "lumend"

    def config_text(self, global_lines, db_lines):
        lines = [f"include {ROOT}/schema/{n}.schema" for n in LUMEN_SCHEMAS
                 if os.path.exists(f"{ROOT}/schema/{n}.schema")]
        lines += [f"pidfile {self.tmp}/lumend.pid", "threads 2", "listener-threads 2",
                  "sizelimit unlimited"]
        lines += global_lines
        lines += ["database mdb", f'suffix "{SUFFIX}"', f'rootdn "{ROOTDN}"',
                  f"rootpw {ROOTPW}", f"directory {self.dbdir}"]
        lines += db_lines
        return "\n".join(lines) + "\n"

    def command(self):
        return [LUMEND, "-f", self.config, "-h", f"{self.uri}/", "-d", "stats"]

    def env(self):
        env = dict(os.environ)
        env["ASAN_OPTIONS"] = (f"log_path={self.tmp}/asan:detect_leaks=1"
                               + (":" + os.environ["ASAN_OPTIONS"] if os.environ.get("ASAN_OPTIONS") else ""))
        env["UBSAN_OPTIONS"] = f"log_path={self.tmp}/ubsan:print_stacktrace=1"
        return env

    def tool(self, name, *args, timeout=300):
        p = subprocess.run([os.path.join(ROOT, BUILD, name), "-f", self.config, *args],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           env=self.env(), timeout=timeout)
        return p.returncode, p.stdout.decode(errors="replace")

    def index_check(self):
        """`lumenindex --check` (the server must be stopped: it takes the lock)."""
        return self.tool("lumenindex", "--check")



class ArmedFaultsLumend(Lumend):
    """lumend-faults (tests/fault/fault_inject.c) told LUMEN_FAULT=fault,
    in effect only while armed: arm() sends SIGUSR2, which arms and
    disarms, so loading the directory first is not affected."""

    def __init__(self, fault, **kwargs):
        self.fault = fault
        super().__init__(**kwargs)

    def command(self):
        return [os.path.join(ROOT, BUILD, "lumend-faults")] + super().command()[1:]

    def env(self):
        env = super().env()
        env.update(LUMEN_FAULT=self.fault, LUMEN_FAULT_ARM="signal")
        return env

    def arm(self):
        self.proc.send_signal(signal.SIGUSR2)
        time.sleep(0.1)

def make_server(kind, db_lines=(), global_lines=()):
    return (Slapd if kind == "slapd" else Lumend)(db_lines=db_lines, global_lines=global_lines)


# ------------------------------------------------------------ replication

# Operational attributes compared between a provider and its consumer.
REPLICA_COMPARED = {"entryuuid", "entrycsn"}


def start_loaded(kind, module, db_lines, ldif_text, global_lines=()):
    """A server of kind with db_lines and global_lines (slapd also gets
    `moduleload module`), started, loaded with ldif_text through ldapadd,
    and a connection bound as the rootdn: (server, connection). Raises when
    the load fails."""
    import ldap  # only the tests that start servers need python-ldap
    global_lines = list(global_lines) + ([] if kind == "lumend" else [f"moduleload {module}"])
    server = make_server(kind, db_lines=db_lines, global_lines=global_lines)
    server.start()
    conn = ldap.initialize(server.uri)
    conn.simple_bind_s(ROOTDN, ROOTPW)
    path = os.path.join(server.tmp, "data.ldif")
    with open(path, "w") as f:
        f.write(ldif_text)
    rc, out = server.ldapadd(path)
    if rc != 0:
        raise RuntimeError(f"{kind}: loading failed: {out}")
    return server, conn


def replication_ldif(count=2000):
    """The tree the replication tests share: ou=people with `count` users,
    ou=people's ou=team subtree of five, ou=groups with cn=staff naming the
    first ten users (a subtree to move, a group to repair)."""
    people, groups = "ou=people," + SUFFIX, "ou=groups," + SUFFIX
    out = [f"dn: {SUFFIX}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\n"
           "o: E\n",
           f"dn: {people}\nobjectClass: organizationalUnit\nou: people\n",
           f"dn: {groups}\nobjectClass: organizationalUnit\nou: groups\n",
           f"dn: ou=team,{people}\nobjectClass: organizationalUnit\nou: team\n"]
    for i in range(count):
        out.append(f"dn: uid=u{i},{people}\nobjectClass: inetOrgPerson\nuid: u{i}\n"
                   f"cn: User {i}\nsn: S{i}\nmail: u{i}@example.com\n")
    for i in range(5):
        out.append(f"dn: uid=t{i},ou=team,{people}\nobjectClass: inetOrgPerson\nuid: t{i}\n"
                   f"cn: Team {i}\nsn: T{i}\n")
    out.append(f"dn: cn=staff,{groups}\nobjectClass: groupOfNames\ncn: staff\n"
               + "".join(f"member: uid=u{i},{people}\n" for i in range(10)))
    return "\n".join(out) + "\n"


def bind(server):
    """A connection to server bound as the rootdn."""
    import ldap
    conn = ldap.initialize(server.uri)
    conn.simple_bind_s(ROOTDN, ROOTPW)
    return conn


def replica_snapshot(conn, base=SUFFIX):
    """{dn: {attribute: sorted values}} of user attributes, entryUUID, entryCSN."""
    import ldap
    out = {}
    for dn, attrs in conn.search_s(base, ldap.SCOPE_SUBTREE, "(objectClass=*)",
                                   ["*", "entryUUID", "entryCSN"]):
        keep = {}
        for name, values in attrs.items():
            low = name.lower()
            if low in REPLICA_COMPARED or not low.startswith(("entry", "create", "modif",
                                                              "struct")):
                keep[low] = sorted(v.lower() for v in values)
        out[dn.lower()] = keep
    return out


def converge(results, provider, consumer, label, seconds=30, base=SUFFIX):
    """Polls until consumer holds exactly provider's entries (two bound
    connections); one check in results."""
    import ldap
    deadline = time.time() + seconds
    want = got = None
    while time.time() < deadline:
        want = replica_snapshot(provider, base)
        try:
            got = replica_snapshot(consumer, base)
        except ldap.LDAPError:
            got = None
        if got == want:
            break
        time.sleep(0.1)
    detail = ""
    if got != want and got is not None:
        missing = sorted(set(want) - set(got))[:3]
        extra = sorted(set(got) - set(want))[:3]
        differ = [d for d in want if d in got and want[d] != got[d]][:2]
        detail = (f"missing {missing} extra {extra} differ "
                  f"{[(d, want[d], got[d]) for d in differ]}")
    results.check(f"{label}: the consumer holds exactly the provider's entries "
                  f"({len(want or {})} entries)", got == want, detail)
