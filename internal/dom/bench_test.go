package dom

import (
	"bytes"
	"context"
	"crypto"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/wssgw/wssgw/internal/xmlscan"
)

// The DOM engine against the crypto floor, on WSS4J-made messages
// (benchdata_test.go). Run:
//
//	go test -run '^$' -bench . -benchmem ./internal/dom/
//
// BenchmarkDOMvsFloor prints the table; every number in it is measured in
// the same run, and only the ratios are meant to be compared across runs
// or machines (DESIGN.md §7). No benchmark asserts a time.

// BenchmarkDOM measures what the gateway's slow path does per message:
// Engine.Process (gate, tree, signature, decryption) and Policy.Check, at
// an injected clock, replay off.
func BenchmarkDOM(b *testing.B) {
	bs := benchMessages(b)
	for _, m := range bs.msgs {
		b.Run(m.name, domBench(bs, m))
	}
}

// BenchmarkFloor measures the crypto floor of the same messages: RSA-SHA256
// verify of the canonical SignedInfo, SHA-256 of the canonical bytes of
// every referenced element and, when encrypted, the RSA-OAEP unwrap and
// the AES-GCM decryption of the Body. Every byte string and key is
// prepared outside the timer: no parsing, base64 or c14n.
func BenchmarkFloor(b *testing.B) {
	bs := benchMessages(b)
	for _, m := range bs.msgs {
		b.Run(m.name, floorBench(bs, m))
	}
}

// BenchmarkDOMvsFloor measures the ratio of the DOM engine to the crypto
// floor, per message, in one loop: every iteration processes the message
// once with the engine and once through the floor, timing each by the CPU
// time of the benchmark's thread, so both see the same machine load and
// neither is charged for waiting for a core (the host is shared and
// noisy). It reports
// the engine's ns/op, B/op and allocs/op (allocations counted outside the
// timed loop), the floor's time as floor-ns/op and their ratio as x-floor,
// then prints the table to stdout.
//
// testing.Benchmark cannot be used here: it takes the lock the running
// benchmark holds and deadlocks.
func BenchmarkDOMvsFloor(b *testing.B) {
	bs := benchMessages(b)
	type row struct {
		m *benchMsg
		floorFigures
		flrAl float64
	}
	rows := make([]row, len(bs.msgs))
	ran := make([]bool, len(bs.msgs))
	for i, m := range bs.msgs {
		b.Run(m.name, func(b *testing.B) {
			ctx := context.Background()
			dom := func() {
				res, err := bs.engine.Process(m.data, m.policy, m.now)
				if err == nil {
					err = m.policy.Check(ctx, res, m.now)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			var plain []byte
			floor := func() {
				var err error
				if plain, err = floorOnce(bs, m, plain[:0]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			r := row{m: m}
			r.allocs, r.bytes = benchMem(dom)
			r.flrAl, _ = benchMem(floor)
			// Thread CPU time (threadCPU): the host is shared, and waits
			// for a core would otherwise land on whichever side ran.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var domT, flrT time.Duration
			for b.Loop() {
				t0 := threadCPU()
				dom()
				t1 := threadCPU()
				floor()
				domT += t1 - t0
				flrT += threadCPU() - t1
			}
			r.report(b, domT, flrT)
			rows[i], ran[i] = r, true
		})
	}

	var t strings.Builder
	fmt.Fprintf(&t, "DOM engine vs crypto floor (same loop, same run); messages by %s\n", bs.source)
	fmt.Fprintf(&t, "%-18s %8s %11s %11s %11s %13s %13s %10s\n",
		"message", "bytes", "DOM µs/msg", "DOM allocs", "DOM B/msg", "floor µs/msg", "floor allocs", "DOM/floor")
	for i, r := range rows {
		if !ran[i] {
			continue
		}
		fmt.Fprintf(&t, "%-18s %8d %11.1f %11.0f %11.0f %13.1f %13.0f %9.1fx\n",
			r.m.name, len(r.m.data), r.domNs/1e3, r.allocs, r.bytes, r.flrNs/1e3, r.flrAl, r.ratio)
	}
	// Printed, not logged: a parent benchmark's log shows only with -v.
	fmt.Print(t.String())
}

// benchMem returns the allocations and bytes allocated per call of f,
// averaged over a few calls.
func benchMem(f func()) (allocs, bytes float64) {
	const n = 16
	f() // warm caches and pools
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		f()
	}
	runtime.ReadMemStats(&after)
	return float64(after.Mallocs-before.Mallocs) / n, float64(after.TotalAlloc-before.TotalAlloc) / n
}

func domBench(bs *benchSet, m *benchMsg) func(*testing.B) {
	return func(b *testing.B) {
		ctx := context.Background()
		b.SetBytes(int64(len(m.data)))
		b.ReportAllocs()
		for b.Loop() {
			res, err := bs.engine.Process(m.data, m.policy, m.now)
			if err != nil {
				b.Fatal(err)
			}
			if err := m.policy.Check(ctx, res, m.now); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func floorBench(bs *benchSet, m *benchMsg) func(*testing.B) {
	return func(b *testing.B) {
		b.SetBytes(int64(len(m.data)))
		b.ReportAllocs()
		var plain []byte
		for b.Loop() {
			var err error
			if plain, err = floorOnce(bs, m, plain[:0]); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// floorOnce is one message's crypto floor. dst is reused for the decrypted
// Body.
func floorOnce(bs *benchSet, m *benchMsg, dst []byte) ([]byte, error) {
	var key []byte
	if m.ekCipher != nil {
		var err error
		if key, err = rsa.DecryptOAEP(sha1.New(), nil, bs.priv, m.ekCipher, nil); err != nil {
			return dst, err
		}
		blk, err := aes.NewCipher(key)
		if err != nil {
			return dst, err
		}
		gcm, err := cipher.NewGCM(blk)
		if err != nil {
			return dst, err
		}
		n := gcm.NonceSize()
		for _, ct := range m.edCiphers {
			if len(ct) < n {
				return dst, errors.New("short CipherValue")
			}
			if dst, err = gcm.Open(dst[:0], ct[:n], ct[n:], nil); err != nil {
				return dst, err
			}
		}
	}
	for i, r := range m.refs {
		sum := sha256.Sum256(r)
		if !bytes.Equal(sum[:], m.digests[i]) {
			return dst, errors.New("digest mismatch")
		}
	}
	switch {
	case m.signedInfo == nil:
		return dst, nil // encrypted only
	case m.hmac:
		mac := hmac.New(sha256.New, key)
		mac.Write(m.signedInfo)
		if !hmac.Equal(mac.Sum(nil), m.sigValue) {
			return dst, errors.New("HMAC mismatch")
		}
		return dst, nil
	}
	sum := sha256.Sum256(m.signedInfo)
	return dst, rsa.VerifyPKCS1v15(bs.pub, crypto.SHA256, sum[:], m.sigValue)
}

// BenchmarkSplice measures what splicing decrypted plaintext into the gated
// message (xmlscan.ScanReplace) saves over gating the whole message again
// after each decryption, as the engine did before issue 14
// (Engine.wholeRescan), on every encrypted message: each iteration runs
// both engines on the message, so both see the same machine load. Times
// are the CPU time of the benchmark's thread (threadCPU), which a loaded
// host's waits for a core do not inflate. It prints per message both
// engines' µs/msg, their ratio, the gate's share (wss.Result.GateTime:
// scans, id and value indexes; wall time) and allocations.
func BenchmarkSplice(b *testing.B) {
	bs := benchMessages(b)
	whole, err := New(xmlscan.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	whole.wholeRescan = true
	type side struct{ ns, gate, allocs, bytes float64 }
	type row struct {
		m           *benchMsg
		splice, old side
	}
	var rows []row
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, m := range bs.msgs {
		if m.ekCipher == nil {
			continue
		}
		b.Run(m.name, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var gate time.Duration
			run := func(e *Engine) func() {
				return func() {
					res, err := e.Process(m.data, m.policy, m.now)
					if err != nil {
						b.Fatal(err)
					}
					gate = res.GateTime
				}
			}
			b.ReportAllocs()
			r := row{m: m}
			r.splice.allocs, r.splice.bytes = benchMem(run(bs.engine))
			r.old.allocs, r.old.bytes = benchMem(run(whole))
			var sT, oT, sG, oG time.Duration
			for i := 0; b.Loop(); i++ {
				// Alternate which runs first, so neither always finds
				// the caches warmed by the other.
				first, second, fT, sndT, fG, sndG := bs.engine, whole, &sT, &oT, &sG, &oG
				if i%2 == 1 {
					first, second, fT, sndT, fG, sndG = whole, bs.engine, &oT, &sT, &oG, &sG
				}
				t0 := threadCPU()
				run(first)()
				t1 := threadCPU()
				*fG += gate
				run(second)()
				*sndT += threadCPU() - t1
				*fT += t1 - t0
				*sndG += gate
			}
			n := float64(b.N)
			r.splice.ns, r.splice.gate = float64(sT.Nanoseconds())/n, float64(sG.Nanoseconds())/n
			r.old.ns, r.old.gate = float64(oT.Nanoseconds())/n, float64(oG.Nanoseconds())/n
			b.ReportMetric(r.splice.ns, "ns/op")
			b.ReportMetric(r.splice.allocs, "allocs/op")
			b.ReportMetric(r.splice.bytes, "B/op")
			b.ReportMetric(r.old.ns, "whole-ns/op")
			b.ReportMetric(r.old.ns/r.splice.ns, "x-saved")
			rows = append(rows, r)
		})
	}
	var t strings.Builder
	fmt.Fprintf(&t, "DOM engine: plaintext splice vs whole-message re-gate after decryption (same loop, thread CPU time); messages by %s\n", bs.source)
	fmt.Fprintf(&t, "%-20s %8s %10s %10s %9s %10s %10s %9s %9s %11s %11s\n", "message", "bytes",
		"splice µs", "whole µs", "whole/spl", "gate spl", "gate whole", "allocs sp", "allocs wh", "B/msg spl", "B/msg whole")
	for _, r := range rows {
		fmt.Fprintf(&t, "%-20s %8d %10.1f %10.1f %8.2fx %10.1f %10.1f %9.0f %9.0f %11.0f %11.0f\n", r.m.name, len(r.m.data),
			r.splice.ns/1e3, r.old.ns/1e3, r.old.ns/r.splice.ns, r.splice.gate/1e3, r.old.gate/1e3,
			r.splice.allocs, r.old.allocs, r.splice.bytes, r.old.bytes)
	}
	fmt.Print(t.String())
}

// floorFigures are a message's figures against its crypto floor: the
// engine's and the floor's CPU time per message, their ratio, and the
// engine's allocations (counted outside the timed loop).
type floorFigures struct {
	domNs, flrNs, ratio float64
	allocs, bytes       float64
}

// report sets the per-message figures from the loop's totals and reports
// them the same way for every DOM-vs-floor benchmark.
func (f *floorFigures) report(b *testing.B, domT, flrT time.Duration) {
	f.domNs = float64(domT.Nanoseconds()) / float64(b.N)
	f.flrNs = float64(flrT.Nanoseconds()) / float64(b.N)
	f.ratio = f.domNs / f.flrNs
	b.ReportMetric(f.domNs, "ns/op")
	b.ReportMetric(f.allocs, "allocs/op")
	b.ReportMetric(f.bytes, "B/op")
	b.ReportMetric(f.flrNs, "floor-ns/op")
	b.ReportMetric(f.ratio, "x-floor")
}
