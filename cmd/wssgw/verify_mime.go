package main

import (
	"bytes"
	"context"
	gocrypto "crypto"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/mime"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// Namespaces of the trailing-signature markup (DESIGN.md §6).
const (
	nsDS   = xmlscan.NamespaceDSig
	nsXEnc = xmlscan.NamespaceXEnc
	nsXOP  = xmlscan.NamespaceXOP
)

// verifyPackage verifies an MTOM/SwA package. A package with a trailing
// signature (a wssgw streamed response) is reassembled first: the last
// part is put back into the ds:Signature that XOP-includes it, or, in the
// strict variant, decrypted with key and put in place of the
// xenc:EncryptedData. The result then goes through the DOM engine with
// the remaining attachments, as any package would.
func (v *verifier) verifyPackage(ctx context.Context, msg []byte, contentType string, key gocrypto.Decrypter, now time.Time) (*wss.Result, []byte, *wss.Error, error) {
	lim := mime.DefaultLimits()
	lim.SpoolDir = os.TempDir()
	pkg, err := mime.Read(ctx, bytes.NewReader(msg), contentType, lim)
	if err != nil {
		return nil, nil, wss.Wrap(wss.ReasonMalformed, err, "package"), nil
	}
	defer pkg.Close()
	root, trailer, err := reassembleTrailer(pkg, key)
	if err != nil {
		return nil, nil, nil, err
	}
	atts := wss.PackageAttachments(pkg, trailer)
	res, plain, err := v.policy.VerifyAttachments(ctx, v.engine, root, atts, now)
	if err == nil && res == nil {
		err = v.gateUnparsed(plain)
	}
	if err != nil {
		var we *wss.Error
		errors.As(err, &we)
		return nil, nil, we, nil
	}
	return res, plain, nil, nil
}

// reassembleTrailer returns the root with its trailing signature put back,
// and the Content-ID of the part that carried it ("" when the package has
// no trailing signature and the root is returned as it is).
func reassembleTrailer(pkg *mime.Package, key gocrypto.Decrypter) ([]byte, string, error) {
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
		return nil, "", errors.New("the trailing signature is encrypted: give the requester's private key with --key")
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
		if el.Space != nsXOP || el.Local != "Include" || el.Parent < 0 {
			continue
		}
		p := &d.Elements[el.Parent]
		if p.Space == nsDS && p.Local == "Signature" {
			return e, false
		}
		if p.Space == nsXEnc && p.Local == "CipherValue" {
			if ed := ancestor(d, e, nsXEnc, "EncryptedData"); ed >= 0 && attrOf(d, ed, "", "Type") == typeElement {
				return e, true
			}
		}
	}
	return -1, false
}

const typeElement = xmlscan.TypeElement

// decryptTrailer unwraps the data key of the EncryptedKey that lists the
// EncryptedData, decrypts the trailing part and returns the root with the
// ds:Signature in place of the EncryptedData and the EncryptedKey removed
// (it served only this EncryptedData).
func decryptTrailer(d *xmlscan.Document, inc int, ct []byte, key gocrypto.Decrypter) ([]byte, error) {
	ed := ancestor(d, inc, nsXEnc, "EncryptedData")
	edID := attrOf(d, ed, "", "Id")
	ek := -1
	for e := range d.Elements {
		el := &d.Elements[e]
		if el.Space == nsXEnc && el.Local == "DataReference" && attrOf(d, e, "", "URI") == "#"+edID {
			ek = ancestor(d, e, nsXEnc, "EncryptedKey")
		}
	}
	if ek < 0 {
		return nil, fmt.Errorf("trailing signature: no EncryptedKey lists #%s", edID)
	}
	wrapped, err := base64.StdEncoding.DecodeString(string(d.Text(child(d, child(d, ek, nsXEnc, "CipherData"), nsXEnc, "CipherValue"), nil)))
	if err != nil {
		return nil, fmt.Errorf("trailing signature: EncryptedKey CipherValue: %w", err)
	}
	em := child(d, ek, nsXEnc, "EncryptionMethod")
	dataAlg := attrOf(d, child(d, ed, nsXEnc, "EncryptionMethod"), "", "Algorithm")
	dk, err := crypto.DecryptKey(attrOf(d, em, "", "Algorithm"), attrOf(d, child(d, em, nsDS, "DigestMethod"), "", "Algorithm"), "", key, wrapped, crypto.KeySize(dataAlg))
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

// loadDecrypter reads the requester's private key (PEM) for --key.
func loadDecrypter(file string) (gocrypto.Decrypter, error) {
	if file == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--key: %w", err)
	}
	k, err := crypto.ParsePrivateKeyPEM(pem)
	if err != nil {
		return nil, fmt.Errorf("--key: %w", err)
	}
	d, ok := k.(gocrypto.Decrypter)
	if !ok {
		return nil, fmt.Errorf("--key: %T cannot decrypt", k)
	}
	return d, nil
}
