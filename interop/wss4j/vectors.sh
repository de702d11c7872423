#!/usr/bin/env bash
# Regenerates the committed WSS4J interop vectors (testdata/wss4j) with the project's own WSS4J
# peer, so the tests that read them depend on nothing outside the repository.
#
#   interop/wss4j/vectors.sh              # new messages, same keys
#   VECTORS_NEW_KEYS=1 interop/wss4j/vectors.sh   # new test CA and key pairs too
#
# What it makes is described in testdata/wss4j/README.md. The keys (a test CA, the client signing
# pair, the server encryption pair; test-only) are made with openssl when absent; the messages are
# two placeOrder envelopes secured by four profiles. Every message is verified by WSS4J before the
# script ends. Timestamps carry the time of generation: the tests pin their clock to each message's
# wsu:Created, so committed vectors never expire (the certificates are valid for 10 years).
# Needs java, maven (through ../build.sh) and openssl. Environment: VECTORS_OUT (default:
# testdata/wss4j), VECTORS_NEW_KEYS=1, VECTORS_ONLY="dir …" (regenerate only these sets, so adding
# a set does not rewrite the committed ones).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$HERE/../.." && pwd)"
OUT="${VECTORS_OUT:-$REPO_ROOT/testdata/wss4j}"
KEYS="$OUT/keys"
JAR="$(bash "$HERE/../build.sh" wss4j)"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

# make_keys writes ca, client and server (CN=<name>, O=Peer), RSA 2048, PKCS#8 keys. The leaf
# certificates carry a Subject Key Identifier (for SKI references) and the key usages WSS4J and
# wssgw check for signing and key transport.
make_keys() {
  mkdir -p "$KEYS"
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=Test CA/O=Peer" \
    -keyout "$KEYS/ca.key" -out "$KEYS/ca.crt" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -addext "subjectKeyIdentifier=hash" 2>/dev/null
  printf 'keyUsage=critical,digitalSignature,keyEncipherment\nsubjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n' >"$TMP/leaf.ext"
  for name in client server; do
    openssl req -newkey rsa:2048 -nodes -subj "/CN=$name/O=Peer" \
      -keyout "$KEYS/$name.key" -out "$TMP/$name.csr" 2>/dev/null
    openssl x509 -req -in "$TMP/$name.csr" -CA "$KEYS/ca.crt" -CAkey "$KEYS/ca.key" -CAcreateserial \
      -CAserial "$TMP/ca.srl" -days 3650 -sha256 -extfile "$TMP/leaf.ext" -out "$KEYS/$name.crt" 2>/dev/null
  done
  # The CA key is not needed by any test; dropping it keeps the vectors' trust closed.
  rm -f "$KEYS/ca.key"
}

# envelope N SOAPNS PREFIX prints order N as a plain SOAP envelope.
envelope() {
  local n=$1 ns=$2 p=$3 type=retail
  ((n % 2)) && type=wholesale
  printf '<?xml version="1.0" encoding="UTF-8"?><%s:Envelope xmlns:%s="%s"><%s:Header/><%s:Body>' "$p" "$p" "$ns" "$p" "$p"
  printf '<ns1:placeOrder xmlns:ns1="urn:example:orders"><ns1:orderId>10000%d</ns1:orderId>' "$n"
  printf '<ns1:customer type="%s">Customer &amp; Co %d</ns1:customer>' "$type" "$n"
  local i qty=(1 8 2) price=(0.0 31.1 62.2)
  for i in 0 1 2; do
    printf '<ns1:item qty="%d" sku="SKU-%d-%d"><ns1:name>Widget %d for order %d</ns1:name>' $((qty[i] + n)) "$i" "$n" "$i" "$n"
    printf '<ns1:price currency="EUR">%s</ns1:price></ns1:item>' "$(awk -v p="${price[i]}" -v n="$n" 'BEGIN{printf "%.1f", p+n}')"
  done
  printf '</ns1:placeOrder></%s:Body></%s:Envelope>\n' "$p" "$p"
}

# wanted DIR reports whether set DIR is to be (re)generated (VECTORS_ONLY).
wanted() {
  [[ -z "${VECTORS_ONLY:-}" || " $VECTORS_ONLY " == *" $1 "* ]]
}

# sign DIR PROFILE INPUT N [FLAGS...] secures INPUT into DIR/000N.xml and verifies it with WSS4J.
sign() {
  local dir=$1 profile=$2 in=$3 n=$4
  shift 4
  wanted "$dir" || return 0
  mkdir -p "$OUT/$dir"
  local out="$OUT/$dir/000$n.xml"
  java -jar "$JAR" sign --profile "$profile" --in "$in" --out "$out" \
    --key "$KEYS/client.key" --cert "$KEYS/client.crt" "$@" >/dev/null
  local verify=(verify --in "$out" --ca "$KEYS/ca.crt") require=signed-body,signed-timestamp
  case $profile in
  sign-issuerserial) verify+=(--signer-cert "$KEYS/client.crt") ;;
  sign-x509) ;;
  sign-encrypt) verify+=(--key "$KEYS/server.key" --cert "$KEYS/server.crt") require+=,encrypted-body ;;
  esac
  verify+=(--require "$require")
  java -jar "$JAR" "${verify[@]}" >"$TMP/verify.json" ||
    { cat "$TMP/verify.json" >&2; echo "vectors.sh: WSS4J rejects $out" >&2; exit 1; }
  echo "$dir/000$n.xml: $(wc -c <"$out") bytes"
}

# sign_mime DIR PROFILE INPUT N [FLAGS...] secures INPUT into the MTOM package DIR/000N.mime (its
# Content-Type in DIR/000N.ctype) the way CXF does with MTOM on: WSS4J storeBytesInAttachment puts
# the BinarySecurityToken's certificate and every CipherValue into MIME parts (xop:Include in the
# element), and one attachment in the Body (xop:Include) is signed through the XOP infoset. The
# package is verified with WSS4J.
sign_mime() {
  local dir=$1 profile=$2 in=$3 n=$4
  shift 4
  wanted "$dir" || return 0
  mkdir -p "$OUT/$dir"
  local out="$OUT/$dir/000$n.mime" ctype
  head -c 3000 /dev/urandom >"$TMP/att.bin"
  ctype=$(java -jar "$JAR" sign --profile "$profile" --in "$in" --mime-out "$out" \
    --key "$KEYS/client.key" --cert "$KEYS/client.crt" --attachment "$TMP/att.bin" --attachment-type image/png \
    --content-id "photo$n@example.org" --xop-expand --store-bytes-in-attachment "$@" |
    sed -n 's/^{[^{]*"contentType":"\(\([^"\\]\|\\.\)*\)".*/\1/p' | sed 's/\\"/"/g')
  [[ -n "$ctype" ]] || { echo "vectors.sh: no Content-Type for $out" >&2; exit 1; }
  printf '%s\n' "$ctype" >"$OUT/$dir/000$n.ctype"
  local verify=(verify --mime "$out" --content-type "$ctype" --ca "$KEYS/ca.crt") require=signed-body,signed-timestamp
  case $profile in
  sign-encrypt) verify+=(--key "$KEYS/server.key" --cert "$KEYS/server.crt") require+=,encrypted-body ;;
  esac
  verify+=(--require "$require")
  java -jar "$JAR" "${verify[@]}" >"$TMP/verify.json" ||
    { cat "$TMP/verify.json" >&2; echo "vectors.sh: WSS4J rejects $out" >&2; exit 1; }
  echo "$dir/000$n.mime: $(wc -c <"$out") bytes"
}

if [[ "${VECTORS_NEW_KEYS:-}" == 1 || ! -s "$KEYS/ca.crt" ]]; then
  make_keys
fi
for n in 0 1; do
  envelope "$n" http://schemas.xmlsoap.org/soap/envelope/ soapenv >"$TMP/order-$n.xml"
  envelope "$n" http://www.w3.org/2003/05/soap-envelope env >"$TMP/order-$n-soap12.xml"
  sign sign-bst sign-bst "$TMP/order-$n.xml" "$n"
  sign sign-bst-soap12 sign-bst "$TMP/order-$n-soap12.xml" "$n"
  sign sign-issuerserial sign-issuerserial "$TMP/order-$n.xml" "$n"
  sign signencr-gcm sign-encrypt "$TMP/order-$n.xml" "$n" --encrypt-cert "$KEYS/server.crt"
  sign sign-x509 sign-x509 "$TMP/order-$n.xml" "$n"
  sign signencr-x509 sign-encrypt "$TMP/order-$n.xml" "$n" --encrypt-cert "$KEYS/server.crt" \
    --key-identifier x509 --encrypt-key-identifier x509
  sign_mime mtom-store-sign sign-bst "$TMP/order-$n.xml" "$n"
  sign_mime mtom-store-sign-soap12 sign-bst "$TMP/order-$n-soap12.xml" "$n"
  sign_mime mtom-store-signencr sign-encrypt "$TMP/order-$n.xml" "$n" --encrypt-cert "$KEYS/server.crt"
  sign_mime mtom-store-signencr-soap12 sign-encrypt "$TMP/order-$n-soap12.xml" "$n" --encrypt-cert "$KEYS/server.crt"
done
