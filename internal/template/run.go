package template

import (
	"bytes"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"hash"
	"strconv"
	"time"

	"github.com/wssgw/wssgw/internal/c14n"
	"github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/trust"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// errFallback means the template path cannot decide exactly as the DOM
// engine would: the message goes to the DOM engine.
type fallback struct{ why string }

func (f *fallback) Error() string { return "template: fall back: " + f.why }

// run is one hit: the bindings, then the DOM engine's work in header
// order, on the captured values.
type run struct {
	t    *Template
	top  *Template // the outer template of an inner run, else t
	data []byte
	caps []span
	p    *wss.Policy
	now  time.Time
	res  *wss.Result
	buf  []byte // canonical SignedInfo
	norm []byte // a slot's canonical form
	tmp  []byte // scratch for normalization
	part []byte // a referenced part's canonical form
	sha  shaNI  // the fast body's SHA-256 where the CPU has SHA-NI (fastDigest)
	// blk holds the result and what it usually needs (hitBlock); dv is
	// scratch for decoded DigestValues; h a digest kept for alg hAlg; sum
	// the SignedInfo digest.
	blk  *hitBlock
	sum  [sha256.Size]byte
	dsum [sha512.Size]byte // a Reference's digest
	dv   []byte
	h    hash.Hash
	hAlg string
	// shared: res.Algorithms is still the template's own list.
	shared bool
	e      *Engine
	// atts are the other parts of an MTOM package whose root data is,
	// nil for a plain message; cids the Content-IDs the template's
	// xop:Includes name (xop.go); flipped the References whose parts
	// matched in the base64 form other than the learned one.
	atts    wss.Attachments
	cids    []string
	flipped []*refStep
	bodyInc []bodyInclude    // the xop:Includes of a generic Body
	swaCIDs []string         // the parts the template's SwA References name (swa.go)
	doc     xmlscan.Document // the gated message of a generic Body
	scanned bool             // doc holds a scan (generic), to be reset
	fb      fastBody         // the fast body pass
	// fast: the generic Body passed the fast body, its digest is bodySum.
	fast    bool
	bodySum []byte

	// ciphered: of an encrypted package's inner run, the part that held
	// the EncryptedData's ciphertext (xop_enc.go).
	ciphered []string
}

// hitBlock is a hit's result together with what most hits add to it: the
// Timestamp, one signature with its covered offsets and value, a few
// header parts. One allocation where there were one per fact (issue 14);
// anything beyond it is allocated as before.
type hitBlock struct {
	res     wss.Result
	ts      wss.Timestamp
	tsUsed  bool
	sigs    [1]wss.Signature
	covered [8]int
	nCov    int
	headers [4]wss.Part
	// value holds SignatureValues. AppendBase64 wants DecodedLen of the
	// text: 258 bytes for RSA-2048's 344 characters, up to 264 with line
	// breaks; a larger value (RSA-4096 did not fit the 512 bytes either)
	// is allocated on its own. 264 rather than 512 bytes puts the block
	// in the 1,152-byte size class instead of 1,408 (issue 14).
	value  [264]byte
	nValue int
}

// digest returns r's digest for alg, reset: one per run, kept in the pool.
func (r *run) digest(alg string) (hash.Hash, error) {
	if r.h != nil && r.hAlg == alg {
		r.h.Reset()
		return r.h, nil
	}
	h, err := crypto.NewDigest(alg)
	if err != nil {
		return nil, err
	}
	r.h, r.hAlg = h, alg
	return h, nil
}

func (r *run) val(k int) []byte { s := r.caps[k]; return r.data[s.start:s.end] }

// at is the offset of an anchor in the matched message.
func (r *run) at(a anchor) int {
	if a.frag == 0 {
		return a.delta
	}
	return r.caps[a.frag-1].end + a.delta
}

func (r *run) exec() (*wss.Result, error) {
	if f := r.bindings(); f != nil {
		return nil, f
	}
	t := r.t
	if t.gbody != nil {
		if r.fast = r.fastBody(); !r.fast {
			if f := r.generic(); f != nil {
				return nil, f
			}
		}
	}
	r.blk = &hitBlock{}
	res := &r.blk.res
	// Field by field: the block is zero, and a Result literal is built
	// and copied whole, 400 bytes.
	res.Version, res.Document, res.Body, res.Security, res.Token = t.version, r.data, r.at(t.body), [2]int{-1, -1}, -1
	if t.security[0].frag >= 0 {
		res.Security = [2]int{r.at(t.security[0]), r.at(t.security[1])}
	}
	if n := len(t.headers); n > 0 {
		if n <= len(r.blk.headers) {
			res.Headers = r.blk.headers[:n:n]
		} else {
			res.Headers = make([]wss.Part, n)
		}
		for k, h := range t.headers {
			res.Headers[k] = wss.Part{Name: h.part.Name, Start: r.at(h.at), End: r.at(h.end)}
		}
	}
	if len(t.attrs) > 0 {
		res.Attributes = make([]wss.Attribute, len(t.attrs))
		for k, a := range t.attrs {
			res.Attributes[k] = wss.Attribute{Name: a.name, Span: [2]int{r.at(a.span[0]), r.at(a.span[1])}}
		}
	}
	r.res, r.top = res, t
	if f := r.attachments(); f != nil {
		return nil, f
	}
	res.Algorithms, r.shared = t.algs, true
	sigs := 0
	if err := r.steps(t.steps, &sigs); err != nil {
		return nil, err
	}
	return res, nil
}

// steps runs a program; sigs counts the signatures verified so far.
func (r *run) steps(steps []step, sigs *int) error {
	for _, s := range steps {
		var err error
		switch {
		case s.ts != nil:
			err = r.timestamp(s.ts)
		case s.ut != nil:
			err = r.username(s.ut)
		case s.sig != nil:
			err = r.signature(s.sig, *sigs)
			*sigs++
		case s.dec != nil:
			err = r.decrypt(s.dec, sigs)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// bindings re-checks what the DOM engine established about variable
// values: each Reference names the id it named when learned, ids are
// distinct, pinned tokens are unchanged.
func (r *run) bindings() *fallback {
	for _, b := range r.t.bindings {
		ref, id := r.val(b.ref), r.val(b.id)
		if len(ref) != len(id)+1 || !bytes.Equal(ref[1:], id) {
			return &fallback{"binding"}
		}
	}
	if r.duplicateID(r.t.ids) {
		return &fallback{"duplicate id"}
	}
	for _, p := range r.t.pinned {
		if !bytes.Equal(r.val(p.slot), p.value) {
			return &fallback{"token changed"}
		}
	}
	return nil
}

// duplicateID reports whether two of the id slots ids hold the same value.
// A 4 KiB hit has six ids, fifteen pairs: the values are sliced once, and
// a pair whose lengths or last bytes differ (random ids end differently)
// is told apart without a compare call (issue 14).
func (r *run) duplicateID(ids []int) bool {
	var buf [16][]byte
	if len(ids) > len(buf) {
		// Not on the stack: slice per pair rather than allocate.
		for i := range ids {
			for j := i + 1; j < len(ids); j++ {
				if bytes.Equal(r.val(ids[i]), r.val(ids[j])) {
					return true
				}
			}
		}
		return false
	}
	vals := buf[:0]
	for _, k := range ids {
		vals = append(vals, r.val(k))
	}
	for i, a := range vals {
		for j := i + 1; j < len(vals); j++ {
			b := vals[j]
			if len(a) == len(b) && (len(a) == 0 || a[len(a)-1] == b[len(b)-1]) && bytes.Equal(a, b) {
				return true
			}
		}
	}
	return false
}

func (r *run) timestamp(st *tsStep) error {
	created, err := wss.ParseDateTime(r.val(st.created))
	if err != nil {
		return wss.Wrap(wss.ReasonTimestamp, err, "Created")
	}
	var ts *wss.Timestamp
	if b := r.blk; b != nil && !b.tsUsed {
		ts, b.tsUsed = &b.ts, true
	} else {
		ts = new(wss.Timestamp)
	}
	*ts = wss.Timestamp{Start: r.at(st.start), Created: created}
	if st.expires >= 0 {
		if ts.Expires, err = wss.ParseDateTime(r.val(st.expires)); err != nil {
			return wss.Wrap(wss.ReasonTimestamp, err, "Expires")
		}
	}
	if err := r.p.CheckTimestamp(ts, r.now); err != nil {
		return err
	}
	r.res.Timestamp = ts
	return nil
}

func (r *run) text(k int) []byte {
	v := r.val(k)
	if bytes.IndexByte(v, '&') < 0 && bytes.IndexByte(v, '\r') < 0 {
		return v
	}
	out, err := xmlscan.NormalizeText(v, nil)
	if err != nil {
		return v
	}
	return out
}

func (r *run) username(st *utStep) error {
	users := r.p.Users()
	if users == nil {
		return wss.Failf(wss.ReasonAuthentication, "policy has no credentials")
	}
	tok := &wss.UsernameToken{Start: r.at(st.start), Username: string(r.text(st.name)), Digest: st.digest}
	if st.nonce >= 0 {
		// Read for both password types, as the DOM engine does: every
		// nonce goes to the replay store.
		n, err := wss.DecodeBase64(r.val(st.nonce))
		if err != nil {
			return err
		}
		tok.Nonce = n
	}
	if st.digest {
		if !users.CheckDigest(tok.Username, tok.Nonce, r.val(st.created), string(r.text(st.password))) {
			return wss.Failf(wss.ReasonAuthentication, "wrong username or password")
		}
	} else {
		if !r.p.Config.UsernameToken.AllowPasswordText {
			return wss.Failf(wss.ReasonAuthentication, "PasswordText not allowed")
		}
		if !users.CheckText(tok.Username, r.text(st.password)) {
			return wss.Failf(wss.ReasonAuthentication, "wrong username or password")
		}
	}
	if st.created >= 0 {
		t, err := wss.ParseDateTime(r.val(st.created))
		if err != nil {
			return err
		}
		if err := r.p.CheckUsernameCreated(t, r.now); err != nil {
			return err
		}
		tok.Created = t
	}
	r.res.Username = tok
	return nil
}

// canon writes a canonical form: literals as learned, slots in their
// canonical form.
func (r *run) canon(dst []byte, ps []piece) []byte {
	for _, p := range ps {
		dst = append(dst, r.t.lit(p)...)
		if p.slot != noSlot {
			dst = append(dst, r.slotCanon(int(p.slot))...)
		}
	}
	return dst
}

var needsText = [256]bool{'&': true, '>': true, '\r': true}
var needsAttr = [256]bool{'&': true, '"': true, '\t': true, '\n': true, '\r': true}

// plainClass reports whether a value of class c, which the match checked
// (check), is its own canonical form. Ids, references and dateTimes admit
// no byte C14N rewrites, and base64 only '\r' (ids and references are
// ASCII NCName characters, idChars): a SignedInfo's slots are these, and
// a byte loop over each cost a 4 KiB hit about 0.4 µs in a profile
// (issue 14).
func plainClass(c class, v []byte) bool {
	var tbl *[256]bool
	switch c {
	case classID, classRef, classDateTime:
		return true
	case classBase64:
		return bytes.IndexByte(v, '\r') < 0
	case classText:
		tbl = &needsText
	default:
		tbl = &needsAttr
	}
	for _, b := range v {
		if tbl[b] {
			return false
		}
	}
	return true
}

// slotCanon is slot k as C14N 1.0 §2.3 writes it: the raw bytes when
// nothing needs normalizing or escaping (most values), else normalized and
// escaped into r.norm. It does not copy on the fast path.
func (r *run) slotCanon(k int) []byte {
	v := r.val(k)
	c := r.t.slots[k].class
	if plainClass(c, v) {
		return v
	}
	textual := c.textual()
	var n []byte
	var err error
	if textual {
		n, err = xmlscan.NormalizeText(v, r.tmp[:0])
	} else {
		n, err = xmlscan.NormalizeAttrValue(v, r.tmp[:0])
	}
	if err != nil {
		return v // unreachable: the class admitted only well-formed references
	}
	// The normalizers return v itself when only escaping is needed ('>'
	// in text, '"' in a value): keeping that as scratch would let the next
	// value be normalized into the message's own bytes, which are
	// forwarded after verification (issue 14, TestProcessKeepsInput).
	if len(n) == 0 || len(v) == 0 || &n[0] != &v[0] {
		r.tmp = n
	}
	if textual {
		r.norm = c14n.AppendText(r.norm[:0], n)
	} else {
		r.norm = c14n.AppendAttr(r.norm[:0], n)
	}
	return r.norm
}

// signature verifies one ds:Signature as the DOM engine does: canonical
// SignedInfo, key, SignatureValue, then every Reference.
func (r *run) signature(st *sigStep, n int) error {
	r.buf = r.canon(r.buf[:0], st.signedInfo)
	sig := wss.Signature{KeyReference: st.keyRef, Method: st.method, C14N: st.c14n}
	id, err := r.signer(st)
	if err != nil {
		return err
	}
	sig.Signer = id
	sig.KeyBits = crypto.SignatureKeyBits(id.Certificate.PublicKey)
	b := r.blk
	dst := b.value[b.nValue:b.nValue]
	value, err := wss.AppendBase64(dst, r.val(st.value))
	if err != nil {
		return err
	}
	if len(value) > 0 && cap(dst) > 0 && &value[0] == &dst[:1][0] {
		b.nValue += len(value)
		value = value[:len(value):len(value)]
	}
	// Through r.sum: &sig.SignedInfoDigest would move sig to the heap.
	if st.siMid != nil {
		h, n, err := r.resume(crypto.AlgDigestSHA256, st.siMid)
		if err != nil {
			return wss.Wrap(wss.ReasonAlgorithm, err, "SignedInfo digest")
		}
		h.Write(r.buf[n:])
		h.Sum(r.sum[:0])
	} else {
		r.sum = sha256.Sum256(r.buf)
	}
	sig.SignedInfoDigest = r.sum
	if err := crypto.VerifySignatureSHA256(st.method, id.Certificate.PublicKey, r.buf, &r.sum, value); err != nil {
		return wss.Wrap(wss.ReasonSignature, err, "SignatureValue")
	}
	sig.SignatureValue = value
	if n := len(st.refs) - st.swaRefs; n > 0 && b.nCov+n <= len(b.covered) {
		sig.Covered = b.covered[b.nCov : b.nCov : b.nCov+n]
		b.nCov += n
	} else if n > 0 {
		sig.Covered = make([]int, 0, n) // nil without any, as the DOM engine's
	}
	for k := range st.refs {
		if err := r.reference(&st.refs[k]); err != nil {
			return err
		}
		if !st.refs[k].swa {
			sig.Covered = append(sig.Covered, r.at(st.refs[k].target))
		}
	}
	if st.hasToken {
		r.res.Token = r.at(st.token)
	}
	if r.res.Signatures == nil {
		r.res.Signatures = b.sigs[:0:len(b.sigs)]
	}
	r.res.Signatures = append(r.res.Signatures, sig)
	r.keySize(n, sig.KeyBits)
	return nil
}

// keySize makes the n-th key_size usage fact this match's. The learned
// list is shared until a key size differs from the learned one.
func (r *run) keySize(n, bits int) {
	t := r.top
	if n >= len(t.keySizes) {
		return
	}
	k := t.keySizes[n]
	if v, err := strconv.Atoi(r.res.Algorithms[k].Value); err == nil && v == bits {
		return // no string made for the common case
	}
	want := strconv.Itoa(bits)
	if r.shared {
		r.res.Algorithms = append([]wss.AlgorithmUse(nil), r.res.Algorithms...)
		r.shared = false
	}
	r.res.Algorithms[k].Value = want
}

// signer resolves and validates the signing certificate.
func (r *run) signer(st *sigStep) (*trust.Identity, error) {
	ts := r.p.Trust()
	if ts == nil {
		return nil, wss.Failf(wss.ReasonUntrusted, "policy trusts no signer")
	}
	leaf := st.leaf
	var tc *tokenCert // the token's certificate, to remember once trusted
	if st.bst >= 0 || st.bstPart >= 0 {
		var err error
		if st.bst >= 0 {
			tc, err = r.e.tokenCertificate(st, r.val(st.bst))
			if tc != nil {
				leaf = tc.cert
			}
		} else {
			leaf, err = r.tokenCertificate(st.bstPart)
		}
		if err != nil {
			return nil, err
		}
	} else if ts != st.trust {
		// The trust store was reloaded: its index may name another
		// certificate now.
		return nil, &fallback{"trust store reloaded"}
	}
	id, err := ts.Verify(leaf, nil, r.now, trust.PurposeSigning)
	if err != nil {
		return nil, wss.Wrap(wss.ReasonUntrusted, err, "signer %s", trust.Reason(err))
	}
	if tc != nil && st.cert.Load() != tc {
		// Only a trusted certificate is remembered: a stranger's token
		// does not displace the partner's.
		st.cert.Store(tc)
	}
	return id, nil
}

func (r *run) reference(rs *refStep) error {
	want, err := wss.AppendBase64(r.dv[:0], r.val(rs.value))
	if err != nil {
		return err
	}
	r.dv = want
	if rs.swa {
		return r.swaReference(rs, want)
	}
	if rs.xop {
		return r.xopReference(rs, want)
	}
	if rs.body && len(r.bodyInc) > 0 {
		return r.xopBodyDigest(rs, want)
	}
	if rs.body {
		if r.fast {
			if subtle.ConstantTimeCompare(r.bodySum, want) != 1 {
				return wss.Failf(wss.ReasonDigest, "digest does not match")
			}
			return nil
		}
		return r.bodyDigest(rs, want)
	}
	// One digest of the whole canonical form: a Write per piece costs more
	// than the copy (a hundred pieces, most of them short).
	r.part = r.canon(r.part[:0], rs.canon)
	var got []byte
	if rs.mid != nil {
		h, n, err := r.resume(rs.digest, rs.mid)
		if err != nil {
			return wss.Wrap(wss.ReasonAlgorithm, err, "DigestMethod")
		}
		h.Write(r.part[n:])
		got = h.Sum(r.dsum[:0])
	} else {
		var err error
		if got, err = crypto.SumDigest(rs.digest, r.part, &r.dsum); err != nil {
			return wss.Wrap(wss.ReasonAlgorithm, err, "DigestMethod")
		}
	}
	if subtle.ConstantTimeCompare(got, want) != 1 {
		return wss.Failf(wss.ReasonDigest, "digest does not match")
	}
	return nil
}
