#!/usr/bin/env python3
# run.sh: sanitizer pass only (a sweep of failures; see tests/integration/run.sh)
"""Fault injection: every write operation and the bulk loader, failed at every
allocation and LMDB call site they reach (tests/fault/fault_inject.c; the
fault builds lumend-faults and lumenadd-faults link it through --wrap).

For each workload a traced run lists the calls it makes (object offset of
each caller); then, for the first call of every distinct site, a fresh copy
of the same database is served by lumend-faults told to fail exactly that
call (LUMEN_FAULT=alloc:N or lmdb:N, counted only while the test holds the
window open with SIGUSR2 around the operation). Each run must show:
  - the client got an LDAP result (success or an error), or, where the
    failure hit the connection itself, a closed connection; never a hang;
  - the daemon still serves a new connection, and exits 0 on SIGTERM;
  - the database is exactly as before the operation when it failed, or
    exactly as after a clean run when it succeeded (user attributes of every
    entry, through lumencat), and `lumenindex --check` passes.
The bulk loader (lumenadd-faults, counted from its start) must exit non-zero
with a message and leave the database unchanged, or load everything.
LMDB faults alternate between EIO, MDB_MAP_FULL and ENOSPC.
The database runs the refint overlay, so a delete and a rename also repair a
group inside their transaction, and syncprov with a session log of one
record, so every change is appended to the journal (and the older record
trimmed) in it too: those calls fail too, and all or nothing stays.
Prints the number of distinct failure points covered.
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
import ldap.extop.passwd  # noqa: E402,F401

r = h.Results("t_faults.py")
ROOT = h.ROOT
BUILD = os.path.join(ROOT, h.BUILD)
SUFFIX = "dc=example,dc=com"
ROOTDN = "cn=admin,dc=example,dc=com"
PEOPLE = f"ou=people,{SUFFIX}"
OPERATIONAL = {"entryuuid", "entrycsn", "createtimestamp", "modifytimestamp",
               "creatorsname", "modifiersname", "structuralobjectclass"}
LMDB_ERRORS = ("io", "full", "nospc")
TMP = tempfile.mkdtemp(prefix="lumen-it-faults-")


def config_text(dbdir):
    schema = "".join(f"include {ROOT}/schema/{n}.schema\n"
                     for n in ("core", "cosine", "inetorgperson"))
    return (schema + "threads 2\nlistener-threads 1\n"
            f'database mdb\nsuffix "{SUFFIX}"\nrootdn "{ROOTDN}"\nrootpw secret\n'
            f"directory {dbdir}\nindex uid,cn eq,sub\nindex objectClass,member eq\n"
            # deletes and renames also repair the group inside their transaction
            "overlay refint\nrefint_attributes member\n"
            # every change also joins the session log (trimmed from the
            # second change on) in the same transaction
            "overlay syncprov\nsyncprov-sessionlog 1\n")


def entry_ldif(uid, extra=""):
    return (f"dn: uid={uid},{PEOPLE}\nobjectClass: inetOrgPerson\nuid: {uid}\n"
            f"cn: {uid} person\nsn: {uid}\nuserPassword: pw-{uid}\n{extra}\n")


BASE = (f"dn: {SUFFIX}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\n"
        f"o: Example\n\ndn: {PEOPLE}\nobjectClass: organizationalUnit\nou: people\n\n"
        + "".join(entry_ldif(f"u{i}") for i in range(4))
        + f"dn: cn=team,{SUFFIX}\nobjectClass: groupOfNames\ncn: team\n"
        f"member: uid=u2,{PEOPLE}\nmember: uid=u3,{PEOPLE}\nmember: uid=u0,{PEOPLE}\n\n")
MORE = "".join(entry_ldif(f"bulk{i}", "description: loaded\n") for i in range(5))


def tool(name, conf, *args, env=None):
    p = subprocess.run([os.path.join(BUILD, name), "-f", conf, *args], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=env, timeout=120)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def make_database(name):
    """A directory with slapd.conf and a database loaded with BASE."""
    return h.fault_database(TMP, name, config_text, BASE)


def copy_database(template, name):
    return h.fault_database(TMP, name, config_text, None, template)


def state(d):
    """{dn: sorted user attribute lines} through lumencat."""
    rc, out, err = tool("lumencat", os.path.join(d, "slapd.conf"))
    if rc != 0:
        return "lumencat failed: " + err
    entries, dn, lines = {}, None, []
    for line in out.splitlines() + [""]:
        if not line.strip():
            if dn is not None:
                entries[dn] = sorted(lines)
            dn, lines = None, []
            continue
        name = line.split(":", 1)[0].lower()
        if name == "dn":
            dn = line.split(":", 1)[1].strip().lower()
        elif name not in OPERATIONAL:
            lines.append(line)
    return entries


# --- the write workloads: each gets a connection bound as the rootdn -------

def op_add(c):
    c.add_s(f"uid=new,{PEOPLE}", [("objectClass", [b"inetOrgPerson"]), ("uid", [b"new"]),
                                   ("cn", [b"new person"]), ("sn", [b"new"])])


def op_modify(c):
    c.modify_s(f"uid=u1,{PEOPLE}", [(ldap.MOD_REPLACE, "cn", [b"renamed person"]),
                                    (ldap.MOD_ADD, "description", [b"changed"])])


def op_delete(c):
    c.delete_s(f"uid=u2,{PEOPLE}")


def op_modrdn(c):
    c.rename_s(f"uid=u3,{PEOPLE}", "uid=u3b", delold=1)


def op_passwd(c):
    c.passwd_s(f"uid=u0,{PEOPLE}", None, "a-new-secret")


WORKLOADS = [("add", op_add), ("modify", op_modify), ("delete", op_delete),
             ("modrdn", op_modrdn), ("passwd", op_passwd)]


def run_operation(d, spec, op):
    """One run: returns (outcome, server stderr, problems)."""
    problems = []
    srv = h.FaultyLumend(d, spec)
    outcome = None
    try:
        c = srv.connect(ROOTDN, "secret")
        srv.window()
        try:
            op(c)
            outcome = 0
        except ldap.SERVER_DOWN:
            outcome = "closed"
        except ldap.TIMEOUT:
            outcome = "timeout"
            problems.append("no answer (timeout)")
        except ldap.LDAPError as e:
            outcome = e.args[0].get("result", -1) if e.args and isinstance(e.args[0], dict) else -1
        time.sleep(0.05)
        srv.window()
        try:
            probe = srv.connect(ROOTDN, "secret")
            probe.search_s(SUFFIX, ldap.SCOPE_BASE, "(objectClass=*)", ["1.1"])
            probe.unbind_s()
        except ldap.LDAPError as e:
            problems.append(f"daemon no longer serves: {e}")
    finally:
        problems += srv.stop_problems()
    return outcome, srv.stderr(), problems


sites = h.fault_sites
first_of_each_site = h.first_of_each_site


def operation_point(point):
    """One failure point of a workload, on its own copy of the template:
    (how it ended, the sites that fired, what went wrong or None)."""
    name, op, after, kind, n, i = point
    spec = f"{kind}:{n}" + (f":{LMDB_ERRORS[i % 3]}" if kind == "lmdb" else "")
    d = copy_database(template, f"{name}-{kind}-{n}")
    outcome, err, problems = run_operation(d, spec, op)
    key = "success" if outcome == 0 else "closed" if outcome == "closed" else "error result"
    fired = sites(err, "fired")
    now = state(d)
    if outcome == 0:
        # passwd: a new hash every time; success must change the password
        ok = now != before if name == "passwd" else now == after
        if not ok:
            problems.append("succeeded but the database is not the clean result")
    elif now != before:
        problems.append(f"failed ({outcome}) but the database changed")
    rc, out, cerr = tool("lumenindex", os.path.join(d, "slapd.conf"), "--check")
    if rc != 0:
        problems.append("lumenindex --check: " + (out + cerr)[-400:])
    if problems:
        return key, fired, f"{spec} (fired {fired}): outcome {outcome}: {problems}"
    shutil.rmtree(d, ignore_errors=True)
    return key, fired, None


def loader_point(point):
    """One failure point of the bulk loader: (the sites that fired, what
    went wrong or None)."""
    kind, n, i = point
    spec = f"{kind}:{n}" + (f":{LMDB_ERRORS[i % 3]}" if kind == "lmdb" else "")
    d = copy_database(template, f"load-{kind}-{n}")
    rc, out, err = tool("lumenadd-faults", os.path.join(d, "slapd.conf"), "-j", "1", "-l", more,
                        env=dict(os.environ, LUMEN_FAULT=spec))
    fired = sites(err, "fired")
    now = state(d)
    problems = []
    if rc == 0 and now != loaded:
        problems.append("exit 0 but not everything loaded")
    if rc != 0 and now != before:
        problems.append(f"exit {rc} but the database changed")
    if rc != 0 and "lumenadd" not in err:
        problems.append("no message naming lumenadd")
    if rc < 0:
        problems.append(f"killed by signal {-rc}")
    crc, cout, cerr = tool("lumenindex", os.path.join(d, "slapd.conf"), "--check")
    if crc != 0:
        problems.append("lumenindex --check: " + (cout + cerr)[-300:])
    if problems:
        return fired, f"{spec} (fired {fired}): exit {rc}: {problems}: {err[-300:]}"
    shutil.rmtree(d, ignore_errors=True)
    return fired, None


covered = set()
tally = {}
template = make_database("template")
before = state(template)
r.check("template database readable", isinstance(before, dict) and len(before) == 7, str(before)[:300])

for name, op in WORKLOADS:
    d = copy_database(template, f"{name}-clean")
    outcome, err, problems = run_operation(d, "trace", op)
    after = state(d)
    r.check(f"{name}: clean run succeeds", outcome == 0 and not problems, f"{outcome} {problems}")
    r.check(f"{name}: clean run changes the database", after != before)
    gone = {"delete": "uid=u2,", "modrdn": "uid=u3,"}.get(name)
    if gone:
        team = after.get(f"cn=team,{SUFFIX}", [])
        r.check(f"{name}: clean run repairs the group (refint)",
                len(team) == 5 - (name == "delete") and not any(gone in v for v in team),
                str(team))
    plan = first_of_each_site(sites(err, "call"))
    r.check(f"{name}: the trace lists calls", len(plan) > 5, err[-500:])
    failures = []
    points = [(name, op, after, kind, n, i) for i, (kind, n) in enumerate(plan)]
    for key, fired, failure in h.map_in_parallel(operation_point, points):
        tally[key] = tally.get(key, 0) + 1
        covered.update((k, site) for k, _, site in fired)
        if failure:
            failures.append(failure)
    r.check(f"{name}: {len(plan)} failure points, each answered, serving, nothing half-written",
            not failures, "\n".join(failures[:8]))

# --- the bulk loader ----------------------------------------------------------
more = os.path.join(TMP, "more.ldif")
with open(more, "w") as f:
    f.write(MORE)
d = copy_database(template, "load-clean")
rc, out, err = tool("lumenadd-faults", os.path.join(d, "slapd.conf"), "-j", "1", "-l", more,
                    env=dict(os.environ, LUMEN_FAULT="trace"))
loaded = state(d)
r.check("lumenadd: clean run loads", rc == 0 and len(loaded) == len(before) + 5, err[-500:])
plan = first_of_each_site(sites(err, "call"))
r.check("lumenadd: the trace lists calls", len(plan) > 5)
failures = []
for fired, failure in h.map_in_parallel(loader_point, [(k, n, i) for i, (k, n) in enumerate(plan)]):
    covered.update((k, site) for k, _, site in fired)
    if failure:
        failures.append(failure)
r.check(f"lumenadd: {len(plan)} failure points, clean error or full load, nothing half-written",
        not failures, "\n".join(failures[:8]))

print(f"t_faults.py: the operations under a fault: {tally}")
print(f"t_faults.py: {len(covered)} distinct failure points covered "
      f"({sum(1 for k, _ in covered if k == 'alloc')} allocation, "
      f"{sum(1 for k, _ in covered if k == 'lmdb')} LMDB)")
r.check("failure points were covered", len(covered) > 50, str(len(covered)))
if not os.environ.get("KEEP_TMP"):
    shutil.rmtree(TMP, ignore_errors=True)
r.finish()
