#!/usr/bin/env bash
# End-to-end smoke test of the zeep interop peer (no Go involved):
#   - test PKI made with openssl: a throwaway CA and an RSA-2048 client certificate/key it issued,
#     plus an unrelated self-signed certificate for the wrong-key check;
#   - a SOAP 1.1 envelope (pretty-printed, empty Header) and a SOAP 1.2 envelope (compact, no Header,
#     laid out like zeep's own requests, so zeep has to add the Header), each signed by sign.py in both modes (binary, issuerserial);
#   - every signed message checked by the standalone xmlsec1 CLI and by verify.py (zeep's verifier),
#     and its structure checked against what README.md documents;
#   - negative checks: tampered Body, tampered Timestamp, wrong certificate, unsigned message, usage
#     errors; plus an rsa-sha1/sha1 variant and --no-timestamp.
# Prints one line per check and "N passed, N failed"; exits non-zero if anything failed.
# SMOKE_KEEP=1 keeps the temporary directory (keys and messages) for inspection.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PY="$("$HERE/setup.sh")"
SIGN=("$PY" "$HERE/sign.py")
VERIFY=("$PY" "$HERE/verify.py")
command -v xmlsec1 >/dev/null || { echo "smoke.sh: xmlsec1 not found (apt-get install -y --no-install-recommends xmlsec1)" >&2; exit 1; }
command -v openssl >/dev/null || { echo "smoke.sh: openssl not found" >&2; exit 1; }

TMP="$(mktemp -d "${TMPDIR:-/tmp}/zeep-smoke.XXXXXX")"
if [[ -n "${SMOKE_KEEP:-}" ]]; then
  echo "info  keeping $TMP (SMOKE_KEEP set)"
else
  trap 'rm -rf "$TMP"' EXIT
fi
cd "$TMP"

passed=0
failed=0
pass() { passed=$((passed + 1)); printf 'PASS  %s\n' "$1"; }
fail() { failed=$((failed + 1)); printf 'FAIL  %s%s\n' "$1" "${2:+: $2}"; }
# check NAME CMD...: passes if CMD exits 0.
check() { local name=$1; shift; local out; if out=$("$@" 2>&1); then pass "$name"; else fail "$name" "$(tail -c 600 <<<"$out")"; fi; }
# expect_exit NAME CODE PATTERN CMD...: passes if CMD exits with CODE and its output contains PATTERN.
expect_exit() {
  local name=$1 want=$2 pat=$3; shift 3; local out rc=0
  out=$("$@" 2>&1) || rc=$?
  if [[ $rc == "$want" && $out == *"$pat"* ]]; then
    pass "$name"
  else
    fail "$name" "exit $rc (want $want), output $(tail -c 400 <<<"$out") (want $pat)"
  fi
}

# ---------------------------------------------------------------- test PKI
t0=$SECONDS
{
  openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out ca.key
  openssl req -new -key ca.key -subj "/CN=Zeep Smoke CA/O=wssgw" -out ca.csr
  printf '%s\n' "basicConstraints=critical,CA:true" "keyUsage=critical,keyCertSign,cRLSign" \
    "subjectKeyIdentifier=hash" >ca.ext
  openssl x509 -req -in ca.csr -signkey ca.key -extfile ca.ext -days 3650 -set_serial 0x5002 -out ca.crt
  printf '%s\n' "basicConstraints=CA:false" "keyUsage=critical,digitalSignature,keyEncipherment" \
    "subjectKeyIdentifier=hash" "authorityKeyIdentifier=keyid" >leaf.ext
  openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out client.key
  openssl req -new -key client.key -subj "/CN=zeep-client/O=wssgw" -out client.csr
  openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -extfile leaf.ext -days 3650 \
    -set_serial "0x$(openssl rand -hex 8)" -out client.crt
  openssl req -x509 -newkey rsa:2048 -nodes -keyout other.key -subj "/CN=Other" -days 30 -out other.crt
} >pki.log 2>&1 || { cat pki.log; echo "openssl PKI generation failed"; exit 1; }
check "pki: client certificate chains to the CA" openssl verify -CAfile ca.crt client.crt

# ---------------------------------------------------------------- plain envelopes
cat >soap11.xml <<'EOF'
<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:ord="urn:example:orders">
  <soapenv:Header/>
  <soapenv:Body>
    <ord:PlaceOrder>
      <ord:Item sku="A-1" qty="2">Widget</ord:Item>
      <ord:Note>hello from zeep</ord:Note>
    </ord:PlaceOrder>
  </soapenv:Body>
</soapenv:Envelope>
EOF
# Laid out as zeep's own serializer makes a request: prefix soap-env, no whitespace, ns0 for the payload.
printf '%s' '<soap-env:Envelope xmlns:soap-env="http://www.w3.org/2003/05/soap-envelope"><soap-env:Body><ns0:Echo xmlns:ns0="urn:example:echo"><ns0:Text>hello from zeep</ns0:Text></ns0:Echo></soap-env:Body></soap-env:Envelope>' >soap12.xml

# ---------------------------------------------------------------- checks
S11=http://schemas.xmlsoap.org/soap/envelope/
S12=http://www.w3.org/2003/05/soap-envelope
U=http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd
W=http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd
# xmlsec1 does not know wsu:Id; --id-attr:Id matches an attribute by local name, so wsu:Id counts.
# The key is taken from --pubkey-cert-pem: xmlsec1 cannot read the wsse:SecurityTokenReference.
xmlsec_verify() { # xmlsec_verify CERT FILE
  xmlsec1 --verify --id-attr:Id "$S11:Body" --id-attr:Id "$S12:Body" --id-attr:Id "$U:Timestamp" \
    --pubkey-cert-pem "$1" --enabled-key-data rsa "$2"
}

# structure MODE FILE [ALG]: asserts the shape of zeep's output that README.md documents.
structure() {
  "$PY" - "$@" <<'EOF'
import sys
from lxml import etree
mode, path = sys.argv[1], sys.argv[2]
alg = sys.argv[3] if len(sys.argv) > 3 else "rsa-sha256"
DS = "http://www.w3.org/2000/09/xmldsig#"
W = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd"
U = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd"
EXC = "http://www.w3.org/2001/10/xml-exc-c14n#"
SIG = {"rsa-sha256": "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256", "rsa-sha1": DS + "rsa-sha1"}[alg]
DIG = {"rsa-sha256": "http://www.w3.org/2001/04/xmlenc#sha256", "rsa-sha1": DS + "sha1"}[alg]
raw = open(path, "rb").read()
assert raw.startswith(b"<?xml version='1.0' encoding='utf-8'?>\n"), raw[:60]
env = etree.fromstring(raw)
soap = etree.QName(env).namespace
hdr, body = env[0], env.find("{%s}Body" % soap)
assert etree.QName(hdr).localname == "Header", "Header must be the Envelope's first child"
sec = hdr.find("{%s}Security" % W)
assert sec is not None and sec.get("{%s}mustUnderstand" % soap) is None
kids = [etree.QName(c).localname for c in sec]
want = ["Signature", "BinarySecurityToken", "Timestamp"] if mode == "binary" else ["Signature", "Timestamp"]
if "--no-timestamp" in sys.argv:
    want = want[:-1]
assert kids == want, kids
sig = sec[0]
assert sig.prefix is None and sig.nsmap[None] == DS, "ds:Signature uses the default namespace"
si = sig.find("{%s}SignedInfo" % DS)
assert si.find("{%s}CanonicalizationMethod" % DS).get("Algorithm") == EXC
assert si.find("{%s}SignatureMethod" % DS).get("Algorithm") == SIG
refs = si.findall("{%s}Reference" % DS)
targets = [body] + ([sec[-1]] if want[-1] == "Timestamp" else [])
assert len(refs) == len(targets)
for ref, tgt in zip(refs, targets):
    assert ref.get("URI") == "#" + tgt.get("{%s}Id" % U) and ref.get("URI").startswith("#id-")
    assert [t.get("Algorithm") for t in ref.find("{%s}Transforms" % DS)] == [EXC]
    assert ref.find("{%s}Transforms/{%s}Transform/{*}InclusiveNamespaces" % (DS, DS)) is None
    assert ref.find("{%s}DigestMethod" % DS).get("Algorithm") == DIG
ki = sig.find("{%s}KeyInfo" % DS)
assert len(ki) == 1
str_ = ki[0]
assert str_.tag == "{%s}SecurityTokenReference" % W and len(str_) == 1
if mode == "binary":
    r = str_[0]
    bst = sec[1]
    assert r.tag == "{%s}Reference" % W and r.get("URI") == "#" + bst.get("{%s}Id" % U)
    assert r.get("ValueType").endswith("#X509v3") and bst.get("ValueType").endswith("#X509v3")
    assert bst.get("EncodingType").endswith("#Base64Binary")
else:
    xd = str_[0]
    assert xd.tag == "{%s}X509Data" % DS
    assert [etree.QName(c).localname for c in xd] == ["X509IssuerSerial", "X509Certificate"]
print("structure ok:", " ".join(kids))
EOF
}

NOW=2030-06-01T12:00:00Z
for env in soap11 soap12; do
  for mode in binary issuerserial; do
    out="$env-$mode.xml"
    check "sign $env $mode" "${SIGN[@]}" --in "$env.xml" --out "$out" --key client.key --cert client.crt \
      --mode "$mode" --now "$NOW" --ttl 300
    [[ -s $out ]] || continue
    check "structure of $env $mode" structure "$mode" "$out"
    if grep -q '<wsu:Created>2030-06-01T12:00:00Z</wsu:Created><wsu:Expires>2030-06-01T12:05:00Z</wsu:Expires>' "$out"; then
      pass "timestamp of $env $mode follows --now/--ttl"
    else
      fail "timestamp of $env $mode follows --now/--ttl"
    fi
    check "xmlsec1 verifies $env $mode" xmlsec_verify client.crt "$out"
    expect_exit "verify.py accepts $env $mode" 0 '"ok": true, "error": null, "signed": ["Body", "Timestamp"]' \
      "${VERIFY[@]}" --in "$out" --cert client.crt

    sed 's/hello from zeep/hello from mallory/' "$out" >"tampered-body-$out"
    if cmp -s "$out" "tampered-body-$out"; then fail "tamper setup $out" "sed changed nothing"; fi
    expect_exit "xmlsec1 rejects tampered Body ($env $mode)" 1 "failed to verify" xmlsec_verify client.crt "tampered-body-$out"
    expect_exit "verify.py rejects tampered Body ($env $mode)" 1 '"ok": false, "error": "SignatureVerificationFailed' \
      "${VERIFY[@]}" --in "tampered-body-$out" --cert client.crt

    sed 's/12:05:00Z/23:05:00Z/' "$out" >"tampered-ts-$out"
    if cmp -s "$out" "tampered-ts-$out"; then fail "tamper setup ts $out" "sed changed nothing"; fi
    expect_exit "xmlsec1 rejects tampered Timestamp ($env $mode)" 1 "failed to verify" xmlsec_verify client.crt "tampered-ts-$out"
    expect_exit "verify.py rejects tampered Timestamp ($env $mode)" 1 '"ok": false, "error": "SignatureVerificationFailed' \
      "${VERIFY[@]}" --in "tampered-ts-$out" --cert client.crt
  done
done

expect_exit "xmlsec1 rejects a wrong certificate" 1 "failed to verify" xmlsec_verify other.crt soap11-binary.xml
expect_exit "verify.py rejects a wrong certificate" 1 '"ok": false, "error": "SignatureVerificationFailed' \
  "${VERIFY[@]}" --in soap11-binary.xml --cert other.crt
expect_exit "verify.py rejects an unsigned message" 1 '"ok": false, "error": "malformed security header' \
  "${VERIFY[@]}" --in soap11.xml --cert client.crt

# rsa-sha1/sha1 (zeep's own default when no methods are passed).
check "sign soap11 binary rsa-sha1/sha1" "${SIGN[@]}" --in soap11.xml --out sha1.xml --key client.key --cert client.crt \
  --signature-method rsa-sha1 --digest-method sha1
check "structure of rsa-sha1/sha1" structure binary sha1.xml rsa-sha1
check "xmlsec1 verifies rsa-sha1/sha1" xmlsec_verify client.crt sha1.xml
expect_exit "verify.py accepts rsa-sha1/sha1" 0 '"ok": true' "${VERIFY[@]}" --in sha1.xml --cert client.crt

# --no-timestamp: zeep signs the Body only.
check "sign soap12 issuerserial --no-timestamp" "${SIGN[@]}" --in soap12.xml --out nots.xml --key client.key \
  --cert client.crt --mode issuerserial --no-timestamp
check "structure of --no-timestamp" structure issuerserial nots.xml rsa-sha256 --no-timestamp
check "xmlsec1 verifies --no-timestamp" xmlsec_verify client.crt nots.xml
expect_exit "verify.py accepts --no-timestamp (Body only)" 0 '"signed": ["Body"]' "${VERIFY[@]}" --in nots.xml --cert client.crt

# stdin/stdout
if "${SIGN[@]}" --in - --out - --key client.key --cert client.crt <soap12.xml | "${VERIFY[@]}" --in - --cert client.crt >pipe.json 2>&1; then
  pass "sign.py | verify.py through stdin/stdout"
else
  fail "sign.py | verify.py through stdin/stdout" "$(cat pipe.json)"
fi

expect_exit "sign.py usage error exits 2" 2 "unknown --signature-method" "${SIGN[@]}" --in soap11.xml --out x.xml \
  --key client.key --cert client.crt --signature-method rsa-md5
expect_exit "sign.py bad --now exits 2" 2 "not RFC 3339" "${SIGN[@]}" --in soap11.xml --out x.xml \
  --key client.key --cert client.crt --now yesterday
expect_exit "sign.py missing key file exits 1" 1 "sign.py:" "${SIGN[@]}" --in soap11.xml --out x.xml \
  --key nope.pem --cert client.crt
expect_exit "verify.py usage error exits 2" 2 "required" "${VERIFY[@]}" --in soap11.xml

printf '%d passed, %d failed (%ds)\n' "$passed" "$failed" $((SECONDS - t0))
[[ $failed == 0 ]]
