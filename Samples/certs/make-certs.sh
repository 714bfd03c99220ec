#!/usr/bin/env bash
# make-certs.sh - test CA and TLS server certificate for local HTTPS tests.
#
# Run by a developer (not by CI); the outputs are committed. Needs the Debian
# package "openssl" (OpenSSL 3.x). Writes next to this script:
#   ca.pem          CA certificate "richpush test CA" (ECDSA P-256, 20 years)
#   ca-key.pem      CA private key (PKCS#8, unencrypted; kept to re-issue)
#   server.pem      server certificate only (no chain), signed by the CA
#   server-key.pem  server private key (PKCS#8 "BEGIN PRIVATE KEY", unencrypted)
#
# Usage: ./make-certs.sh            re-issue server cert+key; reuse the CA if
#                                   ca.pem and ca-key.pem exist, else create it
#        ./make-certs.sh --new-ca   also replace the CA (everyone must re-trust)
#
# These keys are public test material: never trust ca.pem outside tests.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here"

DAYS=7300   # 20 years, for both certificates
SAN="DNS:localhost,IP:127.0.0.1,IP:::1,DNS:cdn.example.com,DNS:images.example.com,DNS:media.example.com,DNS:*.example.com,DNS:assets.example.org"

new_ca=0
case "${1:-}" in
  "") ;;
  --new-ca) new_ca=1 ;;
  *) echo "usage: $0 [--new-ca]" >&2; exit 2 ;;
esac

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

genkey() {  # $1 = output file: ECDSA P-256 key, PKCS#8 PEM, unencrypted
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 \
    -pkeyopt ec_param_enc:named_curve -out "$1"
}

# --- CA ----------------------------------------------------------------------
if [[ $new_ca == 1 || ! -f ca.pem || ! -f ca-key.pem ]]; then
  genkey "$tmp/ca-key.pem"
  cat > "$tmp/ca.cnf" <<'EOF'
[req]
distinguished_name = dn
prompt             = no
x509_extensions    = v3_ca
[dn]
CN = richpush test CA
O  = richpush
[v3_ca]
basicConstraints       = critical, CA:TRUE
keyUsage               = critical, keyCertSign, cRLSign
subjectKeyIdentifier   = hash
EOF
  openssl req -new -x509 -sha256 -days "$DAYS" -config "$tmp/ca.cnf" \
    -key "$tmp/ca-key.pem" -out "$tmp/ca.pem"
  mv "$tmp/ca-key.pem" ca-key.pem
  mv "$tmp/ca.pem" ca.pem
  echo "created CA: ca.pem, ca-key.pem"
else
  echo "reusing CA: ca.pem, ca-key.pem"
fi

# --- server certificate ------------------------------------------------------
genkey "$tmp/server-key.pem"
cat > "$tmp/server.cnf" <<EOF
[req]
distinguished_name = dn
prompt             = no
[dn]
CN = localhost
O  = richpush
[v3_server]
basicConstraints       = critical, CA:FALSE
keyUsage               = critical, digitalSignature
extendedKeyUsage       = serverAuth
subjectAltName         = $SAN
subjectKeyIdentifier   = hash
authorityKeyIdentifier = keyid
EOF
openssl req -new -sha256 -config "$tmp/server.cnf" \
  -key "$tmp/server-key.pem" -out "$tmp/server.csr"
# No -CAserial/-CAcreateserial: OpenSSL 3 then picks a random serial number.
openssl x509 -req -sha256 -days "$DAYS" -in "$tmp/server.csr" \
  -CA ca.pem -CAkey ca-key.pem \
  -extfile "$tmp/server.cnf" -extensions v3_server -out "$tmp/server.pem"
openssl verify -CAfile ca.pem "$tmp/server.pem" >/dev/null
mv "$tmp/server-key.pem" server-key.pem
mv "$tmp/server.pem" server.pem
chmod 644 ca.pem server.pem ca-key.pem server-key.pem
echo "issued server.pem, server-key.pem"
openssl x509 -in server.pem -noout -subject -issuer -enddate -ext subjectAltName
