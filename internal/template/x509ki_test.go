package template

import (
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/testpki"
	"github.com/wssgw/wssgw/internal/wss"
)

var (
	bstRE    = regexp.MustCompile(`<wsse:BinarySecurityToken [^>]*>([^<]+)</wsse:BinarySecurityToken>`)
	strRefRE = regexp.MustCompile(`<wsse:Reference URI="#X509-[^"]*" ValueType="[^"]*#X509v3"></wsse:Reference>`)
)

// toX509KI turns a message signed with a BinarySecurityToken into WSS4J's
// X509_KEY_IDENTIFIER form (issue 15): the certificate moves into a
// wsse:KeyIdentifier of ValueType #X509v3 in the STR and the BST goes. The
// KeyInfo is not signed, so the signature stays valid.
func toX509KI(t testing.TB, msg []byte) []byte {
	t.Helper()
	m := bstRE.FindSubmatch(msg)
	require.NotNil(t, m)
	out := bstRE.ReplaceAll(msg, nil)
	ki := `<wsse:KeyIdentifier EncodingType="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0#Base64Binary" ValueType="` + vtX509v3 + `">` + string(m[1]) + `</wsse:KeyIdentifier>`
	require.True(t, strRefRE.Match(out))
	return strRefRE.ReplaceAll(out, []byte(ki))
}

// TestX509KeyIdentifierHits: the KeyIdentifier's certificate is constant
// in the learned template (only the values of secretSlots vary), so a
// message from the same signer hits and the trust store re-checks the
// certificate on every match; another certificate in the KeyIdentifier
// misses and the DOM engine decides, with the same verdict on both paths.
func TestX509KeyIdentifierHits(t *testing.T) {
	f := newFixture(t, nil, testOptions())
	rogue := testpki.NewCA(t, "rogue CA").IssueRSA(t, t.TempDir(), "partner-rsa")
	first := toX509KI(t, f.sign(t, envelope(false, 3, "first"), f.rsa, signer.RefBST, f.now, nil))
	res, err := f.engine.Process(first, f.policy, f.now)
	require.NoError(t, err)
	require.NotEqual(t, metrics.LookupHit, res.Lookup)
	require.Equal(t, wss.KeyRefX509KeyIdentifier, res.Signatures[0].KeyReference)

	swapped := string(f.sign(t, envelope(false, 3, "swapped"), f.rsa, signer.RefBST, f.now, nil))
	ecCert := bstRE.FindStringSubmatch(string(f.sign(t, envelope(false, 3, "x"), f.ec, signer.RefBST, f.now, nil)))[1]
	swapped = bstRE.ReplaceAllString(swapped, `<wsse:BinarySecurityToken EncodingType="x" ValueType="y">`+ecCert+`</wsse:BinarySecurityToken>`)
	tests := []struct {
		name string
		msg  []byte
		hit  bool
		fail wss.Reason
	}{
		{"ok/same signer", toX509KI(t, f.sign(t, envelope(false, 3, "second &amp; more"), f.rsa, signer.RefBST, f.now.Add(time.Second), nil)), true, 0},
		{"fail/untrusted certificate that signed", toX509KI(t, f.sign(t, envelope(false, 3, "rogue"), rogue, signer.RefBST, f.now, nil)), false, wss.ReasonUntrusted},
		{"fail/trusted certificate, not the signer's", toX509KI(t, []byte(swapped)), false, wss.ReasonSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, gerr := f.engine.Process(tt.msg, f.policy, f.now)
			want, werr := f.dom.Process(tt.msg, f.policy, f.now)
			assert.Empty(t, Compare(got, gerr, want, werr, f.policy))
			if tt.fail != 0 {
				require.Error(t, gerr)
				assert.Equal(t, tt.fail, reasonOf(gerr), "%v", gerr)
				return
			}
			require.NoError(t, gerr)
			assert.Equal(t, tt.hit, got.Lookup == metrics.LookupHit)
		})
	}
}
