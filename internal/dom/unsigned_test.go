package dom

import (
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/reload"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/testpki"
	"github.com/wssgw/wssgw/internal/wss"
)

const unsignedEnvelope = `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Header>` +
	`<wsa:To xmlns:wsa="http://www.w3.org/2005/08/addressing">urn:orders</wsa:To></soapenv:Header><soapenv:Body>` +
	`<m:Order xmlns:m="urn:orders">1</m:Order></soapenv:Body></soapenv:Envelope>`

// signedWithTo is unsignedEnvelope signed over Body, Timestamp and wsa:To.
func signedWithTo(t *testing.T) ([]byte, *wss.Policy) {
	t.Helper()
	dir := t.TempDir()
	ca := testpki.NewCA(t, "Unsigned CA")
	leaf := ca.IssueRSA(t, dir, "partner")
	pc := config.DefaultPolicy()
	pc.Replay = "off"
	pc.Trust.CAFiles = []string{ca.WriteCert(t, dir)}
	p, err := wss.Compile("unsigned", pc, nil, reload.Options{})
	require.NoError(t, err)
	o := signer.DefaultOptions()
	o.Signer, o.Certificate = leaf.Key, leaf.Cert
	o.SignHeaders = []xml.Name{{Space: "http://www.w3.org/2005/08/addressing", Local: "To"}}
	out, err := signer.Secure([]byte(unsignedEnvelope), o)
	require.NoError(t, err)
	return out, p
}

// TestUnsignedFacts: the engine reports every header block but our
// Security header with its end, the Envelope and Header attributes with
// the white space before them, and the comments: the spans the policy
// strips.
func TestUnsignedFacts(t *testing.T) {
	msg, p := signedWithTo(t)
	const (
		envAttr   = ` xmlns:y="urn:y"` + "\n  " + `y:role="admin"`
		hdrAttr   = "\t" + `y:tenant='7'`
		admin     = `<x:Admin xmlns:x="urn:x">tr<!--c-->ue</x:Admin>`
		otherRole = `<wsse:Security xmlns:wsse="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd" soapenv:actor="urn:next"/>`
	)
	s := strings.Replace(string(msg), `<soapenv:Envelope `, `<soapenv:Envelope`+envAttr+` `, 1)
	s = strings.Replace(s, `<soapenv:Header>`, `<soapenv:Header`+hdrAttr+`>`, 1)
	s = strings.Replace(s, `</soapenv:Header>`, admin+otherRole+`</soapenv:Header>`, 1)
	res, err := newEngine(t).Process([]byte(s), p, time.Now())
	require.NoError(t, err)
	doc := string(res.Document)

	var headers []string
	for _, h := range res.Headers {
		headers = append(headers, doc[h.Start:h.End])
	}
	require.Len(t, headers, 3)
	assert.True(t, strings.HasPrefix(headers[0], `<wsa:To `) && strings.HasSuffix(headers[0], `>urn:orders</wsa:To>`), headers[0])
	assert.Equal(t, []string{admin, otherRole}, headers[1:], "a Security header for another role is a header block")
	assert.True(t, res.SignedByTrusted(res.Headers[0].Start), "wsa:To is signed")
	assert.False(t, res.SignedByTrusted(res.Headers[1].Start), "x:Admin is not")

	var attrs []string
	for _, a := range res.Attributes {
		attrs = append(attrs, "{"+a.Name.Space+"}"+a.Name.Local+"="+doc[a.Span[0]:a.Span[1]])
	}
	assert.Equal(t, []string{"{urn:y}role=\n  y:role=\"admin\"", "{urn:y}tenant=\ty:tenant='7'"}, attrs,
		"attributes without the namespace declarations, with the white space before them")

	require.Len(t, res.Comments, 1)
	assert.Equal(t, "<!--c-->", doc[res.Comments[0][0]:res.Comments[0][1]])

	require.NoError(t, p.CheckFacts(res))
	out, stripped := res.Forward(p)
	assert.Len(t, stripped, 4, "two header blocks, two attributes; the comment goes with its block")
	assert.Equal(t, strings.Replace(stripSecurity(t, string(msg)), `<soapenv:Envelope `, `<soapenv:Envelope xmlns:y="urn:y" `, 1), string(out))
}

// stripSecurity removes the Security header from a signed message.
func stripSecurity(t *testing.T, msg string) string {
	t.Helper()
	i, j := strings.Index(msg, "<wsse:Security"), strings.Index(msg, "</wsse:Security>")
	require.True(t, i > 0 && j > i)
	return msg[:i] + msg[j+len("</wsse:Security>"):]
}

// TestCommentInSignedPartRefused: a comment inside a signed part never
// reaches Forward: the engine refuses it (exclusive c14n drops comments,
// so the digest would still match; security.md A9).
func TestCommentInSignedPartRefused(t *testing.T) {
	msg, p := signedWithTo(t)
	for name, at := range map[string][2]string{
		"fail/body":   {`>1</m:Order>`, `>1<!--x--></m:Order>`},
		"fail/header": {`>urn:orders<`, `>urn:<!--x-->orders<`},
	} {
		t.Run(name, func(t *testing.T) {
			bad := strings.Replace(string(msg), at[0], at[1], 1)
			require.NotEqual(t, string(msg), bad)
			_, err := newEngine(t).Process([]byte(bad), p, time.Now())
			assert.Equal(t, wss.ReasonStructure, reasonOf(err), "%v", err)
		})
	}
}
