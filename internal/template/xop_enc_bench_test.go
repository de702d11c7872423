package template

import (
	"testing"

	"github.com/wssgw/wssgw/internal/c14n"
	"github.com/wssgw/wssgw/internal/testmime"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// encMTOMFloorOf is the crypto floor of an encrypted MTOM package whose
// CipherValues are in parts: the key unwrap and the data decryption of the
// parts' octets (read beforehand), then, on the plaintext message, the
// digests of the canonical signed parts (precomputed) and the RSA
// verification of the canonical SignedInfo.
func encMTOMFloorOf(b *testing.B, f *fixture, root []byte, atts *testmime.Parts) *floor {
	t, caps := f.match(b, root)
	r := &run{t: t, data: root, caps: caps, atts: atts, e: f.engine, res: &wss.Result{}}
	if fb := r.attachments(); fb != nil {
		b.Fatal(fb)
	}
	var st *decStep
	for _, s := range t.steps {
		if s.dec != nil {
			st = s.dec
		}
	}
	if st == nil || !st.cipherPart || !st.dataPart {
		b.Fatal("not an encrypted package with its CipherValues in parts")
	}
	fl := &floor{pub: f.rsa.Cert.PublicKey, dec: st}
	var err error
	if fl.ek, err = r.cipherOctets(st.cipher, st.cipherPart); err != nil {
		b.Fatal(err)
	}
	if fl.cv, err = r.cipherOctets(st.data, st.dataPart); err != nil {
		b.Fatal(err)
	}
	pt, err := r.plaintextFor(st)
	if err != nil {
		b.Fatal(err)
	}
	a, z := r.at(st.start), r.at(st.end)
	doc := append(append(append([]byte(nil), root[:a]...), pt...), root[z:]...)
	mt := matcher{data: doc, budget: 1 << 30, limits: &f.engine.limits}
	inner := mt.walk(st.root, 0)
	if inner == nil {
		b.Fatal("the plaintext does not match the inner template")
	}
	r = &run{t: inner, data: doc, caps: mt.caps}
	sig := sigOf(inner)
	fl.signedInfo, fl.method = r.canon(nil, sig.signedInfo), sig.method
	fl.sigValue, _ = wss.DecodeBase64(r.val(sig.value))
	for _, rs := range sig.refs {
		if !rs.body {
			fl.parts = append(fl.parts, r.canon(nil, rs.canon))
			continue
		}
		var d xmlscan.Document
		if err := xmlscan.Scan(doc, &d); err != nil {
			b.Fatal(err)
		}
		c, err := c14n.Canonicalize(rs.alg, &d, inner.gbody.elem, rs.prefixes, nil)
		if err != nil {
			b.Fatal(err)
		}
		fl.parts = append(fl.parts, c)
	}
	if err := fl.run(); err != nil {
		b.Fatal(err)
	}
	return fl
}
