#!/usr/bin/env python3
"""Password Modify (RFC 3062) as ldappasswd drives it, side by side with
OpenLDAP's slapd: the same requests, the same result codes and texts, and
the password that binds afterwards.

  - A user changes their own password without the old one (slapd allows it;
    pwdSafeModify is the policy that requires it).
  - A wrong old password: unwillingToPerform, "unwilling to verify old
    password", and nothing changes.
  - The right old password: the change is made.
  - A user with `write` on another user's userPassword changes it without
    the old one; a user without it gets insufficientAccessRights.
  - With a password policy whose pwdSafeModify is TRUE, a change without the
    old password (Password Modify, or a Modify replacing userPassword) is
    refused with insufficientAccessRights and the password still binds.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lumen_harness as h  # noqa: E402
import slapd_harness as sh  # noqa: E402

R = h.Results("t_passwd_modify.py")
B = sh.SUFFIX
PEOPLE, POLICIES = "ou=people," + B, "ou=policies," + B
SAFE_POLICY = "cn=safe," + POLICIES
ACCESS = [f"access to attrs=userPassword by self write by dn.exact=\"uid=helpdesk,{PEOPLE}\" "
          "write by anonymous auth by * none",
          "access to * by * read"]


def user(uid):
    return f"uid={uid},{PEOPLE}"


def ldif():
    out = [f"dn: {B}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: Ex\n",
           f"dn: {PEOPLE}\nobjectClass: organizationalUnit\nou: people\n",
           f"dn: {POLICIES}\nobjectClass: organizationalUnit\nou: policies\n",
           f"dn: {SAFE_POLICY}\nobjectClass: person\nobjectClass: pwdPolicy\ncn: safe\n"
           "sn: safe\npwdAttribute: userPassword\npwdSafeModify: TRUE\n"]
    for uid, extra in (("bob", ""), ("carol", ""), ("helpdesk", ""), ("dave", ""),
                       ("safe", f"pwdPolicySubentry: {SAFE_POLICY}\n")):
        out.append(f"dn: {user(uid)}\nobjectClass: inetOrgPerson\nuid: {uid}\ncn: {uid}\n"
                   f"sn: {uid}\nuserPassword: {uid}-0\n{extra}")
    return "\n".join(out) + "\n"


def start(kind):
    global_lines = list(ACCESS)
    db_lines = ["overlay ppolicy"]
    if kind == "slapd":
        global_lines.insert(0, "moduleload ppolicy")
    server = sh.make_server(kind, db_lines=db_lines, global_lines=global_lines)
    server.start()
    path = os.path.join(server.tmp, "data.ldif")
    with open(path, "w") as f:
        f.write(ldif())
    rc, out = server.ldapadd(path)
    if rc != 0:
        server.stop()
        raise RuntimeError(f"{kind}: loading failed: {out}")
    return server


def run(args):
    p = subprocess.run(args, capture_output=True, text=True, timeout=30)
    return p.returncode, (p.stdout + p.stderr).strip()


def passwd(server, who, password, *args):
    return run(["ldappasswd", "-x", "-H", server.uri, "-D", user(who), "-w", password]
               + list(args))


def modify_own(server, who, password, new):
    dn = user(who)
    p = subprocess.run(["ldapmodify", "-x", "-H", server.uri, "-D", dn, "-w", password],
                       input=f"dn: {dn}\nchangetype: modify\nreplace: userPassword\n"
                             f"userPassword: {new}\n",
                       capture_output=True, text=True, timeout=30)
    return p.returncode, (p.stdout + p.stderr).strip()


def binds(server, who, password):
    return run(["ldapwhoami", "-x", "-H", server.uri, "-D", user(who), "-w", password])[0] == 0


def scenario(server):
    seen = {}
    seen["self, no old password"] = passwd(server, "bob", "bob-0", "-s", "bob-1")
    seen["self, no old password: the new one binds"] = binds(server, "bob", "bob-1")
    seen["self, wrong old password"] = passwd(server, "bob", "bob-1", "-a", "wrong",
                                              "-s", "bob-2")
    seen["self, wrong old password: nothing changed"] = (binds(server, "bob", "bob-1"),
                                                         binds(server, "bob", "bob-2"))
    seen["self, right old password"] = passwd(server, "bob", "bob-1", "-a", "bob-1",
                                              "-s", "bob-3")
    seen["self, right old password: the new one binds"] = binds(server, "bob", "bob-3")
    seen["helpdesk sets carol's"] = passwd(server, "helpdesk", "helpdesk-0", "-s", "carol-1",
                                           user("carol"))
    seen["helpdesk sets carol's: it binds"] = binds(server, "carol", "carol-1")
    seen["dave sets carol's"] = passwd(server, "dave", "dave-0", "-s", "carol-2", user("carol"))
    seen["dave sets carol's: nothing changed"] = binds(server, "carol", "carol-1")
    seen["pwdSafeModify, no old password"] = passwd(server, "safe", "safe-0", "-s", "safe-1")
    seen["pwdSafeModify, no old password: nothing changed"] = binds(server, "safe", "safe-0")
    seen["pwdSafeModify, a Modify replacing the password"] = modify_own(server, "safe",
                                                                        "safe-0", "safe-9")
    seen["pwdSafeModify, a Modify: nothing changed"] = binds(server, "safe", "safe-0")
    seen["pwdSafeModify, the old password"] = passwd(server, "safe", "safe-0", "-a", "safe-0",
                                                     "-s", "safe-2")
    seen["pwdSafeModify, the old password: the new one binds"] = binds(server, "safe", "safe-2")
    return seen


def main():
    reason = sh.slapd_missing()
    if reason:
        R.check("slapd available for the side-by-side run", False, reason)
        R.finish()
    results = {}
    for kind in ("slapd", "lumend"):
        server = start(kind)
        try:
            results[kind] = scenario(server)
        finally:
            server.stop(R if kind == "lumend" else None)
    slapd, lumen = results["slapd"], results["lumend"]
    for step in slapd:
        R.check(f"{step}: as slapd", slapd[step] == lumen[step],
                f"slapd {slapd[step]!r}\nlumen {lumen[step]!r}")
    # The expectations themselves, so a change on both sides is noticed.
    R.check("self change without the old password succeeds",
            lumen["self, no old password"][0] == 0 and
            lumen["self, no old password: the new one binds"])
    R.check("a wrong old password: unwillingToPerform (53), nothing changed",
            "(53)" in lumen["self, wrong old password"][1] and
            "unwilling to verify old password" in lumen["self, wrong old password"][1] and
            lumen["self, wrong old password: nothing changed"] == (True, False),
            str(lumen["self, wrong old password"]))
    R.check("without write on the password: insufficientAccessRights (50)",
            "(50)" in lumen["dave sets carol's"][1], str(lumen["dave sets carol's"]))
    R.check("pwdSafeModify refuses a change without the old password: "
            "insufficientAccessRights (50), over the exop and over Modify",
            "(50)" in lumen["pwdSafeModify, no old password"][1] and
            lumen["pwdSafeModify, a Modify replacing the password"][0] == 50 and
            lumen["pwdSafeModify, no old password: nothing changed"],
            str(lumen["pwdSafeModify, no old password"]))
    R.finish()


if __name__ == "__main__":
    main()
