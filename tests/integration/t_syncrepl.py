#!/usr/bin/env python3
"""lumend as an RFC 4533 consumer (`syncrepl` lines): Debian's slapd with
`overlay syncprov` is the provider, refreshOnly and refreshAndPersist; then
lumend consuming from lumend (refreshOnly).

  - the initial refresh of a few thousand entries;
  - then adds, modifies, deletes, a rename and a subtree move on the provider;
  - the consumer stopped while entries change, then restarted (it resumes
    from the cookie kept in its suffix entry's contextCSN);
  - the provider restarted;
each time the two directories must become identical: the same DNs, every
user attribute, entryUUID and entryCSN.

An OpenLDAP replica's slapd.d (written by Debian's slaptest from a
slapd.conf with syncrepl, updateref, overlay syncprov with checkpoint and
session log): `lumend -F` replicates from the slapd provider with it and
refers writes to the updateref; a multiprovider one (serverID with URLs,
multiprovider on) is accepted by `lumend -T -F` with its serverID URL as
listener, and refused naming the file and line without it.

Bad input: a provider unreachable at start (retries logged with the URL,
the consumer serves what it has), writes to the replica (unwillingToPerform
without updateref, a referral with it), configuration errors naming the
file and line.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lumen_harness as h  # noqa: E402
import slapd_harness as sh  # noqa: E402

import ldap  # noqa: E402

R = h.Results("t_syncrepl.py")
B = sh.SUFFIX
PEOPLE, GROUPS = "ou=people," + B, "ou=groups," + B
COUNT = 2000


def ldif():
    return sh.replication_ldif(COUNT)


def converge(provider, consumer, label, seconds=60):
    sh.converge(R, provider, consumer, label, seconds)


bind = sh.bind


def consumer_lines(provider_uri, kind, extra=()):
    return ["index objectClass,entryUUID,entryCSN eq", "dbnosync",
            f'syncrepl rid=042 provider={provider_uri} bindmethod=simple '
            f'binddn="{sh.ROOTDN}" credentials={sh.ROOTPW} searchbase="{B}" '
            f'type={kind} interval=00:00:00:01 retry="1 +" timeout=5 '
            'network-timeout=5 attrs="*,+" schemachecking=off', *extra]


def changes(p):
    p.add_s(f"uid=new1,{PEOPLE}", [("objectClass", [b"inetOrgPerson"]), ("uid", [b"new1"]),
                                   ("cn", [b"New One"]), ("sn", [b"N"])])
    p.modify_s(f"uid=u5,{PEOPLE}", [(ldap.MOD_REPLACE, "cn", [b"Renamed Five"]),
                                    (ldap.MOD_ADD, "description", [b"changed"])])
    p.modify_s(f"uid=u6,{PEOPLE}", [(ldap.MOD_DELETE, "mail", None)])
    p.delete_s(f"uid=u7,{PEOPLE}")
    p.rename_s(f"uid=u8,{PEOPLE}", "uid=u8b", delold=1)
    p.rename_s(f"ou=team,{PEOPLE}", "ou=team", GROUPS)   # a subtree moves
    p.modify_s(f"cn=staff,{GROUPS}", [(ldap.MOD_DELETE, "member", [f"uid=u1,{PEOPLE}".encode()])])


def offline_changes(p, tag):
    for i in range(20, 40):
        try:
            p.delete_s(f"uid=u{i},{PEOPLE}")
        except ldap.NO_SUCH_OBJECT:
            pass
    for i in range(3):
        p.add_s(f"uid={tag}{i},{PEOPLE}", [("objectClass", [b"inetOrgPerson"]),
                                           ("uid", [f"{tag}{i}".encode()]), ("cn", [b"Late"]),
                                           ("sn", [b"L"])])
    p.modify_s(f"uid=u50,{PEOPLE}", [(ldap.MOD_REPLACE, "mail", [f"{tag}@example.com".encode()])])
    p.rename_s(f"uid=u51,{PEOPLE}", f"uid={tag}51", delold=1)


def replica_refuses_writes(consumer):
    c = bind(consumer)
    try:
        c.modify_s(f"uid=u60,{PEOPLE}", [(ldap.MOD_REPLACE, "sn", [b"X"])])
        R.check("a write to the replica is refused (53)", False, "modify succeeded")
    except ldap.UNWILLING_TO_PERFORM as e:
        R.check("a write to the replica is refused (53)", "shadow context" in str(e), str(e))
    try:
        c.delete_s(f"uid=u61,{PEOPLE}")
        R.check("a delete on the replica is refused (53)", False, "delete succeeded")
    except ldap.UNWILLING_TO_PERFORM:
        R.check("a delete on the replica is refused (53)", True)


def scenario(kind):
    """slapd provider, lumend consumer of the given type."""
    provider = sh.make_server("slapd", global_lines=["moduleload syncprov"],
                              db_lines=["index objectClass,entryUUID,entryCSN eq",
                                        "overlay syncprov", "syncprov-checkpoint 100 10"])
    provider.start()
    path = os.path.join(provider.tmp, "data.ldif")
    with open(path, "w") as f:
        f.write(ldif())
    rc, out = provider.ldapadd(path)
    R.check(f"{kind}: provider loaded", rc == 0, out)
    consumer = sh.make_server("lumend", db_lines=consumer_lines(provider.uri, kind))
    consumer.start()
    try:
        p = bind(provider)
        converge(p, bind(consumer), f"{kind}: initial refresh", seconds=120)
        changes(p)
        converge(p, bind(consumer), f"{kind}: adds, modifies, deletes, a rename and a subtree move")
        replica_refuses_writes(consumer)
        consumer.terminate()
        offline_changes(p, "late")
        before = len(consumer.log_text())
        consumer.start()
        converge(p, bind(consumer), f"{kind}: consumer restarted after missing changes")
        resumed = re.findall(r"refresh done: (\d+) entries applied", consumer.log_text()[before:])
        R.check(f"{kind}: the restarted consumer resumed from its cookie (no full reload)",
                resumed and int(resumed[0]) < 100, str(resumed))
        provider.terminate()
        provider.start()
        p = bind(provider)
        p.delete_s(f"uid=u60,{PEOPLE}")
        p.modify_s(f"uid=u61,{PEOPLE}", [(ldap.MOD_REPLACE, "sn", [b"After"])])
        converge(p, bind(consumer), f"{kind}: provider restarted, then a delete and a modify")
        log = consumer.log_text()
        R.check(f"{kind}: the consumer logs its refreshes with rid and URL",
                f"syncrepl rid=042 provider={provider.uri}" in log, log[-2000:])
    finally:
        consumer.stop(R)
        provider.stop(R)


def lumend_from_lumend():
    provider = sh.make_server("lumend", db_lines=["index objectClass,member eq",
                                                  "overlay syncprov"])
    provider.start()
    path = os.path.join(provider.tmp, "data.ldif")
    with open(path, "w") as f:
        f.write(ldif())
    rc, out = provider.ldapadd(path)
    R.check("lumend provider loaded", rc == 0, out)
    consumer = sh.make_server("lumend", db_lines=consumer_lines(provider.uri, "refreshOnly"))
    consumer.start()
    try:
        p = bind(provider)
        converge(p, bind(consumer), "lumend from lumend: initial refresh", seconds=120)
        changes(p)
        converge(p, bind(consumer), "lumend from lumend: adds, modifies, deletes, renames")
        consumer.terminate()
        offline_changes(p, "off")
        consumer.start()
        converge(p, bind(consumer), "lumend from lumend: consumer restarted")
    finally:
        consumer.stop(R)
        provider.stop(R)


def openldap_replica_conf(path, db_dir, provider_uri, extra_global=(), extra_db=()):
    """A slapd.conf of an OpenLDAP replica of provider_uri, for slaptest."""
    lines = [f"include {sh.OPENLDAP_SCHEMA_DIR}/{n}.schema" for n in sh.OPENLDAP_SCHEMAS]
    lines += [f"modulepath {sh.OPENLDAP_MODULE_DIR}", "moduleload back_mdb",
              "moduleload syncprov", *extra_global, "database mdb", f'suffix "{B}"',
              f'rootdn "{sh.ROOTDN}"', f"rootpw {sh.ROOTPW}", f"directory {db_dir}",
              "index objectClass,entryUUID,entryCSN eq",
              f'syncrepl rid=043 provider={provider_uri} bindmethod=simple '
              f'binddn="{sh.ROOTDN}" credentials={sh.ROOTPW} searchbase="{B}" '
              'type=refreshAndPersist retry="1 +" attrs="*,+"', *extra_db,
              "overlay syncprov", "syncprov-checkpoint 100 10", "syncprov-sessionlog 500"]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def slaptest(conf, out_dir, db_dir):
    """slaptest -F out_dir: it opens the database, so slapadd creates it
    first (empty) and OpenLDAP's files go once the tree is written."""
    os.makedirs(out_dir)
    subprocess.run([sh.SLAPADD, "-f", conf, "-l", "/dev/null"], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=60)
    p = subprocess.run(["slaptest", "-f", conf, "-F", out_dir], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=60)
    for name in ("data.mdb", "lock.mdb"):
        if os.path.exists(os.path.join(db_dir, name)):
            os.unlink(os.path.join(db_dir, name))
    written = os.path.exists(os.path.join(out_dir, "cn=config.ldif"))
    return (p.returncode if written else 1), p.stdout.decode(errors="replace")


def lumend_from_slapd_d():
    """lumend -F an OpenLDAP replica's slapd.d, consuming from slapd."""
    provider = sh.make_server("slapd", global_lines=["moduleload syncprov"],
                              db_lines=["index objectClass,entryUUID,entryCSN eq",
                                        "overlay syncprov"])
    provider.start()
    consumer = sh.make_server("lumend")
    try:
        path = os.path.join(provider.tmp, "data.ldif")
        with open(path, "w") as f:
            f.write(sh.replication_ldif(200))
        rc, out = provider.ldapadd(path)
        R.check("slapd.d: provider loaded", rc == 0, out)
        conf = os.path.join(consumer.tmp, "openldap.conf")
        tree = os.path.join(consumer.tmp, "slapd.d")
        openldap_replica_conf(conf, consumer.dbdir, provider.uri,
                              extra_db=["updateref ldap://provider.example.com:389"])
        rc, out = slaptest(conf, tree, consumer.dbdir)
        R.check("slapd.d: slaptest writes the replica's cn=config tree", rc == 0, out)
        p = subprocess.run([sh.LUMEND, "-T", "-F", tree], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=30, cwd=sh.ROOT)
        out = p.stdout.decode(errors="replace")
        R.check("slapd.d: lumend -T -F accepts olcSyncrepl (with slaptest's timeout=0, "
                "keepalive=0:0:0, tcp-user-timeout=0), olcUpdateRef and the syncprov "
                "overlay's olcSpCheckpoint and olcSpSessionlog", p.returncode == 0, out)
        consumer.command = lambda: [sh.LUMEND, "-F", tree, "-h", f"{consumer.uri}/", "-d",
                                    "stats"]
        consumer.env = lambda: dict(os.environ, ASAN_OPTIONS=f"log_path={consumer.tmp}/asan")
        cwd = os.getcwd()
        os.chdir(sh.ROOT)   # the translated tree includes schema/*.schema
        try:
            consumer.start()
        finally:
            os.chdir(cwd)
        p = bind(provider)
        converge(p, bind(consumer), "slapd.d: lumend -F replicates from slapd")
        p.modify_s(f"uid=u5,{PEOPLE}", [(ldap.MOD_REPLACE, "cn", [b"Five Again"])])
        p.delete_s(f"uid=u6,{PEOPLE}")
        converge(p, bind(consumer), "slapd.d: a modify and a delete pushed")
        try:
            bind(consumer).delete_s(f"uid=u7,{PEOPLE}")
            R.check("slapd.d: a write to the replica is referred to olcUpdateRef", False,
                    "delete succeeded")
        except ldap.REFERRAL as e:
            R.check("slapd.d: a write to the replica is referred to olcUpdateRef",
                    "provider.example.com" in str(e), str(e))
        rc, out = refresh_cookie_less(consumer.uri)
        R.check("slapd.d: the replica is itself a provider (its olcOverlay syncprov)",
                rc == 0 and f"uid=u5,{PEOPLE}".lower() in out.lower(), out[-600:])
    finally:
        consumer.stop(R)
        provider.stop(R)


def refresh_cookie_less(uri):
    p = subprocess.run(["ldapsearch", "-x", "-H", uri, "-D", sh.ROOTDN, "-w", sh.ROOTPW,
                        "-b", B, "-E", "!sync=ro", "(uid=u5)", "cn"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=30)
    return p.returncode, p.stdout.decode(errors="replace")


def multiprovider_slapd_d():
    """A multiprovider replica's tree: olcServerID and olcMultiProvider."""
    tmp = tempfile.mkdtemp(prefix="lumen-it-slapd-d-")
    try:
        me, other = f"ldap://127.0.0.1:{sh.free_port()}/", f"ldap://127.0.0.1:{sh.free_port()}/"
        conf, tree = os.path.join(tmp, "openldap.conf"), os.path.join(tmp, "slapd.d")
        os.makedirs(os.path.join(tmp, "db"))
        openldap_replica_conf(conf, os.path.join(tmp, "db"), other.rstrip("/"),
                              extra_global=[f"serverID 1 {me}", f"serverID 2 {other}"],
                              extra_db=["multiprovider on"])
        rc, out = slaptest(conf, tree, os.path.join(tmp, "db"))
        R.check("slapd.d: slaptest writes the multiprovider tree", rc == 0, out)
        for listener, ok in ((me, True), (f"ldap://127.0.0.1:{sh.free_port()}/", False)):
            p = subprocess.run([sh.LUMEND, "-T", "-F", tree, "-h", listener],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30,
                               cwd=sh.ROOT)
            out = p.stdout.decode(errors="replace")
            if ok:
                R.check("slapd.d: olcServerID and olcMultiProvider TRUE are read (lumend -T "
                        "-F with the serverID URL as listener)", p.returncode == 0, out)
            else:
                R.check("slapd.d: with no listener of its serverIDs, the error names "
                        "cn=config.ldif and the line", p.returncode != 0
                        and re.search(r"cn=config\.ldif:\d+: serverID", out) is not None, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def unreachable_provider():
    port = sh.free_port()
    url = f"ldap://127.0.0.1:{port}"
    consumer = sh.make_server("lumend", db_lines=[
        "index objectClass,entryUUID eq",
        f'syncrepl rid=007 provider={url} binddn="{sh.ROOTDN}" credentials=x '
        f'searchbase="{B}" type=refreshOnly interval=00:00:00:01 retry="1 2 2 +" '
        'network-timeout=2', "updateref ldap://provider.example.com:389"])
    consumer.start()
    try:
        time.sleep(4)
        c = bind(consumer)
        try:
            res = c.search_s(B, ldap.SCOPE_BASE)
            R.check("with its provider unreachable the consumer still answers", False, res)
        except ldap.NO_SUCH_OBJECT:
            R.check("with its provider unreachable the consumer still answers "
                    "(noSuchObject: nothing replicated yet)", True)
        try:
            c.add_s(f"ou=x,{B}", [("objectClass", [b"organizationalUnit"]), ("ou", [b"x"])])
            R.check("a write to the replica is referred to updateref", False, "add succeeded")
        except ldap.REFERRAL as e:
            R.check("a write to the replica is referred to updateref",
                    "provider.example.com" in str(e), str(e))
        log = consumer.log_text()
        R.check("each failed attempt is logged with the provider URL and the reason",
                log.count(f"syncrepl rid=007 provider={url}: failed: connect:") >= 2, log[-2000:])
        R.check("the retry schedule is logged", "retrying in 1 s" in log and
                "retrying in 2 s" in log, log[-2000:])
    finally:
        consumer.stop(R)


def config_errors():
    cases = [
        ("syncrepl rid=1 provider=http://x searchbase=dc=example,dc=com",
         "syncrepl: provider: expected ldap://"),
        ("syncrepl rid=1000 provider=ldap://x searchbase=dc=example,dc=com",
         "syncrepl: rid: expected a number"),
        ("syncrepl rid=1 provider=ldap://x", "syncrepl: searchbase= is required"),
        ("syncrepl rid=1 provider=ldap://x searchbase=dc=example,dc=com interval=1:2",
         "syncrepl: interval: expected dd:hh:mm:ss"),
        ('syncrepl rid=1 provider=ldap://x searchbase=dc=example,dc=com retry="5 + 10 2"',
         "syncrepl: retry:"),
        ("syncrepl rid=1 provider=ldap://x searchbase=dc=example,dc=com exattrs=cn",
         "unknown or unsupported keyword \"exattrs\""),
        ("syncrepl rid=1 provider=ldap://x searchbase=dc=example,dc=com type=persist",
         "syncrepl: type: expected refreshOnly"),
        ("syncrepl rid=1 provider=ldap://x searchbase=dc=example,dc=com keepalive=240:10:30",
         "syncrepl: keepalive: supported only at 0:0:0 (off)"),
        ("syncrepl rid=1 provider=ldap://x searchbase=dc=example,dc=com tcp-user-timeout=5",
         "syncrepl: tcp-user-timeout: supported only at 0 (off)"),
        ("syncrepl rid=1 provider=ldap://x searchbase=dc=example,dc=com timeout=x",
         "syncrepl: timeout: expected seconds"),
        ("updateref ldap://x", "updateref: must appear after a syncrepl line"),
        ("syncrepl rid=1 provider=ldap://x searchbase=dc=other", "is not within the suffix"),
    ]
    for line, want in cases:
        server = sh.make_server("lumend", db_lines=["index objectClass eq", line])
        p = subprocess.run([sh.LUMEND, "-T", "-f", server.config], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=30)
        out = p.stdout.decode(errors="replace")
        R.check(f"config error names file and line: {line[:60]}",
                p.returncode != 0 and want in out and "slapd.conf:" in out, out)
        server.cleanup()


def main():
    if sh.slapd_missing():
        R.check("slapd available to be the provider", False, sh.slapd_missing())
        R.finish()
    config_errors()
    unreachable_provider()
    scenario("refreshOnly")
    scenario("refreshAndPersist")
    lumend_from_lumend()
    lumend_from_slapd_d()
    multiprovider_slapd_d()
    R.finish()


main()
