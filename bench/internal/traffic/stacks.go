package traffic

import (
	"encoding/xml"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	wcrypto "github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/signer"
)

const (
	nsSOAP11 = "http://schemas.xmlsoap.org/soap/envelope/"
	nsSOAP12 = "http://www.w3.org/2003/05/soap-envelope"
	nsWSA    = "http://www.w3.org/2005/08/addressing"
)

// stack is a partner's SOAP stack: how it writes the envelope, the
// addressing headers and the payload, and how it signs. Two stacks that
// send the same operation produce different templates, as two partners do.
type stack struct {
	name      string
	soapNS    string
	soapPfx   string
	wsaPfx    string
	payload   func(op *operation) (open string, pfx string) // root tag start and element prefix
	headers   []string                                      // wsa headers in the stack's order
	keyRef    string
	inclusive bool
	extra     string // markup of further header blocks, after the addressing ones (fresh.go)
}

// stacks are the two partners of the mix. The Security header's own
// prefixes (wsse, wsu, ds) are the project signer's, which does not
// offer others; the stacks differ in everything the signer lets vary.
var stacks = []stack{
	{
		// WSS4J/CXF-like: SOAP 1.1 with soapenv:, wsa To/Action/MessageID,
		// prefixed payload, BST key reference, InclusiveNamespaces lists.
		name: "wss4j", soapNS: nsSOAP11, soapPfx: "soapenv", wsaPfx: "wsa",
		payload: func(op *operation) (string, string) {
			return fmt.Sprintf(`<ns1:%s xmlns:ns1="%s">`, op.name, op.ns), "ns1:"
		},
		headers: []string{"To", "Action", "MessageID"},
		keyRef:  signer.RefBST, inclusive: true,
	},
	{
		// .NET-WCF-like: SOAP 1.2 with s:, a: addressing in WCF's order
		// with ReplyTo, default-namespace payload, thumbprint key
		// reference, no InclusiveNamespaces.
		name: "wcf", soapNS: nsSOAP12, soapPfx: "s", wsaPfx: "a",
		payload: func(op *operation) (string, string) {
			return fmt.Sprintf(`<%s xmlns="%s">`, op.name, op.ns), ""
		},
		headers: []string{"Action", "MessageID", "ReplyTo", "To"},
		keyRef:  signer.RefThumbprint, inclusive: false,
	},
}

// Message is one generated request.
type Message struct {
	Stack, Op string
	Items     int    // items over all lists
	Plain     []byte // the envelope before signing
	Signed    []byte
}

// Generator makes the mix: seeded, so a run is reproducible byte for byte
// when its clock is (the signer's ids come from the same seeded stream;
// RSA PKCS#1 v1.5 signatures are deterministic). One Generator is not safe
// for concurrent use; run one per goroutine with different seeds.
type Generator struct {
	r   *rand.Rand
	rd  *rand.ChaCha8
	kp  *wcrypto.KeyPair
	now func() time.Time
	seq int
}

// New returns the generator of seed, signing with kp; now dates each
// message's Timestamp (a fixed time for reproducible bytes, time.Now for
// messages a gateway with a replay store accepts once each).
func New(seed uint64, kp *wcrypto.KeyPair, now func() time.Time) *Generator {
	var s [32]byte
	for i := range 8 {
		s[i] = byte(seed >> (8 * i))
	}
	return &Generator{r: rand.New(rand.NewPCG(seed, 14)), rd: rand.NewChaCha8(s), kp: kp, now: now}
}

// Next returns the next message: a stack (60 % the first), an operation
// (Zipf-like: a few operations carry most traffic) and a payload.
func (g *Generator) Next() (Message, error) {
	st := &stacks[0]
	if g.r.Float64() >= 0.6 {
		st = &stacks[1]
	}
	return g.sign(st, &operations[g.opIndex()], g.options(st))
}

// options are how stack st signs.
func (g *Generator) options(st *stack) signer.Options {
	o := signer.DefaultOptions()
	o.Signer, o.Certificate, o.KeyReference = g.kp.Signer, g.kp.Certificate, st.keyRef
	o.InclusivePrefixes, o.TTL, o.Rand = st.inclusive, time.Hour, g.rd
	o.Now = g.now
	for _, h := range st.headers {
		o.SignHeaders = append(o.SignHeaders, xml.Name{Space: nsWSA, Local: h})
	}
	return o
}

// sign writes op's envelope as st writes it and signs it with o.
func (g *Generator) sign(st *stack, op *operation, o signer.Options) (Message, error) {
	plain, items := g.envelope(st, op)
	signed, err := signer.Secure(plain, o)
	if err != nil {
		return Message{}, fmt.Errorf("%s %s: %w", st.name, op.name, err)
	}
	return Message{Stack: st.name, Op: op.name, Items: items, Plain: plain, Signed: signed}, nil
}

// opIndex draws an operation with weight 1/(k+1).
func (g *Generator) opIndex() int {
	var total float64
	for k := range operations {
		total += 1 / float64(k+1)
	}
	x := g.r.Float64() * total
	for k := range operations {
		if x -= 1 / float64(k+1); x < 0 {
			return k
		}
	}
	return len(operations) - 1
}

// envelope writes the plain request of op as stack st writes it.
func (g *Generator) envelope(st *stack, op *operation) ([]byte, int) {
	g.seq++
	var b strings.Builder
	sp, ap := st.soapPfx, st.wsaPfx
	fmt.Fprintf(&b, `<%s:Envelope xmlns:%s="%s" xmlns:%s="%s"><%s:Header>`, sp, sp, st.soapNS, ap, nsWSA, sp)
	for _, h := range st.headers {
		switch h {
		case "To":
			fmt.Fprintf(&b, `<%s:To>https://partner.example/services/%s</%s:To>`, ap, op.name, ap)
		case "Action":
			fmt.Fprintf(&b, `<%s:Action>%s/%s</%s:Action>`, ap, op.ns, op.name, ap)
		case "MessageID":
			fmt.Fprintf(&b, `<%s:MessageID>urn:uuid:%08x-%04x-4%03x-8%03x-%012x</%s:MessageID>`, ap,
				g.r.Uint32(), g.r.Uint32()&0xffff, g.r.Uint32()&0xfff, g.r.Uint32()&0xfff, g.r.Uint64()&0xffffffffffff, ap)
		case "ReplyTo":
			fmt.Fprintf(&b, `<%s:ReplyTo><%s:Address>%s/anonymous</%s:Address></%s:ReplyTo>`, ap, ap, nsWSA, ap, ap)
		}
	}
	b.WriteString(st.extra)
	fmt.Fprintf(&b, `</%s:Header><%s:Body>`, sp, sp)
	open, p := st.payload(op)
	b.WriteString(open)
	for _, f := range op.fields {
		g.element(&b, p, f)
	}
	items := 0
	for _, l := range op.lists {
		n := listLen(g.r)
		items += n
		fmt.Fprintf(&b, `<%s%ss>`, p, l.item)
		for i := range n {
			fmt.Fprintf(&b, `<%s%s no="%d">`, p, l.item, i+1)
			for _, f := range l.fields {
				g.element(&b, p, f)
			}
			fmt.Fprintf(&b, `</%s%s>`, p, l.item)
		}
		fmt.Fprintf(&b, `</%s%ss>`, p, l.item)
	}
	fmt.Fprintf(&b, `</%s%s></%s:Body></%s:Envelope>`, p, op.name, sp, sp)
	return []byte(b.String()), items
}

// element writes f unless it is drawn absent, with a text value: a number,
// an identifier or one of the escaped texts.
func (g *Generator) element(b *strings.Builder, p string, f field) {
	if f.optional > 0 && g.r.Float64() < f.optional {
		return
	}
	fmt.Fprintf(b, `<%s%s>`, p, f.name)
	switch g.r.IntN(3) {
	case 0:
		fmt.Fprintf(b, "%d", g.r.IntN(100000))
	case 1:
		fmt.Fprintf(b, "ID-%d-%06d", g.seq, g.r.IntN(1000000))
	default:
		escape(b, texts[g.r.IntN(len(texts))])
	}
	fmt.Fprintf(b, `</%s%s>`, p, f.name)
}

// Operations is the number of operations in the mix.
func Operations() int { return len(operations) }

// Stacks is the number of partner stacks in the mix.
func Stacks() int { return len(stacks) }

// SignedHeaders is how many header blocks stack signs besides the
// Timestamp (its addressing headers); 0 for an unknown stack.
func SignedHeaders(stack string) int {
	for i := range stacks {
		if stacks[i].name == stack {
			return len(stacks[i].headers)
		}
	}
	return 0
}
