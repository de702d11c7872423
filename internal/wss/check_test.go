package wss

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/reload"
	"github.com/wssgw/wssgw/internal/trust"
)

type fakeStore struct {
	seen map[string]bool
	err  error
}

// Seen is an in-test replay store; the real ones are in internal/replay.
func (s *fakeStore) Seen(_ context.Context, key []byte, _ time.Time) (bool, error) {
	if s.err != nil {
		return true, s.err
	}
	k := string(key)
	was := s.seen[k]
	s.seen[k] = true
	return was, nil
}

var wsaTo = xml.Name{Space: "http://www.w3.org/2005/08/addressing", Local: "To"}

// signed is a Result with a trusted signature over Body (at 100),
// Timestamp (at 50) and a wsa:To header (at 30).
func signed() *Result {
	return &Result{
		Body: 100, Token: -1,
		Timestamp: &Timestamp{Start: 50, Created: time.Unix(1000, 0)},
		Headers:   []Part{{Name: wsaTo, Start: 30}},
		Signatures: []Signature{{
			Signer:  &trust.Identity{Subject: "CN=partner", SHA256: "ab"},
			Covered: []int{100, 50, 30},
		}},
	}
}

func TestCheck(t *testing.T) {
	now := time.Unix(1001, 0)
	tests := map[string]struct {
		policy func(*config.Policy)
		result func(*Result)
		want   Reason
	}{
		"ok/signed":             {},
		"ok/header-signed":      {policy: func(p *config.Policy) { p.SignedParts = []string{"Body", "{" + wsaTo.Space + "}To"} }},
		"ok/header-absent":      {policy: func(p *config.Policy) { p.SignedParts = []string{"{urn:x}Absent"} }},
		"fail/no-signature":     {result: func(r *Result) { r.Signatures = nil }, want: ReasonMissing},
		"fail/no-timestamp":     {result: func(r *Result) { r.Timestamp = nil }, want: ReasonMissing},
		"fail/hmac-only":        {result: func(r *Result) { r.Signatures[0].Signer = nil }, want: ReasonPolicy},
		"fail/body-not-covered": {result: func(r *Result) { r.Signatures[0].Covered = []int{50, 30} }, want: ReasonPolicy},
		// The trusted signature covers the Timestamp only; an HMAC
		// signature (no signer: its key came from an EncryptedKey) covers
		// the Body. The Body is not signed by anyone the policy trusts.
		"fail/body-covered-by-hmac-only": {result: func(r *Result) {
			r.Signatures[0].Covered = []int{50, 30}
			r.Signatures = append(r.Signatures, Signature{KeyReference: KeyRefEncryptedKey, Covered: []int{100}})
		}, want: ReasonPolicy},
		"ok/hmac-and-trusted-signature": {result: func(r *Result) {
			r.Signatures = append([]Signature{{KeyReference: KeyRefEncryptedKey, Covered: []int{100, 50}, SignatureValue: []byte("mac")}}, r.Signatures...)
		}},
		"fail/wrapped-body":       {result: func(r *Result) { r.Body = 200 }, want: ReasonPolicy},
		"fail/timestamp-unsigned": {result: func(r *Result) { r.Signatures[0].Covered = []int{100} }, want: ReasonPolicy},
		"fail/header-unsigned": {
			policy: func(p *config.Policy) { p.SignedParts = []string{"Body", "{" + wsaTo.Space + "}To"} },
			result: func(r *Result) { r.Headers = append(r.Headers, Part{Name: wsaTo, Start: 70}) },
			want:   ReasonPolicy,
		},
		"fail/not-encrypted": {
			policy: func(p *config.Policy) {
				p.Require = append(p.Require, config.RequireEncryption)
			},
			want: ReasonMissing,
		},
		"fail/body-not-encrypted": {
			policy: func(p *config.Policy) {
				p.Require = append(p.Require, config.RequireEncryption)
				p.EncryptedParts = []string{"Body"}
			},
			result: func(r *Result) { r.Decrypted = []Decryption{{Start: 30, Header: true}} },
			want:   ReasonPolicy,
		},
		"fail/no-username": {
			policy: func(p *config.Policy) { p.Require = []string{config.RequireUsernameToken} },
			want:   ReasonMissing,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cp := config.DefaultPolicy()
			if tc.policy != nil {
				tc.policy(&cp)
			}
			p, err := Compile("p", cp, &fakeStore{seen: map[string]bool{}}, reload.Options{})
			require.NoError(t, err)
			r := signed()
			if tc.result != nil {
				tc.result(r)
			}
			err = p.Check(context.Background(), r, now)
			if tc.want == 0 {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, tc.want, reasonOf(err), "%v", err)
		})
	}
}

func TestCheckReplay(t *testing.T) {
	now := time.Unix(1001, 0)
	store := &fakeStore{seen: map[string]bool{}}
	p, err := Compile("p", config.DefaultPolicy(), store, reload.Options{})
	require.NoError(t, err)
	require.NoError(t, p.Check(context.Background(), signed(), now))
	err = p.Check(context.Background(), signed(), now)
	assert.Equal(t, ReasonReplay, reasonOf(err), "the same SignedInfo and signer again")

	other := signed()
	other.Signatures[0].SignedInfoDigest[0] = 1
	require.NoError(t, p.Check(context.Background(), other, now), "another message")

	store.err = errors.New("connection refused")
	fresh := signed()
	fresh.Signatures[0].SignedInfoDigest[0] = 2
	err = p.Check(context.Background(), fresh, now)
	assert.Equal(t, ReasonReplayStore, reasonOf(err), "an unavailable store fails closed")

	off := config.DefaultPolicy()
	off.Replay = "off"
	p, err = Compile("p", off, store, reload.Options{})
	require.NoError(t, err)
	require.NoError(t, p.Check(context.Background(), signed(), now), "replay off does not consult the store")
}

// TestReplayKeyIgnoresToken: the replay key is what was signed and the
// signature value. The same signature presented with another certificate
// of the same key (a swapped BinarySecurityToken: another signer identity,
// another key reference kind) is a replay.
func TestReplayKeyIgnoresToken(t *testing.T) {
	now := time.Unix(1001, 0)
	store := &fakeStore{seen: map[string]bool{}}
	p, err := Compile("p", config.DefaultPolicy(), store, reload.Options{})
	require.NoError(t, err)
	first := signed()
	first.Signatures[0].SignatureValue = []byte("value")
	require.NoError(t, p.Check(context.Background(), first, now))

	swapped := signed()
	swapped.Signatures[0].SignatureValue = []byte("value")
	swapped.Signatures[0].Signer = &trust.Identity{Subject: "CN=partner renewed", SHA256: "cd"}
	swapped.Signatures[0].KeyReference = KeyRefIssuerSerial
	err = p.Check(context.Background(), swapped, now)
	assert.Equal(t, ReasonReplay, reasonOf(err), "a certificate swap is a replay: %v", err)

	other := signed()
	other.Signatures[0].SignatureValue = []byte("another value")
	require.NoError(t, p.Check(context.Background(), other, now), "the same SignedInfo signed by another key is another message")
}

// TestReplayExpiry: entries live until the message could no longer pass
// the Timestamp check, and never longer than MaxAge+2×FutureSkew from now,
// whatever Expires says.
func TestReplayExpiry(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	cp := config.DefaultPolicy()
	maxAge, skew := cp.Timestamp.MaxAge, cp.Timestamp.FutureSkew
	far := time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := map[string]struct {
		ts   *Timestamp
		want time.Time
	}{
		"ok/no-timestamp":                {nil, now.Add(maxAge + skew)},
		"ok/created-now":                 {&Timestamp{Created: now}, now.Add(maxAge + skew)},
		"ok/created-in-skew":             {&Timestamp{Created: now.Add(skew)}, now.Add(maxAge + 2*skew)},
		"ok/expires-soon":                {&Timestamp{Created: now, Expires: now.Add(time.Minute)}, now.Add(maxAge + skew)},
		"ok/expires-later":               {&Timestamp{Created: now, Expires: now.Add(maxAge + skew)}, now.Add(maxAge + 2*skew)},
		"ok/expires-2300-clamped":        {&Timestamp{Created: now, Expires: far}, now.Add(maxAge + 2*skew)},
		"ok/expires-9999-clamped":        {&Timestamp{Created: now.Add(skew), Expires: time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)}, now.Add(maxAge + 2*skew)},
		"ok/old-created-one-more-second": {&Timestamp{Created: now.Add(-maxAge - skew)}, now.Add(time.Second)},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p, err := Compile("p", cp, nil, reload.Options{})
			require.NoError(t, err)
			assert.Equal(t, tc.want, p.replayExpiry(&Result{Timestamp: tc.ts}, now))
		})
	}
	t.Run("ok/zero-window", func(t *testing.T) {
		z := cp
		z.Timestamp.MaxAge, z.Timestamp.FutureSkew = 0, 0
		p, err := Compile("p", z, nil, reload.Options{})
		require.NoError(t, err)
		assert.Equal(t, now.Add(time.Second), p.replayExpiry(&Result{Timestamp: &Timestamp{Created: now, Expires: far}}, now))
	})
	t.Run("ok/huge-durations-saturate", func(t *testing.T) {
		h := cp
		h.Timestamp.MaxAge, h.Timestamp.FutureSkew = math.MaxInt64-1, math.MaxInt64-1
		p, err := Compile("p", h, nil, reload.Options{})
		require.NoError(t, err)
		assert.True(t, p.replayExpiry(&Result{}, now).After(now), "no wrap-around to the past")
	})
}

// TestSignatureReplayKeyECDSA: (r, s) and (r, N−s) both verify, and anyone
// can compute the second from the first; they are one replay key.
func TestSignatureReplayKeyECDSA(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	digest := sha256.Sum256([]byte("signed info"))
	r, s, err := ecdsa.Sign(rand.Reader, key, digest[:])
	require.NoError(t, err)
	n := key.Params().N
	flipped := new(big.Int).Sub(n, s)
	require.True(t, ecdsa.Verify(&key.PublicKey, digest[:], r, flipped), "the flipped value verifies")
	raw := func(s *big.Int) []byte {
		return append(r.FillBytes(make([]byte, 32)), s.FillBytes(make([]byte, 32))...)
	}
	id := &trust.Identity{Certificate: &x509.Certificate{PublicKey: &key.PublicKey}}
	a := Signature{Signer: id, SignedInfoDigest: digest, SignatureValue: raw(s)}
	b := Signature{Signer: id, SignedInfoDigest: digest, SignatureValue: raw(flipped)}
	assert.Equal(t, signatureReplayKey(&a), signatureReplayKey(&b))
	c := Signature{Signer: id, SignedInfoDigest: digest, SignatureValue: raw(new(big.Int).Sub(s, big.NewInt(1)))}
	assert.NotEqual(t, signatureReplayKey(&a), signatureReplayKey(&c))
}

func TestCredentials(t *testing.T) {
	f := filepath.Join(t.TempDir(), "users")
	require.NoError(t, os.WriteFile(f, []byte("# demo\nalice:pw1\nbob:p:w\n"), 0o600))
	c, err := LoadCredentials(f)
	require.NoError(t, err)
	assert.True(t, c.CheckText("alice", []byte("pw1")))
	assert.True(t, c.CheckText("bob", []byte("p:w")), "a password may hold colons")
	assert.False(t, c.CheckText("alice", []byte("pw2")))
	assert.False(t, c.CheckText("carol", []byte("")))

	nonce, created := []byte("0123456789abcdef"), []byte("2026-11-21T10:00:00Z")
	h := sha1.Sum(append(append(append([]byte{}, nonce...), created...), "pw1"...))
	digest := base64.StdEncoding.EncodeToString(h[:])
	assert.True(t, c.CheckDigest("alice", nonce, created, digest))
	assert.False(t, c.CheckDigest("alice", nonce, []byte("2026-11-21T10:00:01Z"), digest))
	assert.False(t, c.CheckDigest("bob", nonce, created, digest))
	assert.False(t, c.CheckDigest("alice", nonce, created, "!!"))

	require.NoError(t, os.WriteFile(f, []byte("alice:a\nalice:b\n"), 0o600))
	_, err = LoadCredentials(f)
	assert.ErrorContains(t, err, "twice")
}

func TestReasons(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Reasons() {
		assert.NotEqual(t, "unknown", r.String())
		assert.False(t, seen[r.String()], "labels are unique")
		seen[r.String()] = true
	}
	assert.Equal(t, "InvalidSecurity", ReasonMalformed.FaultCode())
	assert.Equal(t, "FailedCheck", ReasonDigest.FaultCode())
}

func TestAllows(t *testing.T) {
	p, err := Compile("p", config.DefaultPolicy(), nil, reload.Options{})
	require.NoError(t, err)
	assert.True(t, p.Allows(UseSignature, crypto.AlgRSASHA256))
	assert.True(t, p.Allows(UseC14N, "http://www.w3.org/2001/10/xml-exc-c14n#"))
	assert.False(t, p.Allows(UseSignature, crypto.AlgDigestSHA256), "a digest URI is not a signature method")
	assert.False(t, p.Allows(UseData, crypto.AlgKWAES256), "a key wrap is not a data cipher")
	assert.False(t, p.Allows(UseSignature, crypto.AlgRSASHA1), "SHA-1 only by legacy opt-in")
	assert.False(t, p.Allows(UseC14N, "http://www.w3.org/TR/2001/REC-xml-c14n-20010315"))

	legacy := config.DefaultPolicy()
	legacy.Algorithms.Legacy = config.Legacy{SHA1: true, CBC: true, InclusiveC14N: true}
	p, err = Compile("p", legacy, nil, reload.Options{})
	require.NoError(t, err)
	assert.True(t, p.Allows(UseSignature, crypto.AlgRSASHA1))
	assert.True(t, p.Allows(UseData, crypto.AlgAES128CBC))
	assert.False(t, p.Allows(UseKeyTransport, crypto.AlgRSA15), "each legacy family is its own opt-in")
	assert.True(t, p.Allows(UseC14N, "http://www.w3.org/TR/2001/REC-xml-c14n-20010315"))

	bad := config.DefaultPolicy()
	bad.Algorithms.Allow = []string{"urn:not-an-algorithm"}
	_, err = Compile("p", bad, nil, reload.Options{})
	assert.Error(t, err)
}
