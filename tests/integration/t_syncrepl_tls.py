#!/usr/bin/env python3
"""syncrepl over TLS: a test CA, a server certificate (DNS:localhost,
IP:127.0.0.1) and a client certificate (cn=replica,dc=example,dc=com)
made here with openssl, as t_tls.sh makes them.

A lumend provider (ldap:// and ldaps://, TLSVerifyClient try) whose data
only the rootdn and cn=replica may read, and lumend consumers of it:

  - starttls=critical with tls_cacert, tls_reqcert=demand;
  - an ldaps:// provider with tls_cacert;
  - bindmethod=sasl saslmech=EXTERNAL with tls_cert/tls_key over ldaps://
    (the provider knows the consumer as its certificate's subject: only
    that identity may read the entries);
  - tls_cacert naming another CA: demand and try refuse the provider's
    certificate (nothing replicated, the reason logged with rid and URL),
    allow goes on, as OpenLDAP's TLS_REQCERT does;
  - starttls=yes against a provider without TLS goes on in the clear,
    starttls=critical does not (logged);
each consumer that may replicate must hold exactly the provider's entries.
Then the same with Debian's slapd as the provider (StartTLS, and SASL
EXTERNAL over ldaps://).
"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lumen_harness as h  # noqa: E402
import slapd_harness as sh  # noqa: E402

import ldap  # noqa: E402

R = h.Results("t_syncrepl_tls.py")
B = sh.SUFFIX
REPLICA = "cn=replica,dc=example,dc=com"
ACL = [f'access to * by dn.exact="{REPLICA}" read by * none']


def certificates(d):
    """ca.pem, server.pem/key, replica.pem/key and another CA (other-ca.pem)."""
    def run(*args):
        subprocess.run(["openssl", *args], cwd=d, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
        "-days", "2", "-subj", "/CN=Lumen Test CA")
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "other-ca.key", "-out",
        "other-ca.pem", "-days", "2", "-subj", "/CN=Another CA")
    with open(os.path.join(d, "san.ext"), "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr",
        "-subj", "/CN=localhost")
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "san.ext")
    run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "replica.key", "-out", "replica.csr",
        "-subj", "/DC=com/DC=example/CN=replica")
    run("x509", "-req", "-in", "replica.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-out", "replica.pem", "-days", "2")
    for name in os.listdir(d):
        os.chmod(os.path.join(d, name), 0o644)


def tls_globals(d):
    return [f"TLSCertificateFile {d}/server.pem", f"TLSCertificateKeyFile {d}/server.key",
            f"TLSCACertificateFile {d}/ca.pem", "TLSVerifyClient try"]


class TlsLumend(sh.Lumend):
    """lumend listening on ldap:// and ldaps://."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.ldaps_port = sh.free_port()

    def command(self):
        return [sh.LUMEND, "-f", self.config, "-h",
                f"{self.uri}/ ldaps://127.0.0.1:{self.ldaps_port}/", "-d", "stats", "-d", "sync"]


class TlsSlapd(sh.Slapd):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.ldaps_port = sh.free_port()

    def command(self):
        return [sh.SLAPD, "-h", f"{self.uri}/ ldaps://127.0.0.1:{self.ldaps_port}/",
                "-f", self.config, "-d", "0"]


def consumer_lines(provider_url, extra, bind=None):
    bind = bind or f'bindmethod=simple binddn="{sh.ROOTDN}" credentials={sh.ROOTPW}'
    return ["index objectClass,entryUUID eq",
            f'syncrepl rid=051 provider={provider_url} {bind} searchbase="{B}" '
            'type=refreshAndPersist retry="1 +" timeout=5 network-timeout=5 '
            f'attrs="*,+" {extra}']


def load(server):
    path = os.path.join(server.tmp, "data.ldif")
    with open(path, "w") as f:
        f.write(sh.replication_ldif(50))
    rc, out = server.ldapadd(path)
    R.check(f"{server.kind} provider loaded", rc == 0, out)


def consumer_case(provider, label, url, extra, replicates, bind=None, log_has=None,
                  push=False):
    consumer = sh.make_server("lumend", db_lines=consumer_lines(url, extra, bind))
    consumer.start()
    try:
        p = sh.bind(provider)
        if replicates:
            sh.converge(R, p, sh.bind(consumer), label, seconds=30)
            if push:
                p.modify_s(f"uid=u1,ou=people,{B}", [(ldap.MOD_REPLACE, "cn", [label.encode()])])
                sh.converge(R, p, sh.bind(consumer), f"{label}: a change pushed", seconds=30)
        else:
            time.sleep(2)
            try:
                got = sh.bind(consumer).search_s(B, ldap.SCOPE_SUBTREE, "(objectClass=*)")
            except ldap.NO_SUCH_OBJECT:
                got = []
            log = consumer.log_text()
            R.check(f"{label}: nothing replicated, the reason logged with rid and URL",
                    got == [] and f"syncrepl rid=051 provider={url}" in log
                    and (log_has is None or log_has in log), f"{len(got)} entries; {log[-1500:]}")
    finally:
        consumer.stop(R)


def lumend_provider(d):
    provider = TlsLumend(db_lines=["index objectClass,entryUUID,entryCSN eq", "overlay syncprov",
                                   *ACL], global_lines=tls_globals(d))
    provider.start()
    try:
        load(provider)
        plain = f"ldap://localhost:{provider.port}"
        secure = f"ldaps://localhost:{provider.ldaps_port}"
        consumer_case(provider, "lumend: starttls=critical, tls_cacert, tls_reqcert=demand",
                      plain, f"starttls=critical tls_cacert={d}/ca.pem tls_reqcert=demand", True,
                      push=True)
        consumer_case(provider, "lumend: an ldaps:// provider with tls_cacert", secure,
                      f"tls_cacert={d}/ca.pem", True)
        consumer_case(provider, "lumend: SASL EXTERNAL with a client certificate over ldaps://",
                      secure, f"tls_cacert={d}/ca.pem tls_cert={d}/replica.pem "
                      f"tls_key={d}/replica.key", True,
                      bind="bindmethod=sasl saslmech=EXTERNAL", push=True)
        for reqcert, ok in (("demand", False), ("try", False), ("allow", True)):
            consumer_case(provider, f"lumend: another CA with tls_reqcert={reqcert}", secure,
                          f"tls_cacert={d}/other-ca.pem tls_reqcert={reqcert}", ok,
                          log_has="certificate")
    finally:
        provider.stop(R)
    clear = sh.make_server("lumend", db_lines=["index objectClass,entryUUID,entryCSN eq",
                                               "overlay syncprov"])
    clear.start()
    try:
        load(clear)
        consumer_case(clear, "lumend without TLS: starttls=yes goes on in the clear",
                      clear.uri, f"starttls=yes tls_cacert={d}/ca.pem", True)
        consumer_case(clear, "lumend without TLS: starttls=critical does not", clear.uri,
                      f"starttls=critical tls_cacert={d}/ca.pem", False, log_has="StartTLS")
    finally:
        clear.stop(R)


def slapd_provider(d):
    provider = TlsSlapd(global_lines=["moduleload syncprov", *tls_globals(d)],
                        db_lines=["index objectClass,entryUUID,entryCSN eq", "overlay syncprov",
                                  *ACL])
    provider.start()
    try:
        load(provider)
        consumer_case(provider, "slapd: starttls=critical, tls_cacert, tls_reqcert=demand",
                      f"ldap://localhost:{provider.port}",
                      f"starttls=critical tls_cacert={d}/ca.pem tls_reqcert=demand", True)
        consumer_case(provider, "slapd: SASL EXTERNAL with a client certificate over ldaps://",
                      f"ldaps://localhost:{provider.ldaps_port}",
                      f"tls_cacert={d}/ca.pem tls_cert={d}/replica.pem "
                      f"tls_key={d}/replica.key", True, bind="bindmethod=sasl saslmech=EXTERNAL",
                      push=True)
    finally:
        provider.stop(R)


def main():
    if sh.slapd_missing():
        R.check("slapd available to be a provider", False, sh.slapd_missing())
        R.finish()
    d = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"lumen-it-synctls-{os.getpid()}")
    os.makedirs(d)
    try:
        certificates(d)
        lumend_provider(d)
        slapd_provider(d)
    finally:
        subprocess.run(["rm", "-rf", d])
    R.finish()


main()
