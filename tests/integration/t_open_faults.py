#!/usr/bin/env python3
# run.sh: sanitizer pass only (a sweep of failures; see tests/integration/run.sh)
"""Fault injection at start-up: every LMDB call lumend makes while opening a
database, failed in turn (tests/fault/fault_inject.c, counting from the
start of lumend-faults).

Opening reads the format version, counts the tree's roots, reads the
moved-names marker and records the matching rules of the schema's
attribute types (stored_forms.c); with a schema file the database has not
seen (nis.schema here), that last step writes. For the first call of every
distinct LMDB call site before lumend is ready, failed with EIO, MDB_MAP_FULL
or ENOSPC in turn, each run must show:
  - lumend exits non-zero with a message naming the database's directory,
    or starts and answers a search with every entry; never a crash, a hang
    or a sanitizer report;
  - afterwards the database holds exactly what it held (lumencat),
    `lumenindex --check` passes, and a lumend without faults starts on it
    and serves it.
Then every allocation site before ready (the configuration and schema
files, the databases, cn=Monitor's own rule, the listeners, the threads),
its first call failed: lumend exits 1 with a message that says what
failed, never an empty "lumend: " (four sites had none, or called an
allocation failure "cannot read file"), or starts and serves; nothing is
lost and a clean start serves the database.
Prints the number of failure points and how they ended.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import lumen_harness as h  # noqa: E402

import ldap  # noqa: E402

r = h.Results("t_open_faults.py")
BUILD = os.path.join(h.ROOT, h.BUILD)
SUFFIX = "dc=example,dc=com"
LMDB_ERRORS = ("io", "full", "nospc")
TMP = tempfile.mkdtemp(prefix="lumen-it-openfaults-")
ENTRIES = 12
MESSAGES = set()
ALLOC_MESSAGES = set()


def config_text(dbdir, schemas):
    return ("".join(f"include {h.ROOT}/schema/{n}.schema\n" for n in schemas)
            + "threads 2\nlistener-threads 1\n"
            f'database mdb\nsuffix "{SUFFIX}"\nrootdn "cn=admin,{SUFFIX}"\nrootpw secret\n'
            f"directory {dbdir}\nindex uid eq\nindex objectClass eq\n"
            # rules in the database section alone: cn=Monitor gets its own
            # closing rule at start-up (own_databases.c)
            "overlay syncprov\naccess to * by * read\n")


LOADED_WITH = ("core", "cosine", "inetorgperson")
OPENED_WITH = LOADED_WITH + ("nis",)   # new types: the open records their rules


def tool(name, conf, *args):
    p = subprocess.run([os.path.join(BUILD, name), "-f", conf, *args], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def make_template():
    d = os.path.join(TMP, "template")
    os.makedirs(os.path.join(d, "db"))
    with open(os.path.join(d, "load.conf"), "w") as f:
        f.write(config_text(os.path.join(d, "db"), LOADED_WITH))
    ldif = (f"dn: {SUFFIX}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\n"
            f"o: Example\n\ndn: ou=people,{SUFFIX}\nobjectClass: organizationalUnit\n"
            "ou: people\n\n")
    ldif += "".join(f"dn: uid=u{i},ou=people,{SUFFIX}\nobjectClass: inetOrgPerson\nuid: u{i}\n"
                    f"cn: user {i}\nsn: {i}\n\n" for i in range(ENTRIES - 2))
    with open(os.path.join(d, "base.ldif"), "w") as f:
        f.write(ldif)
    rc, _, err = tool("lumenadd", os.path.join(d, "load.conf"), "-l", os.path.join(d, "base.ldif"))
    if rc != 0:
        raise RuntimeError("cannot load the template: " + err)
    return d


def copy_of(template, name):
    d = os.path.join(TMP, name)
    shutil.copytree(os.path.join(template, "db"), os.path.join(d, "db"))
    with open(os.path.join(d, "slapd.conf"), "w") as f:
        f.write(config_text(os.path.join(d, "db"), OPENED_WITH))
    return d


def state(d):
    rc, out, err = tool("lumencat", os.path.join(d, "slapd.conf"))
    if rc != 0:
        return "lumencat failed: " + err[-300:]
    return sorted(block.strip() for block in out.split("\n\n") if block.strip())


def search_all(port):
    try:
        c = ldap.initialize(f"ldap://127.0.0.1:{port}")
        c.set_option(ldap.OPT_NETWORK_TIMEOUT, 10)
        c.set_option(ldap.OPT_TIMEOUT, 10)
        n = len(c.search_s(SUFFIX, ldap.SCOPE_SUBTREE, "(objectClass=*)", ["1.1"]))
        c.unbind_s()
        return n
    except ldap.LDAPError as e:
        return repr(e)


def start(d, binary, spec=None):
    """(process, port, stderr path, ready) for lumend or lumend-faults on d."""
    port = h.free_port()
    env = dict(os.environ)
    if spec is not None:
        env["LUMEN_FAULT"] = spec
    env["ASAN_OPTIONS"] = f"log_path={d}/asan:detect_leaks=1"
    env["UBSAN_OPTIONS"] = f"log_path={d}/ubsan:print_stacktrace=1"
    err_path = os.path.join(d, f"stderr-{binary}")
    with open(err_path, "w") as err:
        proc = subprocess.Popen([os.path.join(BUILD, binary), "-f", os.path.join(d, "slapd.conf"),
                                 "-h", f"ldap://127.0.0.1:{port}/", "-d", "0"],
                                stderr=err, stdout=subprocess.DEVNULL, env=env)
    deadline = time.time() + 60
    ready = False
    while time.time() < deadline:
        with open(err_path, errors="replace") as f:
            if " ready: " in f.read():
                ready = True
                break
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    return proc, port, err_path, ready


def read(path):
    with open(path, errors="replace") as f:
        return f.read()


def sanitizer_reports(d):
    return "".join(read(os.path.join(d, n)) for n in os.listdir(d)
                   if n.startswith(("asan", "ubsan")))


def run_point(template, before, spec, name):
    """One failure point: (how it ended, problems)."""
    d = copy_of(template, name)
    dbdir = os.path.join(d, "db")
    problems = []
    proc, port, err_path, ready = start(d, "lumend-faults", spec)
    if ready:
        ended = "started"
        n = search_all(port)
        if n != ENTRIES:
            problems.append(f"started but a search found {n}")
        rc = h.stop_process(proc)
        if rc != 0:
            problems.append(f"exit status {rc}")
    else:
        ended = "refused to start"
        rc = h.stop_process(proc)
        err = read(err_path)
        if rc == "hang" or rc <= 0:
            problems.append(f"start-up failed with exit status {rc}")
        elif spec.startswith("alloc:"):
            said = err[err.find("lumend: "):].splitlines()[0] if "lumend: " in err else ""
            if not said.split(":", 1)[-1].strip():
                problems.append("start-up failed without saying why: " + err[-300:])
            else:
                ALLOC_MESSAGES.add(said.replace(d, "D"))
        elif dbdir not in err:
            problems.append("start-up failed without naming the database: " + err[-300:])
        elif err.count(os.path.join(d, "slapd.conf")) != 1:
            problems.append("the message names the configuration line twice: " + err[-300:])
        else:
            MESSAGES.add(err[err.find("lumend: "):].splitlines()[0].replace(d, "D"))
    after = state(d)
    if after != before:
        problems.append(f"the database changed: {str(after)[:300]}")
    crc, cout, cerr = tool("lumenindex", os.path.join(d, "slapd.conf"), "--check")
    if crc != 0:
        problems.append("lumenindex --check: " + (cout + cerr)[-300:])
    proc, port, err_path, ready = start(d, "lumend")
    if not ready or search_all(port) != ENTRIES:
        problems.append("a clean lumend does not serve it afterwards: " + read(err_path)[-300:])
    h.stop_process(proc)
    reports = sanitizer_reports(d)
    if reports:
        problems.append("sanitizer: " + reports[:2000])
    return ended, problems


template = make_template()
first = copy_of(template, "trace")
before = state(first)
r.check("template database readable", isinstance(before, list) and len(before) == ENTRIES,
        str(before)[:300])

proc, port, err_path, ready = start(first, "lumend-faults", "trace")
served = search_all(port) if ready else None
h.stop_process(proc)
trace = read(err_path)
before_ready = trace[:trace.find(" ready: ")] if ready else ""
plan = [(kind, n) for kind, n in h.first_of_each_site(h.fault_sites(before_ready, "call"))
        if kind == "lmdb"]
r.check("clean start-up serves every entry", ready and served == ENTRIES, (ready, served))
r.check("the trace lists the LMDB calls of the open", len(plan) > 10, trace[-500:])

def sweep(specs, label, messages):
    """Each spec in its own run: (tally of how they ended, failures)."""
    ends = h.map_in_parallel(lambda spec: run_point(template, before, spec,
                                                    "point-" + spec.replace(":", "-")), specs)
    tally, failures = {}, []
    for spec, (ended, problems) in zip(specs, ends):
        tally[ended] = tally.get(ended, 0) + 1
        if problems:
            failures.append(f"{spec}: {ended}: {problems}")
    print(f"  info {len(specs)} {label} before ready: {tally}")
    for line in sorted(messages)[:6]:
        print(f"  info e.g. {line}")
    return tally, failures


tally, failures = sweep([f"lmdb:{n}:{LMDB_ERRORS[i % 3]}" for i, (kind, n) in enumerate(plan)],
                        "LMDB failure points", MESSAGES)
r.check("each LMDB failure at open: a message naming the database, or served; "
        "nothing lost, indexes verify, a clean start serves it", not failures,
        "\n".join(failures[:40]))
r.check("some failures refuse to start (the open's errors are not ignored)",
        tally.get("refused to start", 0) > 0, tally)

# Every allocation site before ready, its first call failed: the
# configuration, the schema, the databases, the threads.
alloc_plan = [n for kind, n in h.first_of_each_site(h.fault_sites(before_ready, "call"))
              if kind == "alloc"]
tally, failures = sweep([f"alloc:{n}" for n in alloc_plan], "allocation sites", ALLOC_MESSAGES)
r.check("each allocation site failing before ready: exit 1 saying why, or served; "
        "nothing lost, a clean start serves it", len(alloc_plan) > 30 and not failures,
        f"{len(alloc_plan)} sites\n" + "\n".join(failures[:40]))

shutil.rmtree(TMP, ignore_errors=True)
sys.exit(r.finish())
