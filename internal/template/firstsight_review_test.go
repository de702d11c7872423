package template

import (
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/signer"
)

// TestFirstSightClaimPoisoning: a sender holding one trusted key signs
// with it, and writes into his message bytes that claim another partner
// (that partner's certificate as a token, copied from any of its
// messages; it is public). His message verifies with his own key and is
// accepted; it must not make the partner's claim his lane, or his flood
// of fresh shapes would shed the partner's new shapes (issue 14: "an
// attacker holding one trusted key is held to his own lane").
func TestFirstSightClaimPoisoning(t *testing.T) {
	const wsseNS = `http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd`
	const wsuNS = `http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd`
	// foreignToken is a token of the partner's certificate the attacker's
	// signature does not use, with its own namespace declarations.
	foreignToken := func(der []byte, id string) string {
		return `<wsse:BinarySecurityToken xmlns:wsse="` + wsseNS + `" xmlns:wsu="` + wsuNS + `" wsu:Id="` + id + `"` +
			` EncodingType="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0#Base64Binary"` +
			` ValueType="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-x509-token-profile-1.0#X509v3">` +
			base64.StdEncoding.EncodeToString(der) + `</wsse:BinarySecurityToken>`
	}
	// intoSecurity puts extra as the Security header's first children.
	intoSecurity := func(t *testing.T, msg []byte, extra string) []byte {
		t.Helper()
		i := bytes.Index(msg, []byte(":Security "))
		require.Positive(t, i)
		j := bytes.IndexByte(msg[i:], '>')
		require.Positive(t, j)
		at := i + j + 1
		return append(append(bytes.Clone(msg[:at:at]), extra...), msg[at:]...)
	}
	// beforeSecurity puts extra right before the Security header.
	beforeSecurity := func(t *testing.T, msg []byte, extra string) []byte {
		t.Helper()
		i := bytes.Index(msg, []byte(":Security "))
		require.Positive(t, i)
		at := bytes.LastIndexByte(msg[:i], '<')
		return append(append(bytes.Clone(msg[:at:at]), extra...), msg[at:]...)
	}
	// thumbprintKeyInfo is a KeyInfo naming the partner's key by its
	// thumbprint, as the partner's own messages do; public too.
	thumbprintKeyInfo := func(f *fixture, prefix string) string {
		sum := sha1.Sum(f.ec.Cert.Raw)
		return `<` + prefix + `:KeyInfo><wsse:SecurityTokenReference xmlns:wsse="` + wsseNS + `"><wsse:KeyIdentifier` +
			` ValueType="http://docs.oasis-open.org/wss/oasis-wss-soap-message-security-1.1#ThumbprintSHA1">` +
			base64.StdEncoding.EncodeToString(sum[:]) + `</wsse:KeyIdentifier></wsse:SecurityTokenReference></` + prefix + `:KeyInfo>`
	}
	for _, tc := range []struct {
		name    string
		partner string // the partner's key reference
		attack  func(t *testing.T, f *fixture, i int) []byte
	}{
		{"fail/security-header-for-another-actor-first", signer.RefThumbprint, func(t *testing.T, f *fixture, i int) []byte {
			msg := f.sign(t, traceEnvelope(fmt.Sprintf("Attack%d", i), 2), f.rsa, signer.RefThumbprint, f.now, nil)
			return beforeSecurity(t, msg, `<wsse:Security xmlns:wsse="`+wsseNS+`" soap:actor="urn:example:other">`+
				`<ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#">`+thumbprintKeyInfo(f, "ds")+`</ds:Signature></wsse:Security>`)
		}},
		{"fail/foreign-signature-element-first", signer.RefThumbprint, func(t *testing.T, f *fixture, i int) []byte {
			msg := f.sign(t, traceEnvelope(fmt.Sprintf("Attack%d", i), 2), f.rsa, signer.RefThumbprint, f.now, nil)
			return intoSecurity(t, msg, `<x:Signature xmlns:x="urn:example:x">`+thumbprintKeyInfo(f, "x")+`</x:Signature>`)
		}},
		{"fail/foreign-token-with-the-referenced-id-first", signer.RefBST, func(t *testing.T, f *fixture, i int) []byte {
			msg := f.sign(t, traceEnvelope(fmt.Sprintf("Attack%d", i), 2), f.rsa, signer.RefBST, f.now, nil)
			m := regexp.MustCompile(`SecurityTokenReference[^>]*>\s*<[^>]*URI="#([^"]+)"`).FindSubmatch(msg)
			require.NotNil(t, m)
			return intoSecurity(t, msg, foreignToken(f.ec.Cert.Raw, string(m[1])))
		}},
		{"fail/foreign-token-and-thumbprint-reference", signer.RefBST, func(t *testing.T, f *fixture, i int) []byte {
			msg := f.sign(t, traceEnvelope(fmt.Sprintf("Attack%d", i), 2), f.rsa, signer.RefThumbprint, f.now, nil)
			return intoSecurity(t, msg, foreignToken(f.ec.Cert.Raw, fmt.Sprintf("P-%d", i)))
		}},
		{"fail/foreign-token-first-own-token-referenced-after-four", signer.RefBST, func(t *testing.T, f *fixture, i int) []byte {
			// The walk remembers four tokens; the signature's is the fifth.
			msg := f.sign(t, traceEnvelope(fmt.Sprintf("Attack%d", i), 2), f.rsa, signer.RefBST, f.now, nil)
			var extra string
			for k := range 4 {
				extra += foreignToken(f.ec.Cert.Raw, fmt.Sprintf("P-%d-%d", i, k))
			}
			return intoSecurity(t, msg, extra)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, l := laneFixture(t)
			partner := f.sign(t, traceEnvelope("Partner", 2), f.ec, tc.partner, f.now, nil)
			_, err := f.engine.Process(partner, f.policy, f.now)
			require.NoError(t, err)
			l.take()
			for i := range 2 {
				msg := tc.attack(t, f, i)
				require.NotZero(t, claimOf(string(msg)))
				_, err := f.engine.Process(msg, f.policy, f.now)
				t.Logf("attack %d: %v", i, err) // accepted or not, the partner's lane must stay
				l.take()
			}
			fresh := f.sign(t, traceEnvelope("PartnerNew", 2), f.ec, tc.partner, f.now, nil)
			_, err = f.engine.Process(fresh, f.policy, f.now)
			require.NoError(t, err)
			got := l.take()
			require.NotEmpty(t, got)
			assert.NotEqual(t, fmt.Sprintf("enter %x", certLane(f.rsa.Cert)), got[0], "the partner's claim was moved to the attacker's lane")
			assert.Equal(t, fmt.Sprintf("enter %x", certLane(f.ec.Cert)), got[0], "the partner's own lane")
		})
	}
}

// panicWorkers is a DOM worker limit whose Acquire panics: the DOM run
// panics after its message entered a lane.
type panicWorkers struct{ *laneLog }

func (panicWorkers) Acquire(int64) (func(), error)    { panic("dom engine") }
func (panicWorkers) TryAcquire(int64) (func(), error) { panic("dom engine") }

// TestFirstSightLaneLeftOnPanic: a DOM run that panics (recovered by the
// HTTP server) still leaves its lane, or the lane would refuse its
// signer's first sights for good.
func TestFirstSightLaneLeftOnPanic(t *testing.T) {
	f, l := laneFixture(t)
	f.dom.LimitWorkers(panicWorkers{l})
	msg := f.sign(t, envelope(false, 2, "a"), f.rsa, signer.RefBST, f.now, nil)
	require.PanicsWithValue(t, "dom engine", func() { _, _ = f.engine.Process(msg, f.policy, f.now) })
	assert.Equal(t, []string{"enter 0", "leave"}, l.take())
}
