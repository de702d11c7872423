package main

import (
	"bytes"
	"io"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProbe: whatever the write sizes, the probe holds the stream's first
// and last probeLen bytes.
func TestProbe(t *testing.T) {
	stream := make([]byte, 5*probeLen+123)
	_, _ = rand.NewChaCha8([32]byte{1}).Read(stream)
	for _, total := range []int{0, 10, probeLen, probeLen + 1, len(stream)} {
		for _, chunk := range []int{1, 1000, probeLen - 1, probeLen, 3*probeLen + 7} {
			t.Run("ok/"+strconv.Itoa(total)+"/"+strconv.Itoa(chunk), func(t *testing.T) {
				var p probe
				for b := stream[:total]; len(b) > 0; {
					n := min(chunk, len(b))
					_, _ = p.Write(b[:n])
					b = b[n:]
				}
				assert.Equal(t, stream[:min(total, probeLen)], nonNil(p.head))
				assert.Equal(t, stream[max(0, total-probeLen):total], nonNil(p.tail))
			})
		}
	}
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// sampleOf reads a response of the backend as fetch would.
func sampleOf(t *testing.T, src *source, kind string, size int64, edit func([]byte) []byte) sample {
	t.Helper()
	be, err := startResponder(src)
	require.NoError(t, err)
	t.Cleanup(func() { be.Close() })
	var body bytes.Buffer
	resp := post(t, be.url+filesPath+kind+"/"+strconv.FormatInt(size, 10))
	_, err = io.Copy(&body, resp.Body)
	require.NoError(t, err)
	b := body.Bytes()
	if edit != nil {
		b = edit(b)
	}
	s := sample{ctype: resp.Header.Get("Content-Type"), bytes: int64(len(b))}
	_, _ = s.probe.Write(b)
	return s
}

// TestSampleCheck: each mode's check accepts what that mode sends and
// rejects what another mode (or a cut response) looks like.
func TestSampleCheck(t *testing.T) {
	src := newSource(3)
	const size = 100 << 10
	ms := map[string]mode{}
	for _, m := range []mode{{name: "unsigned", kind: kindMTOM}, {name: "streaming", kind: kindMTOM}, {name: "buffered", kind: kindInline}} {
		ms[m.name] = m
	}
	signedTail := func(b []byte) []byte {
		// What the streaming gateway adds: a last part with the
		// signature, then the close delimiter.
		i := bytes.LastIndex(b, []byte("\r\n--"+boundary+"--"))
		out := append(bytes.Clone(b[:i]), "\r\n--"+boundary+"\r\nContent-Type: application/octet-stream\r\n\r\n<ds:SignatureValue>x</ds:SignatureValue>\r\n--"+boundary+"--\r\n"...)
		return append([]byte("<wsse:Security/>"), out...)
	}
	tests := []struct {
		name, mode, kind string
		edit             func([]byte) []byte
		ok               bool
	}{
		{name: "ok/unsigned", mode: "unsigned", kind: kindMTOM, ok: true},
		{name: "fail/unsigned-cut", mode: "unsigned", kind: kindMTOM, edit: func(b []byte) []byte { return b[:len(b)-1] }},
		{name: "ok/streaming", mode: "streaming", kind: kindMTOM, edit: signedTail, ok: true},
		{name: "fail/streaming-without-signature", mode: "streaming", kind: kindMTOM},
		{name: "fail/streaming-cut-before-close", mode: "streaming", kind: kindMTOM, edit: func(b []byte) []byte { b = signedTail(b); return b[:len(b)-10] }},
		{name: "ok/buffered", mode: "buffered", kind: kindInline, edit: func(b []byte) []byte { return append([]byte("<ds:SignatureValue/>"), b...) }, ok: true},
		{name: "fail/buffered-unsigned", mode: "buffered", kind: kindInline},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := sampleOf(t, src, tc.kind, size, tc.edit).check(ms[tc.mode], size)
			if tc.ok {
				assert.NoError(t, err)
			} else {
				assert.Error(t, err)
			}
		})
	}
}

func TestLastPartSigned(t *testing.T) {
	root := []byte(responseHead + xopInclude + responseTail)
	head, end := framing(mtomRootType, root)
	pkg := func(last string) []byte {
		b := append(bytes.Clone(head), "attachment"...)
		if last != "" {
			b = append(b, "\r\n--"+boundary+"\r\nContent-Type: application/octet-stream\r\n\r\n"+last...)
		}
		return append(b, end...)
	}
	tests := []struct {
		name   string
		pkg    []byte
		strict bool
		ok     bool
	}{
		{name: "ok/signature-last", pkg: pkg("<ds:SignatureValue>x</ds:SignatureValue>"), ok: true},
		{name: "fail/strict-root-without-encrypted-data", pkg: pkg("ciphertext"), strict: true},
		{name: "fail/two-parts", pkg: pkg("")},
		{name: "fail/last-part-not-signature", pkg: pkg("more data")},
		{name: "fail/truncated", pkg: pkg("<ds:SignatureValue>x</ds:SignatureValue>")[:len(head)+5]},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := lastPartSigned(mtomType, tc.pkg, tc.strict)
			if tc.ok {
				assert.NoError(t, err)
			} else {
				assert.Error(t, err)
			}
		})
	}
	t.Run("fail/content-type", func(t *testing.T) {
		assert.Error(t, lastPartSigned("multipart/related; boundary=", pkg("x"), false))
	})
}
