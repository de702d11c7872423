package attack

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/c14n"
	wcrypto "github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/testpki"
	"github.com/wssgw/wssgw/internal/testtraffic"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// bodyCanonical is the exclusive canonical form of data's Body with the
// PrefixList its signature's Reference names, or an error when the gate
// rejects data.
func bodyCanonical(t *testing.T, data []byte) ([]byte, error) {
	t.Helper()
	if err := xmlscan.Scan(data, &xmlscan.Document{}); err != nil {
		return nil, err
	}
	m, err := parse(data)
	if err != nil {
		return nil, err
	}
	var list []string
	if r := m.refTo(m.bodyID); r >= 0 {
		for i := r; i < m.el(r).Next; i++ {
			if m.el(i).Local == "InclusiveNamespaces" {
				list, err = c14n.ParsePrefixList(m.attr(i, "", "PrefixList"))
				require.NoError(t, err)
			}
		}
	}
	return c14n.Exclusive(m.doc, m.body, list, false, nil)
}

// gateOnly are the rejected mutants that keep the Body's canonical form:
// the gate refuses comments and CDATA in signed parts (DESIGN.md §5.1).
var gateOnly = map[string]bool{
	"payload/inject/comment-in-value": true, "payload/inject/comment-between-items": true,
	"payload/inject/comment-in-body": true, "payload/inject/cdata-same-value": true,
}

// payloadMessages are signed messages of both partner stacks with lists,
// prefixes, references and attributes to attack, and a WSS4J vector.
func payloadMessages(t *testing.T) map[string][]byte {
	t.Helper()
	ca := testpki.NewCA(t, "payload CA")
	leaf := ca.IssueRSA(t, t.TempDir(), "partner")
	g := testtraffic.New(21, &wcrypto.KeyPair{Signer: leaf.Key, Certificate: leaf.Cert}, time.Now)
	g.Variety = true
	out := map[string][]byte{"wss4j-vector": loadVector(t, "sign-bst")}
	// Eight messages with lists, and one whose items' attributes use a
	// prefix declared on the operation element.
	ext := false
	for len(out) < 9 || !ext {
		m, err := g.Next()
		require.NoError(t, err)
		hasExt := bytes.Contains(m.Plain, []byte(" ext:flag="))
		if m.Items >= 2 && (len(out) < 9 || hasExt && !ext) {
			out[fmt.Sprintf("%s-%s-%d", m.Stack, m.Op, len(out))] = m.Signed
			ext = ext || hasExt
		}
	}
	return out
}

// TestPayloadLabels checks each mutant's label against exclusive C14N:
// an accepted mutant has the original Body's canonical form, a rejected
// one another, or is refused by the gate for a comment or CDATA.
func TestPayloadLabels(t *testing.T) {
	count := map[string]int{}
	for name, data := range payloadMessages(t) {
		orig := append([]byte(nil), data...)
		ms, err := Payload(data)
		require.NoError(t, err, name)
		require.Equal(t, orig, data, "Payload must not modify its input")
		want, err := bodyCanonical(t, data)
		require.NoError(t, err)
		for _, m := range ms {
			require.True(t, strings.HasPrefix(m.Name, "payload/"), m.Name)
			got, gerr := bodyCanonical(t, m.Data)
			switch {
			case m.Accept:
				count["ok"]++
				if assert.NoError(t, gerr, "%s %s", name, m.Name) {
					assert.Equal(t, string(want), string(got), "%s %s: an accepted mutant keeps the canonical Body", name, m.Name)
				}
			case gateOnly[m.Name]:
				count["fail/gate"]++
				// The engines' gate for signed parts refuses them, not the
				// scanner: the canonical form stays.
				assert.NoError(t, gerr, "%s %s", name, m.Name)
				assert.Equal(t, string(want), string(got), "%s %s: comments and CDATA keep the canonical Body", name, m.Name)
			default:
				count["fail"]++
				assert.False(t, gerr == nil && bytes.Equal(want, got), "%s %s: a rejected mutant changes the canonical Body", name, m.Name)
			}
		}
	}
	t.Logf("mutants by label: %v", count)
}

// TestPayloadCovers: over the messages, every mutant the issue names is
// made at least once.
func TestPayloadCovers(t *testing.T) {
	seen := map[string]bool{}
	for _, data := range payloadMessages(t) {
		ms, err := Payload(data)
		require.NoError(t, err)
		for _, m := range ms {
			seen[m.Name] = true
		}
	}
	for _, n := range []string{
		"loop/extra-last", "loop/missing-first", "loop/value-crosses-boundary", "value/text-crosses-element-boundary",
		"attr/added-on-item", "attr/quotes-swapped", "attr/order-swapped", "attr/raw-tab-as-space", "attr/raw-tab-as-reference",
		"ns/prefix-renamed-same-uri", "ns/default-namespace-changed", "ns/default-declared-unused", "ns/declaration-moved-to-body",
		"ns/redundant-redeclaration", "inject/body-id-on-payload", "inject/encrypted-data-in-payload", "inject/xop-include-for-value",
		"inject/signature-in-payload", "inject/security-in-payload", "inject/comment-in-value", "inject/cdata-same-value",
		"chars/letter-as-reference", "chars/amp-as-reference", "chars/non-ascii-as-reference", "chars/lf-as-crlf",
		"chars/lf-as-cr-reference", "chars/cr-reference-made-raw", "chars/empty-element-long",
		"context/listed-prefix-rebound-on-body", "context/unlisted-prefix-rebound-on-body", "context/default-declared-on-body", "context/xml-lang-on-envelope",
		"ns/attribute-prefix-redeclared", "ns/attribute-prefix-rebound",
	} {
		assert.True(t, seen["payload/"+n], "no message gets %s", n)
	}
}

func TestPayloadNeedsPlaintext(t *testing.T) {
	_, err := Payload(loadVector(t, "signencr-gcm"))
	assert.ErrorIs(t, err, ErrNotSecured)
}
