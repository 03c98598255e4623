#!/usr/bin/env python3
"""Write the fuzz_config seeds (tests/fuzz/corpus/fuzz_config/): the example
slapd.conf, a config using every directive, one small file per group of
directives, inline schema, and error cases. Includes name schema/*.schema
relative to the repository root (where run.sh starts the target). Run from
the repository root."""
import os

OUT = "tests/fuzz/corpus/fuzz_config"
os.makedirs(OUT, exist_ok=True)
CORE = "include schema/core.schema\n"
DB = 'database mdb\nsuffix "dc=example,dc=com"\nrootdn "cn=admin,dc=example,dc=com"\nrootpw secret\ndirectory ./run/db\n'

seeds = {
    "example": open("slapd.conf.example").read(),
    "minimal": DB,
    "empty": "",
    "comments-continuations": "# comment\n\nthreads\n  8\n\t# not a comment inside? \nloglevel stats\n conns\r\n",
    "globals": "pidfile /tmp/x.pid\nargsfile \"/tmp/with space.args\"\nthreads 8\nlistener-threads 2\n"
               "loglevel 0x100 conns ACL\nsizelimit 1000\ntimelimit unlimited\nidletimeout 30\n"
               "sockbuf_max_incoming 128K\nsockbuf_max_incoming_auth 8388608\nconn_max_pending 10\n"
               "conn_max_pending_auth 20\nallow bind_anon_dn\ndisallow bind_anon\ndebug-nagle on\n"
               "conn_max 1000\nconn_max_per_ip 10\n",
    "observe": "metrics-listen [::1]:9330\nslowop-threshold 250\nlogfile /tmp/lumen-access.log\n",
    "observe-off": "metrics-listen none\nslowop-threshold off\n",
    "tls": "TLSCertificateFile /etc/ssl/cert.pem\nTLSCertificateKeyFile /etc/ssl/key.pem\n"
           "TLSCACertificateFile /etc/ssl/ca.pem\nTLSCipherSuite HIGH:!aNULL\nTLSProtocolMin 3.3\n"
           "TLSVerifyClient demand\ntls_handshake_timeout 5\n",
    "security": "security ssf=128 simple_bind=71\npassword-hash {ARGON2}\npassword-allow-cleartext off\n",
    "authz-regexp": 'authz-regexp "^uid=([^,]+),cn=[^,]+,cn=auth$" "uid=$1,ou=people,dc=example,dc=com"\n'
                    'authz-regexp "gidNumber=0\\\\+uidNumber=0,cn=peercred,cn=external,cn=auth" "cn=admin,dc=example,dc=com"\n',
    "database-full": CORE + "include schema/cosine.schema\n" + DB + 'suffix dc=other\nmaxsize 1G\nmaxreaders 200\ndbnosync\n'
                     "index objectClass eq\nindex cn,sn,mail\n  pres,eq,sub,approx\nindex uid\nindex default eq\n"
                     "cachesize 5000\nidlcachesize off\nsizelimit 10\ntimelimit 20\n",
    "two-databases": CORE + DB + "database mdb\nsuffix dc=second\ndirectory ./run/db2\nsizelimit unlimited\n",
    "access-global-and-db": CORE + "access to dn.base=\"\" by * read\naccess to * by users read by * none\n" + DB +
                            "access to attrs=userPassword\n  by self write\n  by anonymous auth\n  by * none\n"
                            "access to dn.subtree=\"ou=people,dc=example,dc=com\" filter=(objectClass=person)\n"
                            "  by dn.exact=\"cn=admin,dc=example,dc=com\" manage by * read\n",
    "access-regex-group": CORE + DB + "access to dn.regex=\"^uid=([^,]+),ou=people,dc=example,dc=com$\"\n"
                          "  by dn=\"uid=$1,ou=people,dc=example,dc=com\" write\n"
                          "  by group/groupOfNames/member=\"cn=admins,dc=example,dc=com\" write break\n  by * read continue\n",
    "limits": CORE + 'limits dn.exact="cn=admin,dc=example,dc=com" size=unlimited time=unlimited\n'
              "limits anonymous size=10\nlimits users time=60\nlimits * size=100 time=100\n" + DB +
              'limits dn.subtree="ou=apps,dc=example,dc=com" size=5000\n',
    "inline-schema": CORE + "objectidentifier TestRoot 1.3.6.1.4.1.99999\nattributetype ( TestRoot:1 NAME 'testName'\n"
                     "  EQUALITY caseIgnoreMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 )\n"
                     "objectclass ( TestRoot:2 NAME 'testThing' AUXILIARY\n  MUST testName )\n" + DB + "index testName eq\n",
    "include-all-schema": "".join(f"include schema/{n}.schema\n" for n in ("core", "cosine", "inetorgperson", "nis", "lumen", "monitor")) + DB,
    "include-missing": "include schema/nothere.schema\n",
    "err-unknown-directive": "threads 2\nfrobnicate 1\n",
    "err-numbers": "threads lots\nidletimeout 10s\nlistener-threads -1\nsockbuf_max_incoming 99999999999999999999\n",
    "err-database-section": "suffix dc=x\n",
    "err-unknown-db-type": "database bdb\nsuffix dc=x\n",
    "err-quote": "pidfile \"/tmp/x\n",
    "err-access": CORE + DB + "access to attrs=noSuchAttr by * read\n",
    "err-index": CORE + DB + "index cn frobnicate\n",
    "err-limits": CORE + "limits dn.wide=x size=1\n",
    "err-nul-byte": "threads 4\x00\n",
}
for name, text in seeds.items():
    with open(os.path.join(OUT, name), "w") as f:
        f.write(text)
print(f"{len(seeds)} seeds in {OUT}")
