package soap

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckCharset(t *testing.T) {
	tests := map[string]struct {
		ct string
		ok bool
	}{
		"ok/absent":             {"text/xml", true},
		"ok/utf-8":              {"text/xml; charset=utf-8", true},
		"ok/upper":              {"text/xml; charset=UTF-8", true},
		"ok/quoted":             {`text/xml; charset="utf-8"`, true},
		"ok/quoted-upper":       {`text/xml;charset="UTF-8"`, true},
		"ok/soap12-action":      {`application/soap+xml; charset=utf-8; action="urn:a"`, true},
		"ok/action-only":        {`application/soap+xml; action="urn:a"`, true},
		"ok/xop-root":           {`application/xop+xml; charset=UTF-8; type="application/soap+xml"`, true},
		"ok/trailing-semicolon": {"text/xml; charset=utf-8;", true},
		"fail/utf-7":            {"text/xml; charset=utf-7", false},
		"fail/iso-8859-1":       {"text/xml; charset=iso-8859-1", false},
		"fail/utf-16":           {"text/xml; charset=utf-16", false},
		"fail/utf-16-quoted":    {`application/soap+xml; charset="UTF-16"; action="urn:a"`, false},
		"fail/utf8-alias":       {"text/xml; charset=utf8", false},
		"fail/empty":            {"text/xml; charset=", false},
		"fail/empty-quoted":     {`text/xml; charset=""`, false},
		"fail/duplicate":        {"text/xml; charset=utf-8; charset=utf-7", false},
		"fail/rfc2231":          {"text/xml; charset*=utf-8''utf-7", false},
		"fail/bare-param":       {"text/xml; charset", false},
		"fail/unquoted-uri":     {"application/soap+xml; action=urn:a", false}, // RFC 2045 §5.1: ':' must be quoted
		"fail/xop-root-latin1":  {`application/xop+xml; charset=iso-8859-1; type="text/xml"`, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := CheckCharset(tc.ct)
			if tc.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrCharset)
		})
	}
}

func TestForwardContentType(t *testing.T) {
	tests := map[string]struct {
		ct   string
		v    Version
		want string
	}{
		"ok/soap11-absent":     {"text/xml", V11, "text/xml; charset=utf-8"},
		"ok/soap11-upper":      {`Text/XML; charset="UTF-8"`, V11, "text/xml; charset=utf-8"},
		"ok/soap11-drops":      {`text/xml; charset=utf-8; action="urn:a"; x=y`, V11, "text/xml; charset=utf-8"},
		"ok/soap12-plain":      {"application/soap+xml", V12, "application/soap+xml; charset=utf-8"},
		"ok/soap12-action":     {`application/soap+xml;action="urn:a b";charset=UTF-8`, V12, `application/soap+xml; charset=utf-8; action="urn:a b"`},
		"ok/soap12-token":      {`application/soap+xml; action=a.b`, V12, `application/soap+xml; charset=utf-8; action=a.b`},
		"ok/soap12-drop-other": {`application/soap+xml; x=y`, V12, "application/soap+xml; charset=utf-8"},
		"ok/soap12-escape":     {`application/soap+xml; action="a\"b"`, V12, `application/soap+xml; charset=utf-8; action="a\"b"`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, CheckCharset(tc.ct))
			assert.Equal(t, tc.want, ForwardContentType(tc.ct, tc.v))
		})
	}
}

func BenchmarkCheckCharset(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = CheckCharset("text/xml; charset=utf-8")
	}
}

// TestCanonicalAction: the allocation-free path takes the SOAP 1.2
// Content-Type stacks send and nothing it would judge or forward
// differently from the general parser.
func TestCanonicalAction(t *testing.T) {
	tests := map[string]struct {
		ct   string
		fast bool
	}{
		"ok/uri":               {`application/soap+xml; charset=utf-8; action="urn:bench/Echo"`, true},
		"ok/http-uri":          {`application/soap+xml; charset=utf-8; action="http://tempuri.org/IService/Op"`, true},
		"ok/query":             {`application/soap+xml; charset=utf-8; action="urn:a?b=c;d"`, true},
		"fail/token":           {`application/soap+xml; charset=utf-8; action="Echo"`, false}, // forwarded unquoted
		"fail/empty":           {`application/soap+xml; charset=utf-8; action=""`, false},
		"fail/space":           {`application/soap+xml; charset=utf-8; action="urn:a b"`, false},
		"fail/escape":          {`application/soap+xml; charset=utf-8; action="urn:a\"b"`, false},
		"fail/non-ascii":       {"application/soap+xml; charset=utf-8; action=\"urn:\u00e9\"", false},
		"fail/unterminated":    {`application/soap+xml; charset=utf-8; action="urn:a`, false},
		"fail/trailing":        {`application/soap+xml; charset=utf-8; action="urn:a"; x=y`, false},
		"fail/upper-charset":   {`application/soap+xml; charset=UTF-8; action="urn:a"`, false},
		"fail/other-order":     {`application/soap+xml; action="urn:a"; charset=utf-8`, false},
		"fail/duplicate":       {`application/soap+xml; charset=utf-8; action="urn:a"; action="urn:b"`, false},
		"fail/soap11":          {`text/xml; charset=utf-8; action="urn:a"`, false},
		"fail/quote-in-middle": {`application/soap+xml; charset=utf-8; action="urn:a"b"`, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.fast, canonicalAction(tc.ct))
			sameAsParser(t, tc.ct)
		})
	}
	ct := `application/soap+xml; charset=utf-8; action="urn:bench/Echo"`
	assert.Zero(t, testing.AllocsPerRun(10, func() {
		_ = CheckCharset(ct)
		_ = ForwardContentType(ct, V12)
	}))
}

// sameAsParser fails if the fast path accepts ct where the general parser
// would refuse it or forward another value.
func sameAsParser(t *testing.T, ct string) {
	if !canonicalAction(ct) {
		return
	}
	if _, err := envelopeParams(ct); err != nil {
		t.Fatalf("fast path accepts %q, the parser refuses it: %v", ct, err)
	}
	if got := forwardParsed(ct, V12); got != ct {
		t.Fatalf("fast path forwards %q, the parser %q", ct, got)
	}
}

// FuzzCanonicalAction: whatever follows the prefix, the fast path agrees
// with the general parser.
func FuzzCanonicalAction(f *testing.F) {
	for _, s := range []string{`urn:bench/Echo"`, `Echo"`, `a"b"`, `urn:a"; x=y`, "urn:\u00e9\"", `"`, `urn:a\"b"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rest string) {
		sameAsParser(t, canonicalActionPrefix+rest)
	})
}
