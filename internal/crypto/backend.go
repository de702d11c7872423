package crypto

// Backend names the implementation of the private-key operations of the
// key pairs LoadKeyPair returns (RSA-OAEP and RSA 1.5 key transport,
// RSA PKCS#1 v1.5 and PSS signing), a build-time choice (issue 18):
//
//   - "go": crypto/rsa, the default static build;
//   - "go-boringcrypto": crypto/rsa on BoringCrypto (GOEXPERIMENT=boringcrypto);
//   - "openssl": the system's OpenSSL 3 libcrypto through cgo
//     (go build -tags openssl, make build-openssl).
//
// Everything else (verification, public-key encryption, ECDSA and Ed25519
// signing, symmetric ciphers) is crypto/* in every build: measured, the
// OpenSSL backend is only faster where a private RSA key is used
// (docs/decisions.md). In FIPS 140-3 mode (GODEBUG=fips140=on) an openssl
// build keeps every key in the Go Cryptographic Module and reports "go":
// OpenSSL's default provider is not a validated module.
func Backend() string {
	if backend == "openssl" && fipsEnabled() {
		return "go"
	}
	return backend
}

// BackendVersion is the version of the backend's library: OpenSSL's
// version string in an openssl build, the Go version otherwise.
func BackendVersion() string { return backendVersion() }
