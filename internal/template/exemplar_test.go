package template

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exemplarRaw is a template's exemplar values as a partner's messages
// make them: most bytes repeat (the certificate, the payload's markup),
// a few vary per message (ids, digests).
func exemplarRaw(partner, msg int) []byte {
	r := rand.New(rand.NewPCG(uint64(partner), 0))
	cert := make([]byte, 1200)
	for i := range cert {
		cert[i] = byte(r.Uint32()) // incompressible but for the dictionary
	}
	var b bytes.Buffer
	b.Write(cert)
	for i := range 20 {
		fmt.Fprintf(&b, "<m:Item sku=\"p%d-%d\">%d</m:Item>", partner, i, msg*31+i)
	}
	return b.Bytes()
}

func TestPack(t *testing.T) {
	t.Run("ok/values-round-trip-as-the-dictionary-moves", func(t *testing.T) {
		// Partner 1's values, then partner 2's (owe partner 1 little:
		// they become the dictionary), then partner 2's again: the
		// store's deflater is made anew for each dictionary and reused
		// within one, and every template inflates to its own values.
		s := &Store{}
		var ts []*Template
		order := [][2]int{{1, 0}, {1, 1}, {1, 2}, {2, 0}, {2, 1}, {1, 3}, {2, 2}}
		for _, pm := range order {
			raw := exemplarRaw(pm[0], pm[1])
			tp := &Template{exemplarValues: bytes.Clone(raw)}
			s.pack(tp)
			ts = append(ts, tp)
			got, err := tp.values()
			require.NoError(t, err)
			require.Equal(t, string(raw), string(got), "partner %d message %d", pm[0], pm[1])
		}
		assert.NotNil(t, ts[1].exDict, "deflated")
		assert.Same(t, &ts[1].exDict[0], &ts[2].exDict[0], "one dictionary for partner 1's second and third")
		assert.NotSame(t, &ts[2].exDict[0], &ts[4].exDict[0], "partner 2's became the dictionary")
		for i, tp := range ts {
			raw := exemplarRaw(order[i][0], order[i][1])
			got, err := tp.values()
			require.NoError(t, err)
			assert.Equal(t, string(raw), string(got), "template %d, after the later packs", i)
		}
	})
	t.Run("ok/no-deflater-per-template", func(t *testing.T) {
		// A flate.Writer is about 800 KB: one per learned template
		// dominated learning's allocation (issue 14).
		s := &Store{}
		s.pack(&Template{exemplarValues: exemplarRaw(3, 0)})
		const n = 20
		tps := make([]*Template, n)
		for i := range tps {
			tps[i] = &Template{exemplarValues: exemplarRaw(3, i+1)}
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for _, tp := range tps {
			s.pack(tp)
		}
		runtime.ReadMemStats(&after)
		per := (after.TotalAlloc - before.TotalAlloc) / n
		assert.Less(t, per, uint64(64<<10), "bytes allocated per packed template")
		for _, tp := range tps {
			require.NotNil(t, tp.exDict, "deflated")
		}
	})
	t.Run("ok/deflater-not-kept-for-good", func(t *testing.T) {
		// Every policy has a store: a writer each, kept for good, would
		// be memory bounded by the number of routes, not by config.
		s := &Store{}
		s.pack(&Template{exemplarValues: exemplarRaw(5, 0)})
		tp := &Template{exemplarValues: exemplarRaw(5, 1)}
		s.pack(tp)
		require.NotNil(t, tp.exDict, "deflated")
		runtime.GC()
		assert.Nil(t, s.packer.w.Value(), "the writer outlived a collection")
		tp = &Template{exemplarValues: exemplarRaw(5, 2)}
		s.pack(tp)
		got, err := tp.values()
		require.NoError(t, err)
		assert.Equal(t, string(exemplarRaw(5, 2)), string(got), "deflated by a new writer after the collection")
	})
	t.Run("ok/incompressible-kept-raw", func(t *testing.T) {
		s := &Store{}
		r := rand.New(rand.NewPCG(9, 9))
		raw := make([]byte, 2000)
		for i := range raw {
			raw[i] = byte(r.Uint32())
		}
		s.pack(&Template{exemplarValues: exemplarRaw(4, 0)})
		tp := &Template{exemplarValues: bytes.Clone(raw)}
		s.pack(tp)
		assert.Nil(t, tp.exDict)
		assert.Equal(t, raw, tp.exemplarValues)
	})
}
