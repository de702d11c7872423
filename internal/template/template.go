package template

import (
	"crypto/x509"
	"encoding/xml"
	"sync/atomic"

	"github.com/wssgw/wssgw/internal/soap"
	"github.com/wssgw/wssgw/internal/trust"
	"github.com/wssgw/wssgw/internal/wss"
)

// Template is one learned message shape: constant fragments around typed
// slots, the bindings re-checked on every match, and the program that
// redoes the DOM engine's security work on the captured values.
type Template struct {
	ID    string   // hex of the shape hash: the same shape learned twice is one template
	lits  lits     // the constant fragments, then the extra canonical literals
	frags []uint16 // fragment k is distinct fragment frags[k]
	ends  []uint32 // distinct fragment u ends at ends[u] in lits
	slots []slot

	bindings []binding // Reference URIs ↔ ids
	ids      []int     // id slots: pairwise distinct
	pinned   []pin     // slots that must hold the learned value

	version        soap.Version
	body           anchor
	security       [2]anchor
	headers        []partAnchor
	attrs          []attrAnchor // Envelope and Header attributes
	steps          []step       // the Security header's children, in order
	algs           []wss.AlgorithmUse
	keySizes       []int  // indices into algs of key_size uses, by signature
	exemplarValues []byte // length-prefixed, deflated against exDict when set
	exDict         []byte
	plain          *plainAt // an inner template: where the plaintext is
	// pkg: learned from the root part of an MTOM package (xop.go); it
	// matches only roots of packages, and a plain template only plain
	// messages: the same bytes mean another digest with parts.
	pkg bool
	xop []include // the root's xop:Includes outside a generic Body, in document order
	swa []swaRef  // the SwA References of the signatures, in document order
	// bodySigs: the signatures covering a generic Body, which cover every
	// part an xop:Include inside it names.
	bodySigs  []int
	gbody     *bodyAt // a generic Body (generic.go), else nil
	size      int
	learnedAt int64

	hits atomic.Uint64
	// checked counts hits the DOM engine re-verified and agreed with: a
	// generic Body is trusted unchecked only after genericShadowHits.
	checked atomic.Uint64
	lastHit atomic.Int64 // unix nanoseconds

	// sealed: the outer template of an encrypted package, which resolves
	// the received root's includes; the facts are its inner template's
	// (xop_enc.go).
	sealed bool
}

// slot is a variable part of the message.
type slot struct {
	class class
	term  byte  // the byte that ends it: '<' or the attribute's quote
	limit uint8 // which gate limit bounds it
}

type binding struct{ ref, id int }

type pin struct {
	slot  int
	value []byte
}

// anchor locates an offset of the learned message in a matched one: it is
// delta bytes into constant fragment frag, which starts where the slot
// before it ended.
type anchor struct{ frag, delta int }

type partAnchor struct {
	part    wss.Part
	at, end anchor
}

// attrAnchor locates an attribute of Envelope or Header (wss.Attribute),
// as security does the Security header: the unsigned-content policy cuts
// these spans out of the forwarded bytes, so both engines must report them
// alike.
type attrAnchor struct {
	name xml.Name
	span [2]anchor
}

// piece is a part of a canonical form: n literal bytes at off in the
// template's lits, then, unless slot is noSlot, that slot's value
// normalized and escaped as C14N requires. Offsets, not slices, and a
// literal with the slot after it in one piece: a template has a hundred.
type piece struct {
	off  uint32
	n    uint16
	slot uint16
}

// noSlot ends a piece with its literal; a template has fewer slots (learn
// refuses more).
const noSlot = 1<<16 - 1

// maxPieceLit bounds a literal piece; longer literals take several.
const maxPieceLit = 1<<16 - 1

// step is one child of the Security header the DOM engine processed.
type step struct {
	ts  *tsStep
	ut  *utStep
	sig *sigStep
	dec *decStep
}

type tsStep struct {
	start            anchor
	created, expires int // slots; expires -1 when absent
}

type utStep struct {
	start          anchor
	name, password int
	nonce, created int // -1 when absent
	digest         bool
}

type sigStep struct {
	method, c14n string
	signedInfo   []piece
	siMid        *midstate // SHA-256 after signedInfo's first literal blocks
	value        int       // SignatureValue slot
	keyRef       string
	bst          int // slot of the BinarySecurityToken holding the key, -1
	// bstPart is the index in Template.xop of the xop:Include of a
	// BinarySecurityToken whose certificate is a MIME part (WSS4J
	// storeBytesInAttachment), -1.
	bstPart  int
	token    anchor
	hasToken bool
	leaf     *x509.Certificate         // the looked-up signer, when bst < 0
	cert     atomic.Pointer[tokenCert] // the trusted token bst held last (Engine.tokenCertificate)
	trust    *trust.Store              // the store the lookup was made in
	refs     []refStep
	swaRefs  int // how many of refs are SwA References (xop.go)
}

type refStep struct {
	digest string
	canon  []piece
	mid    *midstate // digest's state after canon's first literal blocks
	value  int       // DigestValue slot
	target anchor
	// xop: canon holds xop:Include slots, each standing for its part's
	// base64 (the XOP infoset, XOP 1.0 §3.2), streamed into the digest.
	// lines: the signer wrote that base64 in the MIME form (76-character
	// lines), tried first; the other form is tried when it does not match
	// (here and for a generic Body's xop:Includes).
	xop, lines bool
	// swa: an SwA Reference (SwA Profile 1.1 §5.2): value is the digest
	// of the part whose cid: URI slot uri names, through transform.
	swa       bool
	uri       int
	transform string
	// body: the target is the generic Body, canonicalized with alg and
	// prefixes from the gated message instead of canon.
	body     bool
	alg      string
	prefixes []string
}

func (t *Template) lit(p piece) []byte { return t.lits.at(p.off, uint32(p.n)) }

// frag returns constant fragment k. Fragments are all in the lits' c
// region: reading it directly keeps frag small enough to inline into the
// matcher's loop (issue 14).
func (t *Template) frag(k int) []byte {
	u, start := t.frags[k], uint32(0)
	if u > 0 {
		start = t.ends[u-1]
	}
	return t.lits.c.at(start, t.ends[u]-start)
}

// nfrags is the number of fragments: one more than the slots.
func (t *Template) nfrags() int { return len(t.frags) }
