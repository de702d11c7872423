#!/usr/bin/env python3
"""Verify a signed SOAP envelope with zeep's WS-Security code, as zeep does on a response.

    verify.py --in SIGNED.xml --cert CERT.pem [--allow-unsigned-body]

Runs zeep's verifier (zeep.wsse.signature: Signature.verify and BinarySignature.verify are both the
inherited MemorySignature.verify -> _verify_envelope_with_key) with the given certificate as the
only key. zeep ignores the message's KeyInfo / BinarySecurityToken: the key is always --cert.

zeep itself only checks that the first ds:Signature in soap:Header/wsse:Security verifies over
whatever its References point at (located by wsu:Id). On top of that this script requires, unless
--allow-unsigned-body, that one Reference covers the soap:Body, because a verifier that accepts a
signature over only the Timestamp would prove little. Timestamp freshness is not checked (zeep
does not either).

Prints one JSON line: {"ok": bool, "error": str|null, "signed": [local names of signed elements]}.
Exit status: 0 ok, 1 verification failed / unreadable input, 2 usage error.
"""

import argparse
import json
import sys

from lxml import etree

import xmlsec
from zeep import ns
from zeep.exceptions import SignatureVerificationFailed
from zeep.utils import detect_soap_env
from zeep.wsse.signature import MemorySignature


def signed_elements(envelope):
    """Local names of the elements the first wsse:Security/ds:Signature references by wsu:Id."""
    sig = envelope.find("{%s}Header/{%s}Security/{%s}Signature" % (detect_soap_env(envelope), ns.WSSE, ns.DS))
    if sig is None:
        return []
    out = []
    for ref in sig.findall("{%s}SignedInfo/{%s}Reference" % (ns.DS, ns.DS)):
        uri = ref.get("URI") or ""
        if not uri.startswith("#"):
            out.append("?" + uri)
            continue
        hits = envelope.xpath("//*[@wsu:Id=$id]", namespaces={"wsu": ns.WSU}, id=uri[1:])
        out.append(etree.QName(hits[0]).localname if hits else "?" + uri)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description="Verify a WS-Security signature with zeep.")
    ap.add_argument("--in", dest="inp", required=True, help="signed envelope ('-' = stdin)")
    ap.add_argument("--cert", required=True, help="PEM certificate of the signer")
    ap.add_argument("--allow-unsigned-body", action="store_true", help="do not require the soap:Body to be signed")
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0

    result = {"ok": False, "error": None, "signed": []}
    try:
        with open(args.cert, "rb") as f:
            cert = f.read()
        parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True)
        if args.inp == "-":
            envelope = etree.fromstring(sys.stdin.buffer.read(), parser)
        else:
            envelope = etree.parse(args.inp, parser).getroot()
        result["signed"] = signed_elements(envelope)
        # key_data is only used for signing; verification uses cert_data alone.
        MemorySignature(None, cert).verify(envelope)
        if not args.allow_unsigned_body and "Body" not in result["signed"]:
            raise ValueError("signature verified but does not cover the soap:Body")
        result["ok"] = True
    except SignatureVerificationFailed:
        result["error"] = "SignatureVerificationFailed: xmlsec rejected the signature"
    except (AttributeError, IndexError, TypeError) as e:
        # zeep's verifier has no checks of its own: a missing Header/Security/Signature or a
        # Reference to an unknown id surfaces as one of these.
        result["error"] = "malformed security header (zeep raised %s: %s)" % (type(e).__name__, e)
    except (OSError, etree.XMLSyntaxError, xmlsec.Error, ValueError) as e:
        result["error"] = "%s: %s" % (type(e).__name__, e)
    print(json.dumps(result))
    if result["error"]:
        print("verify.py: " + result["error"], file=sys.stderr)
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
