package template

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"testing"
	"time"
	"unsafe"

	"github.com/wssgw/wssgw/bench/proc"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// TestSibArgsLayout: the offsets fastbody_amd64.s uses for sibArgs,
// kernSeg and kernPiece.
func TestSibArgsLayout(t *testing.T) {
	var a sibArgs
	var s kernSeg
	var p kernOp
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"data", unsafe.Offsetof(a.data), 0}, {"end", unsafe.Offsetof(a.end), 8}, {"q", unsafe.Offsetof(a.q), 16},
		{"out", unsafe.Offsetof(a.out), 24}, {"oo", unsafe.Offsetof(a.oo), 32}, {"ocap", unsafe.Offsetof(a.ocap), 40},
		{"max", unsafe.Offsetof(a.max), 48}, {"sibs", unsafe.Offsetof(a.sibs), 56}, {"maxAttr", unsafe.Offsetof(a.maxAttr), 64},
		{"maxText", unsafe.Offsetof(a.maxText), 72}, {"segs", unsafe.Offsetof(a.segs), 80},
		{"ops", unsafe.Offsetof(a.ops), 96}, {"pos", unsafe.Offsetof(a.pos), 104}, {"masks", unsafe.Offsetof(a.masks), 112},
		{"hs", unsafe.Offsetof(a.hs), 128}, {"hbase", unsafe.Offsetof(a.hbase), 136}, {"hp", unsafe.Offsetof(a.hp), 144},
		{"hend", unsafe.Offsetof(a.hend), 152}, {"text", unsafe.Offsetof(a.text), 160}, {"hsave", unsafe.Offsetof(a.hsave), 176},
		{"sw", unsafe.Offsetof(a.sw), 208},
		{"seg.fix", unsafe.Offsetof(s.fix), 0}, {"seg.mask", unsafe.Offsetof(s.mask), 32}, {"seg.remn", unsafe.Offsetof(s.remn), 64},
		{"seg.kind", unsafe.Offsetof(s.kind), 72}, {"seg.pos", unsafe.Offsetof(s.pos), 76}, {"seg size", unsafe.Sizeof(s), 80},
		{"op.kind", unsafe.Offsetof(p.kind), 0}, {"op.p", unsafe.Offsetof(p.p), 4}, {"op.c", unsafe.Offsetof(p.c), 8},
		{"op size", unsafe.Sizeof(p), 16}, {"opAttr", opAttr, 1}, {"opRepair", opRepair, 2}, {"opEnd", opEnd, 3},
		{"kernText", kernText, 1}, {"kernEnd", kernEnd, 2}, {"kernChunk", kernChunk, 3},
	} {
		if c.got != c.want {
			t.Errorf("%s at %d, fastbody_amd64.s says %d", c.name, c.got, c.want)
		}
	}
}

// kernsOf runs the fast body over body and returns the data and the
// kernel programs its replays compiled.
func kernsOf(t testing.TB, body string) ([]byte, []*sibKern) {
	t.Helper()
	var ref xmlscan.Document
	if err := xmlscan.Scan([]byte(fastHead+fastTail), &ref); err != nil {
		t.Fatal(err)
	}
	data := []byte(fastHead + body + fastTail)
	lim := xmlscan.DefaultConfig().Limits
	fb := &fastBody{only: xmlscan.DefaultConfig().ElementOnly}
	fb.run(data, len(fastHead), len(data)-len(fastTail), newFastCtx(&ref, bodyOf(&ref), nil), &lim, &bufHash{})
	var ks []*sibKern
	for i := range fb.rec.sibs {
		if s := &fb.rec.sibs[i]; s.prog.ok && len(s.prog.kern.segs) > 0 {
			ks = append(ks, &s.prog.kern)
		}
	}
	return data, ks
}

// kernLims are limit variants for the differential runs: siblings at
// most, value length, text length.
var kernLims = [][3]int{{1 << 30, 1 << 30, 1 << 30}, {1, 1 << 30, 1 << 30}, {2, 3, 5}, {1 << 30, 0, 0}, {3, 7, 70}, {1 << 30, 66, 31}}

// kernDiff runs both kernels on data from q and fails on any difference:
// siblings, input and output offsets, the output bytes.
func kernDiff(t testing.TB, k *sibKern, data []byte, q, end, room int, lims [3]int, emit bool) {
	t.Helper()
	const oo = 5
	out1, out2 := make([]byte, room), make([]byte, room)
	n1, i1, o1 := k.runGeneric(data, q, end, out1, oo, lims[0], lims[1], lims[2], emit)
	n2, i2, o2 := k.runAVX2(data, q, end, out2, oo, lims[0], lims[1], lims[2], emit, nil)
	if n1 != n2 || i1 != i2 || o1 != o2 || !bytes.Equal(out1[oo:o1], out2[oo:o2]) {
		t.Fatalf("data %q from %d (end %d, room %d, limits %v, emit %v):\ngeneric %d siblings to %d, output %d %q\navx2    %d siblings to %d, output %d %q",
			data, q, end, room, lims, emit, n1, i1, o1, out1[oo:max(o1, oo)], n2, i2, o2, out2[oo:max(o2, oo)])
	}
	if emit && len(k.ops) > 0 && o1-oo != i1-q {
		t.Fatalf("data %q from %d: output %d bytes for %d of input", data, q, o1-oo, i1-q)
	}
	if haveSHANI {
		kernDiffHashed(t, k, data, q, end, room, lims, emit, n1, i1, o1, out1)
	}
}

// kernDiffHashed runs the AVX2 kernel hashing as it goes (kernHash) and
// fails unless it takes what runGeneric took (n, in, o, out) and its
// digest, completed with what it left, is SHA-256 of the canonical form:
// the output, or the input taken when there is none.
func kernDiffHashed(t testing.TB, k *sibKern, data []byte, q, end, room int, lims [3]int, emit bool, n, in, o int, out []byte) {
	t.Helper()
	const oo = 5
	out3 := make([]byte, room)
	d := &shaNI{}
	d.Reset()
	base, from, stop := data, q, in
	want := sha256.Sum256(data[q:in])
	if emit && len(k.ops) > 0 {
		base, from, stop = out3, oo, o
		want = sha256.Sum256(out[oo:o])
	}
	kh := &kernHash{s: &d.s, hp: from}
	n3, i3, o3 := k.runAVX2(data, q, end, out3, oo, lims[0], lims[1], lims[2], emit, kh)
	if n3 != n || i3 != in || o3 != o || !bytes.Equal(out[oo:o], out3[oo:o3]) {
		t.Fatalf("data %q from %d (end %d, room %d, limits %v, emit %v): hashing, %d siblings to %d, output %d; without, %d to %d, %d",
			data, q, end, room, lims, emit, n3, i3, o3, n, in, o)
	}
	// It may leave whole blocks (those queued when it stopped: the
	// caller hashes them); TestSibKernHashesAsItGoes bounds them on a
	// list.
	if kh.hp < from || kh.hp > stop || (kh.hp-from)%64 != 0 {
		t.Fatalf("data %q from %d (emit %v): hashed to %d of %d..%d", data, q, emit, kh.hp, from, stop)
	}
	d.n = uint64(kh.hp - from)
	d.Write(base[kh.hp:stop])
	if got := d.Sum(nil); !bytes.Equal(got, want[:]) {
		t.Fatalf("data %q from %d (end %d, limits %v, emit %v): digest %x, want %x", data, q, end, lims, emit, got, want)
	}
}

// kernDiffAll runs kernDiff from every '<' of data with each program,
// limit variant, end and output room.
func kernDiffAll(t testing.TB, data []byte, ks []*sibKern) {
	t.Helper()
	end := len(data) - len(fastTail)
	for _, k := range ks {
		for q := len(fastHead); q < end; q++ {
			if data[q] != '<' {
				continue
			}
			for _, l := range kernLims {
				kernDiff(t, k, data, q, end, 4096, l, true)
			}
			kernDiff(t, k, data, q, end, 4096, kernLims[0], false)
			kernDiff(t, k, data[:end:end], q, end, 4096, kernLims[0], true)
			kernDiff(t, k, data, q, end-3, 100, kernLims[0], true)
		}
	}
}

// TestSibKernDifferential: the AVX2 kernel and its definition agree on
// the replay seeds, on each byte of a replayed sibling changed, and on
// lists whose parts cross 32- and 64-byte edges.
func TestSibKernDifferential(t *testing.T) {
	if !haveAVX2 {
		t.Skip("no AVX2")
	}
	progs := 0
	for _, body := range append(append(fastReplaySeeds(), fastReplayEdits("\"<&> \t'x>/=:")...), fastReplayEdges()...) {
		data, ks := kernsOf(t, body)
		progs += len(ks)
		if len(data) > 4096 {
			data = append(data[:4096-len(fastTail):4096-len(fastTail)], fastTail...)
		}
		kernDiffAll(t, data, ks)
	}
	// Each byte of the second sibling of a list changed, and the list
	// cut after it at every byte.
	item := `<r:I b="1" a="2"><r:N>t</r:N></r:I>`
	body := `<r:O xmlns:r="urn:r">` + item + item + item + `</r:O>`
	data, ks := kernsOf(t, body)
	s := len(fastHead) + len(`<r:O xmlns:r="urn:r">`) + len(item)
	for i := range len(item) {
		for _, c := range []byte("\"<&>x\x01\xc3 =/") {
			d := bytes.Clone(data)
			d[s+i] = c
			kernDiffAll(t, d, ks)
		}
		d := append(bytes.Clone(data[:s+i]), fastTail...)
		kernDiffAll(t, d, ks)
	}
	if progs < 100 {
		t.Fatalf("only %d kernel programs compiled", progs)
	}
	// A start tag whose two attributes swap (sibArgs.swap), their names
	// of different lengths: each op's offset from its part counts.
	for _, names := range [][2]string{{"bbbbbb", "a"}, {"b", "aaaaaaa"}, {"xmlb", "a"}} {
		body := `<r:O xmlns:r="urn:r">`
		for i := range 5 {
			body += fmt.Sprintf(`<r:I %s="v%d" %s="%d"><r:N>t%d</r:N></r:I>`, names[0], i*i, names[1], i, i)
		}
		data, ks := kernsOf(t, body+`</r:O>`)
		if len(ks) == 0 {
			t.Fatalf("%q: no program", body)
		}
		kernDiffAll(t, data, ks)
	}
	for pad := range 64 {
		body := fmt.Sprintf("<r:O xmlns:r=\"urn:r\">%*s", pad, "")
		for i := range 6 {
			body += fmt.Sprintf(`<r:I b="%s" a="%d"><r:N>%s</r:N></r:I>`, bytes.Repeat([]byte("v"), pad+i*13), i, bytes.Repeat([]byte("t"), 40+pad-i*7))
		}
		data, ks := kernsOf(t, body+`</r:O>`)
		if len(ks) == 0 {
			t.Fatalf("%q: no program", body)
		}
		kernDiffAll(t, data, ks)
	}
}

// TestSibKernHashesAsItGoes: on the bench payload's list the kernel
// hashing as it goes leaves the caller no more than the blocks of about
// a sibling (its queue is a block or two deep), emitting or not, and the
// digest is right (kernDiffHashed).
func TestSibKernHashesAsItGoes(t *testing.T) {
	if !haveSHANI {
		t.Skip("no SHA-NI")
	}
	env := benchEnvelope(300, "Item")
	body := string(env[bytes.Index(env, []byte("<soap:Body>"))+len("<soap:Body>") : bytes.LastIndex(env, []byte("</soap:Body>"))])
	data, ks := kernsOf(t, body)
	if len(ks) != 1 {
		t.Fatalf("%d programs", len(ks))
	}
	k := ks[0]
	q := bytes.Index(data, []byte("<m:Item sku=\"S-00002\""))
	end := len(data) - len(fastTail)
	for _, emit := range []bool{true, false} {
		out := make([]byte, len(data)+64)
		d := &shaNI{}
		d.Reset()
		from := q
		if emit {
			from = 0
		}
		kh := &kernHash{s: &d.s, hp: from}
		n, in, o := k.runAVX2(data, q, end, out, 0, 1<<30, 1<<20, 1<<20, emit, kh)
		stop := in
		if emit {
			stop = o
		}
		if n < 290 || stop-kh.hp > 4*64 || (kh.hp-from)%64 != 0 {
			t.Fatalf("emit %v: %d siblings, hashed to %d of %d..%d", emit, n, kh.hp, from, stop)
		}
		kernDiff(t, k, data, q, end, len(data)+64, kernLims[0], emit)
	}
}

// FuzzSibKern: the AVX2 kernel and its definition agree on any data
// after a list's record, one byte changed, cut anywhere, any limits.
func FuzzSibKern(f *testing.F) {
	if !haveAVX2 {
		f.Skip("no AVX2")
	}
	for _, s := range append(fastReplaySeeds(), fastReplayEdges()...) {
		f.Add(s, uint16(0), byte('x'), uint16(0), uint8(0))
	}
	// Fixed segments of 32-byte chunks and a tail (kernChunk), the
	// hoisted swap (TestSibKernLongFixed).
	for i, m := range rkernNames {
		f.Add(rkernList(rkernItem(m, 1+i%3, 1+i*5, i%4 == 3), 4, i%3, i), uint16(90+i*7), byte('y'), uint16(i*13), uint8(i))
	}
	f.Fuzz(func(t *testing.T, body string, at uint16, c byte, cut uint16, lim uint8) {
		if len(body) > 8192 {
			return
		}
		data, ks := kernsOf(t, body)
		if len(ks) == 0 {
			return
		}
		data[len(fastHead)+int(at)%(len(data)-len(fastHead))] = c
		end := len(data) - len(fastTail)
		if cut := int(cut) % (end - len(fastHead) + 1); cut > 0 {
			data = append(data[:end-cut:end-cut], fastTail...)
			end -= cut
		}
		l := kernLims[int(lim)%len(kernLims)]
		room := 64 + int(lim)*16
		for _, k := range ks {
			for q := len(fastHead); q < end; q++ {
				if data[q] == '<' {
					kernDiff(t, k, data, q, end, room, l, lim&1 == 0)
				}
			}
		}
	})
}

// BenchmarkSibKern is the kernel alone on the bench payload's list (the
// siblings after the first two), in CPU ns per sibling and against the
// SHA-256 of the same bytes (KERN_NOEMIT set: without the output;
// KERN_NOSHA set: no SHA-256, to count instructions); avx2-hashing is
// the kernel hashing as it goes (kernHash), whose cpu-kern/sha256 is 1
// where the hash hides all of the kernel's work.
func BenchmarkSibKern(b *testing.B) {
	emit, hash := os.Getenv("KERN_NOEMIT") == "", os.Getenv("KERN_NOSHA") == ""
	env := benchEnvelope(2000, "Item")
	body := string(env[bytes.Index(env, []byte("<soap:Body>"))+len("<soap:Body>") : bytes.LastIndex(env, []byte("</soap:Body>"))])
	data, ks := kernsOf(b, body)
	if len(ks) != 1 {
		b.Fatalf("%d programs", len(ks))
	}
	k := ks[0]
	q := bytes.Index(data, []byte("<m:Item sku=\"S-00002\""))
	out := make([]byte, len(data)+64)
	d := &shaNI{} // avx2-hashing: the kernel hashes as it goes
	for _, c := range []struct {
		name string
		run  func(data []byte, q, end int, out []byte, oo, max, maxAttr, maxText int, emit bool) (int, int, int)
	}{{"avx2", func(data []byte, q, end int, out []byte, oo, max, maxAttr, maxText int, emit bool) (int, int, int) {
		return k.runAVX2(data, q, end, out, oo, max, maxAttr, maxText, emit, nil)
	}}, {"avx2-hashing", func(data []byte, q, end int, out []byte, oo, max, maxAttr, maxText int, emit bool) (int, int, int) {
		d.Reset()
		kh := &kernHash{s: &d.s, hp: q}
		if emit {
			kh.hp = oo
		}
		return k.runAVX2(data, q, end, out, oo, max, maxAttr, maxText, emit, kh)
	}}, {"generic", k.runGeneric}} {
		if c.name == "avx2-hashing" && !haveSHANI {
			continue
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			var cKern, cHash time.Duration
			h := sha256.New()
			for b.Loop() {
				c0 := proc.SelfCPU()
				s, in, _ := c.run(data, q, len(data)-len(fastTail), out, 0, 1<<30, 1<<20, 1<<20, emit)
				c1 := proc.SelfCPU()
				if hash {
					h.Reset()
					h.Write(data[q:in])
					h.Sum(nil)
				}
				cKern += c1 - c0
				cHash += proc.SelfCPU() - c1
				n += s
			}
			b.ReportMetric(float64(cKern)/float64(n), "cpu-ns/sibling")
			b.ReportMetric(float64(cKern)/float64(cHash), "cpu-kern/sha256")
		})
	}
}
