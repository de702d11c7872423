package main

import (
	"path/filepath"
	"time"

	wcrypto "github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/signer"
)

// signedPolicy is the wssgw policy of the signed scenario: a signature and
// a Timestamp from a partner under the demo CA. Replay is off because the
// load repeats a fixed set of messages; with it on, every request after the
// first round would be a (correctly) rejected replay. The replay store's
// cost is a memory-map insert, small beside the signature check.
const signedPolicy = `policies:
  partner:
    require: [signature, timestamp]
    trust: {caFiles: [%q]}
    replay: "off"
`

// signedBodies signs n copies of the size-byte envelope with the demo
// partner key, each with its own Timestamp and ids, valid for an hour.
func signedBodies(keys string, size, n int) ([][]byte, error) {
	kp, err := wcrypto.LoadKeyPair(wcrypto.KeyFileOptions{
		CertFile: filepath.Join(keys, "partner.crt"),
		KeyFile:  filepath.Join(keys, "partner.key"),
	})
	if err != nil {
		return nil, err
	}
	o := signer.DefaultOptions()
	o.Signer, o.Certificate, o.TTL = kp.Signer, kp.Certificate, time.Hour
	// The payload is the pass-through scenario's size-byte envelope; the
	// Security header (Timestamp, BST, Signature: about 4 KiB) comes on top.
	plain := soapBody(size)
	bodies := make([][]byte, n)
	for i := range bodies {
		if bodies[i], err = signer.Secure(plain, o); err != nil {
			return nil, err
		}
	}
	return bodies, nil
}
