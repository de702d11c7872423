package template

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/wss"
)

// BenchmarkLearn times storing a new template in a full store of 10 and of
// 1,000 templates (the config's default cap): the steady state of a varied
// mix, where each template learned evicts the coldest. Issue 14 found this
// linear in the templates held (about 50 ms a miss at the cap); the two
// sizes must cost about the same. Learning the template from the message
// (the DOM engine's result, the scan) is outside the timed part: it does
// not depend on the store. The templates' shapes differ in a header
// block, so they share the Security header, as a partner's do;
// learn-µs/op is the untimed learning of each from its message.
func BenchmarkLearn(b *testing.B) {
	for _, held := range []int{10, 1000} {
		b.Run(fmt.Sprintf("held=%d", held), func(b *testing.B) {
			o := testOptions()
			o.MaxTemplates = held
			f := newFixture(b, nil, o)
			// held+1 shapes in turn: each one learned evicts the oldest,
			// which is the next one due, so every add is a new template.
			type learned struct {
				msg []byte
				res *wss.Result
			}
			pool := make([]learned, held+1)
			for i := range pool {
				// A header block of its own: the Body is generic (any
				// payload takes one template), the header is not.
				env := bytes.Replace(benchEnvelope(2, "Item"), []byte("<soap:Header/>"),
					fmt.Appendf(nil, `<soap:Header><x:Trace%d xmlns:x="urn:trace">1</x:Trace%d></soap:Header>`, i, i), 1)
				msg := f.sign(b, env, f.rsa, signer.RefBST, f.now, nil)
				res, err := f.dom.Process(msg, f.policy, f.now)
				if err != nil {
					b.Fatal(err)
				}
				pool[i] = learned{msg, res}
				if i < held {
					f.engine.learn(msg, nil, res, f.policy, f.now, sight{})
				}
			}
			if f.store.Len() != held {
				b.Fatalf("%d templates held, want %d", f.store.Len(), held)
			}
			b.ReportAllocs()
			i := held
			var learning time.Duration
			for b.Loop() {
				b.StopTimer()
				l := pool[i%len(pool)]
				start := time.Now()
				t, err := f.engine.newTemplate(l.msg, nil, l.res, f.policy, f.now)
				if err != nil {
					b.Fatal(err)
				}
				learning += time.Since(start)
				b.StartTimer()
				if ok, why := f.store.add(t); !ok {
					b.Fatalf("not added: %s", why)
				}
				i++
			}
			b.ReportMetric(float64(len(f.store.heads.classes)), "head-classes")
			// What learning the template from the message cost, outside
			// the timed add: the two together are what a new partner's
			// shape costs the gateway once (issue 14, fresh shapes).
			b.ReportMetric(float64(learning.Microseconds())/float64(b.N), "learn-µs/op")
		})
	}
}
