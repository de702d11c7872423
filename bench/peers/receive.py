#!/usr/bin/env python3
"""libxmlsec1 (through python-xmlsec, lxml) as a WS-Security receiver, for bench/peers.

    receive.py --cert SIGNER.pem [--key RECIPIENT.pem] --rounds R --warmup W FILE...

For every file, as a receiver built on python-xmlsec does it: parse with lxml; when the
message is encrypted, unwrap the EncryptedKey (RSA-OAEP) with the recipient's key and
decrypt the EncryptedData it lists (AES-GCM/CBC) in place; register the wsu:Id
attributes; verify the ds:Signature in wsse:Security with the signer's certificate and
require that it covers the soap:Body. libxmlsec1 does not resolve WS-Security token
references, so the keys are given (like zeep's verifier).

Every message must verify. Prints one JSON line:
{"messages": N, "rounds": R, "cpu_us_per_msg": F, "xmlsec": "1.3.x", "libxmlsec1": [..]}
where the CPU time (time.process_time: user + system of this process) covers the R
rounds after W warm-up rounds.
"""

import argparse
import json
import sys
import time

from lxml import etree

import xmlsec

NS = {
    "wsse": "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd",
    "wsu": "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd",
    "ds": "http://www.w3.org/2000/09/xmldsig#",
    "xenc": "http://www.w3.org/2001/04/xmlenc#",
}
PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True)


def receive(data, sign_key, recipient):
    root = etree.fromstring(data, PARSER)
    sec = root.find(".//wsse:Security", NS)
    for ek in sec.findall("xenc:EncryptedKey", NS):
        ctx = xmlsec.EncryptionContext(recipient)
        session = ctx.decrypt(ek)
        aes = xmlsec.Key.from_binary_data(xmlsec.constants.KeyDataAes, session)
        for ref in ek.findall("xenc:ReferenceList/xenc:DataReference", NS):
            ed = root.xpath("//*[@Id=$id]", id=ref.get("URI")[1:])[0]
            dctx = xmlsec.EncryptionContext()
            dctx.key = aes
            dctx.decrypt(ed)
    xmlsec.tree.add_ids(root, ["Id"])
    sig = sec.find("ds:Signature", NS)
    ctx = xmlsec.SignatureContext()
    ctx.key = sign_key
    ctx.verify(sig)
    body = root.find("{%s}Body" % root.tag[1:].split("}")[0])
    bid = body.get("{%s}Id" % NS["wsu"])
    uris = [r.get("URI") for r in sig.findall("ds:SignedInfo/ds:Reference", NS)]
    if "#" + str(bid) not in uris:
        raise ValueError("the signature does not cover the soap:Body")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("files", nargs="+")
    a = ap.parse_args(argv)
    sign_key = xmlsec.Key.from_file(a.cert, xmlsec.constants.KeyDataFormatCertPem)
    recipient = None
    if a.key:
        recipient = xmlsec.KeysManager()
        recipient.add_key(xmlsec.Key.from_file(a.key, xmlsec.constants.KeyDataFormatPem))
    msgs = []
    for f in a.files:
        with open(f, "rb") as fh:
            msgs.append(fh.read())
    for _ in range(a.warmup):
        for m in msgs:
            receive(m, sign_key, recipient)
    t0 = time.process_time()
    for _ in range(a.rounds):
        for m in msgs:
            receive(m, sign_key, recipient)
    cpu = time.process_time() - t0
    print(json.dumps({"messages": len(msgs), "rounds": a.rounds,
                      "cpu_us_per_msg": cpu / (a.rounds * len(msgs)) * 1e6,
                      "xmlsec": xmlsec.__version__, "libxmlsec1": list(xmlsec.get_libxmlsec_version())}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
