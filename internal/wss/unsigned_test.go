package wss

import (
	"context"
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/reload"
	"github.com/wssgw/wssgw/internal/trust"
)

// unsignedDoc has our Security header (S), a signed header block (t:To),
// an injected unsigned one (x:Admin, with a comment), an attribute on the
// Envelope and one on the Header, and a comment in the Body.
const unsignedDoc = `<E xmlns:a="urn:a" a:x="1"><H xmlns:y="urn:y"` + "\n\t" + `y:role="admin"><S>x</S><t:To xmlns:t="urn:t">u</t:To>` +
	`<x:Admin xmlns:x="urn:x">true<!--c--></x:Admin></H><B>b<!--d-->c</B></E>`

var (
	nameAdmin = xml.Name{Space: "urn:x", Local: "Admin"}
	nameTo    = xml.Name{Space: "urn:t", Local: "To"}
	nameX     = xml.Name{Space: "urn:a", Local: "x"}
	nameRole  = xml.Name{Space: "urn:y", Local: "role"}
)

// span is the [start, end) of the first occurrence of s in unsignedDoc.
func span(t *testing.T, s string) [2]int {
	t.Helper()
	i := strings.Index(unsignedDoc, s)
	require.GreaterOrEqual(t, i, 0, s)
	return [2]int{i, i + len(s)}
}

// unsignedResult is the facts an engine reports for unsignedDoc, with a
// trusted signature over t:To and the Body.
func unsignedResult(t *testing.T) *Result {
	to, admin := span(t, `<t:To`), span(t, `<x:Admin`)
	to[1] = span(t, `</t:To>`)[1]
	admin[1] = span(t, `</x:Admin>`)[1]
	body := span(t, `<B>`)[0]
	return &Result{
		Document: []byte(unsignedDoc), Body: body, Token: -1,
		Security:   [2]int{span(t, `<S>`)[0], span(t, `</S>`)[1]},
		Headers:    []Part{{Name: nameTo, Start: to[0], End: to[1]}, {Name: nameAdmin, Start: admin[0], End: admin[1]}},
		Attributes: []Attribute{{Name: nameX, Span: span(t, ` a:x="1"`)}, {Name: nameRole, Span: span(t, "\n\ty:role=\"admin\"")}},
		Comments:   [][2]int{span(t, `<!--c-->`), span(t, `<!--d-->`)},
		Signatures: []Signature{{Signer: &trust.Identity{Subject: "CN=partner"}, Covered: []int{to[0], body}}},
	}
}

func unsignedPolicy(t *testing.T, mutate func(*config.Policy)) *Policy {
	t.Helper()
	cp := config.DefaultPolicy()
	cp.Require, cp.SignedParts = []string{config.RequireSignature}, []string{config.PartBody}
	if mutate != nil {
		mutate(&cp)
	}
	p, err := Compile("p", cp, &fakeStore{seen: map[string]bool{}}, reload.Options{})
	require.NoError(t, err)
	return p
}

const (
	fwdTo    = `<t:To xmlns:t="urn:t">u</t:To>`
	fwdAdmin = `<x:Admin xmlns:x="urn:x">true</x:Admin>`
)

func TestForwardUnsigned(t *testing.T) {
	tests := map[string]struct {
		policy   func(*config.Policy)
		result   func(*Result)
		want     string
		stripped []string // kind:local
	}{
		"ok/strip": {
			want:     `<E xmlns:a="urn:a"><H xmlns:y="urn:y">` + fwdTo + `</H><B>bc</B></E>`,
			stripped: []string{"attribute:x", "attribute:role", "header:Admin", "comment:"},
		},
		"ok/strip-is-the-default": {
			policy:   func(p *config.Policy) { p.UnsignedHeaders = "" },
			want:     `<E xmlns:a="urn:a"><H xmlns:y="urn:y">` + fwdTo + `</H><B>bc</B></E>`,
			stripped: []string{"attribute:x", "attribute:role", "header:Admin", "comment:"},
		},
		"ok/strip-allow-listed": {
			policy:   func(p *config.Policy) { p.UnsignedAllow = []string{"{urn:x}Admin", "{urn:y}role"} },
			want:     `<E xmlns:a="urn:a"><H xmlns:y="urn:y"` + "\n\t" + `y:role="admin">` + fwdTo + fwdAdmin + `</H><B>bc</B></E>`,
			stripped: []string{"attribute:x", "comment:", "comment:"},
		},
		"ok/strip-keep-security-header": {
			policy:   func(p *config.Policy) { p.KeepSecurityHeader = true },
			want:     `<E xmlns:a="urn:a"><H xmlns:y="urn:y"><S>x</S>` + fwdTo + `</H><B>bc</B></E>`,
			stripped: []string{"attribute:x", "attribute:role", "header:Admin", "comment:"},
		},
		// An HMAC signature keyed by an EncryptedKey vouches for no one.
		"ok/strip-hmac-covered": {
			result: func(r *Result) {
				r.Signatures = append(r.Signatures, Signature{KeyReference: KeyRefEncryptedKey, Covered: []int{r.Headers[1].Start}})
			},
			want:     `<E xmlns:a="urn:a"><H xmlns:y="urn:y">` + fwdTo + `</H><B>bc</B></E>`,
			stripped: []string{"attribute:x", "attribute:role", "header:Admin", "comment:"},
		},
		// Encrypted but unsigned is unsigned.
		"ok/strip-encrypted-header": {
			result: func(r *Result) {
				r.Decrypted = []Decryption{{Start: r.Headers[1].Start, Header: true}}
			},
			want:     `<E xmlns:a="urn:a"><H xmlns:y="urn:y">` + fwdTo + `</H><B>bc</B></E>`,
			stripped: []string{"attribute:x", "attribute:role", "header:Admin", "comment:"},
		},
		"ok/strip-signed-admin": {
			result: func(r *Result) {
				r.Signatures[0].Covered = append(r.Signatures[0].Covered, r.Headers[1].Start)
			},
			want:     `<E xmlns:a="urn:a"><H xmlns:y="urn:y">` + fwdTo + fwdAdmin + `</H><B>bc</B></E>`,
			stripped: []string{"attribute:x", "attribute:role", "comment:", "comment:"},
		},
		"ok/forward": {
			policy:   func(p *config.Policy) { p.UnsignedHeaders = config.UnsignedForward },
			want:     `<E xmlns:a="urn:a" a:x="1"><H xmlns:y="urn:y"` + "\n\t" + `y:role="admin">` + fwdTo + fwdAdmin + `</H><B>bc</B></E>`,
			stripped: []string{"comment:", "comment:"},
		},
		"ok/reject-forwards-what-passed": {
			policy: func(p *config.Policy) {
				p.UnsignedHeaders = config.UnsignedReject
				p.UnsignedAllow = []string{"{urn:x}Admin", "{urn:y}role", "{urn:a}x"}
			},
			want:     `<E xmlns:a="urn:a" a:x="1"><H xmlns:y="urn:y"` + "\n\t" + `y:role="admin">` + fwdTo + fwdAdmin + `</H><B>bc</B></E>`,
			stripped: []string{"comment:", "comment:"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := unsignedPolicy(t, tc.policy)
			r := unsignedResult(t)
			if tc.result != nil {
				tc.result(r)
			}
			require.NoError(t, p.CheckFacts(r))
			out, stripped := r.Forward(p)
			assert.Equal(t, tc.want, string(out))
			var got []string
			for _, s := range stripped {
				got = append(got, s.Kind+":"+s.Name.Local)
				assert.Equal(t, unsignedDoc[s.Span[0]:s.Span[1]], string(r.Document[s.Span[0]:s.Span[1]]))
			}
			assert.Equal(t, tc.stripped, got)
			assert.Equal(t, unsignedDoc, string(r.Document), "the verified document is not modified")

			// In place: the same bytes and facts, in Document itself.
			in, instripped := r.forward(p, true)
			assert.Equal(t, tc.want, string(in), "fail/in place")
			assert.Equal(t, stripped, instripped, "fail/in place")
			assert.True(t, len(in) == 0 || inside(in, r.Document), "fail/in place: a copy")
		})
	}
}

// inside reports whether b lies within the array of d.
func inside(b, d []byte) bool {
	d = d[:cap(d)]
	for i := range d {
		if &d[i] == &b[0] {
			return i+len(b) <= len(d)
		}
	}
	return false
}

// TestForwardInPlaceSecurityOnly: only the Security header goes, near the
// start (the prefix moves) or near the end (the suffix moves).
func TestForwardInPlaceSecurityOnly(t *testing.T) {
	p := unsignedPolicy(t, nil)
	for name, doc := range map[string]string{
		"ok/header-first": `<E><H><S>sig</S></H><B>` + strings.Repeat("x", 100) + `</B></E>`,
		"ok/header-last":  `<E><B>` + strings.Repeat("x", 100) + `</B><H><S>sig</S></H></E>`,
	} {
		t.Run(name, func(t *testing.T) {
			s := [2]int{strings.Index(doc, "<S>"), strings.Index(doc, "</H>")}
			r := &Result{Document: []byte(doc), Security: s}
			want, _ := r.Forward(p)
			require.Equal(t, doc[:s[0]]+doc[s[1]:], string(want))
			got, stripped := r.forward(p, true)
			assert.Equal(t, string(want), string(got))
			assert.Empty(t, stripped)
			assert.True(t, inside(got, r.Document), "fail/%s: a copy", name)
		})
	}
}

// TestForwardCopiesOnce: nothing to leave out, no copy; else one buffer
// of the exact size.
func TestForwardCopiesOnce(t *testing.T) {
	p := unsignedPolicy(t, func(p *config.Policy) { p.KeepSecurityHeader = true })
	r := &Result{Document: []byte(`<E><H><S/></H><B/></E>`), Security: [2]int{6, 10}}
	out, stripped := r.Forward(p)
	assert.Same(t, &r.Document[0], &out[0])
	assert.Empty(t, stripped)

	r = unsignedResult(t)
	out, _ = r.Forward(p)
	assert.Equal(t, len(out), cap(out))
}

func TestCheckUnsigned(t *testing.T) {
	tests := map[string]struct {
		policy func(*config.Policy)
		result func(*Result)
		want   Reason
	}{
		"ok/strip":   {},
		"ok/forward": {policy: func(p *config.Policy) { p.UnsignedHeaders = config.UnsignedForward }},
		"ok/reject-all-allowed": {policy: func(p *config.Policy) {
			p.UnsignedHeaders, p.UnsignedAllow = config.UnsignedReject, []string{"{urn:x}Admin", "{urn:y}role", "{urn:a}x"}
		}},
		"ok/reject-only-comments": {
			policy: func(p *config.Policy) { p.UnsignedHeaders = config.UnsignedReject },
			result: func(r *Result) { r.Headers, r.Attributes = r.Headers[:1], nil },
		},
		"fail/reject-header": {
			policy: func(p *config.Policy) {
				p.UnsignedHeaders, p.UnsignedAllow = config.UnsignedReject, []string{"{urn:y}role", "{urn:a}x"}
			},
			want: ReasonUnsigned,
		},
		"fail/reject-envelope-attribute": {
			policy: func(p *config.Policy) {
				p.UnsignedHeaders, p.UnsignedAllow = config.UnsignedReject, []string{"{urn:x}Admin", "{urn:y}role"}
			},
			want: ReasonUnsigned,
		},
		"fail/reject-hmac-covered": {
			policy: func(p *config.Policy) {
				p.UnsignedHeaders, p.UnsignedAllow = config.UnsignedReject, []string{"{urn:y}role", "{urn:a}x"}
			},
			result: func(r *Result) {
				r.Signatures = append(r.Signatures, Signature{KeyReference: KeyRefEncryptedKey, Covered: []int{r.Headers[1].Start}})
			},
			want: ReasonUnsigned,
		},
		"fail/reject-other-role-security-header": {
			policy: func(p *config.Policy) { p.UnsignedHeaders = config.UnsignedReject },
			result: func(r *Result) {
				r.Headers = []Part{r.Headers[0], {Name: xml.Name{Space: "urn:wsse", Local: "Security"}, Start: r.Headers[1].Start, End: r.Headers[1].End}}
				r.Attributes = nil
			},
			want: ReasonUnsigned,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			store := &fakeStore{seen: map[string]bool{}}
			cp := config.DefaultPolicy()
			cp.Require, cp.SignedParts = []string{config.RequireSignature}, []string{config.PartBody}
			if tc.policy != nil {
				tc.policy(&cp)
			}
			p, err := Compile("p", cp, store, reload.Options{})
			require.NoError(t, err)
			r := unsignedResult(t)
			if tc.result != nil {
				tc.result(r)
			}
			err = p.Check(context.Background(), r, time.Now())
			if tc.want == 0 {
				require.NoError(t, err)
				return
			}
			assert.Equal(t, tc.want, reasonOf(err), "%v", err)
			assert.Empty(t, store.seen, "a rejected message is not recorded in the replay store")
		})
	}
}

// fakeEngine returns fixed facts.
type fakeEngine struct{ res *Result }

func (e fakeEngine) Process([]byte, *Policy, time.Time) (*Result, error) { return e.res, nil }

// TestVerifyStripped: Verify forwards Forward's bytes and records what it
// left out.
func TestVerifyStripped(t *testing.T) {
	p := unsignedPolicy(t, nil)
	r := unsignedResult(t)
	res, out, err := p.Verify(context.Background(), fakeEngine{r}, []byte(unsignedDoc), time.Now())
	require.NoError(t, err)
	assert.NotContains(t, string(out), "Admin")
	assert.NotContains(t, string(out), "role")
	assert.Len(t, res.Stripped, 4)
	assert.Equal(t, "unsigned", ReasonUnsigned.String())
	assert.Equal(t, "InvalidSecurity", ReasonUnsigned.FaultCode())
}
