package main

import (
	"crypto/sha256"
	"io"
	"time"

	"github.com/wssgw/wssgw/internal/mime"
)

// floorSize bounds the bytes digested to measure the floor.
const floorSize = 256 << 20

// digestFloor is the attachment throughput, in MiB/s, of the digest alone
// on one core (the best of three runs over up to floorSize bytes): SHA-256
// of the attachment's base64 in XOP mode (the Body's XOP infoset, XOP 1.0
// §3), of its bytes in the SwA modes. Streaming signing cannot beat it,
// since one SHA-256 stream is sequential; DESIGN.md §7 takes the
// cryptography as the physical limit.
func digestFloor(src *source, attachments string, size int64) (float64, error) {
	size = min(size, floorSize)
	best := 0.0
	for range 3 {
		h := sha256.New()
		var w io.Writer = h
		enc := mime.NewBase64Writer(h) // the encoder streaming signing uses
		if attachments == attachXOP {
			w = enc
		}
		start := time.Now()
		if err := src.writeRaw(w, size); err != nil {
			return 0, err
		}
		if err := enc.Close(); err != nil {
			return 0, err
		}
		h.Sum(nil)
		best = max(best, float64(size)/(1<<20)/time.Since(start).Seconds())
	}
	return best, nil
}
