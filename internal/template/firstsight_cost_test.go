package template

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/signer"
)

// BenchmarkLaneWalkCost (issue 14, review): the pre-DOM walk runs on every
// miss, up to server.maxBodyBytes, before its lane can refuse it. It must
// stay linear (ns/B alike at 1 and 8 MiB, for hostile layouts too) and a
// small part of the DOM run it guards: walk/dom is the ratio measured in
// one run on the same fresh signed message.
//
//	go test ./internal/template -run '^$' -bench BenchmarkLaneWalkCost -benchtime 5x
func BenchmarkLaneWalkCost(b *testing.B) {
	f := newFixture(b, nil, testOptions())
	head := secEnvelope("", bst("X-1", ""), "")
	head = head[:strings.Index(head, "</wsse:BinarySecurityToken>")]
	// Up to the gate's MaxBytes (8 MiB): past it missRun does not walk.
	for _, size := range []int{1 << 20, 8<<20 - 4096} {
		for name, unit := range map[string]string{
			"bodies":     `<s:Body></x>`,
			"comments":   `<!--`,
			"attributes": `<a b="`,
			"open-tags":  `<a>`,
			"tokens":     `<wsse:BinarySecurityToken>`,
			"char-refs":  `&#1`,
			"cdata":      `<![CDATA[`,
		} {
			msg := []byte(head + strings.Repeat(unit, size/len(unit)))
			b.Run(name+"-"+sizeName(size), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(msg)))
				var tWalk, tDOM time.Duration
				for b.Loop() {
					s := time.Now()
					walkSight(msg, false, &f.engine.limits)
					tWalk += time.Since(s)
					s = time.Now()
					if _, err := f.dom.Process(msg, f.policy, f.now); err == nil {
						b.Fatal("hostile bytes accepted")
					}
					tDOM += time.Since(s)
				}
				b.ReportMetric(float64(tWalk.Nanoseconds())/float64(b.N)/float64(len(msg)), "walk-ns/B")
				b.ReportMetric(float64(tWalk)/float64(tDOM), "walk/dom")
			})
		}
	}
	for _, c := range []struct {
		name  string
		items int
	}{{"signed-1MiB", 11000}} {
		b.Run(c.name+"-walk-vs-dom", func(b *testing.B) {
			msg := f.sign(b, benchEnvelope(c.items, "Item"), f.rsa, signer.RefBST, f.now, nil)
			if _, err := f.dom.Process(msg, f.policy, f.now); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(msg)))
			var tWalk, tDOM time.Duration
			for b.Loop() {
				s := time.Now()
				walkSight(msg, false, &f.engine.limits)
				tWalk += time.Since(s)
				s = time.Now()
				if _, err := f.dom.Process(msg, f.policy, f.now); err != nil {
					b.Fatal(err)
				}
				tDOM += time.Since(s)
			}
			b.ReportMetric(float64(tWalk.Nanoseconds())/float64(b.N)/float64(len(msg)), "walk-ns/B")
			b.ReportMetric(float64(tDOM.Nanoseconds())/float64(b.N)/float64(len(msg)), "dom-ns/B")
			b.ReportMetric(float64(tWalk)/float64(tDOM), "walk/dom")
		})
	}
}

func sizeName(n int) string {
	if n >= 1<<20 {
		return strconv.Itoa((n+4096)>>20) + "MiB"
	}
	return strconv.Itoa(n>>10) + "KiB"
}

// TestLaneWalkStopsWhereTheGateRefuses: before the DOM engine, the walk
// stops at the first gate limit a message breaks (what follows does not
// change its key: it was not read), claims nothing then, and the DOM
// engine refuses that message; a message within the limits keys and
// claims as walkShape does.
func TestLaneWalkStopsWhereTheGateRefuses(t *testing.T) {
	f := newFixture(t, nil, testOptions())
	lim := &f.engine.limits
	t.Run("ok/signed-message-unchanged", func(t *testing.T) {
		for _, ref := range []string{signer.RefBST, signer.RefThumbprint, signer.RefIssuerSerial} {
			msg := f.sign(t, benchEnvelope(50, "Item"), f.rsa, ref, f.now, nil)
			k, s := walkShape(msg, false)
			k2, s2, _ := walkSight(msg, false, lim)
			assert.Equal(t, k, k2, ref)
			assert.Equal(t, s, s2, ref)
			assert.NotZero(t, s2, ref)
		}
	})
	head := secEnvelope("", bst("X-1", certA), "")
	head = head[:strings.Index(head, "</wsse:Security>")]
	for _, tc := range []struct {
		name, over string
	}{
		{"fail/depth", strings.Repeat("<a>", lim.MaxDepth)},
		{"fail/elements", strings.Repeat("<a/>", lim.MaxElements)},
		{"fail/attributes", "<a" + strings.Repeat(` b="1"`, lim.MaxAttrs+lim.MaxNSDeclsPerElement+1) + ">"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := []byte(head + tc.over + "<x:One/>" + bst("X-2", certB))
			b := []byte(head + tc.over + "<y:Two/>")
			ka, sa, _ := walkSight(a, false, lim)
			kb, _, _ := walkSight(b, false, lim)
			assert.Equal(t, ka, kb, "stopped before what differs")
			assert.Zero(t, sa, "no claim")
			k1, _ := walkShape(a, false)
			k2, _ := walkShape(b, false)
			assert.NotEqual(t, k1, k2, "without limits the walk reads on")
			_, err := f.dom.Process(a, f.policy, f.now)
			require.Error(t, err, "the gate refuses it")
		})
	}
	t.Run("fail/token-with-a-reference", func(t *testing.T) {
		msg := secEnvelope("", bst("X-1", certA[:8]+"&#1;"+certA[8:])+sigWith(`<wsse:Reference URI="#X-1"/>`), "<m:Op/>")
		assert.Zero(t, claimOf(msg), "no certificate's base64 holds a reference")
	})
}
