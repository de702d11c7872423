package template

import (
	"bytes"
	"encoding/base64"
	"fmt"
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
	for _, tc := range []struct {
		name   string
		attack func(t *testing.T, f *fixture, i int) []byte
	}{
		{"fail/foreign-token-and-thumbprint-reference", func(t *testing.T, f *fixture, i int) []byte {
			msg := f.sign(t, traceEnvelope(fmt.Sprintf("Attack%d", i), 2), f.rsa, signer.RefThumbprint, f.now, nil)
			return intoSecurity(t, msg, foreignToken(f.ec.Cert.Raw, fmt.Sprintf("P-%d", i)))
		}},
		{"fail/foreign-token-first-own-token-referenced-after-four", func(t *testing.T, f *fixture, i int) []byte {
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
			partner := f.sign(t, traceEnvelope("Partner", 2), f.ec, signer.RefBST, f.now, nil)
			_, err := f.engine.Process(partner, f.policy, f.now)
			require.NoError(t, err)
			l.take()
			attacked := false
			for i := range 2 {
				msg := tc.attack(t, f, i)
				require.NotZero(t, claimOf(string(msg)))
				if _, err := f.engine.Process(msg, f.policy, f.now); err == nil {
					attacked = true
				}
				l.take()
			}
			if !attacked {
				t.Skip("the DOM engine refuses the attack's messages: nothing to poison")
			}
			fresh := f.sign(t, traceEnvelope("PartnerNew", 2), f.ec, signer.RefBST, f.now, nil)
			_, err = f.engine.Process(fresh, f.policy, f.now)
			require.NoError(t, err)
			got := l.take()
			require.NotEmpty(t, got)
			assert.NotEqual(t, fmt.Sprintf("enter %x", certLane(f.rsa.Cert)), got[0], "the partner's claim was moved to the attacker's lane")
			assert.Equal(t, fmt.Sprintf("enter %x", certLane(f.ec.Cert)), got[0], "the partner's own lane")
		})
	}
}
