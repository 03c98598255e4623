#!/usr/bin/env python3
"""Proxied Authorization (RFC 4370) and `authz-policy`, side by side with
Debian's slapd 2.5 on the same data, ACLs and policy.

  - Every authzTo/authzFrom rule form (dn:, dn.exact:, dn.base:, dn.subtree:,
    dn.children:, dn.onelevel:, dn.regex:, u: through authz-regexp, *,
    ldap:/// URLs with and without a filter, group: with the default and a
    named class and attribute, a group of another class, a form nobody knows) against
    every target (DN and u: authzIds, the empty one, a DN without an entry,
    a DN outside every database) under each policy (none, to, from, any,
    all): the WhoAmI answer or the result code is the same as slapd's.
  - The operation runs as the proxied identity: access control (a subtree
    only alice may read), `limits`, a write's modifiersName, Password
    Modify's target, `ldapwhoami -e '!authzid=dn:…'`; the connection's own
    identity is back on the next operation.
  - The rootdn may act as any DN of its database, not outside it; an
    anonymous client never proxies; criticality FALSE is accepted; a
    control without value is a protocolError; on a Bind it is an
    unavailable critical extension; `auth` access to authzTo is needed.
  - Lumen's log names both identities on the PROXYAUTHZ line; a bad
    authz-policy stops `lumend -T` naming file, line and reason.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lumen_harness as h  # noqa: E402
import slapd_harness as sh  # noqa: E402

import ldap  # noqa: E402
from ldap.controls import RequestControl  # noqa: E402

R = h.Results("t_proxyauthz.py")
B = sh.SUFFIX
PEOPLE, PROXIES, SECRET = "ou=people," + B, "ou=proxies," + B, "ou=secret," + B
PROXY_OID = "2.16.840.1.113730.3.4.18"


def person(uid, parent=PEOPLE):
    return f"uid={uid},{parent}"


ALICE, BOB, CAROL, NOBODY = person("alice"), person("bob"), person("carol"), person("nobody", B)
RULES = {
    "p-exact": [f"dn:{ALICE}"],
    "p-base": [f"dn.exact:{BOB}", f"DN:{CAROL}"],
    "p-subtree": [f"dn.subtree:{PEOPLE}"],
    "p-children": [f"dn.children:{B}"],
    "p-onelevel": [f"dn.onelevel:{B}"],
    "p-regex": ["dn.regex:^uid=[ab][^,]*,ou=people,dc=example,dc=com$"],
    "p-user": ["u:bob"],
    "p-star": ["*"],
    "p-url": [f"ldap:///{PEOPLE}??sub?(cn=alice)"],
    "p-url-one": [f"ldap:///{B}??one"],
    "p-group": ["group:cn=staff," + B],
    "p-group-unique": ["group/groupOfUniqueNames/uniqueMember:cn=ustaff," + B],
    "p-group-class": ["group/groupOfUniqueNames/uniqueMember:cn=staff," + B],
    "p-unknown": ["group/groupOfNames/member:cn=x," + B, "u.EXTERNAL:nobody"],
    "p-from": [],
    "p-hidden": [f"dn:{ALICE}"],
}
TARGETS = [f"dn:{ALICE}", f"dn:{BOB}", f"dn:{CAROL}", f"dn:{NOBODY}", f"dn:{PEOPLE}",
           "dn:uid=ghost," + PEOPLE, "dn:cn=x,dc=other", "u:alice", "U:bob",
           "dn:UID=Alice, OU=People,DC=example,DC=com",
           "dn:", "u:", "dn.exact:" + ALICE, "x:" + ALICE, "dn:not a dn", "dn:" + person("p-exact", PROXIES)]
POLICIES = ("none", "to", "from", "any", "all")
# authzTo values as slapd's authz syntax takes them (ok) or refuses them (21).
SYNTAX_CASES = [f"dn:{ALICE}", f"dn.base:{ALICE}", f"dn.exact:{ALICE}", f"dn.subtree:{B}",
                f"dn.children:{B}", f"dn.onelevel:{B}", f"dn.one:{B}", f"dn.sub:{B}",
                "dn.regex:^uid=.*$", "u:bob", "*", "nonsense", "dn:not a dn", "dn.exact:",
                f"ldap:///{B}??sub?(cn=alice)", f"ldap:///{B}??one", f"ldap:///{B}",
                "ldap:///??sub?(cn=alice)", f"ldap://host/{B}??sub?(cn=a)",
                f"ldap:///{B}?cn?sub?(cn=a)", f"ldap:///{B}??sub?(cn=a", f"ldap:///{B}??base?(cn=a)?x",
                f"ldap:///{B}??children?(cn=a)", f"ldap:///{B}??nowhere", "u.EXTERNAL:bob", "",
                "group/groupOfNames/member:cn=x," + B, f"dn.subtree:{PEOPLE}", "x:y"]


def ldif():
    out = [f"dn: {B}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: E\n",
           f"dn: {PEOPLE}\nobjectClass: organizationalUnit\nou: people\n",
           f"dn: {PROXIES}\nobjectClass: organizationalUnit\nou: proxies\n",
           f"dn: {SECRET}\nobjectClass: organizationalUnit\nou: secret\ndescription: hush\n",
           f"dn: cn=staff,{B}\nobjectClass: groupOfNames\ncn: staff\nmember: {ALICE}\n"
           f"member: {person('nobody', B)}\n",
           f"dn: cn=ustaff,{B}\nobjectClass: groupOfUniqueNames\ncn: ustaff\n"
           f"uniqueMember: {CAROL}\n"]
    for uid, parent, extra in (("alice", PEOPLE, f"authzFrom: dn:{person('p-from', PROXIES)}\n"),
                               ("bob", PEOPLE, f"authzFrom: dn.subtree:{PROXIES}\n"),
                               ("carol", PEOPLE, ""), ("nobody", B, "")):
        out.append(f"dn: {person(uid, parent)}\nobjectClass: inetOrgPerson\nuid: {uid}\n"
                   f"cn: {uid}\nsn: {uid}\nuserPassword: pw\n{extra}")
    for uid, rules in RULES.items():
        out.append(f"dn: {person(uid, PROXIES)}\nobjectClass: inetOrgPerson\nuid: {uid}\n"
                   f"cn: {uid}\nsn: {uid}\nuserPassword: pw\n"
                   + "".join(f"authzTo: {r}\n" for r in rules))
    return "\n".join(out) + "\n"


def db_lines():
    return [f'limits dn.exact="{CAROL}" size=1',
            f'access to dn.exact="{person("p-hidden", PROXIES)}" attrs=authzTo by * none',
            "access to attrs=userPassword by anonymous auth by self write by * none",
            f'access to dn.subtree="{SECRET}" by dn.exact="{ALICE}" read by * none',
            f'access to dn.subtree="{PEOPLE}" attrs=description by self write by * read',
            "access to * by * read"]


def start(kind, policy):
    glob = [f"authz-policy {policy}",
            "authz-regexp uid=([^,]*),cn=auth uid=$1,ou=people,dc=example,dc=com"]
    server = sh.make_server(kind, db_lines=db_lines(), global_lines=glob)
    server.start()
    path = os.path.join(server.tmp, "data.ldif")
    with open(path, "w") as f:
        f.write(ldif())
    rc, out = server.ldapadd(path)
    if rc != 0:
        raise RuntimeError(f"{kind}: loading failed: {out}")
    return server


def connect(server, dn=None):
    conn = ldap.initialize(server.uri)
    conn.set_option(ldap.OPT_NETWORK_TIMEOUT, 10)
    if dn is not None:
        conn.simple_bind_s(dn, sh.ROOTPW if dn == sh.ROOTDN else "pw")
    return conn


def proxy(authzid, critical=True):
    value = authzid.encode() if authzid is not None else None
    return RequestControl(PROXY_OID, critical, value)


def outcome(fn):
    """What an operation gave: ('ok', value) or (result code, diagnostic)."""
    try:
        return ("ok", fn())
    except ldap.LDAPError as e:
        info = e.args[0] if e.args and isinstance(e.args[0], dict) else {}
        return (info.get("result"), info.get("info", ""))


def whoami(conn, authzid, critical=True):
    ctrls = ldap.controls.RequestControlTuples([proxy(authzid, critical)])
    return outcome(lambda: conn.whoami_s(serverctrls=ctrls))


def search(conn, base, authzid=None, scope=ldap.SCOPE_BASE):
    ctrls = [proxy(authzid)] if authzid is not None else []
    return outcome(lambda: sorted(dn for dn, _ in conn.search_ext_s(
        base, scope, "(objectClass=*)", ["1.1"], serverctrls=ctrls)))


def matrix(server):
    """{(proxy, target): outcome} over every rule holder and target."""
    out = {}
    for uid in RULES:
        conn = connect(server, person(uid, PROXIES))
        for target in TARGETS:
            out[(uid, target)] = whoami(conn, target)
        conn.unbind_s()
    return out


def compare_matrices(policy, lumen, slapd):
    diffs = [f"{k}: lumen {lumen[k]} slapd {slapd[k]}" for k in lumen
             if lumen[k][0] != slapd[k][0] or (lumen[k][0] == "ok" and lumen[k] != slapd[k])]
    R.check(f"authz-policy {policy}: {len(lumen)} proxy/target pairs answer as slapd",
            not diffs, "\n       ".join(diffs[:20]))


def scenarios(server):
    """The per-operation effects, as comparable outcomes."""
    got = {}
    conn = connect(server, person("p-exact", PROXIES))
    got["secret without proxy"] = search(conn, SECRET)
    got["secret as alice"] = search(conn, SECRET, f"dn:{ALICE}")
    got["secret after proxy"] = search(conn, SECRET)
    got["whoami after proxy"] = outcome(conn.whoami_s)
    got["non-critical"] = whoami(conn, f"dn:{ALICE}", critical=False)
    got["no value"] = whoami(conn, None)
    got["search no value"] = outcome(
        lambda: conn.search_ext_s(B, ldap.SCOPE_BASE, serverctrls=[proxy(None)]))
    got["compare as alice"] = outcome(lambda: conn.compare_ext_s(
        SECRET, "description", b"hush", serverctrls=[proxy(f"dn:{ALICE}")]))
    got["compare as self"] = outcome(lambda: conn.compare_ext_s(
        SECRET, "description", b"hush"))
    got["modify as alice"] = outcome(lambda: conn.modify_ext_s(
        ALICE, [(ldap.MOD_REPLACE, "description", [b"changed by proxy"])],
        serverctrls=[proxy(f"dn:{ALICE}")]))
    got["modify as self"] = outcome(lambda: conn.modify_ext_s(
        ALICE, [(ldap.MOD_REPLACE, "description", [b"changed by p-exact"])]))
    got["password modify as alice"] = outcome(lambda: conn.passwd_s(
        None, "pw", "newpw", serverctrls=[proxy(f"dn:{ALICE}")]) and "changed")
    got["alice's new password"] = outcome(lambda: connect(server).simple_bind_s(
        ALICE, "newpw") and "bound")
    got["modifiersName"] = outcome(lambda: connect(server, sh.ROOTDN).search_s(
        ALICE, ldap.SCOPE_BASE, attrlist=["modifiersName", "description"])[0][1])
    conn.unbind_s()
    conn = connect(server, person("p-base", PROXIES))
    got["carol's size limit"] = search(conn, PEOPLE, f"dn:{CAROL}", ldap.SCOPE_SUBTREE)
    got["own size limit"] = search(conn, PEOPLE, None, ldap.SCOPE_SUBTREE)
    conn.unbind_s()
    anon = connect(server)
    got["anonymous as alice"] = whoami(anon, f"dn:{ALICE}")
    got["anonymous as anonymous"] = whoami(anon, "")
    root = connect(server, sh.ROOTDN)
    got["rootdn as nobody"] = whoami(root, f"dn:{NOBODY}")
    got["rootdn as ghost"] = whoami(root, "dn:uid=ghost," + B)
    got["rootdn outside"] = whoami(root, "dn:cn=x,dc=other")
    got["rootdn reads secret as bob"] = search(root, SECRET, f"dn:{BOB}")
    for value in SYNTAX_CASES:
        got[f"add authzTo {value!r}"] = outcome(lambda: root.modify_s(
            person("carol"), [(ldap.MOD_REPLACE, "authzTo", [value.encode()])]) or "stored")
    # a refused value leaves the last accepted one (slapd numbers its
    # X-ORDERED values "{0}...": compared without the prefix)
    got["authzTo after the refused values"] = outcome(lambda: sorted(
        re.sub(rb"^\{\d+\}", b"", v) for v in root.search_s(
            person("carol"), ldap.SCOPE_BASE, attrlist=["authzTo"])[0][1].get("authzTo", [])))
    cli = subprocess.run(["ldapwhoami", "-x", "-H", server.uri, "-D",
                          person("p-subtree", PROXIES), "-w", "pw", "-e",
                          f"!authzid=dn:{BOB}"], capture_output=True, text=True)
    got["ldapwhoami -e '!authzid=dn:bob'"] = (cli.returncode, cli.stdout.strip())
    bind = connect(server)
    got["bind with control"] = outcome(lambda: bind.simple_bind_s(
        ALICE, "pw", serverctrls=[proxy(f"dn:{BOB}")]))
    return got


def config_errors():
    tmp = tempfile.mkdtemp(prefix="lumen-it-proxyauthz-")
    head = h.config_head(tmp)[:3]
    h.check_config_errors(R, tmp, head, [
        ("unknown authz-policy", ["authz-policy sometimes"], 4,
         'authz-policy: expected none, to, from, any or all, got "sometimes"'),
        ("authz-policy without a value", ["authz-policy"], 4, "authz-policy"),
        ("authz-policy twice the words", ["authz-policy to from"], 4, "authz-policy"),
    ])
    shutil.rmtree(tmp, ignore_errors=True)


def main():
    config_errors()
    missing = sh.slapd_missing()
    if missing:
        R.check("slapd available", False, missing)
        R.finish()
    for policy in POLICIES:
        runs = {}
        for kind in ("lumend", "slapd"):
            server = start(kind, policy)
            try:
                runs[kind] = (matrix(server),
                              scenarios(server) if policy in ("to", "none") else None,
                              server.log_text())
            finally:
                server.stop(R if kind == "lumend" else None)
        compare_matrices(policy, runs["lumend"][0], runs["slapd"][0])
        if policy not in ("to", "none"):
            continue
        lumen, slapd = runs["lumend"][1], runs["slapd"][1]
        for label in lumen:
            R.check(f"{policy}: {label}: as slapd ({lumen[label]})",
                    lumen[label] == slapd[label], f"lumen {lumen[label]} slapd {slapd[label]}")
        if policy == "none":
            R.check("policy none: the rootdn still acts as any DN of its database",
                    lumen["rootdn as nobody"] == ("ok", "dn:" + NOBODY))
            R.check("policy none: p-exact may not be alice",
                    lumen["secret as alice"][0] == 123, str(lumen["secret as alice"]))
            continue
        m = runs["lumend"][0]
        R.check("p-exact may be alice", m[("p-exact", f"dn:{ALICE}")] == ("ok", "dn:" + ALICE))
        R.check("p-exact may not be bob", m[("p-exact", f"dn:{BOB}")][0] == 123,
                str(m[("p-exact", f"dn:{BOB}")]))
        groups = {("p-group", ALICE): True, ("p-group", BOB): False,
                  ("p-group-unique", CAROL): True, ("p-group-unique", ALICE): False,
                  ("p-group-class", ALICE): False}
        R.check("group rules: a member may be proxied, others not (any class and type named)",
                all((m[(uid, f"dn:{dn}")] == ("ok", "dn:" + dn)) == want
                    for (uid, dn), want in groups.items()),
                str({k: m[(k[0], f"dn:{k[1]}")] for k in groups}))
        R.check("secret: only as alice", lumen["secret as alice"] == ("ok", [SECRET]) and
                lumen["secret without proxy"][0] == 32,
                f'{lumen["secret as alice"]} {lumen["secret without proxy"]}')
        R.check("unknown authzId form: 123 authzId mapping failed",
                m[("p-exact", "x:" + ALICE)] == (123, "authzId mapping failed"))
        log = runs["lumend"][2]
        line = f'PROXYAUTHZ dn="{ALICE}" authcDN="{person("p-exact", PROXIES)}"'
        R.check("the log names both identities", line in log, line)
    R.finish()


if __name__ == "__main__":
    main()
