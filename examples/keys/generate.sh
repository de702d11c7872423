#!/usr/bin/env bash
# Regenerates the DEMO key material used by config.example.yaml and `make run`.
# These keys are public: they are for the demo only and must never protect
# real traffic. Tests generate their own keys.
set -euo pipefail
cd "$(dirname "$0")"
days=7300
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days $days \
  -subj "/O=wssgw demo/CN=wssgw demo CA" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
issue() { # name subject keyUsage
  openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "$2" 2>/dev/null
  openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -set_serial "0x$(openssl rand -hex 16)" \
    -days $days -out "$1.crt" \
    -extfile <(printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,%s\nsubjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n' "$3") 2>/dev/null
  rm "$1.csr"
}
issue partner "/O=wssgw demo/CN=demo partner" digitalSignature,nonRepudiation
issue gateway "/O=wssgw demo/CN=demo gateway" keyEncipherment,digitalSignature
rm ca.key
printf 'demo:demo-password\n' > users.txt
