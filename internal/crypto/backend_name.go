//go:build !openssl && !goexperiment.boringcrypto

package crypto

const backend = "go"
