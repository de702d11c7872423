package xmlscan

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNormalizeAttrValue(t *testing.T) {
	tests := []struct {
		name, raw, want string
		kind            Kind
	}{
		{name: "ok/unchanged", raw: "http://www.w3.org/2001/10/xml-exc-c14n#", want: "http://www.w3.org/2001/10/xml-exc-c14n#"},
		{name: "ok/empty", raw: "", want: ""},
		{name: "ok/tab-lf-to-space", raw: "a\tb\nc", want: "a b c"},
		{name: "ok/crlf-is-one-space", raw: "a\r\nb", want: "a b"},
		{name: "ok/lone-cr", raw: "a\rb\r", want: "a b "},
		{name: "ok/no-collapsing", raw: "  a  ", want: "  a  "},
		{name: "ok/char-refs-to-whitespace-kept", raw: "a&#9;b&#xA;c&#13;d&#32;e", want: "a\tb\nc\rd e"},
		{name: "ok/predefined", raw: "&lt;&gt;&amp;&apos;&quot;", want: `<>&'"`},
		{name: "ok/astral", raw: "&#x1F600;", want: "\U0001F600"},
		{name: "ok/amp-amp", raw: "&amp;amp;", want: "&amp;"},
		{name: "fail/lt", raw: "a<b", kind: KindLtInAttr},
		{name: "fail/unknown-entity", raw: "&foo;", kind: KindBadReference},
		{name: "fail/bare-amp", raw: "a & b", kind: KindBadReference},
		{name: "fail/char-ref-nul", raw: "&#0;", kind: KindIllegalChar},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := NormalizeAttrValue([]byte(tc.raw), nil)
			if tc.kind != 0 {
				require.ErrorIs(t, err, tc.kind)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(got))
		})
	}
}

func TestNormalizeText(t *testing.T) {
	tests := []struct {
		name, raw, want string
		kind            Kind
	}{
		{name: "ok/unchanged", raw: "Widget 0 for order 0", want: "Widget 0 for order 0"},
		{name: "ok/crlf", raw: "a\r\nb\rc\n", want: "a\nb\nc\n"},
		{name: "ok/cr-cr-lf", raw: "a\r\r\nb", want: "a\n\nb"},
		{name: "ok/whitespace-kept", raw: "a\tb", want: "a\tb"},
		{name: "ok/refs", raw: "Customer &amp; Co &#x41;&#13;", want: "Customer & Co A\r"},
		{name: "fail/unknown-entity", raw: "&nbsp;", kind: KindBadReference},
		{name: "fail/surrogate", raw: "&#xDFFF;", kind: KindIllegalChar},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := NormalizeText([]byte(tc.raw), nil)
			if tc.kind != 0 {
				require.ErrorIs(t, err, tc.kind)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(got))
		})
	}
}

func TestNormalizeLineEnds(t *testing.T) {
	assert.Equal(t, "a\nb\nc\n\n\n", string(NormalizeLineEnds([]byte("a\r\nb\rc\n\r\r\n"), nil)))
	assert.Equal(t, "&amp;", string(NormalizeLineEnds([]byte("&amp;"), nil)))
}

// The helpers return their input without copying or allocating when there
// is nothing to normalize, and reuse buf otherwise.
func TestNormalizeNoAlloc(t *testing.T) {
	raw := []byte("#id-7b920d8c-fee0-4ae1-aa84-c1b3555cf327")
	got, err := NormalizeAttrValue(raw, nil)
	require.NoError(t, err)
	assert.Same(t, &raw[0], &got[0])
	got, err = NormalizeText(raw, nil)
	require.NoError(t, err)
	assert.Same(t, &raw[0], &got[0])
	assert.Same(t, &raw[0], &NormalizeLineEnds(raw, nil)[0])

	buf := make([]byte, 0, 64)
	needs := []byte("a\tb&amp;c\r\n")
	allocs := testing.AllocsPerRun(100, func() {
		_, _ = NormalizeAttrValue(raw, buf)
		_, _ = NormalizeAttrValue(needs, buf)
		_, _ = NormalizeText(needs, buf)
		_ = NormalizeLineEnds(needs, buf)
	})
	assert.Zero(t, allocs)
	got, err = NormalizeAttrValue(needs, buf)
	require.NoError(t, err)
	assert.Equal(t, "a b&c ", string(got))
	assert.Same(t, &buf[:1][0], &got[0])
}

func TestParseRefBoundaries(t *testing.T) {
	for _, s := range []string{"&#xD7FF;", "&#xE000;", "&#xFFFD;", "&#x10000;", "&#x10FFFF;", "&#9;", "&#10;", "&#13;", "&#32;"} {
		_, n, k := parseRef([]byte(s))
		assert.Zero(t, k, s)
		assert.Equal(t, len(s), n, s)
	}
	for _, s := range []string{"&#xD800;", "&#xDFFF;", "&#xFFFE;", "&#xFFFF;", "&#x110000;", "&#8;", "&#31;", "&#x7FFFFFFFFFFFFFFF;"} {
		_, _, k := parseRef([]byte(s))
		assert.Equal(t, KindIllegalChar, k, s)
	}
	for _, s := range []string{"&", "&#", "&#x", "&#1", "&lt", "&LT;", "&quotx;", "&#-1;", "&# 1;", "&#x 1;"} {
		_, _, k := parseRef([]byte(s))
		assert.Equal(t, KindBadReference, k, s)
	}
}

// TestAttrClassWords: the eight-bytes-at-a-time attrClass gives what the
// byte loop gives, for every byte value at every position of values of
// every length up to three words, beside every other byte value.
func TestAttrClassWords(t *testing.T) {
	slow := func(v []byte) uint8 {
		var acc uint8
		for _, c := range v {
			acc |= attrSpecial[c]
		}
		return acc
	}
	for n := 1; n <= 24; n++ {
		for pos := 0; pos < n; pos++ {
			for c := 0; c < 256; c++ {
				for _, fill := range []byte{'a', 0x7f, 0x80, 0xff, '\t', '&'} {
					v := bytes.Repeat([]byte{fill}, n)
					v[pos] = byte(c)
					if got, want := attrClass(v), slow(v); got != want {
						t.Fatalf("attrClass(%q) = %d, want %d", v, got, want)
					}
				}
			}
		}
	}
}
