package signer

import (
	"encoding/base64"
	"testing"

	simd "github.com/segmentio/asm/base64"
)

// BenchmarkBase64Encode is the reason for segmentio/asm (docs/decisions.md):
// the standard encoder and the SIMD one on 1 MiB, the size class of an
// attachment the streaming signer encodes.
//
//	go test -run '^$' -bench Base64Encode ./internal/signer
func BenchmarkBase64Encode(b *testing.B) {
	src := make([]byte, 1<<20)
	dst := make([]byte, base64.StdEncoding.EncodedLen(len(src)))
	for _, e := range []struct {
		name string
		enc  func(dst, src []byte)
	}{
		{"encoding-base64", base64.StdEncoding.Encode},
		{"segmentio-asm", simd.StdEncoding.Encode},
	} {
		b.Run(e.name, func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				e.enc(dst, src)
			}
		})
	}
}
