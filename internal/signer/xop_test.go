package signer

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const xopIncOpen = `<xop:Include xmlns:xop="http://www.w3.org/2004/08/xop/include" href="cid:`

// xopEnv is a SOAP 1.1 envelope with header and Body content as given.
func xopEnv(header, body string) []byte {
	return []byte(`<S:Envelope xmlns:S="` + nsSOAP11 + `"><S:Header>` + header + `</S:Header><S:Body>` + body + `</S:Body></S:Envelope>`)
}

// xopParts serves parts from memory, counting opens.
func xopParts(parts map[string]string, opens *int) XOPParts {
	return func(cid string) (io.ReadCloser, bool, error) {
		p, ok := parts[cid]
		if !ok {
			return nil, false, nil
		}
		*opens++
		return io.NopCloser(bytes.NewReader([]byte(p))), true, nil
	}
}

// TestSecureXOP: with Options.XOP, the Body digest covers the XOP infoset
// (each include as its part's base64) and the includes stay in the
// output; what would leave a part unsigned or ambiguous fails.
func TestSecureXOP(t *testing.T) {
	p := testPKI(t)
	parts := map[string]string{"a@x": "attachment a", "b@x": "attachment b"}
	for _, tc := range []struct {
		name, header, body string
		encrypt            bool
		want               error
	}{
		{name: "ok/two-includes", body: `<m:F xmlns:m="urn:m"><m:A>` + xopIncOpen + `a@x"/></m:A><m:B>` + xopIncOpen + `b@x"/></m:B></m:F>`},
		{name: "ok/no-include", body: `<m:F xmlns:m="urn:m"/>`},
		{name: "fail/included-twice", body: `<m:A xmlns:m="urn:m">` + xopIncOpen + `a@x"/></m:A><m:B xmlns:m="urn:m">` + xopIncOpen + `a@x"/></m:B>`, want: ErrEnvelope},
		{name: "fail/unsigned-header", header: `<h:H xmlns:h="urn:h">` + xopIncOpen + `a@x"/></h:H>`, body: `<m:F xmlns:m="urn:m"/>`, want: ErrEnvelope},
		{name: "fail/missing-part", body: `<m:A xmlns:m="urn:m">` + xopIncOpen + `c@x"/></m:A>`, want: ErrEnvelope},
		{name: "fail/not-alone", body: `<m:A xmlns:m="urn:m"> ` + xopIncOpen + `a@x"/></m:A>`, want: ErrEnvelope},
		{name: "fail/not-cid", body: `<m:A xmlns:m="urn:m"><xop:Include xmlns:xop="http://www.w3.org/2004/08/xop/include" href="http://x/a"/></m:A>`, want: ErrEnvelope},
		{name: "fail/encrypt", body: `<m:F xmlns:m="urn:m"/>`, encrypt: true, want: ErrOptions},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := opts(p.rsa)
			opens := 0
			o.XOP = xopParts(parts, &opens)
			if tc.encrypt {
				o.EncryptFor = p.server.Cert
			}
			out, err := Secure(xopEnv(tc.header, tc.body), o)
			if tc.want != nil {
				require.Error(t, err)
				assert.True(t, errors.Is(err, tc.want), "got %v", err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, bytes.Count([]byte(tc.body), []byte("<xop:Include")), bytes.Count(out, []byte("<xop:Include")), "the includes stay")
			assert.Equal(t, bytes.Count([]byte(tc.body), []byte("<xop:Include")), opens, "each part read once")
		})
	}
}

// TestSecureXOPDigest: the Body digest is over the parts' content, so
// signing the same root over other parts gives another Body digest, and
// the same parts the same one (ids from a fixed random source).
func TestSecureXOPDigest(t *testing.T) {
	p := testPKI(t)
	env := xopEnv("", `<m:A xmlns:m="urn:m">`+xopIncOpen+`a@x"/></m:A>`)
	bodyDigest := func(part string) string {
		o := opts(p.rsa)
		n := 0
		o.XOP = xopParts(map[string]string{"a@x": part}, &n)
		o.Rand = bytes.NewReader(make([]byte, 1<<12))
		out, err := Secure(env, o)
		require.NoError(t, err)
		i := bytes.Index(out, []byte(`<ds:Reference URI="#id-`))
		require.Positive(t, i)
		j := bytes.Index(out[i:], []byte("<ds:DigestValue>"))
		k := bytes.Index(out[i:], []byte("</ds:DigestValue>"))
		return string(out[i+j : i+k])
	}
	assert.Equal(t, bodyDigest("one"), bodyDigest("one"))
	assert.NotEqual(t, bodyDigest("one"), bodyDigest("two"))
}

// TestSecureSwA: with Options.SwA each part gets a cid: Reference with
// the content transform after the Body and Timestamp ones, its digest over
// the part's content; encrypting such an envelope is refused.
func TestSecureSwA(t *testing.T) {
	p := testPKI(t)
	env := xopEnv("", `<m:F xmlns:m="urn:m"/>`)
	sign := func(content string, encrypt bool) ([]byte, error) {
		o := opts(p.rsa)
		o.Rand = bytes.NewReader(make([]byte, 1<<12))
		o.SwA = []SwAPart{{ContentID: "a@x", Header: map[string][]string{"Content-Type": {"text/plain"}},
			Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader([]byte(content))), nil }}}
		if encrypt {
			o.EncryptFor = p.server.Cert
		}
		return Secure(env, o)
	}
	out, err := sign("a\nb", false)
	require.NoError(t, err)
	ref := bytes.Index(out, []byte(`<ds:Reference URI="cid:a@x">`))
	require.Positive(t, ref)
	assert.Greater(t, ref, bytes.Index(out, []byte(`<ds:Reference URI="#TS-`)), "after the Timestamp reference")
	assert.Contains(t, string(out[ref:]), TransformSwAContent)
	same, err := sign("a\r\nb", false) // the content transform's CR LF
	require.NoError(t, err)
	other, err := sign("a\nc", false)
	require.NoError(t, err)
	digest := func(b []byte) string {
		i := bytes.Index(b, []byte(`URI="cid:a@x"`))
		j := bytes.Index(b[i:], []byte("<ds:DigestValue>"))
		return string(b[i+j : i+j+60])
	}
	assert.Equal(t, digest(out), digest(same))
	assert.NotEqual(t, digest(out), digest(other))
	_, err = sign("a", true)
	assert.ErrorIs(t, err, ErrOptions)
}
