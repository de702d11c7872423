package signer

import (
	"bytes"
	"crypto/rsa"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/testpki"
)

func testAtts() []att {
	return []att{
		{cid: "scan-1@example", ctype: "image/png", data: bytes.Repeat([]byte{0x89, 'P', 'N', 'G', 0, 0xff}, 5000)},
		{cid: "report 2@example", ctype: "application/pdf", data: []byte("%PDF-1.7\n\x00\x01binary")},
		{cid: "empty@example", ctype: "application/octet-stream", data: nil},
	}
}

func streamOpts(l *testpki.Leaf, mode string) StreamOptions {
	return StreamOptions{Options: opts(l), Attachments: mode}
}

// TestStream: the signed package parses, its trailing part is the last
// one, and the message reassembled from it verifies with the DOM engine
// (xop) or the independent checker (SwA references, which the DOM engine
// cannot resolve without attachments).
func TestStream(t *testing.T) {
	p := testPKI(t)
	v := newDOMVerifier(t, p)
	atts := testAtts()
	cids := []string{atts[0].cid, atts[1].cid, atts[2].cid}
	tests := []struct {
		name   string
		mode   string
		strict bool
		// indep checks with the independent checker: the DOM engine does
		// not accept wsse11:SignatureConfirmation (it processes requests).
		indep bool
		o     func(o *StreamOptions)
	}{
		{name: "ok/xop-rsa", mode: AttachXOP},
		{name: "ok/xop-ec-issuer-serial-confirm", mode: AttachXOP, indep: true, o: func(o *StreamOptions) {
			o.Signer, o.Certificate, o.KeyReference = p.ec.Key, p.ec.Cert, RefIssuerSerial
			o.SignatureConfirmation, o.Confirm = true, [][]byte{{1, 2, 3}}
		}},
		{name: "ok/xop-strict", mode: AttachXOP, strict: true},
		{name: "ok/swa-content", mode: AttachSwAContent},
		{name: "ok/swa-content-strict", mode: AttachSwAContent, strict: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var in bytes.Buffer
			in0 := mtomRoot(cids...)
			if tc.mode != AttachXOP {
				// The Body includes the first part only: the others get
				// their own cid: Reference, the included one none (it is
				// signed through the Body; see streamRoot.digester).
				in0 = mtomRoot(cids[0])
			}
			ct, err := writePackage(&in, in0, atts)
			require.NoError(t, err)
			o := streamOpts(p.rsa, tc.mode)
			if tc.strict {
				o.StrictXOP, o.EncryptFor = true, p.server.Cert
			}
			if tc.o != nil {
				tc.o(&o)
			}
			s, err := NewStream(o)
			require.NoError(t, err)
			var out bytes.Buffer
			require.NoError(t, s.Sign(&out, newStdParts(t, &in, ct)))

			pkg := parsePackage(t, out.Bytes(), s.Boundary())
			require.Len(t, pkg.bodies, len(atts)+2, "root, attachments, signature")
			last := len(pkg.bodies) - 1
			assert.Equal(t, "<"+s.SignatureCID()+">", pkg.headers[last].Get("Content-ID"), "the signature is the last part")
			assert.Equal(t, "<root@example>", pkg.headers[0].Get("Content-ID"))
			for i, a := range atts {
				assert.Equal(t, a.data, nonNil(pkg.bodies[i+1]), "attachment %d passes unchanged", i)
			}
			root := string(pkg.bodies[0])
			assert.Contains(t, root, `href="cid:`+s.SignatureCID()+`"`)
			assert.NotContains(t, root, "<ds:SignedInfo", "nothing of SignedInfo is in the root part")
			if tc.strict {
				assert.Equal(t, CipherPartType, pkg.headers[last].Get("Content-Type"))
				assert.NotContains(t, root, "<ds:Signature")
				assertOrder(t, root, "<wsu:Timestamp", "<wsse:BinarySecurityToken", "<xenc:EncryptedKey", "<xenc:EncryptedData")
			} else {
				assert.Equal(t, SignaturePartType, pkg.headers[last].Get("Content-Type"))
				assert.True(t, bytes.HasPrefix(pkg.bodies[last], []byte("<ds:SignedInfo>")))
			}

			var recipient *rsa.PrivateKey
			if tc.strict {
				recipient = p.server.Key.(*rsa.PrivateKey)
			}
			msg, byCID := reassemble(t, pkg, true, recipient)
			switch {
			case tc.indep:
				res, err := verifySecured(msg, o.Certificate, nil, nil)
				require.NoError(t, err)
				assert.Equal(t, []string{"Body", "Timestamp", "SignatureConfirmation"}, res.refs)
			case tc.mode == AttachXOP:
				res, _, err := v.verify(msg, time.Now())
				require.NoError(t, err)
				assert.True(t, res.SignedByTrusted(res.Body))
				assert.Equal(t, o.Certificate.Raw, res.Signer().Certificate.Raw)
				assert.Contains(t, string(msg), `<ns1:File name="empty@example"></ns1:File>`, "an empty part is empty content")
			default:
				res, err := verifySecuredAtt(msg, o.Certificate, nil, nil, byCID)
				require.NoError(t, err)
				assert.Equal(t, []string{"Body", "Timestamp", "cid", "cid"}, res.refs)
				assert.Contains(t, string(msg), `URI="cid:report%202@example"`)
				assert.NotContains(t, string(msg), `URI="cid:scan-1@example"`, "the included part has no cid: Reference")
			}
		})
	}
}

func nonNil(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// TestStreamTamper: the reassembled message fails when an attachment or
// the trailing signature is changed in transit.
func TestStreamTamper(t *testing.T) {
	p := testPKI(t)
	v := newDOMVerifier(t, p)
	atts := testAtts()
	var in bytes.Buffer
	ct, err := writePackage(&in, mtomRoot(atts[0].cid, atts[1].cid, atts[2].cid), atts)
	require.NoError(t, err)
	s, err := NewStream(streamOpts(p.rsa, AttachXOP))
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, s.Sign(&out, newStdParts(t, &in, ct)))
	for _, tc := range []struct {
		name string
		part int // -1: the last
		at   int
	}{
		{"ok/untouched", 0, -1},
		{"fail/attachment", 1, 100},
		{"fail/second-attachment", 2, 3},
		{"fail/signature-value", -1, -40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pkg := parsePackage(t, out.Bytes(), s.Boundary())
			if tc.at != -1 {
				i := tc.part
				if i < 0 {
					i = len(pkg.bodies) - 1
				}
				b := pkg.bodies[i]
				at := tc.at
				if at < 0 {
					at = bytes.Index(b, []byte("</ds:SignatureValue>")) + at
				}
				b[at] ^= 0x01
			}
			msg, _ := reassemble(t, pkg, true, nil)
			_, _, err := v.verify(msg, time.Now())
			if strings.HasPrefix(tc.name, "ok/") {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
			}
		})
	}
}

// TestStreamFail: packages that cannot be signed. Before the root part is
// written (Prepare) the error can still become a fault; after it, the
// output must end without a signature part and without the close
// delimiter, so the client sees a broken package.
func TestStreamFail(t *testing.T) {
	p := testPKI(t)
	atts := testAtts()
	all := []string{atts[0].cid, atts[1].cid, atts[2].cid}
	tests := []struct {
		name     string
		root     []byte
		atts     []att
		truncate int // bytes cut from the end of the package
		garbage  bool
		mode     string
		maxRoot  int64
		early    bool // fails in Prepare, nothing written
		pkg      bool // an ErrPackage after the root part went out
	}{
		{name: "fail/not-soap", root: []byte(`<a/>`), atts: atts, early: true},
		{name: "fail/include-outside-body", early: true, atts: atts,
			root: bytes.Replace(mtomRoot(all...), []byte("<soapenv:Header/>"), []byte(`<soapenv:Header><h><xop:Include xmlns:xop="`+nsXOP+`" href="cid:x"/></h></soapenv:Header>`), 1)},
		{name: "fail/include-http", early: true, atts: atts,
			root: bytes.Replace(mtomRoot(all...), []byte("cid:scan-1@example"), []byte("http://evil/x"), 1)},
		{name: "fail/abort-mid-attachment", root: mtomRoot(all...), atts: atts, truncate: 20000},
		{name: "fail/abort-before-close", root: mtomRoot(all...), atts: atts, truncate: 4},
		{name: "fail/malformed-mime", root: mtomRoot(all...), atts: atts, garbage: true},
		{name: "fail/out-of-order", root: mtomRoot(all...), atts: []att{atts[1], atts[0], atts[2]}},
		{name: "fail/unreferenced", root: mtomRoot(atts[0].cid), atts: atts},
		{name: "fail/missing-part", root: mtomRoot(all...), atts: atts[:2]},
		{name: "fail/no-content-id", root: mtomRoot(), atts: []att{{ctype: "image/png", data: []byte("x")}}, mode: AttachSwAContent},
		// XML attachments pass the gate before they are canonicalized
		// (SwA §5.4.2): a broken or hostile one cuts the response.
		{name: "fail/swa-xml-malformed", root: mtomRoot(), pkg: true, atts: []att{{cid: "x@x", ctype: "text/xml", data: []byte("<a><b></a>")}}, mode: AttachSwAContent},
		{name: "fail/swa-xml-doctype", root: mtomRoot(), pkg: true, mode: AttachSwAComplete,
			atts: []att{{cid: "x@x", ctype: "application/xml", data: []byte(`<!DOCTYPE a [<!ENTITY e "x">]><a>&e;</a>`)}}},
		{name: "fail/swa-xml-over-bound", root: mtomRoot(), pkg: true, maxRoot: 1 << 10, mode: AttachSwAContent,
			atts: []att{{cid: "x@x", ctype: "text/xml", data: []byte("<a>" + strings.Repeat("x", 1<<10) + "</a>")}}},
		{name: "fail/swa-complete-header", root: mtomRoot(), pkg: true, mode: AttachSwAComplete,
			atts: []att{{cid: "t@x", ctype: "text/plain; name*=utf-8''x", data: []byte("x")}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var in bytes.Buffer
			ct, err := writePackage(&in, tc.root, tc.atts)
			require.NoError(t, err)
			data := in.Bytes()
			data = data[:len(data)-tc.truncate]
			if tc.garbage {
				i := bytes.LastIndex(data, []byte("\r\n--"))
				data = append(data[:i:i], []byte("\r\n-X garbage without a delimiter")...)
			}
			mode := tc.mode
			if mode == "" {
				mode = AttachXOP
			}
			o := streamOpts(p.rsa, mode)
			o.MaxRootSize = tc.maxRoot
			s, err := NewStream(o)
			require.NoError(t, err)
			var out bytes.Buffer
			err = s.Sign(&out, newStdParts(t, bytes.NewReader(data), ct))
			require.Error(t, err)
			assert.Equal(t, !tc.early, s.Started(), "started")
			if tc.early {
				assert.Zero(t, out.Len(), "nothing written before the root part is checked")
				assert.True(t, errors.Is(err, ErrPackage) || errors.Is(err, ErrEnvelope), "got %v", err)
				return
			}
			if tc.pkg {
				assert.ErrorIs(t, err, ErrPackage)
			}
			assert.Contains(t, out.String(), "<root@example>", "the root part went out first")
			assert.NotContains(t, out.String(), "<"+s.SignatureCID()+">", "no signature part")
			assert.NotContains(t, out.String(), "SignedInfo")
			assert.NotContains(t, out.String(), "--"+s.Boundary()+"--", "no close delimiter")
		})
	}
}

// TestStreamConstantMemory streams a 256 MiB attachment and samples the
// heap as the output grows: it must stay far below the response size.
func TestStreamConstantMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("256 MiB")
	}
	p := testPKI(t)
	const size = 256 << 20
	pr, pw := io.Pipe()
	boundary := writePackageStreaming(pw, mtomRoot("big@example"), "big@example", &patterned{n: size})
	s, err := NewStream(streamOpts(p.rsa, AttachXOP))
	require.NoError(t, err)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	w := &heapSampler{every: 16 << 20}
	require.NoError(t, s.Sign(w, newStdParts(t, pr, mtomType(boundary))))
	assert.Greater(t, w.n, int64(size))
	growth := int64(w.peak) - int64(base)
	t.Logf("heap growth while streaming %d MiB: %d KiB", size>>20, growth>>10)
	assert.Less(t, growth, int64(16<<20), "heap must not grow with the response")
}

// writePackageStreaming writes an MTOM package with one attachment read
// from r to pw, from a goroutine, and returns its boundary.
func writePackageStreaming(pw *io.PipeWriter, root []byte, cid string, r io.Reader) string {
	const boundary = "bnd-streaming-test"
	go func() {
		_, err := io.Copy(pw, io.MultiReader(
			strings.NewReader("--"+boundary+"\r\nContent-Type: application/xop+xml; type=\"text/xml\"\r\nContent-Id: <root@example>\r\n\r\n"),
			bytes.NewReader(root),
			strings.NewReader("\r\n--"+boundary+"\r\nContent-Type: application/octet-stream\r\nContent-Id: <"+cid+">\r\n\r\n"),
			r,
			strings.NewReader("\r\n--"+boundary+"--\r\n"),
		))
		pw.CloseWithError(err)
	}()
	return boundary
}

// heapSampler discards what is written and samples the heap every so many
// bytes.
type heapSampler struct {
	every, n, next int64
	peak           uint64
}

func (h *heapSampler) Write(p []byte) (int, error) {
	h.n += int64(len(p))
	if h.n >= h.next {
		h.next += h.every
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		h.peak = max(h.peak, ms.HeapAlloc)
	}
	return len(p), nil
}
