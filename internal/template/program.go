package template

import (
	"github.com/wssgw/wssgw/internal/c14n"
	"github.com/wssgw/wssgw/internal/wss"
)

// program records, for the Security header's children in order, the work
// the DOM engine did, in terms of slots and anchors.
func (l *learner) program() error {
	t, d, res := l.t, l.d, l.res
	t.version = res.Version
	t.body = l.anchor(res.Body)
	t.security = [2]anchor{{frag: -1}, {frag: -1}}
	if res.Security[0] >= 0 {
		t.security = [2]anchor{l.anchor(res.Security[0]), l.anchor(res.Security[1])}
	}
	for _, h := range res.Headers {
		t.headers = append(t.headers, partAnchor{part: h, at: l.anchor(h.Start), end: l.anchor(h.End)})
	}
	for _, a := range res.Attributes {
		t.attrs = append(t.attrs, attrAnchor{name: a.Name, span: [2]anchor{l.anchor(a.Span[0]), l.anchor(a.Span[1])}})
	}
	if l.sec < 0 {
		if res.Timestamp != nil || res.Username != nil || len(res.Signatures) > 0 {
			return unsupported("facts without a Security header")
		}
		return l.algorithms()
	}
	sigs := 0
	// The inner template does the children after the EncryptedKey; the
	// outer one those up to it and the decryption.
	past := l.phase != phaseInner
	for c := d.FirstChild(l.sec); c >= 0; c = d.NextSibling(c) {
		e := &d.Elements[c]
		if c == l.ek {
			if l.phase == phaseOuter {
				if err := l.decryption(c); err != nil {
					return err
				}
				return l.algorithms()
			}
			past = true
			continue
		}
		if !past {
			if e.Space == nsDS && e.Local == "Signature" {
				sigs++
			}
			continue
		}
		var err error
		switch {
		case e.Space == nsWSU && e.Local == "Timestamp":
			err = l.timestamp(c)
		case e.Space == nsWSSE && e.Local == "UsernameToken":
			err = l.username(c)
		case e.Space == nsWSSE && e.Local == "BinarySecurityToken":
		case e.Space == nsDS && e.Local == "Signature":
			if sigs >= len(res.Signatures) {
				return unsupported("signature count")
			}
			err = l.signature(c, &res.Signatures[sigs])
			sigs++
		default:
			return unsupported("%s in the Security header", e.Local)
		}
		if err != nil {
			return err
		}
	}
	if sigs != len(res.Signatures) {
		return unsupported("signature count")
	}
	if l.phase == phaseInner {
		return nil // the outer template holds the usage facts
	}
	return l.algorithms()
}

func (l *learner) timestamp(i int) error {
	if l.res.Timestamp == nil || l.res.Timestamp.Start != l.d.Elements[i].Start {
		return unsupported("timestamp")
	}
	st := &tsStep{start: l.anchor(l.d.Elements[i].Start), created: -1, expires: -1}
	for c := l.d.FirstChild(i); c >= 0; c = l.d.NextSibling(c) {
		switch l.d.Elements[c].Local {
		case "Created":
			st.created = l.textSlot(c)
		case "Expires":
			st.expires = l.textSlot(c)
		}
	}
	if st.created < 0 || (st.expires < 0) != l.res.Timestamp.Expires.IsZero() {
		return unsupported("timestamp values")
	}
	l.t.steps = append(l.t.steps, step{ts: st})
	return nil
}

func (l *learner) username(i int) error {
	u := l.res.Username
	if u == nil || u.Start != l.d.Elements[i].Start {
		return unsupported("username token")
	}
	st := &utStep{start: l.anchor(u.Start), name: -1, password: -1, nonce: -1, created: -1, digest: u.Digest}
	for c := l.d.FirstChild(i); c >= 0; c = l.d.NextSibling(c) {
		switch e := &l.d.Elements[c]; e.Local {
		case "Username":
			st.name = l.textSlot(c)
		case "Password":
			st.password = l.textSlot(c)
			if typ := l.attrValue(c, "Type"); u.Digest != (typ == pwDigest) {
				return unsupported("password type")
			}
		case "Nonce":
			st.nonce = l.textSlot(c)
		case "Created":
			st.created = l.textSlot(c)
		}
	}
	if st.name < 0 || st.password < 0 || (u.Digest && (st.nonce < 0 || st.created < 0)) || (st.created < 0) != u.Created.IsZero() {
		return unsupported("username token values")
	}
	l.t.steps = append(l.t.steps, step{ut: st})
	return nil
}

func (l *learner) attrValue(i int, local string) string {
	j := l.d.FindAttr(i, "", local)
	if j < 0 {
		return ""
	}
	return string(l.d.AttrValue(j, nil))
}

// children returns the child elements of i.
func (l *learner) children(i int) []int {
	var out []int
	for c := l.d.FirstChild(i); c >= 0; c = l.d.NextSibling(c) {
		out = append(out, c)
	}
	return out
}

func (l *learner) is(i int, space, local string) bool {
	e := &l.d.Elements[i]
	return e.Space == space && e.Local == local
}

// signature records a verified ds:Signature: its canonical SignedInfo,
// value, key source and References.
func (l *learner) signature(s int, fact *wss.Signature) error {
	kids := l.children(s)
	if len(kids) != 3 {
		return unsupported("signature layout")
	}
	si, sv, ki := kids[0], kids[1], kids[2]
	st := &sigStep{method: fact.Method, c14n: fact.C14N, value: l.textSlot(sv), bst: -1, keyRef: fact.KeyReference}
	var prefixes []string
	if cm := l.d.FirstChild(si); cm >= 0 {
		var err error
		if prefixes, err = l.prefixList(cm); err != nil {
			return err
		}
	}
	var err error
	if st.signedInfo, err = l.canon(si, fact.C14N, prefixes); err != nil {
		return err
	}
	if err := l.key(ki, st, fact); err != nil {
		return err
	}
	for r := l.d.FirstChild(si); r >= 0; r = l.d.NextSibling(r) {
		if !l.is(r, nsDS, "Reference") {
			continue
		}
		rs, err := l.reference(r)
		if err != nil {
			return err
		}
		st.refs = append(st.refs, rs)
	}
	if len(st.refs) != len(fact.Covered) || st.value < 0 {
		return unsupported("references")
	}
	for k, r := range st.refs {
		if l.moved(l.offset(r.target)) != fact.Covered[k] {
			return unsupported("covered element")
		}
	}
	l.t.steps = append(l.t.steps, step{sig: st})
	return nil
}

// offset is the learned message's offset of an anchor.
func (l *learner) offset(a anchor) int {
	if a.frag == 0 {
		return a.delta
	}
	return l.slots[a.frag-1].end + a.delta
}

// prefixList reads the InclusiveNamespaces PrefixList under element i.
func (l *learner) prefixList(i int) ([]string, error) {
	in := l.d.FirstChild(i)
	if in < 0 || !l.is(in, nsExc, "InclusiveNamespaces") {
		return nil, nil
	}
	p, err := c14n.ParsePrefixList(l.attrValue(in, "PrefixList"))
	if err != nil {
		return nil, unsupported("prefix list")
	}
	return p, nil
}

// key records where the signature's key comes from: a BinarySecurityToken
// slot, or the certificate the trust store's index gave (then every token
// in the message is pinned to its learned bytes, since the DOM engine
// might prefer a carried certificate).
func (l *learner) key(ki int, st *sigStep, fact *wss.Signature) error {
	str := l.d.FirstChild(ki)
	if str < 0 || !l.is(str, nsWSSE, "SecurityTokenReference") {
		return unsupported("key info")
	}
	ref := l.d.FirstChild(str)
	if ref >= 0 && l.is(ref, nsWSSE, "Reference") && fact.KeyReference == wss.KeyRefBST {
		tok := l.target(l.attrSlot(ref, "URI"))
		if tok < 0 || !l.is(tok, nsWSSE, "BinarySecurityToken") || l.attrValue(tok, "ValueType") != vtX509v3 {
			return unsupported("token")
		}
		st.bst = l.textSlot(tok)
		st.token, st.hasToken = l.anchor(l.d.Elements[tok].Start), true
		if st.bst < 0 || l.res.Token != l.d.Elements[tok].Start {
			return unsupported("token slot")
		}
		return nil
	}
	if fact.Signer == nil || fact.Signer.Certificate == nil {
		return unsupported("signer")
	}
	st.leaf, st.trust = fact.Signer.Certificate, l.p.Trust()
	for i := l.sec + 1; i < l.d.Elements[l.sec].Next; i++ {
		if l.is(i, nsWSSE, "BinarySecurityToken") {
			if k := l.textSlot(i); k >= 0 {
				l.t.pinned = append(l.t.pinned, pin{slot: k, value: append([]byte(nil), l.value(k)...)})
			}
		}
	}
	return nil
}

// reference records one Reference: target, transform, digest.
func (l *learner) reference(r int) (refStep, error) {
	var rs refStep
	target := l.target(l.attrSlot(r, "URI"))
	if target < 0 {
		return rs, unsupported("reference target")
	}
	alg, prefixes := c14n.AlgC14N10, []string(nil)
	for c := l.d.FirstChild(r); c >= 0; c = l.d.NextSibling(c) {
		switch l.d.Elements[c].Local {
		case "Transforms":
			tr := l.d.FirstChild(c)
			alg = l.attrValue(tr, "Algorithm")
			if alg == trSTR {
				// The dereferenced token's canonical form is not the
				// token element's (WSS 1.1 §8.3, the DOM engine's
				// strDereferenced): such messages stay on the DOM engine.
				return rs, unsupported("STR-Transform")
			}
			var err error
			if prefixes, err = l.prefixList(tr); err != nil {
				return rs, err
			}
		case "DigestMethod":
			rs.digest = l.attrValue(c, "Algorithm")
		case "DigestValue":
			rs.value = l.textSlot(c)
		}
	}
	if rs.value < 0 {
		return rs, unsupported("digest value")
	}
	rs.target = l.anchor(l.d.Elements[target].Start)
	if target == l.body {
		// Canonicalized from the message on a hit (generic.go); canon
		// is kept for the fast body, the Body content its one slot.
		rs.body, rs.alg, rs.prefixes = true, alg, prefixes
	}
	var err error
	if rs.canon, err = l.canon(target, alg, prefixes); err != nil {
		return rs, err
	}
	return rs, nil
}

// algorithms copies the usage facts; key sizes are recomputed per match
// when the key comes from a token slot.
func (l *learner) algorithms() error {
	t := l.t
	t.algs = append([]wss.AlgorithmUse(nil), l.res.Algorithms...)
	for k, a := range t.algs {
		if a.Kind == wss.UseKeySize {
			t.keySizes = append(t.keySizes, k)
		}
	}
	if len(t.keySizes) != len(l.res.Signatures) {
		return unsupported("key size facts")
	}
	return nil
}
