package signer

import (
	"encoding/hex"
	"fmt"
	"io"

	"github.com/wssgw/wssgw/internal/c14n"
	wcrypto "github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// Secure returns envelope with a wsse:Security header added: a Timestamp
// (unless o.TTL < 0), the signer's token reference, an XML Signature over
// the Body, the Timestamp and the o.SignHeaders blocks present, and, when
// o.EncryptFor is set, the Body content encrypted after signing. The input
// must be a plain SOAP 1.1 or 1.2 envelope that passes the xmlscan gate and
// has no wsse:Security header yet. The output passes the gate too.
func Secure(envelope []byte, o Options) ([]byte, error) {
	r, err := o.resolve()
	if err != nil {
		return nil, err
	}
	env, err := parseEnvelope(r.Gate, envelope, r.SignHeaders)
	if err != nil {
		return nil, err
	}
	defer putDoc(env.d)
	p, edits, err := newPlan(r, env)
	if err != nil {
		return nil, err
	}
	addSwARefs(p, r.SwA)
	d := env.d
	body := &d.Elements[env.body]

	var encBody []byte
	if r.EncryptFor != nil {
		// Encrypt the Body's raw content bytes: they are well-formed in the
		// Body's namespace context, which is where a decryptor splices (or,
		// like Santuario, parses in a wrapper carrying the in-scope
		// declarations of) the plaintext (XMLEnc §4.3 step 3.3).
		key := make([]byte, r.dataKeyLen)
		if _, err := io.ReadFull(r.Rand, key); err != nil {
			return nil, fmt.Errorf("signer: random key: %w", err)
		}
		if p.ekCipher, err = encryptKey(r.KeyTransport, r.EncryptFor.PublicKey, key); err != nil {
			return nil, err
		}
		ct, err := wcrypto.EncryptData(r.DataAlgorithm, key, d.Data[body.StartEnd:body.EndStart], r.Rand)
		if err != nil {
			return nil, err
		}
		encBody = p.encryptedData(ct)
	}

	// 1. The message with empty DigestValues: digest every reference.
	doc := getDoc()
	defer putDoc(doc)
	// One buffer for the three passes: each pass's message is dead once
	// the next is built (its digests, canonical SignedInfo and signature
	// are copies), and the slack holds what pass 1 leaves out (digest and
	// signature values, the encrypted Body).
	sec := p.security(nil, nil)
	buf := make([]byte, 0, assembledLen(d, edits, sec, encBody)+secureSlack)
	msg := assembleInto(buf, d, edits, sec, nil)
	if err := r.Gate.Scan(msg, doc); err != nil {
		return nil, fmt.Errorf("signer: assembled message fails the gate: %w", err)
	}
	idx, err := findIDs(doc, p.refs)
	if err != nil {
		return nil, err
	}
	digests := make([][]byte, len(p.refs))
	h := newDigest(r.DigestAlgorithm)
	var replace c14n.Replacer
	if r.XOP != nil {
		if replace, err = xopReplacer(doc, idx, r.XOP); err != nil {
			return nil, err
		}
	}
	swaNext := 0
	for i, rf := range p.refs {
		h.Reset()
		if rf.cid != "" {
			if err := digestSwA(h, r.SwA[swaNext], r); err != nil {
				return nil, err
			}
			swaNext++
			digests[i] = h.Sum(nil)
			continue
		}
		// XMLDSig §4.4.3.3: a bare "#id" selects the element without
		// comments; exc-c14n is the single transform (BSP R5423).
		if err := canonicalize(h, doc, idx[i], prefixesIf(r, rf.prefixes), replace); err != nil {
			return nil, fmt.Errorf("signer: canonicalize #%s: %w", rf.id, err)
		}
		digests[i] = h.Sum(nil)
	}

	// 2. With the digests in place: canonicalize SignedInfo and sign it
	// (XMLDSig §3.1.2).
	msg = assembleInto(msg, d, edits, p.security(digests, nil), nil)
	doc.Reset()
	if err := r.Gate.Scan(msg, doc); err != nil {
		return nil, fmt.Errorf("signer: assembled message fails the gate: %w", err)
	}
	si, err := signedInfo(doc, p.sigID)
	if err != nil {
		return nil, err
	}
	c, err := c14n.Exclusive(doc, si, prefixesIf(r, p.siPrefixes), false, nil)
	if err != nil {
		return nil, fmt.Errorf("signer: canonicalize SignedInfo: %w", err)
	}
	sig, err := signSignedInfo(r.SignatureAlgorithm, r.Signer, c)
	if err != nil {
		return nil, fmt.Errorf("signer: sign: %w", err)
	}

	// 3. The final message, Body content encrypted after signing.
	msg = assembleInto(msg, d, edits, p.security(digests, sig), encBody)
	doc.Reset()
	if err := r.Gate.Scan(msg, doc); err != nil {
		return nil, fmt.Errorf("signer: secured message fails the gate: %w", err)
	}
	return msg, nil
}

// canonicalize writes the exclusive canonical form of element elem,
// with the xop:Includes replace claims written as their parts' base64.
func canonicalize(w io.Writer, d *xmlscan.Document, elem int, prefixes []string, replace c14n.Replacer) error {
	if replace == nil {
		return c14n.ExclusiveTo(w, d, elem, prefixes, false)
	}
	return c14n.CanonicalizeToReplacing(w, c14n.AlgExcC14N, d, elem, prefixes, replace)
}

// secureSlack is room for the DigestValues and the SignatureValue that
// the first pass's message lacks (RSA-4096 is 684 base64 characters).
const secureSlack = 4 << 10

func prefixesIf(r *resolved, l []string) []string {
	if !r.InclusivePrefixes {
		return nil
	}
	return l
}

// newID returns prefix followed by 128 random bits in hex: an NCName (as
// xsd:ID requires) that cannot collide with the message's other ids.
func newID(r *resolved, prefix string) (string, error) {
	var b [16]byte
	if _, err := io.ReadFull(r.Rand, b[:]); err != nil {
		return "", fmt.Errorf("signer: random id: %w", err)
	}
	return prefix + hex.EncodeToString(b[:]), nil
}

// findIDs returns the element index of each reference's id in the scanned
// message, and fails if an id occurs twice: ids must be unique (XML 1.0
// Validity constraint: ID; WSS 1.1 SOAP Message Security §4), a duplicate
// is the first step of signature wrapping, and verifiers differ in which
// of the two they would pick.
func findIDs(d *xmlscan.Document, refs []ref) ([]int, error) {
	want := make(map[string]int, len(refs))
	out := make([]int, len(refs))
	for i, rf := range refs {
		out[i] = -1
		if rf.cid == "" { // a cid: Reference names a part, not an element
			want[rf.id] = i
		}
	}
	var tmp []byte
	for e := range d.Elements {
		for j := d.Elements[e].Attrs.Start; j < d.Elements[e].Attrs.End; j++ {
			a := &d.Attrs[j]
			if a.Local != "Id" || (a.Space != "" && a.Space != nsWSU) {
				continue
			}
			k, ok := want[string(d.AttrValue(j, tmp))]
			if !ok {
				continue
			}
			if out[k] >= 0 {
				return nil, fmt.Errorf("%w: id %q occurs more than once", ErrEnvelope, refs[k].id)
			}
			out[k] = e
		}
	}
	for i, e := range out {
		if e < 0 && refs[i].cid == "" {
			return nil, fmt.Errorf("signer: internal: id %q not found", refs[i].id)
		}
	}
	return out, nil
}

// signedInfo finds the SignedInfo of the ds:Signature with the given Id.
func signedInfo(d *xmlscan.Document, sigID string) (int, error) {
	for e := range d.Elements {
		el := &d.Elements[e]
		if el.Space != nsDS || el.Local != "Signature" {
			continue
		}
		if j := d.FindAttr(e, "", "Id"); j >= 0 && string(d.AttrValue(j, nil)) == sigID {
			if si := d.FirstChild(e); si >= 0 && d.Elements[si].Local == "SignedInfo" {
				return si, nil
			}
		}
	}
	return -1, fmt.Errorf("signer: internal: SignedInfo of %q not found", sigID)
}
