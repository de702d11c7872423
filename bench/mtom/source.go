package main

import (
	"encoding/base64"
	"fmt"
	"io"
	"math/rand/v2"
)

// blockSize is the generated block the attachment repeats: a multiple of
// 3 bytes, so that the base64 of the whole is the base64 of each block
// concatenated (RFC 4648 §4: padding only at the end), and 1 MiB of
// base64.
const blockSize = 3 << 18

// source generates an attachment of any size from one pseudo-random block
// (ChaCha8) written over and over, and its base64 text the same way. The
// gateway's cost does not depend on the bytes; generating them once keeps
// the backend's CPU, on the same cores as the gateway, out of the
// measurement, and no response is ever held in memory.
type source struct {
	raw, b64 []byte
}

func newSource(seed uint64) *source {
	var s [32]byte
	s[0], s[1] = byte(seed), byte(seed>>8)
	raw := make([]byte, blockSize)
	_, _ = rand.NewChaCha8(s).Read(raw) // never fails
	b64 := make([]byte, base64.StdEncoding.EncodedLen(blockSize))
	base64.StdEncoding.Encode(b64, raw)
	return &source{raw: raw, b64: b64}
}

// writeRaw writes size bytes of the attachment.
func (s *source) writeRaw(w io.Writer, size int64) error {
	for size > 0 {
		n := min(size, blockSize)
		if _, err := w.Write(s.raw[:n]); err != nil {
			return fmt.Errorf("writing the attachment: %w", err)
		}
		size -= n
	}
	return nil
}

// writeBase64 writes the base64 of size bytes of the attachment: whole
// blocks from the cached text, the tail encoded with its padding.
func (s *source) writeBase64(w io.Writer, size int64) error {
	for size > blockSize {
		if _, err := w.Write(s.b64); err != nil {
			return fmt.Errorf("writing the base64 attachment: %w", err)
		}
		size -= blockSize
	}
	tail := make([]byte, base64.StdEncoding.EncodedLen(int(size)))
	base64.StdEncoding.Encode(tail, s.raw[:size])
	if _, err := w.Write(tail); err != nil {
		return fmt.Errorf("writing the base64 attachment: %w", err)
	}
	return nil
}
