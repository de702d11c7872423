package template

import (
	"slices"
	"time"

	"github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// An encrypted message is learned as two templates: the outer one over the
// received bytes, whose program runs the Security header's children up to
// the EncryptedKey and then decrypts, and the inner one over the plaintext
// message the DOM engine produced, which runs the children after it. The
// plaintext is spliced in place of the EncryptedData as the DOM engine
// does (no re-parse) and must match the inner template exactly where the
// learned plaintext was, which is what the DOM engine's re-gating and
// plaintext checks established when it learned (security.md A11).
type phase uint8

const (
	phaseAll phase = iota
	phaseOuter
	phaseInner
)

// splice is where the plaintext went: it replaced received bytes [a,b)
// and is n bytes long.
type splice struct{ a, b, n int }

func (s *splice) move(x int) int {
	switch {
	case x >= s.b:
		return x + s.n - (s.b - s.a)
	case x > s.a:
		return s.a
	}
	return x
}

// plainAt locates, in an inner template, the plaintext's span and the
// element the Decryption fact names.
type plainAt struct {
	span   [2]anchor
	holder anchor
}

// decStep unwraps the EncryptedKey and decrypts the one EncryptedData its
// ReferenceList names.
type decStep struct {
	kt, digest, mgf string            // key transport, OAEP digest and MGF
	keys            []*crypto.KeyPair // the policy's decryption keys when learned
	key             *crypto.KeyPair   // the one the EncryptedKey names
	cipher          int               // the EncryptedKey's CipherValue slot
	alg             string            // the data cipher
	data            int               // the EncryptedData's CipherValue slot
	start, end      anchor            // the EncryptedData element
	content         bool
	inner           *Template
	root            *node // the inner template alone

	// cipherPart, dataPart: the slot is the href of an xop:Include
	// naming the part that holds the octets (xop_enc.go).
	cipherPart, dataPart bool
}

// learnEncrypted learns a message the DOM engine decrypted once, with one
// EncryptedKey for one EncryptedData in the Body.
// atts are the parts of an MTOM package whose root data is (xop_enc.go),
// nil for a plain message.
func learnEncrypted(sc *xmlscan.Scanner, data []byte, atts wss.Attachments, res *wss.Result, p *wss.Policy) (*Template, error) {
	if len(res.Decrypted) != 1 || res.Decrypted[0].Header {
		return nil, unsupported("decryption other than one Body EncryptedData")
	}
	enc := &splice{}
	outer, err := learnPhase(sc, data, res, p, phaseOuter, enc, atts)
	if err != nil {
		return nil, err
	}
	inner, err := learnPhase(sc, res.Document, res, p, phaseInner, enc, atts)
	if err != nil {
		return nil, err
	}
	for _, s := range outer.steps {
		if s.dec != nil {
			s.dec.inner, s.dec.root = inner, chain(inner, 0, 0)
		}
	}
	outer.size += inner.size
	return outer, nil
}

// findEncryptedKey finds the Security header's one EncryptedKey.
func (l *learner) findEncryptedKey() error {
	if l.sec < 0 {
		return unsupported("decryption without a Security header")
	}
	for c := l.d.FirstChild(l.sec); c >= 0; c = l.d.NextSibling(c) {
		switch e := &l.d.Elements[c]; {
		case e.Space == nsXEnc && e.Local == "EncryptedKey":
			if l.ek >= 0 {
				return unsupported("two EncryptedKeys")
			}
			l.ek = c
		case e.Space == nsXEnc:
			return unsupported("%s in the Security header", e.Local)
		}
	}
	if l.ek < 0 {
		return unsupported("decryption without an EncryptedKey")
	}
	return nil
}

// moved is where an offset of the received message is after the splice,
// as the DOM engine moves its facts.
func (l *learner) moved(x int) int {
	if l.phase != phaseOuter {
		return x
	}
	return l.enc.move(x)
}

// decryption records the EncryptedKey's unwrap and its EncryptedData.
func (l *learner) decryption(ek int) error {
	st := &decStep{cipher: -1, data: -1}
	ed := -1
	for _, c := range l.children(ek) {
		switch {
		case l.is(c, nsXEnc, "EncryptionMethod"):
			st.kt = l.attrValue(c, "Algorithm")
			for _, m := range l.children(c) {
				if l.is(m, nsDS, "DigestMethod") {
					st.digest = l.attrValue(m, "Algorithm")
				} else {
					st.mgf = l.attrValue(m, "Algorithm")
				}
			}
		case l.is(c, nsXEnc, "CipherData"):
			st.cipher, st.cipherPart = l.cipherValueSlot(c)
		case l.is(c, nsXEnc, "ReferenceList"):
			refs := l.children(c)
			if len(refs) != 1 || !l.is(refs[0], nsXEnc, "DataReference") {
				return unsupported("ReferenceList of one DataReference")
			}
			ed = l.target(l.attrSlot(refs[0], "URI"))
		}
	}
	if ed < 0 || st.cipher < 0 || !l.is(ed, nsXEnc, "EncryptedData") {
		return unsupported("encrypted key layout")
	}
	if err := l.encryptedData(ed, st); err != nil {
		return err
	}
	if err := l.recipient(st); err != nil {
		return err
	}
	l.t.steps = append(l.t.steps, step{dec: st})
	return nil
}

func (l *learner) encryptedData(ed int, st *decStep) error {
	parent := l.d.Elements[ed].Parent
	if parent < 0 || !isSOAP(l.d.Elements[parent].Space) || l.d.Elements[parent].Local != "Body" {
		return unsupported("EncryptedData outside the Body")
	}
	switch l.attrValue(ed, "Type") {
	case nsXEnc + "Content":
		st.content = true
	case nsXEnc + "Element":
	default:
		return unsupported("EncryptedData Type")
	}
	for _, c := range l.children(ed) {
		switch {
		case l.is(c, nsXEnc, "EncryptionMethod"):
			st.alg = l.attrValue(c, "Algorithm")
		case l.is(c, nsXEnc, "CipherData"):
			st.data, st.dataPart = l.cipherValueSlot(c)
		case l.is(c, nsDS, "KeyInfo") && st.data < 0:
			// The key is the EncryptedKey's, which lists this
			// EncryptedData. The DOM engine requires a key this KeyInfo
			// names to be that EncryptedKey (sameKey). A "#id" here is
			// bound to the one EncryptedKey's id; an EncryptedKeySHA1
			// would be a learned constant that no longer names the
			// EncryptedKey of the next message, so a KeyIdentifier here
			// is not learned.
			if l.keyIdentifierIn(c) {
				return unsupported("EncryptedData KeyInfo with a KeyIdentifier")
			}
		default:
			return unsupported("%s in EncryptedData", l.d.Elements[c].Local)
		}
	}
	if st.data < 0 || st.alg == "" {
		return unsupported("EncryptedData layout")
	}
	e := &l.d.Elements[ed]
	st.start, st.end = l.anchor(e.Start), l.anchor(e.End)
	*l.enc = splice{a: e.Start, b: e.End}
	l.enc.n = len(l.res.Document) - len(l.data) + (e.End - e.Start)
	return nil
}

// keyIdentifierIn reports whether a wsse:KeyIdentifier lies inside
// element i.
func (l *learner) keyIdentifierIn(i int) bool {
	for j := i + 1; j < l.d.Elements[i].Next; j++ {
		if l.is(j, nsWSSE, "KeyIdentifier") {
			return true
		}
	}
	return false
}

// recipient finds the decryption key the DOM engine used: the one that
// unwraps the learned EncryptedKey. The EncryptedKey's KeyInfo is constant
// in the template, so the DOM engine picks the same key for every match
// as long as the policy's keys are the same (checked per match).
func (l *learner) recipient(st *decStep) error {
	st.keys = l.p.DecryptionKeys()
	ct, err := l.cipherOctets(st.cipher, st.cipherPart)
	if err != nil {
		return unsupported("EncryptedKey value")
	}
	for _, kp := range st.keys {
		dec, ok := kp.Decrypter()
		if !ok {
			continue
		}
		if _, err := crypto.DecryptKey(st.kt, st.digest, st.mgf, dec, ct, crypto.KeySize(st.alg)); err == nil {
			if st.key != nil {
				return unsupported("EncryptedKey opens with two keys")
			}
			st.key = kp
		}
	}
	if st.key == nil {
		return unsupported("no decryption key")
	}
	return nil
}

// decrypt is the hit path's EncryptedKey: unwrap, decrypt, splice, match
// the plaintext message against the inner template and run its steps.
func (r *run) decrypt(st *decStep, sigs *int) error {
	if !slices.Equal(r.p.DecryptionKeys(), st.keys) {
		return &fallback{"decryption keys reloaded"}
	}
	pt, err := r.plaintext(st)
	if err != nil {
		return err
	}
	a, b := r.at(st.start), r.at(st.end)
	if len(r.data)-(b-a)+len(pt) > r.e.limits.MaxBytes {
		return &fallback{"plaintext message size"}
	}
	doc := make([]byte, 0, len(r.data)-(b-a)+len(pt))
	doc = append(append(append(doc, r.data[:a]...), pt...), r.data[b:]...)
	r.moveFacts(&splice{a: a, b: b, n: len(pt)})

	in := r.e.runs.Get().(*run)
	defer r.e.put(in)
	mt := matcher{data: doc, caps: in.caps[:0], budget: maxVisits * (len(doc)/64 + 16), limits: &r.e.limits}
	t := mt.walk(st.root, 0)
	in.caps = mt.caps
	if t != st.inner {
		return &fallback{"plaintext shape"}
	}
	in.t, in.top, in.data, in.p, in.now, in.e, in.res, in.shared, in.blk = t, r.top, doc, r.p, r.now, r.e, r.res, r.shared, r.blk
	defer func() { r.shared = in.shared }()
	// The plaintext must be exactly where the learned one was: the same
	// markup around a shifted boundary would be other structure.
	if in.at(t.plain.span[0]) != a || in.at(t.plain.span[1]) != a+len(pt) {
		return &fallback{"plaintext boundary"}
	}
	if f := in.bindings(); f != nil {
		return f
	}
	if t.gbody != nil {
		// The plaintext Body is generic: checked as the DOM engine's
		// re-gate and checkPlaintext would, and digested from the bytes.
		if in.fast = in.fastBody(); !in.fast {
			if f := in.generic(); f != nil {
				return f
			}
		}
	}
	if t.pkg {
		// An encrypted package: the plaintext message's includes and
		// the package's facts (xop_enc.go).
		if f := in.plainAttachments(r, st); f != nil {
			return f
		}
	}
	r.res.Document = doc
	r.res.Decrypted = append(r.res.Decrypted, wss.Decryption{Start: in.at(t.plain.holder), Content: st.content, Algorithm: st.alg, KeyTransport: st.kt})
	return in.steps(t.steps, sigs)
}

func (r *run) plaintext(st *decStep) ([]byte, error) {
	dec, ok := st.key.Decrypter()
	if !ok {
		return nil, wss.Failf(wss.ReasonToken, "decryption key cannot decrypt")
	}
	ek, err := r.cipherOctets(st.cipher, st.cipherPart)
	if err != nil {
		return nil, err
	}
	cv, err := r.cipherOctets(st.data, st.dataPart)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	defer func() { r.res.DecryptTime += time.Since(start) }()
	key, err := crypto.DecryptKey(st.kt, st.digest, st.mgf, dec, ek, crypto.KeySize(st.alg))
	if err != nil {
		return nil, wss.Wrap(wss.ReasonDecrypt, err, "EncryptedKey")
	}
	pt, err := crypto.DecryptData(st.alg, key, cv)
	if err != nil {
		return nil, wss.Wrap(wss.ReasonDecrypt, err, "EncryptedData")
	}
	if !st.content && (len(pt) == 0 || pt[0] != '<') {
		return nil, wss.Failf(wss.ReasonDecrypt, "Element plaintext is not an element")
	}
	return pt, nil
}

// moveFacts moves the facts recorded so far as the DOM engine's splice
// does.
func (r *run) moveFacts(s *splice) {
	res := r.res
	if res.Timestamp != nil {
		res.Timestamp.Start = s.move(res.Timestamp.Start)
	}
	if res.Username != nil {
		res.Username.Start = s.move(res.Username.Start)
	}
	if res.Token >= 0 {
		res.Token = s.move(res.Token)
	}
	for i := range res.Signatures {
		for j, c := range res.Signatures[i].Covered {
			res.Signatures[i].Covered[j] = s.move(c)
		}
	}
}
