package main

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"

	"github.com/wssgw/wssgw/internal/c14n"
	wcrypto "github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

const nsDS = "http://www.w3.org/2000/09/xmldsig#"

// floor is the crypto a verifier cannot avoid for one message, as
// BenchmarkEngines defines it: the digests of the canonical signed parts
// and the signature check of the canonical SignedInfo, with the canonical
// bytes computed beforehand.
type floor struct {
	signedInfo, sigValue []byte
	parts                [][]byte
	method               string
	pub                  any
}

// floorOf finds msg's canonical SignedInfo and signed parts.
func floorOf(gate *xmlscan.Scanner, msg []byte, pub any) (*floor, error) {
	var d xmlscan.Document
	if err := gate.Scan(msg, &d); err != nil {
		return nil, err
	}
	si := find(&d, 0, nsDS, "SignedInfo")
	if si < 0 {
		return nil, errors.New("floor: no SignedInfo")
	}
	fl := &floor{pub: pub}
	var err error
	if fl.signedInfo, err = c14n.Exclusive(&d, si, prefixList(&d, find(&d, si, nsDS, "CanonicalizationMethod")), false, nil); err != nil {
		return nil, err
	}
	sm := find(&d, si, nsDS, "SignatureMethod")
	fl.method = string(d.AttrValue(d.FindAttr(sm, "", "Algorithm"), nil))
	if fl.sigValue, err = wss.DecodeBase64(d.Text(find(&d, 0, nsDS, "SignatureValue"), nil)); err != nil {
		return nil, err
	}
	for i := si + 1; i < d.Elements[si].Next; i++ {
		if e := &d.Elements[i]; e.Space != nsDS || e.Local != "Reference" {
			continue
		}
		id := strings.TrimPrefix(string(d.AttrValue(d.FindAttr(i, "", "URI"), nil)), "#")
		target := byID(&d, id)
		if target < 0 {
			return nil, fmt.Errorf("floor: no element with Id %q", id)
		}
		part, err := c14n.Exclusive(&d, target, prefixList(&d, find(&d, i, nsDS, "Transform")), false, nil)
		if err != nil {
			return nil, err
		}
		fl.parts = append(fl.parts, part)
	}
	return fl, fl.run()
}

// run is the floor's work: hash every part and verify the signature.
func (fl *floor) run() error {
	for _, p := range fl.parts {
		sha256.Sum256(p)
	}
	sum := sha256.Sum256(fl.signedInfo)
	return wcrypto.VerifySignatureSHA256(fl.method, fl.pub, fl.signedInfo, &sum, fl.sigValue)
}

// find is the first element named {space}local in the subtree of i.
func find(d *xmlscan.Document, i int, space, local string) int {
	for j := i; j < d.Elements[i].Next; j++ {
		if e := &d.Elements[j]; e.Space == space && e.Local == local {
			return j
		}
	}
	return -1
}

// byID is the element whose Id attribute (any namespace: wsu:Id or Id) is id.
func byID(d *xmlscan.Document, id string) int {
	for i := range d.Elements {
		for _, a := range d.AttrsOf(i) {
			if a.Local == "Id" && string(d.Raw(a.Value)) == id {
				return i
			}
		}
	}
	return -1
}

// prefixList is the InclusiveNamespaces PrefixList under method element m.
func prefixList(d *xmlscan.Document, m int) []string {
	if m < 0 {
		return nil
	}
	for j := m + 1; j < d.Elements[m].Next; j++ {
		if d.Elements[j].Local == "InclusiveNamespaces" {
			p, _ := c14n.ParsePrefixList(string(d.AttrValue(d.FindAttr(j, "", "PrefixList"), nil)))
			return p
		}
	}
	return nil
}
