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
	gbody          *bodyAt  // a generic Body (generic.go), else nil
	size           int
	learnedAt      int64

	hits    atomic.Uint64
	lastHit atomic.Int64 // unix nanoseconds
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
	value        int // SignatureValue slot
	keyRef       string
	bst          int // slot of the BinarySecurityToken holding the key, -1
	token        anchor
	hasToken     bool
	leaf         *x509.Certificate // the looked-up signer, when bst < 0
	trust        *trust.Store      // the store the lookup was made in
	refs         []refStep
}

type refStep struct {
	digest string
	canon  []piece
	value  int // DigestValue slot
	target anchor
	// body: the target is the generic Body, canonicalized with alg and
	// prefixes from the gated message instead of canon.
	body     bool
	alg      string
	prefixes []string
}

func (t *Template) lit(p piece) []byte { return t.lits.at(p.off, uint32(p.n)) }

// frag returns constant fragment k.
func (t *Template) frag(k int) []byte {
	u, start := t.frags[k], uint32(0)
	if u > 0 {
		start = t.ends[u-1]
	}
	return t.lits.at(start, t.ends[u]-start)
}

// nfrags is the number of fragments: one more than the slots.
func (t *Template) nfrags() int { return len(t.frags) }
