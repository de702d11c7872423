package template

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/dom"
	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/mime"
	"github.com/wssgw/wssgw/internal/reload"
	"github.com/wssgw/wssgw/internal/testmime"
	"github.com/wssgw/wssgw/internal/testvectors"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// mtomVector is one WSS4J-made MTOM package: its root, parts and clock.
type mtomVector struct {
	root []byte
	atts *testmime.Parts
	now  time.Time
}

func readMTOMVector(t testing.TB, set, name string) mtomVector {
	t.Helper()
	base := strings.TrimSuffix(testvectors.Path(t, "wss4j/"+set+"/"+name+".mime"), ".mime")
	raw, err := os.ReadFile(base + ".mime")
	require.NoError(t, err)
	ctype, err := os.ReadFile(base + ".ctype")
	require.NoError(t, err)
	pkg, err := mime.Read(context.Background(), bytes.NewReader(raw), strings.TrimSpace(string(ctype)), mime.DefaultLimits())
	require.NoError(t, err)
	defer pkg.Close()
	atts, err := testmime.FromPackage(pkg)
	require.NoError(t, err)
	v := mtomVector{root: bytes.Clone(pkg.RootBytes), atts: atts}
	m := vectorCreated.FindSubmatch(v.root)
	require.NotNil(t, m)
	created, err := time.Parse(time.RFC3339Nano, string(m[1]))
	require.NoError(t, err)
	v.now = created.Add(time.Second)
	return v
}

func vectorPolicy(t testing.TB, mutate ...func(*config.Policy)) *wss.Policy {
	t.Helper()
	keys := testvectors.Path(t, "wss4j/keys")
	p := config.DefaultPolicy()
	for _, m := range mutate {
		m(&p)
	}
	p.Replay = "off"
	p.Require = []string{config.RequireSignature}
	p.Trust.CAFiles = []string{filepath.Join(keys, "ca.crt")}
	p.DecryptionKeys = []config.KeyFiles{{CertFile: filepath.Join(keys, "server.crt"), KeyFile: filepath.Join(keys, "server.key")}}
	pol, err := wss.Compile("vectors", p, nil, reload.Options{})
	require.NoError(t, err)
	return pol
}

// pastShadow verifies an accepted package as many times as the first hits
// of a generic Body are shadow-checked, so that later verdicts are the
// template path's own, not the DOM engine's.
func pastShadow(t testing.TB, e *Engine, pol *wss.Policy, root []byte, atts wss.Attachments, now time.Time) {
	t.Helper()
	for range genericShadowHits {
		res, _, err := verifyPackage(e, pol, root, atts, now)
		require.NoError(t, err)
		require.Equal(t, metrics.LookupHit, res.Lookup)
	}
}

// verifyPackage runs the whole security stage (engine, policy, forwarded
// bytes) on a package.
func verifyPackage(e wss.AttachmentEngine, pol *wss.Policy, root []byte, atts wss.Attachments, now time.Time) (*wss.Result, []byte, error) {
	return pol.VerifyAttachments(context.Background(), e, root, atts, now)
}

// packageMutationsAgree verifies n mutations of one package on both
// engines: every third changes a byte of one part (each part in turn), the
// others overwrite one to four bytes of the root. Both engines must give
// the same verdict and forward the same root; it returns how many the
// template path decided (hits), so a caller can require that the changed
// parts were the template path's to judge.
func packageMutationsAgree(t *testing.T, f *fixture, rng *rand.Rand, seed []byte, atts *testmime.Parts, n int, label string) int {
	t.Helper()
	hits := 0
	for i := range n {
		root, a := bytes.Clone(seed), atts.Clone()
		if i%3 == 2 {
			p := *a.ByID[a.Order[i%len(a.Order)]]
			p.Data = bytes.Clone(p.Data)
			p.Data[rng.IntN(len(p.Data))] ^= byte(1 + rng.IntN(255))
			a.ByID[p.ID] = &p
		} else {
			for range 1 + i%4 {
				root[rng.IntN(len(root))] = byte(rng.IntN(256))
			}
		}
		got, gout, gerr := verifyPackage(f.engine, f.policy, root, a, f.now)
		want, wout, werr := verifyPackage(f.dom, f.policy, root, a.Clone(), f.now)
		if d := Compare(got, gerr, want, werr, f.policy); d != "" {
			t.Fatalf("%smutation %d: engines disagree: %s (template %v, DOM %v)", label, i, d, gerr, werr)
		}
		if !bytes.Equal(gout, wout) {
			t.Fatalf("%smutation %d: engines forward different bytes", label, i)
		}
		if got != nil && got.Lookup == metrics.LookupHit {
			hits++
		}
	}
	return hits
}

// TestWSS4JMTOMHits: CXF's MTOM form (WSS4J storeBytesInAttachment: the
// signer's certificate in a part, the Body's attachment signed through
// the XOP infoset) is learned from the first package and verified on the
// template path from the second on, with the DOM engine's facts and
// forwarded root; so is the sign+encrypt form (CipherValues in parts,
// xop_enc.go), the Body's ciphertext part consumed.
func TestWSS4JMTOMHits(t *testing.T) {
	d, err := dom.New(xmlscan.DefaultConfig())
	require.NoError(t, err)
	for _, c := range []struct {
		set  string
		hit  bool
		keep bool // keepSecurityHeader: the certificate's part goes on
	}{
		{"mtom-store-sign", true, false}, {"mtom-store-sign-soap12", true, false},
		{"mtom-store-sign", true, true}, {"mtom-store-sign-soap12", true, true},
		{"mtom-store-signencr", true, false}, {"mtom-store-signencr-soap12", true, false},
		{"mtom-store-signencr", true, true}, {"mtom-store-signencr-soap12", true, true},
	} {
		pol := vectorPolicy(t, func(p *config.Policy) { p.KeepSecurityHeader = c.keep })
		t.Run(fmt.Sprintf("ok/%s/keepSecurityHeader=%v", c.set, c.keep), func(t *testing.T) {
			e, err := New(d, xmlscan.DefaultConfig(), NewStore(pol, testOptions(), nil), nil)
			require.NoError(t, err)
			for k, name := range []string{"0000", "0001"} {
				v := readMTOMVector(t, c.set, name)
				got, gout, gerr := verifyPackage(e, pol, v.root, v.atts, v.now)
				want, wout, werr := verifyPackage(d, pol, v.root, v.atts.Clone(), v.now)
				require.NoError(t, werr)
				require.NoError(t, gerr)
				assert.Equal(t, wout, gout, "forwarded root")
				assert.Empty(t, Compare(got, gerr, want, werr, pol), name)
				if strings.Contains(c.set, "signencr") {
					// The header's parts (the EncryptedKey's, the
					// certificate's) go on with the header; the Body's
					// ciphertext never does.
					assert.Len(t, got.Consumed, map[bool]int{true: 1, false: 3}[c.keep])
				} else {
					assert.Equal(t, c.keep, len(got.Consumed) == 0, "the certificate's part goes on only with the header")
				}
				if !c.hit {
					// CipherValues in parts: no template describes it.
					assert.Equal(t, metrics.LookupNotApplicable, got.Lookup)
					continue
				}
				if k == 0 {
					assert.Equal(t, metrics.LookupNoTemplate, got.Lookup)
					if c.hit {
						pastShadow(t, e, pol, v.root, v.atts, v.now)
					}
					continue
				}
				if c.hit {
					assert.Equal(t, metrics.LookupHit, got.Lookup, "the second package of %s hits", c.set)
				} else {
					assert.NotEqual(t, metrics.LookupHit, got.Lookup)
				}
			}
		})
	}
}

var (
	bstHref   = regexp.MustCompile(`(BinarySecurityToken [^>]*><xop:Include href=")cid:([^"]+)"`)
	photoHref = regexp.MustCompile(`href="cid:(photo[0-9]@example.org)"`)
)

// TestMTOMHitRejections attacks a package whose shape the template path
// knows: each change is decided exactly as the DOM engine decides it, a
// rejection on both, never an accept on one.
func TestMTOMHitRejections(t *testing.T) {
	pol := vectorPolicy(t)
	d, err := dom.New(xmlscan.DefaultConfig())
	require.NoError(t, err)
	const set = "mtom-store-sign"
	for _, c := range []struct {
		name   string
		change func(t *testing.T, v *mtomVector)
		lookup string // of the template engine, "" for any
	}{
		{"ok/unchanged", func(*testing.T, *mtomVector) {}, metrics.LookupHit},
		{"fail/tampered attachment", func(t *testing.T, v *mtomVector) {
			cid := string(photoHref.FindSubmatch(v.root)[1])
			p := *v.atts.ByID[cid]
			p.Data = bytes.Clone(p.Data)
			p.Data[len(p.Data)-10] ^= 1
			v.atts.ByID[cid] = &p
		}, metrics.LookupHit},
		{"fail/tampered certificate", func(t *testing.T, v *mtomVector) {
			cid := string(bstHref.FindSubmatch(v.root)[2])
			p := *v.atts.ByID[cid]
			p.Data = bytes.Clone(p.Data)
			p.Data[len(p.Data)-300] ^= 1
			v.atts.ByID[cid] = &p
		}, metrics.LookupHit},
		{"fail/unreferenced part", func(t *testing.T, v *mtomVector) {
			v.atts.Add(testmime.NewPart("extra@example.org", "application/octet-stream", []byte("smuggled")))
		}, metrics.LookupHit},
		{"fail/part referenced twice", func(t *testing.T, v *mtomVector) {
			cid := photoHref.FindSubmatch(v.root)[1]
			v.root = bstHref.ReplaceAll(v.root, []byte(`${1}cid:`+string(cid)+`"`))
		}, metrics.LookupRejected},
		{"fail/two includes in one element", func(t *testing.T, v *mtomVector) {
			m := photoHref.FindIndex(v.root)
			end := bytes.Index(v.root[m[1]:], []byte("/>")) + m[1] + 2
			inc := bytes.Clone(v.root[bytes.LastIndex(v.root[:m[0]], []byte("<xop:Include")):end])
			v.root = append(v.root[:end:end], append(inc, v.root[end:]...)...)
		}, metrics.LookupRejected}, // the generic Body matches; mime.CheckInclude refuses it
		{"fail/href not cid:", func(t *testing.T, v *mtomVector) {
			v.root = photoHref.ReplaceAll(v.root, []byte(`href="http://example.org/${1}"`))
		}, metrics.LookupRejected},
		{"fail/href to no part", func(t *testing.T, v *mtomVector) {
			v.root = photoHref.ReplaceAll(v.root, []byte(`href="cid:missing@example.org"`))
		}, metrics.LookupRejected},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, err := New(d, xmlscan.DefaultConfig(), NewStore(pol, testOptions(), nil), nil)
			require.NoError(t, err)
			first := readMTOMVector(t, set, "0000")
			res, _, err := verifyPackage(e, pol, first.root, first.atts, first.now)
			require.NoError(t, err)
			require.Equal(t, metrics.LookupNoTemplate, res.Lookup)
			pastShadow(t, e, pol, first.root, first.atts, first.now)
			v := readMTOMVector(t, set, "0001")
			c.change(t, &v)
			got, gout, gerr := verifyPackage(e, pol, v.root, v.atts, v.now)
			_, wout, werr := verifyPackage(d, pol, v.root, v.atts.Clone(), v.now)
			assert.Equal(t, werr == nil, gerr == nil, "verdicts: template %v, DOM %v", gerr, werr)
			assert.Equal(t, wout, gout)
			if strings.HasPrefix(c.name, "fail/") {
				assert.Error(t, gerr)
			} else {
				assert.NoError(t, gerr)
			}
			if c.lookup != "" && got != nil {
				assert.Equal(t, c.lookup, got.Lookup)
			}
		})
	}
}

// TestPackageAndPlainTemplatesApart: a template learned from a package's
// root never verifies a plain message of the same bytes (its digests
// would cover the xop:Include element, not the part).
func TestPackageAndPlainTemplatesApart(t *testing.T) {
	pol := vectorPolicy(t)
	d, err := dom.New(xmlscan.DefaultConfig())
	require.NoError(t, err)
	e, err := New(d, xmlscan.DefaultConfig(), NewStore(pol, testOptions(), nil), nil)
	require.NoError(t, err)
	first := readMTOMVector(t, "mtom-store-sign", "0000")
	_, _, err = verifyPackage(e, pol, first.root, first.atts, first.now)
	require.NoError(t, err)
	v := readMTOMVector(t, "mtom-store-sign", "0001")
	res, err := e.Process(v.root, pol, v.now)
	require.Error(t, err, "a package's root alone is not a message")
	assert.NotEqual(t, metrics.LookupHit, res.Lookup)
}
