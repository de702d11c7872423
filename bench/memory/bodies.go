package main

import (
	"bytes"
	"path/filepath"
	"time"

	wcrypto "github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/testtraffic"
)

// bodies are the requests of a run, signed with the demo partner key.
type bodies struct {
	valid, tampered []byte   // large
	small           [][]byte // small valid ones
}

func makeBodies(o options) (*bodies, error) {
	kp, err := wcrypto.LoadKeyPair(wcrypto.KeyFileOptions{
		CertFile: filepath.Join(o.keys, "partner.crt"),
		KeyFile:  filepath.Join(o.keys, "partner.key"),
	})
	if err != nil {
		return nil, err
	}
	so := signer.DefaultOptions()
	// Valid for the whole run; replay is off in the route's policy.
	so.Signer, so.Certificate, so.TTL = kp.Signer, kp.Certificate, 2*time.Hour
	b := &bodies{}
	if b.valid, err = signer.Secure(testtraffic.LargeEnvelope(o.size), so); err != nil {
		return nil, err
	}
	// Tampered: one payload byte changed after signing, so that the
	// gateway does all the work (gate, digests) before it refuses: what
	// anyone can send without a key.
	b.tampered = bytes.Clone(b.valid)
	i := bytes.LastIndex(b.tampered, []byte("lorem"))
	b.tampered[i] = 'L'
	for range 32 {
		s, err := signer.Secure(testtraffic.LargeEnvelope(2<<10), so)
		if err != nil {
			return nil, err
		}
		b.small = append(b.small, s)
	}
	return b, nil
}
