package template

import (
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"
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

// TestFirstSightClaimsPerKey: one key holder can name his key in a few
// ways, not in as many as he likes: every claim an accepted message
// makes is kept (signerLanes), two generations of sightingsMax/2, so
// unbounded claims of one key would push the partners' claims out and
// send their new shapes to lane 0.
func TestFirstSightClaimsPerKey(t *testing.T) {
	f, l := laneFixture(t)
	serial := f.rsa.Cert.SerialNumber.String()
	accepted := 0
	for i := range 6 {
		msg := f.sign(t, traceEnvelope(fmt.Sprintf("Claims%d", i), 2), f.rsa, signer.RefIssuerSerial, f.now, nil)
		tag := []byte("X509SerialNumber>" + serial + "<")
		require.Equal(t, 1, bytes.Count(msg, tag))
		msg = bytes.Replace(msg, tag, []byte("X509SerialNumber>"+strings.Repeat("0", i)+serial+"<"), 1)
		if _, err := f.engine.Process(msg, f.policy, f.now); err == nil {
			accepted++
		}
		l.take()
	}
	t.Logf("%d of 6 serials with leading zeros accepted; %d claims kept", accepted, f.store.signers.size())
	assert.Equal(t, maxClaimsPerLane, f.store.signers.size(), "one key: at most maxClaimsPerLane claims")
	assert.Equal(t, map[uint64]int{certLane(f.rsa.Cert): maxClaimsPerLane}, f.store.signers.perLane)
}

// TestSignerLanesPerLaneCount: perLane counts exactly the claims held in
// both generations, through rotations, moves between lanes and re-records,
// so a lane's bound neither leaks (a lane refused for good) nor lapses.
func TestSignerLanesPerLaneCount(t *testing.T) {
	var l signerLanes
	check := func(step string) {
		t.Helper()
		want := map[uint64]int{}
		for _, m := range []map[uint64]uint64{l.cur, l.old} {
			for _, lane := range m {
				want[lane]++
			}
		}
		if len(want) == 0 {
			want = nil
		}
		got := l.perLane
		if len(got) == 0 {
			got = nil
		}
		require.Equal(t, want, got, step)
		for lane, n := range got {
			require.LessOrEqual(t, n, maxClaimsPerLane, "%s: lane %x", step, lane)
		}
	}
	for i := range uint64(3 * sightingsMax) {
		l.record(i+1, i%5000+1) // rotates twice
		if i%997 == 0 {
			check(fmt.Sprintf("record %d", i))
		}
	}
	check("after rotations")
	l.record(5, 7)
	l.record(5, 7) // again: no second count
	l.record(5, 8) // moved
	check("moves")
	assert.Equal(t, uint64(0), l.lane(1), "pushed out by newer claims")
	l = signerLanes{}
	for i := range uint64(maxClaimsPerLane + 2) {
		l.record(1<<40+i, 9)
	}
	check("a full lane")
	assert.Equal(t, uint64(9), l.lane(1<<40+maxClaimsPerLane-1))
	assert.Equal(t, uint64(0), l.lane(1<<40+maxClaimsPerLane), "past the bound: unknown")
}
