package template

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/testmime"
)

const xopInclude = `<xop:Include xmlns:xop="http://www.w3.org/2004/08/xop/include" href="cid:`

// mtomPackage signs an envelope whose Body holds items list entries and
// one xop:Include per part (Content-IDs tag-k@example.org), digested over
// its XOP infoset by the repository's signer (one-line base64, XOP 1.0
// §3.2), with the key in a BinarySecurityToken.
// An id in the payload (exact) keeps the Body exact: its template matches
// the payload as fragments and slots, and its xop:Includes are cid slots.
func (f *fixture) mtomPackage(t testing.TB, items int, parts [][]byte, tag string, at time.Time, exact bool) ([]byte, *testmime.Parts) {
	t.Helper()
	atts := testmime.New()
	var b strings.Builder
	b.WriteString(`<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Header/><soap:Body><m:Upload xmlns:m="urn:example:uploads"`)
	if exact {
		fmt.Fprintf(&b, ` Id="up-%s"`, tag)
	}
	b.WriteString(`>`)
	for i := range items {
		fmt.Fprintf(&b, `<m:Item sku="S-%d">item %d</m:Item>`, i, i)
	}
	for k, p := range parts {
		cid := fmt.Sprintf("%s-%d@example.org", tag, k)
		atts.Add(testmime.NewPart(cid, "application/octet-stream", p))
		fmt.Fprintf(&b, `<m:Doc n="%d">%s%s"/></m:Doc>`, k, xopInclude, cid)
	}
	b.WriteString(`</m:Upload></soap:Body></soap:Envelope>`)
	root := f.sign(t, []byte(b.String()), f.rsa, signer.RefBST, at, func(o *signer.Options) {
		o.SignHeaders = nil
		o.Gate = nil
		o.XOP = func(cid string) (io.ReadCloser, bool, error) {
			p, ok := atts.ByID[cid]
			if !ok {
				return nil, false, nil
			}
			return io.NopCloser(bytes.NewReader(p.Data)), true, nil
		}
	})
	return root, atts
}

func randomParts(rng *rand.Rand, sizes ...int) [][]byte {
	var out [][]byte
	for _, n := range sizes {
		p := make([]byte, n)
		for i := range p {
			p[i] = byte(rng.Uint32())
		}
		out = append(out, p)
	}
	return out
}

// TestMTOMGenericBody: the Body of an MTOM package is one generic region
// (issue 14) whose xop:Includes are resolved per message: after one
// package is learned, packages with other payloads and any number of
// attachments hit the same template, with the DOM engine's facts, and
// their parts are streamed into the Body's digest; a part changed after
// signing, or named twice, is decided as the DOM engine decides it.
func TestMTOMGenericBody(t *testing.T) {
	f := newFixture(t, nil, testOptions())
	rng := rand.New(rand.NewPCG(1, 2))
	first, atts := f.mtomPackage(t, 3, randomParts(rng, 3000), "first", f.now, false)
	res, _, err := verifyPackage(f.engine, f.policy, first, atts, f.now)
	require.NoError(t, err)
	require.Equal(t, metrics.LookupNoTemplate, res.Lookup)
	require.Equal(t, 1, f.store.Len())
	require.NotNil(t, f.store.Templates()[0].gbody, "the package's Body is generic")
	pastShadow(t, f.engine, f.policy, first, atts, f.now)

	for k, c := range []struct {
		name   string
		items  int
		sizes  []int
		change func(root []byte, atts *testmime.Parts) []byte
		accept bool
	}{
		{"ok/other payload, one part", 7, []int{10}, nil, true},
		{"ok/no part", 0, nil, nil, true},
		{"ok/three parts", 2, []int{1, 70000, 77}, nil, true},
		{"ok/empty part", 1, []int{0}, nil, true},
		{"fail/part changed after signing", 2, []int{500, 600}, func(root []byte, atts *testmime.Parts) []byte {
			p := atts.ByID[atts.Order[1]]
			p.Data = bytes.Clone(p.Data)
			p.Data[100] ^= 0x40
			return root
		}, false},
		{"fail/part named twice", 1, []int{500, 600}, func(root []byte, atts *testmime.Parts) []byte {
			return bytes.Replace(root, []byte(atts.Order[1]), []byte(atts.Order[0]), 1)
		}, false},
		{"fail/unreferenced part", 1, []int{500}, func(root []byte, atts *testmime.Parts) []byte {
			atts.Add(testmime.NewPart("extra@example.org", "application/octet-stream", []byte("smuggled")))
			return root
		}, false},
		{"fail/include not alone", 1, []int{500}, func(root []byte, atts *testmime.Parts) []byte {
			return bytes.Replace(root, []byte(`<m:Doc n="0">`), []byte(`<m:Doc n="0"> `), 1)
		}, false},
		{"fail/href not cid:", 1, []int{500}, func(root []byte, atts *testmime.Parts) []byte {
			return bytes.Replace(root, []byte(`href="cid:`), []byte(`href="file:`), 1)
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			at := f.now.Add(time.Duration(k+1) * time.Second)
			root, atts := f.mtomPackage(t, c.items, randomParts(rng, c.sizes...), fmt.Sprintf("m%d", k), at, false)
			if c.change != nil {
				root = c.change(root, atts)
			}
			got, gout, gerr := verifyPackage(f.engine, f.policy, root, atts, f.now)
			want, wout, werr := verifyPackage(f.dom, f.policy, root, atts.Clone(), f.now)
			assert.Equal(t, werr == nil, gerr == nil, "verdicts: template %v, DOM %v", gerr, werr)
			assert.Equal(t, c.accept, gerr == nil, "template: %v", gerr)
			assert.Equal(t, wout, gout, "forwarded root")
			if c.accept {
				assert.Empty(t, Compare(got, gerr, want, werr, f.policy))
				assert.Equal(t, metrics.LookupHit, got.Lookup)
				assert.Len(t, got.Attachments, len(c.sizes))
			}
		})
	}
	assert.Equal(t, 1, f.store.Len(), "one template for every payload and attachment count")
}

// TestMTOMExactBody: a package whose Body stays exact (an id in the
// payload) hits its exact template from the second package on, each
// include a cid slot whose part is streamed into the digest; a changed
// part is refused on the template path, as the DOM engine refuses it.
func TestMTOMExactBody(t *testing.T) {
	f := newFixture(t, nil, testOptions())
	rng := rand.New(rand.NewPCG(3, 4))
	first, atts := f.mtomPackage(t, 2, randomParts(rng, 3000, 5), "first", f.now, true)
	res, _, err := verifyPackage(f.engine, f.policy, first, atts, f.now)
	require.NoError(t, err)
	require.Equal(t, metrics.LookupNoTemplate, res.Lookup)
	require.Nil(t, f.store.Templates()[0].gbody, "an id keeps the Body exact")
	for k, tamper := range []bool{false, true} {
		root, atts := f.mtomPackage(t, 2, randomParts(rng, 100, 7000), fmt.Sprintf("m%d", k), f.now.Add(time.Second), true)
		if tamper {
			p := atts.ByID[atts.Order[1]]
			p.Data = bytes.Clone(p.Data)
			p.Data[10] ^= 1
		}
		got, gout, gerr := verifyPackage(f.engine, f.policy, root, atts, f.now)
		want, wout, werr := verifyPackage(f.dom, f.policy, root, atts.Clone(), f.now)
		assert.Equal(t, metrics.LookupHit, got.Lookup)
		assert.Equal(t, !tamper, gerr == nil, "template: %v", gerr)
		assert.Equal(t, werr == nil, gerr == nil, "verdicts: template %v, DOM %v", gerr, werr)
		assert.Equal(t, wout, gout)
		assert.Empty(t, Compare(got, gerr, want, werr, f.policy))
	}
}

// swaPackage signs an envelope with one SwA Reference per part
// (Attachment-Content-Signature-Transform, WSS SwA Profile 1.1 §5.2), the
// parts alternately binary and text.
func (f *fixture) swaPackage(t testing.TB, items int, parts [][]byte, tag string, at time.Time) ([]byte, *testmime.Parts) {
	t.Helper()
	atts := testmime.New()
	var b strings.Builder
	b.WriteString(`<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Header/><soap:Body><m:Upload xmlns:m="urn:example:uploads">`)
	for i := range items {
		fmt.Fprintf(&b, `<m:Item sku="S-%d">item %d</m:Item>`, i, i)
	}
	b.WriteString(`</m:Upload></soap:Body></soap:Envelope>`)
	var refs []signer.SwAPart
	for k, p := range parts {
		cid := fmt.Sprintf("%s-%d@example.org", tag, k)
		ct := "application/octet-stream"
		if k%2 == 1 {
			ct = "text/plain"
		}
		part := testmime.NewPart(cid, ct, p)
		atts.Add(part)
		refs = append(refs, signer.SwAPart{ContentID: cid, Header: part.Head, Open: part.Open})
	}
	root := f.sign(t, []byte(b.String()), f.rsa, signer.RefBST, at, func(o *signer.Options) {
		o.SignHeaders = nil
		o.SwA = refs
	})
	return root, atts
}

// TestSwAHits: SwA References on the template path (issue 14): after one
// package is learned, packages with other payloads and parts of other
// contents hit, each part streamed through its SwA transform into its
// Reference's digest, with the DOM engine's facts; a changed, missing,
// unreferenced or doubly named part is decided as the DOM engine decides
// it.
func TestSwAHits(t *testing.T) {
	f := newFixture(t, nil, testOptions())
	rng := rand.New(rand.NewPCG(7, 8))
	first, atts := f.swaPackage(t, 3, randomParts(rng, 3000, 40), "first", f.now)
	res, _, err := verifyPackage(f.engine, f.policy, first, atts, f.now)
	require.NoError(t, err)
	require.Equal(t, metrics.LookupNoTemplate, res.Lookup)
	require.Equal(t, 1, f.store.Len(), "an SwA package is learned")
	pastShadow(t, f.engine, f.policy, first, atts, f.now)
	for k, c := range []struct {
		name   string
		change func(root []byte, atts *testmime.Parts) []byte
		accept bool
		lookup string
	}{
		{"ok/other payload and parts", nil, true, metrics.LookupHit},
		{"fail/part changed after signing", func(root []byte, atts *testmime.Parts) []byte {
			p := atts.ByID[atts.Order[0]]
			p.Data = bytes.Clone(p.Data)
			p.Data[7] ^= 1
			return root
		}, false, metrics.LookupHit},
		{"fail/unreferenced part", func(root []byte, atts *testmime.Parts) []byte {
			atts.Add(testmime.NewPart("extra@example.org", "application/octet-stream", []byte("smuggled")))
			return root
		}, false, metrics.LookupHit},
		{"fail/part named twice", func(root []byte, atts *testmime.Parts) []byte {
			return bytes.Replace(root, []byte(atts.Order[1]), []byte(atts.Order[0]), 1)
		}, false, metrics.LookupRejected},
		{"fail/reference to no part", func(root []byte, atts *testmime.Parts) []byte {
			return bytes.Replace(root, []byte(atts.Order[1]), []byte("missing@example.org"), 1)
		}, false, metrics.LookupRejected},
		{"fail/not a cid: URI", func(root []byte, atts *testmime.Parts) []byte {
			return bytes.Replace(root, []byte(`URI="cid:`), []byte(`URI="file:`), 1)
		}, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			at := f.now.Add(time.Duration(k+1) * time.Second)
			root, atts := f.swaPackage(t, 5+k, randomParts(rng, 100*k, 9), fmt.Sprintf("m%d", k), at)
			if c.change != nil {
				root = c.change(root, atts)
			}
			got, gout, gerr := verifyPackage(f.engine, f.policy, root, atts, f.now)
			want, wout, werr := verifyPackage(f.dom, f.policy, root, atts.Clone(), f.now)
			assert.Equal(t, werr == nil, gerr == nil, "verdicts: template %v, DOM %v", gerr, werr)
			assert.Equal(t, c.accept, gerr == nil, "template: %v", gerr)
			assert.Equal(t, wout, gout, "forwarded root")
			if c.lookup != "" {
				assert.Equal(t, c.lookup, got.Lookup)
			}
			if c.accept {
				assert.Empty(t, Compare(got, gerr, want, werr, f.policy))
			}
		})
	}
	assert.Equal(t, 1, f.store.Len())
}

// TestPackageMutationsAgree is TestRandomMutationsAgree for packages: 600
// seeded random byte mutations of the root and of a part of a signed MTOM
// package and of an SwA package whose shapes are learned (past the
// shadow-checked first hits), each verdict, fact list and forwarded root
// compared with the DOM engine's.
func TestPackageMutationsAgree(t *testing.T) {
	f := newFixture(t, nil, testOptions())
	rng := rand.New(rand.NewPCG(9, 10))
	for _, swaRefs := range []bool{false, true} {
		mk := func(tag string, at time.Time) ([]byte, *testmime.Parts) {
			if swaRefs {
				return f.swaPackage(t, 2, randomParts(rng, 200, 30), tag, at)
			}
			return f.mtomPackage(t, 2, randomParts(rng, 200, 30), tag, at, false)
		}
		learnRoot, learnAtts := mk("learn", f.now)
		_, _, err := verifyPackage(f.engine, f.policy, learnRoot, learnAtts, f.now)
		require.NoError(t, err)
		pastShadow(t, f.engine, f.policy, learnRoot, learnAtts, f.now)
		seed, atts := mk("seed", f.now.Add(time.Second))
		hits := packageMutationsAgree(t, f, rng, seed, atts, 300, fmt.Sprintf("swa=%v ", swaRefs))
		assert.GreaterOrEqual(t, hits, 100, "swa=%v: the template path decided the changed parts", swaRefs)
	}
}

// FuzzPackageEngines compares the template path with the DOM engine on
// mutated roots and parts of signed MTOM and SwA packages whose shapes are
// learned (past the shadow-checked first hits): the same verdict, and for
// accepted packages the same facts and forwarded root.
func FuzzPackageEngines(f *testing.F) {
	fx := newFixture(f, nil, testOptions())
	rng := rand.New(rand.NewPCG(11, 12))
	parts := randomParts(rng, 300, 40)
	pkgs := map[bool]*testmime.Parts{}
	for _, swaRefs := range []bool{false, true} {
		mk := func(tag string) ([]byte, *testmime.Parts) {
			if swaRefs {
				return fx.swaPackage(f, 2, parts, tag, fx.now)
			}
			return fx.mtomPackage(f, 2, parts, tag, fx.now, false)
		}
		learnRoot, learnAtts := mk("learn")
		if _, _, err := verifyPackage(fx.engine, fx.policy, learnRoot, learnAtts, fx.now); err != nil {
			f.Fatal(err)
		}
		pastShadow(f, fx.engine, fx.policy, learnRoot, learnAtts, fx.now)
		seed, atts := mk("seed")
		pkgs[swaRefs] = atts
		f.Add(swaRefs, seed, parts[0])
	}
	f.Fuzz(func(t *testing.T, swaRefs bool, root, part0 []byte) {
		atts := pkgs[swaRefs].Clone()
		p := *atts.ByID[atts.Order[0]]
		p.Data = part0
		atts.ByID[p.ID] = &p
		got, gout, gerr := verifyPackage(fx.engine, fx.policy, root, atts, fx.now)
		want, wout, werr := verifyPackage(fx.dom, fx.policy, root, atts.Clone(), fx.now)
		if d := Compare(got, gerr, want, werr, fx.policy); d != "" {
			t.Fatalf("engines disagree: %s (template %v, DOM %v)", d, gerr, werr)
		}
		if !bytes.Equal(gout, wout) {
			t.Fatalf("engines forward different bytes")
		}
	})
}
