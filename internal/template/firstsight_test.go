package template

import (
	"bytes"
	"crypto/x509"
	"fmt"
	"hash/maphash"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/budget"
	wcrypto "github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/dom"
	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/testpki"
	"github.com/wssgw/wssgw/internal/testtraffic"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// claimOf is the signer a message claims (0: none).
func claimOf(msg string) uint64 {
	_, s := walkShape([]byte(msg), false)
	return s
}

// secEnvelope is a SOAP envelope whose Security header holds sec, with
// header blocks before it and a Body.
func secEnvelope(before, sec, body string) string {
	return `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Header>` + before +
		`<wsse:Security xmlns:wsse="urn:wsse" xmlns:wsu="urn:wsu" xmlns:ds="urn:ds" soap:mustUnderstand="1">` + sec +
		`</wsse:Security></soap:Header><soap:Body wsu:Id="B-1">` + body + `</soap:Body></soap:Envelope>`
}

// sigWith is a ds:Signature whose KeyInfo holds str inside its
// SecurityTokenReference.
func sigWith(str string) string {
	return `<ds:Signature><ds:SignedInfo><ds:Reference URI="#B-1"><ds:DigestValue>AAAA</ds:DigestValue></ds:Reference></ds:SignedInfo>` +
		`<ds:SignatureValue>c2lnbmF0dXJl</ds:SignatureValue><ds:KeyInfo Id="KI-7"><wsse:SecurityTokenReference wsu:Id="STR-7">` + str +
		`</wsse:SecurityTokenReference></ds:KeyInfo></ds:Signature>`
}

func bst(id, text string) string {
	return `<wsse:BinarySecurityToken wsu:Id="` + id + `" ValueType="#X509v3" EncodingType="#Base64Binary">` + text + `</wsse:BinarySecurityToken>`
}

const (
	certA = "MIIBszCCAVmgAwIBAgIUQUFBQUFBQUFBQUFB"
	certB = "MIIBszCCAVmgAwIBAgIUQkJCQkJCQkJCQkJC"
)

func TestClaimedSigner(t *testing.T) {
	refTo := func(id string) string { return `<wsse:Reference URI="#` + id + `" ValueType="#X509v3"/>` }
	kid := func(vt, v string) string {
		return `<wsse:KeyIdentifier EncodingType="#Base64Binary" ValueType="` + vt + `">` + v + `</wsse:KeyIdentifier>`
	}
	issuerSerial := func(name, serial string) string {
		return `<ds:X509Data><ds:X509IssuerSerial><ds:X509IssuerName>` + name + `</ds:X509IssuerName><ds:X509SerialNumber>` +
			serial + `</ds:X509SerialNumber></ds:X509IssuerSerial></ds:X509Data>`
	}
	bstA := secEnvelope("", bst("X-1", certA)+sigWith(refTo("X-1")), "<m:Op/>")
	thumb := secEnvelope("", sigWith(kid("#ThumbprintSHA1", "3q2+7w==")), "<m:Op/>")
	ski := secEnvelope("", sigWith(kid("#X509SubjectKeyIdentifier", "q83vAQ==")), "<m:Op/>")
	is := secEnvelope("", sigWith(issuerSerial("CN=Partner CA,O=Example", "4711")), "<m:Op/>")
	encKey := `<xenc:EncryptedKey xmlns:xenc="urn:xenc"><ds:KeyInfo><wsse:SecurityTokenReference>` + issuerSerial("CN=Gateway", "1") +
		`</wsse:SecurityTokenReference></ds:KeyInfo></xenc:EncryptedKey>`
	for _, tc := range []struct {
		name string
		msg  string
		like string // the message claims what like claims; "" = no claim
	}{
		{"ok/bst", bstA, bstA},
		{"ok/bst-other-prefixes-and-ids", strings.NewReplacer("wsse:", "o:", "xmlns:wsse", "xmlns:o", "X-1", "uuid-42", "ds:", "").Replace(bstA), bstA},
		{"ok/bst-wrapped-base64", strings.Replace(bstA, certA, certA[:12]+"\r\n "+certA[12:24]+"&#13;\n"+certA[24:]+"&#xD;&#xa;", 1), bstA},
		{"ok/bst-cdata", strings.Replace(bstA, certA, "<![CDATA["+certA+"]]>", 1), bstA},
		{"ok/bst-without-reference", secEnvelope("", bst("X-1", certA)+sigWith(kid("#ThumbprintSHA1", "3q2+7w==")), "<m:Op/>"), bstA},
		{"ok/referenced-bst-wins", secEnvelope("", bst("G-1", certB)+bst("X-1", certA)+sigWith(refTo("X-1")), "<m:Op/>"), bstA},
		{"ok/first-bst-without-matching-reference", secEnvelope("", bst("X-1", certA)+bst("G-1", certB)+sigWith(refTo("X-9")), "<m:Op/>"), bstA},
		{"ok/thumbprint", thumb, thumb},
		{"ok/thumbprint-other-ids", strings.NewReplacer("STR-7", "STR-8", "KI-7", "KI-9", "B-1", "B-2").Replace(thumb), thumb},
		{"ok/ski", ski, ski},
		{"ok/issuer-serial", is, is},
		{"ok/issuer-serial-reindented", strings.Replace(is, "<ds:X509IssuerName>", "\n  <ds:X509IssuerName>", 1), is},
		{"ok/signature-key-info-not-encrypted-key", secEnvelope("", encKey+sigWith(kid("#ThumbprintSHA1", "3q2+7w==")), "<m:Op/>"), thumb},
		{"ok/two-signatures-first-wins", secEnvelope("", sigWith(kid("#ThumbprintSHA1", "3q2+7w=="))+sigWith(kid("#X509SubjectKeyIdentifier", "q83vAQ==")), "<m:Op/>"), thumb},
		{"fail/no-key-info", secEnvelope("", `<ds:Signature><ds:SignedInfo/><ds:SignatureValue>c2ln</ds:SignatureValue></ds:Signature>`, "<m:Op/>"), ""},
		{"fail/reference-only", secEnvelope("", sigWith(refTo("X-1")), "<m:Op/>"), ""},
		{"fail/no-security-header", `<soap:Envelope xmlns:soap="urn:s"><soap:Header/><soap:Body><m:Op/></soap:Body></soap:Envelope>`, ""},
		{"fail/bst-in-other-header", secEnvelope(`<h:Extra xmlns:h="urn:h">`+bst("X-1", certA)+`</h:Extra>`, sigWith(refTo("X-1")), "<m:Op/>"), ""},
		{"fail/bst-in-body", secEnvelope("", sigWith(refTo("X-1")), `<m:Op>`+bst("X-1", certA)+`</m:Op>`), ""},
		{"fail/bst-nested-in-security", secEnvelope("", `<x:Wrap xmlns:x="urn:x">`+bst("X-1", certA)+`</x:Wrap>`+sigWith(refTo("X-1")), "<m:Op/>"), ""},
		{"fail/encrypted-key-only", secEnvelope("", encKey, "<m:Op/>"), ""},
		{"fail/truncated-in-bst", bstA[:strings.Index(bstA, certA)+10], ""},
		{"fail/empty-bst", secEnvelope("", bst("X-1", " \n ")+sigWith(refTo("X-1")), "<m:Op/>"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := claimOf(tc.msg)
			if tc.like == "" {
				assert.Zero(t, got)
				return
			}
			assert.NotZero(t, got)
			assert.Equal(t, claimOf(tc.like), got)
		})
	}
	t.Run("fail/distinct-claims", func(t *testing.T) {
		claims := map[uint64]string{}
		for name, msg := range map[string]string{
			"bst-A": bstA, "bst-B": strings.Replace(bstA, certA, certB, 1), "thumbprint": thumb, "ski": ski, "issuer-serial": is,
			"other-thumbprint": strings.Replace(thumb, "3q2+7w==", "3q2+7A==", 1),
			"other-serial":     strings.Replace(is, "4711", "4712", 1),
		} {
			c := claimOf(msg)
			require.NotZero(t, c, name)
			if other, ok := claims[c]; ok {
				t.Fatalf("%s and %s claim alike", name, other)
			}
			claims[c] = name
		}
	})
}

// TestClaimedSignerGenerated: the fresh-shape generator's messages (random
// prefixes and layouts, all four key reference forms) claim one signer per
// key and form, and different signers for different keys.
func TestClaimedSignerGenerated(t *testing.T) {
	ca := testpki.NewCA(t, "claim CA")
	dir := t.TempDir()
	now := func() time.Time { return time.Unix(1.8e9, 0) }
	form := func(msg []byte) string {
		for _, f := range []string{"BinarySecurityToken", "X509IssuerSerial", "#X509SubjectKeyIdentifier", "#ThumbprintSHA1"} {
			if bytes.Contains(msg, []byte(f)) {
				return f
			}
		}
		return "none"
	}
	byForm := map[string]map[string]uint64{} // form -> key -> claim
	for k, name := range []string{"partner-a", "partner-b"} {
		leaf := ca.IssueRSA(t, dir, name)
		g := testtraffic.New(uint64(7+k), &wcrypto.KeyPair{Signer: leaf.Key, Certificate: leaf.Cert}, now)
		for i := range 24 {
			m, err := g.Fresh()
			if i%3 == 0 {
				m, err = g.Next() // the mix's stacks: BST and thumbprint
			}
			require.NoError(t, err)
			f := form(m.Signed)
			require.NotEqual(t, "none", f)
			c := claimOf(string(m.Signed))
			require.NotZero(t, c, "%s message %d (%s)", name, i, f)
			if byForm[f] == nil {
				byForm[f] = map[string]uint64{}
			}
			if want, ok := byForm[f][name]; ok {
				assert.Equal(t, want, c, "%s message %d (%s): one key, one claim", name, i, f)
			}
			byForm[f][name] = c
		}
	}
	require.Len(t, byForm, 4, "every key reference form drawn")
	for f, claims := range byForm {
		if len(claims) == 2 {
			assert.NotEqual(t, claims["partner-a"], claims["partner-b"], "%s: two keys, two claims", f)
		}
	}
}

// laneLog records, in order, what the engine asked of the lanes and of the
// DOM engine's workers.
type laneLog struct {
	events []string
	refuse bool
}

func (l *laneLog) EnterFirstSight(lane uint64) (func(), error) {
	if l.refuse {
		l.events = append(l.events, fmt.Sprintf("refuse %x", lane))
		return nil, errRefused
	}
	l.events = append(l.events, fmt.Sprintf("enter %x", lane))
	return func() { l.events = append(l.events, "leave") }, nil
}

func (l *laneLog) Acquire(int64) (func(), error) {
	l.events = append(l.events, "dom")
	return func() { l.events = append(l.events, "dom done") }, nil
}

func (l *laneLog) TryAcquire(n int64) (func(), error) { return l.Acquire(n) }

func (l *laneLog) take() []string {
	e := l.events
	l.events = nil
	return e
}

// errRefused is what budget.Budget.EnterFirstSight returns.
var errRefused = &budget.OverloadError{Reason: "first_sight", Limit: 1, RetryAfter: time.Second}

// laneFixture is a fixture learning at the second sight whose misses take
// lanes of the returned log, which also counts DOM runs.
func laneFixture(t *testing.T) (*fixture, *laneLog) {
	f, _ := learnAfterFixture(t)
	l := &laneLog{}
	f.engine.LimitFirstSight(l)
	f.dom.LimitWorkers(l)
	return f, l
}

func TestFirstSightLanes(t *testing.T) {
	const dom = "dom"
	domRun := []string{dom, "dom done", "leave"}
	enter := func(lane uint64, then ...string) []string {
		return append([]string{fmt.Sprintf("enter %x", lane)}, then...)
	}
	t.Run("ok/unknown-signer-shares-lane-0-then-known-signer-own-lane", func(t *testing.T) {
		f, l := laneFixture(t)
		first := f.sign(t, envelope(false, 2, "a"), f.rsa, signer.RefBST, f.now, nil)
		_, err := f.engine.Process(first, f.policy, f.now)
		require.NoError(t, err)
		assert.Equal(t, enter(0, domRun...), l.take(), "a signer no accepted message claimed: lane 0")

		other := f.sign(t, traceEnvelope("Other", 2), f.rsa, signer.RefBST, f.now, nil)
		res, err := f.engine.Process(other, f.policy, f.now)
		require.NoError(t, err)
		assert.Equal(t, metrics.LookupNoTemplate, res.Lookup)
		assert.Equal(t, enter(certLane(f.rsa.Cert), domRun...), l.take(), "a new shape of a known signer: its own lane")
		assert.Equal(t, claimOf(string(first)), claimOf(string(other)))

		ec := f.sign(t, traceEnvelope("Third", 2), f.ec, signer.RefThumbprint, f.now, nil)
		_, err = f.engine.Process(ec, f.policy, f.now)
		require.NoError(t, err)
		assert.Equal(t, enter(0, domRun...), l.take(), "another signer, never accepted: lane 0")
	})
	t.Run("ok/one-key-named-two-ways-has-one-lane", func(t *testing.T) {
		// The token and its thumbprint are two claims of one key: each is
		// unknown (lane 0) until a message making it was accepted, and
		// then both are the key's one lane, so an attacker holding one
		// key cannot take a lane per way of naming it.
		f, l := laneFixture(t)
		for i, ref := range []string{signer.RefBST, signer.RefThumbprint} {
			msg := f.sign(t, traceEnvelope(fmt.Sprintf("First%d", i), 2), f.rsa, ref, f.now, nil)
			_, err := f.engine.Process(msg, f.policy, f.now)
			require.NoError(t, err)
			assert.Equal(t, enter(0, domRun...), l.take(), "%s: a claim never accepted", ref)
		}
		for i, ref := range []string{signer.RefBST, signer.RefThumbprint} {
			msg := f.sign(t, traceEnvelope(fmt.Sprintf("Then%d", i), 2), f.rsa, ref, f.now, nil)
			_, err := f.engine.Process(msg, f.policy, f.now)
			require.NoError(t, err)
			assert.Equal(t, enter(certLane(f.rsa.Cert), domRun...), l.take(), "%s: the key's lane", ref)
		}
		assert.Equal(t, 2, f.store.signers.size(), "two claims")
	})
	t.Run("ok/shape-accepted-before-takes-no-lane", func(t *testing.T) {
		f, l := laneFixture(t)
		for i, want := range [][]string{enter(0, domRun...), {dom, "dom done"}, {dom, "dom done"}} {
			// One envelope shape, different payloads: the second is no
			// first sight (and learns), the third hits (its DOM run is
			// the shadow check of a new generic Body's first hits).
			msg := f.sign(t, envelope(false, 1+i, fmt.Sprintf("p%d", i)), f.rsa, signer.RefBST, f.now, nil)
			res, err := f.engine.Process(msg, f.policy, f.now)
			require.NoError(t, err)
			assert.Equal(t, want, l.take(), "message %d", i)
			assert.Equal(t, i == 2, res.Lookup == metrics.LookupHit, "message %d", i)
		}
		require.Equal(t, 1, f.store.Len())
	})
	t.Run("fail/refused-never-reaches-the-dom-engine", func(t *testing.T) {
		f, l := laneFixture(t)
		l.refuse = true
		msg := f.sign(t, envelope(false, 2, "a"), f.rsa, signer.RefBST, f.now, nil)
		res, err := f.engine.Process(msg, f.policy, f.now)
		require.ErrorIs(t, err, budget.ErrOverloaded)
		assert.Same(t, errRefused, err, "the lane's error passes through unchanged")
		require.NotNil(t, res)
		assert.Equal(t, metrics.LookupNoTemplate, res.Lookup)
		assert.Equal(t, []string{"refuse 0"}, l.take(), "no DOM run")
		assert.Zero(t, f.store.seen.size()+f.store.signers.size(), "a refusal teaches nothing")
	})
	t.Run("fail/rejected-message-leaves-and-teaches-nothing", func(t *testing.T) {
		f, l := laneFixture(t)
		msg := f.sign(t, envelope(false, 2, "a"), f.rsa, signer.RefBST, f.now, nil)
		bad := bytes.Replace(msg, []byte("a 0"), []byte("b 0"), 1)
		require.NotEqual(t, msg, bad)
		_, err := f.engine.Process(bad, f.policy, f.now)
		require.Error(t, err)
		assert.Equal(t, enter(0, domRun...), l.take(), "leave after a rejecting DOM run too")
		assert.Zero(t, f.store.signers.size(), "a rejected message's valid certificate makes no signer known")

		other := f.sign(t, traceEnvelope("Other", 2), f.rsa, signer.RefBST, f.now, nil)
		_, err = f.engine.Process(other, f.policy, f.now)
		require.NoError(t, err)
		assert.Equal(t, enter(0, domRun...), l.take(), "still lane 0")
		_, err = f.engine.Process(bad, f.policy, f.now)
		require.Error(t, err)
		assert.Equal(t, enter(certLane(f.rsa.Cert), domRun...), l.take(), "known since the accepted message")
	})
	t.Run("ok/over-max-message-bytes-is-a-miss-too", func(t *testing.T) {
		// Padding a fresh shape past templates.maxMessageBytes does not
		// dodge the lanes; such a shape accepted once takes none.
		f, l := laneFixture(t)
		f.store.opts.MaxMessageBytes = 1024
		for i, want := range [][]string{enter(0, domRun...), {dom, "dom done"}} {
			msg := f.sign(t, envelope(false, 20+i, "long"), f.rsa, signer.RefBST, f.now, nil)
			require.Greater(t, len(msg), f.store.opts.MaxMessageBytes)
			res, err := f.engine.Process(msg, f.policy, f.now)
			require.NoError(t, err)
			assert.Equal(t, metrics.LookupDisabled, res.Lookup)
			assert.Equal(t, want, l.take(), "message %d", i)
		}
		assert.Zero(t, f.store.Len(), "never learned")
		l.refuse = true
		msg := f.sign(t, traceEnvelope("Padded", 30), f.rsa, signer.RefBST, f.now, nil)
		_, err := f.engine.Process(msg, f.policy, f.now)
		require.ErrorIs(t, err, errRefused)
		assert.Equal(t, []string{fmt.Sprintf("refuse %x", certLane(f.rsa.Cert))}, l.take(), "its signer's lane, known since the accepted ones")
	})
	t.Run("ok/unsigned-claims-nothing", func(t *testing.T) {
		f, l := laneFixture(t)
		_, err := f.engine.Process(envelope(false, 2, "a"), f.policy, f.now)
		require.Error(t, err, "the policy requires a signature")
		assert.Equal(t, enter(0, domRun...), l.take())
	})
	t.Run("ok/no-lanes-when-learning-at-first-sight", func(t *testing.T) {
		f := newFixture(t, nil, testOptions())
		l := &laneLog{}
		f.engine.LimitFirstSight(l)
		f.dom.LimitWorkers(l)
		_, err := f.engine.Process(f.sign(t, envelope(false, 2, "a"), f.rsa, signer.RefBST, f.now, nil), f.policy, f.now)
		require.NoError(t, err)
		assert.Equal(t, []string{dom, "dom done"}, l.take(), "no sightings kept: no first sight told apart")
	})
	t.Run("ok/no-lanes-without-limit", func(t *testing.T) {
		f, _ := learnAfterFixture(t)
		l := &laneLog{}
		f.dom.LimitWorkers(l)
		_, err := f.engine.Process(f.sign(t, envelope(false, 2, "a"), f.rsa, signer.RefBST, f.now, nil), f.policy, f.now)
		require.NoError(t, err)
		assert.Equal(t, []string{dom, "dom done"}, l.take())
		assert.Zero(t, f.store.signers.size(), "no lanes: no signers kept")
	})
}

// certLane is the lane of the claims of cert's key.
func certLane(cert *x509.Certificate) uint64 { return maphash.Bytes(shapeSeed, cert.Raw) }

// size is how many claims l holds.
func (l *signerLanes) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.cur) + len(l.old)
}

// size is how many keys s holds.
func (s *sightings) size() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.cur) + len(s.old)
}

// TestLaneWalkLinear: inputs that made the Body jump rescan the message
// once per Body-named element. Quadratic, these take minutes; linear, a
// moment: the test fails by the package's timeout, not by a clock.
func TestLaneWalkLinear(t *testing.T) {
	const n = 1 << 20
	for name, unit := range map[string]string{
		"bodies":      `<s:Body></x>`,
		"comments":    `<!--`,
		"attributes":  `<a b="`,
		"open-tags":   `<a>`,
		"tokens":      `<wsse:BinarySecurityToken>`,
		"char-refs":   `&#1`,
		"end-tags":    `</Security>`,
		"cdata":       `<![CDATA[`,
		"long-bodies": `<s:` + strings.Repeat("B", 80) + `Body></x>`,
	} {
		t.Run("ok/"+name, func(t *testing.T) {
			head := secEnvelope("", bst("X-1", ""), "")
			head = head[:strings.Index(head, "</wsse:BinarySecurityToken>")]
			for _, prefix := range []string{`<s:Envelope></s:Body><s:Envelope>`, head} {
				msg := []byte(prefix + strings.Repeat(unit, n/len(unit)))
				k1, s1 := walkShape(msg, false)
				k2, s2 := walkShape(msg, false)
				assert.Equal(t, k1, k2)
				assert.Equal(t, s1, s2)
			}
		})
	}
}

// shapeKeyBefore is shapeKey as it was when it ran on accepted messages
// only: FuzzShapeKey holds the walk to it on well-formed input, so that
// learning at the second sight is unchanged by first-sight lanes.
func shapeKeyBefore(data []byte, pkg bool) uint64 {
	var h maphash.Hash
	h.SetSeed(shapeSeed)
	if pkg {
		h.WriteByte(1)
	}
	depth, skipFrom := 0, -1
	for i := 0; i < len(data); {
		j := indexByte(data, i, '<')
		if j < 0 || j+1 >= len(data) {
			break
		}
		i = j + 1
		switch data[i] {
		case '/':
			depth--
			if depth == skipFrom {
				skipFrom = -1
			}
			i = indexEnd(data, i, ">")
			continue
		case '?':
			i = indexEnd(data, i, "?>")
			continue
		case '!':
			if hasAt(data, i, "!--") {
				i = indexEnd(data, i, "-->")
			} else if hasAt(data, i, "![CDATA[") {
				i = indexEnd(data, i, "]]>")
			} else {
				i = indexEnd(data, i, ">")
			}
			continue
		}
		n := nameEnd(data, i)
		name := data[i:n]
		record := skipFrom < 0
		if record {
			h.WriteByte('<')
			h.WriteByte(byte(depth))
			h.Write(name)
		}
		i = n
		closed, value := false, false
	attrs:
		for i < len(data) {
			c := data[i]
			switch {
			case c == '>':
				i++
				break attrs
			case c == '/':
				closed = true
				i++
			case c == '"' || c == '\'':
				end := indexEnd(data, i+1, string(c))
				if value {
					h.WriteByte('=')
					h.Write(data[i+1 : max(i+1, end-1)])
				}
				i, value = end, false
			case isSpace(c) || c == '=':
				i++
			default:
				n := nameEnd(data, i)
				if n == i {
					n++
				}
				if record {
					h.WriteByte(' ')
					h.Write(data[i:n])
					value = shapeValue(data[i:n])
				}
				i = n
			}
		}
		if record {
			h.WriteByte('>')
		}
		if closed {
			continue
		}
		depth++
		if record && depth == 2 && isBody(name) {
			skipFrom = depth - 1
			var buf [64]byte
			if k := bytes.LastIndex(data, append(append(buf[:0], "</"...), name...)); k >= i {
				i = k
			}
		}
	}
	return h.Sum64()
}

// TestFirstSightLanesPackages: an MTOM package's miss takes the same lanes
// as a plain message's (the package path goes through slow too), and the
// second package of a shape, accepted before, takes none.
func TestFirstSightLanesPackages(t *testing.T) {
	pol := vectorPolicy(t)
	d, err := dom.New(xmlscan.DefaultConfig())
	require.NoError(t, err)
	o := testOptions()
	o.LearnAfter = 2
	e, err := New(d, xmlscan.DefaultConfig(), NewStore(pol, o, nil), nil)
	require.NoError(t, err)
	l := &laneLog{}
	e.LimitFirstSight(l)
	d.LimitWorkers(l)
	for i, c := range []struct {
		name string
		want []string
	}{
		{"0000", []string{"enter 0", "dom", "dom done", "leave"}},
		{"0001", []string{"dom", "dom done"}},
	} {
		v := readMTOMVector(t, "mtom-store-sign", c.name)
		res, _, err := verifyPackage(e, pol, v.root, v.atts, v.now)
		require.NoError(t, err, c.name)
		assert.Equal(t, metrics.LookupNoTemplate, res.Lookup, c.name)
		assert.Equal(t, c.want, l.take(), "package %d", i)
	}
	l.refuse = true
	v := readMTOMVector(t, "mtom-store-signencr", "0000")
	_, _, err = verifyPackage(e, pol, v.root, v.atts, v.now)
	require.ErrorIs(t, err, errRefused, "a refused package is refused as overloaded")
	assert.Equal(t, []string{"refuse 0"}, l.take(), "and never reaches the DOM engine")
}

// refuseAll is a lane that refuses every first sight.
type refuseAll struct{}

func (refuseAll) EnterFirstSight(uint64) (func(), error) { return nil, errRefused }

// BenchmarkFirstSightShed: what a refused first sight costs (the failed
// match, the pre-DOM walk, the refusal) against the DOM run it saves, on
// one fresh-shape 4 KiB-class message, in one run. A shed must be cheap
// for lanes to leave hits their CPU.
func BenchmarkFirstSightShed(b *testing.B) {
	o := testOptions()
	o.LearnAfter = 2
	f := newFixture(b, nil, o)
	for i := range 2 { // a learned shape, so that a miss pays a failed match
		_, err := f.engine.Process(f.sign(b, envelope(false, 20, fmt.Sprint(i)), f.rsa, signer.RefBST, f.now, nil), f.policy, f.now)
		require.NoError(b, err)
	}
	require.Equal(b, 1, f.store.Len())
	msg := f.sign(b, traceEnvelope("Fresh", 20), f.rsa, signer.RefBST, f.now, nil)
	b.Run("shed", func(b *testing.B) {
		f.engine.LimitFirstSight(refuseAll{})
		defer f.engine.LimitFirstSight(nil)
		b.ReportAllocs()
		b.SetBytes(int64(len(msg)))
		for b.Loop() {
			if _, err := f.engine.Process(msg, f.policy, f.now); err != errRefused {
				b.Fatal(err)
			}
		}
	})
	b.Run("dom", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(msg)))
		for b.Loop() {
			if _, err := f.dom.Process(msg, f.policy, f.now); err != nil {
				b.Fatal(err)
			}
		}
	})
}
