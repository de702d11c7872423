package template

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/wss"
)

// The injections of issue 13 item 8: after signing, an unsigned header
// block and an attribute on the Envelope and on the Header.
const (
	injectedNS    = ` xmlns:y="urn:y"`
	injectedRole  = ` y:role="admin"`
	injectedAdmin = `<x:Admin xmlns:x="urn:x">true</x:Admin>`
)

// inject adds the unsigned content to a signed message; admin is the
// header block to add.
func inject(msg []byte, admin string) []byte {
	s := string(msg)
	s = strings.Replace(s, `<soap:Envelope `, `<soap:Envelope`+injectedNS+injectedRole+` `, 1)
	s = strings.Replace(s, `<soap:Header>`, `<soap:Header`+injectedRole+`>`, 1)
	s = strings.Replace(s, `</soap:Header>`, admin+`</soap:Header>`, 1)
	return []byte(s)
}

// verifyBoth runs msg through the template engine and the DOM engine under
// the fixture's policy and requires the same outcome and forwarded bytes.
func verifyBoth(t *testing.T, f *fixture, msg []byte) (got *wss.Result, out []byte, err error) {
	t.Helper()
	ctx := context.Background()
	got, gout, gerr := f.policy.Verify(ctx, f.engine, msg, f.now)
	want, wout, werr := f.policy.Verify(ctx, f.dom, msg, f.now)
	require.Empty(t, Compare(got, gerr, want, werr, f.policy))
	assert.Equal(t, string(wout), string(gout), "both engines forward the same bytes")
	assert.Equal(t, reasonOf(werr), reasonOf(gerr))
	return got, gout, gerr
}

// TestUnsignedContentBothEngines: a signed message into which an unsigned
// header block and Envelope/Header attributes were injected, through the
// DOM engine and on a template hit, under each unsignedHeaders mode.
func TestUnsignedContentBothEngines(t *testing.T) {
	withComment := `<x:Admin xmlns:x="urn:x">tr<!--c-->ue</x:Admin>`
	tests := map[string]struct {
		mode  string
		allow []string
		admin string // the injected block; injectedAdmin when empty
		enc   bool   // sign then encrypt the Body
		v12   bool
		hit   bool // the second message is verified on the template path
		check func(t *testing.T, out, clean []byte, err error)
	}{
		"ok/strip":                         {mode: config.UnsignedStrip, hit: true, check: stripped},
		"ok/strip-v12":                     {mode: config.UnsignedStrip, v12: true, hit: true, check: stripped},
		"ok/strip-encrypted":               {mode: config.UnsignedStrip, enc: true, hit: true, check: stripped},
		"ok/strip-comment-goes-with-block": {mode: config.UnsignedStrip, admin: withComment, check: stripped},
		"ok/forward": {mode: config.UnsignedForward, hit: true, check: func(t *testing.T, out, _ []byte, err error) {
			require.NoError(t, err)
			assert.Equal(t, 2, strings.Count(string(out), injectedRole), "on Envelope and Header")
			assert.Contains(t, string(out), injectedAdmin)
		}},
		"ok/forward-strips-comment": {mode: config.UnsignedForward, admin: withComment, check: func(t *testing.T, out, _ []byte, err error) {
			require.NoError(t, err)
			assert.Contains(t, string(out), injectedAdmin, "the block passes, its comment does not")
			assert.NotContains(t, string(out), "<!--")
		}},
		"ok/strip-allow-listed": {mode: config.UnsignedStrip, allow: []string{"{urn:x}Admin", "{urn:y}role"}, hit: true,
			check: func(t *testing.T, out, _ []byte, err error) {
				require.NoError(t, err)
				assert.Equal(t, 2, strings.Count(string(out), injectedRole))
				assert.Contains(t, string(out), injectedAdmin)
			}},
		"ok/strip-allow-listed-header-only": {mode: config.UnsignedStrip, allow: []string{"{urn:x}Admin"}, hit: true,
			check: func(t *testing.T, out, _ []byte, err error) {
				require.NoError(t, err)
				assert.NotContains(t, string(out), injectedRole)
				assert.Contains(t, string(out), injectedAdmin)
			}},
		"fail/reject":                 {mode: config.UnsignedReject, check: rejected},
		"fail/reject-attributes-only": {mode: config.UnsignedReject, allow: []string{"{urn:x}Admin"}, check: rejected},
		"fail/reject-header-only":     {mode: config.UnsignedReject, allow: []string{"{urn:y}role"}, check: rejected},
		"ok/reject-all-allowed": {mode: config.UnsignedReject, allow: []string{"{urn:x}Admin", "{urn:y}role"}, hit: true,
			check: func(t *testing.T, out, _ []byte, err error) {
				require.NoError(t, err)
				assert.Contains(t, string(out), injectedAdmin)
			}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, func(p *config.Policy) { p.UnsignedHeaders, p.UnsignedAllow = tc.mode, tc.allow }, testOptions())
			var enc func(*signer.Options)
			if tc.enc {
				enc = f.encrypt(signer.RefIssuerSerial)
			}
			admin := tc.admin
			if admin == "" {
				admin = injectedAdmin
			}
			first := inject(f.sign(t, envelope(tc.v12, 2, "first"), f.rsa, signer.RefBST, f.now, enc), admin)
			verifyBoth(t, f, first)
			signed := f.sign(t, envelope(tc.v12, 2, "second"), f.rsa, signer.RefBST, f.now.Add(time.Second), enc)
			got, out, err := verifyBoth(t, f, inject(signed, admin))
			if tc.hit {
				require.Equal(t, metrics.LookupHit, got.Lookup, "the injected shape was learned")
			}
			// What a clean message of the same shape forwards, with the
			// namespace declaration the injection added.
			clean, cout, cerr := verifyBoth(t, f, []byte(strings.Replace(string(signed), `<soap:Envelope `, `<soap:Envelope`+injectedNS+` `, 1)))
			require.NoError(t, cerr, "%v", clean)
			tc.check(t, out, cout, err)
			if err == nil {
				assert.Contains(t, string(out), `<wsa:To `, "a signed header block is kept")
				assert.NotContains(t, string(out), "wsse:Security")
			}
		})
	}
}

func stripped(t *testing.T, out, clean []byte, err error) {
	t.Helper()
	require.NoError(t, err)
	assert.Equal(t, string(clean), string(out), "exactly the verified bytes without the injected content")
	assert.NotContains(t, string(out), "Admin")
	assert.NotContains(t, string(out), "role")
}

func rejected(t *testing.T, out, _ []byte, err error) {
	t.Helper()
	assert.Equal(t, wss.ReasonUnsigned, reasonOf(err), "%v", err)
	assert.Nil(t, out)
}

// TestUnsignedRejectOnTemplateHit: the reject decision is taken on the
// facts of a template hit too. A shape with unsigned content is never
// learned under reject (CheckFacts refuses it), so the template is added
// as if it had been.
func TestUnsignedRejectOnTemplateHit(t *testing.T) {
	f := newFixture(t, func(p *config.Policy) { p.UnsignedHeaders = config.UnsignedReject }, testOptions())
	first := inject(f.sign(t, envelope(false, 2, "first"), f.rsa, signer.RefBST, f.now, nil), injectedAdmin)
	res, err := f.dom.Process(first, f.policy, f.now)
	require.NoError(t, err)
	require.Equal(t, wss.ReasonUnsigned, reasonOf(f.policy.CheckFacts(res)))
	tpl, err := f.engine.newTemplate(first, nil, res, f.policy, f.now)
	require.NoError(t, err)
	ok, why := f.store.add(tpl)
	require.True(t, ok, why)

	msg := inject(f.sign(t, envelope(false, 2, "second"), f.rsa, signer.RefBST, f.now.Add(time.Second), nil), injectedAdmin)
	got, _, err := verifyBoth(t, f, msg)
	assert.Equal(t, metrics.LookupHit, got.Lookup)
	assert.Equal(t, wss.ReasonUnsigned, reasonOf(err), "%v", err)
}

// TestUnsignedAttributeSpans: the attribute spans a template hit reports
// are the DOM engine's, for attributes before, between and after others,
// with any white space before them.
func TestUnsignedAttributeSpans(t *testing.T) {
	f := newFixture(t, nil, testOptions())
	for k, attrs := range []string{` y:a="1"` + "\n  " + `y:b='2'`, "\t" + `y:c="&amp;"`} {
		t.Run(fmt.Sprintf("ok/%d", k), func(t *testing.T) {
			mk := func(text string, at time.Time) []byte {
				s := string(f.sign(t, envelope(false, 1, text), f.rsa, signer.RefBST, at, nil))
				s = strings.Replace(s, `<soap:Envelope `, `<soap:Envelope`+attrs+injectedNS+` `, 1)
				return []byte(strings.Replace(s, `<soap:Header>`, `<soap:Header `+attrs+`>`, 1))
			}
			verifyBoth(t, f, mk("first", f.now))
			got, out, err := verifyBoth(t, f, mk("second", f.now.Add(time.Second)))
			require.NoError(t, err)
			assert.Equal(t, metrics.LookupHit, got.Lookup)
			assert.NotContains(t, string(out), "y:")
			assert.Len(t, got.Attributes, 2*strings.Count(attrs, "="))
		})
	}
}
