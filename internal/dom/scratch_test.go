package dom

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/xmlscan"
)

// TestScratchBytesBoundsTheGate: the estimate is at least what the gate's
// arrays hold for documents of every shape, and not wildly more for a
// plain business document.
func TestScratchBytesBoundsTheGate(t *testing.T) {
	const env = `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body>%s</s:Body></s:Envelope>`
	tests := []struct {
		name string
		body string
		most float64 // estimate / actual at most
	}{
		{"ok/records", strings.Repeat(`<m:item xmlns:m="urn:x" n="1">lorem ipsum dolor sit amet</m:item>`, 2000), 1.5},
		{"ok/attribute-dense", `<m:a xmlns:m="urn:x"` + strings.Repeat(` a1="1" a2="2" a3="3"`, 1) + `/>` + strings.Repeat(`<b c="1" d="2" e="3" f="4" g="5"/>`, 5000), 1.5},
		{"ok/element-dense", strings.Repeat(`<a/>`, 20000), 1.5},
		{"ok/text-with-equals", `<a>` + strings.Repeat("x=y ", 10000) + `</a>`, 1.5},
		{"ok/prose-with-quotes", `<a>` + strings.Repeat(`he said "yes" `, 10000) + `</a>`, 1.5},
		{"ok/comments-and-cdata", strings.Repeat(`<a><!-- c --><![CDATA[<x>]]></a>`, 1000), 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(strings.Replace(env, "%s", tt.body, 1))
			var d xmlscan.Document
			cfg := xmlscan.DefaultConfig()
			s, err := xmlscan.NewScanner(cfg)
			require.NoError(t, err)
			require.NoError(t, s.Scan(data, &d))
			actual := int64(len(d.Elements))*elementSize + int64(len(d.Attrs)+len(d.NSDecls))*attrSize
			est := scratchBytes(data)
			assert.GreaterOrEqual(t, est, actual, "the estimate bounds the arrays")
			assert.LessOrEqual(t, float64(est)/float64(actual), tt.most)
		})
	}
	t.Run("ok/encrypted-counts-a-copy", func(t *testing.T) {
		plain := []byte(`<a><b x="1"/></a>`)
		enc := []byte(`<a><xenc:EncryptedData xmlns:xenc="http://www.w3.org/2001/04/xmlenc#"/></a>`)
		assert.Equal(t, 2*elementSize+attrSize, scratchBytes(plain), "no copy for a message without encryption")
		assert.Equal(t, 2*elementSize+attrSize+int64(len(enc)), scratchBytes(enc), "the arrays and one copy of the message")
	})
}
