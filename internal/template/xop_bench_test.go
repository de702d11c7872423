package template

import (
	"bytes"
	"io"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/wssgw/wssgw/bench/proc"
	"github.com/wssgw/wssgw/internal/c14n"
	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/mime"
	"github.com/wssgw/wssgw/internal/testmime"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// mtomFloorOf is the crypto floor of a signed MTOM or SwA package: the RSA
// verification of the canonical SignedInfo and the digests of the
// canonical signed parts, the Body's XOP infoset (each xop:Include as its
// part's base64) precomputed in memory, an SwA part's octets.
func mtomFloorOf(b *testing.B, f *fixture, root []byte, atts *testmime.Parts) *floor {
	t, caps := f.match(b, root)
	r := &run{t: t, data: root, caps: caps}
	st := sigOf(t)
	fl := &floor{pub: f.rsa.Cert.PublicKey, signedInfo: r.canon(nil, st.signedInfo), method: st.method}
	fl.sigValue, _ = wss.DecodeBase64(r.val(st.value))
	var d xmlscan.Document
	if err := xmlscan.Scan(root, &d); err != nil {
		b.Fatal(err)
	}
	swaRefs := 0
	for _, rs := range st.refs {
		if rs.swa {
			// A binary part: the Attachment-Content transform's output
			// is its octets.
			fl.parts = append(fl.parts, atts.ByID[atts.Order[swaRefs]].Data)
			swaRefs++
			continue
		}
		if !rs.body {
			fl.parts = append(fl.parts, r.canon(nil, rs.canon))
			continue
		}
		var out bytes.Buffer
		err := c14n.CanonicalizeToReplacing(&out, rs.alg, &d, t.gbody.elem, rs.prefixes, func(elem int) (func(io.Writer) error, bool) {
			if d.Elements[elem].Space != nsXOP {
				return nil, false
			}
			href, _ := mime.CheckInclude(&d, elem)
			cid, _ := wss.CIDFromURL(href)
			return func(w io.Writer) error {
				return mime.EncodeXOP(bytes.NewReader(atts.ByID[cid].Data), w, nil)
			}, true
		})
		if err != nil {
			b.Fatal(err)
		}
		fl.parts = append(fl.parts, out.Bytes())
	}
	if err := fl.run(); err != nil {
		b.Fatal(err)
	}
	return fl
}

// BenchmarkPackages is BenchmarkEngines for a signed MTOM request whose
// Body holds one attachment of 1 MiB or 16 MiB, and for an SwA request
// with one such binary part (issue 14): the template path (a generic Body,
// the part streamed into the digest), the DOM engine and the crypto floor,
// timed in one run, and the bytes each engine allocated per package:
// neither holds the part or its base64. The signencr row is CXF's
// sign+encrypt MTOM form (xop_enc.go): a Body of about 1 MiB (the
// markup-dense payload of BenchmarkEngines) signed, then encrypted, its
// ciphertext and the EncryptedKey's in parts; both engines read the
// ciphertext part whole (AES-GCM), so it is held once per package.
//
//	go test -run '^$' -bench 'Packages' -benchtime 20x ./internal/template
func BenchmarkPackages(b *testing.B) {
	for _, c := range []struct {
		name string
		size int
		swa  bool
		enc  bool // sign+encrypt, size the Body's
	}{
		{"sign-1MiB-attachment", 1 << 20, false, false}, {"sign-16MiB-attachment", 16 << 20, false, false},
		{"swa-sign-1MiB-attachment", 1 << 20, true, false}, {"swa-sign-16MiB-attachment", 16 << 20, true, false},
		{"signencr-1MiB-body", 1 << 20, false, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			f := newFixture(b, nil, testOptions())
			rng := rand.New(rand.NewPCG(5, 6))
			mk := func(size int, tag string) ([]byte, *testmime.Parts) {
				if c.enc {
					// About 95 bytes an item, as BenchmarkEngines' sign-1MiB.
					return f.encPackage(b, benchEnvelope(size/95, "Item"), tag, f.gw)
				}
				if c.swa {
					return f.swaPackage(b, 20, randomParts(rng, size), tag, f.now)
				}
				return f.mtomPackage(b, 20, randomParts(rng, size), tag, f.now, false)
			}
			learn, latts := mk(3000, "learn")
			if _, err := f.engine.ProcessAttachments(learn, latts, f.policy, f.now); err != nil {
				b.Fatal(err)
			}
			root, atts := mk(c.size, "msg")
			for range genericShadowHits + 1 {
				// Past the shadow-checked first hits of a generic Body.
				if res, err := f.engine.ProcessAttachments(root, atts, f.policy, f.now); err != nil || res.Lookup != metrics.LookupHit {
					b.Fatalf("not a hit: %v", err)
				}
			}
			var fl *floor
			if c.enc {
				fl = encMTOMFloorOf(b, f, root, atts)
			} else {
				fl = mtomFloorOf(b, f, root, atts)
			}
			var tTpl, tDOM, tFloor, cTpl, cDOM, cFloor time.Duration
			var aTpl, aDOM uint64
			var ms runtime.MemStats
			alloc := func() uint64 { runtime.ReadMemStats(&ms); return ms.TotalAlloc }
			b.ReportAllocs()
			b.SetBytes(int64(len(root) + c.size))
			for b.Loop() {
				a := alloc()
				s, c := time.Now(), proc.SelfCPU()
				if _, err := f.engine.ProcessAttachments(root, atts, f.policy, f.now); err != nil {
					b.Fatal(err)
				}
				tTpl += time.Since(s)
				cTpl += proc.SelfCPU() - c
				a2 := alloc()
				aTpl += a2 - a
				s, c = time.Now(), proc.SelfCPU()
				if _, err := f.dom.ProcessAttachments(root, atts, f.policy, f.now); err != nil {
					b.Fatal(err)
				}
				tDOM += time.Since(s)
				cDOM += proc.SelfCPU() - c
				aDOM += alloc() - a2
				s, c = time.Now(), proc.SelfCPU()
				if err := fl.run(); err != nil {
					b.Fatal(err)
				}
				tFloor += time.Since(s)
				cFloor += proc.SelfCPU() - c
			}
			n := float64(b.N)
			b.ReportMetric(float64(tTpl.Nanoseconds())/n/1e3, "µs-template")
			b.ReportMetric(float64(tDOM.Nanoseconds())/n/1e3, "µs-dom")
			b.ReportMetric(float64(tFloor.Nanoseconds())/n/1e3, "µs-floor")
			b.ReportMetric(float64(tTpl)/float64(tFloor), "template/floor")
			b.ReportMetric(float64(tDOM)/float64(tTpl), "dom/template")
			// CPU time (every thread of the process): one core's share,
			// what the wall time of a shared, loaded machine is not.
			b.ReportMetric(float64(cTpl)/float64(cFloor), "cpu-template/floor")
			b.ReportMetric(float64(cDOM)/float64(cTpl), "cpu-dom/template")
			b.ReportMetric(float64(aTpl)/n, "B-template/op")
			b.ReportMetric(float64(aDOM)/n, "B-dom/op")
		})
	}
}
