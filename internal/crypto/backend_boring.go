//go:build !openssl && goexperiment.boringcrypto

package crypto

// crypto/rsa runs on BoringCrypto in this build.
const backend = "go-boringcrypto"
