package dom

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"net/textproto"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/c14n"
	"github.com/wssgw/wssgw/internal/swa"
	"github.com/wssgw/wssgw/internal/testmime"
)

// FuzzProcessAttachments runs the engine's attachment path and the
// policy's attachment check on mutated packages: the root part and two
// parts (cid:p1, cid:p2) with their Content-Type, and a
// Content-Description on p1 that the Complete transform covers. The seeds
// are valid signed packages: XOP, SwA (Content and Complete, text, XML and
// binary), an encrypted attachment, and a BinarySecurityToken held in a
// part (WSS4J storeBytesInAttachment). No input may panic, and an accepted
// package has every part referenced by the message and, since the policy
// requires a signature, signed or consumed as ciphertext (DESIGN.md §5.4).
func FuzzProcessAttachments(f *testing.F) {
	fx := newAttFixture(f)
	pol := fx.policy(f)
	for _, s := range attachmentSeeds(f, fx) {
		f.Add(s.root, s.ct1, s.desc1, s.p1, s.ct2, s.p2)
	}
	f.Fuzz(func(t *testing.T, root []byte, ct1, desc1 string, p1 []byte, ct2 string, p2 []byte) {
		atts := testmime.New(fuzzPart("p1", ct1, desc1, p1), fuzzPart("p2", ct2, "", p2))
		res, _, err := pol.VerifyAttachments(t.Context(), fx.e, root, atts, fx.now)
		if err != nil {
			return
		}
		if len(res.Attachments) != 2 {
			t.Fatalf("accepted with %d attachment facts for 2 parts", len(res.Attachments))
		}
		for i := range res.Attachments {
			a := &res.Attachments[i]
			if !a.Referenced() {
				t.Fatalf("accepted with unreferenced attachment <%s>", a.CID)
			}
			if !a.Consumed && !res.AttachmentSignedByTrusted(a) {
				t.Fatalf("accepted with unsigned attachment <%s>", a.CID)
			}
		}
	})
}

func fuzzPart(id, ct, desc string, data []byte) *testmime.Part {
	p := testmime.NewPart(id, ct, data)
	if desc != "" {
		p.Head.Set("Content-Description", desc)
	}
	return p
}

// attachmentSeed is one package of FuzzProcessAttachments.
type attachmentSeed struct {
	root            []byte
	ct1, desc1, ct2 string
	p1, p2          []byte
}

// attachmentSeeds are signed packages that the engine and the policy
// accept; the test that they do keeps the seeds meaningful.
func attachmentSeeds(t testing.TB, fx *attFixture) []attachmentSeed {
	d1, d2 := bytes.Repeat([]byte{0, 1, 0xff, '\n'}, 50), []byte("\x89PNG\r\n")
	xopSigned := inlineBody(base64.StdEncoding.EncodeToString(d1), base64.StdEncoding.EncodeToString(d2))
	xop := fx.signed(t, "", "", xopBody("cid:p1", "cid:p2"), []ref{{"#Body", c14n.AlgExcC14N, bodyDigest(t, xopSigned)}})

	body := inlineBody("x")
	bodyRef := ref{"#Body", c14n.AlgExcC14N, bodyDigest(t, body)}
	text, xml := []byte("line 1\nline 2\r"), []byte(`<a xmlns="urn:a"><!-- c --><b c='1'/></a>`)
	h1 := textproto.MIMEHeader{"Content-Type": {"text/plain; charset=UTF-8"}, "Content-Id": {"<p1>"}, "Content-Description": {"=?utf-8?q?caf=C3=A9?="}}
	h2 := textproto.MIMEHeader{"Content-Type": {"application/xml"}, "Content-Id": {"<p2>"}}
	swaMsg := fx.signed(t, "", "", body, []ref{bodyRef,
		{"cid:p1", trSwAComplete, swaDigest(t, swa.CompleteTransform, h1, text)},
		{"cid:p2", trSwAContent, swaDigest(t, swa.ContentTransform, h2, xml)}})

	plain := []byte("attachment plaintext")
	enc, ct := fx.encryptedAttachment(t, "p1", typeSwAContent, "text/plain", plain)
	encMsg := fx.signed(t, enc, "", body, []ref{bodyRef, {"cid:p1", trSwAContent, sha(plain)}, {"cid:p2", trSwAContent, sha(d2)}})

	// WSS4J storeBytesInAttachment (CXF with MTOM, issue 15): the
	// BinarySecurityToken's certificate in p1, consumed; p2 in the Body.
	bstSigned := inlineBody(base64.StdEncoding.EncodeToString(d2))
	bstXOP := fx.signed(t, "", "", xopBody("cid:p2"), []ref{{"#Body", c14n.AlgExcC14N, bodyDigest(t, bstSigned)}})
	bstXOP = bytes.Replace(bstXOP, []byte(base64.StdEncoding.EncodeToString(fx.signer.Cert.Raw)), []byte(`<xop:Include `+xopNS+` href="cid:p1"/>`), 1)

	seeds := []attachmentSeed{
		{root: xop, ct1: "application/octet-stream", p1: d1, ct2: "image/png", p2: d2},
		{root: bstXOP, ct1: "application/ciphervalue", p1: fx.signer.Cert.Raw, ct2: "image/png", p2: d2},
		{root: swaMsg, ct1: h1.Get("Content-Type"), desc1: h1.Get("Content-Description"), p1: text, ct2: h2.Get("Content-Type"), p2: xml},
		{root: encMsg, ct1: "application/octet-stream", p1: ct, ct2: "image/png", p2: d2},
	}
	pol := fx.policy(t)
	for i, s := range seeds {
		atts := testmime.New(fuzzPart("p1", s.ct1, s.desc1, s.p1), fuzzPart("p2", s.ct2, "", s.p2))
		_, _, err := pol.VerifyAttachments(t.Context(), fx.e, s.root, atts, fx.now)
		require.NoError(t, err, "seed %d", i)
	}
	return seeds
}

// swaDigest is the SHA-256 of a part through an SwA transform.
func swaDigest(t testing.TB, transform string, h textproto.MIMEHeader, data []byte) []byte {
	d := sha256.New()
	w, err := swa.NewWriter(d, transform, h, swa.Options{MaxXML: 1 << 20})
	require.NoError(t, err)
	_, err = w.Write(data)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return d.Sum(nil)
}
