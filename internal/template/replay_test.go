package template

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/base64"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/reload"
	"github.com/wssgw/wssgw/internal/replay"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// replayFixture is a fixture whose policy records messages in a memory
// replay store, with the template engine in front of the DOM engine.
func replayFixture(t *testing.T) *fixture {
	t.Helper()
	var cp *config.Policy
	f := newFixture(t, func(p *config.Policy) { cp = p }, testOptions())
	c := *cp
	c.Replay = config.DefaultPolicy().Replay
	var err error
	f.policy, err = wss.Compile("test", c, replay.NewMemory(replay.MemoryOptions{}), reload.Options{})
	require.NoError(t, err)
	f.store = NewStore(f.policy, testOptions(), nil)
	f.engine, err = New(f.dom, xmlscan.DefaultConfig(), f.store, nil)
	require.NoError(t, err)
	return f
}

// swapToken replaces the BinarySecurityToken's certificate with another
// one (the token is not signed).
func swapToken(t *testing.T, msg []byte, from, to []byte) []byte {
	t.Helper()
	old := []byte(base64.StdEncoding.EncodeToString(from))
	require.True(t, bytes.Contains(msg, old), "the message carries the certificate in a BinarySecurityToken")
	return bytes.Replace(msg, old, []byte(base64.StdEncoding.EncodeToString(to)), 1)
}

// TestReplayCertificateSwap: an accepted message resent with only its
// BinarySecurityToken replaced by another certificate of the same CA for
// the same key (a same-key renewal) is a replay, on the DOM engine and on
// a template hit. The replay key once included the signer's certificate.
func TestReplayCertificateSwap(t *testing.T) {
	f := replayFixture(t)
	renewed := f.ca.Renew(t, t.TempDir(), f.rsa)
	require.False(t, renewed.Cert.Equal(f.rsa.Cert))
	ctx := context.Background()
	verify := func(e wss.Engine, msg []byte) (*wss.Result, error) {
		res, _, err := f.policy.Verify(ctx, e, msg, f.now)
		if err != nil {
			return res, err
		}
		return res, nil
	}

	t.Run("fail/dom-engine", func(t *testing.T) {
		msg := f.sign(t, envelope(false, 3, "dom"), f.rsa, signer.RefBST, f.now, nil)
		_, err := verify(f.dom, msg)
		require.NoError(t, err)
		swapped := swapToken(t, msg, f.rsa.Cert.Raw, renewed.Cert.Raw)
		_, err = verify(f.dom, swapped)
		assert.Equal(t, wss.ReasonReplay, reasonOf(err), "%v", err)

		// The renewed certificate is trusted: a fresh message carrying it
		// passes, so the rejection above is the replay store's.
		fresh := f.sign(t, envelope(false, 3, "dom"), renewed, signer.RefBST, f.now.Add(time.Second), nil)
		_, err = verify(f.dom, fresh)
		require.NoError(t, err)
	})

	t.Run("fail/template-hit", func(t *testing.T) {
		learn := f.sign(t, envelope(false, 3, "learn"), f.rsa, signer.RefBST, f.now, nil)
		res, err := verify(f.engine, learn)
		require.NoError(t, err)
		require.NotEqual(t, metrics.LookupHit, res.Lookup)

		msg := f.sign(t, envelope(false, 3, "hit"), f.rsa, signer.RefBST, f.now.Add(time.Second), nil)
		res, err = verify(f.engine, msg)
		require.NoError(t, err)
		require.Equal(t, metrics.LookupHit, res.Lookup)

		swapped := swapToken(t, msg, f.rsa.Cert.Raw, renewed.Cert.Raw)
		res, err = verify(f.engine, swapped)
		require.NotNil(t, res)
		assert.Equal(t, metrics.LookupHit, res.Lookup, "the swapped token is a slot: still a template hit")
		assert.Equal(t, wss.ReasonReplay, reasonOf(err), "%v", err)
	})
}

// TestSignatureValueFact: both engines report the same SignatureValue,
// and the differential comparison (Compare's facts) includes it.
func TestSignatureValueFact(t *testing.T) {
	f := newFixture(t, nil, testOptions())
	msg := f.sign(t, envelope(false, 3, "fact"), f.rsa, signer.RefBST, f.now, nil)
	_, err := f.engine.Process(msg, f.policy, f.now)
	require.NoError(t, err)
	got, gerr := f.engine.Process(msg, f.policy, f.now)
	require.NoError(t, gerr)
	require.Equal(t, metrics.LookupHit, got.Lookup)
	want, werr := f.dom.Process(msg, f.policy, f.now)
	require.NoError(t, werr)
	require.NotEmpty(t, want.Signatures[0].SignatureValue)
	assert.Equal(t, want.Signatures[0].SignatureValue, got.Signatures[0].SignatureValue)
	assert.Equal(t, facts(want), facts(got))

	got.Signatures[0].SignatureValue = append([]byte{^got.Signatures[0].SignatureValue[0]}, got.Signatures[0].SignatureValue[1:]...)
	assert.NotEqual(t, facts(want), facts(got), "the value is a compared fact")
}

// TestReplayFarExpires: a valid message whose Timestamp Expires is in
// 2300 (past int64 Unix nanoseconds) is accepted once, then refused as a
// replay, on both engines with the memory store. The store's expiry
// arithmetic once wrapped around to 1677 and refused it at first sight.
func TestReplayFarExpires(t *testing.T) {
	f := replayFixture(t)
	far := time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)
	ctx := context.Background()
	for k, e := range map[string]wss.Engine{"dom": f.dom, "template": f.engine} {
		t.Run("ok/"+k, func(t *testing.T) {
			for i := range 2 {
				// On the template engine, the second message is a hit.
				at := f.now.Add(time.Duration(i) * time.Second)
				msg := f.sign(t, envelope(false, 2, k), f.rsa, signer.RefBST, at, func(o *signer.Options) { o.TTL = far.Sub(at) })
				require.Contains(t, string(msg), "<wsu:Expires>2300-01-01T00:00:00")
				_, _, err := f.policy.Verify(ctx, e, msg, f.now)
				require.NoError(t, err, "first sight")
				_, _, err = f.policy.Verify(ctx, e, msg, f.now)
				assert.Equal(t, wss.ReasonReplay, reasonOf(err), "%v", err)
			}
		})
	}
}

var (
	edKeyInfoRE = regexp.MustCompile(`(<xenc:EncryptedData[^>]*>.*?<ds:KeyInfo[^>]*>)(.*?)(</ds:KeyInfo>)`)
	ekValueRE   = regexp.MustCompile(`<xenc:EncryptedKey .*?<xenc:CipherValue>([^<]+)<`)
)

// withKeySHA1 replaces the Body EncryptedData's KeyInfo with an
// EncryptedKeySHA1 KeyIdentifier: of the message's EncryptedKey, or of
// nothing when wrong.
func withKeySHA1(t *testing.T, msg []byte, wrong bool) []byte {
	t.Helper()
	s := string(msg)
	raw, err := base64.StdEncoding.DecodeString(ekValueRE.FindStringSubmatch(s)[1])
	require.NoError(t, err)
	sum := sha1.Sum(raw)
	if wrong {
		sum[0] ^= 1
	}
	ki := `<wsse:SecurityTokenReference xmlns:wsse="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd"><wsse:KeyIdentifier ValueType="http://docs.oasis-open.org/wss/oasis-wss-soap-message-security-1.1#EncryptedKeySHA1" EncodingType="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0#Base64Binary">` +
		base64.StdEncoding.EncodeToString(sum[:]) + `</wsse:KeyIdentifier></wsse:SecurityTokenReference>`
	m := edKeyInfoRE.FindStringSubmatchIndex(s)
	require.NotNil(t, m)
	return []byte(s[:m[4]] + ki + s[m[5]:])
}

// TestEncryptedDataKeyNameHit: the DOM engine refuses an EncryptedData
// whose KeyInfo names another key than the EncryptedKey that lists it; a
// template hit must not accept it either. A "#id" there is bound to the
// one EncryptedKey's id. An EncryptedKeySHA1 would be learned as a
// constant: the next message's EncryptedKey, another key, would still
// match it. So that shape is not learned.
func TestEncryptedDataKeyNameHit(t *testing.T) {
	f := newFixture(t, nil, testOptions())
	enc := f.encrypt(signer.RefIssuerSerial)
	first := withKeySHA1(t, f.sign(t, envelope(false, 3, "sha1"), f.rsa, signer.RefBST, f.now, enc), false)
	_, err := f.engine.Process(first, f.policy, f.now)
	require.NoError(t, err, "the right EncryptedKeySHA1 passes")

	// The same shape and the first message's KeyIdentifier, with a fresh
	// EncryptedKey.
	sha1Of := regexp.MustCompile(`EncryptedKeySHA1"[^>]*>([^<]+)<`)
	next := string(withKeySHA1(t, f.sign(t, envelope(false, 3, "sha1"), f.rsa, signer.RefBST, f.now.Add(time.Second), enc), false))
	m := sha1Of.FindStringSubmatchIndex(next)
	msg := []byte(next[:m[2]] + sha1Of.FindStringSubmatch(string(first))[1] + next[m[3]:])
	_, derr := f.dom.Process(msg, f.policy, f.now)
	assert.Equal(t, wss.ReasonToken, reasonOf(derr), "%v", derr)
	got, gerr := f.engine.Process(msg, f.policy, f.now)
	require.Error(t, gerr, "lookup %s", got.Lookup)
	assert.Equal(t, wss.ReasonToken, reasonOf(gerr), "%v", gerr)
}
