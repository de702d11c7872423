#!/usr/bin/env python3
"""Sign a SOAP envelope the way zeep does when it sends a request with WS-Security.

    sign.py --in ENVELOPE.xml --out OUT.xml --key KEY.pem --cert CERT.pem
            [--mode binary|issuerserial] [--ttl 300] [--now RFC3339] [--no-timestamp]
            [--signature-method rsa-sha256] [--digest-method sha256] [--key-password PW]

The signing itself is zeep's own code, applied exactly as zeep's SOAP binding applies a wsse plugin
before posting (zeep.wsdl.bindings.soap: ``envelope, headers = wsse.apply(envelope, headers)``),
just without a WSDL or HTTP:

  --mode binary        zeep.wsse.signature.BinarySignature: the certificate goes into a
                       wsse:BinarySecurityToken, KeyInfo holds a wsse:SecurityTokenReference with a
                       direct wsse:Reference to it.
  --mode issuerserial  zeep.wsse.signature.Signature: KeyInfo holds a wsse:SecurityTokenReference
                       wrapping ds:X509Data with ds:X509IssuerSerial and ds:X509Certificate.

zeep signs the soap Body and, if the wsse:Security header already holds a wsu:Timestamp, the
Timestamp too. zeep has no Timestamp plugin of its own, so unless --no-timestamp is given this
script first adds one with zeep's helpers (zeep.wsse.utils.get_security_header and the WSU element
maker) - the same thing a zeep user does with ``UsernameToken(..., timestamp_token=...)``.

The output is what zeep puts on the wire: zeep.wsdl.utils.etree_to_string(envelope), i.e. UTF-8
with the declaration ``<?xml version='1.0' encoding='utf-8'?>`` and no pretty printing.
Exit status: 0 ok, 1 failure, 2 usage error. Errors go to stderr.
"""

import argparse
import datetime
import os
import sys
import tempfile

from lxml import etree

import xmlsec
from zeep.wsdl.utils import etree_to_string
from zeep.wsse import utils as wsse_utils
from zeep.wsse.signature import BinarySignature, Signature

SIGNATURE_METHODS = {
    "rsa-sha1": "RSA_SHA1",
    "rsa-sha224": "RSA_SHA224",
    "rsa-sha256": "RSA_SHA256",
    "rsa-sha384": "RSA_SHA384",
    "rsa-sha512": "RSA_SHA512",
    "ecdsa-sha1": "ECDSA_SHA1",
    "ecdsa-sha224": "ECDSA_SHA224",
    "ecdsa-sha256": "ECDSA_SHA256",
    "ecdsa-sha384": "ECDSA_SHA384",
    "ecdsa-sha512": "ECDSA_SHA512",
}
DIGEST_METHODS = {
    "sha1": "SHA1",
    "sha224": "SHA224",
    "sha256": "SHA256",
    "sha384": "SHA384",
    "sha512": "SHA512",
}


def transform(table, name, what):
    attr = table.get(name)
    if attr is None or not hasattr(xmlsec.Transform, attr):
        raise SystemExit(usage_error("unknown %s %r (one of: %s)" % (what, name, ", ".join(table))))
    return getattr(xmlsec.Transform, attr)


def usage_error(msg):
    print("sign.py: " + msg, file=sys.stderr)
    return 2


def parse_now(value):
    if value is None:
        return datetime.datetime.now(datetime.timezone.utc)
    v = value.strip()
    if v.endswith(("Z", "z")):
        v = v[:-1] + "+00:00"
    try:
        t = datetime.datetime.fromisoformat(v)
    except ValueError:
        raise SystemExit(usage_error("--now %r is not RFC 3339" % value))
    if t.tzinfo is None:
        raise SystemExit(usage_error("--now %r has no time zone offset" % value))
    return t.astimezone(datetime.timezone.utc)


def zulu(t):
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def add_timestamp(envelope, now, ttl):
    """Put a wsu:Timestamp into wsse:Security (created by zeep's helper, so shaped as zeep makes it)."""
    security = wsse_utils.get_security_header(envelope)
    if security.find(etree.QName(wsse_utils.NSMAP["wsu"], "Timestamp")) is not None:
        return  # the input already carries one: zeep would sign that one
    ts = wsse_utils.WSU.Timestamp(
        wsse_utils.WSU.Created(zulu(now)),
        wsse_utils.WSU.Expires(zulu(now + datetime.timedelta(seconds=ttl))),
    )
    security.append(ts)


def main(argv=None):
    ap = argparse.ArgumentParser(description="Sign a SOAP envelope with zeep's WS-Security.")
    ap.add_argument("--in", dest="inp", required=True, help="plain SOAP 1.1/1.2 envelope ('-' = stdin)")
    ap.add_argument("--out", required=True, help="signed envelope ('-' = stdout)")
    ap.add_argument("--key", required=True, help="PEM private key")
    ap.add_argument("--cert", required=True, help="PEM certificate of that key")
    ap.add_argument("--key-password", default=None, help="password of an encrypted PEM key")
    ap.add_argument("--mode", choices=["binary", "issuerserial"], default="binary")
    ap.add_argument("--ttl", type=int, default=300, help="Timestamp lifetime in seconds (default 300)")
    ap.add_argument("--now", default=None, help="RFC 3339 time for wsu:Created (default: the clock)")
    ap.add_argument("--no-timestamp", action="store_true", help="add no wsu:Timestamp (zeep then signs only the Body)")
    ap.add_argument("--signature-method", default="rsa-sha256", help="default rsa-sha256")
    ap.add_argument("--digest-method", default="sha256", help="default sha256")
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0

    sig_method = transform(SIGNATURE_METHODS, args.signature_method, "--signature-method")
    dig_method = transform(DIGEST_METHODS, args.digest_method, "--digest-method")
    if args.ttl <= 0:
        return usage_error("--ttl must be positive")
    now = parse_now(args.now)

    try:
        parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True)
        if args.inp == "-":
            envelope = etree.fromstring(sys.stdin.buffer.read(), parser)
        else:
            envelope = etree.parse(args.inp, parser).getroot()

        if not args.no_timestamp:
            add_timestamp(envelope, now, args.ttl)

        cls = BinarySignature if args.mode == "binary" else Signature
        plugin = cls(
            args.key,
            args.cert,
            password=args.key_password,
            signature_method=sig_method,
            digest_method=dig_method,
        )
        envelope, _headers = plugin.apply(envelope, {})
        data = etree_to_string(envelope)
    except (OSError, etree.XMLSyntaxError, xmlsec.Error, AssertionError, ValueError) as e:
        print("sign.py: %s: %s" % (type(e).__name__, e), file=sys.stderr)
        return 1

    if args.out == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    else:
        d = os.path.dirname(os.path.abspath(args.out))
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".sign-", suffix=".xml")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.chmod(tmp, 0o644)
            os.replace(tmp, args.out)
        except BaseException:
            os.unlink(tmp)
            raise
    return 0


if __name__ == "__main__":
    sys.exit(main())
