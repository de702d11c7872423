package dom

import (
	"bytes"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"errors"
	"hash"
	"io"
	"strconv"
	"strings"

	"github.com/wssgw/wssgw/internal/c14n"
	"github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// signature verifies a ds:Signature of our Security header: SignedInfo
// first, with a key from the trust store (W3C XMLDSig Best Practice 1:
// authenticate before anything else), then every Reference, reading
// References from the canonical SignedInfo bytes that were verified
// (security.md A8).
func (m *message) signature(s int) error {
	m.signatures++
	kids := m.children(s)
	if len(kids) < 2 || len(kids) > 3 || !m.is(kids[0], nsDS, "SignedInfo") || !m.is(kids[1], nsDS, "SignatureValue") ||
		(len(kids) == 3 && !m.is(kids[2], nsDS, "KeyInfo")) {
		// No ds:Object: Manifests and enveloping content have no place in
		// WS-Security (BSP R5403).
		return wss.Failf(wss.ReasonStructure, "Signature must hold SignedInfo, SignatureValue and KeyInfo")
	}
	if len(kids) < 3 {
		return wss.Failf(wss.ReasonToken, "Signature without KeyInfo")
	}
	si := kids[0]
	method, c14nAlg, prefixes, err := m.signedInfoHeader(si)
	if err != nil {
		return err
	}
	// Into the scratch buffer: nothing keeps canon past this signature
	// (the replay key is its digest; m.sd is reset before the next).
	canon, err := c14n.Canonicalize(c14nAlg, m.doc, si, prefixes, m.canon[:0])
	m.canon = canon[:0]
	if err != nil {
		return wss.Wrap(wss.ReasonMalformed, err, "canonicalizing SignedInfo")
	}
	ref, err := m.keyInfo(kids[2])
	if err != nil {
		return err
	}
	sig := wss.Signature{KeyReference: ref.kind, Method: method, C14N: c14nAlg}
	key, err := m.verificationKey(ref, method, &sig)
	if err != nil {
		return err
	}
	value, err := b64(m.text(kids[1]))
	if err != nil {
		return err
	}
	sig.SignedInfoDigest = sha256.Sum256(canon) // the replay key, and the signed digest for SHA-256 methods
	if err := crypto.VerifySignatureSHA256(method, key, canon, &sig.SignedInfoDigest, value); err != nil {
		return wss.Wrap(wss.ReasonSignature, err, "SignatureValue")
	}
	sig.SignatureValue = value
	var parts []*wss.AttachmentFact
	if sig.Covered, parts, err = m.references(canon); err != nil {
		return err
	}
	if ref.token >= 0 {
		m.res.Token = ref.token
	}
	for _, f := range parts {
		f.SwA = true
		f.Signatures = appendOnce(f.Signatures, len(m.res.Signatures))
	}
	m.res.Signatures = append(m.res.Signatures, sig)
	return nil
}

// signedInfoHeader checks CanonicalizationMethod and SignatureMethod against
// the policy before any key is touched (DESIGN.md §5.2).
func (m *message) signedInfoHeader(si int) (method, alg string, prefixes []string, err error) {
	kids := m.children(si)
	if len(kids) < 3 || !m.is(kids[0], nsDS, "CanonicalizationMethod") || !m.is(kids[1], nsDS, "SignatureMethod") {
		return "", "", nil, wss.Failf(wss.ReasonStructure, "malformed SignedInfo")
	}
	if alg, prefixes, err = m.c14nMethod(kids[0]); err != nil {
		return "", "", nil, err
	}
	sm := kids[1]
	method, _ = m.attr(sm, "", "Algorithm")
	if err := m.allow(wss.UseSignature, method); err != nil {
		return "", "", nil, err
	}
	for _, c := range m.children(sm) {
		if !m.is(c, nsDS, "HMACOutputLength") {
			return "", "", nil, wss.Failf(wss.ReasonStructure, "unexpected %s in SignatureMethod", m.name(c))
		}
		// A truncated HMAC is forgeable (CVE-2009-0217); only the full
		// output length may be stated.
		n, err := strconv.Atoi(strings.TrimSpace(m.text(c)))
		if err != nil || n != crypto.HMACOutputBits(method) {
			return "", "", nil, wss.Failf(wss.ReasonAlgorithm, "HMACOutputLength other than the full output")
		}
	}
	for _, r := range kids[2:] {
		if !m.is(r, nsDS, "Reference") {
			return "", "", nil, wss.Failf(wss.ReasonStructure, "unexpected %s in SignedInfo", m.name(r))
		}
	}
	return method, alg, prefixes, nil
}

// c14nMethod reads a CanonicalizationMethod (or a c14n Transform): the
// algorithm, which must be allowed, and an optional InclusiveNamespaces
// PrefixList for exclusive c14n.
func (m *message) c14nMethod(cm int) (string, []string, error) {
	alg, _ := m.attr(cm, "", "Algorithm")
	if err := m.allow(wss.UseC14N, alg); err != nil {
		return "", nil, err
	}
	var prefixes []string
	for _, c := range m.children(cm) {
		if !m.is(c, nsExcC14N, "InclusiveNamespaces") || alg != c14n.AlgExcC14N || prefixes != nil {
			return "", nil, wss.Failf(wss.ReasonStructure, "unexpected %s in a c14n method", m.name(c))
		}
		list, _ := m.attr(c, "", "PrefixList")
		p, err := c14n.ParsePrefixList(list)
		if err != nil {
			return "", nil, wss.Wrap(wss.ReasonMalformed, err, "PrefixList")
		}
		prefixes = append([]string{}, p...)
	}
	return alg, prefixes, nil
}

// verificationKey resolves the signing key: a trusted certificate's public
// key, or for HMAC a key the message transported in an EncryptedKey. An
// HMAC method never takes a public key (xml-crypto GHSA-c27r-x354-4m68);
// crypto.VerifySignatureSHA256 enforces the same binding.
func (m *message) verificationKey(ref *tokenRef, method string, sig *wss.Signature) (any, error) {
	m.use(wss.UseKeyReference, ref.kind)
	if ref.key != nil {
		sig.KeyBits = 8 * len(ref.key)
		return crypto.HMACKey(ref.key), nil
	}
	id, err := m.trusted(ref)
	if err != nil {
		return nil, err
	}
	sig.Signer = id
	sig.KeyBits = crypto.SignatureKeyBits(id.Certificate.PublicKey)
	m.use(wss.UseKeySize, strconv.Itoa(sig.KeyBits))
	return id.Certificate.PublicKey, nil
}

// references checks every Reference of the verified canonical SignedInfo
// and returns the start offsets of the elements they cover and the
// attachments their SwA References cover.
func (m *message) references(canon []byte) ([]int, []*wss.AttachmentFact, error) {
	sd := m.sd
	if err := xmlscan.Scan(canon, sd); err != nil {
		return nil, nil, wss.Wrap(wss.ReasonMalformed, err, "canonical SignedInfo")
	}
	var covered []int
	var parts []*wss.AttachmentFact
	for r := sd.FirstChild(0); r >= 0; r = sd.NextSibling(r) {
		if e := &sd.Elements[r]; e.Space != nsDS || e.Local != "Reference" {
			continue
		}
		if uri := attrOf(sd, r, "URI"); isCID(uri) {
			f, err := m.swaReference(sd, r, uri)
			if err != nil {
				return nil, nil, err
			}
			for _, g := range parts {
				if g == f {
					return nil, nil, wss.Failf(wss.ReasonReference, "attachment referenced twice")
				}
			}
			parts = append(parts, f)
			continue
		}
		start, err := m.reference(sd, r)
		if err != nil {
			return nil, nil, err
		}
		for _, c := range covered {
			if c == start {
				return nil, nil, wss.Failf(wss.ReasonReference, "element referenced twice")
			}
		}
		covered = append(covered, start)
	}
	if len(covered)+len(parts) == 0 {
		return nil, nil, wss.Failf(wss.ReasonReference, "SignedInfo without References")
	}
	return covered, parts, nil
}

// referenceParts splits a Reference into Transforms, DigestMethod and
// DigestValue (-1 when absent), in XMLDSig §4.4.3 order.
func referenceParts(sd *xmlscan.Document, r int) (transforms, dm, dv int, err error) {
	transforms, dm, dv = -1, -1, -1
	for c := sd.FirstChild(r); c >= 0; c = sd.NextSibling(c) {
		switch e := &sd.Elements[c]; {
		case e.Space == nsDS && e.Local == "Transforms" && transforms < 0 && dm < 0:
			transforms = c
		case e.Space == nsDS && e.Local == "DigestMethod" && dm < 0:
			dm = c
		case e.Space == nsDS && e.Local == "DigestValue" && dm >= 0 && dv < 0:
			dv = c
		default:
			return -1, -1, -1, wss.Failf(wss.ReasonStructure, "malformed Reference")
		}
	}
	if dm < 0 || dv < 0 {
		return -1, -1, -1, wss.Failf(wss.ReasonStructure, "Reference without DigestMethod and DigestValue")
	}
	return transforms, dm, dv, nil
}

// reference checks one same-document Reference read from the canonical
// SignedInfo sd.
func (m *message) reference(sd *xmlscan.Document, r int) (int, error) {
	uri := attrOf(sd, r, "URI")
	target, err := m.resolve(uri)
	if err != nil {
		return -1, err
	}
	transforms, dm, dv, err := referenceParts(sd, r)
	if err != nil {
		return -1, err
	}
	digestAlg := attrOf(sd, dm, "Algorithm")
	if err := m.allow(wss.UseDigest, digestAlg); err != nil {
		return -1, err
	}
	alg, prefixes, covered, deref, err := m.transforms(sd, transforms, target)
	if err != nil {
		return -1, err
	}
	if f := m.doc.Elements[covered].Flags; f&(xmlscan.FlagComment|xmlscan.FlagCDATA) != 0 {
		// Comments and CDATA split text differently for different
		// processors (security.md A9); signed parts carry none.
		return -1, wss.Failf(wss.ReasonStructure, "comment or CDATA inside a signed element")
	}
	// Into buffers on the stack: a DigestValue is at most a SHA-512
	// (issue 14: the DOM engine's allocations per fresh-shape message).
	var wantBuf, sumBuf [sha512.Size]byte
	want, err := wss.AppendBase64(wantBuf[:0], sd.Text(dv, nil))
	if err != nil {
		return -1, err
	}
	h, err := m.digest(digestAlg)
	if err != nil {
		return -1, wss.Wrap(wss.ReasonAlgorithm, err, "DigestMethod")
	}
	var ok bool
	switch {
	case deref:
		err = m.strDereferenced(h, alg, covered)
	case m.hasXOP(covered):
		ok, err = m.xopDigestMatches(h, digestAlg, alg, covered, prefixes, want)
	default:
		err = c14n.CanonicalizeTo(h, alg, m.doc, covered, prefixes)
	}
	if err != nil {
		var we *wss.Error
		if errors.As(err, &we) {
			return -1, we
		}
		return -1, wss.Wrap(wss.ReasonMalformed, err, "canonicalizing %s", m.name(covered))
	}
	if !ok && subtle.ConstantTimeCompare(h.Sum(sumBuf[:0]), want) != 1 {
		return -1, wss.Failf(wss.ReasonDigest, "digest of %s does not match", m.name(covered))
	}
	return m.start(covered), nil
}

// xopDigestMatches digests element covered as its XOP infoset, in both
// base64 forms (xopDigest), and reports whether either matches want.
func (m *message) xopDigestMatches(h hash.Hash, digestAlg, alg string, covered int, prefixes []string, want []byte) (bool, error) {
	h2, err := crypto.NewDigest(digestAlg)
	if err != nil {
		return false, err
	}
	x := &xopDigest{a: h, b: h2}
	if err := c14n.CanonicalizeToReplacing(x, alg, m.doc, covered, prefixes, m.xopReplacer(x)); err != nil {
		return false, err
	}
	a := subtle.ConstantTimeCompare(h.Sum(nil), want)
	b := subtle.ConstantTimeCompare(h2.Sum(nil), want)
	return a|b == 1, nil
}

// transforms checks a Reference's Transforms against the allow-list:
// exactly one exclusive c14n (BSP R5412, R5416), or an STR-Transform whose
// parameters name exclusive c14n (WSS 1.1 §8.3), or none at all only when
// inclusive c14n is allowed (XMLDSig §4.4.3.2: a node-set is converted with
// C14N 1.0).
// It returns the c14n to apply, the element it applies to and whether that
// element is a token dereferenced by an STR-Transform.
func (m *message) transforms(sd *xmlscan.Document, ts, target int) (string, []string, int, bool, error) {
	if ts < 0 {
		if err := m.allow(wss.UseC14N, c14n.AlgC14N10); err != nil {
			return "", nil, -1, false, err
		}
		return c14n.AlgC14N10, nil, target, false, nil
	}
	t := sd.FirstChild(ts)
	if t < 0 || sd.NextSibling(t) >= 0 || sd.Elements[t].Local != "Transform" || sd.Elements[t].Space != nsDS {
		return "", nil, -1, false, wss.Failf(wss.ReasonAlgorithm, "a Reference must have exactly one Transform")
	}
	alg := attrOf(sd, t, "Algorithm")
	if alg == trSTR {
		m.use(wss.UseC14N, trSTR)
		alg, tok, err := m.strTransform(sd, t, target)
		return alg, nil, tok, err == nil, err
	}
	if err := m.allow(wss.UseC14N, alg); err != nil {
		return "", nil, -1, false, err
	}
	prefixes, err := inclusiveNamespaces(sd, t, alg)
	return alg, prefixes, target, false, err
}

// strTransform dereferences a SecurityTokenReference to the token it names
// and canonicalizes the token (WSS 1.1 §8.3). Only direct references to a
// BinarySecurityToken of our Security header are supported.
func (m *message) strTransform(sd *xmlscan.Document, t, target int) (string, int, error) {
	if !m.is(target, nsWSSE, "SecurityTokenReference") {
		return "", -1, wss.Failf(wss.ReasonReference, "STR-Transform on %s", m.name(target))
	}
	tp := sd.FirstChild(t)
	if tp < 0 || sd.Elements[tp].Local != "TransformationParameters" || sd.Elements[tp].Space != nsWSSE {
		return "", -1, wss.Failf(wss.ReasonStructure, "STR-Transform without TransformationParameters")
	}
	cm := sd.FirstChild(tp)
	if cm < 0 || sd.Elements[cm].Local != "CanonicalizationMethod" || sd.Elements[cm].Space != nsDS {
		return "", -1, wss.Failf(wss.ReasonStructure, "STR-Transform without CanonicalizationMethod")
	}
	alg := attrOf(sd, cm, "Algorithm")
	if err := m.allow(wss.UseC14N, alg); err != nil {
		return "", -1, err
	}
	if alg != c14n.AlgExcC14N {
		// strDereferenced renders the token with exclusive c14n only (BSP
		// R3065 names exc-c14n for the STR-Transform).
		return "", -1, wss.Failf(wss.ReasonAlgorithm, "STR-Transform CanonicalizationMethod %q", alg)
	}
	r, err := m.only(target, "SecurityTokenReference")
	if err != nil || !m.is(r, nsWSSE, "Reference") {
		return "", -1, wss.Failf(wss.ReasonReference, "STR-Transform needs a direct Reference")
	}
	uri, _ := m.attr(r, "", "URI")
	tok, err := m.resolve(uri)
	if err != nil {
		return "", -1, err
	}
	if !m.is(tok, nsWSSE, "BinarySecurityToken") || !m.inSecurity(tok) {
		return "", -1, wss.Failf(wss.ReasonReference, "STR-Transform to %s", m.name(tok))
	}
	if m.hasXOP(tok) {
		// What the dereferenced form of a token held in a MIME part is,
		// WSS 1.1 §8.3 does not say (the element, or its XOP infoset):
		// refused rather than guessed.
		return "", -1, wss.Failf(wss.ReasonReference, "STR-Transform to a BinarySecurityToken held in an attachment")
	}
	return alg, tok, nil
}

// strDereferenced writes the STR-Transform output for token tok: the token
// canonicalized with exclusive c14n, "#default" taken as an inclusive
// prefix, and the default namespace always rendered on the token, as
// xmlns="" when none is in scope (WSS SOAP Message Security 1.1 §8.3, STR
// Dereference Transform, step 3). This is the form Apache Santuario gives
// WSS4J (canonicalizeSubtree(token, "#default", propagateDefault=true)),
// checked against WSS4J messages in test/e2e. Exclusive c14n itself never
// emits xmlns="" on an apex, so it is added here: the default namespace
// node is first in c14n order, right after the element name.
func (m *message) strDereferenced(w io.Writer, alg string, tok int) error {
	out, err := c14n.Canonicalize(alg, m.doc, tok, []string{"#default"}, nil)
	if err != nil {
		return err
	}
	e := &m.doc.Elements[tok]
	head := "<" + e.Local
	if e.Prefix != "" {
		head = "<" + e.Prefix + ":" + e.Local
	}
	rest, ok := bytes.CutPrefix(out, []byte(head))
	if !ok {
		return wss.Failf(wss.ReasonMalformed, "unexpected canonical form of %s", m.name(tok))
	}
	if !bytes.HasPrefix(rest, []byte(` xmlns="`)) {
		out = append([]byte(head+` xmlns=""`), rest...)
	}
	_, err = w.Write(out)
	return err
}

// inclusiveNamespaces reads the PrefixList of an exclusive c14n Transform.
func inclusiveNamespaces(sd *xmlscan.Document, t int, alg string) ([]string, error) {
	in := sd.FirstChild(t)
	if in < 0 {
		return nil, nil
	}
	if e := &sd.Elements[in]; e.Local != "InclusiveNamespaces" || e.Space != nsExcC14N || alg != c14n.AlgExcC14N || sd.NextSibling(in) >= 0 {
		return nil, wss.Failf(wss.ReasonStructure, "unexpected content in a Transform")
	}
	p, err := c14n.ParsePrefixList(attrOf(sd, in, "PrefixList"))
	if err != nil {
		return nil, wss.Wrap(wss.ReasonMalformed, err, "PrefixList")
	}
	return append([]string{}, p...), nil
}

// attrOf returns the normalized value of an unqualified attribute.
func attrOf(d *xmlscan.Document, i int, local string) string {
	j := d.FindAttr(i, "", local)
	if j < 0 {
		return ""
	}
	return attrString(d, j)
}

// digest is a reset hash for DigestMethod alg, one kept per algorithm for
// the message's References: a message signs four or five parts, mostly
// with one digest, and each used to allocate its own.
func (m *message) digest(alg string) (hash.Hash, error) {
	for _, d := range m.digests {
		if d.alg == alg {
			d.h.Reset()
			return d.h, nil
		}
	}
	h, err := crypto.NewDigest(alg)
	if err != nil {
		return nil, err
	}
	m.digests = append(m.digests, keptDigest{alg, h})
	return h, nil
}

// keptDigest is a hash kept by message.digest.
type keptDigest struct {
	alg string
	h   hash.Hash
}
