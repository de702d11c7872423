package signer

import (
	"fmt"
	"net/textproto"

	"github.com/wssgw/wssgw/internal/c14n"
	wcrypto "github.com/wssgw/wssgw/internal/crypto"
)

// placeholder writes what stands for the ds:Signature in the root part.
func (rt *streamRoot) placeholder(b *buf) {
	if rt.s.o.StrictXOP {
		rt.encryptedSignature(b)
		return
	}
	// Seed 001 §3: the signature's content is XOP-included from the last
	// part. Not strictly XOP (ds:Signature is not base64Binary): the
	// strict variant below is.
	rt.p.signatureStart(b)
	xopInclude(b, rt.s.sigCID)
	b.close("ds:Signature")
}

func xopInclude(b *buf, cid string) {
	b.open("xop:Include")
	b.attr("xmlns:xop", nsXOP)
	b.attr("href", "cid:"+escapeCID(cid))
	b.empty("xop:Include")
}

// encryptedSignature writes the strict variant's xenc:EncryptedData: the
// whole ds:Signature encrypted (Type Element, XMLEnc §3.5.2) with the key
// of the EncryptedKey before it, its CipherValue the XOP-included last
// part (base64Binary, so XOP 1.0 §3 applies as written).
func (rt *streamRoot) encryptedSignature(b *buf) {
	rt.p.encryptedDataHead(b, typeElement, false)
	b.open("xenc:CipherValue")
	b.end()
	xopInclude(b, rt.s.sigCID)
	b.close("xenc:CipherValue")
	b.close("xenc:CipherData")
	b.close("xenc:EncryptedData")
}

// trailer completes SignedInfo, signs it and returns the last part: the
// ds:Signature content, or in the strict variant the ciphertext of the
// whole ds:Signature.
func (rt *streamRoot) trailer() (textproto.MIMEHeader, []byte, error) {
	sig, err := rt.signSignedInfo()
	if err != nil {
		return nil, nil, err
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-ID", "<"+rt.s.sigCID+">")
	h.Set("Content-Transfer-Encoding", "binary")
	var b buf
	if !rt.s.o.StrictXOP {
		rt.p.signatureContent(&b, rt.digests, sig)
		h.Set("Content-Type", SignaturePartType)
		return h, b, nil
	}
	rt.p.signature(&b, rt.digests, sig)
	ct, err := wcrypto.EncryptData(rt.s.r.DataAlgorithm, rt.key, b, rt.s.r.Rand)
	if err != nil {
		return nil, nil, fmt.Errorf("signer: encrypt the signature: %w", err)
	}
	h.Set("Content-Type", CipherPartType)
	return h, ct, nil
}

// signSignedInfo canonicalizes SignedInfo where it will be after
// reassembly (inside the header, in the root part's namespace context)
// and signs it (XMLDSig §3.1.2).
func (rt *streamRoot) signSignedInfo() ([]byte, error) {
	msg := assemble(rt.env.d, rt.edits, rt.p.security(rt.digests, nil), nil)
	doc := getDoc()
	defer putDoc(doc)
	if err := rt.s.r.Gate.Scan(msg, doc); err != nil {
		return nil, fmt.Errorf("signer: assembled message fails the gate: %w", err)
	}
	si, err := signedInfo(doc, rt.p.sigID)
	if err != nil {
		return nil, err
	}
	c, err := c14n.Exclusive(doc, si, prefixesIf(rt.s.r, rt.p.siPrefixes), false, nil)
	if err != nil {
		return nil, fmt.Errorf("signer: canonicalize SignedInfo: %w", err)
	}
	sig, err := signSignedInfo(rt.s.r.SignatureAlgorithm, rt.s.r.Signer, c)
	if err != nil {
		return nil, fmt.Errorf("signer: sign: %w", err)
	}
	return sig, nil
}
