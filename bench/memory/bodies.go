package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	wcrypto "github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/signer"
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
	if b.valid, err = signer.Secure(envelope(o.size), so); err != nil {
		return nil, err
	}
	// Tampered: one payload byte changed after signing, so that the
	// gateway does all the work (gate, digests) before it refuses: what
	// anyone can send without a key.
	b.tampered = bytes.Clone(b.valid)
	i := bytes.LastIndex(b.tampered, []byte("lorem"))
	b.tampered[i] = 'L'
	for range 32 {
		s, err := signer.Secure(envelope(2<<10), so)
		if err != nil {
			return nil, err
		}
		b.small = append(b.small, s)
	}
	return b, nil
}

// envelope is a SOAP 1.1 envelope of about size bytes made of records of
// about 256 bytes (an element with an attribute and text): the shape of a
// large business document, so that the gate's per-element arrays count as
// they do in production, rather than one huge text node.
func envelope(size int) []byte {
	const head = `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><m:Batch xmlns:m="urn:bench">`
	const tail = `</m:Batch></soapenv:Body></soapenv:Envelope>`
	var b strings.Builder
	b.Grow(size + 512)
	b.WriteString(head)
	text := strings.Repeat("lorem ipsum ", 19)
	for n := 0; b.Len() < size-len(tail); n++ {
		fmt.Fprintf(&b, `<m:item n="%d">%s</m:item>`, n, text)
	}
	b.WriteString(tail)
	return []byte(b.String())
}
