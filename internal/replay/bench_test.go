package replay

import (
	"context"
	"encoding/binary"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wssgw/wssgw/internal/replay/replaytest"
)

// freshKeys returns a function giving each goroutine of a parallel
// benchmark its own distinct 32-byte keys, in a reused buffer, as a caller
// holding a digest would pass them.
func freshKeys() func() func() []byte {
	var goroutine atomic.Uint64
	return func() func() []byte {
		var buf [32]byte
		binary.BigEndian.PutUint64(buf[:8], goroutine.Add(1))
		var n uint64
		return func() []byte {
			n++
			binary.BigEndian.PutUint64(buf[8:16], n)
			return buf[:]
		}
	}
}

func BenchmarkMemorySeen(b *testing.B) {
	b.Run("fresh", func(b *testing.B) {
		// Entries live 10ms, so the benchmark runs at a steady state where
		// sweeps keep up, as in production, instead of growing a huge map.
		m := NewMemory(MemoryOptions{})
		defer m.Close()
		next := freshKeys()
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			key := next()
			for pb.Next() {
				if replayed, err := m.Seen(context.Background(), key(), time.Now().Add(10*time.Millisecond)); err != nil || replayed {
					b.Errorf("Seen = %v, %v", replayed, err)
					return
				}
			}
		})
	})
	b.Run("replayed", func(b *testing.B) {
		m := NewMemory(MemoryOptions{})
		defer m.Close()
		expires := time.Now().Add(time.Hour)
		keys := make([][]byte, 1024)
		for i := range keys {
			keys[i] = key(string(rune(i)))
			if _, err := m.Seen(context.Background(), keys[i], expires); err != nil {
				b.Fatal(err)
			}
		}
		var start atomic.Uint64
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			i := start.Add(1) * 97
			for pb.Next() {
				i++
				if replayed, err := m.Seen(context.Background(), keys[i%uint64(len(keys))], expires); err != nil || !replayed {
					b.Errorf("Seen = %v, %v", replayed, err)
					return
				}
			}
		})
	})
}

func BenchmarkRedisSeen(b *testing.B) {
	r, err := NewRedis(RedisOptions{Addr: replaytest.StartRedis(b), OpTimeout: 5 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	next := freshKeys()
	b.Run("serial", func(b *testing.B) {
		key := next()
		b.ReportAllocs()
		for b.Loop() {
			if replayed, err := r.Seen(context.Background(), key(), time.Now().Add(time.Second)); err != nil || replayed {
				b.Fatalf("Seen = %v, %v", replayed, err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			key := next()
			for pb.Next() {
				if replayed, err := r.Seen(context.Background(), key(), time.Now().Add(time.Second)); err != nil || replayed {
					b.Errorf("Seen = %v, %v", replayed, err)
					return
				}
			}
		})
	})
}
