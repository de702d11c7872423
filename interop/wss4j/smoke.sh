#!/usr/bin/env bash
# End-to-end smoke test of the WSS4J interop peer (no Go involved):
#   - test PKI made with openssl (CA, client signer, server recipient, all v3 with SKI; an EC signer;
#     an unrelated CA), plain SOAP 1.1 / 1.2 envelopes with ~1 KiB and ~1 MiB bodies;
#   - every sign profile through the CLI (1 KiB) and through batch mode (all sizes), each result
#     verified by the peer's own `verify` (round trip, with --require and key-reference checks);
#   - sign-bst output verified by xmlsec1 when it is installed;
#   - negative checks: tampered Body, untrusted CA, expired Timestamp, wrong UT password,
#     tampered ciphertext, unsecured message, unmet --require, usage error;
#   - MTOM/SwA packages (needs python3): --xop-expand, --swa content|complete, --swa-encrypt, the
#     trailing-signature layout, each verified with verify --mime and rejected after one attachment bit
#     flip; Attachment-Complete covers headers; responses with SignatureConfirmation (--expect-confirmation).
# Prints one line per check and "N passed, N failed"; exits non-zero if anything failed.
# SMOKE_KEEP=1 keeps the temporary directory (messages, keys, batch job/result files) for inspection.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
JAR="$(bash "$HERE/../build.sh" wss4j)"
JAVA=(java -jar "$JAR")

TMP="$(mktemp -d "${TMPDIR:-/tmp}/wss4j-smoke.XXXXXX")"
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
# expect_exit NAME CODE PATTERN CMD...: passes if CMD exits with CODE and its output contains PATTERN
# (for the peer: its JSON errorCode, so that e.g. a missing file cannot pass as a signature failure).
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
  openssl req -new -key ca.key -subj "/CN=Smoke CA/O=wssgw" -out ca.csr
  printf '%s\n' "basicConstraints=critical,CA:true" "keyUsage=critical,keyCertSign,cRLSign" \
    "subjectKeyIdentifier=hash" >ca.ext
  openssl x509 -req -in ca.csr -signkey ca.key -extfile ca.ext -days 3650 -set_serial 0x5001 -out ca.crt
  printf '%s\n' "basicConstraints=CA:false" "keyUsage=critical,digitalSignature,keyEncipherment" \
    "subjectKeyIdentifier=hash" "authorityKeyIdentifier=keyid" >leaf.ext
  issue() { # issue NAME KEYALG...
    local name=$1; shift
    openssl genpkey "$@" -out "$name.key"
    openssl req -new -key "$name.key" -subj "/CN=$name/O=wssgw" -out "$name.csr"
    openssl x509 -req -in "$name.csr" -CA ca.crt -CAkey ca.key -extfile leaf.ext -days 3650 \
      -set_serial "0x$(openssl rand -hex 8)" -out "$name.crt"
  }
  issue client -algorithm RSA -pkeyopt rsa_keygen_bits:2048
  issue server -algorithm RSA -pkeyopt rsa_keygen_bits:2048
  issue ecclient -algorithm EC -pkeyopt ec_paramgen_curve:P-256
  # An unrelated CA for the "untrusted signer" check.
  openssl req -x509 -newkey rsa:2048 -nodes -keyout other-ca.key -subj "/CN=Other CA" -days 30 -out other-ca.crt
} >pki.log 2>&1 || { cat pki.log; echo "openssl PKI generation failed"; exit 1; }
if openssl x509 -in client.crt -noout -ext subjectKeyIdentifier 2>/dev/null | grep -q ':'; then
  pass "pki: client certificate has a SubjectKeyIdentifier"
else
  fail "pki: client certificate has a SubjectKeyIdentifier"
fi

# ---------------------------------------------------------------- plain envelopes
# make_env SOAPVERSION BYTES FILE: a plain envelope whose Body holds ~BYTES of order items.
make_env() {
  local ver=$1 size=$2 file=$3 ns prefix header
  if [[ $ver == 11 ]]; then
    ns=http://schemas.xmlsoap.org/soap/envelope/ prefix=soapenv header="<soapenv:Header/>"
  else
    ns=http://www.w3.org/2003/05/soap-envelope prefix=env header=""   # no Header: WSS4J must add one
  fi
  {
    printf '<?xml version="1.0" encoding="UTF-8"?>\n'
    printf '<%s:Envelope xmlns:%s="%s">%s<%s:Body>' "$prefix" "$prefix" "$ns" "$header" "$prefix"
    printf '<m:placeOrder xmlns:m="urn:example:orders"><m:customer type="retail">Customer &amp; Co</m:customer>\n'
    awk -v n=$((size / 72 + 1)) 'BEGIN { for (i = 0; i < n; i++)
      printf "  <m:item sku=\"SKU-%06d\" qty=\"%d\"><m:name>Widget %d</m:name></m:item>\n", i, i % 9 + 1, i }'
    printf '</m:placeOrder></%s:Body></%s:Envelope>\n' "$prefix" "$prefix"
  } >"$file"
}
make_env 11 1024 soap11-1k.xml
make_env 12 1024 soap12-1k.xml
make_env 11 1048576 soap11-1m.xml
make_env 12 1048576 soap12-1m.xml
printf 'info  envelopes: %s\n' "$(wc -c soap1*.xml | awk '$2 != "total" {printf "%s=%dB ", $2, $1}')"

# ---------------------------------------------------------------- profiles
PROFILES=(sign-bst sign-issuerserial sign-ski sign-thumbprint sign-encrypt encrypt-sign username-digest)
SIGN_KEYS=(--key client.key --cert client.crt --chain ca.crt --encrypt-cert server.crt --user alice --password 's3cret!')
VERIFY_KEYS=(--ca ca.crt --signer-cert client.crt --cert server.crt --key server.key --user alice --password 's3cret!')
require_for() {
  case $1 in
    sign-encrypt | encrypt-sign) echo "signature,timestamp,signed-body,signed-timestamp,encryption,encrypted-body" ;;
    username-digest) echo "username-token,timestamp" ;;
    *) echo "signature,timestamp,signed-body,signed-timestamp" ;;
  esac
}
keyref_for() {
  case $1 in
    sign-issuerserial) echo '"keyReference":"issuer-serial"' ;;
    sign-ski) echo '"keyReference":"ski"' ;;
    sign-thumbprint) echo '"keyReference":"thumbprint"' ;;
    sign-bst | sign-encrypt | encrypt-sign) echo '"keyReference":"bst"' ;;
    username-digest) echo '"passwordType":"http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0#PasswordDigest"' ;;
  esac
}

# roundtrip PROFILE ENV: CLI sign, then CLI verify with requirements and key-reference check.
roundtrip() {
  local p=$1 env=$2 out="cli-$1-$2.xml" res
  "${JAVA[@]}" sign --profile "$p" --in "$env.xml" --out "$out" "${SIGN_KEYS[@]}" || return 1
  res=$("${JAVA[@]}" verify --in "$out" "${VERIFY_KEYS[@]}" --require "$(require_for "$p")") || { echo "$res"; return 1; }
  grep -qF "$(keyref_for "$p")" <<<"$res" || { echo "missing $(keyref_for "$p") in $res"; return 1; }
}
for env in soap11-1k soap12-1k; do
  for p in "${PROFILES[@]}"; do
    check "cli roundtrip $p $env" roundtrip "$p" "$env"
  done
done

# stdin/stdout plumbing: sign --out - | verify --in -
check "cli sign --out - | verify --in -" bash -c \
  "${JAVA[*]} sign --profile sign-bst --in soap11-1k.xml --key client.key --cert client.crt | ${JAVA[*]} verify --in - --ca ca.crt"

# EC signer (PKCS#8 EC key, ecdsa-sha256 by default).
ec_roundtrip() {
  local res
  "${JAVA[@]}" sign --profile sign-bst --in soap11-1k.xml --out ec.xml --key ecclient.key --cert ecclient.crt || return 1
  res=$("${JAVA[@]}" verify --in ec.xml --ca ca.crt --require signed-body) || { echo "$res"; return 1; }
  grep -qF '"signatureMethod":"http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256"' <<<"$res" || { echo "$res"; return 1; }
}
check "cli roundtrip sign-bst with EC P-256 key (ecdsa-sha256)" ec_roundtrip

# ---------------------------------------------------------------- batch mode (all sizes)
json_args() { # json_args ARG... -> JSON array of strings (no quoting needed for our paths/values)
  local first=1 a
  printf '['
  for a in "$@"; do
    [[ $first == 1 ]] || printf ','
    first=0
    a=${a//\\/\\\\}
    printf '"%s"' "${a//\"/\\\"}"
  done
  printf ']'
}
: >sign-jobs.jsonl
: >verify-jobs.jsonl
for env in soap11-1k soap12-1k soap11-1m soap12-1m; do
  for p in "${PROFILES[@]}"; do
    printf '{"id":"%s","args":%s}\n' "$p/$env" \
      "$(json_args sign --profile "$p" --in "$env.xml" --out "batch-$p-$env.xml" "${SIGN_KEYS[@]}")" >>sign-jobs.jsonl
    printf '{"id":"%s","args":%s}\n' "$p/$env" \
      "$(json_args verify --in "batch-$p-$env.xml" "${VERIFY_KEYS[@]}" --require "$(require_for "$p")")" >>verify-jobs.jsonl
  done
done
bt0=$(date +%s%N)
"${JAVA[@]}" batch --parallel 2 <sign-jobs.jsonl >sign-results.jsonl || true
bt1=$(date +%s%N)
"${JAVA[@]}" batch --parallel 2 <verify-jobs.jsonl >verify-results.jsonl || true
bt2=$(date +%s%N)
printf 'info  batch: %d sign jobs in %d ms, %d verify jobs in %d ms (one JVM each, --parallel 2)\n' \
  "$(wc -l <sign-jobs.jsonl)" $(((bt1 - bt0) / 1000000)) "$(wc -l <verify-jobs.jsonl)" $(((bt2 - bt1) / 1000000))
for env in soap11-1k soap12-1k soap11-1m soap12-1m; do
  for p in "${PROFILES[@]}"; do
    id="$p/$env"
    s=$(grep -F "{\"id\":\"$id\"," sign-results.jsonl || true)
    v=$(grep -F "{\"id\":\"$id\"," verify-results.jsonl || true)
    if [[ $s != *'"ok":true'* ]]; then
      fail "batch roundtrip $p $env" "sign: ${s:-no result line}"
    elif [[ $v != *'"ok":true'* ]]; then
      fail "batch roundtrip $p $env" "verify: ${v:-no result line}"
    elif [[ $v != *"$(keyref_for "$p")"* ]]; then
      fail "batch roundtrip $p $env" "missing $(keyref_for "$p"): $v"
    else
      pass "batch roundtrip $p $env ($(sed -E 's/.*"ms":([0-9.]+).*/\1/' <<<"$s") ms sign, $(sed -E 's/.*"ms":([0-9.]+).*/\1/' <<<"$v") ms verify)"
    fi
  done
done

# ---------------------------------------------------------------- xmlsec1 cross-check
S11=http://schemas.xmlsoap.org/soap/envelope/
S12=http://www.w3.org/2003/05/soap-envelope
U=http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd
W=http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd
xmlsec_verify() {
  xmlsec1 --verify --id-attr:Id "$S11:Body" --id-attr:Id "$S12:Body" --id-attr:Id "$U:Timestamp" \
    --id-attr:Id "$W:BinarySecurityToken" --pubkey-cert-pem client.crt --enabled-key-data rsa "$1"
}
if command -v xmlsec1 >/dev/null; then
  for env in soap11-1k soap12-1k soap11-1m soap12-1m; do
    check "xmlsec1 verifies WSS4J sign-bst $env" xmlsec_verify "batch-sign-bst-$env.xml"
  done
else
  printf 'SKIP  xmlsec1 not installed (apt-get install -y --no-install-recommends xmlsec1)\n'
fi

# ---------------------------------------------------------------- negative checks
sed 's/<m:name>Widget 1</<m:name>Widget 7</' cli-sign-bst-soap11-1k.xml >tampered.xml
if cmp -s tampered.xml cli-sign-bst-soap11-1k.xml; then fail "tamper setup" "sed changed nothing"; fi
expect_exit "verify rejects Body tampered after signing (exit 1, FAILED_CHECK)" 1 '"errorCode":"FAILED_CHECK"' \
  "${JAVA[@]}" verify --in tampered.xml --ca ca.crt
if command -v xmlsec1 >/dev/null; then
  expect_exit "xmlsec1 rejects the tampered Body" 1 "failed to verify" xmlsec_verify tampered.xml
fi
expect_exit "verify rejects a signer not issued by --ca (exit 1, FAILURE: path validation)" 1 'No trusted certs found' \
  "${JAVA[@]}" verify --in cli-sign-bst-soap11-1k.xml --ca other-ca.crt
"${JAVA[@]}" sign --profile sign-bst --in soap11-1k.xml --out old.xml --key client.key --cert client.crt \
  --now 2020-01-01T00:00:00Z >/dev/null
expect_exit "verify rejects an expired Timestamp (exit 1, MESSAGE_EXPIRED)" 1 '"errorCode":"MESSAGE_EXPIRED"' "${JAVA[@]}" verify --in old.xml --ca ca.crt
expect_exit "verify --no-timestamp-check accepts it (exit 0)" 0 '"ok":true' \
  "${JAVA[@]}" verify --in old.xml --ca ca.crt --no-timestamp-check
expect_exit "verify rejects a wrong UsernameToken password (exit 1, FAILED_AUTHENTICATION)" 1 '"errorCode":"FAILED_AUTHENTICATION"' \
  "${JAVA[@]}" verify --in cli-username-digest-soap11-1k.xml --user alice --password wrong
if command -v perl >/dev/null; then
  # Flip one base64 character inside the Body's CipherValue (the last CipherValue in the document).
  perl -0pe 's{(.*<xenc:CipherValue>)(.)}{$1 . ($2 eq "A" ? "B" : "A")}se' cli-sign-encrypt-soap11-1k.xml >tampered-enc.xml
  expect_exit "verify rejects a tampered AES-GCM ciphertext (exit 1, FAILED_CHECK)" 1 '"errorCode":"FAILED_CHECK"' \
    "${JAVA[@]}" verify --in tampered-enc.xml "${VERIFY_KEYS[@]}"
fi
expect_exit "verify rejects an unsecured message (exit 1, NO_SECURITY)" 1 '"errorCode":"NO_SECURITY"' "${JAVA[@]}" verify --in soap11-1k.xml --ca ca.crt
expect_exit "verify fails an unmet --require encryption (exit 1, REQUIREMENT)" 1 '"errorCode":"REQUIREMENT"' \
  "${JAVA[@]}" verify --in cli-sign-bst-soap11-1k.xml --ca ca.crt --require encryption
expect_exit "usage error exits 2 (USAGE)" 2 '"errorCode":"USAGE"' "${JAVA[@]}" sign --profile no-such-profile --in soap11-1k.xml --out x.xml

# ---------------------------------------------------------------- MTOM / SwA packages
# Attachments: 3000 random bytes (image/png) and a small XML document (text/xml, exercises the
# exc-c14n of XML attachments under the SwA Content transform).
head -c 3000 /dev/urandom >att.bin
printf '<doc xmlns="urn:x">\n  <a  b="1"   c="2"/>\r\n</doc>\n' >att.xml
ATTS=(--attachment att.bin --attachment-type image/png --attachment att.xml --attachment-type "text/xml; charset=UTF-8")
ctype() { python3 -c 'import json, sys; print(json.loads(sys.argv[1])["contentType"])' "$1"; } # the package's
# mime_sign NAME FLAGS...: sign soap11-1k.xml with attachments into NAME.mime, content type into NAME.ct.
mime_sign() {
  local name=$1 res; shift
  res=$("${JAVA[@]}" sign --profile sign-bst --in soap11-1k.xml --key client.key --cert client.crt "${ATTS[@]}" \
    --mime-out "$name.mime" "$@") || { echo "$res"; return 1; }
  ctype "$res" >"$name.ct"
}
# mime_verify NAME WANT FLAGS...: verify NAME.mime; the JSON must contain WANT.
mime_verify() {
  local name=$1 want=$2 res; shift 2
  res=$("${JAVA[@]}" verify --mime "$name.mime" --content-type "$(cat "$name.ct")" --ca ca.crt "$@") || { echo "$res"; return 1; }
  grep -qF "$want" <<<"$res" || { echo "missing $want in $res"; return 1; }
}
# flip_attachment IN OUT: flips one bit of the first attachment (the part after the root part).
flip_attachment() {
  python3 - "$1" "$2" <<'PY'
import sys
d = bytearray(open(sys.argv[1], 'rb').read())
second = d.index(b'\r\n--uuid:', d.index(b'--uuid:') + 1)
body = d.index(b'\r\n\r\n', second) + 4
d[body + 100] ^= 1
open(sys.argv[2], 'wb').write(d)
PY
}
# roundtrip_mime NAME WANT [VERIFYFLAGS...] -- SIGNFLAGS...
roundtrip_mime() {
  local name=$1 want=$2 vf=(); shift 2
  while [[ $1 != -- ]]; do vf+=("$1"); shift; done
  shift
  mime_sign "$name" "$@" && mime_verify "$name" "$want" "${vf[@]}"
}
if command -v python3 >/dev/null; then
  check "mtom: sign --xop-expand, verify --mime (attachments signed through the XOP infoset)" \
    roundtrip_mime xop '"signedBy":"xop"' -- --xop-expand
  for mode in content complete; do
    check "swa: sign --swa $mode, verify --mime" roundtrip_mime "swa-$mode" '"signedBy":"swa"' -- --swa "$mode"
    check "swa: sign --swa $mode --swa-encrypt $mode, verify --mime decrypts and verifies" \
      roundtrip_mime "swa-enc-$mode" '"decrypted":true' --cert server.crt --key server.key -- \
      --swa "$mode" --swa-encrypt "$mode" --encrypt-cert server.crt
  done
  check "mtom: sign --xop-expand --trailing-signature, verify --trailing-signature (re-assembled)" \
    roundtrip_mime trailing '"trailingSignatureParts"' --trailing-signature -- --xop-expand --trailing-signature
  for name in xop swa-content swa-complete swa-enc-content trailing; do
    [[ -s $name.mime ]] || continue
    flip_attachment "$name.mime" "$name-bad.mime"
    cp "$name.ct" "$name-bad.ct"
    extra=()
    [[ $name == trailing ]] && extra=(--trailing-signature)
    [[ $name == swa-enc-* ]] && extra=(--cert server.crt --key server.key)
    expect_exit "verify rejects $name with one attachment bit flipped (FAILED_CHECK)" 1 '"errorCode":"FAILED_CHECK"' \
      "${JAVA[@]}" verify --mime "$name-bad.mime" --content-type "$(cat "$name-bad.ct")" --ca ca.crt "${extra[@]}"
  done
  # Attachment-Complete also covers the MIME headers; Attachment-Content does not.
  for mode in content complete; do
    sed 's#^Content-Type: image/png\r$#Content-Type: image/gif\r#' "swa-$mode.mime" >"swa-$mode-hdr.mime"
    cmp -s "swa-$mode.mime" "swa-$mode-hdr.mime" && fail "header tamper setup $mode" "sed changed nothing"
  done
  expect_exit "swa content: a changed attachment Content-Type still verifies (headers not covered)" 0 '"ok":true' \
    "${JAVA[@]}" verify --mime swa-content-hdr.mime --content-type "$(cat swa-content.ct)" --ca ca.crt
  expect_exit "swa complete: a changed attachment Content-Type is rejected (FAILED_CHECK)" 1 '"errorCode":"FAILED_CHECK"' \
    "${JAVA[@]}" verify --mime swa-complete-hdr.mime --content-type "$(cat swa-complete.ct)" --ca ca.crt
  expect_exit "xop: verify without XOP expansion fails (the digest is over the XOP infoset)" 1 '"errorCode":"FAILED_CHECK"' \
    "${JAVA[@]}" verify --mime xop.mime --content-type "$(cat xop.ct)" --ca ca.crt --no-xop-expand
  expect_exit "trailing: verify without --trailing-signature fails (Signature holds only xop:Include)" 1 '"errorCode":"INVALID_SECURITY"' \
    "${JAVA[@]}" verify --mime trailing.mime --content-type "$(cat trailing.ct)" --ca ca.crt
else
  printf 'SKIP  MTOM/SwA checks need python3\n'
fi

# ---------------------------------------------------------------- signed responses (SignatureConfirmation)
SV=$(printf 'request SignatureValue' | base64)
"${JAVA[@]}" sign --profile sign-encrypt --in soap11-1k.xml --out response.xml --key server.key --cert server.crt \
  --encrypt-cert client.crt --confirm-signature "$SV" >/dev/null
expect_exit "response: signed SignatureConfirmation matches --expect-confirmation, Body decrypted" 0 '"signed":true' \
  "${JAVA[@]}" verify --in response.xml --ca ca.crt --cert client.crt --key client.key --expect-confirmation "$SV" \
  --require signed-body,signed-timestamp,encrypted-body
expect_exit "response: --expect-confirmation with another value fails (REQUIREMENT)" 1 '"errorCode":"REQUIREMENT"' \
  "${JAVA[@]}" verify --in response.xml --ca ca.crt --cert client.crt --key client.key --expect-confirmation "$(printf other | base64)"
sed 's#<wsse:Security \([^>]*\)>#<wsse:Security \1><wsse11:SignatureConfirmation xmlns:wsse11="http://docs.oasis-open.org/wss/oasis-wss-wssecurity-secext-1.1.xsd" wsu:Id="SC-forged" Value="'"$(printf forged | base64)"'"/>#' \
  response.xml >response-forged.xml
expect_exit "response: an unsigned (appended) SignatureConfirmation does not satisfy --expect-confirmation" 1 '"errorCode":"REQUIREMENT"' \
  "${JAVA[@]}" verify --in response-forged.xml --ca ca.crt --cert client.crt --key client.key --expect-confirmation "$(printf forged | base64)"

printf '%d passed, %d failed (%ds)\n' "$passed" "$failed" $((SECONDS - t0))
[[ $failed == 0 ]]
