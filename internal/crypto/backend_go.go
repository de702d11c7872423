//go:build !openssl

package crypto

import (
	"crypto"
	"runtime"
)

func backendVersion() string { return runtime.Version() }

// backendKey is the key as loaded: crypto/rsa does the private-key
// operations.
func backendKey(s crypto.Signer) (crypto.Signer, error) { return s, nil }
