package main

import (
	"bytes"
	"context"
	gocrypto "crypto"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/mime"
	"github.com/wssgw/wssgw/internal/signer/trailer"
	"github.com/wssgw/wssgw/internal/wss"
)

// verifyPackage verifies an MTOM/SwA package. A package with a trailing
// signature (a wssgw streamed response) is reassembled first
// (trailer.Verify); the result then goes through the DOM engine with the
// remaining attachments, as any package would.
func (v *verifier) verifyPackage(ctx context.Context, msg []byte, contentType string, key gocrypto.Decrypter, now time.Time) (*wss.Result, []byte, *wss.Error, error) {
	lim := mime.DefaultLimits()
	lim.SpoolDir = os.TempDir()
	pkg, err := mime.Read(ctx, bytes.NewReader(msg), contentType, lim)
	if err != nil {
		return nil, nil, wss.Wrap(wss.ReasonMalformed, err, "package"), nil
	}
	defer pkg.Close()
	res, plain, err := trailer.Verify(ctx, v.policy, v.engine, pkg, key, now)
	if err == nil && res == nil {
		err = v.gateUnparsed(plain)
	}
	var we *wss.Error
	switch {
	case errors.Is(err, trailer.ErrNeedKey):
		return nil, nil, nil, errors.New("the trailing signature is encrypted: give the requester's private key with --key")
	case errors.As(err, &we):
		return nil, nil, we, nil
	case err != nil:
		return nil, nil, nil, err // the package could not be reassembled
	}
	return res, plain, nil, nil
}

// loadDecrypter reads the requester's private key (PEM) for --key.
func loadDecrypter(file string) (gocrypto.Decrypter, error) {
	if file == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--key: %w", err)
	}
	k, err := crypto.ParsePrivateKeyPEM(pem)
	if err != nil {
		return nil, fmt.Errorf("--key: %w", err)
	}
	d, ok := k.(gocrypto.Decrypter)
	if !ok {
		return nil, fmt.Errorf("--key: %T cannot decrypt", k)
	}
	return d, nil
}
