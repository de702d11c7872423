package template

import (
	"crypto/sha256"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/wssgw/wssgw/bench/proc"
	"github.com/wssgw/wssgw/internal/c14n"
	"github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// benchEnvelope is a SOAP 1.1 envelope of about size bytes once signed.
func benchEnvelope(items int, tag string) []byte {
	var b strings.Builder
	b.WriteString(`<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Header/><soap:Body><m:Order xmlns:m="urn:example:orders">`)
	for i := range items {
		fmt.Fprintf(&b, `<m:%s sku="S-%05d" qty="%d"><m:Note>item %d of the order</m:Note></m:%s>`, tag, i, i%7+1, i, tag)
	}
	b.WriteString(`</m:Order></soap:Body></soap:Envelope>`)
	return []byte(b.String())
}

// floor is the crypto a verifier cannot avoid: the RSA verification of the
// canonical SignedInfo and the digests of the canonical signed parts, with
// the canonical bytes precomputed, and for an encrypted message the key
// unwrap and the data decryption.
type floor struct {
	signedInfo, sigValue []byte
	parts                [][]byte
	pub                  any
	method               string
	dec                  *decStep
	ek, cv               []byte
}

func floorOf(b *testing.B, f *fixture, msg []byte) *floor {
	t, caps := f.match(b, msg)
	r := &run{t: t, data: msg, caps: caps}
	fl := &floor{pub: f.rsa.Cert.PublicKey}
	st := sigOf(t)
	for _, s := range t.steps {
		if s.dec == nil {
			continue
		}
		// The signature is over the plaintext message: find its
		// canonical forms there.
		fl.dec = s.dec
		fl.ek, _ = wss.DecodeBase64(r.val(s.dec.cipher))
		fl.cv, _ = wss.DecodeBase64(r.val(s.dec.data))
		pt, err := r.plaintextFor(s.dec)
		if err != nil {
			b.Fatal(err)
		}
		a, z := r.at(s.dec.start), r.at(s.dec.end)
		doc := append(append(append([]byte(nil), msg[:a]...), pt...), msg[z:]...)
		mt := matcher{data: doc, budget: 1 << 30, limits: &f.engine.limits}
		inner := mt.walk(s.dec.root, 0)
		r = &run{t: inner, data: doc, caps: mt.caps}
		st = sigOf(inner)
	}
	fl.signedInfo, fl.method = r.canon(nil, st.signedInfo), st.method
	fl.sigValue, _ = wss.DecodeBase64(r.val(st.value))
	for _, rs := range st.refs {
		if rs.body {
			// A generic Body: its canonical form, computed once here.
			var d xmlscan.Document
			if err := xmlscan.Scan(r.data, &d); err != nil {
				b.Fatal(err)
			}
			c, err := c14n.Canonicalize(rs.alg, &d, r.t.gbody.elem, rs.prefixes, nil)
			if err != nil {
				b.Fatal(err)
			}
			fl.parts = append(fl.parts, c)
			continue
		}
		fl.parts = append(fl.parts, r.canon(nil, rs.canon))
	}
	if err := fl.run(); err != nil {
		b.Fatal(err)
	}
	return fl
}

func sigOf(t *Template) *sigStep {
	for _, s := range t.steps {
		if s.sig != nil {
			return s.sig
		}
	}
	return nil
}

// plaintextFor decrypts outside a hit (no result to time into).
func (r *run) plaintextFor(st *decStep) ([]byte, error) {
	r.res = &wss.Result{}
	return r.plaintext(st)
}

func (fl *floor) run() error {
	if d := fl.dec; d != nil {
		dec, _ := d.key.Decrypter()
		key, err := crypto.DecryptKey(d.kt, d.digest, d.mgf, dec, fl.ek, crypto.KeySize(d.alg))
		if err != nil {
			return err
		}
		if _, err := crypto.DecryptData(d.alg, key, fl.cv); err != nil {
			return err
		}
	}
	for _, p := range fl.parts {
		sha256.Sum256(p)
	}
	sum := sha256.Sum256(fl.signedInfo)
	return crypto.VerifySignatureSHA256(fl.method, fl.pub, fl.signedInfo, &sum, fl.sigValue)
}

// match returns the template and captures of msg.
func (f *fixture) match(b testing.TB, msg []byte) (*Template, []span) {
	mt := matcher{data: msg, budget: 1 << 30, limits: &f.engine.limits}
	t := mt.walk(f.store.root.Load(), 0)
	if t == nil {
		b.Fatal("no template matched")
	}
	return t, mt.caps
}

// BenchmarkEngines times, in one run, the template path, the DOM engine
// and the crypto floor on the same signed message, and reports the ratios
// the template issue sets goals for (template ≤ 1.3 × floor, DOM ≥ 4 ×
// template). The decryption key is loaded as the gateway loads it, so the
// sign+encrypt row runs on the build's crypto backend (issue 18):
//
//	go test -run '^$' -bench 'Engines/sign\+encrypt' ./internal/template
//	CGO_ENABLED=1 go test -tags openssl -run '^$' -bench 'Engines/sign\+encrypt' ./internal/template
func BenchmarkEngines(b *testing.B) {
	for _, c := range []struct {
		name    string
		items   int
		encrypt bool
	}{
		{"sign-1KiB", 5, false}, {"sign-4KiB", 20, false}, {"sign-16KiB", 180, false},
		{"sign-100KiB", 1000, false}, {"sign-1MiB", 11000, false}, {"sign+encrypt-4KiB", 20, true},
		// Values whose lengths vary item to item (variedEnvelope), as
		// real lists' do: a sibling rarely repeats its predecessor's
		// layout byte for byte.
		{"sign-varied-100KiB", -1350, false}, {"sign-varied-1MiB", -14000, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			f := newFixture(b, nil, testOptions())
			var enc func(*signer.Options)
			if c.encrypt {
				enc = f.encrypt(signer.RefIssuerSerial)
			}
			payload := benchEnvelope(c.items, "Item")
			if c.items < 0 {
				payload = variedEnvelope(-c.items)
			}
			learnMsg := f.sign(b, payload, f.rsa, signer.RefBST, f.now, enc)
			if _, err := f.engine.Process(learnMsg, f.policy, f.now); err != nil {
				b.Fatal(err)
			}
			msg := f.sign(b, payload, f.rsa, signer.RefBST, f.now, enc)
			if res, err := f.engine.Process(msg, f.policy, f.now); err != nil || res.Lookup != metrics.LookupHit {
				b.Fatalf("not a hit: %v", err)
			}
			for range genericShadowHits {
				// Past the shadow-checked first hits of a generic Body.
				if _, err := f.engine.Process(msg, f.policy, f.now); err != nil {
					b.Fatal(err)
				}
			}
			fl := floorOf(b, f, msg)
			hitB, hitAllocs := hitAllocs(b, f, msg)
			var tTpl, tDOM, tFloor, cTpl, cDOM, cFloor time.Duration
			b.ReportAllocs()
			b.SetBytes(int64(len(msg)))
			// The template path and the floor alternate, so that load from
			// elsewhere falls on both alike; the DOM engine runs in a phase
			// of its own after them. Interleaved, the collections its
			// garbage sets off (megabytes a message at 1 MiB) ran while the
			// other two were timed, and the process CPU clock charged them
			// there: template/floor swung from 1.29 to 1.68 across runs of
			// one binary at 1 MiB (issue 14).
			runtime.GC()
			for b.Loop() {
				s, c := time.Now(), proc.SelfCPU()
				if _, err := f.engine.Process(msg, f.policy, f.now); err != nil {
					b.Fatal(err)
				}
				tTpl += time.Since(s)
				cTpl += proc.SelfCPU() - c
				s, c = time.Now(), proc.SelfCPU()
				if err := fl.run(); err != nil {
					b.Fatal(err)
				}
				tFloor += time.Since(s)
				cFloor += proc.SelfCPU() - c
			}
			b.StopTimer()
			runtime.GC()
			nDOM := 0
			for nDOM < 3 || tDOM < tTpl+tFloor {
				s, c := time.Now(), proc.SelfCPU()
				if _, err := f.dom.Process(msg, f.policy, f.now); err != nil {
					b.Fatal(err)
				}
				tDOM += time.Since(s)
				cDOM += proc.SelfCPU() - c
				nDOM++
			}
			// Per message, as the template path's and the floor's are.
			tDOM = tDOM * time.Duration(b.N) / time.Duration(nDOM)
			cDOM = cDOM * time.Duration(b.N) / time.Duration(nDOM)
			n := float64(b.N)
			b.ReportMetric(float64(tTpl.Nanoseconds())/n/1e3, "µs-template")
			// CPU time (every thread of the process) is one core's share,
			// what a shared machine's wall time is not; bench/peers compares
			// it with WSS4J and libxmlsec1. On a loaded machine the CPU
			// ratios are the ones to read: wall time there counts the
			// waits for a core.
			b.ReportMetric(float64(cTpl.Nanoseconds())/n/1e3, "cpu-µs-template")
			b.ReportMetric(float64(tDOM.Nanoseconds())/n/1e3, "µs-dom")
			b.ReportMetric(float64(tFloor.Nanoseconds())/n/1e3, "µs-floor")
			b.ReportMetric(float64(tTpl)/float64(tFloor), "template/floor")
			b.ReportMetric(float64(cTpl)/float64(cFloor), "cpu-template/floor")
			b.ReportMetric(float64(cDOM)/float64(cTpl), "cpu-dom/template")
			b.ReportMetric(float64(tDOM)/float64(tTpl), "dom/template")
			// Both engines pay the floor, so dom/template can be no
			// larger than dom/floor (2.6 at 4 KiB, issue 14): the faster
			// the DOM engine an attacker can force, the smaller it gets.
			// The work each engine adds to the floor is what tells them
			// apart.
			b.ReportMetric(float64(cDOM-cFloor)/float64(cTpl-cFloor), "cpu-dom/template-above-floor")
			// The template path's own: B/op and allocs/op count all three.
			b.ReportMetric(hitB, "template-B/op")
			b.ReportMetric(hitAllocs, "template-allocs/op")
		})
	}
}

// BenchmarkTemplateCount matches the same message with 1 and with 1,000
// templates of similar shapes held (each differs in a payload element
// name, so they share a long prefix and branch late), and reports memory
// per template: what each of the 999 later templates added to the heap.
func BenchmarkTemplateCount(b *testing.B) {
	o := testOptions()
	f := newFixture(b, nil, o)
	target := f.sign(b, benchEnvelope(20, "Item"), f.rsa, signer.RefBST, f.now, nil)
	if _, err := f.engine.Process(target, f.policy, f.now); err != nil {
		b.Fatal(err)
	}
	first := f.store.Bytes()
	msg := f.sign(b, benchEnvelope(20, "Item"), f.rsa, signer.RefBST, f.now, nil)
	root1 := f.store.root.Load() // immutable: it stays the one-template automaton

	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC() // twice: sync.Pool victims go on the second
	runtime.ReadMemStats(&before)
	for i := 1; f.store.Len() < 1000; i++ {
		other := f.sign(b, benchEnvelope(20, fmt.Sprintf("Item%d", i)), f.rsa, signer.RefBST, f.now, nil)
		if _, err := f.engine.Process(other, f.policy, f.now); err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	time1, time1000 := timeMatches(b, f, msg, root1, f.store.root.Load())
	b.ReportAllocs()
	for b.Loop() {
		f.match(b, msg)
	}
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/999, "heap-B/template")
	// The first template shares nothing: it holds the header the others
	// alias.
	b.ReportMetric(float64(first), "est-B/first")
	b.ReportMetric(float64(f.store.Bytes())/float64(f.store.Len()), "est-B/template")
	b.ReportMetric(time1000/time1, "match-1000/match-1")
	b.ReportMetric(time1*1e6, "µs-match-1")
	b.ReportMetric(time1000*1e6, "µs-match-1000")
}

// timeMatches is the mean time of matching msg against automata a and b
// (matching only: the crypto is the same whatever the template count), in
// seconds, timed in alternating rounds so that load on the machine falls
// on both alike.
func timeMatches(tb testing.TB, f *fixture, msg []byte, a, b *node) (ta, tb2 float64) {
	const rounds, n = 40, 100
	var da, db time.Duration
	for range rounds {
		da += timeRoot(tb, f, msg, a, n)
		db += timeRoot(tb, f, msg, b, n)
	}
	return da.Seconds() / (rounds * n), db.Seconds() / (rounds * n)
}

func timeRoot(tb testing.TB, f *fixture, msg []byte, root *node, n int) time.Duration {
	s := time.Now()
	for range n {
		mt := matcher{data: msg, budget: 1 << 30, limits: &f.engine.limits}
		if mt.walk(root, 0) == nil {
			tb.Fatal("no template matched")
		}
	}
	return time.Since(s)
}
