package signer

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/mime"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// BenchmarkResponse compares, for one attachment of 1 MiB and 64 MiB:
// passthrough (copying the unsigned package, what a route without
// response signing costs), mime-copy (parsing and re-writing it), streaming (the package signed while it is
// copied, DESIGN.md §6) and buffered (Secure over the same payload inlined
// as base64, the standard mode). SetBytes is the attachment size, so MB/s
// compare directly.
//
//	go test -run '^$' -bench BenchmarkResponse -benchmem ./internal/signer
func BenchmarkResponse(b *testing.B) {
	p := testPKI(b)
	for _, size := range []int{1 << 20, 64 << 20} {
		data, err := io.ReadAll(&patterned{n: int64(size)})
		require.NoError(b, err)
		var pkg bytes.Buffer
		ct, err := writePackage(&pkg, mtomRoot("big@example"), []att{{cid: "big@example", ctype: "application/octet-stream", data: data}})
		require.NoError(b, err)
		inline := bytes.Replace(mtomRoot("big@example"), []byte(`<xop:Include xmlns:xop="`+nsXOP+`" href="cid:big@example"/>`),
			[]byte(base64.StdEncoding.EncodeToString(data)), 1)
		name := fmt.Sprintf("%dMiB", size>>20)

		b.Run("passthrough/"+name, func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			buf := make([]byte, 32<<10)
			for b.Loop() {
				// 32 KiB reads and writes, as httputil.ReverseProxy copies.
				_, err := io.CopyBuffer(io.Discard, onlyReader{bytes.NewReader(pkg.Bytes())}, buf)
				require.NoError(b, err)
			}
		})
		b.Run("mime-copy/"+name, func(b *testing.B) {
			// Parsing and re-writing the package without signing: the
			// MIME share of the streaming cost.
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				require.NoError(b, mimeCopy(io.Discard, newStdParts(b, bytes.NewReader(pkg.Bytes()), ct)))
			}
		})
		b.Run("streaming/"+name, func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				s, err := NewStream(streamOpts(p.ec, AttachXOP))
				require.NoError(b, err)
				require.NoError(b, s.Sign(io.Discard, newStdParts(b, bytes.NewReader(pkg.Bytes()), ct)))
			}
		})
		b.Run("buffered/"+name, func(b *testing.B) {
			o := opts(p.ec)
			o.Gate = bigGate(b)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				_, err := Secure(inline, o)
				require.NoError(b, err)
			}
		})
	}
}

// mimeCopy re-writes a package part by part.
func mimeCopy(w io.Writer, parts Parts) error {
	mw := multipart.NewWriter(w)
	buf := make([]byte, 32<<10)
	for {
		h, body, err := parts.Next()
		if err == io.EOF {
			return mw.Close()
		}
		if err != nil {
			return err
		}
		pw, err := mw.CreatePart(h)
		if err != nil {
			return err
		}
		if _, err := io.CopyBuffer(pw, onlyReader{body}, buf); err != nil {
			return err
		}
	}
}

// bigGate gates messages up to 512 MiB of base64 content.
func bigGate(tb testing.TB) *xmlscan.Scanner {
	sc := xmlscan.DefaultConfig()
	sc.Limits.MaxBytes, sc.Limits.MaxTextLen, sc.Limits.MaxBase64Len = 512<<20, 512<<20, 512<<20
	g, err := xmlscan.NewScanner(sc)
	require.NoError(tb, err)
	return g
}

// onlyReader hides a reader's WriteTo, so that CopyBuffer uses the given
// buffer and the package is copied in bounded chunks.
type onlyReader struct{ io.Reader }

// BenchmarkStreamDigest is the XOP attachment path of a streamed response
// (one 64 MiB part over loopback TCP to a draining reader, standing in
// for the client): sequential copies and digests each 32 KiB piece in
// turn with encoding/base64's encoder (before), sequential-simd swaps in
// the fused SIMD encoder, pipelined adds the digest goroutine
// (stream_pipe.go). Each later variant reports x-vs-sequential, its speed
// over the first.
//
//	go test -run '^$' -bench BenchmarkStreamDigest -benchmem ./internal/signer
func BenchmarkStreamDigest(b *testing.B) {
	data, err := io.ReadAll(&patterned{n: 64 << 20})
	require.NoError(b, err)
	var seq float64 // ns/op of sequential
	for _, v := range []struct {
		name string
		copy func(w io.Writer, r io.Reader) error
	}{
		{"sequential", func(w io.Writer, r io.Reader) error {
			enc := base64.NewEncoder(base64.StdEncoding, sha256.New())
			_, err := io.CopyBuffer(io.MultiWriter(w, enc), onlyReader{r}, make([]byte, 32<<10))
			return errors.Join(err, enc.Close())
		}},
		{"sequential-simd", func(w io.Writer, r io.Reader) error {
			enc := mime.NewBase64Writer(sha256.New())
			_, err := io.CopyBuffer(io.MultiWriter(w, enc), onlyReader{r}, make([]byte, pipeBufSize))
			return errors.Join(err, enc.Close())
		}},
		{"pipelined-simd", func(w io.Writer, r io.Reader) error {
			enc := mime.NewBase64Writer(sha256.New())
			return errors.Join(copyDigest(w, r, enc), enc.Close())
		}},
	} {
		b.Run(v.name, func(b *testing.B) {
			conn := drainConn(b)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			start := time.Now()
			for b.Loop() {
				require.NoError(b, v.copy(conn, bytes.NewReader(data)))
			}
			ns := float64(time.Since(start).Nanoseconds()) / float64(b.N)
			if seq == 0 {
				seq = ns
			} else {
				b.ReportMetric(seq/ns, "x-vs-sequential")
			}
		})
	}
}

// drainConn is a loopback TCP connection whose far end is read and
// discarded, as the client of a response would.
func drainConn(tb testing.TB) net.Conn {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(tb, err)
	tb.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = io.Copy(io.Discard, c)
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(tb, err)
	tb.Cleanup(func() { c.Close() })
	return c
}
