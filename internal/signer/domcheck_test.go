package signer

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/dom"
	"github.com/wssgw/wssgw/internal/reload"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// domVerifier checks messages with the repo's reference engine, the way a
// partner running wssgw (or `wssgw verify`) would check our responses:
// trust anchored in the test CA, the server key as decryption key (the
// "requester" of the response tests), replay off.
type domVerifier struct {
	policy *wss.Policy
	engine *dom.Engine
}

func newDOMVerifier(t testing.TB, p *pki) *domVerifier {
	t.Helper()
	cp := config.DefaultPolicy()
	cp.Replay = "off"
	cp.Trust.CAFiles = []string{p.caFile}
	// References other than a BST name a certificate the verifier knows.
	cp.Trust.KnownCertFiles = []string{p.rsa.CertFile, p.ec.CertFile, p.p384.CertFile, p.ed25519.CertFile}
	cp.DecryptionKeys = []config.KeyFiles{{CertFile: p.server.CertFile, KeyFile: p.server.KeyFile}}
	pol, err := wss.Compile("responses", cp, nil, reload.Options{})
	require.NoError(t, err)
	sc := xmlscan.DefaultConfig()
	sc.Limits.MaxBytes = 512 << 20
	sc.Limits.MaxTextLen = 512 << 20
	sc.Limits.MaxBase64Len = 512 << 20
	e, err := dom.New(sc)
	require.NoError(t, err)
	return &domVerifier{policy: pol, engine: e}
}

// verify runs the whole security stage; forward is the plaintext envelope
// without the Security header.
func (v *domVerifier) verify(msg []byte, now time.Time) (*wss.Result, []byte, error) {
	return v.policy.Verify(context.Background(), v.engine, msg, now)
}
