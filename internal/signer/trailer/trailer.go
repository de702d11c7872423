// Package trailer reverses signer.Stream for whoever receives a streamed
// response (`wssgw verify`, an egress side): the ds:Signature content that
// the streaming signer sent as the last MIME part (DESIGN.md §6) is put
// back into the root, decrypted first in the strict-XOP variant, and the
// package is then verified like any other by the DOM engine.
package trailer

import (
	"context"
	gocrypto "crypto"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/mime"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// ErrNeedKey: the trailing signature is encrypted (strict XOP) and no key
// was given to decrypt it.
var ErrNeedKey = errors.New("trailer: the trailing signature is encrypted: the requester's private key is needed")

// Verify verifies a package that may carry a trailing signature: Reassemble,
// then p's VerifyAttachments with the other attachments, the part that
// carried the signature left out. Errors of the reassembly are returned as
// they are; the verdict of the policy is a *wss.Error.
func Verify(ctx context.Context, p *wss.Policy, e wss.AttachmentEngine, pkg *mime.Package, key gocrypto.Decrypter, now time.Time) (res *wss.Result, forward []byte, err error) {
	root, cid, err := Reassemble(pkg, key)
	if err != nil {
		return nil, nil, err
	}
	return p.VerifyAttachments(ctx, e, root, wss.PackageAttachments(pkg, cid), now)
}

// Reassemble returns the root of pkg with its trailing signature put back,
// and the Content-ID of the part that carried it ("" when the package has
// no trailing signature and the root is returned as it is): the last part
// goes back into the ds:Signature that XOP-includes it, or, in the strict
// variant, is decrypted with key and put in place of the
// xenc:EncryptedData. A root that does not scan is returned as it is, for
// the engine to reject. key may be nil when the signature is not encrypted;
// an encrypted one then fails with ErrNeedKey.
func Reassemble(pkg *mime.Package, key gocrypto.Decrypter) ([]byte, string, error) {
	var d xmlscan.Document
	if err := xmlscan.Scan(pkg.RootBytes, &d); err != nil {
		return pkg.RootBytes, "", nil // the engine reports it
	}
	inc, strict := trailingInclude(&d)
	if inc < 0 {
		return pkg.RootBytes, "", nil
	}
	cid, err := mime.CIDFromURL(attrOf(&d, inc, "", "href"))
	if err != nil {
		return nil, "", fmt.Errorf("trailing signature: %w", err)
	}
	if len(pkg.Attachments) == 0 || pkg.Attachments[len(pkg.Attachments)-1].ContentID() != cid {
		return nil, "", fmt.Errorf("trailing signature: <%s> is not the last part", cid)
	}
	last := pkg.Attachments[len(pkg.Attachments)-1]
	content, err := readPart(last)
	if err != nil {
		return nil, "", err
	}
	if !strict {
		el := &d.Elements[inc]
		return splice(pkg.RootBytes, el.Start, el.End, content), cid, nil
	}
	if key == nil {
		return nil, "", ErrNeedKey
	}
	out, err := decryptTrailer(&d, inc, content, key)
	return out, cid, err
}

// trailingInclude finds the xop:Include that stands for a streamed
// signature: the only child of a ds:Signature (plain), or of the
// xenc:CipherValue of an xenc:EncryptedData (strict), in the Security
// header.
func trailingInclude(d *xmlscan.Document) (int, bool) {
	for e := range d.Elements {
		el := &d.Elements[e]
		if el.Space != xmlscan.NamespaceXOP || el.Local != "Include" || el.Parent < 0 {
			continue
		}
		p := &d.Elements[el.Parent]
		if p.Space == xmlscan.NamespaceDSig && p.Local == "Signature" {
			return e, false
		}
		if p.Space == xmlscan.NamespaceXEnc && p.Local == "CipherValue" {
			if ed := ancestor(d, e, xmlscan.NamespaceXEnc, "EncryptedData"); ed >= 0 && attrOf(d, ed, "", "Type") == xmlscan.TypeElement {
				return e, true
			}
		}
	}
	return -1, false
}

// decryptTrailer unwraps the data key of the EncryptedKey that lists the
// EncryptedData, decrypts the trailing part and returns the root with the
// ds:Signature in place of the EncryptedData and the EncryptedKey removed
// (it served only this EncryptedData).
func decryptTrailer(d *xmlscan.Document, inc int, ct []byte, key gocrypto.Decrypter) ([]byte, error) {
	ed := ancestor(d, inc, xmlscan.NamespaceXEnc, "EncryptedData")
	edID := attrOf(d, ed, "", "Id")
	ek := -1
	for e := range d.Elements {
		el := &d.Elements[e]
		if el.Space == xmlscan.NamespaceXEnc && el.Local == "DataReference" && attrOf(d, e, "", "URI") == "#"+edID {
			ek = ancestor(d, e, xmlscan.NamespaceXEnc, "EncryptedKey")
		}
	}
	if ek < 0 {
		return nil, fmt.Errorf("trailing signature: no EncryptedKey lists #%s", edID)
	}
	wrapped, err := base64.StdEncoding.DecodeString(string(d.Text(child(d, child(d, ek, xmlscan.NamespaceXEnc, "CipherData"), xmlscan.NamespaceXEnc, "CipherValue"), nil)))
	if err != nil {
		return nil, fmt.Errorf("trailing signature: EncryptedKey CipherValue: %w", err)
	}
	em := child(d, ek, xmlscan.NamespaceXEnc, "EncryptionMethod")
	dataAlg := attrOf(d, child(d, ed, xmlscan.NamespaceXEnc, "EncryptionMethod"), "", "Algorithm")
	dk, err := crypto.DecryptKey(attrOf(d, em, "", "Algorithm"), attrOf(d, child(d, em, xmlscan.NamespaceDSig, "DigestMethod"), "", "Algorithm"), "", key, wrapped, crypto.KeySize(dataAlg))
	if err != nil {
		return nil, fmt.Errorf("trailing signature: unwrap the key: %w", err)
	}
	sig, err := crypto.DecryptData(dataAlg, dk, ct)
	if err != nil {
		return nil, fmt.Errorf("trailing signature: decrypt: %w", err)
	}
	edEl, ekEl := &d.Elements[ed], &d.Elements[ek]
	out := splice(d.Data, edEl.Start, edEl.End, sig)
	if ekEl.Start < edEl.Start {
		return splice(out, ekEl.Start, ekEl.End, nil), nil
	}
	return nil, errors.New("trailing signature: EncryptedKey after its EncryptedData")
}

func splice(b []byte, from, to int, with []byte) []byte {
	out := make([]byte, 0, len(b)-(to-from)+len(with))
	return append(append(append(out, b[:from]...), with...), b[to:]...)
}

func readPart(p *mime.Part) ([]byte, error) {
	r, err := p.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(io.LimitReader(r, wss.MaxBufferedAttachment))
}

func ancestor(d *xmlscan.Document, e int, space, local string) int {
	for e = d.Elements[e].Parent; e >= 0; e = d.Elements[e].Parent {
		if d.Elements[e].Space == space && d.Elements[e].Local == local {
			return e
		}
	}
	return -1
}

func child(d *xmlscan.Document, e int, space, local string) int {
	if e < 0 {
		return -1
	}
	for c := d.FirstChild(e); c >= 0; c = d.NextSibling(c) {
		if d.Elements[c].Space == space && d.Elements[c].Local == local {
			return c
		}
	}
	return -1
}

func attrOf(d *xmlscan.Document, e int, space, local string) string {
	if e < 0 {
		return ""
	}
	if j := d.FindAttr(e, space, local); j >= 0 {
		return string(d.AttrValue(j, nil))
	}
	return ""
}
