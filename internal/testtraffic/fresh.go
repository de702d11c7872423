package testtraffic

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strings"

	wcrypto "github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/signer"
)

// Fresh returns a fresh-shape message (issue 14: "the DOM path is what an
// attacker forces by sending fresh shapes"): an operation of the mix,
// validly signed with the generator's key, as an attacker who holds a
// trusted key sends it, in a structure no template store has seen. Each
// call draws, independently: the SOAP and addressing prefixes (random
// names), which addressing headers appear and in which order, one extra
// header block whose element name and namespace are unique to the message
// (signed or not), and the Security header's layout as far as the signer
// lets it vary: key reference form (BST, IssuerSerial, SKI, thumbprint),
// digest and signature algorithms, InclusiveNamespaces lists and
// mustUnderstand. The extra block alone makes every message a new shape.
func (g *Generator) Fresh() (Message, error) {
	st, o := g.freshShape()
	return g.sign(&st, &operations[g.opIndex()], o)
}

// freshShape draws Fresh's stack and signing options: a shape no store
// has seen.
func (g *Generator) freshShape() (stack, signer.Options) {
	st := stacks[g.r.IntN(len(stacks))] // a copy, changed below
	st.name = "fresh"
	st.soapPfx, st.wsaPfx = g.prefix(), g.prefix()
	headers := append([]string(nil), st.headers...)
	g.r.Shuffle(len(headers), func(i, j int) { headers[i], headers[j] = headers[j], headers[i] })
	st.headers = headers[:1+g.r.IntN(len(headers))]
	id := g.r.Uint64()
	pfx, local, ns := g.prefix(), fmt.Sprintf("Trace%016x", id), fmt.Sprintf("urn:fresh:%016x", id)
	st.extra = fmt.Sprintf(`<%s:%s xmlns:%s="%s">%d</%s:%s>`, pfx, local, pfx, ns, g.r.IntN(1e6), pfx, local)
	st.keyRef = []string{signer.RefBST, signer.RefIssuerSerial, signer.RefSKI, signer.RefThumbprint}[g.r.IntN(4)]
	st.inclusive = g.r.IntN(2) == 0
	o := g.options(&st)
	if g.r.IntN(2) == 0 {
		o.SignHeaders = append(o.SignHeaders, xml.Name{Space: ns, Local: local})
	}
	o.MustUnderstand = g.r.IntN(2) == 0
	o.DigestAlgorithm = []string{wcrypto.AlgDigestSHA256, wcrypto.AlgDigestSHA384, wcrypto.AlgDigestSHA512}[g.r.IntN(3)]
	o.SignatureAlgorithm = []string{wcrypto.AlgRSASHA256, wcrypto.AlgRSASHA384, wcrypto.AlgRSASHA512}[g.r.IntN(3)]
	return st, o
}

// NewPartner returns n messages of one new shape, drawn as Fresh draws
// it, each with its own payload, ids and Timestamp: a partner whose stack
// the gateway has not seen yet and who keeps sending. Unlike Fresh's
// one-off shapes, this one is legitimate traffic the gateway must serve
// while fresh shapes flood it, and learn at its second sight (issue 14,
// templates.learnAfter).
func (g *Generator) NewPartner(n int) ([]Message, error) { return g.NewPartnerWith(g.kp, n) }

// NewPartnerWith is NewPartner signed with kp instead of the generator's
// key: a new partner with a certificate of its own, as real partners
// have, beside a fresh-shape flood signed with the generator's key (an
// attacker holding one trusted key). The gateway's first-sight lanes are
// per claimed signer (issue 14), so whose key signs decides which lane a
// new shape waits in. The shape is drawn from the generator's stream as
// NewPartner draws it.
func (g *Generator) NewPartnerWith(kp *wcrypto.KeyPair, n int) ([]Message, error) {
	st, o := g.freshShape()
	st.name = "new-partner"
	o.Signer, o.Certificate = kp.Signer, kp.Certificate
	op := &operations[g.opIndex()]
	out := make([]Message, n)
	for i := range out {
		m, err := g.sign(&st, op, o)
		if err != nil {
			return nil, err
		}
		out[i] = m
	}
	return out, nil
}

// FreshGarbage returns a signed-looking message a verifier must parse and
// reject: a Fresh message whose SignatureValue is changed (each base64
// character shifted, so it stays valid base64 of the same length). Its
// digests are right, so a verifier that hashes the signed parts before the
// SignatureValue does all of that work before it fails; wssgw's DOM engine
// checks the SignatureValue first (after the gate scan), so for it this is
// what a sender without a key can force: a fresh shape's parse and one RSA
// verification.
func (g *Generator) FreshGarbage() (Message, error) {
	m, err := g.Fresh()
	if err != nil {
		return m, err
	}
	m.Stack = "fresh-garbage"
	m.Signed = corruptSignatureValue(m.Signed)
	return m, nil
}

// corruptSignatureValue shifts each base64 character of the first
// SignatureValue's text to the next one of the alphabet, except the last:
// it carries the padding bits a strict decoder checks, and the point is a
// value that decodes, to a wrong signature.
func corruptSignatureValue(msg []byte) []byte {
	out := bytes.Clone(msg)
	i := bytes.Index(out, []byte("SignatureValue>"))
	if i < 0 {
		return out
	}
	start := i + len("SignatureValue>")
	end := start + bytes.IndexByte(out[start:], '<')
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	last := bytes.LastIndexAny(out[start:end], alphabet)
	for j := start; j < start+last; j++ {
		if k := strings.IndexByte(alphabet, out[j]); k >= 0 {
			out[j] = alphabet[(k+1)%len(alphabet)]
		}
	}
	return out
}

// prefix is a random namespace prefix, as stacks that number theirs
// (ns1, ns2, ...) or generate them write.
func (g *Generator) prefix() string {
	return fmt.Sprintf("p%x", g.r.Uint32())
}
