package template

import (
	"bytes"
	"crypto/sha256"
	"encoding"
	"encoding/binary"
	"fmt"
	"hash"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// withSHANI runs f with haveSHANI (and haveAVX2, which the fused kernel
// needs) forced to on, as a CPU without SHA-NI or AVX2 would see it.
func withSHANI(t *testing.T, on bool, f func(t *testing.T)) {
	t.Helper()
	if on && !haveSHANI {
		t.Skip("no SHA-NI and AVX2 on this CPU")
	}
	savedSHA, savedAVX := haveSHANI, haveAVX2
	haveSHANI = on
	if !on {
		haveAVX2 = false
	}
	defer func() { haveSHANI, haveAVX2 = savedSHA, savedAVX }()
	f(t)
}

// TestSHANILongLengths: the length counter past 4 GiB (and past 2^32
// bits, which a 32-bit counter or an int32 shift would wrap), resumed
// from crypto/sha256's marshaled state with that length: the padding's
// length field and the buffered bytes agree with crypto/sha256's.
func TestSHANILongLengths(t *testing.T) {
	d := newSHANI(t)
	rng := rand.New(rand.NewPCG(5, 6))
	tail := make([]byte, 300)
	for k := range tail {
		tail[k] = byte(rng.Uint32())
	}
	for _, l := range []uint64{1<<29 - 1, 1 << 29, 1<<32 - 1, 1 << 32, 1<<32 + 1, 1<<32 + 55, 1<<32 + 56, 1<<32 + 63, 5<<30 + 17, 1<<40 + 3, 1<<61 - 1} {
		for _, w := range []int{0, 1, 8, 55, 56, 64, 65, 300} {
			t.Run(fmt.Sprintf("ok/len-%d+%d", l, w), func(t *testing.T) {
				ref := sha256.New()
				state, err := ref.(encoding.BinaryMarshaler).MarshalBinary()
				require.NoError(t, err)
				// magic, 8 words, the buffered block, the length.
				for k := range l % shaChunk {
					state[len(shaMagic)+32+int(k)] = byte(k*7 + 1)
				}
				binary.BigEndian.PutUint64(state[len(state)-8:], l)
				require.NoError(t, ref.(encoding.BinaryUnmarshaler).UnmarshalBinary(state))
				require.NoError(t, d.UnmarshalBinary(state))
				require.Equal(t, l, d.n)
				ref.Write(tail[:w])
				d.Write(tail[:w])
				if got, want := d.Sum(nil), ref.Sum(nil); !bytes.Equal(got, want) {
					t.Fatalf("length %d then %d bytes: %x, want %x", l, w, got, want)
				}
			})
		}
	}
}

// TestFastDigest: the fast body's digest is SHA-NI's only for SHA-256
// on a CPU that has it; SHA-1, SHA-224 (SHA-256's rounds with another
// start) and SHA-512 keep their own; a template's midstate resumes it,
// and one it cannot read (another marshaled format, a truncated one)
// starts over from the first byte (n 0), never from a wrong state; a
// run's digest used again starts afresh.
func TestFastDigest(t *testing.T) {
	prefix := bytes.Repeat([]byte("<ds:SignedInfo>0123456789"), 13) // 325 bytes
	rest := []byte("<m:Item qty=\"1\" sku=\"2\"></m:Item></soap:Body>")
	for _, on := range []bool{true, false} {
		for _, alg := range []string{crypto.AlgDigestSHA256, crypto.AlgDigestSHA1, crypto.AlgDigestSHA224, crypto.AlgDigestSHA512} {
			ref, err := crypto.NewDigest(alg)
			require.NoError(t, err)
			ref.Write(prefix)
			ref.Write(rest)
			want := ref.Sum(nil)
			mid := func(mod func([]byte) []byte) *midstate {
				h, _ := crypto.NewDigest(alg)
				n := len(prefix) / h.BlockSize() * h.BlockSize()
				h.Write(prefix[:n])
				st, err := h.(encoding.BinaryMarshaler).MarshalBinary()
				require.NoError(t, err)
				return &midstate{n: n, state: mod(st)}
			}
			same := func(b []byte) []byte { return b }
			for _, c := range []struct {
				name  string
				m     *midstate
				wantN bool // resumed: n is the midstate's
			}{
				{"ok/no-midstate", nil, false},
				{"ok/midstate", mid(same), true},
				{"fail/other-format", mid(func(b []byte) []byte { b[3]++; return b }), false},
				{"fail/truncated", mid(func(b []byte) []byte { return b[:len(b)-1] }), false},
				{"fail/empty", &midstate{n: 64}, false},
			} {
				name := fmt.Sprintf("%s/shani-%v/%s", c.name, on, alg[strings.LastIndexByte(alg, '#')+1:])
				t.Run(name, func(t *testing.T) {
					withSHANI(t, on, func(t *testing.T) {
						r := &run{}
						// A digest of the run left dirty by an earlier message.
						if h, _, err := r.fastDigest(alg, nil); err == nil {
							h.Write([]byte("an earlier message"))
						}
						h, n, err := r.fastDigest(alg, c.m)
						require.NoError(t, err)
						_, isNI := h.(*shaNI)
						assert.Equal(t, on && alg == crypto.AlgDigestSHA256, isNI, "SHA-NI's digest")
						if c.wantN {
							assert.Equal(t, c.m.n, n)
						} else {
							assert.Zero(t, n)
						}
						h.Write(prefix[n:])
						h.Write(rest)
						assert.Equal(t, want, h.Sum(nil))
					})
				})
			}
		}
	}
}

// reviewItems is a Body of n items whose start tags the canonical form
// reorders (qty before sku: the kernel emits) or not (the kernel hashes
// the input), an odd one every odd-th (the kernel stops mid-block, Go
// takes it, the kernel resumes), the values' lengths varied so that the
// stops fall at every offset in a block.
func reviewItems(n, odd int, reorder bool, pad int) string {
	var b strings.Builder
	b.WriteString(`<m:Order>` + strings.Repeat(" ", pad))
	for i := range n {
		v := strings.Repeat("v", (i*7+pad)%29)
		switch {
		case odd > 0 && i%odd == odd-1:
			fmt.Fprintf(&b, `<m:Item sku="%s" qty="%d" x="&amp;"><m:Note>odd &gt; one</m:Note></m:Item>`, v, i)
		case reorder:
			fmt.Fprintf(&b, `<m:Item sku="%s" qty="%d"><m:Note>%s</m:Note></m:Item>`, v, i, strings.Repeat("t", i%37))
		default:
			fmt.Fprintf(&b, `<m:Item qty="%d" sku="%s"><m:Note>%s</m:Note></m:Item>`, i, v, strings.Repeat("t", i%37))
		}
	}
	b.WriteString(`</m:Order>`)
	return b.String()
}

// TestFastBodyKernHashedLong: lists long enough for the kernel to stop
// for room (its output buffer, kernRoom, again and again) and to be
// stopped by odd siblings at every offset of a block, emitting or not,
// into SHA-NI's digest after 0 to 66 bytes already written
// (fastVersusGate): the digest is SHA-256 of c14n's form.
func TestFastBodyKernHashedLong(t *testing.T) {
	newSHANI(t)
	sc, err := xmlscan.NewScanner(xmlscan.DefaultConfig())
	require.NoError(t, err)
	for _, reorder := range []bool{true, false} {
		for _, odd := range []int{0, 1, 2, 3, 97} {
			for _, n := range []int{700, 2500} {
				for _, pad := range []int{0, 1, 31, 63} {
					body := reviewItems(n, odd, reorder, pad)
					if !fastVersusGate(t, sc, body, nil) {
						t.Fatalf("reorder %v, odd %d, %d items, pad %d: not handled", reorder, odd, n, pad)
					}
				}
			}
		}
	}
}

// TestFastBodyEngineDigests: end to end, hits whose Body digest the fast
// body computes (SHA-NI's digest fused into the kernel, or crypto's on a
// CPU without SHA-NI, or another DigestMethod the signer makes) verify as the DOM engine
// does, and a Body changed after signing is refused on the hit as by the
// DOM engine: a wrong digest would be a refused partner, a missed change
// a signature bypass.
func TestFastBodyEngineDigests(t *testing.T) {
	for _, on := range []bool{true, false} {
		for _, alg := range []string{crypto.AlgDigestSHA256, crypto.AlgDigestSHA512, crypto.AlgDigestSHA384} {
			t.Run(fmt.Sprintf("shani-%v/%s", on, alg[strings.LastIndexByte(alg, '#')+1:]), func(t *testing.T) {
				withSHANI(t, on, func(t *testing.T) {
					engineDigests(t, alg)
				})
			})
		}
	}
}

func engineDigests(t *testing.T, alg string) {
	f := newFixture(t, nil, testOptions())
	mod := func(o *signer.Options) { o.DigestAlgorithm = alg }
	const ns = ` xmlns:m="urn:example:orders"`
	body := func(n, odd int, reorder bool, pad int) string {
		return strings.Replace(reviewItems(n, odd, reorder, pad), `<m:Order>`, `<m:Order`+ns+`>`, 1)
	}
	learn := f.sign(t, payloadEnvelope(body(3, 0, true, 0)), f.rsa, signer.RefBST, f.now, mod)
	_, err := f.engine.Process(learn, f.policy, f.now)
	require.NoError(t, err)
	require.Equal(t, 1, f.store.Len())
	// Learning checks the fast body's digest against c14n's and keeps
	// the fast body only when they agree: a wrong digest there leaves it
	// off, and the hits below would not test it.
	gb := f.store.Templates()[0].gbody
	require.NotNil(t, gb)
	require.NotNil(t, gb.fast, "the fast body's digest of the learned message")
	// Past the hits the DOM engine re-verifies (genericShadowHits): a
	// hit's verdict is then the fast body's alone.
	at := f.now
	for k := range genericShadowHits {
		at = at.Add(time.Second)
		msg := f.sign(t, payloadEnvelope(body(4+k, 0, k%2 == 0, k)), f.rsa, signer.RefBST, at, mod)
		_, err := f.engine.Process(msg, f.policy, f.now)
		require.NoError(t, err)
	}
	require.EqualValues(t, genericShadowHits, f.store.Templates()[0].checked.Load())
	for _, c := range []struct {
		name    string
		n, odd  int
		reorder bool
		pad     int
	}{
		{"ok/short", 5, 0, true, 0},
		{"ok/emit-long", 1500, 0, true, 3},
		{"ok/emit-odd", 1500, 13, true, 17},
		{"ok/input-long", 1500, 0, false, 1},
		{"ok/input-odd", 1500, 7, false, 40},
	} {
		t.Run(c.name, func(t *testing.T) {
			at = at.Add(time.Second)
			msg := f.sign(t, payloadEnvelope(body(c.n, c.odd, c.reorder, c.pad)), f.rsa, signer.RefBST, at, mod)
			got, gerr := f.engine.Process(msg, f.policy, f.now)
			want, werr := f.dom.Process(msg, f.policy, f.now)
			require.NoError(t, werr)
			require.NoError(t, gerr)
			assert.Equal(t, metrics.LookupHit, got.Lookup)
			assert.Empty(t, Compare(got, gerr, want, werr, f.policy))
			// One byte of an item's value changed (same length, so the
			// same shape): both engines refuse it.
			bad := bytes.Clone(msg)
			k := bytes.LastIndex(bad, []byte(`sku="v`))
			require.Positive(t, k)
			bad[k+len(`sku="`)] = 'w'
			_, gerr = f.engine.Process(bad, f.policy, f.now)
			_, werr = f.dom.Process(bad, f.policy, f.now)
			require.Error(t, werr, "the DOM engine accepted a changed Body")
			require.Error(t, gerr, "a changed Body accepted")
		})
	}
	assert.Equal(t, 1, f.store.Len())
	assert.NotNil(t, f.store.Templates()[0].gbody.fast)
}

var _ hash.Hash = (*shaNI)(nil)

// TestFastBodyMemoSHANI: with a template's memo (its first start tag and
// first item taken from the teacher, the record installed before the
// kernel runs), the kernel hashing as it goes into SHA-NI's digest gives
// SHA-256 of the form a template without a memo gives, whatever the
// digest held before (0 to 66 bytes) and however long the list.
func TestFastBodyMemoSHANI(t *testing.T) {
	newSHANI(t)
	sc, err := xmlscan.NewScanner(xmlscan.DefaultConfig())
	require.NoError(t, err)
	lim := sc.Limits()
	used := 0
	for _, item := range []string{`<r:I sku="S-%d" qty="%d"><r:N>%s</r:N></r:I>`, `<r:I qty="S-%d" sku="%d"><r:N>%s</r:N></r:I>`} {
		for _, n := range []int{1, 3, 40, 900} {
			for _, pre := range []int{0, 1, 5, 63, 64, 66} {
				memoSHANI(t, sc, &lim, item, n, pre, &used)
			}
		}
	}
	require.Positive(t, used, "the memo's record never used")
}

func memoSHANI(t *testing.T, sc *xmlscan.Scanner, lim *xmlscan.Limits, item string, n, pre int, used *int) {
	var b strings.Builder
	b.WriteString(memoOpen + memoItem)
	for i := range n {
		fmt.Fprintf(&b, item, i, i*pre, strings.Repeat("n", (i+pre)%19))
	}
	b.WriteString(memoClose)
	student := b.String()
	_, form, _ := memoRun(sc, memoCtx(t, sc, nil), student, 0)
	want := sha256.Sum256(append(bytes.Repeat([]byte{'p'}, pre), form...))
	ctx := memoCtx(t, sc, nil)
	memoRun(sc, ctx, memoTeacher, 0)
	require.NotNil(t, ctx.memo.Load())
	data := []byte(fastHead + student + fastTail)
	d := &shaNI{}
	d.Reset()
	d.Write(bytes.Repeat([]byte{'p'}, pre))
	fb := &fastBody{only: xmlscan.DefaultConfig().ElementOnly}
	require.True(t, fb.run(data, len(fastHead), len(data)-len(fastTail), ctx, lim, d))
	if fb.memo.used {
		*used++
	}
	require.Equal(t, want[:], d.Sum(nil), "%d items %q, %d bytes before", n, item, pre)
}

// TestFastBodyKernHashedShort: with no byte after the content (data cut
// at the Body's end, capacity too), the kernel stops kernSlack before it
// and Go takes the last siblings; the content ending at every offset of
// a block, the digest the kernel began is SHA-256 of the same form.
func TestFastBodyKernHashedShort(t *testing.T) {
	newSHANI(t)
	sc, err := xmlscan.NewScanner(xmlscan.DefaultConfig())
	require.NoError(t, err)
	var ref xmlscan.Document
	require.NoError(t, sc.Scan([]byte(fastHead+fastTail), &ref))
	ctx := newFastCtx(&ref, bodyOf(&ref), nil)
	lim := sc.Limits()
	for _, reorder := range []bool{true, false} {
		for _, n := range []int{4, 30, 300} {
			for pad := range 130 {
				data := []byte(fastHead + reviewItems(n, 0, reorder, pad) + fastTail)
				end := len(data) - len(fastTail)
				form := &bufHash{}
				require.True(t, (&fastBody{only: xmlscan.DefaultConfig().ElementOnly}).run(data, len(fastHead), end, ctx, &lim, form))
				want := sha256.Sum256(form.Bytes())
				d := &shaNI{}
				d.Reset()
				short := data[:end:end]
				require.True(t, (&fastBody{only: xmlscan.DefaultConfig().ElementOnly}).run(short, len(fastHead), end, ctx, &lim, d))
				require.Equal(t, want[:], d.Sum(nil), "reorder %v, %d items, pad %d", reorder, n, pad)
			}
		}
	}
}
