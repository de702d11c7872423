package swa

import (
	"bytes"
	"errors"
	"io"
	"net/textproto"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/xmlscan"
)

var testOpts = Options{MaxXML: 1 << 10}

func hdr(ct string) textproto.MIMEHeader {
	h := textproto.MIMEHeader{"Content-Id": {"<p@x>"}}
	if ct != "" {
		h.Set("Content-Type", ct)
	}
	return h
}

// transform runs NewWriter over content written in steps of step bytes.
func transform(transform string, h textproto.MIMEHeader, content string, step int, o Options) (string, error) {
	var out bytes.Buffer
	w, err := NewWriter(&out, transform, h, o)
	if err != nil {
		return "", err
	}
	for i := 0; i < len(content); i += step {
		if _, err := w.Write([]byte(content[i:min(i+step, len(content))])); err != nil {
			return "", err
		}
	}
	if err := w.Close(); err != nil {
		return "", err
	}
	return out.String(), nil
}

// TestNewWriter: the octets each transform digests (SwA §5.4.2), as WSS4J
// computes them, written whole and byte by byte.
func TestNewWriter(t *testing.T) {
	const completeHdr = "Content-ID:<p@x>\r\nContent-Type:text/plain;charset=\"utf-8\"\r\n"
	tests := []struct {
		name, transform, ct, in, want string
	}{
		{"ok/binary-as-is", ContentTransform, "application/octet-stream", "a\nb\r\x00", "a\nb\r\x00"},
		{"ok/no-content-type-binary", ContentTransform, "", "a\nb", "a\nb"},
		{"ok/image-binary", ContentTransform, "image/png", "\r\r\n", "\r\r\n"},
		{"ok/text-lf", ContentTransform, "text/plain", "l1\nl2\n", "l1\r\nl2\r\n"},
		{"ok/text-case-and-params", ContentTransform, " Text/Plain; charset=UTF-8", "a\rb", "a\r\nb"},
		{"ok/text-csv", ContentTransform, "text/csv", "a\n", "a\r\n"},
		{"ok/xml-exc-c14n", ContentTransform, "text/xml", `<?xml version="1.0"?><a xmlns="urn:a"  xmlns:u="urn:u"><b c='1'/><!-- c --></a>`,
			`<a xmlns="urn:a"><b c="1"></b></a>`},
		{"ok/application-xml", ContentTransform, "application/xml; charset=utf-8", "<a>\r\n</a>", "<a>\n</a>"},
		{"ok/plus-xml", ContentTransform, "application/soap+xml", "<a/>", "<a></a>"},
		{"ok/image-svg", ContentTransform, "image/svg+xml", "<svg/>", "<svg></svg>"},
		{"ok/complete-text", CompleteTransform, "text/plain; charset=UTF-8", "x\n", completeHdr + "x\r\n"},
		{"ok/complete-binary-empty", CompleteTransform, "", "", "Content-ID:<p@x>\r\nContent-Type:text/plain;charset=\"us-ascii\"\r\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, step := range []int{max(len(tc.in), 1), 1} {
				got, err := transform(tc.transform, hdr(tc.ct), tc.in, step, testOpts)
				require.NoError(t, err)
				require.Equal(t, tc.want, got, "step %d", step)
			}
		})
	}
}

// TestNewWriterFail: the transforms refuse what they cannot digest the way
// the peer does, and XML content meets the same gate as the envelope.
func TestNewWriterFail(t *testing.T) {
	tests := []struct {
		name, transform, ct, in string
		o                       Options
		want                    error
	}{
		{name: "fail/unknown-transform", transform: "http://www.w3.org/2001/10/xml-exc-c14n#", ct: "text/xml", in: "<a/>", o: testOpts},
		{name: "fail/complete-bad-header", transform: CompleteTransform, ct: "a/b; x", in: "", o: testOpts, want: ErrHeader},
		{name: "fail/xml-too-large", transform: ContentTransform, ct: "text/xml", in: "<a>" + strings.Repeat("x", 1<<10) + "</a>", o: testOpts, want: ErrTooLarge},
		{name: "fail/xml-no-limit", transform: ContentTransform, ct: "text/xml", in: "<a/>", want: ErrTooLarge},
		{name: "fail/xml-doctype", transform: ContentTransform, ct: "text/xml", o: testOpts,
			in: `<!DOCTYPE a [<!ENTITY e "x">]><a>&e;</a>`, want: xmlscan.KindDoctype},
		{name: "fail/xml-pi", transform: ContentTransform, ct: "application/xml", o: testOpts, in: `<a><?pi x?></a>`, want: xmlscan.KindPI},
		{name: "fail/xml-malformed", transform: ContentTransform, ct: "text/xml", o: testOpts, in: `<a><b></a>`},
		{name: "fail/xml-gate-limits", transform: ContentTransform, ct: "text/xml", in: "<a><b><c/></b></a>",
			o: Options{MaxXML: 1 << 10, Gate: depthGate(t, 2)}, want: xmlscan.KindLimitDepth},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := transform(tc.transform, hdr(tc.ct), tc.in, 7, tc.o)
			require.Error(t, err)
			if tc.want != nil {
				require.ErrorIs(t, err, tc.want)
			}
		})
	}
}

func depthGate(t *testing.T, depth int) *xmlscan.Scanner {
	t.Helper()
	c := xmlscan.DefaultConfig()
	c.Limits.MaxDepth = depth
	s, err := xmlscan.NewScanner(c)
	require.NoError(t, err)
	return s
}

// TestStreaming: binary and text content reach dst as it is written (a
// 1 GiB part is never held); XML content only on Close.
func TestStreaming(t *testing.T) {
	for _, tc := range []struct {
		name, ct string
		early    bool
	}{
		{"ok/binary-streams", "application/pdf", true},
		{"ok/text-streams", "text/plain", true},
		{"ok/xml-waits-for-close", "text/xml", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			w, err := NewWriter(&out, ContentTransform, hdr(tc.ct), testOpts)
			require.NoError(t, err)
			_, err = io.WriteString(w, "<a/>")
			require.NoError(t, err)
			require.Equal(t, tc.early, out.Len() > 0)
			require.NoError(t, w.Close())
			require.Positive(t, out.Len())
		})
	}
}

func TestCRLFWriter(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"ok/lf", "a\nb", "a\r\nb"},
		{"ok/cr", "a\rb", "a\r\nb"},
		{"ok/crlf", "a\r\nb\r\n", "a\r\nb\r\n"},
		{"ok/lfcr", "\n\r", "\r\n\r\n"},
		{"ok/cr-cr-lf", "\r\r\n", "\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Byte by byte too: a CR LF split across writes stays one.
			for _, step := range []int{len(tc.in), 1} {
				var b bytes.Buffer
				w := &crlfWriter{w: &b}
				for i := 0; i < len(tc.in); i += step {
					n, err := w.Write([]byte(tc.in[i:min(i+step, len(tc.in))]))
					require.NoError(t, err)
					require.Equal(t, min(step, len(tc.in)-i), n)
				}
				require.Equal(t, tc.want, b.String())
			}
		})
	}
}

// TestCRLFWriterError: a failing destination is reported, not swallowed.
func TestCRLFWriterError(t *testing.T) {
	w := &crlfWriter{w: failWriter{}}
	_, err := w.Write([]byte("a\nb"))
	require.ErrorIs(t, err, errFail)
}

var errFail = errors.New("fail")

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errFail }

// FuzzContentWriter: any content under any media type either fails or
// yields output, the same whole as byte by byte; text output has only
// CR LF line ends.
func FuzzContentWriter(f *testing.F) {
	f.Add("text/plain", "a\r\nb\rc\n")
	f.Add("text/xml", `<a xmlns="urn:a"><b c="1"/></a>`)
	f.Add("application/octet-stream", "\x00\r")
	f.Fuzz(func(t *testing.T, ct, in string) {
		whole, err1 := transform(ContentTransform, hdr(ct), in, max(len(in), 1), testOpts)
		bytewise, err2 := transform(ContentTransform, hdr(ct), in, 1, testOpts)
		if (err1 == nil) != (err2 == nil) || whole != bytewise {
			t.Fatalf("chunking changed the result: %q %v / %q %v", whole, err1, bytewise, err2)
		}
		lower := strings.ToLower(strings.TrimSpace(ct))
		if err1 == nil && strings.HasPrefix(lower, "text/") && !isXML(lower) {
			if strings.Count(whole, "\r") != strings.Count(whole, "\n") || strings.Count(whole, "\r\n") != strings.Count(whole, "\n") {
				t.Fatalf("bare line end in %q", whole)
			}
		}
	})
}
