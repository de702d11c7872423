package template

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/dom"
	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/testmime"
	"github.com/wssgw/wssgw/internal/testpki"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// cipherValue is a CipherValue's base64 text, as the repository's signer
// writes it; cipherInclude one whose content is an xop:Include (WSS4J
// storeBytesInAttachment), with its part's Content-ID.
var (
	cipherValue   = regexp.MustCompile(`<xenc:CipherValue>([^<]*)</xenc:CipherValue>`)
	cipherInclude = regexp.MustCompile(`CipherValue[^>]*><xop:Include [^>]*href="cid:([^"]+)"/>`)
	bstValue      = regexp.MustCompile(`(<wsse:BinarySecurityToken [^>]*>)([^<]+)</wsse:BinarySecurityToken>`)
	bstInclude    = regexp.MustCompile(`BinarySecurityToken [^>]*><xop:Include [^>]*href="cid:([^"]+)"/>`)
)

// storeBytesInAttachment moves the octets of the BinarySecurityToken and
// of every CipherValue of a secured message into parts of an MTOM package
// (Content-IDs tag-bst@example.org, tag-cv-k@example.org), leaving an
// xop:Include in each place, as WSS4J does with CXF's MTOM on.
// Sign-then-encrypt: no signature covers a CipherValue, and one covering
// the token would digest its XOP infoset, the same one-line base64.
func storeBytesInAttachment(t testing.TB, msg []byte, tag string) ([]byte, *testmime.Parts) {
	t.Helper()
	atts := testmime.New()
	msg = bstValue.ReplaceAllFunc(msg, func(m []byte) []byte {
		sub := bstValue.FindSubmatch(m)
		der, err := wss.DecodeBase64(sub[2])
		require.NoError(t, err)
		cid := tag + "-bst@example.org"
		atts.Add(testmime.NewPart(cid, "application/octet-stream", der))
		return fmt.Appendf(nil, `%s%s%s"/></wsse:BinarySecurityToken>`, sub[1], xopInclude, cid)
	})
	require.Len(t, atts.Order, 1, "the signer's BinarySecurityToken")
	k := 0
	root := cipherValue.ReplaceAllFunc(msg, func(m []byte) []byte {
		ct, err := wss.DecodeBase64(cipherValue.FindSubmatch(m)[1])
		require.NoError(t, err)
		cid := fmt.Sprintf("%s-cv-%d@example.org", tag, k)
		k++
		atts.Add(testmime.NewPart(cid, "application/octet-stream", ct))
		return fmt.Appendf(nil, `<xenc:CipherValue>%s%s"/></xenc:CipherValue>`, xopInclude, cid)
	})
	require.Equal(t, 2, k, "an EncryptedKey's and an EncryptedData's CipherValue")
	return root, atts
}

// encPackage is a package of the repository's signer: env signed with the
// partner's key, its Body content encrypted for recipient after signing,
// the CipherValues in parts.
func (f *fixture) encPackage(t testing.TB, env []byte, tag string, recipient *testpki.Leaf) ([]byte, *testmime.Parts) {
	t.Helper()
	msg := f.sign(t, env, f.rsa, signer.RefBST, f.now, func(o *signer.Options) {
		o.EncryptFor, o.EncryptKeyReference = recipient.Cert, signer.RefIssuerSerial
		o.Gate = nil
	})
	return storeBytesInAttachment(t, msg, tag)
}

// encCase is an encrypted package and where its two ciphertexts are.
type encCase struct {
	root       []byte
	atts       *testmime.Parts
	now        time.Time
	ekCID      string                                                 // the EncryptedKey's CipherValue part
	edCID      string                                                 // the EncryptedData's
	big        string                                                 // a part that claims to be over every bound
	bstCID     string                                                 // the BinarySecurityToken's
	reEncrypt  func(t *testing.T) (root []byte, atts *testmime.Parts) // the same message under another session key
	otherRecip func(t *testing.T) (root []byte, atts *testmime.Parts) // encrypted for a key the policy does not hold
}

func (c *encCase) parts(t *testing.T) {
	t.Helper()
	m := cipherInclude.FindAllSubmatch(c.root, -1)
	require.Len(t, m, 2)
	c.ekCID, c.edCID = string(m[0][1]), string(m[1][1])
	b := bstInclude.FindSubmatch(c.root)
	require.NotNil(t, b, "the token in a part")
	c.bstCID = string(b[1])
}

func (c *encCase) setPart(cid string, data []byte) {
	p := *c.atts.ByID[cid]
	p.Data = data
	c.atts.ByID[cid] = &p
}

// bigPart claims a size over every bound without holding the bytes.
type bigPart struct{ testmime.Part }

func (p *bigPart) Size() int64 { return wss.MaxBufferedAttachment + 1 }

// oversized is a package whose part cid claims to be a bigPart.
type oversized struct {
	*testmime.Parts
	cid string
}

func (o oversized) Attachment(cid string) (wss.Attachment, bool) {
	a, ok := o.Parts.Attachment(cid)
	if ok && cid == o.cid {
		return &bigPart{*a.(*testmime.Part)}, true
	}
	return a, ok
}

// packages are c's parts for the template engine and a copy for the DOM
// engine.
func (c *encCase) packages() (wss.Attachments, wss.Attachments) {
	if c.big != "" {
		return oversized{c.atts, c.big}, oversized{c.atts.Clone(), c.big}
	}
	return c.atts, c.atts.Clone()
}

// TestEncryptedMTOMAgrees is the differential test of encrypted MTOM
// packages (CipherValues in parts, issue 14): packages of the
// repository's signer and of WSS4J, learned from a first package, then a
// second one as sent and attacked; the template engine and the DOM engine
// must reach the same verdict and forward the same bytes, and the
// template path must decide the package itself (a hit) wherever it can.
func TestEncryptedMTOMAgrees(t *testing.T) {
	type producer struct {
		name  string
		pol   *wss.Policy
		d     *dom.Engine
		first func(t *testing.T) encCase
		next  func(t *testing.T) encCase
	}
	f := newFixture(t, nil, testOptions())
	stranger := f.ca.IssueRSA(t, t.TempDir(), "stranger")
	env := func(tag string) []byte { return envelope(false, 12, "note "+tag) }
	own := func(tag string) func(t *testing.T) encCase {
		return func(t *testing.T) encCase {
			root, atts := f.encPackage(t, env(tag), tag, f.gw)
			c := encCase{root: root, atts: atts, now: f.now,
				reEncrypt:  func(t *testing.T) ([]byte, *testmime.Parts) { return f.encPackage(t, env(tag), tag, f.gw) },
				otherRecip: func(t *testing.T) ([]byte, *testmime.Parts) { return f.encPackage(t, env(tag), tag, stranger) }}
			c.parts(t)
			return c
		}
	}
	producers := []producer{{name: "signer", pol: f.policy, d: f.dom, first: own("a"), next: own("b")}}
	for _, set := range []string{"mtom-store-signencr", "mtom-store-signencr-soap12"} {
		wss4j := func(name string) func(t *testing.T) encCase {
			return func(t *testing.T) encCase {
				v := readMTOMVector(t, set, name)
				c := encCase{root: v.root, atts: v.atts, now: v.now}
				c.parts(t)
				if name == "0001" {
					c.reEncrypt = func(t *testing.T) ([]byte, *testmime.Parts) {
						w := readMTOMVector(t, set, "0000")
						return w.root, w.atts
					}
				}
				return c
			}
		}
		d, err := dom.New(xmlscan.DefaultConfig())
		require.NoError(t, err)
		producers = append(producers, producer{name: "wss4j/" + set, pol: vectorPolicy(t), d: d, first: wss4j("0000"), next: wss4j("0001")})
	}
	for _, pr := range producers {
		for _, c := range []struct {
			name   string
			change func(t *testing.T, c *encCase)
			lookup string // of the template engine
		}{
			{"ok/unchanged", func(*testing.T, *encCase) {}, metrics.LookupHit},
			{"fail/tampered ciphertext", func(t *testing.T, c *encCase) {
				ct := bytes.Clone(c.atts.ByID[c.edCID].Data)
				ct[len(ct)/2] ^= 1
				c.setPart(c.edCID, ct)
			}, metrics.LookupHit},
			{"fail/tampered GCM tag", func(t *testing.T, c *encCase) {
				ct := bytes.Clone(c.atts.ByID[c.edCID].Data)
				ct[len(ct)-1] ^= 1
				c.setPart(c.edCID, ct)
			}, metrics.LookupHit},
			{"fail/tampered key", func(t *testing.T, c *encCase) {
				ek := bytes.Clone(c.atts.ByID[c.ekCID].Data)
				ek[10] ^= 1
				c.setPart(c.ekCID, ek)
			}, metrics.LookupHit},
			{"fail/truncated ciphertext", func(t *testing.T, c *encCase) {
				c.setPart(c.edCID, c.atts.ByID[c.edCID].Data[:8])
			}, metrics.LookupHit},
			{"fail/empty ciphertext", func(t *testing.T, c *encCase) {
				c.setPart(c.edCID, nil)
			}, metrics.LookupHit},
			{"fail/swapped part contents", func(t *testing.T, c *encCase) {
				ek, ed := c.atts.ByID[c.ekCID].Data, c.atts.ByID[c.edCID].Data
				c.setPart(c.ekCID, ed)
				c.setPart(c.edCID, ek)
			}, metrics.LookupHit},
			{"fail/swapped hrefs", func(t *testing.T, c *encCase) {
				c.root = bytes.Replace(c.root, []byte(c.ekCID), []byte("swap@x"), 1)
				c.root = bytes.Replace(c.root, []byte(c.edCID), []byte(c.ekCID), 1)
				c.root = bytes.Replace(c.root, []byte("swap@x"), []byte(c.edCID), 1)
			}, metrics.LookupHit},
			{"fail/missing ciphertext part", func(t *testing.T, c *encCase) {
				delete(c.atts.ByID, c.edCID)
				c.atts.Order = removeString(c.atts.Order, c.edCID)
			}, metrics.LookupRejected},
			{"fail/missing key part", func(t *testing.T, c *encCase) {
				delete(c.atts.ByID, c.ekCID)
				c.atts.Order = removeString(c.atts.Order, c.ekCID)
			}, metrics.LookupRejected},
			{"fail/part used twice", func(t *testing.T, c *encCase) {
				c.root = bytes.Replace(c.root, []byte(c.edCID), []byte(c.ekCID), 1)
				delete(c.atts.ByID, c.edCID)
				c.atts.Order = removeString(c.atts.Order, c.edCID)
			}, metrics.LookupRejected},
			{"fail/part used twice, the other left over", func(t *testing.T, c *encCase) {
				c.root = bytes.Replace(c.root, []byte(c.edCID), []byte(c.ekCID), 1)
			}, metrics.LookupRejected},
			{"fail/ciphertext part over the bound", func(t *testing.T, c *encCase) {
				c.big = c.edCID
			}, metrics.LookupRejected},
			{"fail/tampered token", func(t *testing.T, c *encCase) {
				der := bytes.Clone(c.atts.ByID[c.bstCID].Data)
				der[len(der)-40] ^= 1
				c.setPart(c.bstCID, der)
			}, metrics.LookupHit},
			{"fail/token part over its bound", func(t *testing.T, c *encCase) {
				c.setPart(c.bstCID, append(bytes.Clone(c.atts.ByID[c.bstCID].Data), make([]byte, wss.MaxTokenPart)...))
			}, metrics.LookupRejected},
			{"fail/token part is the ciphertext's", func(t *testing.T, c *encCase) {
				c.root = bytes.Replace(c.root, []byte("cid:"+c.bstCID), []byte("cid:"+c.edCID), 1)
			}, metrics.LookupRejected},
			{"fail/unreferenced part", func(t *testing.T, c *encCase) {
				c.atts.Add(testmime.NewPart("extra@example.org", "application/octet-stream", []byte("smuggled")))
			}, metrics.LookupHit},
			{"fail/href not cid:", func(t *testing.T, c *encCase) {
				c.root = bytes.Replace(c.root, []byte("cid:"+c.edCID), []byte("http://example.org/"+c.edCID), 1)
			}, metrics.LookupRejected},
			{"fail/wrong key: another package's EncryptedKey", func(t *testing.T, c *encCase) {
				if c.reEncrypt == nil {
					t.Skip("one other package only")
				}
				root, atts := c.reEncrypt(t)
				o := encCase{root: root, atts: atts}
				o.parts(t)
				c.setPart(c.ekCID, atts.ByID[o.ekCID].Data)
			}, metrics.LookupHit},
			{"fail/wrong key: encrypted for another recipient", func(t *testing.T, c *encCase) {
				if c.otherRecip == nil {
					t.Skip("no such vector")
				}
				c.root, c.atts = c.otherRecip(t)
			}, ""}, // its KeyInfo names another certificate: another shape
		} {
			t.Run(pr.name+"/"+c.name, func(t *testing.T) {
				e, err := New(pr.d, xmlscan.DefaultConfig(), NewStore(pr.pol, testOptions(), nil), nil)
				require.NoError(t, err)
				first := pr.first(t)
				res, _, err := verifyPackage(e, pr.pol, first.root, first.atts, first.now)
				require.NoError(t, err)
				require.Equal(t, metrics.LookupNoTemplate, res.Lookup)
				require.Equal(t, 1, e.Store().Len(), "learned from the first package")
				v := pr.next(t)
				c.change(t, &v)
				atts, datts := v.packages()
				got, gout, gerr := verifyPackage(e, pr.pol, v.root, atts, v.now)
				want, wout, werr := verifyPackage(pr.d, pr.pol, v.root, datts, v.now)
				require.Equal(t, werr == nil, gerr == nil, "verdicts: template %v, DOM %v", gerr, werr)
				assert.Equal(t, wout, gout, "forwarded root")
				if strings.HasPrefix(c.name, "fail/") {
					assert.Error(t, gerr)
				} else {
					require.NoError(t, gerr)
					assert.Empty(t, Compare(got, gerr, want, werr, pr.pol))
					assert.Contains(t, got.Consumed, v.edCID, "the ciphertext never reaches the backend")
				}
				if c.lookup != "" {
					assert.Equal(t, c.lookup, got.Lookup)
				} else {
					assert.NotEqual(t, metrics.LookupHit, got.Lookup)
				}
			})
		}
	}
}

func removeString(s []string, v string) []string {
	var out []string
	for _, x := range s {
		if x != v {
			out = append(out, x)
		}
	}
	return out
}

// TestEncryptedMTOMKeepsHeader: with keepSecurityHeader the header's
// parts (the EncryptedKey's CipherValue, the token) go on with the header
// the backend gets, the Body's ciphertext never does; both engines agree,
// on packages whose payloads differ in length.
func TestEncryptedMTOMKeepsHeader(t *testing.T) {
	f := newFixture(t, func(p *config.Policy) { p.KeepSecurityHeader = true }, testOptions())
	for k, tag := range []string{"a", "b"} {
		root, atts := f.encPackage(t, envelope(true, 3+k, "x"), tag, f.gw)
		c := encCase{root: root}
		c.parts(t)
		got, gout, gerr := verifyPackage(f.engine, f.policy, root, atts, f.now)
		want, wout, werr := verifyPackage(f.dom, f.policy, root, atts.Clone(), f.now)
		require.NoError(t, werr)
		require.NoError(t, gerr)
		assert.Equal(t, wout, gout)
		assert.Empty(t, Compare(got, gerr, want, werr, f.policy))
		assert.Equal(t, []string{c.edCID}, got.Consumed)
		assert.Equal(t, []string{metrics.LookupNoTemplate, metrics.LookupHit}[k], got.Lookup)
	}
	// Another payload length hit: the plaintext's template is the generic
	// one, the received root's sealed, both a package's.
	tpls := f.store.Templates()
	require.Len(t, tpls, 1)
	outer := tpls[0]
	assert.True(t, outer.pkg && outer.sealed)
	for _, s := range outer.steps {
		if s.dec != nil {
			assert.True(t, s.dec.cipherPart && s.dec.dataPart, "both CipherValues in parts")
			assert.True(t, s.dec.inner.pkg && !s.dec.inner.sealed)
			assert.NotNil(t, s.dec.inner.gbody, "a generic plaintext Body")
		}
	}
}

// TestEncryptedMTOMPlainTemplateApart: a template learned from a plain
// encrypted message never verifies a package's root, nor the reverse.
func TestEncryptedMTOMPlainTemplateApart(t *testing.T) {
	f := newFixture(t, nil, testOptions())
	env := envelope(false, 4, "apart")
	plain := f.sign(t, env, f.rsa, signer.RefBST, f.now, f.encrypt(signer.RefIssuerSerial))
	_, err := f.engine.Process(plain, f.policy, f.now)
	require.NoError(t, err)
	root, atts := f.encPackage(t, env, "a", f.gw)
	res, err := f.engine.ProcessAttachments(root, atts, f.policy, f.now)
	require.NoError(t, err)
	assert.Equal(t, metrics.LookupNoTemplate, res.Lookup, "a plain message's template is not a package's")
	root, atts = f.encPackage(t, env, "b", f.gw)
	res, err = f.engine.ProcessAttachments(root, atts, f.policy, f.now)
	require.NoError(t, err)
	assert.Equal(t, metrics.LookupHit, res.Lookup)
}

// TestEncryptedPackageMutationsAgree is TestPackageMutationsAgree for
// encrypted packages: 300 seeded random byte mutations of the root and of
// the parts holding the EncryptedKey's and the EncryptedData's ciphertext
// and the token, each verdict, fact list and forwarded root compared with
// the DOM engine's.
func TestEncryptedPackageMutationsAgree(t *testing.T) {
	f := newFixture(t, nil, testOptions())
	rng := rand.New(rand.NewPCG(13, 14))
	learnRoot, learnAtts := f.encPackage(t, envelope(false, 3, "learn"), "learn", f.gw)
	_, _, err := verifyPackage(f.engine, f.policy, learnRoot, learnAtts, f.now)
	require.NoError(t, err)
	seed, atts := f.encPackage(t, envelope(false, 5, "seed"), "seed", f.gw)
	hits := packageMutationsAgree(t, f, rng, seed, atts, 300, "")
	assert.GreaterOrEqual(t, hits, 100, "the template path decided the changed parts")
}

// FuzzEncryptedPackageEngines compares the template path with the DOM
// engine on fuzzed roots and ciphertext parts of an encrypted package
// whose shape is learned: the same verdict, and for accepted packages the
// same facts and forwarded root.
func FuzzEncryptedPackageEngines(f *testing.F) {
	fx := newFixture(f, nil, testOptions())
	learnRoot, learnAtts := fx.encPackage(f, envelope(false, 3, "learn"), "learn", fx.gw)
	if _, _, err := verifyPackage(fx.engine, fx.policy, learnRoot, learnAtts, fx.now); err != nil {
		f.Fatal(err)
	}
	seed, atts := fx.encPackage(f, envelope(false, 4, "seed"), "seed", fx.gw)
	c := encCase{root: seed}
	m := cipherInclude.FindAllSubmatch(seed, -1)
	c.ekCID, c.edCID = string(m[0][1]), string(m[1][1])
	f.Add(seed, atts.ByID[c.ekCID].Data, atts.ByID[c.edCID].Data)
	f.Fuzz(func(t *testing.T, root, ek, ed []byte) {
		a := atts.Clone()
		a.ByID[c.ekCID] = &testmime.Part{ID: c.ekCID, Head: a.ByID[c.ekCID].Head, Data: ek}
		a.ByID[c.edCID] = &testmime.Part{ID: c.edCID, Head: a.ByID[c.edCID].Head, Data: ed}
		got, gout, gerr := verifyPackage(fx.engine, fx.policy, root, a, fx.now)
		want, wout, werr := verifyPackage(fx.dom, fx.policy, root, a.Clone(), fx.now)
		if d := Compare(got, gerr, want, werr, fx.policy); d != "" {
			t.Fatalf("engines disagree: %s (template %v, DOM %v)", d, gerr, werr)
		}
		if !bytes.Equal(gout, wout) {
			t.Fatalf("engines forward different bytes")
		}
	})
}
